"""Learned baselines: KernelSight-style efficiency model and XGBoost on raw columns.

Each is the best faithful version of itself as the shared ``baselines.md`` describes it; every
hyperparameter they tune is chosen by nested leave-one-group-out over the *training*
generations (:func:`select_by_inner_logo`), never on the held-out one.

* :class:`KernelSight` (KernelSight-LM's cross-generation tier, baselines.md section 4):
  ``T = t0 + u * T_roof / eta(z)`` with T_roof = max(F / P, B / BW_dram) from the target GPU's
  spec sheet, u = ceil(G / (S p)) * S p / G the wave-quantization factor, t0 the launch time
  kept outside eta, and the efficiency a per-family **ridge regression**
  ``log eta = c + beta . (ops/mem ratio deviation: log2(AI / ridge), |log2(AI / ridge)|)
  + gamma . (scheduling: log2 waves, wave efficiency, occupancy, log2 working set / L2,
  log2 roofline cycles) + delta . (architecture: log2 L2/DRAM bandwidth, log2 ridge FLOP/B,
  log2 SMs, log2 L2 size, fp8)``, i.e. eta ~= 1 + beta . dev + gamma . arch for small
  deviations. As in the paper, eta is fitted on kernels of **at least 10 us** (eta_obs =
  u T_roof / (T_meas - t0), clipped to (0, 1]); the ridge penalty is chosen by nested
  leave-one-generation-out among ``alphas`` x {with, without the architecture group} (with three
  training generations the architecture coefficients rest on a handful of GPUs, so the inner
  folds decide whether they transfer); features are standardized and clipped to their
  training range and the predicted eta to [min training eta_obs, 1], so a linear head cannot
  extrapolate to a catastrophic eta (the earlier depth-3 XGBoost head with eta clipped at 1e-4
  reached 282% MAPE on decode attention through a few such rows).
* :class:`XGBoostRaw`: XGBoost on raw shape columns plus raw spec numbers (+ family, dtype,
  source and attention-backend indicators), target log latency: what a learner gets without
  the analytical front-end. ``max_depth`` is chosen by nested leave-one-generation-out among
  ``depths`` (on at most ``tune_rows_per_gpu`` rows per GPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from .._frame import num_values
from ..frontend import FAMILIES, LAUNCH_US
from ..model import predict_in_place, tree_params
from ..vocab import ATTENTION_BACKENDS as KNOWN_BACKENDS
from ._analytical import wave_factor
from ._checks import check_fitted, check_rounds, training_latency
from ._tuning import select_by_inner_logo

__all__ = ["KernelSight", "XGBoostRaw", "RAW_SHAPE_COLUMNS", "RAW_SPEC_COLUMNS", "KERNELSIGHT_FEATURES"]

#: names of KernelSight's efficiency-head inputs, in column order
KERNELSIGHT_FEATURES: tuple[str, ...] = (
    "ai_dev",
    "abs_ai_dev",
    "log2_waves",
    "wave_efficiency",
    "occupancy",
    "log2_working_set_over_l2",
    "log2_roofline_cycles",
    "log2_l2_over_dram_bw",
    "log2_ridge_flop_per_byte",
    "log2_sm_count",
    "log2_l2_mib",
    "is_fp8",
)
#: the architecture group of KERNELSIGHT_FEATURES (kept or dropped by the nested-LOGO choice)
_ARCH_PREFIXES: tuple[str, ...] = ("log2_l2_over_dram_bw", "log2_ridge_flop_per_byte", "log2_sm_count", "log2_l2_mib")

RAW_SHAPE_COLUMNS: tuple[str, ...] = (
    "m",
    "n",
    "k",
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "moe_tp_size",
    "moe_ep_size",
    "batch_size",
    "isl",
    "num_heads",
    "num_key_value_heads",
    "head_dim",
    "step",
    "block_m",
    "block_n",
    "block_k",
    "group_m",
    "num_warps",
    "num_stages",
)
#: operators inside the issue-13 families (one-hot in the raw baseline) and FlashInfer code paths
RAW_OPS: tuple[str, ...] = (
    "bmm",
    "linear",
    "add",
    "addu",
    "mul",
    "mulu",
    "div",
    "divu",
    "pow",
    "powu",
    "relu",
    "tanh",
    "gelu",
)
from ..vocab import FLASHINFER_BACKENDS as RAW_FLASHINFER_BACKENDS  # noqa: E402


def _request_totals(df: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """(requests, total query tokens, total KV tokens, sum q*kv) of ';'-joined length lists (NaN if absent)."""
    n = len(df)
    if "q_lengths" not in df.columns or "kv_lengths" not in df.columns:
        return tuple(np.full(n, np.nan) for _ in range(4))

    def parts(col: str) -> pd.Series:
        s = df[col].astype(object).where(df[col].notna(), "").astype(str).str.strip("[] ").str.replace(",", ";")
        e = s.reset_index(drop=True).str.split(";").explode()
        return pd.to_numeric(e, errors="coerce")

    q, kv = parts("q_lengths"), parts("kv_lengths")
    if len(q) != len(kv):
        return tuple(np.full(n, np.nan) for _ in range(4))
    g = q.index.to_numpy()
    qv, kvv = q.to_numpy(dtype=float), kv.to_numpy(dtype=float)
    has = np.bincount(g, weights=np.isfinite(qv).astype(float), minlength=n) > 0

    def total(w: np.ndarray) -> np.ndarray:
        return np.where(has, np.bincount(g, weights=np.nan_to_num(w), minlength=n), np.nan)

    return total(np.isfinite(qv).astype(float)), total(qv), total(kvv), total(qv * kvv)


RAW_SPEC_COLUMNS: tuple[str, ...] = (
    "gpu_sm_count",
    "gpu_sm_clock_mhz",
    "peak_tensor_flops_per_us",
    "gpu_dram_bw_gbps",
    "gpu_l2_mib",
    "gpu_l2_bw_gbps",
    "gpu_smem_per_sm_kib",
)


def _xgb(X: np.ndarray, y: np.ndarray, *, depth: int, rounds: int, n_jobs: int, seed: int):  # noqa: ANN202
    import xgboost as xgb

    params = tree_params(
        max_depth=depth,
        learning_rate=0.05,
        subsample=0.8,
        colsample_bytree=0.9,
        min_child_weight=5,
        n_jobs=n_jobs,
        random_state=seed,
    )
    params["objective"] = "reg:squarederror"
    return xgb.train(params, xgb.DMatrix(X, label=y, nthread=n_jobs), num_boost_round=rounds)


class KernelSight(RegressorMixin, BaseEstimator):
    """KernelSight-style t0 + u T_roof / eta, eta a per-family ridge regression (module docstring)."""

    def __init__(
        self,
        alphas: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0),
        min_latency_us: float = 10.0,
        launch_us: float = LAUNCH_US,
        n_jobs: int = 2,
        random_state: int = 0,
    ) -> None:
        self.alphas = alphas
        self.min_latency_us = min_latency_us
        self.launch_us = launch_us
        self.n_jobs = n_jobs
        self.random_state = random_state

    @staticmethod
    def _terms(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(u * T_roof in us, efficiency-head inputs z) per featurized row."""
        t_roof = num_values(df, "t_roofline_us")
        dev = num_values(df, "log2_ai_over_ridge")
        z = np.column_stack(
            [
                dev,
                np.abs(dev),
                num_values(df, "log2_waves"),
                num_values(df, "wave_efficiency"),
                num_values(df, "occupancy"),
                num_values(df, "log2_working_set_over_l2"),
                np.log2(np.maximum(t_roof * num_values(df, "gpu_sm_clock_mhz"), 1e-3)),
                np.log2(num_values(df, "l2_bw_over_dram_bw")),
                num_values(df, "log2_ridge_flop_per_byte"),
                np.log2(num_values(df, "gpu_sm_count")),
                np.log2(num_values(df, "gpu_l2_mib")),
                num_values(df, "is_fp8"),
            ]
        )
        return wave_factor(df) * t_roof, np.nan_to_num(z, nan=0.0, posinf=0.0, neginf=0.0)

    @staticmethod
    def _mask(arch: bool) -> np.ndarray:
        """1 for the inputs in use: all, or all but the architecture group (zeroed = a constant)."""
        return np.array([1.0 if arch or not name.startswith(_ARCH_PREFIXES) else 0.0 for name in KERNELSIGHT_FEATURES])

    @staticmethod
    def _ridge(alpha: float, z: np.ndarray, y: np.ndarray):  # noqa: ANN205
        from sklearn.linear_model import Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), Ridge(alpha=alpha)).fit(z, y)

    def fit(self, df: pd.DataFrame, y: object = None) -> KernelSight:
        """Learn log eta per family from measured rows (``latency_us``) of at least ``min_latency_us``."""
        from ..model import ensure_features

        df = ensure_features(df)
        lat = training_latency(df, "KernelSight")
        bound, z = self._terms(df)
        fam = df["family"].astype(str).to_numpy()
        gen = df["generation"].astype(str).to_numpy() if "generation" in df.columns else np.zeros(len(df), str)
        self.models_, self.alpha_, self.arch_, self.inner_scores_ = {}, {}, {}, {}
        self.z_lo_, self.z_hi_, self.eta_lo_ = {}, {}, {}
        for f in pd.unique(fam):
            m = (fam == f) & (lat >= self.min_latency_us) & (lat > self.launch_us) & (bound > 0)
            if m.sum() < 20:  # too few anchor-population rows: use every row of the family
                m = (fam == f) & (lat > self.launch_us) & (bound > 0)
            eta = np.clip(bound[m] / (lat[m] - self.launch_us), 1e-6, 1.0)
            zf, yf, lf, bf = z[m], np.log(eta), lat[m], bound[m]

            def fit_predict(
                cand: tuple[float, bool],
                tr: np.ndarray,
                te: np.ndarray,
                zf: np.ndarray = zf,
                yf: np.ndarray = yf,
                bf: np.ndarray = bf,
            ) -> np.ndarray:
                alpha, arch = cand
                zf = zf * self._mask(arch)
                model = self._ridge(alpha, zf[tr], yf[tr])
                e = np.clip(
                    np.exp(model.predict(np.clip(zf[te], zf[tr].min(0), zf[tr].max(0)))),
                    float(np.exp(yf[tr].min())),
                    1.0,
                )
                return self.launch_us + bf[te] / e

            cands = [(a, arch) for arch in (True, False) for a in self.alphas]
            (alpha, arch), scores = select_by_inner_logo(cands, gen[m], fit_predict, lf)
            self.alpha_[f], self.arch_[f], self.inner_scores_[f] = float(alpha), bool(arch), scores
            zf = zf * self._mask(arch)
            self.models_[f] = self._ridge(alpha, zf, yf)
            self.z_lo_[f], self.z_hi_[f] = zf.min(axis=0), zf.max(axis=0)
            self.eta_lo_[f] = float(eta.min())
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """t0 + u T_roof / eta_hat in us; families never seen in fit use eta = 1."""
        from ..model import ensure_features

        check_fitted(self, "models_")
        df = ensure_features(df)
        bound, z = self._terms(df)
        fam = df["family"].astype(str).to_numpy()
        eta = np.ones(len(df))
        for f, model in self.models_.items():
            m = fam == f
            if m.any():
                zf = np.clip(z[m] * self._mask(self.arch_[f]), self.z_lo_[f], self.z_hi_[f])
                eta[m] = np.clip(np.exp(model.predict(zf)), self.eta_lo_[f], 1.0)
        return self.launch_us + bound / eta


