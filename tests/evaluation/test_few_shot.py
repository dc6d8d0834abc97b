"""The few-shot protocol on hand-made launches with made-up latencies (not data).

The latencies are a known function of the analytical envelope with a per-GPU factor and a
regime-dependent term, so calibration has something to find; the test checks the protocol's
contract (same scored rows for every shot count, options chosen without the held-out rows).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

from pipeweave.evaluation._few_shot import (
    _BaseModels,
    _GPUCase,
    few_shot_fold,
    plot_data_few_shot,
    plot_few_shot,
)
from pipeweave.model import ensure_features


class EnvelopeTimes(BaseEstimator):
    """Predicts t_env_us x the mean training ratio (a deliberately crude zero-shot model)."""

    def fit(self, df: pd.DataFrame) -> EnvelopeTimes:
        self.ratio_ = float(np.exp(np.mean(np.log(df["latency_us"] / df["t_env_us"]))))
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        return df["t_env_us"].to_numpy() * self.ratio_


GPUS = {"A100": "ampere", "L40S": "ada", "H100": "hopper"}
FACTOR = {"A100": 1.0, "L40S": 1.6, "H100": 1.1}


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    sizes = rng.choice([64, 128, 256, 512, 1024, 2048, 4096, 8192], size=(60, 3))
    rows = []
    for gpu, gen in GPUS.items():
        rows.append(
            pd.DataFrame(
                {
                    "source": "user",
                    "gpu": gpu,
                    "generation": gen,
                    "family": "gemm",
                    "dtype": "bfloat16",
                    "m": sizes[:, 0],
                    "n": sizes[:, 1],
                    "k": sizes[:, 2],
                }
            )
        )
    df = ensure_features(pd.concat(rows, ignore_index=True))
    big = (df["log10_t_env_us"] > 2).to_numpy()
    df["latency_us"] = df["t_env_us"] * df["gpu"].map(FACTOR).to_numpy() * np.where(big, 1.0, 1.3)
    return df


def test_few_shot_fold_contract(frame):
    shots = [0, 4, 8]
    cases = {g: _GPUCase(frame[frame["gpu"] == g], shots, seed=0) for g in GPUS}
    out = few_shot_fold(frame, "ada", _BaseModels(frame, EnvelopeTimes()), shots, cases=cases)
    n = {s: out["generation"][str(s)]["n"] for s in shots}
    assert len(set(n.values())) == 1 and n[0] == 60 - len(set(cases["L40S"].plans[4]) | set(cases["L40S"].plans[8]))
    assert out["chosen"]["0"] == {"method": "none"}
    assert out["generation"]["8"]["mape"] < out["generation"]["0"]["mape"] / 2  # the 1.6x factor is found
    # no leakage: changing the held-out GPU's unmeasured latencies changes nothing the fold chose
    other = frame.copy()
    measured = np.zeros(len(other), dtype=bool)
    l40 = np.flatnonzero((other["gpu"] == "L40S").to_numpy())
    for p in cases["L40S"].plans.values():
        measured[l40[p]] = True
    other.loc[(other["gpu"] == "L40S").to_numpy() & ~measured, "latency_us"] *= 3.0
    cases2 = {g: _GPUCase(other[other["gpu"] == g], shots, seed=0) for g in GPUS}
    out2 = few_shot_fold(other, "ada", _BaseModels(other, EnvelopeTimes()), shots, cases=cases2)
    assert out2["chosen"] == out["chosen"] and out2["inner"] == out["inner"]


class PerGPUEnvelopeTimes(BaseEstimator):
    """t_env_us x the (weighted) mean training ratio of the row's GPU, else of all rows: a model that
    can learn a new GPU only from rows of that GPU, i.e. from refitting with the shots."""

    def fit(self, df: pd.DataFrame, sample_weight=None) -> PerGPUEnvelopeTimes:
        w = np.ones(len(df)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        lr = np.log(df["latency_us"] / df["t_env_us"]).to_numpy()
        self.all_ = float(np.exp(np.average(lr, weights=w)))
        g = df["gpu"].astype(str).to_numpy()
        self.per_gpu_ = {k: float(np.exp(np.average(lr[g == k], weights=w[g == k]))) for k in set(g)}
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        df = ensure_features(df)  # launches asked on another GPU (analog options) come without features
        f = df["gpu"].astype(str).map(self.per_gpu_).fillna(self.all_).to_numpy(dtype=float)
        return df["t_env_us"].to_numpy() * f


def test_refit_options_learn_the_new_gpu_from_its_shots_only(frame):
    shots = [0, 8]
    cases = {g: _GPUCase(frame[frame["gpu"] == g], shots, seed=0) for g in GPUS}
    models = _BaseModels(frame, PerGPUEnvelopeTimes())
    assert models.can_refit() and not _BaseModels(frame, EnvelopeTimes()).can_refit()
    held = {"L40S": cases["L40S"]}
    zero = models.predict(frozenset({"ada"}), cases["L40S"], "L40S")
    refit = models.refit_predict(frozenset({"ada"}), held, 8, 30.0)["L40S"]
    score, lat = cases["L40S"].score, cases["L40S"].lat
    err = {k: np.mean(np.abs(p[score] / lat[score] - 1)) for k, p in (("zero", zero), ("refit", refit))}
    assert err["refit"] < err["zero"] / 2  # the 1.6x factor comes from the 8 shots
    out = few_shot_fold(frame, "ada", models, shots, cases=cases)
    # no leakage: the unmeasured L40S latencies reach neither the choice nor the refit
    other = frame.copy()
    measured = np.zeros(len(other), dtype=bool)
    l40 = np.flatnonzero((other["gpu"] == "L40S").to_numpy())
    measured[l40[cases["L40S"].plans[8]]] = True
    other.loc[(other["gpu"] == "L40S").to_numpy() & ~measured, "latency_us"] *= 3.0
    cases2 = {g: _GPUCase(other[other["gpu"] == g], shots, seed=0) for g in GPUS}
    models2 = _BaseModels(other, PerGPUEnvelopeTimes())
    out2 = few_shot_fold(other, "ada", models2, shots, cases=cases2)
    assert out2["chosen"] == out["chosen"] and out2["inner"] == out["inner"]
    np.testing.assert_allclose(
        models2.refit_predict(frozenset({"ada"}), {"L40S": cases2["L40S"]}, 8, 30.0)["L40S"], refit
    )


def test_plot_data_few_shot_and_draw():
    report = {
        "results": {
            "gemm_bf16": {
                "0": {
                    "ada": {"mape": 20.0, "median_ape": 15.0, "p90_ape": 40.0, "n": 10},
                    "ampere": {"mape": 12.0, "median_ape": 9.0, "p90_ape": 25.0, "n": 10},
                },
                "8": {
                    "ada": {"mape": 14.0, "median_ape": 10.0, "p90_ape": 30.0, "n": 10},
                    "ampere": {"mape": 10.0, "median_ape": 8.0, "p90_ape": 20.0, "n": 10},
                },
            }
        }
    }
    data = plot_data_few_shot(report, "gemm_bf16")
    assert data["generation"].tolist() == ["ampere", "ampere", "ada", "ada"]
    assert data["shots"].tolist() == [0, 8, 0, 8] and data["mape"].tolist() == [12.0, 10.0, 20.0, 14.0]
    ax = plot_few_shot(data, title="gemm_bf16")
    assert len(ax.get_lines()) >= 2


def _report(family: str, fp: str, elapsed: float) -> dict:
    """A hand-made few-shot report of one family (structure only, no measurement)."""
    cell = {"mape": 10.0, "median_ape": 8.0, "p90_ape": 20.0, "n": 5}
    return {
        "protocol": "few-shot",
        "shots": [0, 8],
        "options": [{"method": "none"}],
        "data_fingerprint": fp,
        "results": {family: {"0": {"ada": cell}, "8": {"ada": cell}}},
        "by_gpu": {family: {}},
        "chosen": {family: {}},
        "inner": {family: {}},
        "extra": {"command": f"run {family}", "elapsed_s": elapsed},
    }


def test_merged_reports_merge_again():
    from pipeweave import DataError
    from pipeweave.evaluation._few_shot import merge_few_shot_reports

    ab = merge_few_shot_reports([_report("a", "fa", 1.0), _report("b", "fb", 2.0)])
    abc = merge_few_shot_reports([ab, _report("c", "fc", 3.0)])
    assert list(abc["results"]) == ["a", "b", "c"]
    assert abc["data_fingerprint"] == {"a": "fa", "b": "fb", "c": "fc"}
    assert [r["command"] for r in abc["extra"]["runs"]] == ["run a", "run b", "run c"]
    assert abc["extra"]["elapsed_s"] == 6.0 and abc["extra"]["command"].endswith("--families a b c")
    with pytest.raises(DataError, match="differ in 'shots'"):
        merge_few_shot_reports([ab, {**_report("c", "fc", 1.0), "shots": [0, 32]}])


def test_band_coverage_fold_contract(frame):
    """The calibrated-band scoring of a fold (hand-made launches, made-up latencies with noise)."""
    from pipeweave import DataError
    from pipeweave.calibrate import ResidualCorrection
    from pipeweave.evaluation import band_coverage_fold, calibrated_band_coverage

    rng = np.random.default_rng(3)
    noisy = frame.assign(latency_us=frame["latency_us"] * np.exp(rng.normal(0, 0.15, len(frame))))
    shots = (16, 24)
    models = _BaseModels(noisy, EnvelopeTimes())
    rows = band_coverage_fold(noisy, "ada", models, shots, label="gemm")
    assert [(r["gpu"], r["shots"]) for r in rows] == [("L40S", 16), ("L40S", 24)]
    case = _GPUCase(noisy[noisy["gpu"] == "L40S"], shots, 0)
    for r in rows:
        assert r["n"] == int(case.score.sum())  # the rows no shot count measured
        assert 0 <= r["cover50"] <= r["cover80"] <= r["cover90"] <= 100  # nested bands
        assert 0 < r["width50"] < r["width80"] < r["width90"]
        # the MAPE is the few-shot protocol's for the calibrate-fit default option
        default = {
            "method": "gp",
            "length_scale": ResidualCorrection().length_scale,
            "noise": ResidualCorrection().noise,
        }
        base = models.predict(frozenset({"ada"}), case, "L40S")
        assert r["mape"] == pytest.approx(float(np.mean(case.errors(base, r["shots"], default))))
    with pytest.raises(DataError, match=">= 16"):
        calibrated_band_coverage(families=["gemm_bf16"], shots=(8, 32))


def test_band_coverage_fold_refit_recipe_borrows_the_band(frame):
    """The refit recipe's scoring (hand-made launches, made-up latencies): the refit's prediction, a band as wide
    as the recipe without the refit (borrowed)."""
    from pipeweave.evaluation import band_coverage_fold

    rng = np.random.default_rng(4)
    noisy = frame.assign(latency_us=frame["latency_us"] * np.exp(rng.normal(0, 0.15, len(frame))))
    shots = (16, 24)
    plain = band_coverage_fold(noisy, "ada", _BaseModels(noisy, PerGPUEnvelopeTimes()), shots, label="gemm")
    refit = band_coverage_fold(
        noisy, "ada", _BaseModels(noisy, PerGPUEnvelopeTimes()), shots, label="gemm", refit_weight=10.0
    )
    assert [r["recipe"] for r in plain] == ["gp", "gp"] and [r["recipe"] for r in refit] == ["refit10+gp"] * 2
    for p, r in zip(plain, refit, strict=True):
        assert (r["gpu"], r["shots"], r["n"]) == (p["gpu"], p["shots"], p["n"])
        for w in ("width50", "width80", "width90"):
            assert r[w] == pytest.approx(p[w])  # the same band width per launch: borrowed
        assert 0 <= r["cover50"] <= r["cover80"] <= r["cover90"] <= 100


def test_workload_band_rows_take_the_band_from_other_generations():
    """Hand-made held-out predictions (not data): the band is built without the scored generation."""
    from pipeweave import DataError
    from pipeweave.evaluation import workload_band_rows

    rng = np.random.default_rng(0)
    exact = np.full(50, 10.0)
    spread = 10.0 * np.exp(rng.normal(0, 0.2, 50))
    held = {
        ("ampere", "A"): (spread, exact.copy()),  # ratios spread around 1
        ("hopper", "H"): (exact * 2.0, exact.copy()),  # every launch 2x slower than predicted: a level miss
    }
    rows = workload_band_rows(held, (1, 20), (0.1, 0.9), n_workloads=200, max_count=8, rng=np.random.default_rng(1))
    by = {(r["gpu"], r["launches"]): r for r in rows}
    # hopper's band comes from ampere's ratios alone: about exp(+-1.28 x 0.2); its 2x level is outside
    assert by[("H", 1)]["band_hi"] < 1.6 and by[("H", 1)]["inside"] == 0.0 and by[("H", 20)]["inside"] == 0.0
    assert by[("H", 20)]["mape"] == pytest.approx(50.0)  # predicted total = half the measured one
    # ampere's band is hopper's single ratio (2.0): no spread, so nothing of ampere's lies inside it
    assert by[("A", 1)]["band_lo"] == pytest.approx(2.0) and by[("A", 1)]["inside"] == 0.0
    # changing the scored generation's own ratios leaves its band unchanged (no leak)
    held2 = {**held, ("hopper", "H"): (exact * 3.0, exact.copy())}
    rows2 = workload_band_rows(held2, (1,), (0.1, 0.9), n_workloads=10, max_count=8, rng=np.random.default_rng(1))
    assert [r["band_hi"] for r in rows2 if r["gpu"] == "H"] == [by[("H", 1)]["band_hi"]]
    with pytest.raises(DataError, match="no other generation"):
        workload_band_rows(dict(list(held.items())[:1]), (1,), (0.1, 0.9), n_workloads=5, max_count=2, rng=rng)


def test_auto_option_is_scored_like_any_other_and_bad_options_are_refused(frame):
    """``{'method': 'auto'}`` (settings chosen per GPU on its own shots) joins the options the inner folds
    score; a malformed option list is refused before any data is read."""
    from pipeweave import DataError
    from pipeweave.evaluation import FEW_SHOT_OPTIONS, run_few_shot

    shots = [0, 8]
    cases = {g: _GPUCase(frame[frame["gpu"] == g], shots, seed=0) for g in GPUS}
    opts = [{"method": "none"}, {"method": "scalar"}, {"method": "auto"}]
    out = few_shot_fold(frame, "ada", _BaseModels(frame, EnvelopeTimes()), shots, cases=cases, options=opts)
    assert len(out["inner"]["8"]) == 3 and out["chosen"]["8"] in opts[1:]  # a factor to find: not "none"
    assert out["generation"]["8"]["mape"] < out["generation"]["0"]["mape"]
    assert FEW_SHOT_OPTIONS[0] == {"method": "none"} and {"method": "auto"} not in FEW_SHOT_OPTIONS
    for bad, match in (([{"method": "gp"}], "first few-shot option"), ([FEW_SHOT_OPTIONS[0], {"method": "x"}], "x")):
        with pytest.raises(DataError, match=match):
            run_few_shot(families=["gemm_bf16"], options=bad, out="/nonexistent/never_written")


def test_family_regime_options_are_offered_where_the_family_has_its_own_coordinates(frame):
    """The protocol's GP options over the family's own regime coordinates (``"regime": "family"``) are scored
    only for a family with coordinates of its own (fused MoE); for GEMM they would repeat the generic ones."""
    from pipeweave.calibrate import FAMILY_REGIME_FEATURES, REGIME_FEATURES
    from pipeweave.evaluation import FEW_SHOT_OPTIONS
    from pipeweave.evaluation._few_shot import _correction_settings

    plain = [o for o in FEW_SHOT_OPTIONS if not o.get("analog_penalty")]  # the analog options come last
    assert FEW_SHOT_OPTIONS[: len(plain)] == tuple(plain)
    generic = [o for o in FEW_SHOT_OPTIONS if o.get("regime", "generic") == "generic"]
    family = [o for o in FEW_SHOT_OPTIONS if o.get("regime") == "family"]
    assert family and plain[: len([o for o in generic if o in plain])] == [o for o in generic if o in plain]
    assert [{**o, "regime": "family"} for o in generic if o.get("method") == "gp"] == family
    gp = family[-1]
    assert _correction_settings(gp, "fused_moe")["features"] == FAMILY_REGIME_FEATURES["fused_moe"]
    assert _correction_settings(gp, "gemm")["features"] == REGIME_FEATURES
    assert "refit_weight" not in _correction_settings(gp, "gemm") and "regime" not in _correction_settings(gp, "gemm")
    own = {**gp, "features": {"log10_t_env_us": 1.0}}  # explicit coordinates win
    assert _correction_settings(own, "fused_moe")["features"] == {"log10_t_env_us": 1.0}

    shots = [0, 8]
    cases = {g: _GPUCase(frame[frame["gpu"] == g], shots, seed=0) for g in GPUS}
    opts = [{"method": "none"}, {"method": "scalar"}, {"method": "gp"}, {"method": "gp", "regime": "family"}]
    models = _BaseModels(frame, EnvelopeTimes())
    out = few_shot_fold(frame, "ada", models, shots, cases=cases, options=opts)
    assert len(out["inner"]["8"]) == 3  # gemm: the family option dropped
    moe = frame.assign(family="fused_moe")  # the same rows named fused MoE keep it (its columns are 0 here)
    cases = {g: _GPUCase(moe[moe["gpu"] == g], shots, seed=0) for g in GPUS}
    out = few_shot_fold(moe, "ada", _BaseModels(moe, EnvelopeTimes()), shots, cases=cases, options=opts)
    assert len(out["inner"]["8"]) == 4


def test_the_zero_shot_cache_key_follows_the_recipe(monkeypatch, tmp_path):
    """A cache of another recipe (here: another family's extra columns, or another roofline blend) is not reused.
    Hand-made rows (the key reads them, nothing is fitted)."""
    import pipeweave.model as pw_model
    from pipeweave.evaluation._few_shot import _cache_path

    rows = pd.DataFrame({"family": ["gemm_fp32"], "gpu": ["T4"], "m": [64], "n": [64], "k": [64], "latency_us": [9.0]})
    key = _cache_path(tmp_path, rows, "gemm_fp32", 4000, None, "est")
    assert key == _cache_path(tmp_path, rows, "gemm_fp32", 4000, None, "est")
    monkeypatch.setattr(pw_model, "FAMILY_EXTRA_FEATURES", {})
    assert _cache_path(tmp_path, rows, "gemm_fp32", 4000, None, "est") != key
    monkeypatch.undo()
    monkeypatch.setattr(pw_model, "FAMILY_ROOFLINE_BLEND", {})
    assert _cache_path(tmp_path, rows, "gemm_fp32", 4000, None, "est") != key


def test_the_zero_shot_cache_key_follows_the_code(monkeypatch, tmp_path):
    """An edit of the package's code (here: a copy of a small hand-made package tree) changes the digest the
    cache key holds, so a cache made before a front-end formula changed is not reused."""
    import pipeweave.evaluation._few_shot as fs

    tree = tmp_path / "pkg"
    (tree / "frontend").mkdir(parents=True)
    (tree / "frontend" / "_norm.py").write_text("BYTES_PER_ELEMENT = 4\n")
    (tree / "notes.txt").write_text("not code")
    before = fs._code_digest(tree)
    (tree / "notes.txt").write_text("edited, still not code")
    assert fs._code_digest(tree) == before
    (tree / "frontend" / "_norm.py").write_text("BYTES_PER_ELEMENT = 2\n")
    assert fs._code_digest(tree) != before
    rows = pd.DataFrame({"family": ["gemm_fp32"], "gpu": ["T4"], "m": [64], "n": [64], "k": [64], "latency_us": [9.0]})
    key = fs._cache_path(tmp_path, rows, "gemm_fp32", 4000, None, "est")
    monkeypatch.setattr(fs, "_code_digest", lambda root=None: "another code")
    assert fs._cache_path(tmp_path, rows, "gemm_fp32", 4000, None, "est") != key


def test_a_refresh_keeps_the_other_families_and_refuses_other_settings(tmp_path):
    """``run_few_shot(refresh=True)``'s first step on hand-made reports (structure only, no measurement): the
    report in ``out`` without the refreshed families, runs of only those families dropped; merging the
    refresh back gives every family once. Other shots or settings, or no report, are refused before any fit."""
    import json

    from pipeweave import DataError
    from pipeweave.evaluation._few_shot import _refreshed_few_shot, merge_few_shot_reports

    settings = {"max_train_rows_per_gpu": 4000, "n_estimators": 200, "seed": 0}
    parts = []
    for fam, fp in (("a", "fa"), ("b", "fb")):
        rep = _report(fam, fp, 1.0)
        rep["extra"].update(settings, command=f"pipeweave evaluate --protocol few-shot --shots 0 8 --families {fam}")
        parts.append(rep)
    (tmp_path / "results.json").write_text(json.dumps(merge_few_shot_reports(parts)))
    kept = _refreshed_few_shot(tmp_path, ["a"], [0, 8], [{"method": "none"}], settings)
    assert list(kept["results"]) == ["b"] and kept["data_fingerprint"] == {"b": "fb"}
    assert [r["command"].split()[-1] for r in kept["extra"]["runs"]] == ["b"]
    new = _report("a", "fa2", 5.0)
    merged = merge_few_shot_reports([kept, new])
    assert merged["data_fingerprint"] == {"b": "fb", "a": "fa2"} and merged["extra"]["elapsed_s"] == 6.0
    for args, match in (
        (([0, 32], [{"method": "none"}], settings), r"shots: \[0, 8\] -> \[0, 32\]"),
        (([0, 8], [{"method": "none"}], {**settings, "seed": 1}), "extra.seed: 0 -> 1"),
    ):
        with pytest.raises(DataError, match=match) as exc:
            _refreshed_few_shot(tmp_path, ["a"], *args)
        assert "re-run the whole report" in str(exc.value.hint)
    with pytest.raises(DataError, match="no few-shot report at"):
        _refreshed_few_shot(tmp_path / "none", ["a"], [0, 8], [{"method": "none"}], settings)
    with pytest.raises(DataError, match="none were named"):
        _refreshed_few_shot(tmp_path, None, [0, 8], [{"method": "none"}], settings)
    (tmp_path / "results.json").write_text("[1, 2]")
    with pytest.raises(DataError, match="is not a few-shot report"):
        _refreshed_few_shot(tmp_path, ["a"], [0, 8], [{"method": "none"}], settings)


def test_a_case_plans_predicts_and_corrects_fp32_gemm_as_asked_and_refits_on_the_recorded_shots(load_real_rows):
    """Real NeuSight rows of one GPU: the scored and planned launches are the asked ones (no recorded cuBLAS tile),
    the model predicts those, and a refit trains on the shots as they ran (their recorded tile)."""
    frame = load_real_rows(["gemm_fp32"], ["T4", "V100-PCIe"], 80).reset_index(drop=True)
    rows = frame[frame["gpu"].astype(str) == "T4"]
    case = _GPUCase(rows, [0, 8], seed=0)
    assert set(case.rows["tile_origin"].astype(str)) == {"kernel_name"}
    assert set(case.asked["tile_origin"].astype(str)) == {"simt_heuristic"}
    assert set(case.score_rows["tile_origin"].astype(str)) == {"simt_heuristic"}

    class Probe(EnvelopeTimes):
        def fit(self, df: pd.DataFrame, sample_weight=None) -> Probe:
            trained.append(set(df["tile_origin"].astype(str)))
            return super().fit(df)

        def predict(self, df: pd.DataFrame) -> np.ndarray:
            asked.append(set(df["tile_origin"].astype(str)))
            return super().predict(df)

    asked: list[set] = []
    trained: list[set] = []
    models = _BaseModels(frame, Probe(), None, None)
    models.predict(frozenset({"turing"}), case, "T4")
    refit = models.refit_predict(frozenset({"turing"}), {"T4": case}, 8, 10.0)
    assert asked == [{"simt_heuristic"}, {"simt_heuristic"}] and len(refit["T4"]) == len(rows)
    # the zero-shot model trained on the V100's rows, the refit on those and the 8 T4 shots, all as measured
    assert trained == [{"kernel_name"}, {"kernel_name"}]


def test_error_bands_score_fp32_gemm_as_asked(load_real_rows, monkeypatch):
    """Real NeuSight rows: the error bands' refits predict FP32 GEMM rows without their recorded cuBLAS tile."""
    import pipeweave.evaluation._bands as bands
    from pipeweave.evaluation import estimate_error_bands
    from pipeweave.model import PipeweaveRegressor

    rows = load_real_rows(["gemm_fp32"], ["T4", "V100-PCIe", "P100-PCIe"], 40).reset_index(drop=True)
    seen: list[set] = []

    def probe(estimator, train, test, **overrides):
        seen.append(set(test["tile_origin"].astype(str)))
        return np.ones(len(test))

    monkeypatch.setattr(bands, "_refit_predict", probe)
    estimate_error_bands(PipeweaveRegressor(n_estimators=5, n_jobs=1), rows, progress=False)
    assert seen and all(s == {"simt_heuristic"} for s in seen)


def test_analog_options_read_the_models_other_gpus(frame, monkeypatch):
    """An option with ``analog_penalty`` reads, for each GPU of the model's training generations, how the model
    fitted without the held-out generation says that GPU differs from the new one (log ratio of its
    predictions); it is scored like any other option for a family of FAMILY_ANALOG_PENALTY (dropped for the
    others). With a refit, the coordinates are the refitted model's."""
    from pipeweave.calibrate import ANALOG_PREFIX, FAMILY_ANALOG_PENALTY
    from pipeweave.evaluation import FEW_SHOT_ANALOG_OPTIONS, FEW_SHOT_OPTIONS

    assert FEW_SHOT_OPTIONS[-len(FEW_SHOT_ANALOG_OPTIONS) :] == FEW_SHOT_ANALOG_OPTIONS
    assert "gemm" not in FAMILY_ANALOG_PENALTY

    shots = [0, 8]
    cases = {g: _GPUCase(frame[frame["gpu"] == g], shots, seed=0) for g in GPUS}
    models = _BaseModels(frame, PerGPUEnvelopeTimes())
    z, analogs = models.analog(frozenset({"ada"}), cases["L40S"], "L40S")
    assert analogs == ["A100", "H100"] and z.shape == (60, 2)
    from pipeweave.calibrate import asked_on

    fitted = models._model(frozenset({"ada"}))  # the L40S is unknown to it: the all-rows factor
    t_l40s = cases["L40S"].asked["t_env_us"].to_numpy()
    for j, g in enumerate(analogs):  # z = log(envelope on g x g's factor / (envelope on the L40S x the mean factor))
        t_g = ensure_features(asked_on(cases["L40S"].asked, g))["t_env_us"].to_numpy()
        np.testing.assert_allclose(z[:, j], np.log(t_g * fitted.per_gpu_[g] / (t_l40s * fitted.all_)))
    gp = {"method": "gp", "length_scale": 2.0, "noise": 0.3, "linear": 0.0}
    opts = [{"method": "none"}, gp, {**gp, "analog_penalty": 1.0}]
    assert len(few_shot_fold(frame, "ada", models, shots, cases=cases, options=opts)["inner"]["8"]) == 2
    monkeypatch.setitem(FAMILY_ANALOG_PENALTY, "gemm", 1.0)  # these GEMM rows play a family the term is offered for
    out = few_shot_fold(frame, "ada", models, shots, cases=cases, options=opts)
    assert len(out["inner"]["8"]) == 3 and out["generation"]["8"]["mape"] < out["generation"]["0"]["mape"]
    # refit + analog: z of the model refitted with the 8 L40S shots, whose L40S factor is now the shots' own
    held = {"L40S": cases["L40S"]}
    refit = models.refit_predict(frozenset({"ada"}), held, 8, 10.0)["L40S"]
    rows = models.refit_analog_rows(frozenset({"ada"}), held, 8, 10.0, "L40S")
    refitted = models._refit_models[(frozenset({"ada"}), ("L40S",), 8, 10.0)]
    assert "L40S" in refitted.per_gpu_ and refitted.per_gpu_["L40S"] != fitted.all_
    for g in analogs:
        t_g = ensure_features(asked_on(cases["L40S"].asked, g))["t_env_us"].to_numpy()
        np.testing.assert_allclose(rows[ANALOG_PREFIX + g].to_numpy(), np.log(t_g * refitted.per_gpu_[g] / refit))
    models.release_refits()  # released, then asked again: refitted afresh, the same coordinates
    again = models.refit_analog_rows(frozenset({"ada"}), held, 8, 10.0, "L40S")
    pd.testing.assert_frame_equal(again, rows)
    both = {**gp, "analog_penalty": 1.0, "refit_weight": 10.0}
    out = few_shot_fold(frame, "ada", models, shots, cases=cases, options=[opts[0], both])
    assert out["chosen"]["8"] == both and out["generation"]["8"]["mape"] < out["generation"]["0"]["mape"]


def test_band_coverage_fold_adds_calibrate_fits_default_analog_term(frame, monkeypatch):
    """From ANALOG_MIN_LAUNCHES launches of a family of FAMILY_ANALOG_PENALTY, the band scoring calibrates as
    `calibrate fit` does by default: with the analog term (hand-made launches, made-up latencies)."""
    from pipeweave.calibrate import ANALOG_MIN_LAUNCHES, FAMILY_ANALOG_PENALTY, ResidualCorrection
    from pipeweave.evaluation import band_coverage_fold

    monkeypatch.setitem(FAMILY_ANALOG_PENALTY, "gemm", 1.0)  # these GEMM rows play such a family
    rng = np.random.default_rng(5)
    noisy = frame.assign(latency_us=frame["latency_us"] * np.exp(rng.normal(0, 0.15, len(frame))))
    shots = (16, ANALOG_MIN_LAUNCHES)
    models = _BaseModels(noisy, PerGPUEnvelopeTimes())
    rows = band_coverage_fold(noisy, "ada", models, shots, label="gemm")
    assert [r["analog_penalty"] for r in rows] == [0.0, 1.0] and {r["recipe"] for r in rows} == {"gp"}
    case = _GPUCase(noisy[noisy["gpu"] == "L40S"], shots, 0)
    base = models.predict(frozenset({"ada"}), case, "L40S")
    gp = {"method": "gp", "length_scale": ResidualCorrection().length_scale, "noise": ResidualCorrection().noise}
    analog = models.analog_rows(frozenset({"ada"}), case, "L40S")
    want = np.mean(case.errors(base, ANALOG_MIN_LAUNCHES, {**gp, "analog_penalty": 1.0}, analog))
    assert rows[1]["mape"] == pytest.approx(float(want))
