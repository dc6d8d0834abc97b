"""Front-end families of the non-tensor pipes (issue 13) on HAND-MADE launch rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError
from pipeweave.frontend import FAMILIES, featurize, row_problems


def _rows(**cols: object) -> pd.DataFrame:
    return pd.DataFrame(cols)


def test_rmsnorm_and_silu_mul_use_fma_and_xu() -> None:
    df = pd.concat(
        [
            _rows(family="rmsnorm", gpu="H100-SXM", dtype="bfloat16", num_tokens=[1, 4096], hidden_size=[4096, 4096]),
            _rows(family="silu_mul", gpu="A100-SXM", dtype="bfloat16", num_tokens=[1, 4096], inter_size=[14336, 14336]),
        ],
        ignore_index=True,
    )
    f = featurize(df)
    assert (f["t_sm_fma_us"] > 0).all() and (f["t_sm_xu_us"] > 0).all() and (f["t_sm_tensor_us"] == 0).all()
    # bytes: rmsnorm reads + writes 2 B per element, silu_mul reads 4 B and writes 2 B per output element
    assert f["dram_compulsory_bytes"].iloc[1] == pytest.approx(4096 * 4096 * 4 + 4096 * 2)
    assert f["dram_compulsory_bytes"].iloc[3] == pytest.approx(4096 * 14336 * 6)
    # one CTA per token: a single token leaves the GPU idle and is latency/launch bound
    assert f["grid_ctas"].tolist()[::2] == [1.0, 1.0]
    assert set(f["bound_pipe"].iloc[[1, 3]]) <= {"dram", "alu", "fma", "l2"}
    assert f["active_sm_frac"].iloc[0] == pytest.approx(1.0 / 132) and f["bound_pipe"].iloc[0] in ("latency", "alu")
    assert f["r_launch"].iloc[0] > 0.5  # a lone token's row costs less than the launch itself


def test_silu_mul_time_scales_with_tokens_and_bandwidth() -> None:
    df = _rows(
        family="silu_mul",
        gpu=["A100-SXM", "A100-SXM", "H100-SXM"],
        dtype="bfloat16",
        num_tokens=[8192, 16384, 16384],
        inter_size=14336,
    )
    t = featurize(df)["t_env_us"].to_numpy()
    assert 1.8 < t[1] / t[0] < 2.2 and t[2] < t[1]


def test_gemm_fp32_runs_on_the_fma_pipe_and_uses_the_kernel_tile() -> None:
    df = _rows(
        family="gemm_fp32",
        gpu=["P100", "P100", "T4"],
        dtype="float32",
        m=4096,
        n=4096,
        k=4096,
        batch_size=1,
        op="bmm",
        block_m=[128.0, np.nan, 128.0],
        block_n=[64.0, np.nan, 128.0],
        block_k=[8.0, np.nan, 8.0],
        num_warps=[4.0, np.nan, 8.0],
        num_stages=[2.0, np.nan, 2.0],
    )
    f = featurize(df)
    assert (f["work_tensor"] == 0).all() and (f["work_fma"] >= 4096.0**3).all()
    assert f["tile_origin"].astype(str).tolist() == ["kernel_name", "simt_heuristic", "kernel_name"]
    assert f["bound_pipe"].iloc[0] in ("fma", "smem")
    # FP32 peak of a P100: 64 lanes x 2 x 56 SM x 1303 MHz; the envelope is above the FMA-only time
    t_fma = 2 * 4096.0**3 / (64 * 2 * 56 * 1303.0)
    assert f["t_roofline_us"].iloc[0] == pytest.approx(t_fma, rel=1e-6) and f["t_env_us"].iloc[0] > t_fma


def test_gemm_fp32_reports_its_operand_layout() -> None:
    """``b_transposed``: 1 for op linear (x @ W^T, cuBLAS tn), 0 for bmm or a blank op; NaN on other families.
    The demand is the same for both layouts (the booster reads the column, the envelope does not)."""
    gemm = _rows(family="gemm_fp32", gpu="V100-PCIe", dtype="float32", m=512, n=1024, k=256, op=["bmm", "linear", ""])
    rms = _rows(family="rmsnorm", gpu="V100-PCIe", dtype="bfloat16", num_tokens=[8], hidden_size=[4096])
    f = featurize(pd.concat([gemm, rms], ignore_index=True))
    assert f["b_transposed"].iloc[:3].tolist() == [0.0, 1.0, 0.0] and np.isnan(f["b_transposed"].iloc[3])
    assert f["t_env_us"].iloc[0] == f["t_env_us"].iloc[1]
    assert featurize(gemm.drop(columns="op"))["b_transposed"].tolist() == [0.0, 0.0, 0.0]  # absent: bmm


def test_pascal_rows_need_no_tensor_cores() -> None:
    df = _rows(
        family=["gemm_fp32", "softmax_fp32", "gemm"],
        gpu="P4",
        dtype=["float32", "float32", "bfloat16"],
        m=[64, np.nan, 64],
        n=[64, np.nan, 64],
        k=[64, np.nan, 64],
        num_tokens=[np.nan, 64, np.nan],
        hidden_size=[np.nan, 4096, np.nan],
    )
    reasons = row_problems(df)
    assert reasons.iloc[0] == "" and reasons.iloc[1] == ""
    assert "tensor" in reasons.iloc[2] or "bfloat16" in reasons.iloc[2]


def test_elementwise_ops_differ_and_unknown_op_is_named() -> None:
    df = _rows(
        family="elementwise_fp32",
        gpu="V100",
        dtype="float32",
        num_tokens=8192,
        hidden_size=8192,
        op=["add", "addu", "pow"],
    )
    f = featurize(df)
    assert f["work_dram"].iloc[0] > f["work_dram"].iloc[1]  # two input tensors vs one
    assert f["work_xu"].iloc[2] > 0 and f["work_xu"].iloc[0] == 0
    with pytest.raises(DataError, match="sqrtx"):
        featurize(df.assign(op="sqrtx"))


def test_flashinfer_paged_fa3_and_decode() -> None:
    df = _rows(
        family="attention_flashinfer",
        gpu="H100-SXM",
        dtype="bfloat16",
        batch_size=2,
        num_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        backend=["fa2_ragged", "fa2_paged", "fa3_ragged", "fa2_paged"],
        q_lengths=["512;1024", "512;1024", "512;1024", "1;1"],
        kv_lengths=["512;1024"] * 3 + ["4096;8192"],
    )
    f = featurize(df)
    assert f["useful_flop"].iloc[0] == pytest.approx(4 * 32 * 128 * (512 * 513 / 2 + 1024 * 1025 / 2))
    assert f["work_alu"].iloc[1] > f["work_alu"].iloc[0]  # page-table address math
    assert f["block_n"].iloc[2] == 128 and f["block_n"].iloc[0] == 64
    assert f["block_m"].iloc[3] == 16  # decode: 16-row tiles of the packed GQA group
    with pytest.raises(DataError, match="q_lengths"):
        featurize(df.assign(q_lengths="1;x"))


def test_registry_has_the_issue13_families() -> None:
    for name in (
        "rmsnorm",
        "silu_mul",
        "attention_flashinfer",
        "gemm_fp32",
        "elementwise_fp32",
        "softmax_fp32",
        "layernorm_fp32",
    ):
        assert name in FAMILIES
    assert not FAMILIES["rmsnorm"].uses_tensor_cores and FAMILIES["attention_flashinfer"].uses_tensor_cores


def test_warm_l2_holds_small_working_sets() -> None:
    """Back-to-back launches on the same buffers: a working set inside the usable L2 costs no DRAM bytes."""
    df = _rows(
        family="silu_mul", gpu=["L40", "L40", "A40"], dtype="bfloat16", num_tokens=[1024, 65536, 1024], inter_size=4096
    )
    f = featurize(df)
    assert f["work_dram"].iloc[0] == 0.0  # 25 MB in a 96 MB L2
    assert f["work_dram"].iloc[1] == pytest.approx(f["dram_compulsory_bytes"].iloc[1])  # 1.6 GB streams
    assert f["work_dram"].iloc[2] == pytest.approx(f["dram_compulsory_bytes"].iloc[2])  # 25 MB > 6 MB L2 / 2


def test_a_huge_tile_value_is_flagged_without_an_overflow_warning():
    import warnings

    # hand-made: BLOCK_M = 1.7e308 (a fuzzed value) is outside [16, 256] and no power of two
    row = pd.DataFrame(
        {
            "family": ["gemm"],
            "gpu": ["H100"],
            "dtype": ["bfloat16"],
            "m": [64],
            "n": [64],
            "k": [64],
            "block_m": [1.7e308],
            "block_n": [64],
            "block_k": [32],
            "group_m": [8],
            "num_warps": [4],
            "num_stages": [3],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        problems = row_problems(row)
    assert "block_m=1.7e+308 is outside its domain" in problems.iloc[0]


def test_optional_launch_columns_are_range_checked_where_given():
    """Hand-made bmm launches: a batch of 0 is named; a blank batch is the default (one matrix)."""
    base = {"family": "gemm_fp32", "gpu": "T4", "dtype": "float32", "m": 64, "n": 64, "k": 64, "op": "bmm"}
    df = pd.DataFrame([{**base, "batch_size": 0}, {**base, "batch_size": 8}, {**base, "batch_size": None}])
    reasons = row_problems(df).tolist()
    assert reasons[0] == "batch_size=0 is outside its domain: batch_size must be a whole number in [1, 1048576]"
    assert reasons[1:] == ["", ""]


def test_reread_miss_fraction_counts_the_rows_in_flight():
    """Hand-made SM limits: 10 SMs, 16 resident 128-thread CTAs each (64 warps / 4), one row per CTA, a 1 MiB
    L2 of which half is usable (L2_USABLE_FRACTION): 160 rows in flight."""
    from pipeweave.frontend._constants import L2_USABLE_FRACTION
    from pipeweave.frontend._norm import reread_miss_fraction

    spec = {"sm_count": 10.0, "max_ctas_per_sm": 32.0, "max_warps_per_sm": 64.0, "l2_mib": 1.0}
    usable = 2.0**20 * L2_USABLE_FRACTION
    rows = np.array([1e6, 1e6, 1e6, 80.0])
    row_bytes = np.array([usable / 160, 1.5 * usable / 160, 2 * usable / 160, 2 * usable / 160])
    got = reread_miss_fraction(rows, row_bytes, np.full(4, 128.0), 1.0, spec)
    # fits -> 0; 1.5x the usable L2 -> half; twice -> all; only 80 rows at all -> they fit again
    np.testing.assert_allclose(got, [0.0, 0.5, 1.0, 0.0])


def test_two_pass_layernorm_rereads_from_dram_where_its_rows_outgrow_l2():
    """Hand-made launch: 4,096 rows of 8,192 FP32 values. P100 (4 MiB L2) keeps ~900 rows of 32 KiB in flight
    and reads each row twice from DRAM; L4 (48 MiB L2) re-reads from L2. Softmax's block kernel (three
    passes, two 1,024-thread CTAs per SM: 112 rows, 3.5 MiB in flight on P100) misses 3/4 of its re-reads
    there, none on L4."""
    df = pd.DataFrame(
        [
            {"family": f, "gpu": g, "dtype": "float32", "num_tokens": 4096, "hidden_size": 8192}
            for f in ("layernorm_fp32", "softmax_fp32")
            for g in ("P100-PCIe", "L4")
        ]
    )
    ratio = featurize(df)["dram_over_compulsory"].to_numpy()
    # layernorm: input bytes are half the compulsory bytes (read + write), so a full DRAM re-read is 1.5x
    np.testing.assert_allclose(ratio[:2], [1.5, 1.0], rtol=1e-3)
    # softmax: 2 re-reads x input half of the bytes x 3/4 missed = 0.75 more
    np.testing.assert_allclose(ratio[2:], [1.75, 1.0], rtol=1e-2)


def test_simt_gemm_split_k_divides_the_reduction() -> None:
    """Hand-made launch: one 128 x 128 output tile over k = 65,536 on the A100 PCIe. Split 16 ways (cuBLAS
    split-K), 16 CTAs each run k / 16; the partial sums add DRAM traffic; the envelope is far shorter."""
    from pipeweave.frontend._demand import SCHEDULE_SPEC_KEYS, envelope_us
    from pipeweave.frontend._featurize import spec_arrays
    from pipeweave.frontend._fp32ops import simt_gemm

    spec = spec_arrays(pd.Series(["A100-PCIe-40GB"]))
    one = np.array([1.0])
    kw = dict(batch=one, m=128 * one, n=128 * one, k=65536 * one, bm=128 * one, bn=128 * one, bk=8 * one)
    plain = simt_gemm("g", warps=8 * one, stages=2 * one, spec=spec, **kw)
    split = simt_gemm("g", warps=8 * one, stages=2 * one, spec=spec, split_k=16 * one, **kw)
    assert split.grid_ctas[0] == 16 * plain.grid_ctas[0] and plain.iters[0] == 16 * split.iters[0]
    assert split.dram_bytes[0] > plain.dram_bytes[0]
    sched = {key: spec[key] for key in SCHEDULE_SPEC_KEYS if key in spec}
    assert envelope_us(split, sched)[0] < envelope_us(plain, sched)[0] / 4


def test_gemm_fp32_split_k_divides_the_reduction() -> None:
    """A recorded split-K (hand-made launch: one 128 x 128 output tile over k = 65,536): split_k CTAs each run
    k / split_k, with fp32 partials through memory; one CTA on a 108-SM GPU is far slower."""
    base = {"family": "gemm_fp32", "gpu": "A100-PCIe-40GB", "dtype": "float32", "m": 128, "n": 128, "k": 65536}
    tile = {"block_m": 128, "block_n": 128, "block_k": 8, "num_warps": 8, "num_stages": 2}
    df = pd.DataFrame([{**base, **tile}, {**base, **tile, "split_k": 16}, {**base, **tile, "split_k": None}])
    f = featurize(df)
    assert f["split_k"].tolist() == [1.0, 16.0, 1.0]  # blank = no split
    assert f["iters"].iloc[0] == 16 * f["iters"].iloc[1]
    assert f["t_env_us"].iloc[1] < f["t_env_us"].iloc[0] / 4
    assert f["work_dram"].iloc[1] > f["work_dram"].iloc[0]  # the partials


def test_infer_split_k_splits_long_reductions_only() -> None:
    """Hand-made launches on the A100 PCIe: one 128 x 128 output tile over k = 65,536 (one CTA on 108 SMs) gets the
    largest candidate split; a 4096^3 GEMM (1,024 tiles) none; a given split is kept; a short k keeps slices of at
    least SPLIT_K_MIN_SLICE; other families' rows are NaN."""
    from pipeweave.frontend import SPLIT_K_CANDIDATES, SPLIT_K_MIN_SLICE, infer_split_k

    base = {"family": "gemm_fp32", "gpu": "A100-PCIe-40GB", "dtype": "float32"}
    df = pd.DataFrame(
        [
            {**base, "m": 128, "n": 128, "k": 65536},
            {**base, "m": 4096, "n": 4096, "k": 4096},
            {**base, "m": 128, "n": 128, "k": 65536, "split_k": 3},
            {**base, "m": 128, "n": 128, "k": 512},
            {"family": "gemm", "gpu": "H100-SXM", "dtype": "bfloat16", "m": 128, "n": 128, "k": 128},
        ]
    )
    split = infer_split_k(df)
    assert split[0] == max(SPLIT_K_CANDIDATES) and split[1] == 1.0 and split[2] == 3.0
    assert 512 / split[3] >= SPLIT_K_MIN_SLICE and split[3] > 1
    assert np.isnan(split[4])
    # the chosen split is the candidate with the smallest envelope among the allowed ones
    env = [featurize(df.iloc[[0]].assign(split_k=c))["t_env_us"].iloc[0] for c in SPLIT_K_CANDIDATES]
    assert SPLIT_K_CANDIDATES[int(np.argmin(env))] == split[0]