class XGBoostRaw(RegressorMixin, BaseEstimator):
    """XGBoost on raw shapes + raw spec numbers (+ family/source/dtype/backend codes), target log latency."""

    def __init__(
        self,
        max_depth: int = 8,
        n_estimators: int = 600,
        n_jobs: int = 2,
        random_state: int = 0,
        depths: tuple[int, ...] | None = (4, 8),
        tune_rows_per_gpu: int = 1500,
    ) -> None:
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.depths = depths
        self.tune_rows_per_gpu = tune_rows_per_gpu

    @staticmethod
    def _matrix(df: pd.DataFrame) -> np.ndarray:
        cols = [
            pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) if c in df.columns else np.full(len(df), np.nan)
            for c in RAW_SHAPE_COLUMNS + RAW_SPEC_COLUMNS
        ]
        fam = df["family"].astype(str).to_numpy()
        cols += [(fam == f).astype(float) for f in FAMILIES]
        cols.append(df["dtype"].astype(str).str.startswith("fp8").to_numpy().astype(float))
        src = df["source"].astype(str).to_numpy() if "source" in df.columns else np.full(len(df), "")
        cols.append((src == "aiconfigurator").astype(float))
        # the attention kernel implementation, as the hybrid model sees it (a launch property)
        backend = df["backend"].astype(str).to_numpy() if "backend" in df.columns else np.full(len(df), "")
        cols += [(backend == b).astype(float) for b in KNOWN_BACKENDS]
        # issue-13 launch descriptors, raw: the operator of a family (NeuSight's op), FlashInfer's code
        # path and its requests (count, total query tokens, total KV tokens, sum of q x kv)
        op = df["op"].astype(str).to_numpy() if "op" in df.columns else np.full(len(df), "")
        cols += [(op == o).astype(float) for o in RAW_OPS]
        cols += [(backend == b).astype(float) for b in RAW_FLASHINFER_BACKENDS]
        cols += list(_request_totals(df))
        return np.column_stack(cols)

    def fit(self, df: pd.DataFrame, y: object = None) -> XGBoostRaw:
        """Fit log(latency_us) on raw columns; max_depth by nested LOGO over the training generations."""
        from ..model import ensure_features

        check_rounds(self, "n_estimators", "max_depth")
        df = ensure_features(df)
        X, lat = self._matrix(df), training_latency(df, "XGBoostRaw")
        depth = self.max_depth
        self.inner_scores_: dict[Any, Any] = {}
        if self.depths and len(self.depths) > 1 and "generation" in df.columns:
            from ..model import cap_rows

            sub = cap_rows(df, self.tune_rows_per_gpu, by=("gpu",), seed=self.random_state)
            pos = df.index.get_indexer(sub.index)
            Xs, ls = X[pos], lat[pos]

            def fit_predict(d: int, tr: np.ndarray, te: np.ndarray) -> np.ndarray:
                b = _xgb(
                    Xs[tr],
                    np.log(ls[tr]),
                    depth=d,
                    rounds=self.n_estimators,
                    n_jobs=self.n_jobs,
                    seed=self.random_state,
                )
                return np.exp(predict_in_place(b, Xs[te], self.n_jobs))

            depth, self.inner_scores_ = select_by_inner_logo(
                self.depths, sub["generation"].astype(str).to_numpy(), fit_predict, ls
            )
        self.max_depth_ = int(depth)
        self.booster_ = _xgb(
            X, np.log(lat), depth=self.max_depth_, rounds=self.n_estimators, n_jobs=self.n_jobs, seed=self.random_state
        )
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Latency (us) per row."""
        from ..model import ensure_features

        check_fitted(self, "booster_")
        df = ensure_features(df)
        return np.exp(predict_in_place(self.booster_, self._matrix(df), self.n_jobs))
