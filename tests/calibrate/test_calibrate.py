"""Few-shot calibration: the plan, the residual correction, the calibrated model file and the CLI.

Launch rows here are hand-made (shapes only); latencies are made up for the tests, not data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError
from pipeweave.calibrate import (
    GPUCalibration,
    ResidualCorrection,
    calibrate_model,
    plan_launches,
    plan_positions,
    regime_matrix,
)
from pipeweave.model import ensure_features


@pytest.fixture(scope="module")
def two_regimes(gemm_launches):
    """Tiny (latency-bound) and huge (compute-bound) GEMMs, featurized."""
    return ensure_features(gemm_launches([64, 96, 128, 160, 192] + [8192, 10240, 12288, 14336, 16384]))


def test_plan_covers_both_regimes(two_regimes):
    pos = plan_positions(two_regimes, 2)
    assert len(pos) == 2 and pos[0] < 5 <= pos[1]  # one small, one large launch
    assert (plan_positions(two_regimes, 2) == pos).all()  # deterministic
    assert plan_positions(two_regimes, 50).tolist() == list(range(10))  # n >= rows: every row
    assert len(plan_positions(two_regimes, 0)) == 0
    with pytest.raises(DataError, match=">= 0"):
        plan_positions(two_regimes, -1)


def test_plan_covers_the_coordinates_it_is_given(two_regimes):
    from pipeweave.calibrate import REGIME_FEATURES

    default = plan_positions(two_regimes, 3)
    assert (plan_positions(two_regimes, 3, features=REGIME_FEATURES) == default).all()
    # GEMM rows have no routing: on that coordinate alone every launch is the same, so one is planned
    assert plan_positions(two_regimes, 3, features={"routing_alpha": 1.0}).tolist() == [0]


def test_plan_launches_returns_candidate_subset_per_family(gemm_launches):
    cand = gemm_launches([64, 128, 4096, 8192, 16384])
    plan = plan_launches(cand, 3)
    assert len(plan) == 3 and list(plan.columns) == list(cand.columns)
    assert plan.index.isin(cand.index).all()


def test_residual_correction_scalar_and_gp(two_regimes):
    small = np.arange(10) < 5
    r = np.where(small, 0.3, -0.2)  # e.g. small launches slower than predicted, big ones faster
    scalar = ResidualCorrection(method="scalar").fit(two_regimes, r)
    assert scalar.predict(two_regimes) == pytest.approx(np.full(10, r.mean()))
    fit_pos = np.array([0, 2, 4, 5, 7, 9])
    gp = ResidualCorrection(method="gp", length_scale=3.0, noise=0.01).fit(two_regimes.iloc[fit_pos], r[fit_pos])
    pred = gp.predict(two_regimes)
    # the unmeasured launches of each regime get (nearly) their regime's residual; the scalar is 0.25 off
    assert np.abs(pred - r).max() < 0.1
    assert pred.min() >= -0.2 - 1e-12 and pred.max() <= 0.3 + 1e-12  # clipped to the measured range
    back = ResidualCorrection.from_dict(gp.to_dict())
    np.testing.assert_allclose(back.predict(two_regimes), pred)
    none = ResidualCorrection(method="none").fit(two_regimes, r)
    assert (none.predict(two_regimes) == 0).all()
    with pytest.raises(DataError, match="method"):
        ResidualCorrection(method="magic").fit(two_regimes, r)


def test_median_level_moves_the_gpu_less_for_a_few_far_slower_launches(two_regimes):
    """Made-up residuals: 8 launches near the model and 2 three times slower. The mean level follows the two, the
    median level stays near the eight; the setting is kept through the model file, its left-out refits and a
    borrowed band, and an unknown level is refused by name."""
    r = np.array([0.02, -0.03, 0.01, 0.0, -0.01, 0.03, 0.02, -0.02, 1.1, 1.1])
    mean = ResidualCorrection(method="scalar").fit(two_regimes, r)
    median = ResidualCorrection(method="scalar", level="median").fit(two_regimes, r)
    assert mean.mean_ == pytest.approx(r.mean()) and median.mean_ == pytest.approx(np.median(r))
    # the eight launches near the model: the median level leaves them near it, the mean moves them by +0.23
    assert abs(median.predict(two_regimes)[0]) < 0.05 < mean.predict(two_regimes)[0]
    back = ResidualCorrection.from_dict(median.to_dict())
    assert back.level == "median" and back.settings() == median.settings()
    assert "level" not in mean.to_dict()  # the default keeps older files' layout
    gp = ResidualCorrection(method="gp", length_scale=3.0, noise=0.3, level="median").fit(two_regimes, r)
    assert gp.mean_ == pytest.approx(np.median(r))
    with pytest.raises(DataError, match="same correction settings"):
        ResidualCorrection(method="scalar").fit(two_regimes, r).borrow_band(median)
    with pytest.raises(DataError, match=r"level must be one of \['mean', 'median'\], got 'mode'"):
        ResidualCorrection(level="mode").fit(two_regimes, r)
    with pytest.raises(DataError, match="model file is damaged"):
        ResidualCorrection.from_dict({**median.to_dict(), "level": "mode"})


def test_regime_matrix_needs_features(gemm_launches):
    with pytest.raises(DataError, match="featurized"):
        regime_matrix(gemm_launches([128]))


def test_calibrated_model_round_trip(gemm_launches, tmp_path, base_model):
    from pipeweave.model import load_model, save_model

    measured = gemm_launches([384, 1536, 6144], gpu="B200")
    measured["latency_us"] = [8.0, 60.0, 900.0]
    cal = calibrate_model(base_model, measured, gpu="B200", length_scale=1.0, noise=0.01)
    assert isinstance(cal.calibration_, GPUCalibration) and cal.calibration_.n_shots == {"gemm": 3}
    assert getattr(base_model, "calibration_", None) is None  # the base model is not changed
    query = pd.concat(
        [gemm_launches([512, 3072], gpu="B200"), gemm_launches([512, 3072], gpu="H100")], ignore_index=True
    )
    before, after = base_model.predict(query), cal.predict(query)
    assert (before[2:] == after[2:]).all()  # other GPUs untouched
    assert not np.allclose(before[:2], after[:2])
    path = save_model(cal, tmp_path / "b200.ubj")
    loaded = load_model(path)
    np.testing.assert_allclose(loaded.predict(query), after)
    # the measured launches themselves are predicted close to their measurement (GP with small noise)
    np.testing.assert_allclose(loaded.predict(measured), measured["latency_us"], rtol=0.15)
    with pytest.raises(DataError, match="already calibrated"):
        calibrate_model(cal, measured, gpu="B200")
    with pytest.raises(DataError, match="not on the calibrated GPU"):
        calibrate_model(base_model, measured.assign(gpu="H100"), gpu="B200")


def test_linear_trend_extrapolates(two_regimes):
    """The linear kernel carries a trend beyond the measured launches; the RBF alone reverts to the mean."""
    x = two_regimes["log10_t_env_us"].to_numpy()
    r = 0.2 * (x - x.mean())  # residual grows with the envelope time (made up)
    fit_pos = np.arange(8)  # the two largest launches are not measured
    rbf = ResidualCorrection(length_scale=0.5, noise=0.01).fit(two_regimes.iloc[fit_pos], r[fit_pos])
    lin = ResidualCorrection(length_scale=0.5, noise=0.01, linear=0.05).fit(two_regimes.iloc[fit_pos], r[fit_pos])
    err_rbf = np.abs(rbf.predict(two_regimes)[8:] - r[8:]).max()
    err_lin = np.abs(lin.predict(two_regimes)[8:] - r[8:]).max()
    assert err_lin < err_rbf
    np.testing.assert_allclose(
        ResidualCorrection.from_dict(lin.to_dict()).predict(two_regimes), lin.predict(two_regimes)
    )


# ---- the calibrated GPU's error band (leave-one-out over the measured launches)


def _spread_gemms(n: int, gpu: str = "B200") -> pd.DataFrame:
    """``n`` distinct hand-made GEMM shapes from small to large (m, n, k varied apart)."""
    rng = np.random.default_rng(0)
    e = rng.uniform(8, 13, size=(n, 3)).round().astype(int)
    rows = pd.DataFrame({"m": 2 ** e[:, 0] + 64 * np.arange(n), "n": 2 ** e[:, 1], "k": 2 ** e[:, 2]})
    return rows.assign(source="user", gpu=gpu, family="gemm", dtype="bfloat16")


@pytest.fixture(scope="module")
def spread():
    return ensure_features(_spread_gemms(20))


def test_loo_band_scalar_matches_formula(spread):
    """Scalar method: the left-out error of launch i is r_i - mean(r without i) and its variance is 1."""
    from pipeweave.calibrate import CALIBRATED_BAND_MIN_SHOTS
    from pipeweave.model import BAND_LEVELS

    r = np.linspace(-0.3, 0.4, 20) ** 3 + 0.1  # made-up residuals
    corr = ResidualCorrection(method="scalar").fit(spread, r)
    e = np.array([r[i] - np.delete(r, i).mean() for i in range(20)])
    np.testing.assert_allclose(corr.band_t_, np.quantile(e, BAND_LEVELS, method="hazen"))
    assert corr.loo_mape_ == pytest.approx(np.mean(np.abs(np.exp(-e) - 1)) * 100)
    lo, hi = corr.band_ratio(spread, 0.8)
    np.testing.assert_allclose(lo, np.exp(corr.band_t_[1]))  # q10, the same for every launch
    np.testing.assert_allclose(hi, np.exp(corr.band_t_[5]))  # q90
    few = ResidualCorrection(method="scalar").fit(spread.iloc[: CALIBRATED_BAND_MIN_SHOTS - 1], r[:15])
    assert len(few.band_t_) == 0 and np.isnan(few.loo_mape_)
    assert np.isnan(few.band_ratio(spread, 0.8)[0]).all()
    assert len(ResidualCorrection().fit(spread, r, band=False).band_t_) == 0


def test_gp_band_is_narrower_next_to_measured_launches(gemm_launches, spread):
    rng = np.random.default_rng(1)
    r = 0.2 * spread["log10_t_env_us"].to_numpy() + rng.normal(0, 0.05, 20)  # made-up residuals
    corr = ResidualCorrection(length_scale=1.0, noise=0.1).fit(spread, r)
    assert len(corr.band_t_) == 7 and (np.diff(corr.band_t_) >= 0).all()
    far = ensure_features(gemm_launches([16]).assign(gpu="B200"))  # a launch unlike every measured one
    near_lo, near_hi = corr.band_ratio(spread.iloc[:1], 0.8)
    far_lo, far_hi = corr.band_ratio(far, 0.8)
    assert far_hi[0] / far_lo[0] > near_hi[0] / near_lo[0] > 1.0
    lo50, hi50 = corr.band_ratio(spread, 0.5)
    lo90, hi90 = corr.band_ratio(spread, 0.9)
    assert (lo90 <= lo50).all() and (hi50 <= hi90).all()
    back = ResidualCorrection.from_dict(corr.to_dict())
    np.testing.assert_allclose(back.band_ratio(far, 0.8), (far_lo, far_hi))
    assert back.loo_mape_ == pytest.approx(corr.loo_mape_)
    with pytest.raises(DataError, match="band_t"):
        ResidualCorrection.from_dict({**corr.to_dict(), "band_t": [0.3, 0.1]})
    with pytest.raises(DataError, match="0.5, 0.8 or 0.9|coverage"):
        corr.band_ratio(spread, 0.7)


def test_calibrated_model_predict_interval(gemm_launches, tmp_path, base_model):
    from pipeweave.calibrate import CALIBRATED_BAND
    from pipeweave.model import has_error_bands, load_model, save_model

    measured = _spread_gemms(20)
    rng = np.random.default_rng(2)
    measured["latency_us"] = base_model.predict(measured) * np.exp(0.3 + rng.normal(0, 0.1, 20))  # made up
    cal = calibrate_model(base_model, measured, gpu="B200")
    assert cal.calibration_.has_band() and not has_error_bands(base_model) and has_error_bands(cal)
    query = pd.concat([gemm_launches([512, 3072], gpu="B200"), gemm_launches([512], gpu="H100")], ignore_index=True)
    iv = cal.predict_interval(query, 0.8)
    pred = cal.predict(query)
    assert iv["band"].tolist() == [CALIBRATED_BAND, CALIBRATED_BAND, ""]  # the base model has no bands of its own
    assert (iv["latency_us_lo"][:2] < pred[:2]).all() and (pred[:2] < iv["latency_us_hi"][:2]).all()
    assert iv["latency_us_lo"].isna().tolist() == [False, False, True]
    path = save_model(cal, tmp_path / "b200.ubj")
    assert has_error_bands(path)
    pd.testing.assert_frame_equal(load_model(path).predict_interval(query, 0.8), iv)
    # a GPU the base model trained on: left-out errors would flatter, so no calibrated band
    on_h100 = calibrate_model(base_model, measured.assign(gpu="H100"), gpu="H100")
    assert not on_h100.calibration_.has_band() and not has_error_bands(on_h100)
    with pytest.raises(DataError, match="no error bands"):
        on_h100.predict_interval(query, 0.8)


def test_refit_base_borrows_the_band_of_a_model_not_trained_on_the_launches(gemm_launches, tmp_path, base_model):
    """The refit recipe: a base model trained on the measured GPU gets no band of its own; with ``band_model``
    (a model that did not train there) it gets that model's left-out band, at the same width per launch."""
    from pipeweave.calibrate import CALIBRATED_BAND
    from pipeweave.model import PipeweaveRegressor, load_model, save_model

    measured = _spread_gemms(20)
    rng = np.random.default_rng(3)
    measured["latency_us"] = base_model.predict(measured) * np.exp(0.3 + rng.normal(0, 0.1, 20))  # made up
    # the "refit": base_model's training rows plus the measured B200 launches
    train = gemm_launches([256, 512, 1024, 2048, 4096, 8192] * 2)
    train["gpu"] = ["A100"] * 6 + ["H100"] * 6
    train["latency_us"] = [9.0, 14.0, 40.0, 230.0, 1700.0, 13000.0, 7.0, 10.0, 22.0, 110.0, 800.0, 6000.0]
    refit = PipeweaveRegressor(n_estimators=5).fit(pd.concat([train, measured], ignore_index=True))
    alone = calibrate_model(refit, measured, gpu="B200")
    assert not alone.calibration_.has_band()  # trained on B200: its own left-out errors would flatter
    cal = calibrate_model(refit, measured, gpu="B200", band_model=base_model)
    own = calibrate_model(base_model, measured, gpu="B200")  # the calibration without the refit
    c, o = cal.calibration_.corrections["gemm"], own.calibration_.corrections["gemm"]
    assert c.band_source_ == "band_model" and o.band_source_ == "shots"
    np.testing.assert_array_equal(c.band_t_, o.band_t_)
    assert c.loo_mape_ == o.loo_mape_
    query = gemm_launches([512, 3072, 12288], gpu="B200")
    iv, ref = cal.predict_interval(query, 0.8), own.predict_interval(query, 0.8)
    assert (iv["band"] == CALIBRATED_BAND).all()
    # the same width (hi / lo) per launch, around the refit's own prediction
    np.testing.assert_allclose(iv["latency_us_hi"] / iv["latency_us_lo"], ref["latency_us_hi"] / ref["latency_us_lo"])
    pred = cal.predict(query)
    assert (iv["latency_us_lo"] < pred).all() and (pred < iv["latency_us_hi"]).all()
    loaded = load_model(save_model(cal, tmp_path / "refit_cal.ubj"))
    assert loaded.calibration_.corrections["gemm"].band_source_ == "band_model"
    # a band model that also trained on the GPU lends nothing
    assert not calibrate_model(refit, measured, gpu="B200", band_model=refit).calibration_.has_band()


