"""Seen-GPU boosters (``seen_gpu``): rows of a GPU the model trained on, blended with a booster that
knows that GPU.

Real rows: the shared ~3,000 GEMM / moe_w13 rows of ``small_frame`` (aiconfigurator and fork sample, bf16;
300 GEMM rows on each of A100-SXM, H100-SXM and L40S).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError, SchemaMismatchError
from pipeweave.frontend import FAMILIES
from pipeweave.model import (
    SEEN_GPU_MIN_ROWS,
    SEEN_GPU_WEIGHT,
    PipeweaveRegressor,
    load_model,
    predict_in_place,
    read_stamp,
    save_model,
    seen_keys,
)

KW = {"n_estimators": 10, "n_jobs": 1, "companion": {}}
GEMM_KEYS = ["A100-SXM", "H100-SXM", "L40S"]


@pytest.fixture(scope="module")
def fitted(small_frame):
    """(the model alone, the same with a GEMM seen-GPU booster of weight 0.5), same seed."""
    alone = PipeweaveRegressor(**KW, seen_gpu={}).fit(small_frame)
    blended = PipeweaveRegressor(**KW, seen_gpu={"gemm": 0.5}).fit(small_frame)
    return alone, blended


def _seen_us(model, rows):
    """The seen-GPU booster's own prediction (us) of GEMM rows, built from public pieces."""
    keys = model.seen_keys_["gemm"]
    X = model.feature_matrix(rows, model.feature_names_)
    onehot = (seen_keys(rows)[:, None] == np.array(keys, dtype=object)[None, :]).astype(np.float32)
    out = predict_in_place(model.seen_boosters_["gemm"], np.hstack([X, onehot]), 1)
    return rows["t_env_us"].to_numpy() * np.exp(out)


def test_the_recipe_gives_the_in_distribution_families_a_seen_gpu_booster():
    assert set(SEEN_GPU_WEIGHT) <= set(FAMILIES)
    assert all(0.0 < w <= 1.0 for w in SEEN_GPU_WEIGHT.values())
    assert PipeweaveRegressor().seen_gpu_weights() == SEEN_GPU_WEIGHT
    assert PipeweaveRegressor(seen_gpu={}).seen_gpu_weights() == {}
    assert PipeweaveRegressor(seen_gpu={"gemm": 0.0, "moe_w13": 1.0}).seen_gpu_weights() == {"moe_w13": 1.0}


@pytest.mark.parametrize(
    ("seen", "match"),
    [
        ({"gemm": 1.5}, r"seen_gpu\['gemm'\] must be a blend weight in \[0, 1\], got 1.5"),
        ({"gemm": -0.1}, r"got -0.1"),
        ({"gemm": "all"}, r"got 'all'"),
        ({"gemm": True}, r"got True"),
        ({"not_a_family": 1.0}, r"seen_gpu names unknown families \['not_a_family'\]"),
        ("gemm", r"seen_gpu must map family names to blend weights"),
        ({"gemm": 1.0, "min_rows": 0}, r"seen_gpu_min_rows must be a whole number of training rows >= 1, got 0"),
    ],
)
def test_bad_seen_gpu_values_are_named(small_frame, seen, match):
    kw = {**KW, "seen_gpu": seen}
    if isinstance(seen, dict) and "min_rows" in seen:
        kw = {**KW, "seen_gpu": {"gemm": seen["gemm"]}, "seen_gpu_min_rows": seen["min_rows"]}
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**kw).fit(small_frame.head(50))


def test_seen_rows_are_blended_geometrically_and_the_others_are_not(small_frame, fitted):
    alone, blended = fitted
    assert blended.seen_keys_ == {"gemm": GEMM_KEYS} and blended.seen_weights_ == {"gemm": 0.5}
    gemm = small_frame[small_frame["family"] == "gemm"]
    hybrid = gemm["t_env_us"].to_numpy() * np.exp(alone.predict_log_ratio(gemm))  # before the lower-bound floor
    expect = np.maximum(np.exp(0.5 * np.log(hybrid) + 0.5 * np.log(_seen_us(blended, gemm))), gemm["t_lower_us"])
    np.testing.assert_allclose(blended.predict(gemm), expect, rtol=1e-6)
    assert not np.allclose(blended.predict(gemm), alone.predict(gemm))
    # the family boosters are the same fit; moe_w13 has no seen-GPU booster, so its rows are unchanged
    np.testing.assert_allclose(blended.predict_log_ratio(gemm), alone.predict_log_ratio(gemm), rtol=1e-6)
    w13 = small_frame[small_frame["family"] == "moe_w13"]
    np.testing.assert_allclose(blended.predict(w13), alone.predict(w13), rtol=1e-6)


def test_a_gpu_the_model_never_saw_is_predicted_by_the_model_alone(small_frame, fitted):
    alone, blended = fitted
    raw = small_frame[small_frame["family"] == "gemm"].head(30)[["family", "dtype", "gpu", "m", "n", "k"]]
    for gpu in ("B200", "H200"):  # a catalog GPU without training rows: no one-hot, no blend
        np.testing.assert_allclose(blended.predict(raw.assign(gpu=gpu)), alone.predict(raw.assign(gpu=gpu)))
    # the key is the GPU alone: a seen GPU's rows labelled with another source take the blend too
    other_source = raw.assign(gpu="H100-SXM", source="pipeweave")
    assert not np.allclose(blended.predict(other_source), alone.predict(other_source))


