"""Error bands: the quantile table (hand-made ratios, labelled), its validation, the per-row lookup, and a
model's bands end to end on real rows (``small_frame``: ~3,000 bf16 GEMM / moe_w13 rows of the shared data).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError, SchemaMismatchError
from pipeweave.evaluation import estimate_error_bands
from pipeweave.model import (
    BAND_LEVELS,
    PipeweaveRegressor,
    band_bounds,
    band_summary,
    band_table,
    check_coverage,
    check_error_bands,
    load_model,
    read_stamp,
    save_model,
    weighted_quantiles,
)

KW = {"n_estimators": 5, "n_jobs": 1, "companion": {}, "seen_gpu": {}}


# --------------------------------------------------------------------------- pure functions (hand-made inputs)
def test_weighted_quantiles_equal_weights_are_hazen_quantiles():
    v = np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6])
    levels = [0.05, 0.25, 0.5, 0.9]
    assert np.allclose(weighted_quantiles(v, np.ones(6), levels), np.quantile(v, levels, method="hazen"))


def test_weighted_quantiles_follow_the_weights():
    # value 1 weighs 3, value 2 weighs 1: the CDF is 3/8 at 1 and 7/8 at 2
    got = weighted_quantiles([1.0, 2.0], [3.0, 1.0], [0.2, 0.375, 0.625, 0.875, 0.95])
    assert np.allclose(got, [1.0, 1.0, 1.5, 2.0, 2.0])
    with pytest.raises(DataError, match="one weight per value"):
        weighted_quantiles([1.0, 2.0], [1.0], [0.5])
    with pytest.raises(DataError, match="non-negative weights"):
        weighted_quantiles([1.0, np.nan], [1.0, 1.0], [0.5])


def _rows(spec):
    """Hand-made held-out predictions: (family, dtype, group, n rows, measured / predicted)."""
    parts = [
        pd.DataFrame(
            {"family": f, "dtype": d, "generation": g, "latency_us": r * 10.0, "pred_us": 10.0}, index=range(n)
        )
        for f, d, g, n, r in spec
    ]
    return pd.concat(parts, ignore_index=True)


def test_band_table_weighs_each_group_the_same():
    # 100 rows of ratio 1 in one generation, 300 of ratio 2 in another: each generation is half the band
    rows = _rows([("gemm", "bfloat16", "ada", 100, 1.0), ("gemm", "bfloat16", "hopper", 300, 2.0)])
    band = band_table(rows, group_col="generation")["gemm"]
    q = dict(zip(BAND_LEVELS, band["q"], strict=True))
    assert q[0.25] == pytest.approx(1.0) and q[0.75] == pytest.approx(2.0)
    assert band["mape"] == pytest.approx(25.0)  # APE 0 on one half, |1/2 - 1| = 50% on the other
    assert band["n"] == 400 and band["groups"] == ["ada", "hopper"]


def test_band_coverage_is_measured_on_each_group_from_the_others():
    # two generations that disagree completely: the band of one covers none of the other's rows
    apart = band_table(
        _rows([("gemm", "bf16", "ada", 100, 1.0), ("gemm", "bf16", "hopper", 100, 2.0)]), group_col="generation"
    )
    assert apart["gemm"]["coverage"] == {"0.5": 0.0, "0.8": 0.0, "0.9": 0.0}
    # three generations drawing the same 200 ratios: each band covers about its nominal share of the third
    ratios = np.exp(np.linspace(-0.5, 0.5, 200))
    rows = pd.concat(
        [
            pd.DataFrame(
                {"family": "gemm", "dtype": "bf16", "generation": g, "latency_us": 10 * ratios, "pred_us": 10.0}
            )
            for g in ("ada", "ampere", "hopper")
        ]
    )
    same = band_table(rows, group_col="generation")["gemm"]["coverage"]
    assert same == pytest.approx({"0.5": 0.5, "0.8": 0.8, "0.9": 0.9}, abs=0.01)
    one = band_table(rows[rows["generation"] == "ada"], group_col="generation")["gemm"]
    assert one["coverage"] is None  # nothing to hold out


def test_band_table_keys_dtypes_only_when_a_family_has_several_and_drops_small_keys():
    rows = _rows(
        [
            ("gemm", "bfloat16", "ada", 150, 1.0),
            ("gemm", "fp8", "ada", 120, 1.5),
            ("gemm", "fp8_block", "ada", 20, 3.0),
            ("rmsnorm", "bfloat16", "ada", 150, 1.1),
            ("silu_mul", "bfloat16", "ada", 99, 1.0),
        ]
    )
    table = band_table(rows, group_col="generation", min_rows=100)
    assert sorted(table) == ["gemm", "gemm:bfloat16", "gemm:fp8", "rmsnorm"]
    assert table["gemm:fp8"]["q"] == pytest.approx([1.5] * len(BAND_LEVELS))
    rows.loc[0, "pred_us"] = np.nan  # a row without a prediction is left out, not counted
    assert band_table(rows, group_col="generation")["gemm:bfloat16"]["n"] == 149
    with pytest.raises(DataError, match=r"\['gpu'\]"):
        band_table(rows, group_col="gpu")


def _bands(**edit):
    """A valid hand-made band layout (ratios invented for the lookup tests)."""
    q_unseen = [0.5, 0.6, 0.8, 1.0, 1.2, 1.5, 1.8]
    q_seen = [0.9, 0.92, 0.96, 1.0, 1.04, 1.08, 1.1]
    b = {
        "levels": list(BAND_LEVELS),
        "unseen": {
            "protocol": "hand-made",
            "bands": {
                "gemm": {"q": q_unseen, "mape": 20.0, "n": 500, "groups": ["ada", "hopper"]},
                "gemm:fp8": {"q": [x * 2 for x in q_unseen], "mape": 40.0, "n": 200, "groups": ["hopper"]},
            },
        },
        "seen": {"protocol": "hand-made", "bands": {"gemm": {"q": q_seen, "mape": 5.0, "n": 300, "groups": ["H100"]}}},
        "seen_gpus": {"gemm": ["H100-SXM"]},
    }
    b.update(edit)
    return b


def test_band_bounds_pick_the_situation_and_the_dtype_band():
    lo, hi, s = band_bounds(
        check_error_bands(_bands()),
        ["gemm", "gemm", "gemm", "moe_w13", "gemm"],
        ["bfloat16", "bfloat16", "fp8", "bfloat16", "bfloat16"],
        ["H100-SXM", "B300", "B300", "B300", "H100-SXM"],
        [100.0, 100.0, 100.0, 100.0, np.nan],
        0.8,
    )
    assert s.tolist() == ["seen", "unseen", "unseen", "", ""]
    assert np.allclose(lo[:3], [92.0, 60.0, 120.0]) and np.allclose(hi[:3], [108.0, 150.0, 300.0])
    assert np.isnan(lo[3:]).all() and np.isnan(hi[3:]).all()
    lo50, hi50, _ = band_bounds(check_error_bands(_bands()), ["gemm"], ["bfloat16"], ["B300"], [10.0], 50)
    assert (lo50[0], hi50[0]) == pytest.approx((8.0, 12.0))


def test_band_summary_lists_both_situations_per_key():
    got = band_summary(check_error_bands(_bands()), 0.8).set_index("key")
    assert list(got.index) == ["gemm", "gemm:fp8"]
    assert got.loc["gemm", ["unseen_lo", "unseen_q50", "unseen_hi", "seen_lo", "seen_hi"]].tolist() == pytest.approx(
        [0.6, 1.0, 1.5, 0.92, 1.08]
    )
    assert got.loc["gemm:fp8", "unseen_mape"] == 40.0 and np.isnan(got.loc["gemm:fp8", "seen_lo"])


def test_a_new_gpu_of_a_measured_generation_takes_the_sibling_band():
    sib = {"q": [0.8, 0.85, 0.9, 1.0, 1.1, 1.2, 1.3], "mape": 10.0, "n": 300, "groups": ["B200", "GB200"]}
    bands = check_error_bands(
        _bands(sibling={"protocol": "hand-made", "bands": {"gemm": sib}}, seen_generations={"gemm": ["hopper"]})
    )
    lo, hi, s = band_bounds(
        bands,
        ["gemm"] * 4,
        ["bfloat16", "bfloat16", "fp8", "bfloat16"],
        ["H20", "B300", "H20", "H100-SXM"],
        [100.0] * 4,
        0.8,
        generations=["hopper", "blackwell", "hopper", "hopper"],
    )
    # H20 (hopper measured, H20 not): sibling; B300 (blackwell not measured): unseen; gemm:fp8 has no
    # sibling band of its own but the family has one; a trained GPU: seen
    assert s.tolist() == ["sibling", "unseen", "sibling", "seen"]
    assert np.allclose(lo, [85.0, 60.0, 85.0, 92.0]) and np.allclose(hi, [120.0, 150.0, 120.0, 108.0])
    # a layout without sibling bands gives such a GPU the unseen band
    _, _, s = band_bounds(check_error_bands(_bands()), ["gemm"], ["bfloat16"], ["H20"], [1.0], 0.8, ["hopper"])
    assert s.tolist() == ["unseen"]


@pytest.mark.parametrize("given,want", [(0.8, 0.8), (80, 0.8), ("90", 0.9), (0.5, 0.5)])
def test_check_coverage_accepts_fractions_and_percentages(given, want):
    assert check_coverage(given) == want


@pytest.mark.parametrize("bad", [0.7, 95, "wide", None])
def test_check_coverage_names_the_allowed_values(bad):
    with pytest.raises(DataError, match=r"one of \[0.5, 0.8, 0.9\]"):
        check_coverage(bad)


@pytest.mark.parametrize(
    "edit,field",
    [
        ({"levels": [0.1, 0.9]}, "levels"),
        ({"seen": {"bands": {}}}, "'seen' needs a protocol"),
        ({"seen_gpus": ["H100"]}, "seen_gpus"),
        (
            {
                "unseen": {
                    "protocol": "x",
                    "bands": {"gemm": {"q": [1, 0.9, 1, 1, 1, 1, 1], "mape": 1, "n": 1, "groups": []}},
                }
            },
            "rising ratios",
        ),
        ({"unseen": {"protocol": "x", "bands": {"gemm": {"q": [1] * 7}}}}, "unseen.bands\\['gemm'\\]"),
    ],
)
def test_malformed_bands_are_refused_naming_the_field(edit, field):
    with pytest.raises(DataError, match=field):
        check_error_bands(_bands(**edit))


# --------------------------------------------------------------------------- a model's bands (real rows)
@pytest.fixture(scope="module")
def banded(small_frame):
    bands = estimate_error_bands(PipeweaveRegressor(**KW), small_frame, max_rows_per_group=100, progress=False)
    return PipeweaveRegressor(**KW).fit(small_frame).set_error_bands(bands), bands


def test_estimate_error_bands_covers_every_family_and_generation(small_frame, banded):
    _, bands = banded
    for fam, rows in small_frame.groupby("family"):
        unseen = bands["unseen"]["bands"][fam]
        assert unseen["groups"] == sorted(rows["generation"].astype(str).unique())
        assert unseen["n"] == len(rows)  # every row is held out once (each family spans several generations)
        seen = bands["seen"]["bands"][fam]
        assert 0.1 * len(rows) < seen["n"] < 0.3 * len(rows)  # 20% of the shapes
        assert bands["seen_gpus"][fam] == sorted(rows["gpu"].astype(str).unique())
        assert bands["seen_generations"][fam] == sorted(rows["generation"].astype(str).unique())
        # leave-one-GPU-out: every row of a GPU that shares its generation with another GPU of the family
        per_gen = rows.groupby("generation", observed=True)["gpu"].transform("nunique")
        if not (per_gen > 1).any():  # small_frame's GEMM rows: one GPU per generation, no sibling
            assert fam not in bands["sibling"]["bands"]
            continue
        sibling = bands["sibling"]["bands"][fam]
        assert sibling["n"] == int((per_gen > 1).sum())
        assert sibling["groups"] == sorted(rows.loc[per_gen > 1, "gpu"].astype(str).unique())
    assert "leave-one-generation-out" in bands["unseen"]["protocol"]


def test_predict_interval_uses_the_seen_band_on_a_training_gpu(small_frame, banded):
    model, bands = banded
    rows = pd.DataFrame(
        {"family": "gemm", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096, "gpu": ["H100-SXM", "B300"]}
    )
    pred = model.predict(rows)
    iv = model.predict_interval(rows, 0.9, pred_us=pred)
    assert iv["band"].tolist() == ["seen", "unseen"]
    q_seen, q_unseen = bands["seen"]["bands"]["gemm"]["q"], bands["unseen"]["bands"]["gemm"]["q"]
    assert iv["latency_us_lo"].tolist() == pytest.approx([pred[0] * q_seen[0], pred[1] * q_unseen[0]])
    assert iv["latency_us_hi"].tolist() == pytest.approx([pred[0] * q_seen[-1], pred[1] * q_unseen[-1]])
    # without pred_us the model predicts the rows itself
    assert model.predict_interval(rows, 0.9).equals(iv)
    # H800 was never measured; its generation (hopper, from the catalog) was: moe_w13 has a sibling band
    # (H100-SXM and H20), GEMM has none in these rows (one GPU per generation) and falls back to unseen
    moe = {"family": "moe_w13", "dtype": "bfloat16", "num_tokens": 64, "num_experts": 64, "topk": 8}
    new = pd.DataFrame([{**moe, "hidden_size": 4096, "inter_size": 1536, "gpu": "H800"}, rows.iloc[0].to_dict()])
    new.loc[1, "gpu"] = "H800"
    got = model.predict_interval(new, 0.8)
    assert got["band"].tolist() == ["sibling", "unseen"]
    pred = model.predict(new)
    assert got["latency_us_lo"].iloc[0] == pytest.approx(pred[0] * bands["sibling"]["bands"]["moe_w13"]["q"][1])


def test_bands_round_trip_and_an_older_file_has_none(banded, tmp_path, save_with_stamp):
    model, _ = banded
    path = save_model(model, tmp_path / "m.ubj")
    assert read_stamp(path)["error_bands"] == model.error_bands_
    assert load_model(path).error_bands_ == model.error_bands_

    def older(stamp):
        stamp.pop("error_bands")
        return stamp

    old = load_model(save_with_stamp(model, tmp_path / "older.ubj", older))
    assert old.error_bands_ is None
    with pytest.raises(DataError, match="no error bands"):
        old.predict_interval(pd.DataFrame({"family": ["gemm"], "dtype": "bfloat16", "m": 8, "n": 8, "k": 8}), 0.8)


def test_a_damaged_band_field_is_refused(banded, tmp_path, save_with_stamp):
    model, _ = banded
    path = save_with_stamp(
        model, tmp_path / "bad.ubj", lambda s: {**s, "error_bands": {**s["error_bands"], "levels": [1]}}
    )
    with pytest.raises(SchemaMismatchError, match="malformed error bands"):
        load_model(path)


def test_bands_from_other_gpus_are_refused(small_frame, banded):
    _, bands = banded
    model = PipeweaveRegressor(**KW).fit(small_frame[small_frame["gpu"] != "H20"])
    with pytest.raises(DataError, match=r"not trained on: \['H20'\]"):
        model.set_error_bands(bands)
    assert model.set_error_bands(None).error_bands_ is None


def test_refitting_drops_the_bands_of_the_earlier_fit(small_frame, banded):
    _, bands = banded
    model = PipeweaveRegressor(**KW).fit(small_frame).set_error_bands(bands)
    assert model.error_bands_ is not None
    assert model.fit(small_frame).error_bands_ is None


# --------------------------------------------------------------------------- some families' bands, merged in
def test_bands_of_some_families_are_the_full_run_s_to_the_bit(small_frame, banded):
    _, full = banded
    some = estimate_error_bands(
        PipeweaveRegressor(**KW), small_frame, max_rows_per_group=100, progress=False, families=["moe_w13"]
    )
    for situation in ("unseen", "sibling", "seen"):
        assert some[situation]["protocol"] == full[situation]["protocol"]
        want = {k: v for k, v in full[situation]["bands"].items() if k.split(":")[0] == "moe_w13"}
        assert want and some[situation]["bands"] == want  # the same refits, only moe_w13's rows scored
    assert some["seen_gpus"] == full["seen_gpus"] and some["seen_generations"] == full["seen_generations"]


def test_the_layout_without_refits_is_the_full_run_s_without_its_tables(small_frame, banded):
    from pipeweave.evaluation import error_band_layout

    _, full = banded
    layout = error_band_layout(small_frame, max_rows_per_group=100)
    assert {s: layout[s]["protocol"] for s in ("unseen", "sibling", "seen")} == {
        s: full[s]["protocol"] for s in ("unseen", "sibling", "seen")
    }
    assert all(not layout[s]["bands"] for s in ("unseen", "sibling", "seen"))
    assert layout["seen_gpus"] == full["seen_gpus"]


def test_unknown_families_are_refused_with_the_frame_s_families(small_frame):
    with pytest.raises(DataError, match=r"without training rows: \['rmsnorm'\]") as err:
        estimate_error_bands(PipeweaveRegressor(**KW), small_frame, families=["rmsnorm"], progress=False)
    assert "['gemm', 'moe_w13']" in err.value.hint


def test_merging_a_family_s_fresh_bands_into_the_full_run_gives_the_full_run(banded):
    from pipeweave.model import merge_error_bands

    _, full = banded
    # the refreshed family's bands: the full run's moe_w13 entries (what the partial estimate gives, see above)
    fresh = {**full, **{s: {**full[s], "bands": {"moe_w13": full[s]["bands"]["moe_w13"]}} for s in ("unseen", "seen")}}
    merged = merge_error_bands(full, fresh, ["moe_w13"], source="old.ubj")
    assert merged["carried"] == {"families": ["gemm"], "source": "old.ubj"}
    for s in ("unseen", "sibling", "seen"):
        assert merged[s]["bands"] == full[s]["bands"]
    # a second refresh says where the carried bands were carried from
    again = merge_error_bands(merged, fresh, "moe_w13", source="new.ubj")
    assert again["carried"]["source"] == "new.ubj (which carried ['gemm'] from old.ubj)"


def test_a_merge_that_would_carry_stale_bands_is_refused(banded):
    from pipeweave.model import merge_error_bands

    _, full = banded
    other_way = {**full, "unseen": {**full["unseen"], "protocol": "leave-one-generation-out over ampere, hopper"}}
    with pytest.raises(DataError, match="estimated another way \\(unseen"):
        merge_error_bands(other_way, full, ["moe_w13"])
    moved = {**full, "seen_gpus": {**full["seen_gpus"], "gemm": ["A100-SXM"]}}
    with pytest.raises(DataError, match=r"\['gemm'\]: trained on other GPUs") as err:
        merge_error_bands(moved, full, ["moe_w13"])
    assert "add them to ['moe_w13']" in err.value.hint
    new_family = {**full, "seen_gpus": {"moe_w13": full["seen_gpus"]["moe_w13"]}}
    with pytest.raises(DataError, match=r"\['gemm'\]: not trained then"):
        merge_error_bands(new_family, full, ["moe_w13"])
    with pytest.raises(DataError, match=r"\['rmsnorm'\] families to refresh"):
        merge_error_bands(full, full, ["rmsnorm"])
