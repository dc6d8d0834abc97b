"""Front-end pieces added for issue 17 (accuracy on unseen GPUs); inputs are tiny hand-made rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave.frontend import featurize
from pipeweave.frontend._families import _cublas_pair_mma
from pipeweave.frontend._featurize import spec_arrays
from pipeweave.frontend._kernels import tiled_matmul


def _gemm(gpu: str, m: int = 8192, n: int = 8192, k: int = 8192) -> pd.DataFrame:
    return pd.DataFrame({"family": ["gemm"], "gpu": [gpu], "dtype": ["bfloat16"], "m": [m], "n": [n], "k": [k]})


def test_cta_pair_only_on_datacenter_blackwell():
    arch = np.array([80.0, 89.0, 90.0, 100.0, 103.0, 120.0])
    assert _cublas_pair_mma(np.full(6, 8192.0), np.full(6, 128.0), arch).tolist() == [1, 1, 1, 2, 2, 1]
    # a single tile row has no partner CTA
    assert _cublas_pair_mma(np.array([64.0]), np.array([128.0]), np.array([100.0])).tolist() == [1]


def test_cta_pair_halves_b_in_shared_memory_not_a():
    spec = spec_arrays(pd.Series(["B200"]))
    kw = dict(
        rows=np.array([8192.0]),
        n=np.array([8192.0]),
        k=np.array([8192.0]),
        bm=128.0,
        bn=256.0,
        bk=64.0,
        group_m=8.0,
        warps=8.0,
        stages=4.0,
        a_bytes=2.0,
        b_bytes=2.0,
        out_bytes=2.0,
        tensor_rate=spec["tensor_bf16_flop_per_clk_per_sm"],
        spec=spec,
        multicast=2.0,
    )
    one, pair = tiled_matmul("g", **kw), tiled_matmul("g", pair_mma=2.0, **kw)
    a_bytes, b_bytes = 128 * 2 * 64, 256 * 2 * 64
    assert one.smem_bytes_it[0] == 2 * (a_bytes + b_bytes)
    assert pair.smem_bytes_it[0] == 2 * (a_bytes + b_bytes / 2)
    assert pair.smem_cta_bytes[0] == 4 * (a_bytes + b_bytes / 2)
    assert pair.load_bytes_it[0] == one.load_bytes_it[0]  # L2 traffic: the multicast factor only


def test_large_blackwell_gemm_is_tensor_bound_like_hopper():
    f = featurize(pd.concat([_gemm("B200"), _gemm("H100-SXM")], ignore_index=True))
    assert f["bound_pipe"].astype(str).tolist() == ["tensor", "tensor"]


def test_moe_shape_features():
    rows = pd.DataFrame(
        {
            "family": "fused_moe",
            "gpu": "H100-SXM",
            "dtype": "bfloat16",
            "num_tokens": [4096, 1],
            "hidden_size": 4096,
            "inter_size": 1536,
            "topk": 8,
            "num_experts": 128,
            "moe_tp_size": 1,
            "moe_ep_size": [4, 1],
            "distribution": "balanced",
        }
    )
    f = featurize(rows, moe_configs="default")
    # slots 1..5 = tokens, hidden, intermediate, experts, top-k
    assert f["log2_shape_1"].tolist() == [12.0, 0.0] and np.allclose(f["log2_shape_5"], 3.0)
    assert np.allclose(f["log2_shape_4"], 7.0)
    assert featurize(_gemm("A100-SXM"))["log2_shape_1"].isna().all()  # GEMM has none of them: NaN


def test_prefill_attention_shape_features_and_their_symmetry_breaking():
    # hand-made launches with the same batch x heads product: the envelope cannot tell them apart,
    # the shape slots (batch, isl, heads, KV heads, head_dim) can
    rows = pd.DataFrame(
        {
            "family": "attention_context",
            "gpu": "A100-SXM",
            "dtype": "bfloat16",
            "batch_size": [32, 256],
            "isl": 512,
            "num_heads": [96, 12],
            "num_key_value_heads": [8, 1],
            "head_dim": 128,
            "step": 0,
            "window_size": 0,
        }
    )
    f = featurize(rows)
    assert f["t_env_us"].iloc[0] == pytest.approx(f["t_env_us"].iloc[1])
    assert f["log2_shape_1"].tolist() == [5.0, 8.0]
    assert f["log2_shape_2"].tolist() == [9.0, 9.0]
    assert f["log2_shape_3"].tolist() == pytest.approx([np.log2(96), np.log2(12)])
    assert f["log2_shape_4"].tolist() == [3.0, 0.0]
    assert f["log2_shape_5"].tolist() == [7.0, 7.0]
