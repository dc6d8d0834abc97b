"""``xgboost_crude``: XGBoost on about ten hand-normalized features, the crude reference of issue 17.

The features are the crude view of :mod:`pipeweave.frontend` (:func:`~pipeweave.frontend.crude_features`:
one fixed 128 x 128 x 64 tile on every GPU, one CTA per row for the row kernels, no pipe or L2 model,
no SASS) plus family and
attention-backend indicators. Target: log(latency / wave-quantized roofline). Fixed hyperparameters
(depth 6, learning rate 0.05), nothing tuned. As in the pipeweave model, an attention-backend indicator
whose training rows come from fewer than ``min_backend_gpus`` GPUs (default
:data:`pipeweave.model.MIN_BACKEND_GPUS`, 2) is held at 0 (``unsupported_backends_``): nested
leave-one-GPU-out inside the training GPUs, prefill 110.38 -> 59.64 mean inner MAPE, decode 26.18 -> 26.19
(``experiments/accuracy_log/crude_backend_screen.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from ..frontend import CRUDE_FEATURES, CRUDE_TILE, crude_features, crude_matrix, crude_matrix_names
from ..model import MIN_BACKEND_GPUS, backend_gpu_counts, hold_backends, predict_in_place, unsupported_backends
from ._checks import check_fitted, check_rounds, training_latency

__all__ = ["XGBoostCrude", "CRUDE_FEATURES", "crude_features", "CRUDE_TILE"]


class XGBoostCrude(RegressorMixin, BaseEstimator):
    """XGBoost on ~10 hand-normalized features (fixed tile, no L2 model, no SASS); see the module docstring."""

    def __init__(
        self,
        max_depth: int = 6,
        n_estimators: int = 400,
        learning_rate: float = 0.05,
        n_jobs: int = 2,
        random_state: int = 0,
        min_backend_gpus: int = MIN_BACKEND_GPUS,
    ) -> None:
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.min_backend_gpus = min_backend_gpus

    def _matrix(self, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """The crude matrix with the learned ``unsupported_backends_`` one-hots held at 0."""
        X, t_wq = crude_matrix(df)
        return hold_backends(X, crude_matrix_names(), getattr(self, "unsupported_backends_", ())), t_wq

    def fit(self, df: pd.DataFrame, y: object = None) -> XGBoostCrude:
        """Fit log(latency / wave-quantized roofline) on measured rows (``latency_us``)."""
        import xgboost as xgb

        from ..model import ensure_features, tree_params

        check_rounds(self, "n_estimators", "max_depth")
        df = ensure_features(df)
        lat = training_latency(df, "XGBoostCrude")
        X, t_wq = crude_matrix(df)
        # as PipeweaveRegressor(min_backend_gpus=...): a backend one-hot of fewer GPUs is held at 0
        names = crude_matrix_names()
        counts = backend_gpu_counts(X, names, df["gpu"]) if "gpu" in df.columns else {}
        self.unsupported_backends_ = unsupported_backends(counts, self.min_backend_gpus)
        X = hold_backends(X, names, self.unsupported_backends_)
        target = np.log(lat / t_wq)
        params = tree_params(
            max_depth=self.max_depth,
            learning_rate=self.learning_rate,
            subsample=0.8,
            colsample_bytree=1.0,
            min_child_weight=5,
            n_jobs=self.n_jobs,
            random_state=self.random_state,
        )
        params["objective"] = "reg:squarederror"
        self.booster_ = xgb.train(
            params, xgb.DMatrix(X, label=target, nthread=self.n_jobs), num_boost_round=self.n_estimators
        )
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Latency (us) per row."""
        from ..model import ensure_features

        check_fitted(self, "booster_")
        df = ensure_features(df)
        X, t_wq = self._matrix(df)
        return t_wq * np.exp(predict_in_place(self.booster_, X, self.n_jobs))
