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
    return PipeweaveRegressor(n_estimators=30, n_jobs=1, per_family=False).fit(small_frame)  # one booster


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
    with pytest.raises(DataError, match=r"2 of 50 training rows of PipeweaveRegressor .*not a finite number > 0"):
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
    del stamp["file_integrity"]  # as an older file (no integrity record); an edited sealed file fails its digest
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


@pytest.mark.parametrize("reference", ["roofline", "none"])
def test_alternative_references_fit_and_floor(small_frame, reference):
    model = PipeweaveRegressor(n_estimators=20, n_jobs=1, reference=reference).fit(small_frame)
    pred = model.predict(small_frame)
    assert np.isfinite(pred).all() and (pred >= small_frame["t_lower_us"].to_numpy() - 1e-12).all()


def test_unknown_reference_is_a_clear_error(small_frame):
    with pytest.raises(DataError, match="reference must be one of"):
        PipeweaveRegressor(n_estimators=2, reference="cycles").fit(small_frame)


def test_monotone_constraint_holds_along_the_feature(small_frame):
    from pipeweave.model._features import design_matrix

    model = PipeweaveRegressor(n_estimators=30, n_jobs=1, monotone_constraints={"log10_t_env_us": 1}).fit(small_frame)
    X = design_matrix(small_frame.iloc[:50], model.feature_names_)
    j = model.feature_names_.index("log10_t_env_us")
    outs = []
    for v in np.linspace(-1.0, 5.0, 13):  # sweep the constrained feature, all else fixed
        X[:, j] = v
        outs.append(model.booster_.inplace_predict(X, validate_features=False))
    assert (np.diff(np.vstack(outs), axis=0) >= -1e-6).all()


def test_monotone_constraint_on_unknown_feature_is_rejected(small_frame):
    with pytest.raises(DataError, match="unknown features"):
        PipeweaveRegressor(n_estimators=2, monotone_constraints={"not_a_feature": 1}).fit(small_frame)


def test_per_family_boosters_predict_their_family_and_survive_a_roundtrip(small_frame, tmp_path):
    model = PipeweaveRegressor(n_estimators=20, n_jobs=1, per_family=True).fit(small_frame)
    assert sorted(model.family_boosters_) == ["gemm", "moe_w13"]
    shared = PipeweaveRegressor(n_estimators=20, n_jobs=1, per_family=False).fit(small_frame)
    pred, pred_shared = model.predict(small_frame), shared.predict(small_frame)
    assert not np.allclose(pred, pred_shared)  # the family boosters, not the shared one, answered
    # a family booster alone reproduces its rows
    from pipeweave.model._features import design_matrix

    gemm = small_frame[small_frame["family"] == "gemm"]
    X = design_matrix(gemm, model.feature_names_)
    own = model.family_boosters_["gemm"].inplace_predict(X)
    np.testing.assert_allclose(model.predict_log_ratio(gemm), own, rtol=1e-6, atol=1e-6)
    path = save_model(model, tmp_path / "pf.ubj")
    loaded = load_model(path)
    assert sorted(loaded.family_boosters_) == ["gemm", "moe_w13"]
    assert read_stamp(path)["family_boosters"] == ["gemm", "moe_w13"]
    np.testing.assert_allclose(loaded.predict(small_frame), pred, rtol=1e-6)


def test_loaded_family_boosters_are_built_when_their_family_is_predicted(small_frame, tmp_path):
    from pipeweave.model import load_model, save_model

    model = PipeweaveRegressor(n_estimators=20, n_jobs=1, per_family=True).fit(small_frame)
    loaded = load_model(save_model(model, tmp_path / "lazy.ubj"))
    assert "built=[]" in repr(loaded.family_boosters_)  # nothing built by loading
    gemm = small_frame[small_frame["family"] == "gemm"]
    np.testing.assert_allclose(loaded.predict(gemm), model.predict(gemm), rtol=1e-6)
    assert "built=['gemm']" in repr(loaded.family_boosters_)  # only the family that was predicted
    np.testing.assert_allclose(loaded.predict(small_frame), model.predict(small_frame), rtol=1e-6)
    assert list(loaded.family_boosters_) == ["gemm", "moe_w13"] and len(loaded.family_boosters_) == 2


