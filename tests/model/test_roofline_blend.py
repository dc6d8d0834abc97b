"""The roofline blend (``roofline_blend``): a family's rows blended with the calibrated roofline.

Real rows: ~450 NeuSight FP32 element-wise rows on three GPUs (``load_real_rows``).
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError, SchemaMismatchError
from pipeweave.frontend import FAMILIES, calibrated_roofline_us
from pipeweave.model import (
    FAMILY_ROOFLINE_BLEND,
    ROOFLINE_GENERATION_GATE,
    PipeweaveRegressor,
    companion_family,
    ensure_features,
    load_model,
    read_stamp,
    save_model,
)

KW = {"n_estimators": 10, "n_jobs": 1, "seen_gpu": {}, "companion": {}}


@pytest.fixture(scope="module")
def rows(load_real_rows):
    return load_real_rows(["elementwise_fp32"], ["T4", "V100-PCIe", "P100-PCIe"], 150)


@pytest.fixture(scope="module")
def fitted(rows):
    """(the model alone, the same with the roofline at weight 0.3 on element-wise rows), same seed."""
    alone = PipeweaveRegressor(**KW, roofline_blend={}).fit(rows)
    blended = PipeweaveRegressor(**KW, roofline_blend={"elementwise_fp32": 0.3}).fit(rows)
    return alone, blended


def test_the_recipe_blends_only_known_families_with_small_weights():
    assert {companion_family(k) for k in FAMILY_ROOFLINE_BLEND} <= set(FAMILIES)
    # a gate on an unblended family means nothing
    assert {companion_family(k) for k in ROOFLINE_GENERATION_GATE} <= set(FAMILY_ROOFLINE_BLEND)
    assert PipeweaveRegressor().roofline_gated_families() == ROOFLINE_GENERATION_GATE
    assert all(0.0 < w <= 0.5 for w in FAMILY_ROOFLINE_BLEND.values())  # a prior that tempers, never dominates
    assert PipeweaveRegressor().roofline_blend_weights() == FAMILY_ROOFLINE_BLEND
    assert PipeweaveRegressor(roofline_blend={"softmax_fp32": 0.0}).roofline_blend_weights() == {}


def test_the_blend_is_geometric_with_the_calibrated_roofline(rows, fitted):
    alone, blended = fitted
    lower = rows["t_lower_us"].to_numpy(dtype=float)
    roof = calibrated_roofline_us(rows)
    assert (roof >= lower).all()  # so the blend of two values above the floor stays above it
    expected = np.maximum(np.exp(0.7 * np.log(alone.predict(rows)) + 0.3 * np.log(roof)), lower)
    np.testing.assert_allclose(blended.predict(rows), expected, rtol=1e-6)
    # the raw-row hot path (feature arrays, no featurized frame) blends the same way
    raw = rows[["family", "gpu", "dtype", "op", "num_tokens", "hidden_size"]]
    np.testing.assert_allclose(blended.predict(raw), blended.predict(rows), rtol=1e-6)


def test_a_family_dtype_key_weighs_that_dtypes_rows_alone(rows, fitted):
    alone, blended = fitted
    # every row here is float32: the float32 key overrides the family's weight on all of them ...
    keyed = PipeweaveRegressor(**KW, roofline_blend={"elementwise_fp32": 0.1, "elementwise_fp32:float32": 0.3}).fit(
        rows
    )
    np.testing.assert_allclose(keyed.predict(rows), blended.predict(rows), rtol=1e-6)
    assert keyed.roofline_blend_ == {"elementwise_fp32": 0.1, "elementwise_fp32:float32": 0.3}
    # ... and a key of another dtype weighs none of them
    other = PipeweaveRegressor(**KW, roofline_blend={"elementwise_fp32:bfloat16": 0.3}).fit(rows)
    np.testing.assert_allclose(other.predict(rows), alone.predict(rows), rtol=1e-6)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"softmax_fp32": 1.0}, r"roofline_blend\['softmax_fp32'\] must be a blend weight in \[0, 1\), got 1.0"),
        ({"softmax_fp32:fp9": 0.1}, r"roofline_blend names unknown dtypes in \['softmax_fp32:fp9'\]"),
        ({"softmax_fp32": "x"}, r"got 'x'"),
        ({"softmax": 0.1}, r"roofline_blend names unknown families \['softmax'\]"),
    ],
)
def test_bad_roofline_blend_values_are_named(rows, value, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**KW, roofline_blend=value).fit(rows)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("attention_context", r"roofline_generation_gate must be a tuple of family names, got 'attention_context'"),
        (("softmax",), r"roofline_generation_gate names unknown families \['softmax'\]"),
        (("softmax:fp32",), r"roofline_generation_gate names unknown families \['softmax'\]"),
        (("gemm:fp9",), r"roofline_generation_gate names unknown dtypes in \['gemm:fp9'\]"),
    ],
)
def test_bad_generation_gates_are_named_before_any_fit(rows, value, match):
    with pytest.raises(DataError, match=match):
        PipeweaveRegressor(**KW, roofline_generation_gate=value).fit(rows)


def test_the_blend_round_trips_and_old_or_damaged_files_are_handled(rows, fitted, tmp_path, save_with_stamp):
    alone, blended = fitted
    path = save_model(blended, tmp_path / "m.ubj")
    assert read_stamp(path)["roofline_blend"] == {"elementwise_fp32": 0.3}
    loaded = load_model(path)
    np.testing.assert_allclose(loaded.predict(rows), blended.predict(rows), rtol=1e-6)

    def older(stamp):  # written before the option: no field, no parameter
        stamp.pop("roofline_blend")
        stamp["params"] = {k: v for k, v in stamp["params"].items() if k != "roofline_blend"}
        return stamp

    old = load_model(save_with_stamp(alone, tmp_path / "older.ubj", older))
    assert old.roofline_blend_ == {}
    np.testing.assert_allclose(old.predict(rows), alone.predict(rows), rtol=1e-6)
    bad = save_with_stamp(blended, tmp_path / "bad.ubj", lambda s: {**s, "roofline_blend": {"elementwise_fp32": 1.5}})
    with pytest.raises(SchemaMismatchError, match="malformed roofline_blend field"):
        load_model(bad)


def test_a_reduced_frame_gets_the_roofline_columns_from_the_front_end(rows, fitted):
    """Rows without the spec columns the roofline reads (as diagnose builds them) blend like the full rows."""
    _, blended = fitted
    reduced = rows.drop(columns=["gpu_sm_count", "gpu_dram_bw_gbps"])
    np.testing.assert_allclose(blended.predict(reduced), blended.predict(rows), rtol=1e-6)


def test_rows_of_a_gpu_the_family_trained_on_are_left_to_the_model(rows, tmp_path, save_with_stamp):
    """With 150 training rows per GPU and ``seen_gpu_min_rows=100`` the three GPUs count as trained: their
    rows are the model alone, while a GPU without training rows (A100, same launches) is still blended."""
    kw = {**KW, "seen_gpu_min_rows": 100}
    alone = PipeweaveRegressor(**kw, roofline_blend={}).fit(rows)
    blended = PipeweaveRegressor(**kw, roofline_blend={"elementwise_fp32": 0.3}).fit(rows)
    assert blended.roofline_trained_gpus_ == {"elementwise_fp32": sorted(set(rows["gpu"]))}
    np.testing.assert_allclose(blended.predict(rows), alone.predict(rows), rtol=1e-6)
    other = ensure_features(
        rows[["family", "gpu", "dtype", "op", "num_tokens", "hidden_size"]].assign(gpu="A100-PCIe-40GB")
    )
    expected = np.exp(0.7 * np.log(alone.predict(other)) + 0.3 * np.log(calibrated_roofline_us(other)))
    np.testing.assert_allclose(blended.predict(other), np.maximum(expected, other["t_lower_us"]), rtol=1e-6)
    assert not np.allclose(blended.predict(other), alone.predict(other))
    # the list round-trips; a file written before it blends every row, as it did
    path = save_model(blended, tmp_path / "m.ubj")
    assert read_stamp(path)["roofline_trained_gpus"] == blended.roofline_trained_gpus_
    np.testing.assert_allclose(load_model(path).predict(rows), alone.predict(rows), rtol=1e-6)

    def older_stamp(stamp):  # written before both lists: no field
        stamp.pop("roofline_trained_gpus")
        stamp.pop("roofline_trained_generations")
        return stamp

    older = load_model(save_with_stamp(blended, tmp_path / "older.ubj", older_stamp))
    assert older.roofline_trained_gpus_ == {} and older.roofline_trained_generations_ == {}
    assert not np.allclose(older.predict(rows), alone.predict(rows))
    for field, value in (("roofline_trained_gpus", {"x": "T4"}), ("roofline_trained_generations", {"x": [1]})):
        bad = save_with_stamp(blended, tmp_path / "bad.ubj", lambda s, f=field, v=value: {**s, f: v})
        with pytest.raises(SchemaMismatchError, match=f"malformed {field} field"):
            load_model(bad)


def test_a_new_gpu_of_a_trained_generation_is_left_to_the_model_for_gated_families(rows, tmp_path, save_with_stamp):
    """With element-wise in ``roofline_generation_gate``: P4 (no training rows) shares Pascal with the trained
    P100, so it is the model alone; A100 (Ampere, no training rows of that generation) is blended. Without the
    gate (the recipe for element-wise) P4 is blended. A file written before the generation list blends P4's
    rows as it did."""
    kw = {**KW, "seen_gpu_min_rows": 100, "roofline_generation_gate": ("elementwise_fp32",)}
    alone = PipeweaveRegressor(**kw, roofline_blend={}).fit(rows)
    blended = PipeweaveRegressor(**kw, roofline_blend={"elementwise_fp32": 0.3}).fit(rows)
    assert blended.roofline_trained_generations_ == {"elementwise_fp32": ["pascal", "turing", "volta"]}
    ungated = PipeweaveRegressor(**{**kw, "roofline_generation_gate": ()}, roofline_blend={"elementwise_fp32": 0.3})
    assert ungated.fit(rows).roofline_trained_generations_ == {}
    launches = rows[["family", "gpu", "dtype", "op", "num_tokens", "hidden_size"]]
    p4 = ensure_features(launches.assign(gpu="P4"))
    np.testing.assert_allclose(blended.predict(p4), alone.predict(p4), rtol=1e-6)
    a100 = ensure_features(launches.assign(gpu="A100-PCIe-40GB"))
    assert not np.allclose(blended.predict(a100), alone.predict(a100))
    assert not np.allclose(ungated.predict(p4), alone.predict(p4))
    # a row's own generation column decides over the catalog (a user's rows of a GPU the catalog lacks)
    told = ensure_features(launches.assign(gpu="P4")).assign(generation="ampere")
    assert not np.allclose(blended.predict(told), alone.predict(told))
    path = save_model(blended, tmp_path / "m.ubj")
    assert read_stamp(path)["roofline_trained_generations"] == blended.roofline_trained_generations_
    np.testing.assert_allclose(load_model(path).predict(p4), alone.predict(p4), rtol=1e-6)
    older = load_model(
        save_with_stamp(blended, tmp_path / "older.ubj", lambda s: s.pop("roofline_trained_generations") and s)
    )
    assert not np.allclose(older.predict(p4), alone.predict(p4))


def test_a_family_dtype_gate_key_gates_that_dtypes_rows_only(rows):
    """A ``family:dtype`` gate key counts and gates the family's rows of that dtype: the element-wise rows are float32,
    so ``elementwise_fp32:float32`` leaves P4 (new GPU, trained Pascal) to the model, as the family key does, while
    ``elementwise_fp32:bfloat16`` trains no generation and P4 is blended."""
    kw = {**KW, "seen_gpu_min_rows": 100, "roofline_blend": {"elementwise_fp32": 0.3}}
    alone = PipeweaveRegressor(**{**kw, "roofline_blend": {}}).fit(rows)
    fp32 = PipeweaveRegressor(**kw, roofline_generation_gate=("elementwise_fp32:float32",)).fit(rows)
    half = PipeweaveRegressor(**kw, roofline_generation_gate=("elementwise_fp32:bfloat16",)).fit(rows)
    assert fp32.roofline_trained_generations_ == {"elementwise_fp32:float32": ["pascal", "turing", "volta"]}
    assert half.roofline_trained_generations_ == {"elementwise_fp32:bfloat16": []}
    p4 = ensure_features(rows[["family", "gpu", "dtype", "op", "num_tokens", "hidden_size"]].assign(gpu="P4"))
    np.testing.assert_allclose(fp32.predict(p4), alone.predict(p4), rtol=1e-6)
    assert not np.allclose(half.predict(p4), alone.predict(p4))