def test_borrow_band_refuses_other_settings_or_launches(spread):
    feats, r = spread, np.linspace(-0.2, 0.4, len(spread))  # made-up residuals
    a = ResidualCorrection(length_scale=2.0).fit(feats, r)
    with pytest.raises(DataError, match="same correction settings"):
        ResidualCorrection(length_scale=4.0).fit(feats, r, band=False).borrow_band(a)
    with pytest.raises(DataError, match="same correction settings"):
        ResidualCorrection(length_scale=2.0).fit(feats.iloc[1:], r[1:], band=False).borrow_band(a)


def test_gpu_aliases_calibrate_the_catalog_gpu(gemm_launches, base_model):
    """An alias (as a user's file or a device string names the GPU) calibrates the GPU predictions look up."""
    from pipeweave.calibrate import trained_on

    measured = _spread_gemms(20, gpu="NVIDIA B200")
    rng = np.random.default_rng(5)
    measured["latency_us"] = base_model.predict(measured.assign(gpu="B200")) * np.exp(0.4 + rng.normal(0, 0.05, 20))
    cal = calibrate_model(base_model, measured, gpu="nvidia-b200")
    assert cal.calibration_.gpu == "B200"
    query = gemm_launches([512, 3072], gpu="B200")
    assert not np.allclose(cal.predict(query), base_model.predict(query))  # the correction applies
    assert (cal.predict_interval(query, 0.8)["band"] == "calibrated").all()
    np.testing.assert_allclose(cal.predict(query.assign(gpu="NVIDIA B200")), cal.predict(query))  # an alias too
    # measured rows named by the catalog name, the calibrated GPU by an alias (and the reverse) agree
    calibrate_model(base_model, measured.assign(gpu="B200"), gpu="NVIDIA B200")
    assert trained_on(base_model, "NVIDIA H100", "gemm") and trained_on(base_model, "H100-SXM", "gemm")


