"""Loaders of the issue-13 sources: pipeweave_fork_sample (rmsnorm, silu_mul, FlashInfer attention) and
neusight (FP32 operators with cuBLAS kernel names). Real-data tests skip without the data directory."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave.sources import load_profiles
from pipeweave.sources._transforms import TRANSFORMS, cublas_tile_from_kernel_name


@pytest.fixture(scope="module")
def new_rows(real_data_dir, session_cache):  # noqa: ANN001, ANN201
    return load_profiles(real_data_dir, sources=["pipeweave_fork_sample", "neusight"], report=True, cache=False)


def test_kernel_name_tiles_hand_made() -> None:
    """HAND-MADE kernel names in the four naming schemes NeuSight's rows use."""
    t = cublas_tile_from_kernel_name(
        [
            "maxwell_sgemm_128x64_nn",
            "volta_sgemm_32x128_tn",
            "volta_sgemm_64x32_sliced1x4_tn",
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma_aligna4",
            "void cutlass::Kernel<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(x)",
            "sgemm_32x32x32_NN_vec",
            "gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4, false, false>",
        ]
    )
    # legacy cuBLAS names are column-major (first number along the caller's n); the others name BM first
    assert t[["block_m", "block_n", "block_k", "num_stages"]].iloc[:6].to_numpy().tolist() == [
        [64, 128, 8, 2],
        [128, 32, 8, 2],
        [32, 64, 8, 2],
        [64, 256, 8, 3],
        [256, 128, 8, 4],
        [32, 32, 32, 2],
    ]
    assert t.iloc[6].isna().all()


def test_fork_transforms_hand_made() -> None:
    raw = pd.DataFrame({"dim": [9728, 768], "q_lengths": ["[6,70]", "[1]"], "kv_lengths": ["[85, 15489]", "[7]"]})
    assert TRANSFORMS["fork_silu_mul"].apply(raw)["_inter_size"].tolist() == [4864, 384]
    att = TRANSFORMS["fork_attention"].apply(raw)
    assert att["_q_lengths"].tolist() == ["6;70", "1"] and att["_kv_lengths"].tolist() == ["85;15489", "7"]


def test_new_families_units_and_generations(new_rows) -> None:  # noqa: ANN001
    df, rep = new_rows
    fams = df.groupby("family", observed=True)
    gens = {f: set(g["generation"].astype(str)) for f, g in fams}
    assert gens["rmsnorm"] == gens["silu_mul"] == {"ampere", "ada", "hopper", "blackwell"}
    assert gens["gemm_fp32"] == {"pascal", "volta", "turing", "ampere", "ada", "hopper"}
    for f in ("elementwise_fp32", "softmax_fp32", "layernorm_fp32"):
        assert gens[f] == {"pascal", "volta", "turing", "ampere", "ada"}, f
    assert len(df[df["family"] == "rmsnorm"]) == 2491 and len(df[df["family"] == "silu_mul"]) == 2891
    assert len(df[df["family"] == "attention_flashinfer"]) == 2226
    # units: the fork sample is in microseconds (as is), NeuSight in ms -> x1000 (>= ~20 us launch floor)
    ns = df[df["source"] == "neusight"]
    assert ns["latency_us"].min() > 10.0 and (ns["timing"] == "cuda_event_op").all()
    fork = df[df["source"] == "pipeweave_fork_sample"]
    assert fork["latency_us"].min() < 10.0 and (fork["timing"] == "cuda_event").all()
    assert set(ns["dtype"].astype(str)) == {"float32"} and set(fork["dtype"].astype(str)) == {"bfloat16"}


def test_real_rows_match_the_files(new_rows, real_data_dir) -> None:  # noqa: ANN001
    """Two real rows, read straight from the source files, come through with converted units."""
    df, _ = new_rows
    raw = pd.read_csv(real_data_dir / "pipeweave_fork_sample" / "silu_mul.csv").iloc[0]
    row = df[
        (df["family"] == "silu_mul")
        & (df["num_tokens"] == raw["seq"])
        & (df["inter_size"] == raw["dim"] / 2)
        & (df["gpu"] == "A100-SXM")
    ]
    assert len(row) == 1 and row["latency_us"].iloc[0] == pytest.approx(raw["avg_duration"])
    bmm = pd.read_csv(real_data_dir / "neusight/dataset/train/collect/bmm/p2.1.0/Tesla P100-PCIE-16GB.csv.gz").iloc[0]
    row = df[
        (df["family"] == "gemm_fp32")
        & (df["gpu"] == "P100-PCIe")
        & (df["op"] == "bmm")
        & (df["batch_size"] == bmm["B"])
        & (df["m"] == bmm["M"])
        & (df["n"] == bmm["K"])  # NeuSight's bmm is [B, M, N] x [B, N, K]: output width K, reduction N
        & (df["k"] == bmm["N"])
    ]
    assert len(row) == 1 and row["latency_us"].iloc[0] == pytest.approx(bmm["Latency"] * 1000.0)
    assert row[["block_m", "block_n", "block_k"]].iloc[0].tolist() == [64.0, 128.0, 8.0]
    assert row["kernel_name"].iloc[0] == "maxwell_sgemm_128x64_nn" and row["num_warps"].iloc[0] == 4.0


