"""The shipped instruction-mix cache (``features/sass/instruction_mix.csv``) and the feature lookup.

One row per (kernel, kernel source hash, arch, dtype, tile plan, specialisation). Every count is a
dynamic warp-instruction count per CTA: ``<pipe>_per_iter`` for one main-loop iteration,
``<pipe>_prologue`` / ``<pipe>_epilogue`` outside the loop. A model rebuilds a CTA's total as
``prologue + epilogue + per_iter * (trips - peeled_iters)`` with ``trips = cdiv(K, BLOCK_K)``.
Tensor work is what the warps issue: for tiles smaller than the warps' MMA footprint (16x16 with 4 warps ...)
Triton replicates the MMAs across warps, so ``tensor_flops_per_iter`` can be a multiple of 2*BM*BN*BK.

Reading needs only pandas (no triton).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from ..._errors import DataError
from ..._io import atomic_write
from ..._paths import FEATURES_DIR
from ...vocab import TILE_COLUMNS
from ._arch import normalize_arch
from ._builtin import family_builtin, kernel_source_hash, normalize_dtype
from ._pipes import PIPES

__all__ = [
    "CACHE_DIR",
    "CACHE_FILE",
    "MANIFEST_FILE",
    "KEY_COLUMNS",
    "CACHE_COLUMNS",
    "SASS_FEATURE_COLUMNS",
    "load_cache",
    "write_cache",
    "mix_to_row",
    "cached_mix_row",
    "load_sass_features",
]

CACHE_DIR: Path = FEATURES_DIR / "sass"
CACHE_FILE: Path = CACHE_DIR / "instruction_mix.csv"
MANIFEST_FILE: Path = CACHE_DIR / "MANIFEST.md"

CONFIG_COLUMNS = list(TILE_COLUMNS)  # the shared tile-plan columns (pipeweave.vocab)
KEY_COLUMNS = ["kernel", "kernel_hash", "arch", "dtype", *CONFIG_COLUMNS, "specialization"]
_MEM = ["gmem_ld", "gmem_st", "smem_ld", "smem_st", "local", "shfl", "barrier"]
_PIPE_COLS = [f"{p}_{part}" for part in ("per_iter", "prologue", "epilogue") for p in PIPES]
_MEM_COLS = [f"{m}_{part}" for part in ("per_iter", "outside") for m in _MEM]
_SCALAR_COLS = [
    "tensor_flops_per_iter",
    "peeled_iters",
    "issue_per_iter",
    "issue_outside",
    "registers",
    "spills",
    "spill_instructions",
    "shared_bytes",
    "tmem_columns",
    "occupancy_ctas_per_sm",
    "static_instructions",
    "loop_static_instructions",
    "n_loops",
]
_META_COLS = ["ref_shape", "ref_trips", "compile_s", "disasm_s", "triton_version"]
CACHE_COLUMNS = KEY_COLUMNS + _SCALAR_COLS + _PIPE_COLS + _MEM_COLS + _META_COLS

#: columns :func:`load_sass_features` returns (all prefixed ``sass_``)
SASS_FEATURE_COLUMNS: list[str] = (
    ["sass_cached", "sass_group_m_exact"]
    + [f"sass_{c}" for c in _SCALAR_COLS + _PIPE_COLS + _MEM_COLS]
    + ["sass_mma_replication"]
)


def load_cache(path: str | Path | None = None) -> pd.DataFrame:
    """The cache as a DataFrame (empty with the right columns when the file does not exist)."""
    p = Path(path) if path is not None else CACHE_FILE
    if not p.is_file():
        return pd.DataFrame(columns=CACHE_COLUMNS)
    try:
        df = pd.read_csv(p, dtype={"kernel_hash": str, "specialization": str, "ref_shape": str, "triton_version": str})
    except Exception as exc:
        raise DataError(
            f"cannot read the SASS cache {str(p)!r}: {exc}",
            hint="rebuild it with: python -m pipeweave.frontend.sass.build_cache",
        ) from None
    missing = [c for c in KEY_COLUMNS if c not in df.columns]
    if missing:
        raise DataError(
            f"the SASS cache {str(p)!r} lacks columns {missing}",
            hint="rebuild it with: python -m pipeweave.frontend.sass.build_cache",
        )
    for c in CONFIG_COLUMNS:
        df[c] = df[c].astype(int)
    return df


def write_cache(df: pd.DataFrame, path: str | Path | None = None) -> Path:
    """Write the cache atomically, sorted by key, one row per key (last wins)."""
    p = Path(path) if path is not None else CACHE_FILE
    df = df.drop_duplicates(subset=KEY_COLUMNS, keep="last")
    df = df.sort_values(["kernel", "arch", "dtype", *CONFIG_COLUMNS, "specialization"]).reset_index(drop=True)
    cols = [c for c in CACHE_COLUMNS if c in df.columns]
    return atomic_write(p, lambda t: df[cols].to_csv(t, index=False, float_format="%.12g"))


def mix_to_row(mix: Any) -> dict[str, Any]:
    """Flatten an :class:`InstructionMix` of a builtin into one cache row."""
    cfg = mix.config
    row: dict[str, Any] = {
        "kernel": mix.kernel,
        "kernel_hash": mix.kernel_hash,
        "arch": mix.arch,
        "dtype": mix.dtype,
        "block_m": cfg.block_m,
        "block_n": cfg.block_n,
        "block_k": cfg.block_k,
        "group_m": cfg.group_m,
        "num_warps": cfg.num_warps,
        "num_stages": cfg.num_stages,
        "specialization": mix.specialization,
    }
    for p in PIPES:
        row[f"{p}_per_iter"] = mix.pipes_per_iter[p]
        row[f"{p}_prologue"] = mix.pipes_prologue[p]
        row[f"{p}_epilogue"] = mix.pipes_epilogue[p]
    trips_eff = max(mix.main_loop_trips - mix.peeled_iters, 0.0)
    for m in _MEM:
        row[f"{m}_per_iter"] = mix.mem_per_iter[m]
        row[f"{m}_outside"] = mix.mem[m] - mix.mem_per_iter[m] * trips_eff
    main = max(
        (lp for lp in mix.loops if lp.depth == 0),
        key=lambda lp: (lp.contains_mma, lp.static_instructions),
        default=None,
    )
    row.update(
        {
            "tensor_flops_per_iter": mix.tensor_flops_per_iter,
            "peeled_iters": mix.peeled_iters,
            "issue_per_iter": sum(mix.pipes_per_iter.values()),
            "issue_outside": sum(mix.pipes_prologue.values()) + sum(mix.pipes_epilogue.values()),
            "registers": mix.registers,
            "spills": mix.spills,
            "spill_instructions": mix.spill_instructions,
            "shared_bytes": mix.shared_bytes,
            "tmem_columns": mix.tmem_columns,
            "occupancy_ctas_per_sm": mix.occupancy_ctas_per_sm,
            "static_instructions": mix.static_instructions,
            "loop_static_instructions": main.static_instructions if main else 0,
            "n_loops": sum(1 for lp in mix.loops if lp.depth == 0),
            "ref_shape": ";".join(f"{k}={v}" for k, v in mix.shape.items()),
            "ref_trips": mix.main_loop_trips,
            "compile_s": round(mix.compile_s, 3),
            "disasm_s": round(mix.disasm_s, 3),
            "triton_version": mix.triton_version or "",
        }
    )
    return row


def _current_hashes() -> dict[str, str]:
    return {b: kernel_source_hash(b) for b in ("fused_moe", "gemm", "rmsnorm", "silu_mul", "attention")}


def cached_mix_row(
    builtin: str, arch: str, dtype: str, config: Any, *, cache: pd.DataFrame | None = None, exact_group_m: bool = True
) -> dict[str, Any] | None:
    """The cache row of one builtin/arch/dtype/config for the current kernel source, or None."""
    df = load_cache() if cache is None else cache
    if df.empty:
        return None
    arch = normalize_arch(arch)
    d = normalize_dtype(dtype)
    h = kernel_source_hash(builtin)
    cfg = config.as_tuple() if hasattr(config, "as_tuple") else tuple(int(x) for x in config)
    sel = (df["kernel"] == builtin) & (df["kernel_hash"] == h) & (df["arch"] == arch) & (df["dtype"] == d)
    cols = CONFIG_COLUMNS if exact_group_m else [c for c in CONFIG_COLUMNS if c != "group_m"]
    vals = cfg if exact_group_m else cfg[:3] + cfg[4:]
    for c, v in zip(cols, vals):
        sel &= df[c] == v
    hit = df[sel]
    if hit.empty:
        return None
    return cast(dict[str, Any], hit.iloc[0].to_dict())


def _norm_arch_or_none(a: Any) -> str | None:
    try:
        return normalize_arch(a)
    except Exception:
        return None


def _norm_dtype_or_none(d: Any) -> str | None:
    try:
        return normalize_dtype(d)
    except Exception:
        return None


def load_sass_features(df_tile_plans: pd.DataFrame, *, cache: pd.DataFrame | str | Path | None = None) -> pd.DataFrame:
    """Per-row SASS features from the shipped cache (no triton needed).

    ``df_tile_plans`` needs ``family``, ``arch`` (``sm_90`` ...), ``dtype`` and the tile plan ``block_m, block_n,
    block_k, group_m, num_warps, num_stages``. Returns a frame with the same index and the columns
    :data:`SASS_FEATURE_COLUMNS` (NaN where the cache has no entry; ``sass_cached`` is 1.0/0.0). Counts are
    dynamic warp-instructions per CTA (``*_per_iter``: one main-loop iteration). When no entry has the exact
    ``group_m`` one with the same other fields is used (GROUP_M only changes the tile-index arithmetic of the
    prologue) and ``sass_group_m_exact`` is 0.
    """
    need = ["family", "arch", "dtype", *CONFIG_COLUMNS]
    missing = [c for c in need if c not in df_tile_plans.columns]
    if missing:
        raise DataError(f"load_sass_features needs columns {missing}", hint=f"required: {', '.join(need)}")
    if isinstance(cache, pd.DataFrame):
        cdf = cache
    else:
        cdf = load_cache(cache)
    out = pd.DataFrame(np.nan, index=df_tile_plans.index, columns=SASS_FEATURE_COLUMNS, dtype=float)
    out["sass_cached"] = 0.0
    if cdf.empty or df_tile_plans.empty:
        return out
    hashes = _current_hashes()
    cdf = cdf[cdf["kernel_hash"].astype(str) == cdf["kernel"].map(hashes).astype(str)]
    feat_src = [c[len("sass_") :] for c in SASS_FEATURE_COLUMNS[2:-1]]
    cdf = cdf.copy()
    for c in feat_src:
        if c not in cdf.columns:
            cdf[c] = np.nan
    # one entry per key (prefer the aligned reference specialisation: first after sorting)
    exact = cdf.drop_duplicates(subset=["kernel", "arch", "dtype", *CONFIG_COLUMNS], keep="first")
    nogm = cdf.drop_duplicates(
        subset=["kernel", "arch", "dtype", *[c for c in CONFIG_COLUMNS if c != "group_m"]], keep="first"
    )
    q = pd.DataFrame(
        {
            "kernel": df_tile_plans["family"].map(lambda f: family_builtin(str(f))),
            "arch": df_tile_plans["arch"].map(_norm_arch_or_none),
            "dtype": df_tile_plans["dtype"].map(_norm_dtype_or_none),
        },
        index=df_tile_plans.index,
    )
    for c in CONFIG_COLUMNS:
        q[c] = pd.to_numeric(df_tile_plans[c], errors="coerce")
    ok = q.notna().all(axis=1)
    if not ok.any():
        return out
    qv = q[ok].copy()
    for c in CONFIG_COLUMNS:
        qv[c] = qv[c].astype(int)
    qv["_row"] = np.arange(len(qv))
    m1 = qv.merge(
        exact[["kernel", "arch", "dtype", *CONFIG_COLUMNS, *feat_src]],
        how="left",
        on=["kernel", "arch", "dtype", *CONFIG_COLUMNS],
    ).sort_values("_row")
    keys2 = ["kernel", "arch", "dtype", *[c for c in CONFIG_COLUMNS if c != "group_m"]]
    m2 = qv.merge(nogm[[*keys2, *feat_src]], how="left", on=keys2).sort_values("_row")
    hit1 = m1["registers"].notna().to_numpy()
    hit2 = m2["registers"].notna().to_numpy()
    vals = np.where(hit1[:, None], m1[feat_src].to_numpy(dtype=float), m2[feat_src].to_numpy(dtype=float))
    idx = qv.index
    out.loc[idx, [f"sass_{c}" for c in feat_src]] = vals
    out.loc[idx, "sass_cached"] = (hit1 | hit2).astype(float)
    out.loc[idx, "sass_group_m_exact"] = np.where(hit1, 1.0, np.where(hit2, 0.0, np.nan))
    # issued / useful MMA work: > 1 when the tile is smaller than the warps' MMA footprint and Triton
    # replicates the MMAs across warps (e.g. 16x16 tiles with 4-8 warps)
    useful = 2.0 * qv["block_m"] * qv["block_n"] * qv["block_k"]
    out.loc[idx, "sass_mma_replication"] = out.loc[idx, "sass_tensor_flops_per_iter"].to_numpy() / useful.to_numpy()
    return out