def test_repeated_launches_are_merged_before_the_fit(base_model):
    """Three copies of the same 20 hand-made launches give the correction and band of the 20 (medians)."""
    measured = _spread_gemms(20)
    rng = np.random.default_rng(7)
    measured["latency_us"] = base_model.predict(measured) * np.exp(0.3 + rng.normal(0, 0.2, 20))
    once = calibrate_model(base_model, measured, gpu="B200")
    tripled = pd.concat([measured, measured.assign(latency_us=measured["latency_us"] * 1.01), measured])
    with pytest.warns(UserWarning, match="40 measured rows repeat a launch; merged into 20 distinct"):
        thrice = calibrate_model(base_model, tripled.reset_index(drop=True), gpu="B200")
    assert thrice.calibration_.n_shots == {"gemm": 20}
    c1, c3 = once.calibration_.corrections["gemm"], thrice.calibration_.corrections["gemm"]
    assert c3.loo_mape_ == pytest.approx(c1.loo_mape_, rel=1e-9)  # the medians are the first copies' values


def test_latencies_below_the_physical_bound_are_refused_or_left_out(base_model):
    """Hand-made latencies: every row in ms (1000x low) is refused with the unit; one bad row is left out."""
    from pipeweave.calibrate import merge_repeated_launches

    measured = _spread_gemms(20)
    measured["latency_us"] = base_model.predict(measured) * 1.2
    with pytest.raises(DataError, match=r"20 of 20 measured rows are faster .* looks like milliseconds"):
        calibrate_model(base_model, measured.assign(latency_us=measured["latency_us"] / 1000), gpu="B200")
    one_bad = measured.copy()
    one_bad.loc[3, "latency_us"] /= 1000
    with pytest.warns(UserWarning, match=r"1 of 20 measured rows .* \(rows \[4\]"):
        cal = calibrate_model(base_model, one_bad, gpu="B200")
    assert cal.calibration_.n_shots == {"gemm": 19}
    assert merge_repeated_launches(measured) is measured  # nothing repeats: the same frame