def test_families_without_their_own_booster_fall_back_to_the_shared_one(small_frame):
    model = PipeweaveRegressor(n_estimators=20, n_jobs=1, per_family=True).fit(small_frame)
    del model.family_boosters_["moe_w13"]
    moe = small_frame[small_frame["family"] == "moe_w13"]
    from pipeweave.model._features import design_matrix

    X = design_matrix(moe, model.feature_names_)
    np.testing.assert_allclose(model.predict_log_ratio(moe), model.booster_.inplace_predict(X), rtol=1e-6, atol=1e-6)


def test_informative_only_column_sampling_weights():
    # hand-made matrix: a varying column, an all-missing one, a constant one, one whose inf is ignored
    import numpy as np
    import xgboost as xgb

    from pipeweave.model import PipeweaveRegressor

    X = np.array([[1.0, np.nan, 3.0, 5.0], [2.0, np.nan, 3.0, np.inf], [3.0, np.nan, 3.0, 6.0]])
    dm = xgb.DMatrix(np.nan_to_num(X, posinf=0.0), label=np.zeros(3))
    on = PipeweaveRegressor(sample_informative_only=True)
    on._set_feature_weights(dm, X, informative=on._informative(["gemm"]))
    np.testing.assert_array_equal(dm.get_float_info("feature_weights"), [1.0, 0.0, 0.0, 1.0])
    off = xgb.DMatrix(np.nan_to_num(X, posinf=0.0), label=np.zeros(3))
    default = PipeweaveRegressor()
    default._set_feature_weights(off, X, informative=default._informative(["gemm"]))  # GEMM: uniform sampling
    assert len(off.get_float_info("feature_weights")) == 0


def test_never_column_sampling_weights():
    # hand-made matrix: column 1 is excluded on purpose (a GPU constant of a memory-bound family)
    import xgboost as xgb

    X = np.arange(12, dtype=float).reshape(3, 4)
    dm = xgb.DMatrix(X, label=np.zeros(3))
    PipeweaveRegressor()._set_feature_weights(dm, X, never=[1])
    np.testing.assert_array_equal(dm.get_float_info("feature_weights"), [1.0, 0.0, 1.0, 1.0])


@pytest.fixture(scope="module")
def norm_frame(data_dir, small_frame):
    """The GEMM / moe_w13 rows plus ~1,000 real RMSNorm rows of the PipeWeave fork sample, featurized."""
    import pandas as pd

    from pipeweave.model import ensure_features
    from pipeweave.sources import load_profiles

    rms = load_profiles(data_dir, families=["rmsnorm"])
    rms = rms[rms["source"] == "pipeweave_fork_sample"]
    rms = rms.groupby("gpu", observed=True).head(100).reset_index(drop=True)
    return pd.concat([small_frame, ensure_features(rms)], ignore_index=True)


def _split_features(booster) -> set[str]:
    trees = booster.trees_to_dataframe()
    return set(trees.loc[trees["Feature"] != "Leaf", "Feature"])


def test_blind_families_see_no_gpu_constant(norm_frame):
    from pipeweave.model import GPU_BLIND_FAMILIES, GPU_CONSTANT_FEATURES, gpu_blind_rows

    blind = PipeweaveRegressor(n_estimators=30, n_jobs=1).fit(norm_frame)
    seeing = PipeweaveRegressor(n_estimators=30, n_jobs=1, gpu_blind_families=()).fit(norm_frame)
    assert blind.blind_families_ == GPU_BLIND_FAMILIES and seeing.blind_families_ == ()
    gpu_const = set(GPU_CONSTANT_FEATURES)
    assert not _split_features(blind.family_boosters_["rmsnorm"]) & gpu_const
    assert _split_features(seeing.family_boosters_["rmsnorm"]) & gpu_const  # the option is what removes them
    assert _split_features(blind.family_boosters_["gemm"]) & gpu_const  # GEMM keeps them
    # the shared booster (fallback) gets them as missing values on the RMSNorm rows, in fit and predict
    rms = norm_frame[gpu_blind_rows(norm_frame["family"], GPU_BLIND_FAMILIES)]
    assert len(rms) and set(rms["family"]) == {"rmsnorm"}
    X = blind.feature_matrix(rms, blind.feature_names_)
    cols = [blind.feature_names_.index(f) for f in GPU_CONSTANT_FEATURES]
    assert np.isnan(X[:, cols]).all() and np.isfinite(np.delete(X, cols, axis=1)[:, :5]).all()
    gemm = norm_frame[norm_frame["family"] == "gemm"]
    assert np.isfinite(blind.feature_matrix(gemm, blind.feature_names_)[:, cols]).all()
    assert np.isfinite(blind.predict(norm_frame)).all()
    # a chosen set: GEMM blind, RMSNorm seeing
    gemm_blind = PipeweaveRegressor(n_estimators=30, n_jobs=1, gpu_blind_families=("gemm",)).fit(norm_frame)
    assert not _split_features(gemm_blind.family_boosters_["gemm"]) & gpu_const
    assert _split_features(gemm_blind.family_boosters_["rmsnorm"]) & gpu_const


