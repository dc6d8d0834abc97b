"""Analytical baselines (no training on latencies): spec-peak roofline and TileSight-style.

Both share pipeweave's front-end (same tile plans, same work accounting) and differ only in how
they turn demand into time, so a comparison isolates the timing model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

__all__ = ["Roofline", "TileSight"]


class _Analytical(RegressorMixin, BaseEstimator):
    column: str = ""

    def fit(self, df: pd.DataFrame, y: object = None) -> "_Analytical":
        """No-op (nothing is learned); kept so every method has the same surface."""
        self.fitted_ = True
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Latency (us) per row from the analytical features (computed if absent)."""
        from ..model import ensure_features

        return ensure_features(df)[self.column].to_numpy(dtype=float)


class Roofline(_Analytical):
    """max(useful tensor FLOPs / spec peak, compulsory bytes / spec DRAM bandwidth); no launch term."""

    column = "t_roofline_us"


class TileSight(_Analytical):
    """TileSight-style tile model: lockstep L2 reuse, pipeline envelope, wave + tail aggregation."""

    column = "t_tilesight_us"
