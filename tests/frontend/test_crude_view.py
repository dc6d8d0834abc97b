"""The crude view of a launch (pipeweave.frontend.crude_features): hand-made rows, formulas checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave.frontend import CRUDE_FEATURES, crude_features, crude_matrix, crude_matrix_names

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
