"""Tests of the SASS front-end (pipeweave.frontend.sass).

Tests marked ``triton`` compile kernels (about 1 s each on 2 cores) and are skipped without triton;
everything else runs without it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from pipeweave import CompileError, DataError
from pipeweave.frontend import sass as S
from pipeweave.frontend.sass._parse import find_loops

ARCHS = list(S.SUPPORTED_ARCHS)


def _need_triton():
    return pytest.importorskip("triton")


# ----------------------------------------------------------------------------- no triton needed
def test_import_does_not_import_triton():
    code = "import sys, pipeweave.frontend.sass as s; s.load_sass_features; assert 'triton' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "arch,opcode,pipe",
    [
        # mma.sync tensor cores
        ("sm_80", "HMMA.16816.F32.BF16", "tensor"),
        ("sm_86", "HMMA.16816.F32", "tensor"),
        ("sm_89", "QMMA.16832.F32.E4M3.E4M3", "tensor"),
        ("sm_120a", "HMMA.16816.F32.BF16", "tensor"),
        ("sm_120a", "QMMA.16832.F32.E4M3.E4M3", "tensor"),
        ("sm_80", "IMMA.16832.S8.S8.SAT", "tensor"),
        # wgmma / tcgen05
        ("sm_90", "HGMMA.64x128x16.F32.BF16", "tensor"),
        ("sm_90a", "QGMMA.64x128x32.F32.E4M3.E4M3", "tensor"),
        ("sm_90a", "WARPGROUP.ARRIVE", "control"),
        ("sm_100a", "UTCHMMA", "tensor"),
        ("sm_103a", "UTCQMMA", "tensor"),
        ("sm_100a", "UTCBAR", "control"),
        ("sm_100a", "LDTM.x64", "tmem"),
        # FP32 / integer multiply on the FMA pipe, integer/logic on ALU
        ("sm_80", "FFMA", "fma"),
        ("sm_86", "FADD.FTZ", "fma"),
        ("sm_89", "FMUL", "fma"),
        ("sm_90a", "IMAD.WIDE.U32", "fma"),
        ("sm_100a", "IMAD.MOV.U32", "fma"),
        ("sm_120a", "HFMA2.MMA", "fma"),
        ("sm_100a", "FFMA2", "fma"),
        ("sm_80", "IADD3", "alu"),
        ("sm_90a", "LOP3.LUT", "alu"),
        ("sm_89", "ISETP.GE.AND", "alu"),
        ("sm_120a", "F2FP.BF16.F32.PACK_AB", "alu"),
        ("sm_100a", "FMNMX3", "alu"),
        ("sm_90a", "VIADD", "alu"),
        # transcendentals / conversions, fp64
        ("sm_80", "MUFU.EX2", "xu"),
        ("sm_90a", "MUFU.RCP", "xu"),
        ("sm_86", "I2F.U32", "xu"),
        ("sm_89", "F2I.TRUNC", "xu"),
        ("sm_80", "DFMA", "fp64"),
        ("sm_120a", "DADD", "fp64"),
        # memory / MIO
        ("sm_80", "LDGSTS.E.BYPASS.LTC128B.128", "lsu"),
        ("sm_80", "LDSM.16.M88.4", "lsu"),
        ("sm_86", "LDG.E.128", "lsu"),
        ("sm_90a", "STG.E.U16", "lsu"),
        ("sm_90a", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "lsu"),
        ("sm_89", "SHFL.BFLY", "lsu"),
        ("sm_80", "S2R", "lsu"),
        ("sm_80", "LDL", "lsu"),
        ("sm_120a", "STSM.16.M88.4", "lsu"),
        # TMA, uniform, control
        ("sm_90a", "UTMALDG.2D", "tma"),
        ("sm_120a", "UTMALDG.2D", "tma"),
        ("sm_100a", "UBLKCP.S.G", "tma"),
        ("sm_90a", "UIADD3", "uniform"),
        ("sm_80", "ULDC.64", "uniform"),
        ("sm_100a", "LDCU.64", "uniform"),
        ("sm_90a", "R2UR", "uniform"),
        ("sm_80", "BRA", "control"),
        ("sm_90a", "BAR.SYNC.DEFER_BLOCKING", "control"),
        ("sm_80", "LDC.64", "control"),
        ("sm_100a", "EXIT", "control"),
        ("sm_100a", "ELECT", "control"),
    ],
)
def test_classify_known_opcodes(arch, opcode, pipe):
    assert S.classify_opcode(opcode, arch) == pipe


@pytest.mark.parametrize(
    "opcode,arch",
    [
        ("HGMMA.64x64x16.F32", "sm_80"),
        ("UTCHMMA", "sm_90a"),
        ("UTCHMMA", "sm_120a"),
        ("QMMA.16832.F32.E4M3.E4M3", "sm_86"),
        ("UTMALDG.2D", "sm_89"),
    ],
)
def test_classify_rejects_opcode_absent_on_arch(opcode, arch):
    with pytest.raises(DataError):
        S.classify_opcode(opcode, arch)


def test_unknown_opcode_is_other():
    assert S.classify_opcode("FOOBAR.X", "sm_90a") == "other"


def test_mma_flops_per_instruction():
    f = S.mma_flops_per_warp_instruction
    assert f("HMMA.16816.F32.BF16") == 2 * 16 * 8 * 16
    assert f("HMMA.1688.F32.TF32") == 2 * 16 * 8 * 8
    assert f("QMMA.16832.F32.E4M3.E4M3") == 2 * 16 * 8 * 32
    assert f("HGMMA.64x128x16.F32.BF16") == 2 * 64 * 128 * 16 / 4  # per warp of the warpgroup
    assert f("UTCHMMA", idesc=0x8210490) == 2 * 128 * 128 * 16  # M=128, N=128 from the descriptor
    assert f("FFMA") == 0.0


@pytest.mark.parametrize(
    "text,expected",
    [
        ("sm_90", "sm_90a"),
        ("sm_90a", "sm_90a"),
        ("9.0", "sm_90a"),
        ("80", "sm_80"),
        ("sm_86", "sm_86"),
        ("sm_100", "sm_100a"),
        ("12.0", "sm_120a"),
        ("sm_103a", "sm_103a"),
    ],
)
def test_normalize_arch(text, expected):
    assert S.normalize_arch(text) == expected


@pytest.mark.parametrize("bad", ["sm_70", "sm_999", "sm_75", "volta", "sm_87"])
def test_bad_arch_is_a_clear_error(bad):
    with pytest.raises(CompileError) as e:
        S.normalize_arch(bad)
    assert "sm_80" in str(e.value)  # the message lists what is supported
    with pytest.raises(CompileError):
        S.instruction_mix("gemm", bad, S.SassConfig(64, 64, 32, 8, 4, 2))


@pytest.mark.parametrize(
    "gpu,arch",
    [
        ("A100", "sm_80"),
        ("A40", "sm_86"),
        ("RTX A6000", "sm_86"),
        ("L40S", "sm_89"),
        ("H20", "sm_90a"),
        ("H800", "sm_90a"),
        ("H100-SXM", "sm_90a"),
        ("B200", "sm_100a"),
        ("GB200", "sm_100a"),
        ("B300", "sm_103a"),
        ("GB300", "sm_103a"),
        ("RTX PRO 6000", "sm_120a"),
        ("PRO6000S", "sm_120a"),
        ("L40", "sm_89"),
    ],
)
def test_arch_for_gpu(gpu, arch):
    assert S.arch_for_gpu(gpu) == arch


def test_config_parse():
    assert S.SassConfig.parse("64,64,32,8,4,3") == S.SassConfig(64, 64, 32, 8, 4, 3)
    with pytest.raises(DataError):
        S.SassConfig.parse("64,64,32")
    with pytest.raises(DataError):
        S.SassConfig(48, 64, 32, 8, 4, 3).validate()


def test_missing_triton_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)  # makes `import triton` raise ImportError
    with pytest.raises(CompileError) as e:
        S.instruction_mix("gemm", "sm_90", S.SassConfig(64, 64, 32, 8, 4, 2), {"m": 64, "n": 64, "k": 64})
    assert "pip install" in str(e.value) and "triton" in str(e.value)


_SYNTHETIC = (
    """
        Function : k
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   IMAD R1, R0, 0x4, RZ ;
"""
    + "".join(f"        /*{0x20 + 16 * i:04x}*/                   FFMA R2, R2, R3, R4 ;\n" for i in range(20))
    + """
        /*0160*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0170*/               @P0 BRA 0x20 ;
        /*0180*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R3 ;
        /*0190*/              @!P1 BRA 0x180 ;
        /*01a0*/                   STG.E [R2.64], R5 ;
        /*01b0*/                   EXIT ;
        /*01c0*/                   MUFU.EX2 R1, R1 ;
        /*01d0*/                   BRA 0x40 ;
        /*01e0*/                   BRA 0x1e0;
        /*01f0*/                   NOP;
