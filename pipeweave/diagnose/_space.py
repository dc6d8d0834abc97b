"""The Triton tile-config space of a tiled-matmul kernel on one GPU, filtered by what fits.

A config is (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages) =
(``block_m``, ``block_n``, ``block_k``, ``group_m``, ``num_warps``, ``num_stages``).

Feasibility on a GPU (both checks are per CTA):

* shared memory: Triton's software pipeliner keeps ``num_stages - 1`` buffers of the A and B
  operand tiles in shared memory on the mma.sync path (sm_80/86/89/120, and sm_90/sm_100 when
  BLOCK_M < 64), and ``num_stages`` buffers on the wgmma/tcgen05 path (sm_90/sm_100 with
  BLOCK_M >= 64); checked against Triton 3.9's allocation for sm_80/86/89/90a/100a/120a. So
  ``buffers * (BM*BK + BK*BN) * bytes <= smem_per_cta_kib * 1024``. This is also the bound the
  measured sweeps obey: every config measured on the 6 sweep GPUs satisfies it, while
  ``num_stages * (...)`` would reject configs that ran (e.g. 144 KiB ones on the 99 KiB A40).
* registers: the fp32 accumulator spread over the CTA's threads plus
  :data:`REG_OVERHEAD_PER_THREAD` for addresses must fit in :data:`MAX_REGS_PER_THREAD` (255 on
  every CUDA GPU since sm_50) and the CTA's registers in ``regs_per_sm``:
  ``BM*BN/(32*warps) + 40 <= 255`` and ``32*warps*(BM*BN/(32*warps) + 40) <= regs_per_sm``.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from .._errors import DataError, shown
from ..vocab import TILE_COLUMNS

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "config_vocabulary",
    "CONFIG_VALUES",
    "CONFIG_COLUMNS",
    "MAX_REGS_PER_THREAD",
    "REG_OVERHEAD_PER_THREAD",
    "config_space",
    "tuned_configs",
    "smem_bytes",
    "acc_regs_per_thread",
    "acc_in_tmem",
    "TMEM_FP32_PER_CTA",
    "config_fits",
    "config_key",
    "format_config",
    "enumerate_configs",
]

#: Tile-plan columns, in the order of ``--config BM,BN,BK,GM,WARPS,STAGES`` (the shared vocabulary).
CONFIG_COLUMNS: tuple[str, ...] = TILE_COLUMNS

#: Values of each knob. They cover the PipeWeave moe_dse sweeps (every value measured there,
#: except GROUP_M 2 and 128, which appear in 100 of 66,810 rows) and SGLang's tuning grid.
CONFIG_VALUES: dict[str, tuple[int, ...]] = {
    "block_m": (16, 32, 64, 128, 256),
    "block_n": (16, 32, 64, 128, 256),
    "block_k": (32, 64, 128, 256),
    "group_m": (1, 4, 8, 16, 32, 64),
    "num_warps": (4, 8),
    "num_stages": (2, 3, 4, 5),
}

#: Most registers one thread may use (all CUDA GPUs since sm_50).
MAX_REGS_PER_THREAD = 255
#: Registers per thread beyond the accumulator (addresses, indices, loop state); same constant as
#: the analytical front-end (pipeweave.frontend._constants.REG_OVERHEAD_PER_THREAD).
REG_OVERHEAD_PER_THREAD = 40.0
#: fp32 accumulator elements one CTA can hold in tensor memory (sm_100: 128 lanes x 512 columns x 32 bit).
TMEM_FP32_PER_CTA = 128 * 512

_DTYPE_BYTES = {"bfloat16": 2.0, "float16": 2.0, "fp8": 1.0, "fp8_block": 1.0, "float32": 4.0}


def _bytes_of(dtype: str) -> float:
    try:
        return _DTYPE_BYTES[str(dtype)]
    except KeyError:
        raise DataError(f"unknown dtype {dtype!r}", hint=f"use one of {sorted(_DTYPE_BYTES)}") from None


def _knob_values(values: Mapping[str, Sequence[int]] | None) -> dict[str, tuple[int, ...]]:
    """``values`` checked and completed: each knob given maps to a non-empty sequence of positive whole numbers,
    a knob not given keeps :data:`CONFIG_VALUES`; an unknown knob is refused with its close match."""
    import difflib
    import numbers

    if values is None:
        return dict(CONFIG_VALUES)
    if not isinstance(values, Mapping):
        raise DataError(
            f"values must map tile knobs to lists of values, got {type(values).__name__}",
            hint="e.g. values={'block_m': [64, 128], 'num_stages': [3, 4]} (knobs not given keep CONFIG_VALUES)",
        )
    unknown = [k for k in values if k not in CONFIG_COLUMNS]
    if unknown:
        close = {k: difflib.get_close_matches(str(k), CONFIG_COLUMNS, n=1, cutoff=0.6) for k in unknown}
        guesses = ", ".join(f"{c[0]!r} for {k!r}" for k, c in close.items() if c)
        raise DataError(
            f"values names unknown tile knobs {unknown}" + (f" (did you mean {guesses}?)" if guesses else ""),
            hint=f"use knobs of {list(CONFIG_COLUMNS)}",
        )
    out = dict(CONFIG_VALUES)
    for k, vs in values.items():
        items = [vs] if isinstance(vs, (str, bytes)) or not isinstance(vs, Iterable) else list(vs)
        ok = bool(items) and all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) and float(v) >= 1 and float(v).is_integer()
            for v in items
        )
        if not ok:
            raise DataError(
                f"values[{k!r}] must be a non-empty list of positive whole numbers, got {shown(vs)}",
                hint=f"e.g. values={{{k!r}: {list(CONFIG_VALUES[k][:2])}}}",
            )
        out[k] = tuple(int(v) for v in items)
    return out


def enumerate_configs(values: Mapping[str, Sequence[int]] | None = None) -> pd.DataFrame:
    """Every combination of the knob values (float64 columns :data:`CONFIG_COLUMNS`); a knob ``values`` does not
    give keeps :data:`CONFIG_VALUES`."""
    knobs = _knob_values(values)
    grid = list(itertools.product(*(knobs[c] for c in CONFIG_COLUMNS)))
    return pd.DataFrame(grid, columns=list(CONFIG_COLUMNS), dtype=float)


def _tile_columns(cfg: pd.DataFrame | Mapping[str, object], names: Sequence[str]) -> list[np.ndarray]:
    """The columns ``names`` of a config table (or one config mapping) as float arrays, else a :class:`DataError`
    naming the missing ones."""
    if not isinstance(cfg, (pd.DataFrame, Mapping)):
        raise DataError(
            f"a tile config must be a DataFrame or a mapping of {list(CONFIG_COLUMNS)}, got {type(cfg).__name__}",
            hint="e.g. {'block_m': 64, 'block_n': 64, 'block_k': 64, 'group_m': 8, 'num_warps': 4, 'num_stages': 3}",
        )
    keys = cfg.columns if isinstance(cfg, pd.DataFrame) else cfg.keys()
    missing = [c for c in names if c not in keys]
    if missing:
        raise DataError(
            f"the tile config lacks {missing}",
            hint=f"give all six tile columns {list(CONFIG_COLUMNS)} (pipeweave.vocab.parse_tile_config reads "
            "'BM,BN,BK,GM,WARPS,STAGES')",
        )
    try:
        return [np.asarray(cfg[c], dtype=float) for c in names]
    except (TypeError, ValueError):
        raise DataError(
            f"the tile config's {list(names)} must be numbers",
            hint="e.g. {'block_m': 64, 'block_n': 64, 'block_k': 64, 'group_m': 8, 'num_warps': 4, 'num_stages': 3}",
        ) from None


def _arch_of(spec: Any) -> float | np.ndarray | None:
    if spec is None:
        return None
    if isinstance(spec, (int, float, np.integer, np.floating, np.ndarray, list, tuple, pd.Series)):
        return np.asarray(spec, dtype=float)
    return float(spec.sm_arch)


def smem_bytes(cfg: pd.DataFrame | Mapping[str, object], dtype: str = "bfloat16", spec: Any = None) -> np.ndarray:
    """Shared memory (bytes) one CTA needs: :func:`pipeweave.frontend.triton_smem_bytes` of the config.

    ``spec``: the GPU (a GPUSpec, or its ``sm_arch`` as a number or per-row array) - it decides the buffer count
    (``num_stages`` on the sm_90/sm_100 wgmma/tcgen05 path with BLOCK_M >= 64, else ``num_stages - 1``);
    without it ``num_stages - 1`` is assumed.
    """
    from ..frontend import triton_smem_bytes

    b = _bytes_of(dtype)
    bm, bn, bk, st = _tile_columns(cfg, ("block_m", "block_n", "block_k", "num_stages"))
    return triton_smem_bytes(bm, bn, bk, st, b, b, _arch_of(spec))


def acc_in_tmem(cfg: pd.DataFrame | Mapping[str, object], spec: Any = None) -> np.ndarray:
    """True where the fp32 accumulator lives in tensor memory (tcgen05: sm_100/103 with BLOCK_M >= 64), not registers."""
    from ..vocab import async_mma

    (bm,) = _tile_columns(cfg, ("block_m",))
    arch = _arch_of(spec)
    if arch is None:
        return np.zeros(bm.shape, dtype=bool)
    a = np.broadcast_to(np.asarray(arch, dtype=float), bm.shape)
    return np.asarray(async_mma(a), dtype=bool) & (a >= 100) & (bm >= 64)


def acc_regs_per_thread(cfg: pd.DataFrame | Mapping[str, object], spec: Any = None) -> np.ndarray:
    """Estimated registers per thread: fp32 accumulator share (0 when it lives in tensor memory) + fixed overhead."""
    bm, bn, w = _tile_columns(cfg, ("block_m", "block_n", "num_warps"))
    acc = np.where(acc_in_tmem(cfg, spec), 0.0, bm * bn / (32.0 * w))
    return acc + REG_OVERHEAD_PER_THREAD


def config_fits(cfg: pd.DataFrame | Mapping[str, object], spec: GPUSpec, dtype: str = "bfloat16") -> np.ndarray:
    """Boolean array: which configs fit the GPU ``spec`` (a GPUSpec or a catalog name) by shared memory, registers
    and tensor memory."""
    from ..hardware import get_gpu

    spec = get_gpu(spec)
    # every column it reads, named when missing, before any is used
    bm, bn, _, w, _ = _tile_columns(cfg, ("block_m", "block_n", "block_k", "num_warps", "num_stages"))
    smem_ok = smem_bytes(cfg, dtype, spec) <= float(spec.smem_per_cta_kib) * 1024.0
    regs = acc_regs_per_thread(cfg, spec)
    threads = 32.0 * w
    regs_ok = (regs <= MAX_REGS_PER_THREAD) & (regs * threads <= float(spec.regs_per_sm))
    tmem_ok = ~acc_in_tmem(cfg, spec) | (bm * bn <= TMEM_FP32_PER_CTA)
    return np.asarray(smem_ok & regs_ok & tmem_ok, dtype=bool)


def tuned_configs(data: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Distinct configs SGLang 0.5.10 ships tuned for any GPU/dtype (tile columns, float64; empty without the table).

    Real tuners pick a few values outside :data:`CONFIG_VALUES` (2 or 16 warps, 1 or 7-8 stages, GROUP_M 2
    or 128); :func:`config_space` adds these configs to the grid so that no config a real tuner launched is
    missing from the candidates.
    """
    from .._paths import resolve_data_dir

    try:
        key = str(resolve_data_dir(data))
    except Exception:  # no data directory: the grid alone
        return pd.DataFrame(columns=list(CONFIG_COLUMNS), dtype=float)
    return _tuned_configs(key).copy()


