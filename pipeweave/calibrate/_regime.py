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

from .._errors import DataError, shown

__all__ = [
    "FAMILY_PLAN_MAX_LAUNCHES",
    "FAMILY_REGIME_FEATURES",
    "REGIME_FEATURES",
    "REGIMES",
    "check_regime",
    "regime_features",
    "regime_matrix",
]

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


#: families whose residual correction reads more coordinates than :data:`REGIME_FEATURES` (family -> feature ->
#: scale). fused_moe: the routing exponent (one unit = balanced to power-law 1.0; routing is what a model of one GPU's
#: launches needs most, experiments/error_anatomy/within_gpu_floor.md) and the five MoE shape slots
#: ``log2_shape_1..5`` (num_tokens, hidden_size, inter_size, num_experts, topk; one unit = a factor 4). Chosen inside
#: the training generations (experiments/few_shot/regime_screen.md, two plan seeds): the best option over these
#: coordinates beat the best over the generic ones on every inner fold at 32 and 128 shots (16 of 16 cells; at 32
#: shots by 0.05-0.64 points, mean 0.38 / 0.32 per seed). The shot planner keeps :data:`REGIME_FEATURES`
FAMILY_REGIME_FEATURES: dict[str, dict[str, float]] = {
    "fused_moe": {
        **REGIME_FEATURES,
        "routing_alpha": 1.0,
        **{f"log2_shape_{i}": 2.0 for i in range(1, 6)},
    },
}
#: the coordinate sets a correction can be asked for: ``family`` (the family's set where
#: :data:`FAMILY_REGIME_FEATURES` has one, else the generic one) or ``generic`` (:data:`REGIME_FEATURES`)
REGIMES: tuple[str, ...] = ("family", "generic")
#: the most launches per family for which a shot plan over the family's own coordinates (``regime="family"``) was
#: measured to beat the generic plan: inside the few-shot protocol's training generations, fused MoE's family plan
#: was lower in every cell at 8 launches (16 of 16, four plan seeds), but not at 12, 16 or 24 (6, 1 and 13 of 16)
#: nor at 32 or 128 (5 of 16): ``experiments/few_shot/plan_screen.md``. ``pipeweave calibrate plan`` suggests the
#: family plan for plans this small; its default stays generic
FAMILY_PLAN_MAX_LAUNCHES: int = 8


def check_regime(regime: str) -> str:
    """``regime`` if it is one of :data:`REGIMES`, else a DataError naming it."""
    if regime not in REGIMES:
        raise DataError(
            f"regime must be one of {list(REGIMES)}, got {shown(regime)}",
            hint="'family' (the family's own coordinates where it has them) or 'generic'",
        )
    return regime


def regime_features(family: str, regime: str = "family") -> dict[str, float]:
    """The regime coordinates (feature -> scale of one unit) the residual correction of ``family`` reads.

    ``regime="family"``: :data:`FAMILY_REGIME_FEATURES` [``family``] where there is one, else
    :data:`REGIME_FEATURES`; ``"generic"``: :data:`REGIME_FEATURES` for every family.
    """
    check_regime(regime)
    chosen = FAMILY_REGIME_FEATURES.get(str(family)) if regime == "family" else None
    return dict(chosen if chosen is not None else REGIME_FEATURES)


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
