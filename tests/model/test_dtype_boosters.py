"""Boosters of one (family, dtype) beside the family's (PipeweaveRegressor(dtype_boosters=...)), on real rows."""

from __future__ import annotations

import numpy as np
import pytest

import pipeweave as pw
from pipeweave import DataError
from pipeweave.model import DTYPE_BOOSTERS, PipeweaveRegressor, load_model, save_model


@pytest.fixture(scope="module")
def gemm_rows():
    """A few hundred real H100 / A100 GEMM rows of two dtypes (bf16 and fp8)."""
    rows = pw.load_profiles(families="gemm", gpus=["H100-SXM", "A100-SXM"], dtypes=["bfloat16", "fp8"])
    return rows.groupby(["gpu", "dtype"], observed=True).head(150).reset_index(drop=True)


_KW = dict(n_estimators=5, companion={}, seen_gpu={}, roofline_blend={}, sibling_companion={}, n_jobs=1)


def test_recipe_ships_the_bf16_boosters_and_keys_are_validated():
    assert PipeweaveRegressor().dtype_booster_keys() == (("gemm", "bfloat16"), ("fused_moe", "bfloat16"))
    assert PipeweaveRegressor(dtype_boosters=()).dtype_booster_keys() == ()
    assert (
        PipeweaveRegressor(dtype_boosters=DTYPE_BOOSTERS).dtype_booster_keys()
        == PipeweaveRegressor().dtype_booster_keys()
    )
    assert PipeweaveRegressor(dtype_boosters=("gemm:bfloat16",)).dtype_booster_keys() == (("gemm", "bfloat16"),)
    for bad, match in ((("gemm",), "family:dtype"), (("gemm:bf17",), "family:dtype"), (("gemmm:fp8",), "unknown")):
        with pytest.raises(DataError, match=match) as err:
            PipeweaveRegressor(dtype_boosters=bad).dtype_booster_keys()
        assert err.value.hint


def test_a_dtype_booster_predicts_its_rows_and_only_them(gemm_rows, tmp_path):
    base = PipeweaveRegressor(dtype_boosters=(), **_KW).fit(gemm_rows)
    split = PipeweaveRegressor(dtype_boosters=("gemm:bfloat16",), **_KW).fit(gemm_rows)
    assert "gemm:bfloat16" in split.family_boosters_ and "gemm:bfloat16" not in base.family_boosters_
    bf16 = (gemm_rows["dtype"].astype(str) == "bfloat16").to_numpy()
    a, b = base.predict(gemm_rows), split.predict(gemm_rows)
    np.testing.assert_allclose(a[~bf16], b[~bf16], rtol=1e-6)  # fp8 rows: the family's booster, unchanged
    assert not np.allclose(a[bf16], b[bf16], rtol=1e-6)  # bf16 rows: their own booster
    # the bf16 booster is the one a model trained on the bf16 rows alone would have as its only booster
    own = PipeweaveRegressor(**_KW).fit(gemm_rows[bf16].reset_index(drop=True))
    np.testing.assert_allclose(b[bf16], own.predict(gemm_rows[bf16].reset_index(drop=True)), rtol=1e-4)
    path = save_model(split, tmp_path / "m.ubj")
    np.testing.assert_allclose(load_model(path).predict(gemm_rows), b, rtol=1e-6)


def test_no_dtype_booster_where_the_family_has_one_dtype(gemm_rows):
    bf16 = gemm_rows[gemm_rows["dtype"].astype(str) == "bfloat16"].reset_index(drop=True)
    one = PipeweaveRegressor(dtype_boosters=("gemm:bfloat16",), **_KW).fit(bf16)
    plain = PipeweaveRegressor(**_KW).fit(bf16)
    assert "gemm:bfloat16" not in (one.family_boosters_ or {})
    np.testing.assert_allclose(one.predict(bf16), plain.predict(bf16), rtol=1e-9)  # trained exactly as before