def test_a_calibration_warns_when_its_gpu_comes_back_with_another_spec(gemm_launches, tmp_path, base_model):
    """A spec-file GPU calibrated, saved, loaded, then predicted with a changed spec under the same name."""
    import dataclasses
    import warnings

    from pipeweave.api import predict_frame
    from pipeweave.hardware import get_gpu
    from pipeweave.model import load_model, save_model

    spec = dataclasses.replace(get_gpu("B200"), name="MyGPU", aliases=())
    measured = _spread_gemms(20, gpu="MyGPU")
    measured["latency_us"] = base_model.predict(measured, gpus={"MyGPU": spec}) * 1.3
    cal = load_model(
        save_model(calibrate_model(base_model, measured, gpu="MyGPU", gpus={"MyGPU": spec}), tmp_path / "c.ubj")
    )
    assert cal.calibration_.spec["dram_bw_gbps"] == spec.dram_bw_gbps
    rows = gemm_launches([512, 3072], gpu="MyGPU")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        predict_frame(rows, cal, {"MyGPU": spec})  # the same spec: no warning
    faster = dataclasses.replace(spec, dram_bw_gbps=2 * spec.dram_bw_gbps)
    with pytest.warns(UserWarning, match=r"calibrated on MyGPU with another spec \(dram_bw_gbps: "):
        predict_frame(rows, cal, {"MyGPU": faster})


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"length_scale": float("inf")}, "length_scale and noise"),
        ({"length_scale": 1e-300}, "length_scale and noise"),
        ({"noise": 1e308}, "length_scale and noise"),
        ({"linear": -1.0}, "linear"),
        ({"linear": float("nan")}, "linear"),
    ],
)
def test_correction_settings_outside_their_range_are_refused(spread, kw, match):
    settings = {"method": "gp", "length_scale": 2.0, "noise": 0.3, "linear": 0.0, **kw}
    with pytest.raises(DataError, match=match):
        ResidualCorrection(**settings).fit(spread, np.zeros(len(spread)))


