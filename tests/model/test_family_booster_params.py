"""Per-family booster settings (PipeweaveRegressor(family_booster_params=...)): element-wise and layernorm at
reg_lambda 10, softmax at max_depth 3 in the recipe. Real NeuSight rows (element-wise, layernorm and softmax on V100
and T4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipeweave import DataError
from pipeweave.model import (
    FAMILY_BOOSTER_PARAMS,
    FAMILY_BOOSTER_SETTINGS,
    PipeweaveRegressor,
    load_model,
    save_model,
)

KW = {"n_estimators": 20, "n_jobs": 1}


@pytest.fixture(scope="module")
def row_rows(load_real_rows):
    """~900 real rows: NeuSight's element-wise, layernorm and softmax on V100 and T4, featurized."""
    return load_real_rows(["elementwise_fp32", "layernorm_fp32", "softmax_fp32"], ["V100-PCIe", "T4"], 150)


@pytest.fixture(scope="module")
def recipe(row_rows):
    return PipeweaveRegressor(**KW).fit(row_rows)


@pytest.fixture(scope="module")
def plain(row_rows):
    return PipeweaveRegressor(**KW, family_booster_params={}).fit(row_rows)


def _train_param(booster, name: str) -> float:
    """A training parameter of a booster (its XGBoost config): ``lambda``, ``max_depth``, ``min_child_weight``."""
    return float(json.loads(booster.save_config())["learner"]["gradient_booster"]["tree_train_param"][name])


def _depths(trees) -> np.ndarray:
    """Depth of every node of ``trees`` (xgboost's trees_to_dataframe), from the parent links."""
    depth: dict[str, int] = {}
    for _, r in trees.iterrows():
        depth.setdefault(r["ID"], 0)
        for child in (r["Yes"], r["No"]):
            if isinstance(child, str):
                depth[child] = depth[r["ID"]] + 1
    return np.array(list(depth.values()))


def test_the_recipes_settings(recipe, plain):
    assert FAMILY_BOOSTER_SETTINGS == ("max_depth", "min_child_weight", "reg_lambda")
    assert FAMILY_BOOSTER_PARAMS == {
        "elementwise_fp32": {"reg_lambda": 10.0},
        "layernorm_fp32": {"reg_lambda": 10.0},
        "softmax_fp32": {"max_depth": 3},
    }
    assert recipe.family_booster_settings() == FAMILY_BOOSTER_PARAMS
    boosters = recipe.family_boosters_
    assert _train_param(boosters["elementwise_fp32"], "lambda") == 10.0
    assert _train_param(boosters["layernorm_fp32"], "lambda") == 10.0
    assert _train_param(boosters["softmax_fp32"], "lambda") == 1.0
    assert _train_param(boosters["softmax_fp32"], "max_depth") == 3
    assert _depths(boosters["softmax_fp32"].trees_to_dataframe()).max() <= 3  # the trees are that shallow
    assert _train_param(boosters["elementwise_fp32"], "max_depth") == recipe.max_depth == 6
    assert _train_param(recipe.booster_, "lambda") == 1.0  # the shared fallback of several families: the estimator's
    assert _train_param(recipe.booster_, "max_depth") == 6
    for b in plain.family_boosters_.values():
        assert (_train_param(b, "lambda"), _train_param(b, "max_depth")) == (1.0, 6)


def test_booster_settings_of_puts_a_familys_own_over_the_estimators(recipe):
    assert recipe.booster_settings_of("softmax_fp32") == {"max_depth": 3, "min_child_weight": 20.0, "reg_lambda": 1.0}
    assert recipe.booster_settings_of("layernorm_fp32") == {
        "max_depth": 6,
        "min_child_weight": 20.0,
        "reg_lambda": 10.0,
    }
    assert recipe.booster_settings_of("gemm") == {"max_depth": 6, "min_child_weight": 20.0, "reg_lambda": 1.0}


def test_only_the_listed_families_predictions_change(row_rows, recipe):
    fam = row_rows["family"].astype(str)
    softmax_own = {"softmax_fp32": FAMILY_BOOSTER_PARAMS["softmax_fp32"]}
    only_softmax = PipeweaveRegressor(**KW, family_booster_params=softmax_own).fit(row_rows)
    for name in ("elementwise_fp32", "layernorm_fp32"):
        rows = row_rows[fam == name]
        assert not np.allclose(recipe.predict(rows), only_softmax.predict(rows))
    soft = row_rows[fam == "softmax_fp32"]
    np.testing.assert_allclose(recipe.predict(soft), only_softmax.predict(soft), rtol=1e-6)


def test_a_one_family_fit_gives_the_shared_booster_the_familys_settings(row_rows):
    rows = row_rows[row_rows["family"].astype(str) == "layernorm_fp32"]
    model = PipeweaveRegressor(**KW, family_booster_params={"layernorm_fp32": {"reg_lambda": 30.0}}).fit(rows)
    assert _train_param(model.booster_, "lambda") == 30.0


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (
            {"elementwise_fp32": {"reg_lambda": -1.0}},
            r"\['elementwise_fp32'\]\['reg_lambda'\] must be a finite number >= 0, got -1",
        ),
        ({"elementwise_fp32": {"reg_lambda": float("nan")}}, r"must be a finite number >= 0"),
        ({"elementwise_fp32": {"reg_lambda": "10"}}, r"must be a finite number >= 0, got '10'"),
        ({"softmax_fp32": {"max_depth": 2.5}}, r"\['max_depth'\] must be a whole number >= 1, got 2.5"),
        ({"softmax_fp32": {"max_depth": 0}}, r"must be a whole number >= 1"),
        ({"softmax_fp32": {"eta": 0.3}}, r"names unknown settings \['eta'\]"),
        ({"softmax_fp32": 4}, r"family_booster_params\['softmax_fp32'\] must map setting names to values, got 4"),
        ({"no_such_family": {"max_depth": 4}}, r"no_such_family"),
        ([("softmax_fp32", {"max_depth": 4})], r"family_booster_params must map family names to booster settings"),
    ],
)
def test_bad_family_booster_params_are_a_clear_error(row_rows, bad, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**KW, family_booster_params=bad).fit(row_rows)


def test_the_setting_survives_a_roundtrip(row_rows, tmp_path):
    model = PipeweaveRegressor(**KW, family_booster_params={"softmax_fp32": {"reg_lambda": 3.0}}).fit(row_rows)
    path = tmp_path / "m.ubj"
    save_model(model, path)
    back = load_model(path)
    assert back.family_booster_params == {"softmax_fp32": {"reg_lambda": 3.0}}
    np.testing.assert_allclose(back.predict(row_rows), model.predict(row_rows), rtol=1e-6)