"""
)


def test_parse_and_loops_on_synthetic_sass():
    func = S.parse_sass(_SYNTHETIC)
    assert func.name == "k"
    assert func.instructions[-1].base == "EXIT"  # cold code after the last EXIT dropped
    assert func.cold_instructions == 2
    loops = find_loops(func.instructions)
    assert len(loops) == 1 and loops[0].start == 0x20 and loops[0].end == 0x170  # spin loop at 0x180 ignored
    res = S.analyze_sass(func, "sm_80", num_warps=4, loop_trips=[10])
    assert res["pipes"]["tensor"] == 4 * 10  # 1 HMMA x 10 trips x 4 warps
    assert res["pipes"]["fma"] == 4 * (10 * 20 + 1)
    assert res["pipes_per_iter"]["fma"] == 4 * 20
    assert res["tensor_flops_per_cta"] == 4 * 10 * 4096
    assert res["pipes"]["xu"] == 0


def test_load_sass_features_from_cache_without_triton(tmp_path):
    cache = S.load_cache()
    if cache.empty:
        pytest.skip("no shipped cache")
    row = cache[(cache["kernel"] == "fused_moe") & (cache["kernel_hash"] == S.kernel_source_hash("fused_moe"))]
    if row.empty:
        pytest.skip("shipped cache holds no current fused_moe entry")
    r = row.iloc[0]
    df = pd.DataFrame(
        {
            "family": ["moe_w13", "moe_w13", "attention_context", "moe_w13"],
            "arch": [r["arch"].replace("a", "") if r["arch"].endswith("a") else r["arch"], "sm_80", "sm_90", r["arch"]],
            "dtype": [r["dtype"], "bfloat16", "bfloat16", r["dtype"]],
            "block_m": [r["block_m"], 7, 64, r["block_m"]],
            "block_n": [r["block_n"], 64, 64, r["block_n"]],
            "block_k": [r["block_k"], 32, 32, r["block_k"]],
            "group_m": [r["group_m"], 8, 8, 999],
            "num_warps": [r["num_warps"], 4, 4, r["num_warps"]],
            "num_stages": [r["num_stages"], 3, 3, r["num_stages"]],
        },
        index=[10, 11, 12, 13],
    )
    csv = tmp_path / "df.pkl"
    df.to_pickle(csv)
    code = textwrap.dedent(f"""
        import sys, pandas as pd
        sys.modules['triton'] = None  # no triton in this process
        from pipeweave.frontend.sass import load_sass_features, SASS_FEATURE_COLUMNS
        df = pd.read_pickle({str(csv)!r})
        out = load_sass_features(df)
        assert list(out.index) == [10, 11, 12, 13], out.index
        assert list(out.columns) == SASS_FEATURE_COLUMNS
        assert out.loc[10, 'sass_cached'] == 1.0 and out.loc[10, 'sass_group_m_exact'] == 1.0
        assert out.loc[10, 'sass_tensor_per_iter'] == {float(r["tensor_per_iter"])!r}
        assert out.loc[10, 'sass_registers'] == {float(r["registers"])!r}
        assert out.loc[11, 'sass_cached'] == 0.0 and out[['sass_tensor_per_iter']].loc[11].isna().all()
        assert out.loc[12, 'sass_cached'] == 0.0   # no builtin for attention rows
        assert out.loc[13, 'sass_cached'] == 1.0 and out.loc[13, 'sass_group_m_exact'] == 0.0
        print('ok')
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "ok" in res.stdout