def test_blind_families_are_saved_and_a_refit_resolves_them_anew(norm_frame, tmp_path):
    model = PipeweaveRegressor(n_estimators=10, n_jobs=1, gpu_blind_families=("rmsnorm",)).fit(norm_frame)
    path = save_model(model, tmp_path / "blind.ubj")
    assert read_stamp(path)["gpu_blind_families"] == ["rmsnorm"]
    loaded = load_model(path)
    assert loaded.blind_families() == ("rmsnorm",) and loaded.gpu_blind_families == ("rmsnorm",)
    np.testing.assert_allclose(loaded.predict(norm_frame), model.predict(norm_frame), rtol=1e-6)
    model.set_params(gpu_blind_families=())
    assert model.fit(norm_frame).blind_families_ == ()


@pytest.mark.parametrize("bad", ["rmsnorm", ("rmsnrom",), (3,)])
def test_bad_blind_families_are_a_clear_error(norm_frame, bad):
    with pytest.raises(DataError, match="gpu_blind_families"):
        PipeweaveRegressor(n_estimators=2, n_jobs=1, gpu_blind_families=bad).fit(norm_frame)


def test_the_recipe_blinds_every_memory_bound_family():
    from pipeweave.frontend import FAMILIES
    from pipeweave.model import GPU_BLIND_FAMILIES

    bound = sorted(f for f, spec in FAMILIES.items() if spec.memory_bound)
    assert bound == ["elementwise_fp32", "layernorm_fp32", "rmsnorm", "silu_mul", "softmax_fp32"]
    assert not any(FAMILIES[f].uses_tensor_cores for f in bound)
    assert set(bound) <= set(GPU_BLIND_FAMILIES) <= set(FAMILIES)


def test_model_file_from_before_the_option_loads_seeing_every_constant(norm_frame, tmp_path, save_with_stamp):
    model = PipeweaveRegressor(n_estimators=10, n_jobs=1, gpu_blind_families=()).fit(norm_frame)

    def older(stamp):  # a stamp written before the option existed lacks both keys
        stamp.pop("gpu_blind_families")
        stamp["params"] = {k: v for k, v in stamp["params"].items() if k != "gpu_blind_families"}
        return stamp

    path = save_with_stamp(model, tmp_path / "older.ubj", older)
    stamp = read_stamp(path)
    assert "gpu_blind_families" not in stamp and "gpu_blind_families" not in stamp["params"]
    loaded = load_model(path)
    assert loaded.blind_families() == ()  # not the recipe's default: the file was trained seeing them
    np.testing.assert_allclose(loaded.predict(norm_frame), model.predict(norm_frame), rtol=1e-6)


def test_informative_column_sampling_per_family():
    listed = PipeweaveRegressor(sample_informative_only=("attention_context",))
    assert listed._informative(["attention_context"]) and listed._informative(np.array(["attention_context"] * 3))
    assert not listed._informative(["gemm"]) and not listed._informative(["attention_context", "gemm"])
    assert PipeweaveRegressor(sample_informative_only=True)._informative(["gemm"])
    assert not PipeweaveRegressor(sample_informative_only=False)._informative(["attention_context"])
    with pytest.raises(DataError, match="sample_informative_only"):
        PipeweaveRegressor(sample_informative_only="attention_context")._informative(["attention_context"])