def test_an_unknown_gpu_or_family_is_named_as_such(base_model):
    """Hand-made rows: calibrating on gpu='H1000' said the rows were "on GPUs ['H100-SXM'], not on the calibrated
    GPU 'H1000'"; trained_on answered True for a family the model never saw."""
    from pipeweave import UnknownGPUError
    from pipeweave.calibrate import trained_on

    measured = _spread_gemms(8, gpu="H100")
    measured["latency_us"] = base_model.predict(measured) * 1.2
    with pytest.raises(UnknownGPUError, match=r"unknown GPU 'H1000'.*did you mean \['H100-SXM'"):
        calibrate_model(base_model, measured, gpu="H1000")
    assert trained_on(base_model, "H100", "gemm") and not trained_on(base_model, "H100", "gemmm")
    assert not trained_on(base_model, "H100", "rmsnorm")


# ---- method "auto": the settings chosen by leave-one-out MAPE on the measured launches


def _loo_mape(settings: dict, feats: pd.DataFrame, r: np.ndarray) -> float:
    """Leave-one-out MAPE (%) of one fixed setting, computed here by refitting it n times."""
    e = []
    for i in range(len(r)):
        keep = np.arange(len(r)) != i
        c = ResidualCorrection(**settings).fit(feats.iloc[keep], r[keep], band=False)
        e.append(r[i] - c.predict(feats.iloc[[i]])[0])
    return float(np.mean(np.abs(np.expm1(-np.asarray(e)))) * 100)


def test_auto_takes_the_setting_with_the_lowest_left_out_mape(spread):
    from pipeweave.calibrate import AUTO_CANDIDATES

    rng = np.random.default_rng(4)
    r = 0.25 * spread["log10_t_env_us"].to_numpy() - 0.5 + rng.normal(0, 0.03, len(spread))  # made-up residuals
    auto = ResidualCorrection(method="auto").fit(spread, r)
    assert len(auto.auto_loo_) == len(AUTO_CANDIDATES)
    best = int(np.argmin(auto.auto_loo_))
    assert auto.settings() == {
        "length_scale": 4.0,
        "noise": 0.3,
        "linear": 0.0,
        "analog_penalty": 0.0,
        "level": "mean",
        **AUTO_CANDIDATES[best],
    }
    # the scores are the settings' own left-out MAPEs: none = the model's error, then the scalar and one GP
    assert auto.auto_loo_[0] == pytest.approx(np.mean(np.abs(np.expm1(-r))) * 100)
    for i in (1, 2, best):
        assert auto.auto_loo_[i] == pytest.approx(_loo_mape(AUTO_CANDIDATES[i], spread, r), rel=1e-9)
    assert AUTO_CANDIDATES[best]["method"] == "gp"  # a trend over the regime: a GP predicts it, a scalar cannot
    fixed = ResidualCorrection(**AUTO_CANDIDATES[best]).fit(spread, r)
    np.testing.assert_allclose(auto.predict(spread), fixed.predict(spread))
    assert auto.loo_mape_ == pytest.approx(auto.auto_loo_[best])  # the band is the chosen setting's
    back = ResidualCorrection.from_dict(auto.to_dict())
    np.testing.assert_allclose(back.auto_loo_, auto.auto_loo_, rtol=1e-4)
    np.testing.assert_allclose(back.predict(spread), auto.predict(spread))


