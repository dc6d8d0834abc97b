"""ConfigRanker / CeilingModel on a small slice of the real sweeps: fit, save/load round trip, stamp checks."""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError, SchemaMismatchError
from pipeweave.diagnose import CeilingModel, ConfigRanker, DiagnoseModels, best_per_shape, candidate_features
from pipeweave.diagnose._dse import DSE_SHAPE_COLUMNS, candidate_labels
from pipeweave.diagnose._space import config_vocabulary


@pytest.fixture(scope="module")
def small(dse_frames):
    sweeps, _ = dse_frames
    s = sweeps[(sweeps["gpu"] == "H20") & sweeps["num_tokens"].isin([16.0, 1024.0]) & (sweeps["num_experts"] == 64)]
    shapes = s.drop_duplicates(list(DSE_SHAPE_COLUMNS))[
        ["source", "gpu", "generation", "family", "dtype", "distribution", *DSE_SHAPE_COLUMNS]
    ].reset_index(drop=True)
    cand, feat = candidate_features(shapes)
    return s, cand, feat, candidate_labels(cand, s)


def test_ranker_round_trip(small, tmp_path):
    s, cand, feat, lab = small
    assert (lab >= 2).sum() == s["in_dse_99"].sum()  # every measured near-best config is a candidate
    vocab = config_vocabulary(s)
    r = ConfigRanker(n_estimators=8, max_depth=3).fit(feat, lab, cand["query"].to_numpy(), vocabulary=vocab)
    path = r.save(tmp_path / "ranker.ubj")
    r2 = ConfigRanker.load(path)
    np.testing.assert_allclose(r2.decision_function(feat), r.decision_function(feat), rtol=1e-6)
    assert len(r2.vocabulary_) == len(vocab)
    mask = r2.restrict(cand)
    assert mask.sum() == np.isin(cand["config_key"], cand.loc[lab >= 2, "config_key"]).sum()


def test_ranker_load_errors(tmp_path):
    import xgboost as xgb

    with pytest.raises(DataError, match="not found"):
        ConfigRanker.load(tmp_path / "missing.ubj")
    with pytest.raises(DataError, match="does not exist") as err:  # a user's folder: built there, never --force
        DiagnoseModels.load(tmp_path / "nowhere")
    assert "build_models(out_dir=" in str(err.value.hint) and "--force" not in str(err.value.hint)
    bst = xgb.train({"nthread": 1}, xgb.DMatrix(np.zeros((4, 1)), label=np.zeros(4)), 1)
    bst.save_model(str(tmp_path / "plain.ubj"))
    with pytest.raises(SchemaMismatchError, match="stamp"):
        ConfigRanker.load(tmp_path / "plain.ubj")


def test_ceiling_model_fit_predict_save(small, tmp_path):
    s, cand, feat, lab = small
    best = best_per_shape(s)
    assert len(best) == cand["query"].nunique()
    m = CeilingModel(n_estimators=10).fit(s)
    pred = m.predict(best)
    assert pred.shape == (len(best),) and (pred > 0).all()
    m2 = CeilingModel.load(m.save(tmp_path / "ceiling.ubj"))
    np.testing.assert_allclose(m2.predict(best), pred, rtol=1e-6)


def test_ranker_stamp_features_must_still_be_computed(small, tmp_path):
    """A ranker loads as long as every feature it was trained on is still computed (new front-end features
    do not break it); a feature that disappeared does."""
    import json

    import xgboost as xgb

    s, cand, feat, lab = small
    r = ConfigRanker(n_estimators=4, max_depth=2).fit(feat, lab, cand["query"].to_numpy())
    path = r.save(tmp_path / "ranker.ubj")
    assert ConfigRanker.load(path).feature_names_ == r.feature_names_
    bst = xgb.Booster()
    bst.load_model(str(path))
    stamp = json.loads(bst.attr("pipeweave_stamp"))
    stamp["features"] = [*stamp["features"][:-1], "a_feature_that_is_gone"]
    bst.set_attr(pipeweave_stamp=json.dumps(stamp), file_integrity=None)  # re-saved without a seal
    bst.save_model(str(tmp_path / "gone.ubj"))
    with pytest.raises(SchemaMismatchError, match="no longer computed"):
        ConfigRanker.load(tmp_path / "gone.ubj")


def test_ranker_file_is_sealed_and_damage_is_an_error(small, tmp_path):
    # a truncated or altered ranker file is refused before XGBoost parses it (no native crash)
    s, cand, feat, lab = small
    r = ConfigRanker(n_estimators=4, max_depth=2).fit(feat, lab, cand["query"].to_numpy())
    path = r.save(tmp_path / "ranker.ubj")
    data = path.read_bytes()
    (tmp_path / "cut.ubj").write_bytes(data[:1000])
    with pytest.raises(DataError, match=r"has 1,000 bytes but was written with") as err:
        ConfigRanker.load(tmp_path / "cut.ubj")
    # the fix names the call that rebuilds the models in that folder (not the committed models' --force refresh)
    assert f"build_models(out_dir={str(tmp_path)!r})" in str(err.value.hint) and "--force" not in str(err.value.hint)
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x01
    (tmp_path / "flip.ubj").write_bytes(bytes(flipped))
    with pytest.raises(DataError, match="SHA-256"):
        ConfigRanker.load(tmp_path / "flip.ubj")


def test_models_folder_falls_back_to_the_shipped_files(tmp_path):
    """A folder of diagnose models without a main model uses the shipped one (gemm is predicted by it, not by the
    bare envelope); a folder holding only a main model uses it with the shipped diagnose models; a folder missing
    one of the three diagnose files is still refused."""
    import shutil

    import pipeweave as pw
    from pipeweave.diagnose import DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH, DEFAULT_RANKER_PATH, diagnose
    from pipeweave.model import DEFAULT_MODEL_PATH, save_model

    diag = tmp_path / "diag"
    diag.mkdir()
    for p in (DEFAULT_RANKER_PATH, DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH):
        shutil.copy(p, diag / p.name)
    m = DiagnoseModels.load(diag)
    assert m.paths["ranker"] == str(diag / DEFAULT_RANKER_PATH.name)
    assert m.paths["general"] == str(DEFAULT_MODEL_PATH)
    launch = {"gpu": "H100-SXM", "family": "gemm", "dtype": "bfloat16", "m": 1024, "n": 1024, "k": 1024}
    assert diagnose(launch, models=m, top=2)["latency_model"] == "pipeweave_default"

    own = tmp_path / "own"  # a main model trained here (a handful of real H100 GEMM rows, a few trees)
    rows = pw.load_profiles(families="gemm", gpus="H100-SXM", dtypes="bfloat16").head(400)
    save_model(
        pw.PipeweaveRegressor(n_estimators=3, companion={}, seen_gpu={}).fit(rows), own / DEFAULT_MODEL_PATH.name
    )
    m2 = DiagnoseModels.load(own)
    assert m2.paths["general"] == str(own / DEFAULT_MODEL_PATH.name)
    assert m2.paths["ranker"] == str(DEFAULT_RANKER_PATH) and m2.paths["ceiling"] == str(DEFAULT_CEILING_PATH)
    mine, shipped = diagnose(launch, models=m2, top=2), diagnose(launch, models=m, top=2)
    assert mine["models"]["general"] != shipped["models"]["general"]
    assert mine["predicted_us"] != pytest.approx(shipped["predicted_us"], rel=1e-6)

    (diag / DEFAULT_CEILING_PATH.name).unlink()
    with pytest.raises(DataError, match="has no diagnose_ceiling.ubj"):
        DiagnoseModels.load(diag)
