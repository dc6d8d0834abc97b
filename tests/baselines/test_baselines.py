"""Baselines share one surface: fit(df) -> self, predict(df) -> latency_us (real rows)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave.baselines import KernelSight, Roofline, TileSight, XGBoostRaw


@pytest.mark.parametrize("cls", [Roofline, TileSight])
def test_analytical_baselines_need_no_training(cls, small_frame):
    pred = cls().predict(small_frame)
    assert pred.shape == (len(small_frame),) and np.isfinite(pred).all() and (pred > 0).all()


def test_roofline_is_a_lower_bound_style_estimate(small_frame):
    roof = Roofline().predict(small_frame)
    assert (roof <= small_frame["t_env_us"].to_numpy() + 1e-9).all()


@pytest.mark.parametrize("cls", [KernelSight, XGBoostRaw])
def test_learned_baselines_fit_predict(cls, small_frame):
    model = cls(n_estimators=20, n_jobs=1).fit(small_frame)
    pred = model.predict(small_frame.drop(columns=["latency_us"]))
    assert pred.shape == (len(small_frame),) and np.isfinite(pred).all() and (pred > 0).all()


def test_kernelsight_respects_launch_floor(small_frame):
    from pipeweave.frontend._constants import LAUNCH_US

    pred = KernelSight(n_estimators=10, n_jobs=1).fit(small_frame).predict(small_frame)
    assert (pred >= LAUNCH_US).all()