def test_auto_keeps_the_model_when_no_correction_predicts_left_out_launches(spread):
    r = np.where(np.arange(len(spread)) % 2 == 0, 0.08, -0.08)  # made up: zero-mean, no structure to learn
    r = r * np.where(np.arange(len(spread)) % 4 < 2, 1.0, -1.0)
    auto = ResidualCorrection(method="auto").fit(spread, r)
    assert auto.method == "none" and auto.auto_loo_[0] == auto.auto_loo_.min()
    np.testing.assert_array_equal(auto.predict(spread), 0.0)
    assert len(auto.band_t_) == 0  # method none: no band, as when chosen by hand


def test_auto_with_too_few_launches_keeps_the_model(spread):
    from pipeweave.calibrate import AUTO_MIN_LAUNCHES

    few = spread.iloc[: AUTO_MIN_LAUNCHES - 1]
    auto = ResidualCorrection(method="auto").fit(few, np.full(len(few), 0.5))
    assert auto.method == "none" and len(auto.auto_loo_) == 0
    enough = spread.iloc[:AUTO_MIN_LAUNCHES]
    assert ResidualCorrection(method="auto").fit(enough, np.full(AUTO_MIN_LAUNCHES, 0.5)).method != "none"


def test_calibrate_model_auto_chooses_on_the_band_models_residuals(gemm_launches, base_model):
    """With a refit base (trained on the launches), auto chooses on the residuals of the model that was not."""
    from pipeweave.model import PipeweaveRegressor

    measured = _spread_gemms(20)
    rng = np.random.default_rng(5)
    measured["latency_us"] = base_model.predict(measured) * np.exp(0.3 + rng.normal(0, 0.1, 20))  # made up
    own = calibrate_model(base_model, measured, gpu="B200", method="auto").calibration_.corrections["gemm"]
    assert len(own.auto_loo_) and own.method != "none"  # a 1.35x offset: worth correcting
    train = gemm_launches([256, 1024, 4096] * 2)
    train["gpu"] = ["A100"] * 3 + ["H100"] * 3
    train["latency_us"] = [9.0, 40.0, 1700.0, 7.0, 22.0, 800.0]
    refit = PipeweaveRegressor(n_estimators=5).fit(pd.concat([train, measured], ignore_index=True))
    c = calibrate_model(refit, measured, gpu="B200", method="auto", band_model=base_model)
    c = c.calibration_.corrections["gemm"]
    assert c.settings() == own.settings() and c.band_source_ == "band_model"
    np.testing.assert_array_equal(c.auto_loo_, own.auto_loo_)


def test_cli_auto_notes_unused_gp_settings_and_says_whose_residuals_chose(gemm_launches, tmp_path, base_model, capsys):
    """`calibrate fit --method auto` with --length-scale / --noise says they are unused (auto chooses its own);
    with --band-model on a refit base it says the choice was made on the band model's residuals (the MAPEs it
    prints are that model's); one launch is "1 launch". Latencies made up."""
    from pipeweave.cli.main import main
    from pipeweave.model import PipeweaveRegressor, save_model

    measured = _spread_gemms(20)
    rng = np.random.default_rng(5)
    measured["latency_us"] = base_model.predict(measured) * np.exp(0.3 + rng.normal(0, 0.1, 20))  # made up
    csv, one = tmp_path / "m.csv", tmp_path / "one.csv"
    measured.to_csv(csv, index=False)
    measured.head(1).to_csv(one, index=False)
    base = save_model(base_model, tmp_path / "base.ubj")
    train = gemm_launches([256, 1024, 4096] * 2)
    train["gpu"] = ["A100"] * 3 + ["H100"] * 3
    train["latency_us"] = [9.0, 40.0, 1700.0, 7.0, 22.0, 800.0]
    refit = save_model(
        PipeweaveRegressor(n_estimators=5).fit(pd.concat([train, measured], ignore_index=True)), tmp_path / "r.ubj"
    )
    fit = ["calibrate", "fit", "--gpu", "B200", "--method", "auto"]

    def run(method: str, *extra: str, model=base, out: str = "a.ubj") -> int:  # noqa: ANN001
        argv = [*fit[:-1], method, "--profiles", str(csv), "--model", str(model), *extra]
        return main([*argv, "--out", str(tmp_path / out)])

    capsys.readouterr()
    assert run("auto", "--length-scale", "2", "--noise", "0.5") == 0
    err = capsys.readouterr().err
    assert "--length-scale / --noise unused with --method auto" in err and "--linear" not in err
    # an unused value is neither checked nor recorded: a negative length scale is only noted
    assert run("auto", "--length-scale", "-2", out="n.ubj") == 0
    assert "--length-scale unused" in capsys.readouterr().err
    assert run("gp", "--length-scale", "-2", out="n.ubj") == 2  # gp uses it: refused
    assert "--length-scale must be in [0.001, 1000] regime units, got -2" in capsys.readouterr().err
    assert run("gp", "--length-scale", "2", out="g.ubj") == 0
    assert "unused" not in capsys.readouterr().err  # gp uses them
    from pipeweave.model import read_stamp

    # the saved command names the GP settings only where the method used them
    assert "--length-scale 2.0 --noise" in read_stamp(tmp_path / "g.ubj")["command"]
    assert "--length-scale" not in read_stamp(tmp_path / "a.ubj")["command"]
    assert run("auto", "--band-model", str(base), model=refit, out="b.ubj") == 0
    assert "on the --band-model's residuals: left-out MAPE" in capsys.readouterr().out
    assert main([*fit, "--profiles", str(one), "--model", str(base), "--out", str(tmp_path / "o.ubj")]) == 0
    out = capsys.readouterr().out
    assert "gemm: 1 launch," in out and "residuals" not in out


