"""Analytical baselines (no training on latencies): calibrated roofline and TileSight-style.

Both share pipeweave's front-end (same tile plans, same work accounting) and differ only in how
they turn demand into time, so a comparison isolates the timing model. Each is the best faithful
version of itself as ``docs`` / the shared ``baselines.md`` describe it, with every choice made a
priori from that description (none from measured latencies):

* :class:`Roofline` (baselines.md section 2.1, "calibrated roofline" + the optional wave factor):
  ``T = t0 + max(u * F / (eta_c * P), B / (eta_m * BW_dram))`` with F the useful tensor FLOPs, P
  the spec tensor peak, B the compulsory bytes, u = ceil(G / (S p)) * S p / G the wave
  quantization of the compute term, eta_c = 0.93 / eta_m = 0.86 the mean measured/spec ratios of
  TileSight's microbenchmarks (Table 3: A100, H200, B6000, B200; one value for every GPU, since a
  held-out GPU has no microbenchmarks here) and t0 = the launch time (``LAUNCH_US``).
  ``calibrated=False`` gives the plain spec roofline (eta = 1, u = 1, t0 = 0).
* :class:`TileSight` (section 3): the per-tile pipeline envelope with lockstep L2 reuse and
  wave + tail aggregation at 0.9 utilization caps (TileSight's "spec" mode; its microbenchmark
  mode's measured rates are 0.86-0.94 of spec, the same scale), plus one launch time t0 per row:
  TileSight models the kernel body and adds launch overhead outside it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from ..frontend import (
    LAUNCH_US,
    ROOFLINE_ETA_COMPUTE,
    ROOFLINE_ETA_MEMORY,
    calibrated_roofline_us,
    wave_factor,
)

__all__ = ["Roofline", "TileSight", "ROOFLINE_ETA_COMPUTE", "ROOFLINE_ETA_MEMORY", "wave_factor"]


class _Analytical(RegressorMixin, BaseEstimator):
    def fit(self, df: pd.DataFrame, y: object = None) -> _Analytical:
        """No-op (nothing is learned); kept so every method has the same surface."""
        self.fitted_ = True
        return self


class Roofline(_Analytical):
    """Calibrated roofline: t0 + max(u F / (eta_c P), B / (eta_m BW)) in us (see the module docstring)."""

    def __init__(
        self,
        calibrated: bool = True,
        eta_compute: float = ROOFLINE_ETA_COMPUTE,
        eta_memory: float = ROOFLINE_ETA_MEMORY,
        launch_us: float = LAUNCH_US,
    ) -> None:
        self.calibrated = calibrated
        self.eta_compute = eta_compute
        self.eta_memory = eta_memory
        self.launch_us = launch_us

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Latency (us) per row from the analytical features (computed if absent)."""
        from ..model import ensure_features

        f = ensure_features(df)
        if not self.calibrated:
            return f["t_roofline_us"].to_numpy(dtype=float)
        return calibrated_roofline_us(
            f, eta_compute=self.eta_compute, eta_memory=self.eta_memory, launch_us=self.launch_us
        )


class TileSight(_Analytical):
    """TileSight-style tile model (lockstep L2 reuse, pipeline envelope, wave + tail) + launch time, us."""

    def __init__(self, launch_us: float = LAUNCH_US) -> None:
        self.launch_us = launch_us

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Latency (us) per row from the analytical features (computed if absent)."""
        from ..model import ensure_features

        return self.launch_us + ensure_features(df)["t_tilesight_us"].to_numpy(dtype=float)
