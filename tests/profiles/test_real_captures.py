"""The importers on real files: a Kineto trace, an ncu CSV and Triton autotune caches captured by this project on
an NVIDIA H200 (experiments/device_h200/captures, see its PROVENANCE.md). The latencies asserted below are values
read from those files (real measurements), so a change in how the importers read them fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeweave.profiles import import_profiles

CAP = Path(__file__).resolve().parents[2] / "experiments" / "device_h200" / "captures"


def _reasons(skipped):
    return skipped.groupby("reason")["count"].sum().to_dict()


def test_real_kineto_trace_gives_the_gemm_rows_and_names_what_it_skips():
    rows, skipped = import_profiles("kineto", CAP / "kineto_h200.json")
    assert set(rows["gpu"]) == {"H200-SXM"} and set(rows["timing"]) == {"kineto"}
    got = {(r.family, r.dtype, r.m, r.n, r.k): r for r in rows.itertuples()}
    assert len(got) == 8
    big = got[("gemm", "bfloat16", 4096, 4096, 4096)]
    assert big.latency_us == pytest.approx(171.421) and big.n_raw_rows == 3  # median of the three iterations
    split_k = got[("gemm", "bfloat16", 1, 4096, 4096)]
    assert split_k.n_kernels == 2  # the split-K GEMM and its reduce kernel, summed per launch
    assert "splitK" in split_k.kernel_name
    # F.linear on a (2, 512, 4096) input is a 1024 x 11008 x 4096 GEMM; with and without bias: 6 launches
    assert got[("gemm", "bfloat16", 1024, 11008, 4096)].n_raw_rows == 6
    assert ("gemm", "float16", 2048, 2048, 2048) in got  # addmm
    assert ("gemm", "bfloat16", 1024, 3072, 2048) in got  # torch.matmul -> aten::mm
    fp32 = got[("gemm_fp32", "float32", 1024, 1024, 1024)]
    assert (fp32.block_m, fp32.block_n, fp32.block_k) == (128, 64, 8)  # from the cuBLAS kernel name
    # torch._scaled_mm of fp8 e4m3 operands with per-tensor (scalar) scales: a gemm row of dtype fp8
    fp8 = got[("gemm", "fp8", 4096, 4096, 4096)]
    assert fp8.n_raw_rows == 3 and "qqtst" in fp8.kernel_name
    assert fp8.latency_us < big.latency_us  # the fp8 tensor rate is twice bf16's
    reasons = _reasons(skipped)
    assert reasons["batched GEMM (batch 8) in bfloat16: only gemm_fp32 models batched GEMMs"] == 3
    assert any("aten::_softmax" in r for r in reasons) and not any(
        r.startswith("launched by aten::_scaled_mm") for r in reasons
    )


def test_real_ncu_csv_with_the_shapes_table():
    rows, skipped = import_profiles("ncu", CAP / "ncu_raw.csv", shapes=CAP / "ncu_shapes.csv")
    assert len(rows) == 6 and set(rows["gpu"]) == {"H200-SXM"}  # from device__attribute_display_name
    tri = rows[rows["kernel_name"] == "matmul_kernel"].iloc[0]
    assert tri["latency_us"] == pytest.approx(203.616)  # 203,616 ns with a thousands separator
    assert (tri["block_m"], tri["block_n"], tri["block_k"], tri["num_warps"]) == (128, 128, 64, 8)
    assert tri["grid_size"] == 1024 and tri["registers_per_thread"] == 126
    assert int(skipped["count"].sum()) == 13  # random-fill kernels and the split-K reduce: not in the table


def test_real_autotune_caches_skip_register_spilling_configs_with_the_true_reason():
    files = sorted((CAP / "autotune").glob("*.json"))
    with pytest.warns(UserWarning, match="merged 96 launches measured in more than one file into 48 rows"):
        rows, skipped = import_profiles("triton-autotune", files, gpu="H200-SXM", family="gemm", key="m,n,k")
    assert len(files) == 30 and set(rows["timing"]) == {"triton_do_bench"}
    assert rows[["m", "n", "k"]].drop_duplicates().shape[0] == 29  # 2048x14336x4096 was swept in both runs
    assert int(rows["n_raw_rows"].max()) == 2
    # 128x256 with 4 warps: the accumulator overflows the registers; Triton launched these (they are timed in
    # the files), so the reason must not say that Triton refuses them
    reasons = _reasons(skipped)
    assert len(reasons) == 4 and all("128x256 fp32 accumulator" in r for r in reasons)
    assert all("register spills" in r and "refuse" not in r for r in reasons)


def test_fp8_scaled_mm_with_row_wise_scales_is_skipped_with_the_reason(tmp_path):
    import json

    # the real trace with its _scaled_mm calls' scales turned into row-wise ones (hand-edited: (m, 1) and (1, n))
    trace = json.loads((CAP / "kineto_h200.json").read_text())
    edited = 0
    for ev in trace["traceEvents"]:
        if ev.get("name") == "aten::_scaled_mm":
            ev["args"]["Input Dims"][2:4] = [[4096, 1], [1, 4096]]
            edited += 1
    path = tmp_path / "rowwise.json"
    path.write_text(json.dumps(trace))
    rows, skipped = import_profiles("kineto", path)
    assert edited == 3 and "fp8" not in set(rows["dtype"])
    why = [r for r in skipped["reason"] if r.startswith("fp8 GEMM with row-wise or block scales")]
    assert why == [
        "fp8 GEMM with row-wise or block scales [[4096, 1], [1, 4096]]: only per-tensor scaling (gemm dtype fp8) is modelled"
    ]


def test_ncu_split_k_launch_sums_its_kernels_when_the_shapes_table_joins_their_ids(tmp_path):
    from pipeweave import DataError

    # the committed shapes table with the split-K GEMM's two kernels (ncu IDs 11 and 12) named as one launch
    table = (CAP / "ncu_shapes.csv").read_text().replace("\n11,,gemm", "\n11+12,,gemm")
    shapes = tmp_path / "shapes.csv"
    shapes.write_text(table)
    rows, skipped = import_profiles("ncu", CAP / "ncu_raw.csv", shapes=shapes)
    split = rows[rows["m"] == 16].iloc[0]
    assert split["latency_us"] == pytest.approx(11.872 + 3.520)  # the GEMM and its splitKreduce_kernel (real ns)
    assert split["ncu_id"] == 11 and len(rows) == 6
    assert int(skipped["count"].sum()) == 12  # the reduce kernel is part of the launch now, not skipped
    for bad, why in (("11+", "is not an ncu ID"), ("11+999", r"names ncu IDs \[999\] that ncu_raw.csv does not have")):
        shapes.write_text(table.replace("\n11+12,,gemm", f"\n{bad},,gemm"))
        with pytest.raises(DataError, match=why):
            import_profiles("ncu", CAP / "ncu_raw.csv", shapes=shapes)
