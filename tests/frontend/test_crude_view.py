"""The crude view of a launch (pipeweave.frontend.crude_features): hand-made rows, formulas checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave.frontend import CRUDE_FEATURES, CRUDE_ROW_CHUNK, crude_features, crude_matrix, crude_matrix_names

SPEC = {"gpu_sm_count": 80.0, "peak_tensor_flops_per_us": 14e6, "gpu_dram_bw_gbps": 900.0, "gpu_l2_mib": 6.0}


def _row(**kw) -> pd.DataFrame:
    return pd.DataFrame([{**SPEC, **kw}])


def test_fp32_gemm_is_a_batch_of_products_with_four_byte_operands():
    """Hand-made: 4 x (256 x 256 x 256) FP32 on an 80-SM, 14 TFLOPS, 900 GB/s GPU."""
    X, t_wq = crude_features(_row(family="gemm_fp32", dtype="float32", m=256.0, n=256.0, k=256.0, batch_size=4.0))
    f = dict(zip(CRUDE_FEATURES, X[0]))
    flops = 2 * 4 * 256**3
    tiles = 4 * 2 * 2  # batch x (256/128) x (256/128)
    wave_eff = (tiles / 80) / np.ceil(tiles / 80)
    t_c = flops / 14e6 / wave_eff  # us, padding efficiency 1
    t_m = 4 * 4 * 3 * 256 * 256 / 900e3  # us: A, B and C of each product, 4 bytes each
    assert t_wq[0] == pytest.approx(max(t_c, t_m))
    assert f["log2_groups"] == pytest.approx(2.0) and f["wave_efficiency"] == pytest.approx(wave_eff)
    assert f["is_fp8"] == 0.0


def test_a_missing_batch_is_one_product():
    X1, t1 = crude_features(_row(family="gemm_fp32", dtype="float32", m=512.0, n=512.0, k=64.0))
    X2, t2 = crude_features(_row(family="gemm_fp32", dtype="float32", m=512.0, n=512.0, k=64.0, batch_size=1.0))
    np.testing.assert_allclose(X1, X2)
    np.testing.assert_allclose(t1, t2)


def test_matrix_names_match_the_matrix():
    Xc, _ = crude_matrix(_row(family="gemm", dtype="bfloat16", m=128.0, n=4096.0, k=4096.0))
    assert Xc.shape == (1, len(crude_matrix_names()))


def test_row_kernels_are_one_cta_per_row_at_the_dram_roofline():
    """Hand-made: RMSNorm, 1,000 tokens x 4,096 wide, 16 MB of compulsory traffic, on the GPU above."""
    row = _row(family="rmsnorm", dtype="bfloat16", num_tokens=1000.0, hidden_size=4096.0, dram_compulsory_bytes=16e6)
    X, t_wq = crude_features(row)
    f = dict(zip(CRUDE_FEATURES, X[0]))
    assert t_wq[0] == pytest.approx(16e6 / 900e3)  # us: bytes / DRAM bandwidth, no FLOP term at one per element
    assert f["log2_waves"] == pytest.approx(np.log2(1000 / 80))  # one CTA per token
    assert f["wave_efficiency"] == pytest.approx((1000 / 80) / 13)
    assert f["pad_efficiency"] == 1.0
    assert f["log2_working_set_over_l2"] == pytest.approx(np.log2(16e6 / (6 * 2**20)))


def test_silu_mul_width_is_inter_size_and_elementwise_is_chunked():
    s = _row(family="silu_mul", dtype="bfloat16", num_tokens=64.0, inter_size=8192.0, dram_compulsory_bytes=3e6)
    e = _row(family="elementwise_fp32", dtype="float32", num_tokens=64.0, hidden_size=8192.0, dram_compulsory_bytes=4e6)
    fs = dict(zip(CRUDE_FEATURES, crude_features(s)[0][0]))
    fe = dict(zip(CRUDE_FEATURES, crude_features(e)[0][0]))
    assert fs["log2_n_tiles"] == pytest.approx(np.log2(8192 / 128))
    assert fs["log2_waves"] == pytest.approx(np.log2(64 / 80))
    assert fe["log2_waves"] == pytest.approx(np.log2(np.ceil(64 * 8192 / CRUDE_ROW_CHUNK) / 80))


def test_row_view_leaves_gemm_rows_alone():
    """Adding row-kernel rows to a frame does not change the GEMM rows' crude features."""
    g = _row(family="gemm", dtype="bfloat16", m=128.0, n=4096.0, k=4096.0)
    r = _row(family="softmax_fp32", dtype="float32", num_tokens=8.0, hidden_size=1024.0, dram_compulsory_bytes=65536.0)
    X1, t1 = crude_features(g)
    X2, t2 = crude_features(pd.concat([g, r], ignore_index=True))
    np.testing.assert_allclose(X1[0], X2[0])
    assert t1[0] == pytest.approx(t2[0])


def test_flashinfer_batches_are_averaged_over_their_requests():
    """Hand-made: two requests (1 and 3 queries, 10 and 30 keys), 8 q heads over 2 KV heads, d 128."""
    row = _row(
        family="attention_flashinfer",
        dtype="bfloat16",
        backend="fa2_ragged",
        q_lengths="1;3",
        kv_lengths="10;30",
        num_heads=8.0,
        num_key_value_heads=2.0,
        head_dim=128.0,
        useful_flop=7e9,
        dram_compulsory_bytes=9e5,
    )
    X, t_wq = crude_features(row)
    f = dict(zip(CRUDE_FEATURES, X[0]))
    assert f["log2_m_tiles"] == pytest.approx(np.log2(2 * 4 / 128))  # mean q length 2 x GQA group 4
    assert f["log2_n_tiles"] == pytest.approx(np.log2(20 / 128))  # mean KV length
    assert f["log2_groups"] == pytest.approx(np.log2(2 * 2))  # requests x KV heads
    tiles = 4  # one 128 x 128 tile per group
    wave_eff = (tiles / 80) / 1.0
    pad = (8 * 20) / (128 * 128)
    assert t_wq[0] == pytest.approx(max(7e9 / 14e6 / pad / wave_eff, 9e5 / 900e3))
