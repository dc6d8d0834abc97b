"""Analytical front-end: formulas on hand-computed cases and physical invariants.

Inputs here are tiny hand-made launch rows (not measurements) used to check formulas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError, UnknownFamilyError
from pipeweave.frontend import FEATURES, PIPES, featurize, l2_resident_share, routing_stats, warm_l2_envelope_us
from pipeweave.frontend._kernels import _keys_per_query


def _gemm(m, n, k, gpu="H100-SXM", dtype="bfloat16", **tile):
    row = {"family": "gemm", "gpu": gpu, "dtype": dtype, "m": m, "n": n, "k": k, **tile}
    return pd.DataFrame([row])


def test_gemm_useful_flops_is_2mnk():
    f = featurize(_gemm(1000, 3000, 5000)).iloc[0]
    assert f["useful_flop"] == 2 * 1000 * 3000 * 5000


def test_gemm_recorded_tile_grid_and_waves():
    # 128x128 tiles on a 4096x4096 output = 32*32 = 1024 CTAs; H100 has 132 SMs
    f = featurize(
        _gemm(4096, 4096, 4096, block_m=128, block_n=128, block_k=64, group_m=8, num_warps=8, num_stages=3)
    ).iloc[0]
    assert f["tile_origin"] == "recorded"
    assert f["grid_ctas"] == 1024
    assert f["iters"] == 4096 / 64
    slots = 132 * f["ctas_per_sm"]
    assert f["waves_ceil"] == np.ceil(1024 / slots)
    assert f["wave_efficiency"] == pytest.approx(1024 / (np.ceil(1024 / slots) * slots))
    # executed tensor work equals the useful work when the shape is a multiple of the tile
    assert f["work_tensor"] == f["useful_flop"]


def test_fp8_scaling_tells_block_scaled_fp8_from_per_tensor_fp8():
    # the same shape in three dtypes: the two fp8 GEMMs have the same envelope, so without this
    # feature they would be one point to the learner (block-scaled runs a quantisation kernel more)
    rows = pd.concat([_gemm(64, 4096, 4096, dtype=d) for d in ("bfloat16", "fp8", "fp8_block")], ignore_index=True)
    f = featurize(rows)
    assert f["fp8_scaling"].tolist() == [0.0, 1.0, 2.0]
    assert f["is_fp8"].tolist() == [0.0, 1.0, 1.0]
    assert f["t_env_us"].iloc[1] == f["t_env_us"].iloc[2]
    assert "fp8_scaling" in FEATURES and "is_fp8" not in FEATURES


def test_gemm_padding_counts_executed_work():
    f = featurize(_gemm(100, 128, 64, block_m=128, block_n=128, block_k=64)).iloc[0]
    assert f["work_tensor"] == 2 * 128 * 128 * 64
    assert f["pad_overhead"] == pytest.approx(128 / 100)


def test_moe_padded_rows_balanced_hand_case():
    # 10 tokens x top-2 = 20 routed rows over 4 experts -> 5 each; BLOCK_M 16 pads each to 16
    rs = routing_stats(np.array([10.0]), np.array([2.0]), np.array([4.0]), np.array([0.0]), np.array([16.0]))
    assert rs.loc[0, "routed_rows"] == 20
    assert rs.loc[0, "padded_rows"] == 64
    assert rs.loc[0, "active_experts"] == 4
    # 3 tokens x top-1 over 8 experts: only 3 experts get a token
    rs = routing_stats(np.array([3.0]), np.array([1.0]), np.array([8.0]), np.array([0.0]), np.array([16.0]))
    assert rs.loc[0, "active_experts"] == 3
    assert rs.loc[0, "padded_rows"] == 48


def test_moe_power_law_concentrates_tokens():
    bal = routing_stats(np.array([64.0]), np.array([2.0]), np.array([32.0]), np.array([0.0]), np.array([16.0]))
    skew = routing_stats(np.array([64.0]), np.array([2.0]), np.array([32.0]), np.array([1.2]), np.array([16.0]))
    assert skew.loc[0, "max_expert_rows"] > bal.loc[0, "max_expert_rows"]
    assert skew.loc[0, "max_expert_rows"] <= 64  # a token picks an expert at most once
    assert skew.loc[0, "routed_rows"] == pytest.approx(128, abs=2)


@pytest.mark.parametrize("alpha", [5.0, 100.0, 1000.0])
def test_moe_extreme_skew_keeps_every_routed_row(alpha):
    # 4096 tokens x top-8 over 64 experts: however skewed, T*k = 32768 rows are routed; at the extreme the 8
    # most popular experts take every token each (a token picks an expert at most once)
    rs = routing_stats(np.array([4096.0]), np.array([8.0]), np.array([64.0]), np.array([alpha]), np.array([64.0]))
    assert rs.loc[0, "routed_rows"] == pytest.approx(32768, abs=2)
    assert rs.loc[0, "max_expert_rows"] == 4096 and rs.loc[0, "active_experts"] >= 8


def test_attention_keys_per_query_causal_and_window():
    q = np.array([4.0, 4.0, 4.0])
    kv = np.array([4.0, 4.0, 10.0])
    win = np.array([np.inf, 2.0, np.inf])
    # causal 4x4: (1+2+3+4)/4; window 2: (1+2+2+2)/4; prefix of 6: (7+8+9+10)/4
    assert _keys_per_query(q, kv, win, True).tolist() == [2.5, 1.75, 8.5]


def test_flash_attention_packs_gqa_heads_into_the_query_tile():
    # hand-made prefill launch: 32 query tokens, 96 query heads over 4 KV heads (group 24), batch 8
    rows = pd.DataFrame(
        {
            "family": "attention_context",
            "gpu": ["H100-SXM", "H100-SXM", "A100-SXM"],
            "dtype": "bfloat16",
            "batch_size": 8,
            "isl": 32,
            "step": 0,
            "num_heads": 96,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "backend": ["flash_attention", "trtllm_mha", "flash_attention"],
        }
    )
    f = featurize(rows)
    # FlashAttention: 32 x 24 = 768 packed rows per (batch, KV head) -> 6 tiles of 128 (sm_90 and
    # sm_80 alike); other backends: one mostly-padded 128-row tile per (batch, head)
    assert f["grid_ctas"].tolist() == [8 * 4 * 6, 8 * 96, 8 * 4 * 6]
    assert f["useful_flop"].nunique() == 1  # the math is the same; only the tiling changes
    assert f.loc[0, "work_tensor"] < f.loc[1, "work_tensor"]  # less padding


def _moe_rows():
    return pd.DataFrame(
        {
            "family": ["moe_w13", "fused_moe"],
            "gpu": ["A100-SXM", "B200"],
            "dtype": ["bfloat16", "bfloat16"],
            "num_tokens": [256, 256],
            "num_experts": [64, 256],
            "topk": [8, 8],
            "hidden_size": [4096, 7168],
            "inter_size": [1536, 2048],
            "moe_tp_size": [1, 1],
            "moe_ep_size": [1, 8],
            "distribution": ["balanced", "power_law_1.2"],
        }
    )


def _attn_rows():
    return pd.DataFrame(
        {
            "family": ["attention_context", "attention_generation"],
            "gpu": ["L40S", "H200"],
            "dtype": ["bfloat16", "bfloat16"],
            "kv_cache_dtype": ["bfloat16", "fp8"],
            "batch_size": [2, 64],
            "isl": [2048, 1],
            "num_heads": [32, 32],
            "num_key_value_heads": [8, 8],
            "head_dim": [128, 128],
            "step": [0, 1024],
        }
    )


@pytest.mark.parametrize(
    "rows",
    [_gemm(8192, 8192, 8192, gpu="B300"), _gemm(1, 4096, 4096, gpu="A40"), _moe_rows(), _attn_rows()],
    ids=["gemm", "gemv", "moe", "attention"],
)
def test_physical_invariants(rows):
    f = featurize(rows, moe_configs="default")
    for p in PIPES:
        # the busiest SM cannot finish its share faster than the whole chip finishes all the work
        assert (f[f"t_sm_{p}_us"] >= f[f"t_chip_{p}_us"] * (1 - 1e-9) - 1e-12).all() or p in ("l2", "dram")
        assert (f[f"t_chip_{p}_us"] >= 0).all()
    assert (f["t_env_us"] >= f["t_lower_us"]).all()
    assert (f["t_roofline_us"] <= f["t_env_us"]).all()
    assert ((f["t_env_warm_us"] > 0) & (f["t_env_warm_us"] <= f["t_env_us"] * (1 + 1e-12))).all()
    optional = ["l2_hit_intra_wave", "l2_operand_fit"]  # defined for tiled matmuls only (NaN otherwise)
    # log2 shape features: finite on the MoE and prefill-attention rows (all five of their shape
    # columns are given), NaN on GEMM and decode rows (they have none of the columns behind them)
    shape = [f"log2_shape_{i}" for i in range(1, 6)]
    own = rows["family"].isin(["moe_w13", "fused_moe", "attention_context"]).to_numpy()
    assert f.loc[own, shape].notna().all().all() and f.loc[~own, shape].isna().all().all()
    assert np.isfinite(f[[c for c in FEATURES if c not in optional + shape]].to_numpy(dtype=float)).all()
    vals = f[optional].to_numpy(dtype=float)
    assert (np.isnan(vals) | ((vals >= 0) & (vals <= 1))).all()
    assert set(f["bound_pipe"]) <= set(PIPES) | {"latency"}


def test_fused_moe_tp_ep_shard_the_work():
    base = _moe_rows().iloc[[1]].assign(distribution="balanced")
    f1 = featurize(base.assign(moe_ep_size=1), moe_configs="default").iloc[0]
    f8 = featurize(base.assign(moe_ep_size=8), moe_configs="default").iloc[0]
    assert f8["useful_flop"] == pytest.approx(f1["useful_flop"] / 8, rel=0.02)


def test_featurize_preserves_index_and_order():
    df = pd.concat([_attn_rows(), _gemm(64, 64, 64), _moe_rows()], ignore_index=True)
    df.index = [10, 3, 7, 99, 1]
    f = featurize(df, moe_configs="default")
    assert list(f.index) == [10, 3, 7, 99, 1]
    assert f.loc[7, "useful_flop"] == 2 * 64 * 64 * 64


def test_unknown_family_lists_valid_names():
    with pytest.raises(UnknownFamilyError, match="valid families"):
        featurize(pd.DataFrame([{"family": "conv2d", "gpu": "H100", "dtype": "bfloat16"}]))


def test_dtype_the_gpu_lacks_is_a_clear_error():
    with pytest.raises(DataError, match="A100.*fp8"):
        featurize(_gemm(128, 128, 128, gpu="A100", dtype="fp8"))


def test_missing_shape_column_is_a_clear_error():
    with pytest.raises(DataError, match="'k'"):
        featurize(pd.DataFrame([{"family": "gemm", "gpu": "H100", "dtype": "bfloat16", "m": 1, "n": 2}]))


def test_nonpositive_shape_is_a_clear_error():
    with pytest.raises(DataError, match="non-positive"):
        featurize(_gemm(0, 128, 128))


def test_deep_k_reduces_l2_reuse():
    shallow = featurize(_gemm(8192, 8192, 1024, gpu="H200")).iloc[0]
    deep = featurize(_gemm(8192, 8192, 28672, gpu="H200")).iloc[0]
    assert deep["l2_hit_intra_wave"] < shallow["l2_hit_intra_wave"]


def test_sglang_triton_decode_tiles():
    from pipeweave.frontend._tileplan import sglang_triton_decode_tiles

    t = sglang_triton_decode_tiles(np.array([1.0, 8.0]))
    assert t["block_n"].tolist() == [64, 32]  # one head per CTA without GQA, else the grouped kernel
    assert t["num_warps"].tolist() == [4, 4] and t["num_stages"].tolist() == [2, 2]


def test_sglang_triton_decode_split_matches_get_num_kv_splits():
    # hand-made launches on a 188-SM GPU; expected values computed by hand from SGLang 0.5.10's
    # get_num_kv_splits_triton (equal sequence lengths, max 8 splits)
    from pipeweave.frontend._kernels import sglang_triton_decode_split

    per_cta, split = sglang_triton_decode_split(
        batch=np.array([1, 64, 1, 1]),
        heads=np.array([32, 32, 4, 96]),
        kv_heads=np.array([8, 8, 4, 4]),
        kv_len=np.array([32768, 32768, 100, 4096]),
        sm_count=188,
    )
    # 1: group 4 -> 4 heads per CTA, grid 8, ceil(188 x 9 / 8) capped at 8 splits
    # 2: grid 512 -> ceil(1692 / 512) = 4 splits
    # 3: MHA -> 1 head per CTA; 8 splits of ceil(13 / 32) x 32 = 32 keys cover 100 keys in 4
    # 4: group 24 -> 16 heads per CTA (6 CTAs per batch entry), ceil(188 x 6 / 6) capped at 8
    assert per_cta.tolist() == [4, 4, 1, 16]
    assert split.tolist() == [8, 4, 4, 8]


def test_triton_decode_rows_launch_sglangs_grid_and_others_do_not_change():
    rows = pd.DataFrame(
        {
            "family": "attention_generation",
            "gpu": "RTX-PRO-6000-S",
            "dtype": "bfloat16",
            "batch_size": 1,
            "isl": 1,
            "step": 32768,
            "num_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "backend": ["triton", "flash_attention"],
        }
    )
    f = featurize(rows)
    assert f["tile_origin"].tolist() == ["sglang_triton_config", "flash_attention_heuristic"]
    prefill = featurize(rows.assign(family="attention_context", isl=1024, step=0))
    assert (prefill["tile_origin"] == "flash_attention_heuristic").all()  # prefill: FA tiles for every backend
    sms = 188  # RTX PRO 6000 Blackwell Server Edition
    assert f.loc[0, "grid_ctas"] == 8 * 8  # 8 KV heads x 8 splits
    assert f.loc[1, "grid_ctas"] == 8 * np.floor(2 * sms / 8)  # split-KV filling two waves
    assert f.loc[0, "block_n"] == 32 and f.loc[1, "block_n"] == 64


def test_warm_envelope_serves_the_share_of_dram_time_that_fits_in_l2():
    # hand-made decode rows on the H200 (60 MiB L2): a KV cache of 32 MiB fits in L2, one of 2 GiB does
    # not (h = L2 / compulsory bytes = 3%); both are DRAM-bound
    rows = pd.DataFrame(
        {
            "family": "attention_generation",
            "gpu": "H200",
            "dtype": "bfloat16",
            "batch_size": [8, 64],
            "isl": 1,
            "num_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "step": [1024, 16384],
        }
    )
    f = featurize(rows)
    other = pd.Series(
        np.maximum.reduce([f[f"t_sm_{p}_us"] for p in PIPES if p != "dram"] + [f["t_latency_us"], f["t_chip_l2_us"]]),
        index=f.index,
    )
    dram = np.maximum(f["t_sm_dram_us"], f["t_chip_dram_us"])
    h = np.minimum(f["gpu_l2_mib"] * 2**20 / f["dram_compulsory_bytes"], 1.0)
    assert h.iloc[0] == 1.0 and h.iloc[1] < 0.05
    expect = f["t_env_us"] - np.maximum(other, dram) + np.maximum(other, (1 - h) * dram)
    np.testing.assert_allclose(f["t_env_warm_us"], expect, rtol=1e-12)
    np.testing.assert_allclose(l2_resident_share(f), h, rtol=1e-12)  # the public pieces, on a featurized frame
    np.testing.assert_allclose(warm_l2_envelope_us(f), expect, rtol=1e-12)
    # the cache in L2: no DRAM time left, the other pipes bind; the large one shrinks by h of its DRAM time
    assert (dram > other).all()
    assert f["t_env_warm_us"].iloc[0] == pytest.approx(f["t_env_us"].iloc[0] - dram.iloc[0] + other.iloc[0])
    ratio = (f["t_env_us"] - f["t_env_warm_us"]).iloc[1] / dram.iloc[1]
    assert ratio == pytest.approx(h.iloc[1], rel=1e-9)
