"""Shared memory one CTA of a Triton tiled matmul allocates for its operand ring (the one rule).

Triton's software pipeliner keeps ``num_stages - 1`` buffers of the A (BM x BK) and B (BK x BN)
tiles in shared memory on the mma.sync path (sm_80/86/89/120, and sm_90/sm_100 when BLOCK_M < 64),
and ``num_stages`` buffers on the asynchronous wgmma/tcgen05 + TMA path (sm_90 and sm_100/103 with
BLOCK_M >= 64), checked against Triton 3.9's allocation for sm_80/86/89/90a/100a/120a. Every
config measured in the moe_dse sweeps and every config SGLang 0.5.10 ships satisfies
``triton_smem_bytes(...) <= smem_per_cta_kib * 1024``. cuBLAS/CUTLASS kernels keep ``stages``
buffers on every arch (not this rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["triton_smem_buffers", "triton_smem_bytes"]


def triton_smem_buffers(num_stages: Any, block_m: Any, sm_arch: Any = None) -> np.ndarray:
    """Operand buffers Triton allocates: ``num_stages`` on the wgmma/tcgen05 path, else ``max(num_stages-1, 1)``.

    ``sm_arch`` (compute capability x 10, scalar or per-row array; None = unknown -> the mma.sync rule).
    """
    from ..vocab import async_mma

    st = np.asarray(num_stages, dtype=float)
    bm = np.asarray(block_m, dtype=float)
    if sm_arch is None:
        full = np.zeros(np.broadcast(st, bm).shape, dtype=bool)
    else:
        full = np.asarray(async_mma(np.asarray(sm_arch, dtype=float))) & (bm >= 64)
    return np.where(full, st, np.maximum(st - 1.0, 1.0))


def triton_smem_bytes(
    block_m: Any,
    block_n: Any,
    block_k: Any,
    num_stages: Any,
    a_bytes: Any = 2.0,
    b_bytes: Any = None,
    sm_arch: Any = None,
) -> np.ndarray:
    """Shared memory (bytes) per CTA of a Triton tiled matmul: buffers x (BM*BK*a_bytes + BK*BN*b_bytes).

    ``a_bytes``/``b_bytes``: bytes per element of A and B (B defaults to A's); ``sm_arch`` decides
    the buffer count (:func:`triton_smem_buffers`). Vectorized over numpy arrays.
    """
    bm, bn, bk = (np.asarray(x, dtype=float) for x in (block_m, block_n, block_k))
    ab = np.asarray(a_bytes, dtype=float)
    bb = ab if b_bytes is None else np.asarray(b_bytes, dtype=float)
    return triton_smem_buffers(num_stages, bm, sm_arch) * (bm * bk * ab + bk * bn * bb)
