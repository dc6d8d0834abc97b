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


def _gemm(sizes, gpu="H100") -> pd.DataFrame:
    s = np.asarray(sizes, dtype=float)
    return pd.DataFrame({"source": "user", "gpu": gpu, "family": "gemm", "dtype": "bfloat16", "m": s, "n": s, "k": s})


@pytest.fixture(scope="module")
def two_regimes():
    """Tiny (latency-bound) and huge (compute-bound) GEMMs, featurized."""
    return ensure_features(_gemm([64, 96, 128, 160, 192] + [8192, 10240, 12288, 14336, 16384]))


def test_plan_covers_both_regimes(two_regimes):
    pos = plan_positions(two_regimes, 2)
    assert len(pos) == 2 and pos[0] < 5 <= pos[1]  # one small, one large launch
    assert (plan_positions(two_regimes, 2) == pos).all()  # deterministic
    assert plan_positions(two_regimes, 50).tolist() == list(range(10))  # n >= rows: every row
    assert len(plan_positions(two_regimes, 0)) == 0
    with pytest.raises(DataError, match=">= 0"):
        plan_positions(two_regimes, -1)


def test_plan_launches_returns_candidate_subset_per_family():
    cand = _gemm([64, 128, 4096, 8192, 16384])
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


def test_regime_matrix_needs_features():
    with pytest.raises(DataError, match="featurized"):
        regime_matrix(_gemm([128]))


@pytest.fixture(scope="module")
def base_model():
    from pipeweave.model import PipeweaveRegressor

    rows = _gemm([256, 512, 1024, 2048, 4096, 8192] * 2)
    rows["gpu"] = ["A100"] * 6 + ["H100"] * 6
    rows["latency_us"] = [9.0, 14.0, 40.0, 230.0, 1700.0, 13000.0, 7.0, 10.0, 22.0, 110.0, 800.0, 6000.0]
    return PipeweaveRegressor(n_estimators=5).fit(rows)


def test_calibrated_model_round_trip(tmp_path, base_model):
    from pipeweave.model import load_model, save_model

    measured = _gemm([384, 1536, 6144], gpu="B200")
    measured["latency_us"] = [8.0, 60.0, 900.0]
    cal = calibrate_model(base_model, measured, gpu="B200", length_scale=1.0, noise=0.01)
    assert isinstance(cal.calibration_, GPUCalibration) and cal.calibration_.n_shots == {"gemm": 3}
    assert getattr(base_model, "calibration_", None) is None  # the base model is not changed
    query = pd.concat([_gemm([512, 3072], gpu="B200"), _gemm([512, 3072], gpu="H100")], ignore_index=True)
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
