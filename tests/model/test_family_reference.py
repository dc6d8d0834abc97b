"""Per-family reference times (``family_reference``): decode attention on the warm-L2 replay envelope.

Real rows: the shared GEMM / moe_w13 rows plus ~100 decode and ~100 prefill attention rows per GPU of
aiconfigurator (bf16), featurized.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError, SchemaMismatchError
from pipeweave.model import (
    FAMILY_REFERENCE,
    REFERENCES,
    PipeweaveRegressor,
    load_model,
    read_stamp,
    save_model,
)


@pytest.fixture(scope="module")
def attn_frame(data_dir, small_frame):
    import pandas as pd

    from pipeweave.model import ensure_features
    from pipeweave.sources import load_profiles

    att = load_profiles(data_dir, families=["attention_generation", "attention_context"], dtypes=["bfloat16"])
    att = att[att["source"] == "aiconfigurator"]
    att = att.groupby(["gpu", "family"], observed=True).head(100).reset_index(drop=True)
    return pd.concat([small_frame, ensure_features(att)], ignore_index=True)


KW = {"n_estimators": 10, "n_jobs": 1, "companion": {}, "seen_gpu": {}}  # the hybrid alone: its formula is checked


def test_the_recipe_puts_decode_on_the_warm_envelope():
    assert FAMILY_REFERENCE == {"attention_generation": "warm_envelope"}
    assert REFERENCES["warm_envelope"] == "t_env_warm_us"
    assert PipeweaveRegressor().reference_of("attention_generation") == "warm_envelope"
    assert PipeweaveRegressor().reference_of("gemm") == "envelope"
    assert PipeweaveRegressor(family_reference={}).reference_of("attention_generation") == "envelope"


def test_decode_rows_are_predicted_from_the_warm_envelope(attn_frame):
    model = PipeweaveRegressor(**KW).fit(attn_frame)
    assert model.family_references_["attention_generation"] == "warm_envelope"
    assert model.family_references_["attention_context"] == "envelope"
    assert model.shared_reference_ == "envelope"
    dec = attn_frame[attn_frame["family"] == "attention_generation"]
    warm = dec["t_env_warm_us"].to_numpy()
    assert (warm < dec["t_env_us"].to_numpy()).any()  # some KV caches fit in L2
    expect = np.maximum(warm * np.exp(model.predict_log_ratio(dec)), dec["t_lower_us"].to_numpy())
    np.testing.assert_allclose(model.predict(dec), expect, rtol=1e-6)
    other = attn_frame[attn_frame["family"] == "gemm"]
    expect = np.maximum(other["t_env_us"].to_numpy() * np.exp(model.predict_log_ratio(other)), other["t_lower_us"])
    np.testing.assert_allclose(model.predict(other), expect, rtol=1e-6)


def test_a_family_with_its_own_reference_gets_its_own_booster(attn_frame):
    warm = PipeweaveRegressor(**KW).fit(attn_frame)
    cold = PipeweaveRegressor(**KW, family_reference={}).fit(attn_frame)
    # both attention boosters train on the same rows (FAMILY_BOOSTER_ROWS): one booster unless the references differ
    assert cold.family_boosters_["attention_generation"] is cold.family_boosters_["attention_context"]
    assert warm.family_boosters_["attention_generation"] is not warm.family_boosters_["attention_context"]
    # the prefill booster is the same fit either way; decode's target changed
    rows = attn_frame[attn_frame["family"] == "attention_context"]
    np.testing.assert_allclose(warm.predict(rows), cold.predict(rows), rtol=1e-6)
    dec = attn_frame[attn_frame["family"] == "attention_generation"]
    assert not np.allclose(warm.predict(dec), cold.predict(dec))


def test_one_family_fit_uses_its_reference_for_the_shared_booster(attn_frame):
    dec = attn_frame[attn_frame["family"] == "attention_generation"]
    model = PipeweaveRegressor(**KW).fit(dec)
    assert model.shared_reference_ == "warm_envelope" and not model.family_boosters_
    expect = np.maximum(dec["t_env_warm_us"].to_numpy() * np.exp(model.predict_log_ratio(dec)), dec["t_lower_us"])
    np.testing.assert_allclose(model.predict(dec), expect, rtol=1e-6)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"attention_generation": "hot"}, "family_reference\\['attention_generation'\\] must be one of"),
        ({"not_a_family": "envelope"}, "unknown families \\['not_a_family'\\]"),
        ("warm_envelope", "must map family names to references"),
    ],
)
def test_bad_family_reference_is_a_clear_error(attn_frame, bad, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**KW, family_reference=bad).fit(attn_frame)


def test_references_survive_a_roundtrip(attn_frame, tmp_path):
    model = PipeweaveRegressor(**KW).fit(attn_frame)
    path = save_model(model, tmp_path / "m.ubj")
    assert read_stamp(path)["references"]["families"]["attention_generation"] == "warm_envelope"
    loaded = load_model(path)
    assert loaded.family_references_ == model.family_references_
    np.testing.assert_allclose(loaded.predict(attn_frame), model.predict(attn_frame), rtol=1e-6)


def test_a_file_from_before_the_option_predicts_every_family_from_the_envelope(attn_frame, tmp_path, save_with_stamp):
    model = PipeweaveRegressor(**KW, family_reference={}).fit(attn_frame)

    def older(stamp):  # a stamp written before the option existed lacks both keys
        stamp.pop("references")
        stamp["params"] = {k: v for k, v in stamp["params"].items() if k != "family_reference"}
        return stamp

    loaded = load_model(save_with_stamp(model, tmp_path / "older.ubj", older))
    assert loaded.reference_of("attention_generation") == "envelope"  # not the recipe's: trained on the envelope
    np.testing.assert_allclose(loaded.predict(attn_frame), model.predict(attn_frame), rtol=1e-6)


def test_a_stamp_naming_an_unknown_reference_is_refused(attn_frame, tmp_path, save_with_stamp):
    model = PipeweaveRegressor(**KW).fit(attn_frame)

    def damaged(stamp):
        return {**stamp, "references": {"shared": "envelope", "families": {"attention_generation": "lukewarm"}}}

    path = save_with_stamp(model, tmp_path / "bad.ubj", damaged)
    with pytest.raises(SchemaMismatchError, match="unknown references \\['lukewarm'\\]"):
        load_model(path)
