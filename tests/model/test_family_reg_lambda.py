"""Per-family L2 penalty on the leaf values of a booster (PipeweaveRegressor(family_reg_lambda=...)): element-wise
and layernorm at 10 in the recipe. Real NeuSight rows (element-wise, layernorm and softmax on V100 and T4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipeweave import DataError
from pipeweave.model import FAMILY_REG_LAMBDA, PipeweaveRegressor, load_model, save_model

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
    return PipeweaveRegressor(**KW, family_reg_lambda={}).fit(row_rows)


def _penalty(booster) -> float:
    """The L2 penalty a booster was trained with (its XGBoost config)."""
    return float(json.loads(booster.save_config())["learner"]["gradient_booster"]["tree_train_param"]["lambda"])


def test_the_recipe_shrinks_the_elementwise_and_layernorm_boosters(recipe, plain):
    assert FAMILY_REG_LAMBDA == {"elementwise_fp32": 10.0, "layernorm_fp32": 10.0}
    assert recipe.family_reg_lambdas() == FAMILY_REG_LAMBDA
    assert _penalty(recipe.family_boosters_["elementwise_fp32"]) == 10.0
    assert _penalty(recipe.family_boosters_["layernorm_fp32"]) == 10.0
    assert _penalty(recipe.family_boosters_["softmax_fp32"]) == recipe.reg_lambda == 1.0
    assert _penalty(recipe.booster_) == 1.0  # the shared fallback of several families keeps reg_lambda
    assert all(_penalty(b) == 1.0 for b in plain.family_boosters_.values())


def test_only_the_listed_families_predictions_change(row_rows, recipe, plain):
    fam = row_rows["family"].astype(str)
    soft = row_rows[fam == "softmax_fp32"]
    np.testing.assert_allclose(recipe.predict(soft), plain.predict(soft), rtol=1e-6)
    for name in ("elementwise_fp32", "layernorm_fp32"):
        rows = row_rows[fam == name]
        assert not np.allclose(recipe.predict(rows), plain.predict(rows))


def test_a_one_family_fit_gives_the_shared_booster_the_familys_penalty(row_rows):
    rows = row_rows[row_rows["family"].astype(str) == "layernorm_fp32"]
    model = PipeweaveRegressor(**KW, family_reg_lambda={"layernorm_fp32": 30.0}).fit(rows)
    assert _penalty(model.booster_) == 30.0


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"elementwise_fp32": -1.0}, r"family_reg_lambda\['elementwise_fp32'\] must be a finite number >= 0, got -1"),
        ({"elementwise_fp32": float("nan")}, r"must be a finite number >= 0"),
        ({"elementwise_fp32": "10"}, r"must be a finite number >= 0, got '10'"),
        ({"elementwise_fp32": True}, r"must be a finite number >= 0"),
        ({"no_such_family": 10.0}, r"no_such_family"),
        ([("elementwise_fp32", 10.0)], r"family_reg_lambda must map family names to L2 penalties"),
    ],
)
def test_bad_family_reg_lambda_is_a_clear_error(row_rows, bad, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**KW, family_reg_lambda=bad).fit(row_rows)


def test_the_setting_survives_a_roundtrip(row_rows, tmp_path):
    model = PipeweaveRegressor(**KW, family_reg_lambda={"softmax_fp32": 3.0}).fit(row_rows)
    path = tmp_path / "m.ubj"
    save_model(model, path)
    back = load_model(path)
    assert back.family_reg_lambda == {"softmax_fp32": 3.0}
    np.testing.assert_allclose(back.predict(row_rows), model.predict(row_rows), rtol=1e-6)