def test_load_sass_features_needs_columns():
    with pytest.raises(DataError):
        S.load_sass_features(pd.DataFrame({"family": ["gemm"]}))


def test_shipped_cache_covers_defaults_and_feature_columns():
    cache = S.load_cache()
    if cache.empty:
        pytest.skip("no shipped cache")
    assert not cache.duplicated(
        subset=[
            "kernel",
            "kernel_hash",
            "arch",
            "dtype",
            "block_m",
            "block_n",
            "block_k",
            "group_m",
            "num_warps",
            "num_stages",
            "specialization",
        ]
    ).any()
    for c in S.SASS_FEATURE_COLUMNS[2:-1]:  # the last one (mma_replication) is derived
        assert c[len("sass_") :] in cache.columns
    # per-iteration tensor FLOPs = 2 * BM * BN * BK, times a power-of-2 replication factor when the tile is
    # smaller than the warps' MMA footprint (Triton then issues the same MMA from several warps)
    fl = 2.0 * cache["block_m"] * cache["block_n"] * cache["block_k"]
    ratio = cache["tensor_flops_per_iter"] / fl
    assert (ratio >= 1).all() and np.allclose(np.log2(ratio), np.round(np.log2(ratio)))
    big = (cache["block_m"] >= 64) & (cache["block_n"] >= 64)
    assert np.allclose(ratio[big], 1.0)


