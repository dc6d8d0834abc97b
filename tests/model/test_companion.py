"""Crude companion boosters (``companion``): a family's rows blended with an XGBoost on the crude view.

Real rows: the shared ~3,000 GEMM / moe_w13 rows of ``small_frame`` (aiconfigurator and fork sample, bf16).
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError, SchemaMismatchError
from pipeweave.frontend import FAMILIES, crude_matrix, crude_matrix_names
from pipeweave.model import (
    FAMILY_COMPANION,
    PipeweaveRegressor,
    companion_family,
    load_model,
    predict_in_place,
    read_stamp,
    save_model,
)

KW = {
    "n_estimators": 10,
    "n_jobs": 1,
    "seen_gpu": {},
}  # the companion alone (tests/model/test_seen_gpu.py: the other blend)


@pytest.fixture(scope="module")
def fitted(small_frame):
    """(the hybrid alone, the same with a GEMM companion of weight 0.3), same seed."""
    alone = PipeweaveRegressor(**KW, companion={}).fit(small_frame)
    blended = PipeweaveRegressor(**KW, companion={"gemm": 0.3}).fit(small_frame)
    return alone, blended


def test_the_recipe_blends_the_tensor_core_families():
    assert {companion_family(k) for k in FAMILY_COMPANION} <= set(FAMILIES)
    assert all(0.0 < w < 1.0 for w in FAMILY_COMPANION.values())
    assert PipeweaveRegressor().companion_weights() == FAMILY_COMPANION
    assert PipeweaveRegressor(companion={}).companion_weights() == {}
    assert PipeweaveRegressor(companion={"gemm": 0.0, "moe_w13": 0.2}).companion_weights() == {"moe_w13": 0.2}


@pytest.mark.parametrize(
    ("companion", "match"),
    [
        ({"gemm": 1.0}, r"companion\['gemm'\] must be a blend weight in \[0, 1\), got 1.0"),
        ({"gemm": -0.1}, r"got -0.1"),
        ({"gemm": "high"}, r"got 'high'"),
        ({"gemm": True}, r"got True"),
        ({"not_a_family": 0.2}, r"companion names unknown families \['not_a_family'\]"),
        ({"not_a_family:fp8": 0.2}, r"companion names unknown families \['not_a_family'\]"),
        ({"gemm:fp9": 0.2}, r"companion names unknown dtypes in \['gemm:fp9'\]"),
        ({"gemm:fp8": 1.5}, r"companion\['gemm:fp8'\] must be a blend weight in \[0, 1\), got 1.5"),
        ("gemm", r"companion must map family names to blend weights"),
    ],
)
def test_bad_companion_values_are_named(small_frame, companion, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**KW, companion=companion).fit(small_frame.head(50))


def test_the_blend_is_geometric_and_only_on_the_listed_family(small_frame, fitted):
    alone, blended = fitted
    assert blended.companion_weights_ == {"gemm": 0.3} and list(blended.companion_boosters_) == ["gemm"]
    gemm = small_frame[small_frame["family"] == "gemm"]
    hybrid = gemm["t_env_us"].to_numpy() * np.exp(blended.predict_log_ratio(gemm))
    Xc, t_wq = crude_matrix(gemm)
    assert Xc.shape[1] == len(crude_matrix_names())
    comp = t_wq * np.exp(predict_in_place(blended.companion_boosters_["gemm"], Xc, 1))
    expect = np.maximum(np.exp(0.7 * np.log(hybrid) + 0.3 * np.log(comp)), gemm["t_lower_us"].to_numpy())
    np.testing.assert_allclose(blended.predict(gemm), expect, rtol=1e-6)
    assert not np.allclose(blended.predict(gemm), alone.predict(gemm))  # the companion moved them
    # the hybrid boosters are the same fit; moe_w13 has no companion, so its rows are unchanged
    np.testing.assert_allclose(blended.predict_log_ratio(gemm), alone.predict_log_ratio(gemm), rtol=1e-6)
    w13 = small_frame[small_frame["family"] == "moe_w13"]
    np.testing.assert_allclose(blended.predict(w13), alone.predict(w13), rtol=1e-6)


def test_raw_rows_take_the_same_blend_as_featurized_rows(small_frame, fitted):
    _, blended = fitted
    gemm = small_frame[small_frame["family"] == "gemm"].head(40)
    raw = gemm[["source", "gpu", "family", "dtype", "m", "n", "k"]].copy()
    np.testing.assert_allclose(blended.predict(raw), blended.predict(gemm), rtol=1e-6)


def test_companions_round_trip_through_the_model_file(small_frame, fitted, tmp_path):
    _, blended = fitted
    path = save_model(blended, tmp_path / "m.ubj")
    assert read_stamp(path)["companions"] == {"gemm": 0.3}
    loaded = load_model(path)
    assert loaded.companion_weights_ == {"gemm": 0.3}
    np.testing.assert_allclose(loaded.predict(small_frame), blended.predict(small_frame), rtol=1e-6)


def test_a_file_from_before_the_option_predicts_without_companions(small_frame, fitted, tmp_path, save_with_stamp):
    alone, _ = fitted

    def older(stamp):  # a stamp written before the option existed lacks the field and the parameter
        stamp.pop("companions")
        stamp["params"] = {k: v for k, v in stamp["params"].items() if k != "companion"}
        return stamp

    loaded = load_model(save_with_stamp(alone, tmp_path / "older.ubj", older))
    assert loaded.companion_weights_ == {}
    np.testing.assert_allclose(loaded.predict(small_frame), alone.predict(small_frame), rtol=1e-6)


def test_a_damaged_companions_field_is_refused(fitted, tmp_path, save_with_stamp):
    _, blended = fitted
    path = save_with_stamp(blended, tmp_path / "bad.ubj", lambda s: {**s, "companions": {"gemm": 2.0}})
    with pytest.raises(SchemaMismatchError, match="malformed companions field"):
        load_model(path)


def test_rows_without_the_spec_columns_get_them_from_the_front_end(small_frame, fitted):
    """A reduced feature frame (no gpu_* spec columns, as diagnose builds) blends like the full one."""
    _, blended = fitted
    gemm = small_frame[small_frame["family"] == "gemm"].head(40)
    reduced = gemm.drop(columns=["gpu_sm_count", "gpu_dram_bw_gbps", "gpu_l2_mib"])
    np.testing.assert_allclose(blended.predict(reduced), blended.predict(gemm), rtol=1e-6)


@pytest.fixture(scope="module")
def elementwise_frame(load_real_rows):
    """~450 real NeuSight FP32 element-wise rows (three GPUs), featurized."""
    return load_real_rows(["elementwise_fp32"], ["T4", "V100-PCIe", "P100-PCIe"], 150)


def test_row_kernel_companions_predict_raw_rows_like_featurized_rows(elementwise_frame):
    """The crude view of a row kernel reads the front-end's compulsory bytes: the raw-row hot path must
    hand them to the companion (it once passed only the spec columns and raised KeyError)."""
    model = PipeweaveRegressor(**KW, companion={"elementwise_fp32": 0.35}).fit(elementwise_frame)
    raw = elementwise_frame[["source", "gpu", "family", "dtype", "num_tokens", "hidden_size", "op"]].copy()
    pred = model.predict(raw)
    assert np.isfinite(pred).all() and (pred > 0).all()
    np.testing.assert_allclose(pred, model.predict(elementwise_frame), rtol=1e-6)
    alone = PipeweaveRegressor(**KW, companion={}).fit(elementwise_frame)
    assert not np.allclose(pred, alone.predict(raw))  # the companion moved them


def test_flashinfer_companions_predict_raw_rows_like_featurized_rows(load_real_rows):
    """Real FlashInfer rows (fork sample, ~300 on three GPUs): the crude view parses the ragged lengths
    from the raw rows and reads the front-end's FLOP and byte counts on the hot path."""
    frame = load_real_rows(["attention_flashinfer"], ["A100-SXM", "H100-SXM", "L40"], 100)
    model = PipeweaveRegressor(**KW, companion={"attention_flashinfer": 0.2}).fit(frame)
    raw_cols = ["source", "gpu", "family", "dtype", "batch_size", "num_heads", "num_key_value_heads", "head_dim"]
    raw = frame[[*raw_cols, "q_lengths", "kv_lengths", "backend"]].copy()
    pred = model.predict(raw)
    assert np.isfinite(pred).all() and (pred > 0).all()
    np.testing.assert_allclose(pred, model.predict(frame), rtol=1e-6)


