"""Metric formulas on hand-computed cases (tiny hand-made arrays, not measurements)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError
from pipeweave.evaluation import (
    METRIC_COLUMNS,
    ape,
    bootstrap_ci,
    mape,
    median_ape,
    p90_ape,
    summarize,
    within,
)

# hand-made: APEs are 10, 50, 0, 20, 5 percent
PRED = np.array([110.0, 50.0, 10.0, 8.0, 21.0])
MEAS = np.array([100.0, 100.0, 10.0, 10.0, 20.0])
APE = np.array([10.0, 50.0, 0.0, 20.0, 5.0])


def test_ape_hand_computed() -> None:
    np.testing.assert_allclose(ape(PRED, MEAS), APE)


def test_scalar_metrics_hand_computed() -> None:
    assert mape(PRED, MEAS) == pytest.approx(17.0)  # (10+50+0+20+5)/5
    assert median_ape(PRED, MEAS) == pytest.approx(10.0)
    # sorted 0,5,10,20,50: 90th percentile (linear) = 20 + 0.6 * 30 = 38
    assert p90_ape(PRED, MEAS) == pytest.approx(38.0)
    assert within(PRED, MEAS, 10) == pytest.approx(60.0)  # 10, 0, 5 are <= 10
    assert within(PRED, MEAS, 25) == pytest.approx(80.0)
    assert within(PRED, MEAS, 4.9) == pytest.approx(20.0)


def test_nan_prediction_propagates_and_empty_is_nan() -> None:
    assert np.isnan(mape([np.nan, 1.0], [1.0, 1.0]))
    assert np.isnan(median_ape([], []))
    assert np.isnan(within([], [], 10))


def test_bad_measurement_raises() -> None:
    with pytest.raises(DataError):
        ape([1.0], [0.0])
    with pytest.raises(DataError):
        ape([1.0, 2.0], [1.0])


def test_bootstrap_ci_contains_mape_and_is_deterministic() -> None:
    rng = np.random.default_rng(1)
    a = rng.exponential(20.0, size=500)
    lo, hi = bootstrap_ci(a, n_boot=1000, seed=0)
    assert lo < a.mean() < hi
    assert (lo, hi) == bootstrap_ci(a, n_boot=1000, seed=0)
    assert (lo, hi) != bootstrap_ci(a, n_boot=1000, seed=1)
    # width ~ 2 * 1.96 * sd / sqrt(n)
    assert hi - lo == pytest.approx(2 * 1.96 * a.std() / np.sqrt(a.size), rel=0.2)


def test_bootstrap_ci_large_input_uses_capped_resampling() -> None:
    rng = np.random.default_rng(2)
    a = rng.exponential(20.0, size=100_000)
    lo, hi = bootstrap_ci(a, n_boot=1000, seed=0, max_rows=5_000)
    assert lo < a.mean() < hi
    assert hi - lo == pytest.approx(2 * 1.96 * a.std() / np.sqrt(a.size), rel=0.2)


def test_bootstrap_ci_edge_cases() -> None:
    assert all(np.isnan(bootstrap_ci([])))
    assert bootstrap_ci([7.0]) == (7.0, 7.0)
    assert bootstrap_ci([3.0, 3.0, 3.0]) == pytest.approx((3.0, 3.0))
    assert all(np.isnan(bootstrap_ci([1.0, np.nan])))


def test_summarize_groups_and_missing() -> None:
    # hand-made: group a = the 5 rows above, group b = one exact row + one failed (NaN) row
    df = pd.DataFrame(
        {
            "g": ["a"] * 5 + ["b", "b"],
            "pred_us": [*PRED, 4.0, np.nan],
            "latency_us": [*MEAS, 4.0, 4.0],
        }
    )
    s = summarize(df, ["g"], n_boot=200)
    assert list(s.columns) == ["g", *METRIC_COLUMNS]
    a = s.set_index("g").loc["a"]
    assert a["mape"] == pytest.approx(17.0)
    assert a["p90_ape"] == pytest.approx(38.0)
    assert a["within_10"] == pytest.approx(60.0)
    assert a["within_25"] == pytest.approx(80.0)
    assert (a["n"], a["n_missing"]) == (5, 0)
    assert a["mape_ci95_lo"] <= 17.0 <= a["mape_ci95_hi"]
    b = s.set_index("g").loc["b"]
    assert (b["mape"], b["n"], b["n_missing"]) == (0.0, 1, 1)
    whole = summarize(df, n_boot=0)
    assert len(whole) == 1 and whole["n"].iloc[0] == 6 and np.isnan(whole["mape_ci95_lo"].iloc[0])
