"""``xgboost_crude``: XGBoost on about ten hand-normalized features, the crude reference of issue 17.

No front-end, no L2 model, no SASS: each row is reduced to a "GEMM-equivalent" view from its raw
shape and the spec sheet, tiled with one **fixed** 128 x 128 x 64 tile on every GPU:

=====================  ================================  =====  ====================  ===========
family                 M (rows per group)                N      K                     groups
=====================  ================================  =====  ====================  ===========
gemm                   m                                 n      k                     1
fused_moe / moe_w13    T topk / ep / active experts      2I/tp  H                     active experts
attention_context      isl                               step + isl  head_dim         batch x q heads
attention_generation   q heads / kv heads                step   head_dim              batch x kv heads
=====================  ================================  =====  ====================  ===========

FLOPs F and compulsory bytes B are the standard counts (fused MoE: W13 + W2 of the rank's
T topk / ep routed rows; attention: causal prefill, KV read once per KV head). Features: log2 of
the wave-quantized roofline time, log2 AI / ridge, log2 waves, wave efficiency, padding
efficiency (useful / padded tile area), log2 working set / L2, log2 of M/BM, N/BN, K/BK and of the
group count, plus fp8 / family / attention-backend indicators. Target: log(latency /
wave-quantized roofline). Fixed hyperparameters (depth 6, learning rate 0.05), nothing tuned.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from ..frontend import FAMILIES
from ..model import predict_in_place
from ..vocab import ATTENTION_BACKENDS as KNOWN_BACKENDS

__all__ = ["XGBoostCrude", "CRUDE_FEATURES", "crude_features", "CRUDE_TILE"]

#: the fixed tile (BM, BN, BK) of the crude model, the same on every GPU
CRUDE_TILE: tuple[int, int, int] = (128, 128, 64)
CRUDE_FEATURES: tuple[str, ...] = (
    "log2_t_wq_roof_us",
    "log2_ai_over_ridge",
    "log2_waves",
    "wave_efficiency",
    "pad_efficiency",
    "log2_working_set_over_l2",
    "log2_m_tiles",
    "log2_n_tiles",
    "log2_k_tiles",
    "log2_groups",
    "is_fp8",
)


def _num(df: pd.DataFrame, name: str, default: float = np.nan) -> np.ndarray:
    if name not in df.columns:
        return np.full(len(df), default)
    return np.nan_to_num(pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=float), nan=default)


def _gemm_view(df: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """(M, N, K, groups, FLOPs, compulsory bytes) per row from the raw shape columns."""
    n_rows = len(df)
    fam = df["family"].astype(str).to_numpy()
    b = np.where(df["dtype"].astype(str).str.startswith("fp8").to_numpy(), 1.0, 2.0)
    M, N, K, G = (np.ones(n_rows) for _ in range(4))
    F, B = np.zeros(n_rows), np.zeros(n_rows)

    g = fam == "gemm"
    m, n, k = _num(df, "m", 1.0), _num(df, "n", 1.0), _num(df, "k", 1.0)
    M[g], N[g], K[g] = m[g], n[g], k[g]
    F[g] = 2 * m[g] * n[g] * k[g]
    B[g] = b[g] * (m[g] * k[g] + n[g] * k[g]) + 2 * m[g] * n[g]

    moe = np.isin(fam, ["fused_moe", "moe_w13"])
    T, topk, E = _num(df, "num_tokens", 1.0), _num(df, "topk", 1.0), _num(df, "num_experts", 1.0)
    H, inter = _num(df, "hidden_size", 1.0), _num(df, "inter_size", 1.0)
    tp, ep = np.maximum(_num(df, "moe_tp_size", 1.0), 1.0), np.maximum(_num(df, "moe_ep_size", 1.0), 1.0)
    rows = T * topk / ep
    act = np.maximum(np.minimum(E / ep, rows), 1.0)
    i_loc = inter / tp
    both = np.where(fam == "fused_moe", 3.0, 2.0)  # W13 (2I) + W2 (I) vs W13 only
    M[moe], N[moe], K[moe], G[moe] = (rows / act)[moe], 2 * i_loc[moe], H[moe], act[moe]
    F[moe] = (2 * rows * both * i_loc * H)[moe]
    B[moe] = (b * act * both * i_loc * H + 2 * (T * H + rows * both * i_loc))[moe]

    att = np.isin(fam, ["attention_context", "attention_generation"])
    bs, isl, step = _num(df, "batch_size", 1.0), _num(df, "isl", 1.0), _num(df, "step", 0.0)
    hq, hkv, d = (
        _num(df, "num_heads", 1.0),
        np.maximum(_num(df, "num_key_value_heads", 1.0), 1.0),
        _num(df, "head_dim", 128.0),
    )
    kvb = np.where(
        df["kv_cache_dtype"].astype(str).str.startswith("fp8").to_numpy()
        if "kv_cache_dtype" in df.columns
        else np.zeros(n_rows, bool),
        1.0,
        2.0,
    )
    ctx = fam == "attention_context"
    M[ctx], N[ctx], K[ctx], G[ctx] = isl[ctx], (step + isl)[ctx], d[ctx], (bs * hq)[ctx]
    F[ctx] = (4 * bs * hq * isl * (step + (isl + 1) / 2) * d)[ctx]
    B[ctx] = (2 * 2 * bs * isl * hq * d + kvb * 2 * bs * (step + isl) * hkv * d)[ctx]
    gen = fam == "attention_generation"
    M[gen], N[gen], K[gen], G[gen] = (hq / hkv)[gen], np.maximum(step, 1.0)[gen], d[gen], (bs * hkv)[gen]
    F[gen] = (4 * bs * hq * np.maximum(step, 1.0) * d)[gen]
    B[gen] = (kvb * 2 * bs * np.maximum(step, 1.0) * hkv * d + 2 * 2 * bs * hq * d)[gen]
    del att
    return M, N, K, G, F, B


def crude_features(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(feature matrix in :data:`CRUDE_FEATURES` order, wave-quantized roofline time in us) per row.

    Needs the raw shape columns, ``family``, ``dtype`` and the spec columns ``gpu_sm_count``,
    ``peak_tensor_flops_per_us``, ``gpu_dram_bw_gbps``, ``gpu_l2_mib`` (from ``ensure_features``).
    """
    bm, bn, bk = CRUDE_TILE
    M, N, K, G, F, B = _gemm_view(df)
    M, N, K, G = (np.maximum(x, 1e-3) for x in (M, N, K, G))
    sms = df["gpu_sm_count"].to_numpy(dtype=float)
    peak = df["peak_tensor_flops_per_us"].to_numpy(dtype=float)
    bw = df["gpu_dram_bw_gbps"].to_numpy(dtype=float) * 1e3
    l2 = df["gpu_l2_mib"].to_numpy(dtype=float) * 2**20
    mt, nt = np.ceil(M / bm), np.ceil(N / bn)
    tiles = G * mt * nt
    waves = tiles / sms
    wave_eff = waves / np.ceil(waves)
    pad = (M * N) / (mt * bm * nt * bn)
    t_c = F / peak
    t_m = B / bw
    t_wq = np.maximum(t_c / pad / wave_eff, t_m)
    t_wq = np.maximum(t_wq, 1e-3)
    X = np.column_stack(
        [
            np.log2(t_wq),
            np.log2(np.maximum(t_c, 1e-9) / np.maximum(t_m, 1e-9)),
            np.log2(waves),
            wave_eff,
            pad,
            np.log2(np.maximum(B, 1.0) / l2),
            np.log2(M / bm),
            np.log2(N / bn),
            np.log2(K / bk),
            np.log2(G),
            df["dtype"].astype(str).str.startswith("fp8").to_numpy().astype(float),
        ]
    )
    return X, t_wq