# ---------------------------------------------------------------------------------- with triton
@pytest.mark.triton
@pytest.mark.parametrize("arch", ARCHS)
def test_gemm_tensor_flops_exact_every_arch(arch):
    _need_triton()
    cfg = S.SassConfig(64, 64, 32, 8, 4, 2)
    k = 128
    mix = S.instruction_mix("gemm", arch, cfg, {"m": 256, "n": 256, "k": k})
    assert mix.tensor_flops_per_cta == 2 * cfg.block_m * cfg.block_n * k
    assert mix.main_loop_trips == k // cfg.block_k
    assert mix.registers > 0 and mix.shared_bytes > 0 and mix.occupancy_ctas_per_sm >= 1
    assert mix.pipes["tensor"] > 0 and mix.pipes["other"] == 0
    mma = {op for op in mix.opcodes if S.classify_opcode(op, arch) == "tensor"}
    expect = {"sm_90a": "HGMMA", "sm_100a": "UTCHMMA", "sm_103a": "UTCHMMA"}.get(arch, "HMMA")
    assert mma == {expect}
    d = mix.to_dict()
    for key in ("arch", "pipes", "tensor_flops_per_cta", "registers", "spills", "shared_bytes", "loops"):
        assert key in d
    assert d["loops"] and d["loops"][0]["trips"] == k // cfg.block_k
    json.dumps(d)


@pytest.mark.triton
@pytest.mark.parametrize(
    "arch,mma", [("sm_89", "QMMA"), ("sm_90a", "QGMMA"), ("sm_100a", "UTCQMMA"), ("sm_120a", "QMMA")]
)
def test_gemm_fp8_flops_exact(arch, mma):
    _need_triton()
    cfg = S.SassConfig(64, 64, 64, 8, 4, 2)
    mix = S.instruction_mix("gemm", arch, cfg, {"m": 256, "n": 256, "k": 256}, dtype="fp8")
    assert mix.tensor_flops_per_cta == 2 * 64 * 64 * 256
    assert mma in mix.opcodes


