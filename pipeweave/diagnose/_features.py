"""Features of (shape, tile config, GPU) candidates for the config ranker and the ceiling model.

Three groups, all dimensionless or log-scaled so they carry across GPUs:

* analytical: the front-end's :data:`pipeweave.frontend.FEATURES` of each candidate
  (per-pipe time shares, waves, occupancy, L2 reuse, tile knobs, GPU ratios) plus a few GPU and
  config descriptors (shared memory per SM, SM count, the config's shared-memory share);
* query-relative: how the candidate compares with the other candidates of the same
  (GPU, shape) query under the analytical model (``q_log_env_rel`` = ln(t_env / min t_env), the
  rank percentile of t_env, of the steady-state time and of the latency-bound time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from ._space import CONFIG_COLUMNS, acc_regs_per_thread, config_key, smem_bytes

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "candidate_features",
    "SHAPE_COLUMNS",
    "RANKER_FEATURES",
    "shape_hash",
    "cross_candidates",
    "analytic_features",
    "add_query_features",
    "sweep_grades",
    "QUERY_BEST_DELTAS",
]

#: Columns that identify one kernel shape per family (the query of the ranker).
SHAPE_COLUMNS: dict[str, tuple[str, ...]] = {
    "moe_w13": ("num_tokens", "num_experts", "topk", "hidden_size", "inter_size", "moe_tp_size", "moe_ep_size"),
    "fused_moe": ("num_tokens", "num_experts", "topk", "hidden_size", "inter_size", "moe_tp_size", "moe_ep_size"),
    "gemm": ("m", "n", "k"),
}

_KEEP = (
    "t_env_us",
    "t_lower_us",
    "t_steady_us",
    "t_latency_us",
    "gpu_smem_per_sm_kib",
    "gpu_sm_count",
    "gpu_sm_clock_mhz",
    "gpu_dram_bw_gbps",
    "gpu_sm_arch",
    "peak_tensor_flops_per_us",
)

#: Query-relative tile descriptors: the candidate's knobs relative to the query's analytical best config
#: (smallest t_env), as log2 ratios (stages: difference).
QUERY_BEST_DELTAS: tuple[str, ...] = (
    "q_best_dlog2_bm",
    "q_best_dlog2_bn",
    "q_best_dlog2_bk",
    "q_best_dlog2_warps",
    "q_best_d_stages",
    "q_best_dlog2_gm",
)
_DELTA_OF = {
    "q_best_dlog2_bm": "block_m",
    "q_best_dlog2_bn": "block_n",
    "q_best_dlog2_bk": "block_k",
    "q_best_dlog2_warps": "num_warps",
    "q_best_d_stages": "num_stages",
    "q_best_dlog2_gm": "group_m",
}


def _base_features() -> tuple[str, ...]:
    from ..frontend import FEATURES

    extra = (
        "log2_gpu_sm_count",
        "gpu_smem_per_sm_kib",
        "log2_dram_bw_per_sm",
        "log2_tensor_per_sm_clk",
        "smem_share",
        "log2_regs_per_thread",
        "log2_bm_over_rows",
        "q_log_env_rel",
        "q_env_pct",
        "q_steady_pct",
        "q_latency_pct",
        "q_log_steady_rel",
        *QUERY_BEST_DELTAS,
    )
    return tuple(FEATURES) + tuple(e for e in extra if e not in FEATURES)


#: Ranker input features (in order).
RANKER_FEATURES: tuple[str, ...] = _base_features()


def shape_hash(df: pd.DataFrame, family: str | None = None) -> np.ndarray:
    """uint64 hash of each row's (gpu, dtype, family, shape) - one value per ranker query."""
    fams = df["family"].astype(str).unique() if family is None else [family]
    cols = ["gpu", "dtype", "family"]
    for f in fams:
        cols += [c for c in SHAPE_COLUMNS.get(f, ()) if c not in cols]
    return _hash_columns(df, [c for c in cols if c in df.columns])