def test_only_the_listed_families_boosters_sample_informative_columns(norm_frame, tmp_path, monkeypatch):
    calls = []
    own = PipeweaveRegressor._set_feature_weights

    def spy(self, dmatrix, X, never=None, informative=None):
        calls.append(bool(informative))
        return own(self, dmatrix, X, never, informative)

    monkeypatch.setattr(PipeweaveRegressor, "_set_feature_weights", spy)
    model = PipeweaveRegressor(n_estimators=5, n_jobs=1, sample_informative_only=("rmsnorm",)).fit(norm_frame)
    # shared booster (three families: not informative), then the family boosters in sorted order
    assert sorted(model.family_boosters_) == ["gemm", "moe_w13", "rmsnorm"]
    assert calls == [False, False, False, True]
    monkeypatch.undo()
    loaded = load_model(save_model(model, tmp_path / "inf.ubj"))
    assert loaded.sample_informative_only == ("rmsnorm",)


def _root_cover(booster) -> float:
    trees = booster.trees_to_dataframe()
    return float(trees.loc[(trees["Tree"] == 0) & (trees["Node"] == 0), "Cover"].iloc[0])


def test_family_booster_rows_train_a_family_booster_on_other_families_rows(norm_frame, tmp_path):
    # squared error: the root cover of the first tree is the number of training rows (no row subsampling)
    kw = {"n_estimators": 2, "n_jobs": 1, "subsample": 1.0}
    n = norm_frame["family"].astype(str).value_counts()
    own = PipeweaveRegressor(**kw, family_booster_rows={}).fit(norm_frame)
    joint = PipeweaveRegressor(**kw, family_booster_rows={"rmsnorm": ("gemm",)}).fit(norm_frame)
    assert _root_cover(own.family_boosters_["rmsnorm"]) == pytest.approx(n["rmsnorm"])
    assert _root_cover(joint.family_boosters_["rmsnorm"]) == pytest.approx(n["rmsnorm"] + n["gemm"])
    assert _root_cover(joint.family_boosters_["gemm"]) == pytest.approx(n["gemm"])  # only the listed family
    rms = norm_frame[norm_frame["family"] == "rmsnorm"]
    assert not np.allclose(joint.predict(rms), own.predict(rms))
    gemm = norm_frame[norm_frame["family"] == "gemm"]
    np.testing.assert_allclose(joint.predict(gemm), own.predict(gemm), rtol=1e-6)  # other boosters unchanged
    # the option is a hyperparameter: saved in the stamp, the file predicts as the fitted model
    loaded = load_model(save_model(joint, tmp_path / "joint.ubj"))
    assert loaded.booster_rows() == {"rmsnorm": ("rmsnorm", "gemm")}
    np.testing.assert_allclose(loaded.predict(norm_frame), joint.predict(norm_frame), rtol=1e-6)


def test_the_recipe_lists_the_boosters_that_learn_from_other_families():
    from pipeweave.model import FAMILY_BOOSTER_ROWS

    rows = PipeweaveRegressor().booster_rows()
    assert rows == {f: (f, *(x for x in v if x != f)) for f, v in FAMILY_BOOSTER_ROWS.items()}
    tensor = {"attention_generation", "attention_context", "gemm", "fused_moe", "moe_w13"}
    fp32 = {"gemm_fp32", "elementwise_fp32", "softmax_fp32", "layernorm_fp32"}
    assert set(rows) == {"attention_generation", "attention_context", "gemm_fp32", "softmax_fp32"}
    assert set(rows["attention_generation"]) == set(rows["attention_context"]) == tensor
    assert set(rows["gemm_fp32"]) == set(rows["softmax_fp32"]) == fp32
    assert rows["softmax_fp32"][0] == "softmax_fp32"  # a booster always sees its own rows first
    assert "gemm" not in rows and "fused_moe" not in rows  # measured worse with other families' rows


@pytest.mark.parametrize(
    "bad",
    [("rmsnorm",), {"rmsnorm": "gemm"}, {"rmsnrom": ("gemm",)}, {"rmsnorm": ("gemmm",)}, {"rmsnorm": (3,)}],
)
def test_bad_family_booster_rows_are_a_clear_error(norm_frame, bad):
    with pytest.raises(DataError, match="family_booster_rows"):
        PipeweaveRegressor(n_estimators=2, n_jobs=1, family_booster_rows=bad).fit(norm_frame)


