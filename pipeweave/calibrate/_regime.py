"""Regime coordinates of a launch: front-end features on a common scale.

Both the shot planner and the residual correction measure how "different" two launches are by
the Euclidean distance between their regime coordinates: each front-end feature of
:data:`REGIME_FEATURES` divided by the scale that counts as one unit of difference (a decade of
envelope time is two units, a factor 2 of arithmetic intensity over the ridge is one unit, a
quarter of the envelope spent in one pipe is one unit ...). Features a family lacks are 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import DataError

__all__ = ["REGIME_FEATURES", "regime_matrix"]

#: front-end feature -> scale (in the feature's own unit) that counts as one unit of difference
REGIME_FEATURES: dict[str, float] = {
    "log10_t_env_us": 0.5,  # decades of the analytical envelope time
    "log2_ai_over_ridge": 1.0,  # arithmetic intensity over the GPU's ridge point (log2)
    "log2_waves": 1.0,  # CTA waves (log2)
    "log2_working_set_over_l2": 2.0,  # compulsory bytes over L2 size (log2)
    "r_chip_tensor": 0.25,  # share of the envelope the tensor pipe needs
    "r_chip_dram": 0.25,  # ... DRAM
    "r_chip_l2": 0.25,  # ... L2
    "r_latency": 0.25,  # ... the dependent-latency chain
    "log2_rows_per_expert": 1.0,  # MoE: tokens x topk / experts (log2)
    "log2_moe_ep": 1.0,  # MoE expert parallelism (log2)
    "log2_moe_tp": 1.0,  # MoE tensor parallelism (log2)
}


def regime_matrix(frame: pd.DataFrame, features: dict[str, float] | None = None) -> np.ndarray:
    """Float matrix (rows x features) of featurized rows on the regime scale (dimensionless).

    ``frame`` must hold the front-end features (``pipeweave.model.ensure_features``); NaN -> 0.
    """
    feats = REGIME_FEATURES if features is None else features
    if "t_env_us" not in frame.columns:
        raise DataError(
            "regime coordinates need featurized rows (no 't_env_us' column)",
            hint="pass the rows through pipeweave.model.ensure_features first",
        )
    cols = []
    for name, scale in feats.items():
        if name in frame.columns:
            v = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float)
        else:
            v = np.zeros(len(frame))
        cols.append(np.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0) / float(scale))
    return np.column_stack(cols) if cols else np.zeros((len(frame), 0))
