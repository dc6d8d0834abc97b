"""Attention-backend one-hots measured on too few GPUs (``min_backend_gpus``) are held at 0.

Real rows: 80 seeded prefill-attention rows (aiconfigurator, bf16) per GPU of H100-SXM and L40S
(FlashAttention), RTX PRO 6000 (SGLang's Triton kernels) and B200 (its ``trtllm_mha`` rows only), so
``flash_attention`` spans two GPUs and ``triton`` and ``trtllm_mha`` one each.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError
from pipeweave.model import MIN_BACKEND_GPUS, PipeweaveRegressor, load_model, save_model

KW = {"n_estimators": 8, "n_jobs": 1, "companion": {}, "seen_gpu": {}}


@pytest.fixture(scope="module")
def rows(load_real_rows):
    df = load_real_rows(["attention_context"], ["H100-SXM", "L40S", "RTX-PRO-6000-S", "B200"], 400)
    keep = (df["gpu"] != "B200") | (df["backend"] == "trtllm_mha")
    df = df[keep.to_numpy()]
    return df.groupby("gpu", observed=True).sample(n=80, random_state=0).reset_index(drop=True)


@pytest.fixture(scope="module")
def fitted(rows):
    """(min_backend_gpus=2, min_backend_gpus=1), same seed."""
    return PipeweaveRegressor(**KW, min_backend_gpus=2).fit(rows), PipeweaveRegressor(**KW, min_backend_gpus=1).fit(
        rows
    )


def _split_features(model):
    used = set()
    for booster in [model.booster_, *model.family_boosters_.values()]:
        used |= set(booster.get_score(importance_type="weight"))
    return used


def test_the_rows_are_what_the_test_needs(rows):
    per = rows.groupby("backend", observed=True)["gpu"].nunique().to_dict()
    assert per == {"flash_attention": 2, "triton": 1, "trtllm_mha": 1}


def test_backends_of_one_gpu_are_listed_and_never_split_on(fitted, rows):
    two, one = fitted
    assert sorted(two.unsupported_backends_) == ["triton", "trtllm_mha"]
    assert one.unsupported_backends_ == ()
    assert not {"backend_triton", "backend_trtllm_mha"} & _split_features(two)
    # the training matrix and the prediction matrix hold them at 0 on every row
    X = two.feature_matrix(rows, two.feature_names_)
    for b in ("triton", "trtllm_mha"):
        assert (X[:, two.feature_names_.index(f"backend_{b}")] == 0.0).all()
    j = two.feature_names_.index("backend_flash_attention")
    assert set(np.unique(X[:, j])) == {0.0, 1.0}  # the supported one-hot is untouched
    X1 = one.feature_matrix(rows, one.feature_names_)
    assert (X1[:, one.feature_names_.index("backend_triton")] == 1.0).sum() == 80


def test_the_recipe_default(rows):
    assert isinstance(MIN_BACKEND_GPUS, int) and MIN_BACKEND_GPUS >= 1
    assert PipeweaveRegressor().min_backend_gpus == MIN_BACKEND_GPUS


def test_the_list_survives_save_and_load(fitted, rows, tmp_path):
    two, _ = fitted
    path = save_model(two, tmp_path / "m.ubj")
    back = load_model(path)
    assert back.unsupported_backends_ == two.unsupported_backends_
    np.testing.assert_allclose(back.predict(rows), two.predict(rows), rtol=1e-6)


def test_a_file_written_before_the_option_loads_with_none_held(fitted, rows, tmp_path, save_with_stamp):
    _, one = fitted

    def older(stamp):
        stamp.pop("unsupported_backends")
        stamp["params"].pop("min_backend_gpus")
        return stamp

    back = load_model(save_with_stamp(one, tmp_path / "old.ubj", older))
    assert back.unsupported_backends_ == ()
    np.testing.assert_allclose(back.predict(rows), one.predict(rows), rtol=1e-6)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_bad_min_backend_gpus_is_named(rows, bad):
    with pytest.raises(
        DataError, match=r"min_backend_gpus must be an integer >= 1, got " + repr(bad).replace(".", r"\.")
    ):
        PipeweaveRegressor(**KW, min_backend_gpus=bad).fit(rows)
