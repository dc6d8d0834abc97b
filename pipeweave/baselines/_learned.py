"""Learned baselines: KernelSight-style efficiency model and XGBoost on raw columns.

* :class:`KernelSight`: T = max(t0, u * T_roof / eta(z)), u = ceil(G / (S p)) * S p / G the
  wave-quantization factor, eta in (0, 1] learned per family by a low-capacity XGBoost on
  dimensionless z (arithmetic intensity over the ridge, work per SM, occupancy, waves, working
  set over L2), trained on log(eta_obs) with eta_obs = u * T_roof / (T_meas - t0), clipped.
* :class:`XGBoostRaw`: XGBoost on raw shape columns plus raw spec numbers, target log latency
  (shows what the analytical front-end buys).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from ..frontend import FAMILIES
from ..frontend._constants import LAUNCH_US
from ..model._features import KNOWN_BACKENDS
from ..model._xgb import predict_in_place, tree_params

__all__ = ["KernelSight", "XGBoostRaw", "RAW_SHAPE_COLUMNS", "RAW_SPEC_COLUMNS"]

_Z = ("log2_ai_over_ridge", "log2_waves", "occupancy", "log2_working_set_over_l2", "log2_work_per_sm")

RAW_SHAPE_COLUMNS: tuple[str, ...] = ("m", "n", "k", "num_tokens", "hidden_size", "inter_size", "topk",
                                      "num_experts", "moe_tp_size", "moe_ep_size", "batch_size", "isl",
                                      "num_heads", "num_key_value_heads", "head_dim", "step",
                                      "block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages")
RAW_SPEC_COLUMNS: tuple[str, ...] = ("gpu_sm_count", "gpu_sm_clock_mhz", "peak_tensor_flops_per_us",
                                     "gpu_dram_bw_gbps", "gpu_l2_mib", "gpu_l2_bw_gbps", "gpu_smem_per_sm_kib")


def _xgb(X: np.ndarray, y: np.ndarray, *, depth: int, rounds: int, n_jobs: int, seed: int):  # noqa: ANN202
    import xgboost as xgb

    params = tree_params(max_depth=depth, learning_rate=0.05, subsample=0.8, colsample_bytree=0.9,
                         min_child_weight=5, n_jobs=n_jobs, random_state=seed)
    params["objective"] = "reg:squarederror"
    return xgb.train(params, xgb.DMatrix(X, label=y, nthread=n_jobs), num_boost_round=rounds)


class KernelSight(RegressorMixin, BaseEstimator):
    """KernelSight-style roofline x wave quantization / learned per-family efficiency."""

    def __init__(self, max_depth: int = 3, n_estimators: int = 200, n_jobs: int = 2, random_state: int = 0) -> None:
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.n_jobs = n_jobs
        self.random_state = random_state

    @staticmethod
    def _terms(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        G = df["grid_ctas"].to_numpy(dtype=float)
        slots = df["gpu_sm_count"].to_numpy(dtype=float) * df["ctas_per_sm"].to_numpy(dtype=float)
        u = np.ceil(G / slots) * slots / G
        z = df.reindex(columns=list(_Z[:-1])).to_numpy(dtype=float)
        work = np.log2(np.maximum(df["t_roofline_us"].to_numpy(dtype=float) * df["gpu_sm_clock_mhz"].to_numpy(), 1e-9))
        return u * df["t_roofline_us"].to_numpy(dtype=float), np.column_stack([z, work])

    def fit(self, df: pd.DataFrame, y: object = None) -> "KernelSight":
        """Learn eta per family from measured rows (``latency_us``)."""
        from ..model import ensure_features

        df = ensure_features(df)
        bound, z = self._terms(df)
        lat = df["latency_us"].to_numpy(dtype=float)
        eta = np.clip(bound / np.maximum(lat - LAUNCH_US, 1e-3), 1e-4, 1.0)
        fam = df["family"].astype(str).to_numpy()
        self.models_ = {}
        for f in pd.unique(fam):
            m = fam == f
            self.models_[f] = _xgb(z[m], np.log(eta[m]), depth=self.max_depth, rounds=self.n_estimators,
                                   n_jobs=self.n_jobs, seed=self.random_state)
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """max(t0, u T_roof / eta_hat) in us; families never seen in fit use eta = 1."""
        from ..model import ensure_features

        df = ensure_features(df)
        bound, z = self._terms(df)
        fam = df["family"].astype(str).to_numpy()
        eta = np.ones(len(df))
        for f, booster in self.models_.items():
            m = fam == f
            if m.any():
                eta[m] = np.clip(np.exp(predict_in_place(booster, z[m], self.n_jobs)), 1e-4, 1.0)
        return np.maximum(LAUNCH_US, bound / eta)


class XGBoostRaw(RegressorMixin, BaseEstimator):
    """XGBoost on raw shapes + raw spec numbers (+ family/source/dtype/backend codes), target log latency."""

    def __init__(self, max_depth: int = 8, n_estimators: int = 600, n_jobs: int = 2, random_state: int = 0) -> None:
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.n_jobs = n_jobs
        self.random_state = random_state

    @staticmethod
    def _matrix(df: pd.DataFrame) -> np.ndarray:
        cols = [pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) if c in df.columns
                else np.full(len(df), np.nan) for c in RAW_SHAPE_COLUMNS + RAW_SPEC_COLUMNS]
        fam = df["family"].astype(str).to_numpy()
        cols += [(fam == f).astype(float) for f in FAMILIES]
        cols.append(df["dtype"].astype(str).str.startswith("fp8").to_numpy().astype(float))
        src = df["source"].astype(str).to_numpy() if "source" in df.columns else np.full(len(df), "")
        cols.append((src == "aiconfigurator").astype(float))
        # the attention kernel implementation, as the hybrid model sees it (a launch property)
        backend = df["backend"].astype(str).to_numpy() if "backend" in df.columns else np.full(len(df), "")
        cols += [(backend == b).astype(float) for b in KNOWN_BACKENDS]
        return np.column_stack(cols)

    def fit(self, df: pd.DataFrame, y: object = None) -> "XGBoostRaw":
        """Fit log(latency_us) on raw columns."""
        from ..model import ensure_features

        df = ensure_features(df)
        self.booster_ = _xgb(self._matrix(df), np.log(df["latency_us"].to_numpy(dtype=float)),
                             depth=self.max_depth, rounds=self.n_estimators, n_jobs=self.n_jobs,
                             seed=self.random_state)
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Latency (us) per row."""
        from ..model import ensure_features

        df = ensure_features(df)
        return np.exp(predict_in_place(self.booster_, self._matrix(df), self.n_jobs))