@functools.lru_cache(maxsize=4)
def _tuned_configs(data_dir: str) -> pd.DataFrame:
    try:
        from ..sources import sglang_moe_config_table

        t = sglang_moe_config_table(data_dir)
    except Exception:  # the table is optional for the config space
        return pd.DataFrame(columns=list(CONFIG_COLUMNS), dtype=float)
    out = t[list(CONFIG_COLUMNS)].dropna().drop_duplicates().astype(float)
    return out.sort_values(list(CONFIG_COLUMNS)).reset_index(drop=True)


def config_space(
    gpu: str | os.PathLike[str] | GPUSpec,
    family: str = "moe_w13",
    dtype: str = "bfloat16",
    values: Mapping[str, Sequence[int]] | None = None,
    *,
    tuned: bool = True,
    data: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Feasible tile configs of a Triton matmul family on ``gpu`` (name, alias, spec file or GPUSpec).

    The grid :data:`CONFIG_VALUES` (``values`` replaces the knobs it gives) plus, with ``tuned``, every config
    SGLang ships tuned for any GPU (:func:`tuned_configs`), filtered by :func:`config_fits`. Returns the configs
    (columns :data:`CONFIG_COLUMNS`, float64) plus ``smem_kib`` and ``regs_per_thread``, sorted, on a fresh
    RangeIndex. ``family`` must be a tiled-matmul family (``moe_w13``, ``fused_moe``, ``gemm``).
    """
    from ..hardware import GPUSpec, get_gpu

    if family not in ("moe_w13", "fused_moe", "gemm"):
        raise DataError(
            f"family {family!r} has no Triton tile-config space",
            hint="config search supports moe_w13, fused_moe and gemm",
        )
    spec = gpu if isinstance(gpu, GPUSpec) else get_gpu(gpu)
    cfg = enumerate_configs(values)
    if tuned and values is None:
        extra = tuned_configs(data)
        if len(extra):
            cfg = pd.concat([cfg, extra[~np.isin(config_key(extra), config_key(cfg))]], ignore_index=True)
            cfg = cfg.sort_values(list(CONFIG_COLUMNS), kind="stable").reset_index(drop=True)
    ok = config_fits(cfg, spec, dtype)
    out = cfg[ok].reset_index(drop=True)
    out["smem_kib"] = smem_bytes(out, dtype, spec) / 1024.0
    out["regs_per_thread"] = acc_regs_per_thread(out, spec)
    if out.empty:
        raise DataError(
            f"no tile config fits {spec.name} ({spec.smem_per_cta_kib} KiB shared memory per CTA)",
            hint="check the GPU spec's smem_per_cta_kib and regs_per_sm",
        )
    return out


def config_key(cfg: pd.DataFrame) -> np.ndarray:
    """One int64 per config row (mixed-radix code of the six knobs, for fast set membership)."""
    v = [np.asarray(cfg[c], dtype=np.int64) for c in CONFIG_COLUMNS]
    key = np.zeros(len(cfg), dtype=np.int64)
    for x in v:
        key = key * 1024 + x
    return key


def format_config(cfg: Mapping[str, Any] | pd.Series | Sequence[float]) -> str:
    """'64,64,32,8,4,3' (the ``--config`` syntax)."""
    vals = (
        [cast(Any, cfg)[c] for c in CONFIG_COLUMNS]
        if isinstance(cfg, Mapping) or hasattr(cfg, "index") and not isinstance(cfg, (list, tuple, np.ndarray))
        else list(cfg)
    )
    return ",".join(str(int(round(float(v)))) for v in vals)


def config_vocabulary(sweeps: pd.DataFrame, flag: str = "in_dse_99") -> pd.DataFrame:
    """Distinct configs that were near-best (``flag``, default: within 1% of the best) in measured sweeps."""
    rows = sweeps[sweeps[flag].fillna(False).astype(bool)] if flag in sweeps.columns else sweeps
    out = rows[list(CONFIG_COLUMNS)].drop_duplicates().sort_values(list(CONFIG_COLUMNS)).reset_index(drop=True)
    return out.astype(float)
