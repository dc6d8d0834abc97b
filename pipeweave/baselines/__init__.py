"""Baselines with the same ``fit(df)`` / ``predict(df) -> latency_us`` surface as the main model.

``Roofline`` (calibrated) and ``TileSight`` are analytical (fit is a no-op); ``KernelSight``
learns a per-family ridge efficiency on kernels of at least 10 us; ``XGBoostRaw`` learns from raw
shapes and raw spec numbers; ``XGBoostCrude`` from about ten hand-normalized features (the crude
reference of the error anatomy). Anything tuned is tuned by nested leave-one-generation-out
inside the training rows (:func:`select_by_inner_logo`).
"""

from ._analytical import ROOFLINE_ETA_COMPUTE, ROOFLINE_ETA_MEMORY, Roofline, TileSight, wave_factor
from ._crude import CRUDE_FEATURES, CRUDE_TILE, XGBoostCrude, crude_features
from ._learned import KERNELSIGHT_FEATURES, KernelSight, XGBoostRaw
from ._tuning import select_by_inner_logo

__all__ = [
    "Roofline",
    "TileSight",
    "KernelSight",
    "XGBoostRaw",
    "XGBoostCrude",
    "crude_features",
    "wave_factor",
    "select_by_inner_logo",
    "CRUDE_FEATURES",
    "CRUDE_TILE",
    "KERNELSIGHT_FEATURES",
    "ROOFLINE_ETA_COMPUTE",
    "ROOFLINE_ETA_MEMORY",
]