def test_raw_rows_aliases_and_blank_sources_take_the_seen_blend(small_frame, fitted):
    alone, blended = fitted
    gemm = small_frame[(small_frame["family"] == "gemm") & (small_frame["gpu"] == "H100-SXM")].head(30)
    raw = gemm[["family", "dtype", "gpu", "m", "n", "k"]]
    np.testing.assert_allclose(blended.predict(raw), blended.predict(gemm), rtol=1e-6)  # hot path = frame path
    np.testing.assert_allclose(blended.predict(raw.assign(gpu="H100")), blended.predict(raw), rtol=1e-6)
    np.testing.assert_allclose(blended.predict(raw.assign(source="")), blended.predict(raw), rtol=1e-6)
    assert not np.allclose(blended.predict(raw), alone.predict(raw))


def test_seen_boosters_train_on_every_row_and_need_enough_of_them(small_frame):
    """A GPU needs seen_gpu_min_rows rows of the family (default SEEN_GPU_MIN_ROWS); the row cap of the
    other boosters does not apply."""
    assert SEEN_GPU_MIN_ROWS <= 300 and PipeweaveRegressor().seen_gpu_min_rows == SEEN_GPU_MIN_ROWS
    gemm = small_frame[small_frame["family"] == "gemm"]
    few = gemm[gemm["gpu"] == "L40S"].head(SEEN_GPU_MIN_ROWS - 1)
    rows = gemm[gemm["gpu"] != "L40S"]
    train = pd.concat([rows, few], ignore_index=True)
    capped = PipeweaveRegressor(**KW, seen_gpu={"gemm": 1.0}, max_rows_per_group=50).fit(train)
    assert capped.n_train_rows_ == 3 * 50  # the family boosters saw the capped draw
    assert capped.seen_keys_ == {"gemm": GEMM_KEYS[:2]}  # 300 rows each (uncapped); L40S has too few


def test_a_weight_for_a_family_without_a_seen_booster_changes_nothing(small_frame, fitted):
    """A screen (or a hand-edited model) may weigh a family the fit trained no seen booster for (too few rows
    of every GPU): its rows keep the model's prediction instead of failing on the missing booster."""
    _, blended = fitted
    assert "moe_w13" not in blended.seen_boosters_
    before = blended.predict(small_frame)
    saved = blended.seen_weights_
    try:
        blended.seen_weights_ = {**saved, "moe_w13": 1.0}
        np.testing.assert_allclose(blended.predict(small_frame), before, rtol=1e-12)
    finally:
        blended.seen_weights_ = saved


def test_seen_boosters_round_trip_through_the_model_file(small_frame, fitted, tmp_path):
    _, blended = fitted
    path = save_model(blended, tmp_path / "m.ubj")
    assert read_stamp(path)["seen_gpu"] == {"gemm": {"weight": 0.5, "keys": GEMM_KEYS}}
    loaded = load_model(path)
    assert loaded.seen_keys_ == {"gemm": GEMM_KEYS} and loaded.seen_weights_ == {"gemm": 0.5}
    np.testing.assert_allclose(loaded.predict(small_frame), blended.predict(small_frame), rtol=1e-6)


def test_a_file_from_before_the_option_predicts_without_seen_boosters(small_frame, fitted, tmp_path, save_with_stamp):
    alone, _ = fitted

    def older(stamp):  # a stamp written before the option existed lacks the field and the parameter
        stamp.pop("seen_gpu")
        stamp["params"] = {k: v for k, v in stamp["params"].items() if k != "seen_gpu"}
        return stamp

    loaded = load_model(save_with_stamp(alone, tmp_path / "older.ubj", older))
    assert loaded.seen_weights_ == {} and len(loaded.seen_boosters_) == 0
    np.testing.assert_allclose(loaded.predict(small_frame), alone.predict(small_frame), rtol=1e-6)


@pytest.mark.parametrize(
    "field",
    [
        {"gemm": {"weight": 1.5, "keys": GEMM_KEYS}},
        {"gemm": {"weight": 0.5, "keys": []}},
        {"gemm": {"weight": 0.5}},
        {"gemm": 0.5},
    ],
)
def test_a_damaged_seen_gpu_field_is_refused(fitted, tmp_path, save_with_stamp, field):
    _, blended = fitted
    path = save_with_stamp(blended, tmp_path / "bad.ubj", lambda s: {**s, "seen_gpu": field})
    with pytest.raises(SchemaMismatchError, match="malformed seen_gpu field"):
        load_model(path)


def test_a_named_tile_plan_is_left_to_the_model(small_frame, fitted):
    """A Triton config (explicit block sizes) has no library kernel choice to learn: the model alone predicts it."""
    from pipeweave.model import explicit_tile_rows

    alone, blended = fitted
    raw = small_frame[(small_frame["family"] == "gemm") & (small_frame["gpu"] == "H100-SXM")].head(20)
    raw = raw[["family", "dtype", "gpu", "m", "n", "k"]]
    tiled = raw.assign(block_m=128, block_n=128, block_k=64, group_m=8, num_warps=4, num_stages=3)
    assert explicit_tile_rows(tiled).all() and not explicit_tile_rows(raw).any()
    np.testing.assert_allclose(blended.predict(tiled), alone.predict(tiled), rtol=1e-6)
    assert not np.allclose(blended.predict(raw), alone.predict(raw))


def test_seen_keys_name_the_catalog_gpu():
    """Hand-made rows (a key function, no measurement)."""
    rows = pd.DataFrame({"family": ["gemm", "moe_w13", "gemm"], "gpu": ["H100", "A100-SXM", "MyGPU"]})
    assert list(seen_keys(rows)) == ["H100-SXM", "A100-SXM", "MyGPU"]