def test_cli_predict_names_one_calibrated_launch_in_the_singular(gemm_launches, tmp_path, capsys):
    """`predict --interval` on a GPU calibrated with one launch (no band of its own): "1 launch"; for a family
    it never measured: "no ... launch". The shipped
    model (it has bands); the latency is made up."""
    from pipeweave.cli.main import main
    from pipeweave.model import load_model, save_model

    one = gemm_launches([1024], gpu="B300").assign(latency_us=60.0)  # made up
    path = save_model(calibrate_model(load_model(), one, gpu="B300", method="auto"), tmp_path / "b300.ubj")
    capsys.readouterr()
    argv = ["predict", "--model", str(path), "--gpu", "B300", "--family", "gemm", "--m", "128", "--n", "4096"]
    assert main([*argv, "--k", "4096", "--interval", "0.8"]) == 0
    assert "the calibration on 1 launch has none of its own" in capsys.readouterr().out
    # a family the calibration never measured: said so, not "0 launches"
    argv = ["predict", "--model", str(path), "--gpu", "B300", "--family", "rmsnorm", "--num-tokens", "64"]
    assert main([*argv, "--hidden-size", "4096", "--interval", "0.8"]) == 0
    out = capsys.readouterr().out
    assert "the calibration measured no rmsnorm launch;" in out and "0 launches" not in out


def test_calibration_corrects_the_predictions_predict_makes_for_launches_naming_no_source():
    """Measured rows read from a user's file carry source 'user'; `pipeweave.predict` predicts a launch that
    names no source with its family's default source, and the shipped model's RMSNorm predictions differ
    between the two. The residuals are taken against the latter, so a GPU measured at exactly 1.3x the model's
    predictions calibrates to 1.3x them (latencies made up)."""
    import pipeweave as pw
    from pipeweave.model import ensure_features

    shipped = pw.load_model()
    launches = pd.DataFrame(
        {
            "family": "rmsnorm",
            "dtype": "bfloat16",
            "gpu": "B300",
            "num_tokens": [16, 256, 4096, 32768],
            "hidden_size": 4096,
        }
    )
    base = pw.predict(launches, model=shipped).to_numpy()
    as_user = shipped.predict(ensure_features(launches.assign(source="user")))
    assert np.abs(np.log(as_user / base)).max() > 0.05  # the source matters to this model: the test can fail
    measured = launches.assign(source="user", latency_us=1.3 * base)  # made up: 1.3x the model
    cal = calibrate_model(shipped, measured, gpu="B300", method="scalar")
    assert cal.calibration_.corrections["rmsnorm"].mean_ == pytest.approx(np.log(1.3), abs=1e-9)
    np.testing.assert_allclose(pw.predict(launches, model=cal).to_numpy(), 1.3 * base, rtol=1e-9)


def test_fp8_gemms_timed_as_a_bare_scaled_mm_are_noted(base_model):
    """The helper's fp8 timings (a bare torch._scaled_mm) are another operation than AIConfigurator's fp8 rows."""
    import warnings

    measured = _spread_gemms(20)
    measured["latency_us"] = base_model.predict(measured) * 1.1  # hand-made latencies
    fp8 = measured.assign(dtype="fp8", timing="cuda_graph_torch_scaled_mm")
    with pytest.warns(UserWarning, match=r"20 measured gemm fp8 rows were timed as torch_scaled_mm: a bare"):
        calibrate_model(base_model, fp8, gpu="B200")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # bf16 timed by torch.matmul: the model's own convention, no note
        calibrate_model(base_model, measured.assign(timing="cuda_graph_torch_matmul"), gpu="B200")


def _moe(tokens, distribution="balanced", gpu="H100") -> pd.DataFrame:
    t = np.asarray(tokens, dtype=float)
    return pd.DataFrame(
        {
            "source": "user",
            "gpu": gpu,
            "family": "fused_moe",
            "dtype": "bfloat16",
            "num_tokens": t,
            "hidden_size": 4096.0,
            "inter_size": 1536.0,
            "num_experts": 128.0,
            "topk": 8.0,
            "distribution": distribution,
        }
    )