def test_gemm_fp32_split_k_is_range_checked() -> None:
    row = {"family": "gemm_fp32", "gpu": "T4", "m": 64, "n": 512, "k": 8192, "split_k": 0}
    problems = row_problems(pd.DataFrame([row, {**row, "split_k": 4}]))
    assert "split_k=0" in str(problems.iloc[0]) and "whole number in [1, 1024]" in str(problems.iloc[0])
    assert problems.iloc[1] == ""


def test_gemm_fp32_split_k_above_k_is_named() -> None:
    """Hand-made rows: a split into more slices than k has is an input error, named with both values; a split of
    exactly k slices and a blank split pass."""
    row = {"family": "gemm_fp32", "gpu": "T4", "dtype": "float32", "m": 64, "n": 64, "k": 16}
    problems = row_problems(pd.DataFrame([{**row, "split_k": 64}, {**row, "split_k": 16}, row]))
    assert "split_k=64, k=16: split_k must be <= k" in str(problems.iloc[0])
    assert list(problems.iloc[1:]) == ["", ""]


def test_library_tile_rows_and_the_simt_tile_launches():
    """Hand-made FP32 GEMM launches on the V100: rows without a tile are the library's choice; each SIMT tile's
    launches carry that tile and the split inferred for it, or the split the launch gives."""
    from pipeweave.frontend import SIMT_TILES, featurize, infer_split_k, library_tile_rows, simt_tile_launches

    base = {"family": "gemm_fp32", "dtype": "float32", "gpu": "V100-PCIe", "op": "linear", "m": 321, "n": 4973}
    rows = pd.DataFrame(
        [
            {**base, "k": 25605},
            {**base, "k": 25605, "split_k": 4},
            {**base, "k": 512, "block_m": 64, "block_n": 64, "block_k": 8},
            {"family": "gemm", "dtype": "bfloat16", "gpu": "H100", "m": 64, "n": 64, "k": 64},
        ]
    )
    assert library_tile_rows(rows).tolist() == [True, True, False, False]
    computed = featurize(rows)
    feats = pd.concat([rows.drop(columns=[c for c in computed.columns if c in rows.columns]), computed], axis=1)
    assert library_tile_rows(feats).tolist() == [True, True, False, False]  # tile_origin "simt_heuristic"
    launches = simt_tile_launches(rows.iloc[:2])
    assert [t for t, _ in launches] == list(SIMT_TILES)
    for tile, one in launches:
        assert (one["block_m"] == tile[0]).all() and (one["num_warps"] == tile[3]).all()
        assert one["split_k"].iloc[1] == 4  # given: kept
        assert one["split_k"].iloc[0] == infer_split_k(one.iloc[[0]].assign(split_k=np.nan))[0]
    assert max(one["split_k"].iloc[0] for _, one in launches) > 1  # a long reduction over few tiles splits
    # a featurized frame's split_k is a feature (1 for a blank, 4 as given): its rows get the inferred split
    for (_, raw), (_, fed) in zip(launches, simt_tile_launches(feats.iloc[:2]), strict=True):
        assert fed["split_k"].tolist() == [raw["split_k"].iloc[0]] * 2
