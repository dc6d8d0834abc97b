"""Features of (shape, tile config, GPU) candidates for the config ranker and the ceiling model.

Three groups, all dimensionless or log-scaled so they carry across GPUs:

* analytical: the front-end's :data:`pipeweave.frontend.FEATURES` of each candidate
  (per-pipe time shares, waves, occupancy, L2 reuse, tile knobs, GPU ratios) plus a few GPU and
  config descriptors (shared memory per SM, SM count, the config's shared-memory share);
* query-relative: how the candidate compares with the other candidates of the same
  (GPU, shape) query under the analytical model (``q_log_env_rel`` = ln(t_env / min t_env), the
  rank percentile of t_env, of the steady-state time and of the latency-bound time);
* neighbour evidence (optional): what the measured sweeps of the nearest GPUs of another
  generation say about this config for this shape (grade 4 = fastest there, 3 = within 0.5%,
  2 = within 1%, 1 = in the top 3 only, 0 = not near-best; its latency over that GPU's best;
  the best relative latency of the same BM x BN x BK tile; the spec distance and spec ratios).
  Missing evidence is NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ._space import CONFIG_COLUMNS, config_key, smem_bytes

__all__ = ["SHAPE_COLUMNS", "RANKER_FEATURES", "EVIDENCE_FEATURES", "shape_hash", "cross_candidates",
           "analytic_features", "add_query_features", "Evidence", "add_evidence_features", "N_NEIGHBOURS",
           "evidence_feature_names"]

#: Columns that identify one kernel shape per family (the query of the ranker).
SHAPE_COLUMNS: dict[str, tuple[str, ...]] = {
    "moe_w13": ("num_tokens", "num_experts", "topk", "hidden_size", "inter_size", "moe_tp_size", "moe_ep_size"),
    "fused_moe": ("num_tokens", "num_experts", "topk", "hidden_size", "inter_size", "moe_tp_size", "moe_ep_size"),
    "gemm": ("m", "n", "k"),
}

_KEEP = ("t_env_us", "t_lower_us", "t_steady_us", "t_latency_us", "gpu_smem_per_sm_kib", "gpu_sm_count",
         "gpu_sm_clock_mhz", "gpu_dram_bw_gbps", "gpu_sm_arch", "peak_tensor_flops_per_us")

N_NEIGHBOURS = 2

_EVIDENCE_PER_NB = ("grade", "log_rel", "tile_log_rel", "dist", "log_smem_ratio", "log_sm_ratio", "log_bw_ratio")


def evidence_feature_names(n_neighbours: int = N_NEIGHBOURS) -> tuple[str, ...]:
    """Neighbour-evidence feature names for ``n_neighbours`` neighbours."""
    return tuple(f"nb{i}_{name}" for i in range(1, n_neighbours + 1) for name in _EVIDENCE_PER_NB) + \
        ("nb_frac_near_best",)


#: Neighbour-evidence feature names (default neighbour count).
EVIDENCE_FEATURES: tuple[str, ...] = evidence_feature_names()


def _base_features() -> tuple[str, ...]:
    from ..frontend import FEATURES

    extra = ("log2_gpu_sm_count", "gpu_smem_per_sm_kib", "log2_dram_bw_per_sm", "log2_tensor_per_sm_clk",
             "smem_share", "log2_regs_per_thread", "log2_rows_per_expert", "log2_bm_over_rows",
             "q_log_env_rel", "q_env_pct", "q_steady_pct", "q_latency_pct", "q_log_steady_rel")
    return tuple(FEATURES) + extra


#: Ranker input features (in order). Evidence features are appended when the ranker uses them.
RANKER_FEATURES: tuple[str, ...] = _base_features()


def shape_hash(df: pd.DataFrame, family: str | None = None) -> np.ndarray:
    """uint64 hash of each row's (gpu, dtype, family, shape) - one value per ranker query."""
    fams = df["family"].astype(str).unique() if family is None else [family]
    cols = ["gpu", "dtype", "family"]
    for f in fams:
        cols += [c for c in SHAPE_COLUMNS.get(f, ()) if c not in cols]
    cols = [c for c in cols if c in df.columns]
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