class XGBoostCrude(RegressorMixin, BaseEstimator):
    """XGBoost on ~10 hand-normalized features (fixed tile, no L2 model, no SASS); see the module docstring."""

    def __init__(
        self,
        max_depth: int = 6,
        n_estimators: int = 400,
        learning_rate: float = 0.05,
        n_jobs: int = 2,
        random_state: int = 0,
    ) -> None:
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.n_jobs = n_jobs
        self.random_state = random_state

    @staticmethod
    def _matrix(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        X, t_wq = crude_features(df)
        fam = df["family"].astype(str).to_numpy()
        backend = df["backend"].astype(str).to_numpy() if "backend" in df.columns else np.full(len(df), "")
        extra = [(fam == f).astype(float) for f in FAMILIES] + [(backend == b).astype(float) for b in KNOWN_BACKENDS]
        return np.column_stack([X, *extra]), t_wq

    def fit(self, df: pd.DataFrame, y: object = None) -> XGBoostCrude:
        """Fit log(latency / wave-quantized roofline) on measured rows (``latency_us``)."""
        import xgboost as xgb

        from ..model import ensure_features, tree_params

        df = ensure_features(df)
        X, t_wq = self._matrix(df)
        target = np.log(df["latency_us"].to_numpy(dtype=float) / t_wq)
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

        df = ensure_features(df)
        X, t_wq = self._matrix(df)
        return t_wq * np.exp(predict_in_place(self.booster_, X, self.n_jobs))
