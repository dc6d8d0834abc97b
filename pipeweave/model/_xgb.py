"""The two XGBoost calls every learned piece of pipeweave shares: tree parameters and prediction.

Used by the hybrid regressor, the learned baselines and the diagnose config ranker, so the
boosters of the project are built and evaluated the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["tree_params", "predict_in_place"]


def tree_params(
    *,
    max_depth: int,
    learning_rate: float,
    subsample: float,
    colsample_bytree: float,
    min_child_weight: float,
    n_jobs: int,
    random_state: int,
    max_bin: int = 256,
) -> dict[str, Any]:
    """XGBoost booster parameters of a histogram tree ensemble (objective added by the caller)."""
    return {
        "max_depth": int(max_depth),
        "eta": float(learning_rate),
        "subsample": float(subsample),
        "colsample_bytree": float(colsample_bytree),
        "min_child_weight": float(min_child_weight),
        "nthread": int(n_jobs),
        "seed": int(random_state),
        "tree_method": "hist",
        "max_bin": int(max_bin),
    }


def predict_in_place(booster: Any, X: np.ndarray, n_jobs: int) -> np.ndarray:
    """Booster output for the rows of ``X`` without a DMatrix copy.

    ``X`` is cast to float32 first, as a DMatrix would store it, so split comparisons are the
    same as ``booster.predict(DMatrix(X))``; its columns are in the booster's feature order.
    """
    booster.set_param({"nthread": int(n_jobs)})
    return booster.inplace_predict(np.ascontiguousarray(X, dtype=np.float32), validate_features=False)