def _hash_columns(df: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """uint64 hash of each row over ``cols`` (numbers as float64 with NaN -> -1, the rest as str)."""
    frame = df[cols].copy()
    for c in cols:
        if frame[c].dtype.kind in "fiu":
            frame[c] = frame[c].astype(np.float64).fillna(-1.0)
        else:
            frame[c] = frame[c].astype(str)
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def cross_candidates(shapes: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Every (shape row, config row) pair: shape columns repeated, tile columns from ``configs``.

    Adds ``query`` (position of the shape row in ``shapes``) and ``config_key``.
    """
    ns, nc = len(shapes), len(configs)
    base = shapes.drop(columns=[c for c in CONFIG_COLUMNS if c in shapes.columns])
    left = base.iloc[np.repeat(np.arange(ns), nc)].reset_index(drop=True)
    right = configs[list(CONFIG_COLUMNS)].iloc[np.tile(np.arange(nc), ns)].reset_index(drop=True)
    out = pd.concat([left, right], axis=1)
    out["query"] = np.repeat(np.arange(ns), nc)
    out["config_key"] = config_key(out)
    return out


def analytic_features(
    df: pd.DataFrame, *, gpus: Mapping[str, GPUSpec] | None = None, chunk: int = 200_000, keep: Sequence[str] = ()
) -> pd.DataFrame:
    """Front-end features (float32) of candidate rows, computed in chunks; index = ``df.index``.

    Returns :data:`pipeweave.frontend.FEATURES`, the times in ``_KEEP``, ``bound_pipe`` and the
    names in ``keep`` (e.g. ``t_chip_<pipe>_us``), plus the non-query derived descriptors.
    """
    from ..frontend import FEATURES, featurize

    cols = list(dict.fromkeys([*FEATURES, *_KEEP, *keep]))
    parts = []
    for start in range(0, len(df), chunk):
        sub = df.iloc[start : start + chunk]
        f = featurize(sub, gpus=gpus, moe_configs="default")
        part = f[cols].astype(np.float32)
        part["bound_pipe"] = f["bound_pipe"].astype("category")
        parts.append(part)
    out = pd.concat(parts)
    out.index = df.index
    # GPU and config descriptors -----------------------------------------------------------------
    dtype = df["dtype"].astype(str).iloc[0] if len(df) else "bfloat16"
    sm = out["gpu_sm_count"].to_numpy(dtype=float)
    out["log2_gpu_sm_count"] = np.log2(sm).astype(np.float32)
    out["log2_dram_bw_per_sm"] = np.log2(out["gpu_dram_bw_gbps"].to_numpy(dtype=float) / sm).astype(np.float32)
    clock = out["gpu_sm_clock_mhz"].to_numpy(dtype=float)
    per_clk = out["peak_tensor_flops_per_us"].to_numpy(dtype=float) / (sm * clock)
    out["log2_tensor_per_sm_clk"] = np.log2(per_clk).astype(np.float32)
    need = smem_bytes(df, dtype, out["gpu_sm_arch"].to_numpy(dtype=float))
    out["smem_share"] = (need / (out["gpu_smem_per_sm_kib"].to_numpy(dtype=float) * 1024.0)).astype(np.float32)
    regs = acc_regs_per_thread(df, out["gpu_sm_arch"].to_numpy(dtype=float))
    out["log2_regs_per_thread"] = np.log2(regs).astype(np.float32)
    rows = np.full(len(df), np.nan)
    if {"num_tokens", "topk", "num_experts"} <= set(df.columns):  # MoE: tokens routed to one expert
        rows = (
            df["num_tokens"].to_numpy(dtype=float)
            * df["topk"].to_numpy(dtype=float)
            / df["num_experts"].to_numpy(dtype=float)
        )
    if "m" in df.columns:  # GEMM: rows of A
        rows = np.where(np.isfinite(rows), rows, df["m"].to_numpy(dtype=float))
    out["log2_bm_over_rows"] = np.log2(df["block_m"].to_numpy(dtype=float) / rows).astype(np.float32)
    return out


def add_query_features(feat: pd.DataFrame, query: np.ndarray) -> pd.DataFrame:
    """Add the query-relative features in place (``query``: one id per row; rows of one query compete)."""
    q = pd.Series(np.asarray(query), index=feat.index)
    env = feat["t_env_us"].astype(float)
    steady = feat["t_steady_us"].astype(float)
    lat = feat["t_latency_us"].astype(float)
    feat["q_log_env_rel"] = np.log(env / env.groupby(q).transform("min")).astype(np.float32)
    feat["q_log_steady_rel"] = np.log(steady / steady.groupby(q).transform("min")).astype(np.float32)
    feat["q_env_pct"] = env.groupby(q).rank(pct=True).astype(np.float32)
    feat["q_steady_pct"] = steady.groupby(q).rank(pct=True).astype(np.float32)
    feat["q_latency_pct"] = lat.groupby(q).rank(pct=True).astype(np.float32)
    best = env.groupby(q).idxmin()  # index label of each query's analytical best config
    at = best.reindex(q.to_numpy()).to_numpy()
    for name, col in _DELTA_OF.items():
        v = feat[col].to_numpy(dtype=float)
        ref = feat[col].reindex(at).to_numpy(dtype=float)
        d = v - ref if name == "q_best_d_stages" else np.log2(np.maximum(v, 1.0) / np.maximum(ref, 1.0))
        feat[name] = d.astype(np.float32)
    return feat


def _tile_key(df: pd.DataFrame) -> np.ndarray:
    return (df["block_m"].to_numpy(dtype=np.int64) * 1024 + df["block_n"].to_numpy(dtype=np.int64)) * 1024 + df[
        "block_k"
    ].to_numpy(dtype=np.int64)


def _shape_only_hash(df: pd.DataFrame) -> np.ndarray:
    """uint64 hash of each row's (dtype, family, shape) - the same shape on every GPU hashes the same."""
    fam = df["family"].astype(str).iloc[0]
    cols = ["dtype", "family", *[c for c in SHAPE_COLUMNS.get(fam, ()) if c in df.columns]]
    return _hash_columns(df, cols)


def _combine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Combine two uint64/int64 keys into one uint64 (hash mixing; collisions are negligible)."""
    with np.errstate(over="ignore"):
        return np.asarray(a, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ np.asarray(b, dtype=np.uint64)


def sweep_grades(sweeps: pd.DataFrame) -> pd.DataFrame:
    """Relevance grade of every measured sweep row on its GPU.

    Columns ``gpu``, ``shape`` (hash), ``config_key``, ``grade`` (4 = fastest of its shape, 3 = within
    0.5%, 2 = within 1%, 1 = among the 3 fastest only) and ``log_rel`` (ln latency / best). Needs the
    membership flags ``in_dse_99``, ``in_dse_99_5``, ``in_dse_top3`` of the moe_dse rows.
    """
    s = sweeps.copy()
    s["shape"] = _shape_only_hash(s)
    s["config_key"] = config_key(s)
    best = s.groupby(["gpu", "shape"])["latency_us"].transform("min")
    s["log_rel"] = np.log(s["latency_us"] / best)
    f995 = s["in_dse_99_5"].to_numpy(dtype=bool) if "in_dse_99_5" in s else np.zeros(len(s), dtype=bool)
    f99 = s["in_dse_99"].to_numpy(dtype=bool) if "in_dse_99" in s else np.zeros(len(s), dtype=bool)
    fastest = s["log_rel"].to_numpy() <= 1e-12
    # a sweep row in none of the 1% / 0.5% sets is one of the 3 fastest (top-3 file only): grade 1
    s["grade"] = np.where(fastest, 4.0, np.where(f995, 3.0, np.where(f99, 2.0, 1.0)))
    return s[["gpu", "shape", "config_key", "grade", "log_rel"]].reset_index(drop=True)


def candidate_features(
    shapes: pd.DataFrame,
    *,
    gpus: Mapping[str, GPUSpec] | None = None,
    configs: pd.DataFrame | Mapping[str, pd.DataFrame] | None = None,
    keep: Sequence[str] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Candidates (every feasible config of each shape row on its GPU) and their features.

    ``shapes``: canonical launch rows (``gpu``, ``family``, ``dtype``, shape columns); one query per row.
    ``configs``: candidate configs (default: :func:`~pipeweave.diagnose.config_space` of each GPU),
    or a mapping GPU name -> configs. Returns ``(cand, feat)`` on the same RangeIndex; ``cand`` holds
    the shape and tile columns, ``query`` (position in ``shapes``) and ``config_key``.
    """
    from ..hardware import get_gpu
    from ._space import config_space

    shapes = shapes.reset_index(drop=True)
    parts = []
    for key, sub in shapes.groupby(["gpu", "family", "dtype"], sort=False):
        gpu, fam, dtype = cast(tuple[str, str, str], key)
        spec = gpus[gpu] if gpus is not None and gpu in gpus else get_gpu(gpu)
        if isinstance(configs, Mapping):
            cfg = configs[gpu]
        elif configs is not None:
            cfg = configs
        else:
            cfg = config_space(spec, fam, dtype)
        c = cross_candidates(sub, cfg)
        c["query"] = sub.index.to_numpy()[c["query"].to_numpy()]
        parts.append(c)
    cand = pd.concat(parts, ignore_index=True)
    feat = analytic_features(cand, gpus=gpus, keep=keep)
    add_query_features(feat, cand["query"].to_numpy())
    return cand, feat