@pytest.mark.parametrize("op", ["bmm", "linear"])
def test_neusight_gemm_shape_and_tile_match_the_launch_grids(real_data_dir, op) -> None:  # noqa: ANN001
    """Real NeuSight launches: the recorded grid of every legacy cuBLAS SGEMM kernel is ceil(n / block_n) x
    ceil(m / block_m) x batch with the loader's m, n (= the file's M, K) and the kernel-name tile read along
    them; the file's N is the reduction (reading it as the output width fits few grids)."""
    raw = pd.read_csv(real_data_dir / f"neusight/dataset/train/collect/{op}/p2.1.0/Tesla T4.csv.gz")
    tiles = cublas_tile_from_kernel_name(raw["Kernel Name"])
    legacy = raw["Kernel Name"].str.contains(r"(?:maxwell|volta|turing|ampere)_sgemm_\d+x\d+", regex=True).to_numpy()
    assert legacy.sum() > 1000
    r, t = raw[legacy], tiles[legacy]
    gx, gy = r["Grid x"].to_numpy(), r["Grid y"].to_numpy()

    def fits(rows: np.ndarray, cols: np.ndarray) -> float:
        return float(
            np.mean((gx == np.ceil(cols / t["block_n"].to_numpy())) & (gy == np.ceil(rows / t["block_m"].to_numpy())))
        )

    assert fits(r["M"].to_numpy(), r["K"].to_numpy()) == 1.0
    assert fits(r["M"].to_numpy(), r["N"].to_numpy()) < 0.3  # N as the output width: the old reading
    if op == "bmm":
        assert (r["Grid z"] == r["B"]).mean() > 0.99  # the rest (B = 1) split the reduction along z
    rows, _ = load_profiles(
        real_data_dir, sources=["neusight"], families=["gemm_fp32"], gpus=["T4"], report=True, cache=False
    )
    got = rows[rows["op"] == op]
    key = ["batch_size", "m", "n", "k"]
    want = raw[["B", "M", "K", "N"]].set_axis(key, axis=1)
    # the loaded rows (this file's and the test file's T4 rows) hold each of the file's shapes as (B, M, K, N)
    loaded = set(map(tuple, got[key].to_numpy(dtype=float)))
    assert set(map(tuple, want.to_numpy(dtype=float))) <= loaded
    # grid x * y is one CTA per output tile on every legacy launch (above), so grid z / B is the reduction's split:
    # the loaded split_k is it (the linear file's T4 launches split about half the time, by 2 to 162)
    split = r["Grid z"].to_numpy(dtype=float) / r["B"].to_numpy(dtype=float)
    share = float(np.mean(split > 1))
    assert share > 0.3 if op == "linear" else share < 0.01
    by_key = dict(zip(map(tuple, got[key].to_numpy(dtype=float)), got["split_k"].to_numpy(dtype=float), strict=True))
    shapes = map(tuple, r[["B", "M", "K", "N"]].to_numpy(dtype=float))
    assert np.array_equal(np.array([by_key[s] for s in shapes]), np.maximum(split, 1.0))


def test_gemm_fp32_tiles_mostly_recorded(new_rows) -> None:  # noqa: ANN001
    df, _ = new_rows
    g = df[df["family"] == "gemm_fp32"]
    has = np.isfinite(g["block_m"].to_numpy(dtype=float))
    assert has.mean() > 0.9  # gemv / split-K kernels encode no tile


def test_vidur_rmsnorm_and_activation(real_data_dir, session_cache) -> None:  # noqa: ANN001
    """Vidur's Kineto medians (ms -> us); silu_mul inter_size is the per-rank width n_expanded_embd / TP."""
    df = load_profiles(real_data_dir, sources=["vidur"], cache=False)
    assert set(df["family"].astype(str)) == {"rmsnorm", "silu_mul"}
    assert set(df["gpu"].astype(str)) == {"A100-SXM", "A40", "H100-SXM"}
    assert (df["timing"] == "kineto").all() and set(df["dtype"].astype(str)) == {"float16"}
    raw = pd.read_csv(real_data_dir / "vidur/data/profiling/compute/a40/meta-llama/Llama-2-7b-hf/mlp.csv.gz")
    r = raw[raw["num_tensor_parallel_workers"] == 2].iloc[0]
    row = df[
        (df["family"] == "silu_mul")
        & (df["gpu"] == "A40")
        & (df["num_tokens"] == r["num_tokens"])
        & (df["inter_size"] == r["n_expanded_embd"] / 2)
    ]
    assert len(row) == 1
    # other models with the same per-rank shape are median-aggregated with this one
    assert row["latency_us"].iloc[0] > 0 and row["n_raw_rows"].iloc[0] >= 1
