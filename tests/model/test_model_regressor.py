"""PipeweaveRegressor and its model files, on a few thousand real rows (tiny models for speed)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import clone

from pipeweave import DataError, SchemaMismatchError
from pipeweave.model import PipeweaveRegressor, load_model, read_stamp, save_model


@pytest.fixture(scope="module")
def fitted(small_frame):
    return PipeweaveRegressor(n_estimators=30, n_jobs=1).fit(small_frame)


def test_sklearn_contract(fitted):
    params = fitted.get_params()
    assert params["n_estimators"] == 30
    fresh = clone(fitted)
    assert not hasattr(fresh, "booster_")
    assert fitted.feature_names_ and fitted.families_ == ["gemm", "moe_w13"]


def test_predictions_positive_and_never_below_lower_bound(fitted, small_frame):
    pred = fitted.predict(small_frame)
    assert np.isfinite(pred).all()
    assert (pred >= small_frame["t_lower_us"].to_numpy() - 1e-12).all()


def test_in_place_prediction_matches_dmatrix_prediction(fitted, small_frame):
    import xgboost as xgb

    from pipeweave.model._features import design_matrix

    X = design_matrix(small_frame, fitted.feature_names_)
    via_dmatrix = fitted.booster_.predict(xgb.DMatrix(X, feature_names=fitted.feature_names_))
    np.testing.assert_allclose(fitted.predict_log_ratio(small_frame), via_dmatrix, rtol=1e-6, atol=1e-6)


def test_training_beats_the_analytical_envelope_in_sample(fitted, small_frame):
    meas = small_frame["latency_us"].to_numpy()
    err_model = np.mean(np.abs(fitted.predict(small_frame) / meas - 1))
    err_env = np.mean(np.abs(small_frame["t_env_us"].to_numpy() / meas - 1))
    assert err_model < err_env


def test_not_fitted_error():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        PipeweaveRegressor().predict_log_ratio(None)  # type: ignore[arg-type]


def test_bad_latency_is_rejected(small_frame):
    bad = small_frame.head(50).copy()
    bad.loc[bad.index[3], "latency_us"] = np.nan
    bad.loc[bad.index[7], "latency_us"] = -1.0
    with pytest.raises(DataError, match="2 training rows"):
        PipeweaveRegressor(n_estimators=2).fit(bad)


def test_quantile_must_be_in_open_unit_interval(small_frame):
    with pytest.raises(DataError, match="quantile"):
        PipeweaveRegressor(n_estimators=2, quantile=1.5).fit(small_frame.head(50))


def test_save_load_roundtrip_with_stamp(fitted, small_frame, tmp_path):
    path = save_model(fitted, tmp_path / "m.ubj", data_fingerprint="abc123")
    stamp = read_stamp(path)
    assert stamp["schema_version"].startswith("pipeweave-model/")
    assert stamp["features"] == fitted.feature_names_
    assert stamp["data_fingerprint"] == "abc123"
    assert set(stamp["versions"]) >= {"xgboost", "numpy", "pandas", "pipeweave"}
    loaded = load_model(path)
    np.testing.assert_allclose(loaded.predict(small_frame), fitted.predict(small_frame), rtol=1e-6)


def test_load_refuses_other_schema_with_listed_diff(fitted, tmp_path):
    path = save_model(fitted, tmp_path / "m.json")
    booster_json = json.loads(path.read_text())
    attrs = booster_json["learner"]["attributes"]
    stamp = json.loads(attrs["pipeweave_stamp"])
    stamp["schema_version"] = "pipeweave-model/0"
    stamp["features"] = stamp["features"][:-1] + ["old_feature"]
    attrs["pipeweave_stamp"] = json.dumps(stamp)
    path.write_text(json.dumps(booster_json))
    with pytest.raises(SchemaMismatchError) as exc:
        load_model(path)
    msg = str(exc.value)
    assert "schema_version" in msg and "old_feature" in msg and "pipeweave train" in msg


def test_load_rejects_non_model_file(tmp_path):
    p = tmp_path / "junk.ubj"
    p.write_bytes(b"not a model")
    with pytest.raises(DataError, match="not an XGBoost model"):
        load_model(p)
    with pytest.raises(DataError, match="not found"):
        load_model(tmp_path / "missing.ubj")


def test_save_requires_known_suffix(fitted, tmp_path):
    with pytest.raises(DataError, match=r"\.ubj or \.json"):
        save_model(fitted, tmp_path / "m.pkl")