@pytest.mark.triton
def test_fp8_on_ampere_is_a_clear_error():
    _need_triton()
    with pytest.raises(CompileError, match="sm_89"):
        S.instruction_mix("gemm", "sm_80", S.SassConfig(64, 64, 32, 8, 4, 2), dtype="fp8")


@pytest.mark.triton
def test_fused_moe_and_cache_row():
    _need_triton()
    cfg = S.SassConfig(16, 32, 64, 1, 4, 3)
    shape = {"num_tokens": 64, "num_experts": 8, "topk": 2, "hidden_size": 512, "inter_size": 256}
    mix = S.instruction_mix("fused_moe", "sm_86", cfg, shape)
    assert mix.tensor_flops_per_cta == 2 * 16 * 32 * 512
    assert mix.grid > 0 and mix.loops[0].trips == 512 // 64
    assert mix.mem["gmem_ld"] > 0 and mix.pipes["lsu"] > 0


@pytest.mark.triton
def test_broken_kernel_file_is_a_clear_error(tmp_path):
    _need_triton()
    bad = tmp_path / "broken.py"
    bad.write_text(
        textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def broken(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(x_ptr + offs, x + undefined_name)
    """)
    )
    fn = S._compile.load_kernel_file(f"{bad}:broken")
    with pytest.raises(CompileError) as e:
        S.instruction_mix(
            fn, "sm_90", S.SassConfig(1, 128, 1, 1, 4, 1), args={"x_ptr": S.Ptr("fp32"), "n": 1024, "BLOCK": 128}
        )
    assert "could not compile" in str(e.value) and "broken" in str(e.value)
    syntax = tmp_path / "syntax.py"
    syntax.write_text("def oops(:\n")
    with pytest.raises(CompileError, match="importing"):
        S._compile.load_kernel_file(f"{syntax}:oops")
    with pytest.raises(CompileError, match="defines no"):
        S._compile.load_kernel_file(f"{bad}:nothere")


@pytest.mark.triton
def test_cli_user_kernel_json(tmp_path, capsys):
    _need_triton()
    from pipeweave.cli.main import main

    f = tmp_path / "user_kernels.py"
    f.write_text(
        textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            for i in range(0, 8):
                offs = (pid * 8 + i) * BLOCK + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs, mask=offs < n)
                tl.store(y_ptr + offs, tl.exp(x) * 2.0, mask=offs < n)
    """)
    )
    rc = main(
        [
            "sass",
            "--kernel",
            f"{f}:scale",
            "--arch",
            "sm_89",
            "--config",
            "1,256,1,1,4,1",
            "--signature",
            "x_ptr=*fp32,y_ptr=*fp32,n=1048576,BLOCK=256",
            "--trips",
            "8",
            "--grid",
            "512",
            "--json",
        ]
    )
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["arch"] == "sm_89" and d["pipes"]["xu"] > 0 and d["tensor_flops_per_cta"] == 0
    for key in ("pipes", "registers", "spills", "shared_bytes", "loops"):
        assert key in d


