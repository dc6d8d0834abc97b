"""Importers of the `pipeweave.profiles` subpackage, on small hand-written files in the real formats.

The files under tests/profiles/data/ were written by hand for these tests (see its README.md);
their numbers are not measurements.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pipeweave as pw
from pipeweave import DataError
from pipeweave.profiles import (
    check_profiles,
    import_kineto,
    import_ncu,
    import_profiles,
    import_triton_autotune,
    read_ncu_csv,
    read_profiles,
    write_profiles,
)

DATA = Path(__file__).parent / "data"


# --- Kineto ---------------------------------------------------------------------------------
def test_kineto_gemm_rows_and_skips():
    rows, skipped = import_kineto(DATA / "kineto_h100_gemm.json")
    rows = rows[rows["family"] == "gemm"].sort_values("m").reset_index(drop=True)
    assert list(rows[["m", "n", "k"]].itertuples(index=False, name=None)) == [(256, 8192, 4096), (4096, 8192, 4096)]
    assert (rows["gpu"] == "NVIDIA H100 80GB HBM3").all() and (rows["dtype"] == "bfloat16").all()
    # addmm: GEMM + split-K reduce (the reduce kernel links through correlation -> runtime -> External id)
    assert rows.loc[0, "latency_us"] == pytest.approx(34.0) and rows.loc[0, "n_kernels"] == 2
    # two launches of the same mm: median of 412.5 and 410.0
    assert rows.loc[1, "latency_us"] == pytest.approx(411.25) and rows.loc[1, "n_raw_rows"] == 2
    assert (rows["timing"] == "kineto").all()
    reasons = " | ".join(skipped["reason"])
    assert "aten::softmax" in reasons and "TF32 tensor-core kernel" in reasons and "batch 8" in reasons
    assert int(skipped["count"].sum()) == 3  # the memset is not a kernel event


def test_kineto_fp32_gemms_become_gemm_fp32_rows():
    rows, skipped = import_kineto(DATA / "kineto_h100_gemm.json")
    f32 = rows[rows["family"] == "gemm_fp32"].set_index("op")
    assert set(f32.index) == {"bmm", "linear"} and (f32["dtype"] == "float32").all()
    # torch.bmm of [4, 512, 256] x [4, 256, 1024]: 4 GEMMs of 512 x 1024 x 256 on a CUTLASS SIMT kernel
    bmm = f32.loc["bmm"]
    assert (bmm["batch_size"], bmm["m"], bmm["n"], bmm["k"]) == (4, 512, 1024, 256)
    assert (bmm["block_m"], bmm["block_n"], bmm["block_k"], bmm["num_stages"]) == (128, 64, 8, 5)
    assert bmm["num_warps"] == 8  # block [256, 1, 1]
    assert bmm["latency_us"] == pytest.approx(48.0)
    # F.linear of [64, 1024] x [4096, 1024]^T on a gemv kernel: no tile in the name, left to the front-end
    lin = f32.loc["linear"]
    assert (lin["batch_size"], lin["m"], lin["n"], lin["k"]) == (1, 64, 4096, 1024)
    assert np.isnan(lin["block_m"]) and np.isnan(lin["num_warps"])
    # the float32 mm that ran a TF32 tensor-core kernel is skipped, not modelled as SGEMM
    tf32 = skipped[skipped["kernel"].str.contains("tf32")]
    assert len(tf32) == 1 and "TF32" in tf32["reason"].iloc[0]


def test_kineto_fp32_rows_validate_and_predict():
    rows, _ = import_profiles("kineto", [DATA / "kineto_h100_gemm.json"])
    f32 = rows[rows["family"] == "gemm_fp32"]
    assert len(f32) == 2 and set(f32["gpu"]) == {"H100-SXM"}
    feats = pw.featurize(f32.drop(columns=["latency_us"]))
    assert len(feats) == 2 and np.isfinite(feats["t_env_us"]).all()


def test_kineto_validated_through_import_profiles():
    rows, _ = import_profiles("kineto", [DATA / "kineto_h100_gemm.json"])
    assert set(rows["gpu"]) == {"H100-SXM"}  # deviceProperties name resolved through the catalog
    assert set(rows["generation"]) == {"hopper"} and set(rows["source"]) == {"user"}


def test_kineto_without_device_needs_gpu(tmp_path):
    trace = json.loads((DATA / "kineto_h100_gemm.json").read_text())
    del trace["deviceProperties"]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(trace))
    with pytest.raises(DataError, match="pass gpu="):
        import_kineto(p)
    rows, _ = import_kineto(p, gpu="H200")
    assert set(rows["gpu"]) == {"H200"}


def test_kineto_gpu_label_that_disagrees_with_the_trace_is_noted():
    """The hand-written trace names an H100: labelling its rows L40S is allowed and said (as ncu does); H100 is not."""
    import warnings

    with pytest.warns(UserWarning, match=r"was profiled on 'NVIDIA H100 80GB HBM3'; its rows are labelled 'L40S'"):
        rows, _ = import_kineto(DATA / "kineto_h100_gemm.json", gpu="L40S")
    assert set(rows["gpu"]) == {"L40S"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import_kineto(DATA / "kineto_h100_gemm.json", gpu="H100")


def test_kineto_trace_with_torch_1x_category_names(tmp_path):
    """The hand-written trace with the categories torch 1.x wrote (Operator / Runtime / Kernel): the same rows."""
    trace = json.loads((DATA / "kineto_h100_gemm.json").read_text())
    old_names = {"cpu_op": "Operator", "cuda_runtime": "Runtime", "kernel": "Kernel"}
    for ev in trace["traceEvents"]:
        ev["cat"] = old_names.get(ev.get("cat"), ev.get("cat"))
    p = tmp_path / "old.json"
    p.write_text(json.dumps(trace))
    new_rows, _ = import_kineto(DATA / "kineto_h100_gemm.json")
    old_rows, _ = import_kineto(p)
    assert len(new_rows) > 0
    pd.testing.assert_frame_equal(old_rows.reset_index(drop=True), new_rows.reset_index(drop=True))


def test_kineto_cpu_only_trace(tmp_path):
    trace = json.loads((DATA / "kineto_h100_gemm.json").read_text())
    trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("cat") != "kernel"]
    p = tmp_path / "cpu.json"
    p.write_text(json.dumps(trace))
    with pytest.raises(DataError, match="no GPU kernel events"):
        import_kineto(p)


def test_kineto_not_a_trace(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"foo": 1}')
    with pytest.raises(DataError, match="traceEvents"):
        import_kineto(p)
    p.write_text("not json")  # the message says where the JSON breaks, not a class name
    with pytest.raises(DataError, match=r"not a JSON trace \(line 1, column 1: Expecting value"):
        import_kineto(p)


# --- Triton autotune cache -------------------------------------------------------------------
def test_triton_autotune_rows():
    rows, skipped = import_triton_autotune(
        DATA / "matmul_kernel.autotune.json", gpu="H100", family="gemm", key=["m", "n", "k"]
    )
    assert len(rows) == 3 and int(skipped["count"].sum()) == 1 and "inf" in skipped["reason"].iloc[0]
    best = rows.sort_values("latency_us").iloc[0]
    assert best["latency_us"] == pytest.approx(22.7)  # 0.0227 ms median
    assert best[["block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"]].tolist() == [
        128,
        128,
        32,
        8,
        4,
        4,
    ]
    assert (rows[["m", "n", "k"]] == [512, 1024, 2048]).all().all()
    assert set(rows["dtype"]) == {"float16"}  # from the key's tensor dtypes
    assert set(rows["timing"]) == {"triton_do_bench"}


def test_triton_autotune_needs_gpu_family_and_key():
    f = DATA / "matmul_kernel.autotune.json"
    with pytest.raises(DataError, match="pass gpu=.* and family="):
        import_triton_autotune(f, gpu=None, family=None, key=["m", "n", "k"])
    # only what is missing is asked for (the GPU given, the family not; and the other way round)
    with pytest.raises(DataError, match="does not name the kernel family") as exc:
        import_triton_autotune(f, gpu="H100", family=None, key=["m", "n", "k"])
    assert exc.value.hint == "pass family=" and "GPU" not in exc.value.message
    with pytest.raises(DataError, match="does not name the GPU") as exc:
        import_triton_autotune(f, gpu=None, family="gemm", key=["m", "n", "k"])
    assert "family=" not in str(exc.value.hint) and "family" not in exc.value.message.split(":")[-1]
    with pytest.raises(DataError, match=r"key \(the shape column names\) is required"):
        import_triton_autotune(f, gpu="H100", family="gemm", key=[])
    with pytest.raises(DataError, match="key of 6"):
        import_triton_autotune(f, gpu="H100", family="gemm", key=["m", "n", "k", "_", "_", "_", "_"])
    # a name that is not a shape column of the family (a typo, or the wrong family)
    with pytest.raises(DataError, match=r"key names \['foo'\] are not shape columns of family 'gemm'") as exc:
        import_triton_autotune(f, gpu="H100", family="gemm", key=["m", "n", "k", "foo"])
    assert "['m', 'n', 'k']" in str(exc.value)


def test_triton_autotune_fused_moe_key_with_fixed_columns(tmp_path):
    data = json.loads((DATA / "matmul_kernel.autotune.json").read_text(), parse_constant=float)
    data["key"] = [256, "torch.bfloat16"]
    p = tmp_path / "fused_moe_kernel.autotune.json"
    p.write_text(json.dumps(data))
    rows, _ = import_profiles(
        "triton-autotune",
        [p],
        gpu="H100",
        family="fused_moe",
        key=["num_tokens"],
        fixed={"hidden_size": 4096, "inter_size": 1536, "topk": 8, "num_experts": 64},
    )
    assert len(rows) == 3 and set(rows["num_tokens"]) == {256} and set(rows["dtype"]) == {"bfloat16"}
    assert set(rows["moe_ep_size"]) == {1.0} and set(rows["distribution"]) == {"balanced"}  # family defaults


def test_triton_autotune_refuses_unnamed_numbers_another_dtype_and_mixed_kernels(tmp_path):
    f = DATA / "matmul_kernel.autotune.json"  # key [512, 1024, 2048, torch.float16 x3]
    # a number of the key left unnamed would be dropped: the rows would describe another launch
    with pytest.raises(DataError, match=r"key names 2 entries .* has 1 more number\(s\) \[2048\]") as exc:
        import_triton_autotune(f, gpu="H100", family="gemm", key=["m", "n"])
    assert "_ to ignore it" in str(exc.value.hint)
    rows, _ = import_triton_autotune(f, gpu="H100", family="gemm", key=["m", "n", "_"])  # ignored on purpose
    assert "k" not in rows.columns
    # a dtype that contradicts the key's tensor dtype is refused; the same dtype, any spelling, is accepted
    with pytest.raises(DataError, match=r"dtype='bfloat16' would override .* 'float16'"):
        import_triton_autotune(f, gpu="H100", family="gemm", key=["m", "n", "k"], dtype="bfloat16")
    rows, _ = import_triton_autotune(f, gpu="H100", family="gemm", key=["m", "n", "k"], dtype="fp16")
    assert set(rows["dtype"]) == {"float16"}
    # a directory of two kernels' files: one family and one key mapping cannot describe both
    (tmp_path / "matmul_kernel.autotune.json").write_text(f.read_text())
    (tmp_path / "fused_moe_kernel.autotune.json").write_text(f.read_text())
    with pytest.raises(DataError, match=r"autotune files of 2 kernels \['fused_moe_kernel', 'matmul_kernel'\]"):
        import_profiles("triton-autotune", [tmp_path], gpu="H100", family="gemm", key=["m", "n", "k"])


def test_triton_autotune_short_names_split_k_and_unread_parameters(tmp_path):
    """Hand-edited copy of the autotune file: BM/BN/BK/GM names are read, a split-K config is skipped with its
    reason (the tile plan has one CTA per output tile), other parameters are noted as not modelled."""
    data = json.loads((DATA / "matmul_kernel.autotune.json").read_text(), parse_constant=float)
    short = {"BM": 128, "BN": 64, "BK": 32, "GM": 8, "EVEN_K": True}
    data["configs_timings"][0][0]["kwargs"] = short
    data["configs_timings"][1][0]["kwargs"] = {**short, "SPLIT_K": 2}
    f = tmp_path / "mm.autotune.json"
    f.write_text(json.dumps(data))
    with pytest.warns(UserWarning, match=r"config parameters \['EVEN_K'\] are not tile-plan columns"):
        rows, skipped = import_triton_autotune(f, gpu="H100", family="gemm", key=["m", "n", "k"])
    assert ((rows["block_m"] == 128) & (rows["block_n"] == 64) & (rows["block_k"] == 32)).sum() == 1
    assert skipped["reason"].str.contains("split-K 2").sum() == 1 and len(rows) == 2


# --- Nsight Compute --------------------------------------------------------------------------
def test_ncu_shapes_rows_must_match_exclusively(tmp_path):
    """Two kernel patterns claiming one launch are refused; a shapes row matching nothing is noted."""
    two = tmp_path / "two.csv"  # hand-made: both patterns match the ampere s16816 GEMM kernel
    two.write_text(
        "kernel,family,dtype,m,n,k\ns16816gemm,gemm,bfloat16,64,4096,1024\ngemm_bf16,gemm,bfloat16,8192,4096,4096\n"
    )
    with pytest.raises(DataError, match=r"matches the patterns of rows 1 and 2") as exc:
        import_ncu(DATA / "ncu_raw.csv", shapes=two)
    assert "exclusive" in str(exc.value.hint)
    spare = tmp_path / "spare.csv"
    spare.write_text((DATA / "ncu_shapes.csv").read_text() + "99,,gemm,bfloat16,16,16,16\n")
    with pytest.warns(UserWarning, match=r"row\(s\) \[3\] of the shapes file spare.csv matched no launch"):
        rows, _ = import_ncu(DATA / "ncu_raw.csv", shapes=spare)
    assert len(rows) == 2


def test_ncu_units_separators_and_matching():
    launches, units = read_ncu_csv(DATA / "ncu_raw.csv")
    assert len(launches) == 3 and units["gpu__time_duration.sum"] == "nsecond"
    rows, skipped = import_ncu(DATA / "ncu_raw.csv", shapes=DATA / "ncu_shapes.csv")
    rows = rows.sort_values("ncu_id").reset_index(drop=True)
    # ID 0 matches the kernel pattern row (8192), ID 2 its own id row (4096) before the pattern
    assert rows["m"].tolist() == [8192, 4096]
    assert rows["latency_us"].tolist() == pytest.approx([1234.88, 612.352])  # ns -> us, "1,234,880"
    assert rows["grid_size"].tolist() == [2048, 1024] and rows["smem_dynamic_bytes"].iloc[0] == pytest.approx(73730)
    assert set(rows["gpu"]) == {"NVIDIA A100-SXM4-80GB"}
    assert int(skipped["count"].sum()) == 1 and "no row of the shapes table" in skipped["reason"].iloc[0]
    ok, _ = import_profiles("ncu", [DATA / "ncu_raw.csv"], shapes=DATA / "ncu_shapes.csv")
    assert set(ok["gpu"]) == {"A100-SXM"} and set(ok["timing"]) == {"ncu"}


def test_ncu_millisecond_unit(tmp_path):
    text = (DATA / "ncu_raw.csv").read_text().replace('"nsecond"', '"msecond"')
    text = text.replace('"1,234,880"', '"1.5"').replace('"612,352"', '"0.25"')
    p = tmp_path / "ms.csv"
    p.write_text(text)
    rows, _ = import_ncu(p, shapes=DATA / "ncu_shapes.csv")
    assert sorted(rows["latency_us"]) == pytest.approx([250.0, 1500.0])


def test_ncu_errors(tmp_path):
    with pytest.raises(DataError, match=r"need a shapes CSV \(shapes=\)"):
        import_ncu(DATA / "ncu_raw.csv", shapes=None)
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="ID"):
        read_ncu_csv(p)


# --- canonical file --------------------------------------------------------------------------
def _rows() -> pd.DataFrame:  # hand-made launches, not measurements
    return pd.DataFrame(
        {
            "gpu": ["H100", "h100-sxm", "A100"],
            "family": ["gemm"] * 3,
            "dtype": ["bfloat16"] * 3,
            "m": [4096, 1024, 2048],
            "n": [4096, 1024, 2048],
            "k": [4096, 1024, 2048],
            "latency_us": [400.0, 12.0, 80.0],
        }
    )


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_canonical_round_trip(tmp_path, suffix):
    p = tmp_path / f"mine{suffix}"
    write_profiles(check_profiles(_rows()), p)
    back = read_profiles(p)
    assert back["gpu"].tolist() == ["H100-SXM", "H100-SXM", "A100-SXM"]
    assert back["latency_us"].tolist() == [400.0, 12.0, 80.0] and set(back["source"]) == {"user"}


def test_canonical_bad_rows_name_row_and_reason(tmp_path):
    bad = _rows()
    bad.loc[1, "family"] = "gemmm"
    bad.loc[2, "latency_us"] = -3.0
    p = tmp_path / "bad.csv"
    bad.to_csv(p, index=False)
    before = p.read_bytes()
    with pytest.raises(DataError, match=r"2 bad rows: row 2: unknown family 'gemmm'.*row 3: latency_us"):
        read_profiles(p)
    assert p.read_bytes() == before  # the user's file is never altered
    slip = _rows()
    slip.loc[0, "latency_us"] = 4.0e11  # nanoseconds written as microseconds (400 s)
    with pytest.raises(DataError, match=r"1 bad row: row 1: latency_us must be .* <= 1e\+09.*unit slip"):
        check_profiles(slip)
    with pytest.raises(DataError, match=r"has no column \['latency_us'\]"):
        check_profiles(_rows().drop(columns="latency_us"))
    with pytest.raises(DataError, match=r"\.csv or \.parquet"):
        read_profiles(tmp_path / "x.txt")
    # one problem on many rows is reported once, with its rows
    many = pd.concat([_rows()] * 3, ignore_index=True).assign(gpu="MyGPU")
    with pytest.raises(DataError, match=r"bad rows: rows 1, 2, 3, 4, 5 and \d+ more: unknown GPU 'MyGPU'") as exc:
        check_profiles(many)
    assert str(exc.value).count("unknown GPU") == 1 and "spec file" in str(exc.value)
    # a generation cell that disagrees with the row's GPU: measured elsewhere, or a wrong label
    moved = _rows().assign(gpu="B300", generation="hopper")
    with pytest.raises(DataError, match=r"rows 1, 2, 3: generation='hopper' but B300 is a blackwell GPU"):
        check_profiles(moved)
    assert (check_profiles(moved.assign(generation="blackwell"))["generation"] == "blackwell").all()
    assert (check_profiles(moved.assign(generation=None))["generation"] == "blackwell").all()


def test_public_fit_on_profiles(tmp_path):
    """The public Python path: a regressor fitted on a canonical profile file, no private import."""
    from pipeweave.frontend import featurize
    from pipeweave.model import PipeweaveRegressor

    rows = check_profiles(_rows())
    model = PipeweaveRegressor(n_estimators=3).fit(rows)
    pred = model.predict(rows.drop(columns="latency_us"))
    assert pred.shape == (3,) and np.isfinite(pred).all()
    model2 = PipeweaveRegressor(n_estimators=3).fit(rows.drop(columns="latency_us"), rows["latency_us"])
    np.testing.assert_allclose(model2.predict(rows), pred)
    with pytest.raises(DataError, match="canonical profile rows themselves"):
        PipeweaveRegressor(n_estimators=3).fit(featurize(rows), rows["latency_us"])


def test_kineto_legacy_sgemm_records_its_split_k(tmp_path):
    """A legacy cuBLAS SGEMM whose grid z exceeds the batch split its reduction: the row's split_k is grid z / batch.
    Hand-made trace (one F.linear on a T4; made-up times, the real event layout)."""
    events = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::linear",
            "pid": 1,
            "tid": 1,
            "ts": 10.0,
            "dur": 30.0,
            "args": {
                "External id": 7,
                "Input type": ["float", "float", "float"],
                "Input Dims": [[64, 8192], [512, 8192], [512]],
            },
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "volta_sgemm_128x32_sliced1x4_tn",
            "pid": 0,
            "tid": 7,
            "ts": 20.0,
            "dur": 25.0,
            # column-major tile: grid x = ceil(n / 128), y = ceil(m / 32), z = the reduction's 8 slices
            "args": {"External id": 7, "device": 0, "correlation": 9, "grid": [4, 2, 8], "block": [128, 1, 1]},
        },
    ]
    trace = {"deviceProperties": [{"id": 0, "name": "Tesla T4"}], "traceEvents": events}
    path = tmp_path / "t4_linear.json"
    path.write_text(json.dumps(trace))
    rows, _ = import_kineto(path)
    row = rows[rows["family"] == "gemm_fp32"].iloc[0]
    assert (row["m"], row["n"], row["k"], row["op"]) == (64, 512, 8192, "linear")
    assert (row["block_m"], row["block_n"], row["split_k"]) == (32, 128, 8)
    assert pw.featurize(rows.drop(columns=["latency_us"]))["split_k"].iloc[0] == 8
