"""The sibling companion (``sibling_companion``): a new GPU of a trained generation blended with the crude companion.

Real rows: ~450 SiLU-and-mul rows of the fork sample on A100 (Ampere), L40 (Ada) and H100 (Hopper), 150 each
(``load_real_rows``); the GPUs they are re-predicted on (H200, a Hopper; B200, a Blackwell) get the same launches.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError, SchemaMismatchError
from pipeweave.frontend import FAMILIES, crude_matrix
from pipeweave.model import (
    SIBLING_COMPANION,
    PipeweaveRegressor,
    companion_family,
    ensure_features,
    load_model,
    predict_in_place,
    read_stamp,
    save_model,
)

GPUS = ["A100-SXM", "L40", "H100-SXM"]
KW = {"n_estimators": 10, "n_jobs": 1, "seen_gpu": {}, "roofline_blend": {}, "seen_gpu_min_rows": 100}


@pytest.fixture(scope="module")
def rows(load_real_rows):
    return load_real_rows(["silu_mul"], GPUS, 150)


@pytest.fixture(scope="module")
def fitted(rows):
    """(no companion at all, the sibling weight 0.3 alone, the sibling weight 0.3 over a companion weight 0.1)."""
    alone = PipeweaveRegressor(**KW, companion={}, sibling_companion={}).fit(rows)
    sibling = PipeweaveRegressor(**KW, companion={}, sibling_companion={"silu_mul": 0.3}).fit(rows)
    both = PipeweaveRegressor(**KW, companion={"silu_mul": 0.1}, sibling_companion={"silu_mul": 0.3}).fit(rows)
    return alone, sibling, both


def on(rows, gpu):
    """The same launches on another GPU (featurized for it)."""
    return ensure_features(rows[["source", "family", "dtype", "num_tokens", "inter_size"]].assign(gpu=gpu))


def blend(model, alone, frame, w):
    """exp((1 - w) log(alone) + w log(companion)), floored: the expected blend at weight w."""
    Xc, t_wq = crude_matrix(frame)
    comp = t_wq * np.exp(predict_in_place(model.companion_boosters_["silu_mul"], Xc, 1))
    raw = np.exp((1.0 - w) * np.log(alone.predict(frame)) + w * np.log(comp))
    return np.maximum(raw, frame["t_lower_us"].to_numpy())


def test_the_recipe_names_known_families_with_weights_below_one():
    assert {companion_family(k) for k in SIBLING_COMPANION} <= set(FAMILIES)
    assert all(0.0 < w < 1.0 for w in SIBLING_COMPANION.values())
    assert PipeweaveRegressor().sibling_companion_weights() == SIBLING_COMPANION
    assert PipeweaveRegressor(sibling_companion={"silu_mul": 0.0}).sibling_companion_weights() == {}


def test_only_a_new_gpu_of_a_trained_generation_takes_the_sibling_weight(rows, fitted):
    alone, sibling, _ = fitted
    assert sibling.sibling_companion_ == {"silu_mul": 0.3} and list(sibling.companion_boosters_) == ["silu_mul"]
    assert sibling.companion_weights_ == {}  # a companion booster used on sibling rows alone
    assert sibling.sibling_trained_gpus_ == {"silu_mul": sorted(GPUS)}
    assert sibling.sibling_trained_generations_ == {"silu_mul": ["ada", "ampere", "hopper"]}
    # a trained GPU: the model alone; a new GPU of a new generation: the model alone
    np.testing.assert_allclose(sibling.predict(rows), alone.predict(rows), rtol=1e-6)
    b200 = on(rows, "B200")
    np.testing.assert_allclose(sibling.predict(b200), alone.predict(b200), rtol=1e-6)
    # a new Hopper (H100 trained): blended at 0.3
    h200 = on(rows, "H200-SXM")
    np.testing.assert_allclose(sibling.predict(h200), blend(sibling, alone, h200, 0.3), rtol=1e-6)
    assert not np.allclose(sibling.predict(h200), alone.predict(h200))


def test_the_sibling_weight_replaces_the_companion_weight_on_sibling_rows_only(rows, fitted):
    alone, _, both = fitted
    assert both.companion_weights_ == {"silu_mul": 0.1} and both.sibling_companion_ == {"silu_mul": 0.3}
    h200, b200 = on(rows, "H200-SXM"), on(rows, "B200")
    np.testing.assert_allclose(both.predict(h200), blend(both, alone, h200, 0.3), rtol=1e-6)
    np.testing.assert_allclose(both.predict(b200), blend(both, alone, b200, 0.1), rtol=1e-6)
    np.testing.assert_allclose(both.predict(rows), blend(both, alone, rows, 0.1), rtol=1e-6)
    # a row's own generation column decides over the catalog (a user's GPU the catalog lacks)
    told = b200.assign(generation="hopper")
    np.testing.assert_allclose(both.predict(told), blend(both, alone, told, 0.3), rtol=1e-6)


def test_a_dtype_key_names_that_dtypes_rows_only(rows):
    """The rows are bfloat16 and float16: a ``silu_mul:fp8`` key trains a companion booster but blends no row."""
    alone = PipeweaveRegressor(**KW, companion={}, sibling_companion={}).fit(rows)
    other = PipeweaveRegressor(**KW, companion={}, sibling_companion={"silu_mul:fp8": 0.3}).fit(rows)
    assert other.sibling_trained_generations_ == {"silu_mul:fp8": []}
    h200 = on(rows, "H200-SXM")
    np.testing.assert_allclose(other.predict(h200), alone.predict(h200), rtol=1e-6)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"silu_mul": 1.0}, r"sibling_companion\['silu_mul'\] must be a blend weight in \[0, 1\), got 1.0"),
        ({"silu": 0.3}, r"sibling_companion names unknown families \['silu'\]"),
        ({"silu_mul:fp9": 0.3}, r"sibling_companion names unknown dtypes in \['silu_mul:fp9'\]"),
        ("silu_mul", r"sibling_companion must map family names to blend weights"),
    ],
)
def test_bad_sibling_companion_values_are_named(rows, value, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**KW, sibling_companion=value).fit(rows.head(50))


def test_the_lists_round_trip_and_old_or_damaged_files_are_handled(rows, fitted, tmp_path, save_with_stamp):
    alone, _, both = fitted
    path = save_model(both, tmp_path / "m.ubj")
    stamp = read_stamp(path)
    assert stamp["sibling_companion"] == {"silu_mul": 0.3}
    assert stamp["sibling_trained_generations"] == {"silu_mul": ["ada", "ampere", "hopper"]}
    h200 = on(rows, "H200-SXM")
    np.testing.assert_allclose(load_model(path).predict(h200), both.predict(h200), rtol=1e-6)

    def older(stamp):  # written before the option: no fields, no parameter
        for field in ("sibling_companion", "sibling_trained_gpus", "sibling_trained_generations"):
            stamp.pop(field)
        stamp["params"] = {k: v for k, v in stamp["params"].items() if k != "sibling_companion"}
        return stamp

    old = load_model(save_with_stamp(both, tmp_path / "older.ubj", older))
    assert old.sibling_companion_ == {}
    np.testing.assert_allclose(old.predict(h200), blend(both, alone, h200, 0.1), rtol=1e-6)
    bad = save_with_stamp(both, tmp_path / "bad.ubj", lambda s: {**s, "sibling_companion": {"silu_mul": 1.5}})
    with pytest.raises(SchemaMismatchError, match="malformed sibling_companion field"):
        load_model(bad)