def test_a_dtype_key_sets_the_weight_of_that_dtype_rows(small_frame, fitted, tmp_path):
    """``family:dtype`` keys: the family's one companion booster, blended with the dtype's own weight."""
    _, blended = fitted  # {"gemm": 0.3}
    gemm = small_frame[small_frame["family"] == "gemm"]  # bf16 rows
    only_dtype = PipeweaveRegressor(**KW, companion={"gemm:bfloat16": 0.3}).fit(small_frame)
    override = PipeweaveRegressor(**KW, companion={"gemm": 0.1, "gemm:bfloat16": 0.3}).fit(small_frame)
    other = PipeweaveRegressor(**KW, companion={"gemm": 0.3, "gemm:fp8": 0.6}).fit(small_frame)
    assert list(only_dtype.companion_boosters_) == ["gemm"]  # one booster per family, whatever the keys
    for model in (only_dtype, override, other):  # bf16 rows at 0.3 in all three
        np.testing.assert_allclose(model.predict(gemm), blended.predict(gemm), rtol=1e-6)
    path = save_model(override, tmp_path / "d.ubj")
    assert read_stamp(path)["companions"] == {"gemm": 0.1, "gemm:bfloat16": 0.3}
    np.testing.assert_allclose(load_model(path).predict(gemm), blended.predict(gemm), rtol=1e-6)