def test_families_with_the_same_training_rows_share_one_booster(norm_frame):
    kw = {"n_estimators": 2, "n_jobs": 1}
    model = PipeweaveRegressor(**kw, family_booster_rows={"rmsnorm": ("gemm",), "gemm": ("rmsnorm",)}).fit(norm_frame)
    fb = model.family_boosters_
    assert fb["rmsnorm"] is fb["gemm"] and fb["moe_w13"] is not fb["gemm"]  # one fit for the same rows


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_estimators": 0}, r"n_estimators must be an integer >= 1, got 0"),
        ({"n_estimators": "20"}, r"n_estimators must be an integer >= 1, got '20'"),
        ({"learning_rate": 5}, r"learning_rate must be a number in \(0, 1\]"),
        ({"max_depth": -3}, r"max_depth must be an integer >= 1"),
        ({"subsample": 2.0}, r"subsample must be a number in \(0, 1\]"),
        ({"min_child_weight": float("nan")}, r"min_child_weight must be a number >= 0"),
        ({"max_rows_per_group": -5}, r"max_rows_per_group must be None or an integer >= 0"),
    ],
)
def test_hyperparameters_are_checked_before_fitting(small_frame, params, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**params).fit(small_frame)


def test_a_family_without_training_rows_is_refused(fitted, small_frame):
    rows = small_frame[small_frame["family"] == "gemm"].head(2).assign(family="rmsnorm")
    with pytest.raises(DataError, match=r"not trained on family \['rmsnorm'\] \(rows \[0, 1\]"):
        fitted.predict(rows)


# ---------------------------------------------------------------------------- Python API audit (hand-made rows)
def _hand_made_rows():
    """Eight hand-made gemm launches with made-up latencies (not measurements): enough to reach fit's checks."""
    import pandas as pd

    sizes = [256, 512, 1024, 2048]
    return pd.DataFrame(
        [
            {"family": "gemm", "dtype": "bfloat16", "gpu": g, "m": s, "n": s, "k": s, "latency_us": 1e-6 * s**2 + 5}
            for g in ("H100", "A100")
            for s in sizes
        ]
    )


@pytest.mark.parametrize(
    "params, match",
    [
        ({"drop_features": "mma_generation"}, r"drop_features must be a tuple of feature names, got 'mma_generation'"),
        (
            {"drop_features": ("mma_generaton",)},
            r"names no model feature: \['mma_generaton'\] \(did you mean 'mma_generation'",
        ),
        ({"drop_features": ("log2_num_tokens",)}, r"names no model feature: \['log2_num_tokens'\]"),
        ({"sample_informative_only": ("gemmm",)}, r"sample_informative_only names unknown families \['gemmm'\]"),
        (
            {"sample_informative_only": "gemm"},
            r"sample_informative_only must be True, False or a tuple of family names",
        ),
    ],
)
def test_fit_refuses_a_feature_or_family_name_it_would_ignore(params, match):
    """A string drop_features was read as substrings and a misspelled name dropped nothing, silently; an unknown
    family in sample_informative_only changed no booster."""
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(n_estimators=2, n_jobs=1, **params).fit(_hand_made_rows())


def test_fit_accepts_droppable_names():
    rows = _hand_made_rows()
    model = PipeweaveRegressor(
        n_estimators=2, n_jobs=1, drop_features=("mma_generation", "backend_triton"), sample_informative_only=("gemm",)
    ).fit(rows)
    assert "mma_generation" not in model.feature_names_ and "backend_triton" not in model.feature_names_


def test_save_and_load_name_a_wrong_type(tmp_path):
    """save_model('m', ...) raised AttributeError and load_model(5) TypeError from inside."""
    with pytest.raises(DataError, match="save_model writes a fitted PipeweaveRegressor, got str"):
        save_model("m", tmp_path / "m.ubj")
    with pytest.raises(DataError, match=r"a model path must be a string or a path, got int \(5\)"):
        load_model(5)
    with pytest.raises(DataError, match=r"a model path must be a string or a path, got NoneType"):
        read_stamp(None)
    model = PipeweaveRegressor(n_estimators=2, n_jobs=1).fit(_hand_made_rows())
    with pytest.raises(DataError, match=r"a model path must be a string or a path, got list"):
        save_model(model, ["m.ubj"])
    assert not list(tmp_path.iterdir())
