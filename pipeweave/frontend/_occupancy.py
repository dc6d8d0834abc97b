"""Resident CTAs per SM: the one occupancy rule of the front-ends.

The number of CTAs an SM holds at once is the minimum over its per-SM limits: CTA slots, warp slots,
the register file and shared memory (and, on sm_100, tensor memory columns). Both front-ends use
:func:`ctas_per_sm`; they differ only in how exactly resources are allocated:

* ``allocation="exact"`` (the SASS front-end, which reads the compiled kernel's register and shared
  memory counts): registers are allocated per warp in units of :data:`REG_ALLOC_UNIT`, shared memory
  per CTA in units of :data:`SMEM_ALLOC_UNIT` plus a :data:`SMEM_RESERVED_BYTES` system reservation
  (CUDA occupancy calculator rules, sm_80 and later), and a CTA that does not fit gives 0;
* ``allocation="estimated"`` (the analytical front-end, whose register and shared-memory counts are
  themselves estimates from the tile plan): the same limits without allocation granularity, and at
  least one CTA (a launch that Triton or cuBLAS made always runs).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["REG_ALLOC_UNIT", "SMEM_ALLOC_UNIT", "SMEM_RESERVED_BYTES", "ctas_per_sm"]

#: registers per warp are allocated in blocks of this many (sm_80 and later)
REG_ALLOC_UNIT = 256
#: shared memory per CTA is allocated in blocks of this many bytes
SMEM_ALLOC_UNIT = 128
#: bytes of shared memory the system reserves per resident CTA (sm_80 and later)
SMEM_RESERVED_BYTES = 1024


def ctas_per_sm(
    warps: ArrayLike,
    regs_per_thread: ArrayLike,
    smem_cta_bytes: ArrayLike,
    *,
    max_ctas: ArrayLike,
    max_warps: ArrayLike,
    regs_per_sm: ArrayLike,
    smem_per_sm_bytes: ArrayLike,
    smem_per_cta_bytes: ArrayLike | None = None,
    tmem_columns: ArrayLike = 0,
    tmem_columns_per_sm: ArrayLike = 0,
    allocation: Literal["exact", "estimated"] = "exact",
) -> np.ndarray:
    """Resident CTAs per SM (float array, broadcast over the inputs).

    ``warps`` per CTA, ``regs_per_thread`` and ``smem_cta_bytes`` (dynamic + static shared memory per
    CTA, bytes) describe the kernel; the keyword limits describe the SM (``smem_per_cta_bytes`` is
    the opt-in maximum for one CTA: a larger CTA does not fit). A zero register, shared-memory or
    TMEM demand imposes no limit. See the module docstring for ``allocation``."""
    if allocation not in ("exact", "estimated"):
        raise ValueError(f"allocation must be 'exact' or 'estimated', got {allocation!r}")
    exact = allocation == "exact"
    w = np.maximum(np.asarray(warps, dtype=float), 1.0)
    regs = np.asarray(regs_per_thread, dtype=float)
    smem = np.asarray(smem_cta_bytes, dtype=float)
    by_ctas = np.asarray(max_ctas, dtype=float)
    by_warps = np.floor(np.asarray(max_warps, dtype=float) / w)
    if exact:
        regs_per_warp = np.ceil(regs * 32.0 / REG_ALLOC_UNIT) * REG_ALLOC_UNIT
        # whole warps' worth of registers: floor(regs_per_sm / regs_per_warp) warps, then CTAs
        by_regs = np.floor(np.floor(np.asarray(regs_per_sm, dtype=float) / np.maximum(regs_per_warp, 1.0)) / w)
        smem_alloc = np.ceil((smem + SMEM_RESERVED_BYTES) / SMEM_ALLOC_UNIT) * SMEM_ALLOC_UNIT
    else:
        by_regs = np.floor(np.asarray(regs_per_sm, dtype=float) / np.maximum(regs * w * 32.0, 1.0))
        smem_alloc = smem
    by_regs = np.where(regs > 0, by_regs, np.inf)
    by_smem = np.where(
        smem > 0, np.floor(np.asarray(smem_per_sm_bytes, dtype=float) / np.maximum(smem_alloc, 1.0)), np.inf
    )
    tmem = np.asarray(tmem_columns, dtype=float)
    tmem_sm = np.asarray(tmem_columns_per_sm, dtype=float)
    by_tmem = np.where((tmem > 0) & (tmem_sm > 0), np.floor(tmem_sm / np.maximum(tmem, 1.0)), np.inf)
    p = np.minimum.reduce(np.broadcast_arrays(by_ctas, by_warps, by_regs, by_smem, by_tmem))
    if smem_per_cta_bytes is not None:
        p = np.where(smem > np.asarray(smem_per_cta_bytes, dtype=float), 0.0, p)
    return np.maximum(p, 1.0) if not exact else np.maximum(p, 0.0)
