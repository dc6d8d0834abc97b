"""Tile-plan resolution: which BLOCK_M/N/K, GROUP_M, warps and stages each launch really used.

Order of precedence per row: the recorded plan (``block_m`` ... columns of the profile) >
the kernel's own selection logic:

* ``gemm`` (cuBLAS via ``torch.nn.functional.linear``; the tile is not recorded): a documented
  heuristic that mimics cuBLAS' choice by picking, from a per-architecture candidate list of
  CUTLASS-like tiles with split-K in {1, 2, 4, 8}, the candidate with the smallest analytical
  envelope time (the library's heuristics are themselves tuned to pick the fastest kernel).
* ``fused_moe`` (SGLang 0.5.10 Triton fused-MoE, aiconfigurator): SGLang's tuned-config lookup
  (file for the device, nearest M key) with its default config as fallback
  (:func:`pipeweave.sources.resolve_sglang_moe_configs`).
* ``moe_w13`` (PipeWeave artifact, default-config rows): the kernel's default heuristic,
  16/32/64/GROUP 1/4 warps/3 stages if M <= E else 64/64/64/16/4/3.
* attention: FlashAttention-2/3-like tiles by architecture (see :func:`attention_tiles`); decode
  rows of SGLang's Triton backend take that kernel's own launch configuration
  (:func:`sglang_triton_decode_tiles`). Its prefill kernel's configuration was screened and is not
  used (``experiments/accuracy_log``: the inner folds got far worse).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._frame import str_startswith
from ..vocab import TILE_COLUMNS, moe_w13_default_tiles
from ._constants import CUBLAS_GROUP_M

__all__ = [
    "TILE_COLUMNS",
    "gemm_candidates",
    "moe_w13_default",
    "fused_moe_default",
    "attention_tiles",
    "sglang_triton_decode_tiles",
]

# (BM, BN, BK for 2-byte dtypes, warps, stages). BK doubles for 1-byte dtypes.
_MMA_SYNC_TILES = [
    (256, 128, 32, 8, 3),
    (128, 256, 32, 8, 3),
    (128, 128, 32, 4, 4),
    (128, 64, 32, 4, 4),
    (64, 128, 32, 4, 4),
    (64, 64, 64, 4, 4),
    (32, 64, 64, 4, 4),
]
_ASYNC_MMA_TILES = [
    (128, 256, 64, 8, 4),
    (256, 128, 64, 8, 4),
    (128, 128, 64, 8, 5),
    (128, 64, 64, 4, 6),
    (64, 128, 64, 4, 6),
    (64, 64, 64, 4, 8),
    (64, 32, 128, 4, 6),
]
_SPLITS = (1, 2, 4, 8)


def gemm_candidates(async_mma: bool, one_byte: bool) -> pd.DataFrame:
    """Candidate cuBLAS-like tiles for one architecture class (sm_90/sm_100 vs sm_80/86/89/120)."""
    base = _ASYNC_MMA_TILES if async_mma else _MMA_SYNC_TILES
    rows = [
        (bm, bn, bk * (2 if one_byte else 1), CUBLAS_GROUP_M, w, st, s) for (bm, bn, bk, w, st) in base for s in _SPLITS
    ]
    return pd.DataFrame(rows, columns=[*TILE_COLUMNS, "split_k"], dtype=float)


def moe_w13_default(num_tokens: np.ndarray, num_experts: np.ndarray) -> pd.DataFrame:
    """Default config of the PipeWeave W13 Triton kernel: small-M plan when M <= E (rule in :mod:`pipeweave.vocab`)."""
    return pd.DataFrame(moe_w13_default_tiles(num_tokens, num_experts), columns=list(TILE_COLUMNS))


def fused_moe_default(num_tokens: np.ndarray, local_experts: np.ndarray, dtype: np.ndarray) -> pd.DataFrame:
    """SGLang 0.5.10 ``get_default_config`` (used when no tuned file matches the device).

    bf16: 64x64x32, GROUP_M 8 (16x32x64, GROUP_M 1 when M <= E), 4 warps, 3 stages;
    fp8 block [128,128]: 64x128x128, GROUP_M 32, 4 warps, 3 stages.
    """
    small = np.asarray(num_tokens, dtype=float) <= np.asarray(local_experts, dtype=float)
    fp8 = str_startswith(pd.Series(dtype), "fp8")
    cfg = np.where(small[:, None], [16, 32, 64, 1, 4, 3], [64, 64, 32, 8, 4, 3]).astype(float)
    cfg = np.where(fp8[:, None], [64, 128, 128, 32, 4, 3], cfg)
    return pd.DataFrame(cfg, columns=list(TILE_COLUMNS))


def attention_tiles(async_mma: np.ndarray, smem_per_sm_kib: np.ndarray, decode: bool) -> pd.DataFrame:
    """FlashAttention tiles: BQ x BKV, warps, stages.

    Prefill: FA3 on sm_90/sm_100 (128 x 128, 3 consumer+producer warpgroups ~ 12 warps, 2 stages);
    FA2 elsewhere (128 x 64, 4 warps; 128 x 32 on 100 KiB-smem parts). Decode: 64-key blocks, 4 warps.
    """
    hc = np.asarray(async_mma, dtype=bool)
    n = len(hc)
    if decode:
        return pd.DataFrame(
            {
                "block_m": np.full(n, 16.0),
                "block_n": np.full(n, 64.0),
                "num_warps": np.full(n, 4.0),
                "num_stages": np.full(n, 2.0),
            }
        )
    small_smem = np.asarray(smem_per_sm_kib, dtype=float) <= 100
    return pd.DataFrame(
        {
            "block_m": np.full(n, 128.0),
            "block_n": np.where(hc, 128.0, np.where(small_smem, 32.0, 64.0)),
            "num_warps": np.where(hc, 12.0, 4.0),
            "num_stages": np.where(hc, 2.0, 1.0) + 1.0,
        }
    )


def sglang_triton_decode_tiles(group: np.ndarray) -> pd.DataFrame:
    """Launch configuration of SGLang 0.5.10's Triton decode attention (``decode_attention_fwd``).

    The grouped kernel when heads > KV heads (BLOCK_H = 16 query-head rows, BLOCK_N = 32 keys,
    4 warps, 2 stages), else one head per CTA (BLOCK_N = 64, 4 warps, 2 stages; 16 MMA rows here,
    the smallest MMA). The grid is :func:`pipeweave.frontend._kernels.sglang_triton_decode_split`.
    """
    grouped = np.asarray(group, dtype=float) > 1
    n = len(grouped)
    return pd.DataFrame(
        {
            "block_m": np.full(n, 16.0),
            "block_n": np.where(grouped, 32.0, 64.0),
            "num_warps": np.full(n, 4.0),
            "num_stages": np.full(n, 2.0),
        }
    )