def analytic_features(df: pd.DataFrame, *, gpus: Mapping[str, object] | None = None, chunk: int = 200_000,
                      keep: Sequence[str] = ()) -> pd.DataFrame:
    """Front-end features (float32) of candidate rows, computed in chunks; index = ``df.index``.

    Returns :data:`pipeweave.frontend.FEATURES`, the times in ``_KEEP``, ``bound_pipe`` and the
    names in ``keep`` (e.g. ``t_chip_<pipe>_us``), plus the non-query derived descriptors.
    """
    from ..frontend import FEATURES, featurize

    cols = list(dict.fromkeys([*FEATURES, *_KEEP, *keep]))
    parts = []
    for start in range(0, len(df), chunk):
        sub = df.iloc[start:start + chunk]
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
    per_clk = out["peak_tensor_flops_per_us"].to_numpy(dtype=float) / (sm * out["gpu_sm_clock_mhz"].to_numpy(dtype=float))
    out["log2_tensor_per_sm_clk"] = np.log2(per_clk).astype(np.float32)
    out["smem_share"] = (smem_bytes(df, dtype) / (out["gpu_smem_per_sm_kib"].to_numpy(dtype=float) * 1024.0)).astype(np.float32)
    regs = df["block_m"].to_numpy(dtype=float) * df["block_n"].to_numpy(dtype=float) / (32.0 * df["num_warps"].to_numpy(dtype=float)) + 40.0
    out["log2_regs_per_thread"] = np.log2(regs).astype(np.float32)
    if {"num_tokens", "topk", "num_experts"} <= set(df.columns):
        # tokens routed to one expert on average (expert parallelism divides tokens and experts alike)
        rows = df["num_tokens"].to_numpy(dtype=float) * df["topk"].to_numpy(dtype=float) \
            / df["num_experts"].to_numpy(dtype=float)
    else:
        rows = df["m"].to_numpy(dtype=float) if "m" in df else np.full(len(df), np.nan)
    out["log2_rows_per_expert"] = np.log2(rows).astype(np.float32)
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
    return feat


class Evidence:
    """Measured near-best configs per (GPU, shape): grades and relative latencies for lookups.

    Built from sweep rows (canonical profile rows with tile columns, ``latency_us`` and the
    membership flags ``in_dse_99``, ``in_dse_99_5``, ``in_dse_top3``).
    """

    def __init__(self, sweeps: pd.DataFrame) -> None:
        s = sweeps.copy()
        s["shape"] = _shape_only_hash(s)
        s["config_key"] = config_key(s)
        best = s.groupby(["gpu", "shape"])["latency_us"].transform("min")
        s["log_rel"] = np.log(s["latency_us"] / best)
        grade = np.where(s.get("in_dse_top3", False) & (s["log_rel"] <= 1e-12), 4,
                         np.where(s.get("in_dse_99_5", False), 3, np.where(s.get("in_dse_99", False), 2, 1)))
        s["grade"] = grade.astype(float)
        s["tile_key"] = _tile_key(s)
        self.table = s[["gpu", "shape", "config_key", "tile_key", "grade", "log_rel"]].reset_index(drop=True)
        self.gpus = sorted(s["gpu"].astype(str).unique())
        self.n_near_best = s[s["grade"] >= 2].groupby(["gpu", "shape"]).size()

    def restrict(self, gpus: Sequence[str]) -> "Evidence":
        """A view holding only ``gpus``."""
        new = object.__new__(Evidence)
        keep = self.table["gpu"].isin(list(gpus))
        new.table = self.table[keep].reset_index(drop=True)
        new.gpus = sorted(set(self.gpus) & set(gpus))
        new.n_near_best = self.n_near_best[self.n_near_best.index.get_level_values(0).isin(list(gpus))]
        return new


def _tile_key(df: pd.DataFrame) -> np.ndarray:
    return (df["block_m"].to_numpy(dtype=np.int64) * 1024 + df["block_n"].to_numpy(dtype=np.int64)) * 1024 + \
        df["block_k"].to_numpy(dtype=np.int64)