def test_fused_moe_corrections_read_the_routing_unless_generic():
    from pipeweave.calibrate import REGIME_FEATURES, regime_features
    from pipeweave.model import PipeweaveRegressor

    assert regime_features("gemm") == REGIME_FEATURES == regime_features("fused_moe", "generic")
    extra = set(regime_features("fused_moe")) - set(REGIME_FEATURES)
    assert extra == {"routing_alpha", *(f"log2_shape_{i}" for i in range(1, 6))}
    with pytest.raises(DataError, match="'moe'") as err:
        regime_features("fused_moe", "moe")
    assert err.value.hint
    # made-up latencies: two routings on two GPUs; on the new GPU the balanced launches run 1.5x the model, the
    # power-law ones as predicted
    rows = pd.concat(
        [_moe([16, 64, 256, 1024, 4096], d, g) for g in ("A100", "H100") for d in ("balanced", "power_law_1.2")],
        ignore_index=True,
    )
    rows["latency_us"] = np.tile([30.0, 60.0, 150.0, 500.0, 1900.0], 4) * np.repeat([1.6, 1.7, 1.0, 1.1], 5)
    base = PipeweaveRegressor(n_estimators=5).fit(rows)
    measured = pd.concat([_moe([16, 256, 4096], d, "B200") for d in ("balanced", "power_law_1.2")], ignore_index=True)
    measured["latency_us"] = base.predict(measured) * np.where(measured["distribution"] == "balanced", 1.5, 1.0)
    query = pd.concat([_moe([64, 1024], d, "B200") for d in ("balanced", "power_law_1.2")], ignore_index=True)
    gap = {}
    for regime in ("family", "generic"):
        cal = calibrate_model(base, measured, gpu="B200", regime=regime, length_scale=4.0, noise=0.01)
        assert list(cal.calibration_.corrections["fused_moe"].features) == list(regime_features("fused_moe", regime))
        c = np.log(cal.predict(query) / base.predict(query))
        gap[regime] = c[:2] - c[2:]  # balanced minus power-law, per token count
    assert (gap["family"] > 0.2).all()  # the routing's own residual reaches the unmeasured launches
    assert (np.abs(gap["generic"]) < 0.1).all()  # generic coordinates barely tell the routings apart
    with pytest.raises(DataError, match="regime"):
        calibrate_model(base, measured, gpu="B200", regime="moe")


def test_cli_fit_says_what_fused_moes_gp_reads_and_records_a_generic_regime(tmp_path, capsys):
    """`calibrate fit` names the coordinates a correction reads beyond the generic ones; `--regime generic` is
    recorded in the model's command. Latencies made up."""
    from pipeweave.cli.main import main
    from pipeweave.model import PipeweaveRegressor, read_stamp, save_model

    rows = pd.concat([_moe([16, 256, 4096], d, g) for g in ("A100", "H100") for d in ("balanced", "power_law_1.2")])
    rows["latency_us"] = np.tile([30.0, 150.0, 1900.0], 4)
    model = PipeweaveRegressor(n_estimators=5).fit(rows.reset_index(drop=True))
    base = save_model(model, tmp_path / "base.ubj")
    measured = _moe([64, 1024], "balanced", "B200")
    measured["latency_us"] = model.predict(measured) * 1.3
    measured.to_csv(tmp_path / "m.csv", index=False)
    fit = ["calibrate", "fit", "--gpu", "B200", "--profiles", str(tmp_path / "m.csv"), "--model", str(base)]
    capsys.readouterr()
    assert main([*fit, "--out", str(tmp_path / "f.ubj")]) == 0
    assert "its GP also reads the routing and the shape columns" in capsys.readouterr().out
    assert main([*fit, "--regime", "generic", "--out", str(tmp_path / "g.ubj")]) == 0
    assert "also reads" not in capsys.readouterr().out
    assert "--regime generic" in read_stamp(tmp_path / "g.ubj")["command"]
    assert "--regime" not in read_stamp(tmp_path / "f.ubj")["command"]  # the default is not spelled out


def test_plan_launches_can_cover_fused_moes_own_coordinates(gemm_launches):
    from pipeweave.calibrate import FAMILY_REGIME_FEATURES

    cand = pd.concat(
        [_moe([16, 64, 256, 1024, 4096], d, "B200") for d in ("balanced", "power_law_1.01", "power_law_1.2")]
        + [gemm_launches([64, 128, 4096, 8192, 16384], gpu="B200")],
        ignore_index=True,
    )
    moe = (cand["family"] == "fused_moe").to_numpy()
    feats = ensure_features(cand[moe].reset_index(drop=True))
    family = plan_launches(cand, 4, regime="family")
    want = plan_positions(feats, 4, features=FAMILY_REGIME_FEATURES["fused_moe"])
    assert family.index[family["family"] == "fused_moe"].tolist() == np.flatnonzero(moe)[want].tolist()
    generic = plan_launches(cand, 4)
    assert (family[family["family"] == "gemm"].index == generic[generic["family"] == "gemm"].index).all()
    with pytest.raises(DataError, match="'moe'"):
        plan_launches(cand, 4, regime="moe")
