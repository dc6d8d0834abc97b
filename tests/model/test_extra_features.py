"""Family boosters that read extra launch columns (PipeweaveRegressor(family_extra_features=...)): FP32 GEMM's
operand layout (``b_transposed``). Real NeuSight rows (FP32 GEMM and softmax on V100 and T4)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError
from pipeweave.frontend import EXTRA_FEATURES, FEATURES
from pipeweave.model import FAMILY_EXTRA_FEATURES, PipeweaveRegressor, load_model, save_model

KW = {"n_estimators": 30, "n_jobs": 1}


@pytest.fixture(scope="module")
def fp32_rows(load_real_rows):
    """~600 real rows: NeuSight's FP32 GEMM (bmm and linear) and softmax on V100 and T4, featurized."""
    return load_real_rows(["gemm_fp32", "softmax_fp32"], ["V100-PCIe", "T4"], 150)


@pytest.fixture(scope="module")
def with_layout(fp32_rows):
    return PipeweaveRegressor(**KW).fit(fp32_rows)


@pytest.fixture(scope="module")
def without_layout(fp32_rows):
    return PipeweaveRegressor(**KW, family_extra_features={}).fit(fp32_rows)


def _split_features(booster) -> set[str]:
    trees = booster.trees_to_dataframe()
    return set(trees.loc[trees["Feature"] != "Leaf", "Feature"])


def test_the_recipe_gives_fp32_gemms_booster_its_operand_layout(fp32_rows, with_layout):
    assert FAMILY_EXTRA_FEATURES == {"gemm_fp32": ("b_transposed",)}
    assert set(EXTRA_FEATURES) >= {"b_transposed"} and not set(EXTRA_FEATURES) & set(FEATURES)
    assert {"bmm", "linear"} <= set(fp32_rows.loc[fp32_rows["family"] == "gemm_fp32", "op"].astype(str))
    assert with_layout.family_extra_features_ == {"gemm_fp32": ("b_transposed",)}
    gemm = with_layout.family_boosters_["gemm_fp32"]
    names = gemm.feature_names
    # inserted right after the analytical features, before the one-hots
    at = names.index("b_transposed")
    assert names[at - 1] in FEATURES and names[at + 1].startswith("family_")
    assert names[:at] + names[at + 1 :] == with_layout.feature_names_
    assert "b_transposed" in _split_features(gemm)  # the trees use it
    # softmax trains on the same rows (FAMILY_BOOSTER_ROWS) but not on the column: a booster of its own
    soft = with_layout.family_boosters_["softmax_fp32"]
    assert soft is not gemm and "b_transposed" not in soft.feature_names
    assert "b_transposed" not in with_layout.booster_.feature_names


def test_only_the_listed_familys_predictions_change(fp32_rows, with_layout, without_layout):
    soft = fp32_rows[fp32_rows["family"] == "softmax_fp32"]
    gemm = fp32_rows[fp32_rows["family"] == "gemm_fp32"]
    np.testing.assert_allclose(with_layout.predict(soft), without_layout.predict(soft), rtol=1e-6)
    assert not np.allclose(with_layout.predict(gemm), without_layout.predict(gemm))
    # the column is read at prediction: the same launches called as the other operator predict differently
    flipped = gemm.drop(columns="b_transposed").assign(op=np.where(gemm["op"].astype(str) == "linear", "bmm", "linear"))
    assert not np.allclose(with_layout.predict(flipped), with_layout.predict(gemm))


def test_raw_rows_and_featurized_rows_predict_the_same(fp32_rows, with_layout):
    from pipeweave.sources import PROFILE_COLUMNS

    gemm = fp32_rows[fp32_rows["family"] == "gemm_fp32"]
    raw = gemm[[c for c in PROFILE_COLUMNS if c in gemm.columns and c != "latency_us"]]
    assert "b_transposed" not in raw.columns  # the hot path computes it
    np.testing.assert_allclose(with_layout.predict(raw), with_layout.predict(gemm), rtol=1e-5)


def test_the_file_keeps_the_extra_columns(fp32_rows, with_layout, tmp_path, save_with_stamp):
    from pipeweave import SchemaMismatchError

    loaded = load_model(save_model(with_layout, tmp_path / "m.ubj"))
    assert loaded.family_extra_features_ == {"gemm_fp32": ("b_transposed",)}
    np.testing.assert_allclose(loaded.predict(fp32_rows), with_layout.predict(fp32_rows), rtol=1e-6)

    def older(stamp):  # a file written before the option: no field
        stamp.pop("family_extra_features")
        return stamp

    no_field = tmp_path / "older.ubj"
    save_with_stamp(PipeweaveRegressor(**KW, family_extra_features={}).fit(fp32_rows), no_field, older)
    assert load_model(no_field).family_extra_features_ == {}

    def damaged(stamp):
        stamp["family_extra_features"] = {"gemm_fp32": ["not_a_column"]}
        return stamp

    bad = tmp_path / "bad.ubj"
    save_with_stamp(with_layout, bad, damaged)
    with pytest.raises(SchemaMismatchError, match="family_extra_features.*not_a_column"):
        load_model(bad)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"gemm_fp32": "b_transposed"}, r"family_extra_features\['gemm_fp32'\] must be a tuple of feature names"),
        ({"gemm_fp32": ("b_transpose",)}, r"names unknown columns \['b_transpose'\]"),
        ({"gemmfp32": ("b_transposed",)}, r"family_extra_features names unknown families \['gemmfp32'\]"),
        (("gemm_fp32",), r"family_extra_features must map family names"),
    ],
)
def test_bad_family_extra_features_are_a_clear_error(fp32_rows, bad, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**KW, family_extra_features=bad).fit(fp32_rows)


def test_a_one_family_fit_gives_the_shared_booster_that_familys_columns(fp32_rows, tmp_path):
    gemm = fp32_rows[fp32_rows["family"] == "gemm_fp32"]
    alone = PipeweaveRegressor(**KW).fit(gemm)
    assert not alone.family_boosters_ and alone.shared_extra_features_ == ("b_transposed",)
    assert "b_transposed" in alone.booster_.feature_names
    np.testing.assert_allclose(load_model(save_model(alone, tmp_path / "a.ubj")).predict(gemm), alone.predict(gemm))
    # several families: none unless set (the evaluation harness sets the evaluated family's)
    pooled = PipeweaveRegressor(**KW, per_family=False).fit(fp32_rows)
    assert pooled.shared_extra_features_ == () and "b_transposed" not in pooled.booster_.feature_names
    told = PipeweaveRegressor(**KW, per_family=False, shared_extra_features=("b_transposed",)).fit(fp32_rows)
    assert "b_transposed" in told.booster_.feature_names
    soft = fp32_rows[fp32_rows["family"] == "softmax_fp32"]
    assert np.isfinite(told.predict(soft)).all()  # NaN on other families' rows: the default branch


def test_bad_shared_extra_features_are_a_clear_error(fp32_rows):
    with pytest.raises(DataError, match="shared_extra_features must be None or a tuple of names"):
        PipeweaveRegressor(**KW, shared_extra_features="b_transposed").fit(fp32_rows)