@pytest.mark.triton
def test_cli_builtin_table_and_bad_arch(capsys):
    _need_triton()
    from pipeweave.cli.main import main

    assert (
        main(
            [
                "sass",
                "--builtin",
                "rmsnorm",
                "--arch",
                "sm_80",
                "--config",
                "1,512,1,1,4,1",
                "--num-tokens",
                "16",
                "--hidden-size",
                "2048",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "loops" in out and "fma" in out
    assert main(["sass", "--builtin", "gemm", "--arch", "sm_999"]) == 2
    assert "not a target" in capsys.readouterr().err


def test_cli_cached_lookup_without_compiling(capsys):
    from pipeweave.cli.main import main

    if S.cached_mix_row("fused_moe", "sm_80", "bfloat16", S.SassConfig(64, 64, 32, 8, 4, 3)) is None:
        pytest.skip("default config not in the shipped cache")
    assert (
        main(["sass", "--builtin", "fused_moe", "--arch", "sm_80", "--config", "64,64,32,8,4,3", "--cached", "--json"])
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert d["arch"] == "sm_80" and d["tensor_flops_per_iter"] == 2 * 64 * 64 * 32 and d["group_m_exact"] is True
    assert main(["sass", "--builtin", "fused_moe", "--arch", "sm_80", "--config", "64,64,32,3,4,3", "--cached"]) == 0
    assert "nearest GROUP_M" in capsys.readouterr().out
    assert main(["sass", "--builtin", "gemm", "--arch", "sm_80", "--config", "256,16,16,1,2,7", "--cached"]) == 2
    assert "no cached mix" in capsys.readouterr().err


def test_kernel_hash_ignores_formatting_but_not_code():
    # hand-made source text: the same function formatted two ways, and with one constant changed
    a = "def k(x, y):\n    # add\n    return x + y * 2\n"
    b = "def k(\n    x,\n    y,\n):\n    return x + (y * 2)  # add, reformatted\n"
    c = "def k(x, y):\n    return x + y * 3\n"
    assert S.function_hash(a, "k") == S.function_hash(b, "k") != S.function_hash(c, "k")
    with pytest.raises(Exception, match="no kernel 'nope'"):
        S.function_hash(a, "nope")


def test_shipped_cache_is_not_stale():
    """Every cached instruction mix is keyed by the current hash of its kernel: a kernel edit (or a hash
    rule change) that orphans the cache would silently turn the model's SASS features into NaN."""
    cache = S.load_cache()
    assert len(cache) > 1000
    for kernel, rows in cache.groupby("kernel"):
        current = S.kernel_source_hash(str(kernel))
        stale = rows[rows["kernel_hash"].astype(str) != current]
        assert stale.empty, f"{len(stale)} cached {kernel} rows have a stale kernel hash (current {current})"
    feats = S.load_sass_features(
        pd.DataFrame(
            [
                {
                    "family": "fused_moe",
                    "arch": "sm_90",
                    "dtype": "bfloat16",
                    "block_m": 64,
                    "block_n": 64,
                    "block_k": 32,
                    "group_m": 8,
                    "num_warps": 4,
                    "num_stages": 3,
                }
            ]
        )
    )
    assert feats["sass_cached"].iloc[0] == 1.0


def test_signature_pointer_types_cover_triton_s():
    """Every element type Triton's language names (u16, fp8e4b8, u1 ...) is a valid pointer in a signature."""
    tl = pytest.importorskip("triton.language")

    from pipeweave.frontend.sass._compile import POINTER_DTYPES

    short = {
        "int1": "i1",
        "int8": "i8",
        "int16": "i16",
        "int32": "i32",
        "int64": "i64",
        "uint8": "u8",
        "uint16": "u16",
        "uint32": "u32",
        "uint64": "u64",
    }
    names = [short.get(t, t) for t in (*tl.dtype.SINT_TYPES, *tl.dtype.UINT_TYPES, *tl.dtype.FP_TYPES)]
    missing = sorted(set(names) - set(POINTER_DTYPES))
    assert not missing, missing


def test_cache_plan_counts_a_group_the_same_alone_or_with_others(data_dir) -> None:  # noqa: ANN001
    """A job belongs to the first group of GROUPS that holds it, whichever groups are asked for (real plan)."""
    from pipeweave.frontend.sass.build_cache import GROUPS, plan_jobs

    every = plan_jobs(data_dir, GROUPS)
    keys = [j.key() for j in every]
    assert len(keys) == len(set(keys))
    for g in GROUPS:
        alone = plan_jobs(data_dir, [g])
        assert {j.group for j in alone} <= {g}
        assert [j.key() for j in alone] == [j.key() for j in every if j.group == g]
