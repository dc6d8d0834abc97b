"""Baselines share one surface: fit(df) -> self, predict(df) -> latency_us (real rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave.baselines import (
    CRUDE_FEATURES,
    KernelSight,
    Roofline,
    TileSight,
    XGBoostCrude,
    XGBoostRaw,
    crude_features,
    select_by_inner_logo,
    wave_factor,
)
from pipeweave.frontend import LAUNCH_US


@pytest.mark.parametrize("cls", [Roofline, TileSight])
def test_analytical_baselines_need_no_training(cls, small_frame):
    pred = cls().predict(small_frame)
    assert pred.shape == (len(small_frame),) and np.isfinite(pred).all() and (pred > 0).all()


def test_plain_roofline_is_a_lower_bound_style_estimate(small_frame):
    roof = Roofline(calibrated=False).predict(small_frame)
    assert (roof <= small_frame["t_env_us"].to_numpy() + 1e-9).all()


def test_calibrated_roofline_adds_launch_derates_and_wave_quantizes(small_frame):
    plain = Roofline(calibrated=False).predict(small_frame)
    cal = Roofline().predict(small_frame)
    u = wave_factor(small_frame)
    assert (u >= 1.0 - 1e-12).all()
    # calibration only slows the roof down (eta < 1, u >= 1) and adds one launch time
    assert (cal >= plain + LAUNCH_US - 1e-9).all()
    assert (cal <= LAUNCH_US + u * plain / 0.86 + 1e-6).all()


def test_tilesight_adds_one_launch(small_frame):
    t = TileSight().predict(small_frame)
    np.testing.assert_allclose(t - LAUNCH_US, small_frame["t_tilesight_us"].to_numpy(float))


@pytest.mark.parametrize("cls", [KernelSight, XGBoostRaw, XGBoostCrude])
def test_learned_baselines_fit_predict(cls, small_frame):
    kw = {} if cls is KernelSight else {"n_estimators": 20}
    model = cls(n_jobs=1, **kw).fit(small_frame)
    pred = model.predict(small_frame.drop(columns=["latency_us"]))
    assert pred.shape == (len(small_frame),) and np.isfinite(pred).all() and (pred > 0).all()


def test_kernelsight_eta_is_bounded_and_launch_floored(small_frame):
    model = KernelSight(n_jobs=1).fit(small_frame)
    pred = model.predict(small_frame)
    assert (pred >= LAUNCH_US).all()
    # eta in [min training eta, 1]: a prediction is never above t0 + u T_roof / eta_lo
    bound = wave_factor(small_frame) * small_frame["t_roofline_us"].to_numpy(float)
    for fam, lo in model.eta_lo_.items():
        m = (small_frame["family"] == fam).to_numpy()
        assert 0 < lo <= 1
        assert (pred[m] <= LAUNCH_US + bound[m] / lo * (1 + 1e-9)).all()
        assert (pred[m] >= LAUNCH_US + bound[m] * (1 - 1e-9)).all()
    # the ridge penalty was chosen among the candidates by inner LOGO over training generations
    assert set(model.alpha_.values()) <= set(model.alphas)
    assert all(len(s) == 2 * len(model.alphas) for s in model.inner_scores_.values())  # x {with, without arch}
    assert set(model.arch_.values()) <= {True, False}


def test_kernelsight_extreme_inputs_stay_bounded(small_frame):
    """Features far outside the training range cannot blow eta up (the old head's failure)."""
    model = KernelSight(n_jobs=1).fit(small_frame)
    far = small_frame.copy()
    far["log2_ai_over_ridge"] = 40.0
    far["log2_waves"] = -30.0
    pred = model.predict(far)
    bound = wave_factor(far) * far["t_roofline_us"].to_numpy(float)
    lo = min(model.eta_lo_.values())
    assert np.isfinite(pred).all() and (pred <= LAUNCH_US + bound / lo * (1 + 1e-9)).all()


def test_kernelsight_fits_on_rows_of_at_least_10us(small_frame):
    """Only the anchors' population enters the fit: changing rows < 10 us changes nothing."""
    a = KernelSight(n_jobs=1).fit(small_frame).predict(small_frame)
    other = small_frame.copy()
    small = other["latency_us"] < 10
    assert small.any() and (~small).sum() >= 20
    other.loc[small, "latency_us"] = other.loc[small, "latency_us"] * 0.7  # still < 10 us
    b = KernelSight(n_jobs=1).fit(other).predict(small_frame)
    np.testing.assert_allclose(a, b)


def test_xgboost_raw_depth_chosen_inside_training(small_frame):
    model = XGBoostRaw(n_estimators=10, n_jobs=1, depths=(2, 4), tune_rows_per_gpu=100).fit(small_frame)
    assert model.max_depth_ in (2, 4) and set(model.inner_scores_) == {"2", "4"}
    fixed = XGBoostRaw(n_estimators=10, n_jobs=1, depths=None, max_depth=3).fit(small_frame)
    assert fixed.max_depth_ == 3 and fixed.inner_scores_ == {}


def test_crude_features_of_a_hand_made_gemm():
    """One hand-made GEMM on a hand-made 100-SM GPU (not measured data)."""
    df = pd.DataFrame(
        {
            "family": ["gemm"],
            "dtype": ["bfloat16"],
            "m": [256.0],
            "n": [1000.0],
            "k": [4096.0],
            "gpu_sm_count": [100.0],
            "peak_tensor_flops_per_us": [1e9],
            "gpu_dram_bw_gbps": [2000.0],
            "gpu_l2_mib": [50.0],
        }
    )
    X, t_wq = crude_features(df)
    f = dict(zip(CRUDE_FEATURES, X[0]))
    tiles = 2 * 8  # ceil(256/128) * ceil(1000/128)
    assert f["log2_waves"] == pytest.approx(np.log2(tiles / 100))
    assert f["pad_efficiency"] == pytest.approx(256 * 1000 / (256 * 1024))
    assert f["wave_efficiency"] == pytest.approx(tiles / 100)  # one partial wave
    flops = 2 * 256 * 1000 * 4096
    t_c = flops / 1e9
    assert t_wq[0] == pytest.approx(t_c / f["pad_efficiency"] / f["wave_efficiency"])
    assert len(CRUDE_FEATURES) == X.shape[1] == 11


def test_select_by_inner_logo_picks_the_best_candidate():
    groups = np.array(["a"] * 5 + ["b"] * 5 + ["c"] * 5)
    lat = np.full(15, 10.0)

    def fit_predict(c, tr, te):  # candidate c predicts c for every row
        assert not set(groups[tr]) & set(groups[te])  # never trains on the inner held-out group
        return np.full(len(te), float(c))

    best, scores = select_by_inner_logo([5.0, 9.0, 20.0], groups, fit_predict, lat)
    assert best == 9.0 and scores["9.0"] == pytest.approx(10.0)
    best, scores = select_by_inner_logo([5.0, 9.0], np.array(["a"] * 15), fit_predict, lat)
    assert best == 5.0 and scores == {}


def test_crude_baseline_holds_backend_one_hots_of_one_gpu(load_real_rows):
    """Real prefill-attention rows (60 per GPU): FlashAttention on H100-SXM and L40S, SGLang's Triton kernels on
    RTX PRO 6000 only; the crude baseline, like the model, holds ``backend_triton`` at 0 (min_backend_gpus=2)."""
    from pipeweave.frontend import crude_matrix_names

    rows = load_real_rows(["attention_context"], ["H100-SXM", "L40S", "RTX-PRO-6000-S"], 60)
    two = XGBoostCrude(n_jobs=1, n_estimators=10).fit(rows)
    one = XGBoostCrude(n_jobs=1, n_estimators=10, min_backend_gpus=1).fit(rows)
    assert two.min_backend_gpus == 2 and two.unsupported_backends_ == ("triton",)
    assert one.unsupported_backends_ == ()
    j = crude_matrix_names().index("backend_triton")
    X2, _ = two._matrix(rows)  # the matrix the booster was fitted on and predicts from
    X1, _ = one._matrix(rows)
    assert (X2[:, j] == 0.0).all() and (X1[:, j] == 1.0).sum() == 60
    assert np.isfinite(two.predict(rows)).all()


def _hand_made_gemms() -> pd.DataFrame:
    """Twelve hand-made gemm launches on two GPUs with made-up latencies (not measurements)."""
    sizes = [256, 512, 1024, 2048, 4096, 8192]
    return pd.DataFrame(
        [
            {"family": "gemm", "dtype": "bfloat16", "gpu": g, "m": s, "n": s, "k": s, "latency_us": 1e-9 * s**3 + 5}
            for g in ("H100", "A100")
            for s in sizes
        ]
    )


@pytest.mark.parametrize("cls", [KernelSight, XGBoostRaw, XGBoostCrude])
def test_learned_baselines_name_what_is_missing(cls):
    """Predicting before fit raised AttributeError ('booster_'), fitting without latency_us a KeyError."""
    from sklearn.exceptions import NotFittedError

    from pipeweave import DataError

    rows = _hand_made_gemms()
    with pytest.raises(NotFittedError, match=f"this {cls.__name__} is not fitted yet"):
        cls().predict(rows)
    with pytest.raises(
        DataError, match=f"{cls.__name__} trains on measured rows: the rows lack the column 'latency_us'"
    ):
        cls().fit(rows.drop(columns="latency_us"))
    with pytest.raises(
        DataError, match=r"2 of 12 training rows .* not a finite number > 0 \(first row labels \[0, 1\]\)"
    ):
        cls().fit(rows.assign(latency_us=[-1.0, float("nan"), *rows["latency_us"].iloc[2:]]))
    with pytest.raises(DataError, match="expected a pandas DataFrame of launch rows, got dict"):
        cls().fit(rows.iloc[0].to_dict())


@pytest.mark.parametrize("cls", [XGBoostRaw, XGBoostCrude])
def test_boosted_baselines_refuse_a_round_count_that_trains_nothing(cls):
    from pipeweave import DataError

    for kw in ({"n_estimators": -3}, {"n_estimators": 0}, {"max_depth": 0}, {"n_estimators": 2.5}):
        with pytest.raises(DataError, match=f"{cls.__name__}: {next(iter(kw))} must be an integer >= 1"):
            cls(**kw).fit(_hand_made_gemms())
    pred = cls(n_estimators=3, n_jobs=1).fit(_hand_made_gemms()).predict(_hand_made_gemms())
    assert pred.shape == (12,) and np.isfinite(pred).all()
