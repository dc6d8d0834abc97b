"""Fixes from a fresh-user walkthrough of `diagnose --kernel` / `sass` (hand-made kernels and launches, labelled).

Launch-number checks, the lower bound of a user kernel (compulsory compute, not only DRAM), the loud
warning when a loop has no trip count, search labels that name the real tile constexprs, the search cap,
and library notes in Python-argument words.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pipeweave import DataError, PipeweaveError
from pipeweave.cli.main import main
from pipeweave.diagnose import diagnose_kernel, eval_launch_expr

# hand-made: a tiny row kernel (one loop-free CTA per row) and a tiny matmul (one K loop)
KERNELS = """import triton
import triton.language as tl


@triton.jit
def softmax_row(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * n_cols + offs, e / tl.sum(e, 0), mask=m)


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
       BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(0)
    tn = tl.cdiv(N, BLOCK_SIZE_N)
    rm = (pid // tn) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rn = (pid % tn) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    rk = tl.arange(0, BLOCK_SIZE_K)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))
"""
MM_SIG = "a_ptr=*bf16[2048x2048],b_ptr=*bf16[2048x2048],c_ptr=*bf16[2048x2048],M=2048,N=2048,K=2048"
MM_GRID = "cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)"
ROW_SIG = "x_ptr=*fp32,y_ptr=*fp32,n_cols=1024,BLOCK=1024"


@pytest.fixture()
def kfile(tmp_path):
    pytest.importorskip("triton")
    f = tmp_path / "mykern.py"
    f.write_text(KERNELS)
    return str(f)


def test_grid_expression_dividing_by_zero_names_the_expression():
    for expr in ("n_cols // 0", "cdiv(n_cols, 0)", "n_cols % 0"):
        with pytest.raises(DataError, match="divides by zero") as e:
            eval_launch_expr(expr, {"n_cols": 1024}, "grid")
        assert repr(expr) in str(e.value)


@pytest.mark.triton
@pytest.mark.parametrize(
    "extra",
    [
        ["--grid", "n_cols // 0"],
        ["--grid", "-4"],
        ["--grid", "0"],
        ["--gpu", "H100", "--arch", "sm_80"],  # contradicting arch
        ["--signature", "x_ptr=*fp32[abc],y_ptr=*fp32,n_cols=1024,BLOCK=1024"],
        ["--signature", "x_ptr=*fp32,y_ptr=*fp32,n_cols=1024,BLOCK=1024,BLOCK=2048"],
    ],
)
def test_sass_kernel_refuses_bad_launch_numbers(capsys, kfile, extra):
    """No compile happens: every case is refused before (exit 2, one error naming the value)."""
    argv = ["sass", "--kernel", f"{kfile}:softmax_row", "--arch", "sm_90", "--signature", ROW_SIG, *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error:" in err


@pytest.mark.parametrize(
    "extra",
    [["--builtin", "gemm", "--m", "-64"], ["--builtin", "gemm", "--m", "0"]]
    + [["--builtin", "fused_moe", "--topk", "16", "--num-experts", "8"]],
)
def test_sass_builtin_refuses_bad_shapes(capsys, extra):
    assert main(["sass", "--arch", "sm_90", *extra]) == 2
    err = capsys.readouterr().err
    assert "must be >= 1" in err or "more than --num-experts" in err


@pytest.mark.triton
def test_diagnose_kernel_lists_defined_kernels_and_unknown_gpu_arch(capsys, kfile):
    sig = ["--config", "1,1024,1,1,4,1", "--signature", ROW_SIG, "--grid", "1"]
    assert main(["diagnose", "--gpu", "H100", "--kernel", f"{kfile}:nope", *sig]) == 2
    assert "mm, softmax_row" in capsys.readouterr().err
    assert main(["diagnose", "--gpu", "T4", "--kernel", f"{kfile}:softmax_row", *sig]) == 2
    err = capsys.readouterr().err
    assert "sm_75" in err and "sm_80" in err and "explicitly" not in err


@pytest.mark.triton
def test_matmul_lower_bound_counts_compute_and_missing_trips_warn(kfile):
    """Two compiles. Without trips the K loop counts once: a loud warning; with trips the lower bound of the
    config includes its tensor work, so a measurement above the DRAM time but below it is flagged."""
    k = f"{kfile}:mm"
    one = diagnose_kernel(k, "H100", (64, 64, 32, 8, 4, 3), signature=MM_SIG, grid=MM_GRID)  # a tuple config
    assert one["trips_missing"] and one["warnings"] and "ONCE" in one["warnings"][0]
    assert not any("--" in n for n in [*one["notes"], *one["warnings"]])  # library words, not flags
    assert any("search=True" in n for n in one["notes"])
    full = diagnose_kernel(k, "H100", "64,64,32,8,4,3", signature=MM_SIG, grid=MM_GRID, trips=["cdiv(K, BLOCK_SIZE_K)"])
    assert not full["trips_missing"] and not full["warnings"]
    t = full["pipe_times_us"]
    assert full["lower_bound_us"] > t["dram"] + 0.5 * t["tensor"]  # compute, not only DRAM
    assert full["lower_bound_us"] <= full["ceiling_us"] and full["lower_bound_scope"] == "this config"
    between = 0.5 * (t["dram"] + full["lower_bound_us"])  # above the DRAM bound, below the compute bound
    assert t["dram"] < between < full["lower_bound_us"]
    res = diagnose_kernel(
        k, "H100", "64,64,32,8,4,3", signature=MM_SIG, grid=MM_GRID, trips="cdiv(K, BLOCK_SIZE_K)", measured_us=between
    )
    assert res["measurement_below_bound"] and res["headroom_verdict"] == "below_physical_bound"
    assert any("check the units" in n for n in res["notes"])


def test_search_labels_carry_the_real_tile_constexprs():
    """Hand-made parameter list: a variant that halves BLOCK_SIZE_M must print BM=32, not the given 64."""
    from pipeweave.diagnose._kernel import _effective_cfg, _fmt_cfg
    from pipeweave.frontend.sass import SassConfig

    params = [SimpleNamespace(name=n, is_constexpr=True) for n in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK")]
    fn = SimpleNamespace(params=params)
    cfg = SassConfig.parse("64,64,32,8,2,2")
    eff = _effective_cfg(fn, {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128, "BLOCK": 2048}, cfg)
    label = _fmt_cfg(eff, {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128, "BLOCK": 2048})
    assert label == "32,128,32,8,2,2 BLOCK=2048"
    assert SassConfig.parse(label.split()[0]).as_tuple()[:2] == (32, 128)


@pytest.mark.triton
def test_search_cap_and_progress(capsys, kfile):
    """Two compiles at most: the cap is honoured, the planned count reported, progress goes to stderr."""
    argv = ["diagnose", "--gpu", "H100", "--kernel", f"{kfile}:mm", "--config", "64,64,32,8,4,3"]
    argv += ["--signature", MM_SIG, "--grid", MM_GRID, "--trips", "cdiv(K, BLOCK_SIZE_K)"]
    assert main([*argv, "--search", "--max-variants", "1", "--json"]) == 0
    cap = capsys.readouterr()
    obj = json.loads(cap.out)
    assert obj["n_ranked"] <= 2 and obj["n_variants_planned"] > 1
    assert any("--max-variants" in n for n in obj["notes"])
    assert "variant" in cap.err  # the up-front count and the progress
    assert main([*argv, "--search", "--max-variants", "0"]) == 2


@pytest.mark.triton
def test_explain_kernel_points_at_diagnose_search(capsys, kfile):
    """One compile: explain has no --search, so its note names the command that has it."""
    argv = ["explain", "--gpu", "H100", "--kernel", f"{kfile}:softmax_row", "--config", "1,1024,1,1,4,1"]
    assert main([*argv, "--signature", ROW_SIG, "--grid", "4"]) == 0
    out = capsys.readouterr().out
    assert "`pipeweave diagnose --kernel ... --search`" in out and "search=True" not in out


def test_library_accepts_tuple_config_and_refuses_non_text_signature():
    from pipeweave.frontend.sass import SassConfig

    assert SassConfig.parse((1, 1024, 1, 1, 4, 1)).as_tuple() == (1, 1024, 1, 1, 4, 1)
    with pytest.raises(PipeweaveError, match="six positive integers"):
        SassConfig.parse((1, 1024, 1))
    with pytest.raises(DataError, match="must be text"):
        from pipeweave.diagnose import split_signature_shapes

        split_signature_shapes(["x_ptr=*fp32"])  # type: ignore[arg-type]