def _shape_only_hash(df: pd.DataFrame) -> np.ndarray:
    fam = df["family"].astype(str).iloc[0]
    cols = ["dtype", "family", *[c for c in SHAPE_COLUMNS.get(fam, ()) if c in df.columns]]
    frame = df[cols].copy()
    for c in cols:
        if frame[c].dtype.kind in "fiu":
            frame[c] = frame[c].astype(np.float64).fillna(-1.0)
        else:
            frame[c] = frame[c].astype(str)
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def _combine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Combine two uint64/int64 keys into one uint64 (hash mixing; collisions are negligible)."""
    with np.errstate(over="ignore"):
        return np.asarray(a, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ np.asarray(b, dtype=np.uint64)


def add_evidence_features(feat: pd.DataFrame, cand: pd.DataFrame, evidence: Evidence | None,
                          neighbours: Sequence[tuple[str, float]] | Mapping[str, Sequence[tuple[str, float]]],
                          n_neighbours: int = N_NEIGHBOURS) -> pd.DataFrame:
    """Add :data:`EVIDENCE_FEATURES` in place.

    ``neighbours``: ``[(gpu, distance), ...]`` nearest first (for every row), or a mapping target
    GPU -> such a list (rows of several target GPUs). Neighbours beyond the list, or without
    measurements for a shape, give NaN.
    """
    from ..hardware import get_gpu

    n = len(cand)
    cols = {name: np.full(n, np.nan, dtype=np.float32) for name in evidence_feature_names(n_neighbours)}
    if evidence is not None and n:
        shape = _shape_only_hash(cand)
        ckey = _combine(shape, config_key(cand))
        tkey = _combine(shape, _tile_key(cand))
        targets = cand["gpu"].astype(str).to_numpy()
        near_count = np.zeros(n)
        near_den = np.zeros(n)
        for tgt in pd.unique(targets):
            rows = np.flatnonzero(targets == tgt)
            nbs = neighbours[tgt] if isinstance(neighbours, Mapping) else neighbours
            tspec = get_gpu(tgt)
            for i, (nb, dist) in enumerate(list(nbs)[:n_neighbours], start=1):
                tab = evidence.table[evidence.table["gpu"] == nb]
                if tab.empty:
                    continue
                nspec = get_gpu(nb)
                has = np.isin(shape[rows], tab["shape"].to_numpy())
                r = rows[has]
                if not len(r):
                    continue
                pos = pd.Index(_combine(tab["shape"].to_numpy(), tab["config_key"].to_numpy())).get_indexer(ckey[r])
                grade = np.where(pos >= 0, tab["grade"].to_numpy()[pos], 0.0)
                log_rel = np.where(pos >= 0, tab["log_rel"].to_numpy()[pos], np.nan)
                tmin = tab.assign(k=_combine(tab["shape"].to_numpy(), tab["tile_key"].to_numpy())).groupby("k")["log_rel"].min()
                tpos = pd.Index(tmin.index.to_numpy()).get_indexer(tkey[r])
                cols[f"nb{i}_grade"][r] = grade
                cols[f"nb{i}_log_rel"][r] = log_rel
                cols[f"nb{i}_tile_log_rel"][r] = np.where(tpos >= 0, tmin.to_numpy()[tpos], np.nan)
                cols[f"nb{i}_dist"][r] = dist
                cols[f"nb{i}_log_smem_ratio"][r] = np.log(tspec.smem_per_sm_kib / nspec.smem_per_sm_kib)
                cols[f"nb{i}_log_sm_ratio"][r] = np.log(tspec.sm_count / nspec.sm_count)
                cols[f"nb{i}_log_bw_ratio"][r] = np.log(tspec.dram_bw_gbps / nspec.dram_bw_gbps)
                near_count[r] += grade >= 2
                near_den[r] += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            cols["nb_frac_near_best"] = np.where(near_den > 0, near_count / near_den, np.nan).astype(np.float32)
    for name, v in cols.items():
        feat[name] = v
    return feat
