"""Baselines with the same ``fit(df)`` / ``predict(df) -> latency_us`` surface as the main model.

``Roofline`` and ``TileSight`` are analytical (fit is a no-op); ``KernelSight`` learns a
per-family efficiency; ``XGBoostRaw`` learns from raw shapes and raw spec numbers.
"""

from ._analytical import Roofline, TileSight
from ._learned import KernelSight, XGBoostRaw

__all__ = ["Roofline", "TileSight", "KernelSight", "XGBoostRaw"]
