"""Per-source column transforms that a manifest cannot express as a plain column mapping.

A dataset of a source manifest may name one ``transform``: a function of the raw source frame
(after reading, before the ``[keep]`` filter) that adds derived columns, whose names start with
``_``; the manifest then maps canonical columns to them like to any source column. Each
transform declares the source columns it needs and the columns it adds, so the loader checks
files before reading them. All transforms are vectorized (``str.extract`` on the distinct names).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Transform", "TRANSFORMS", "cublas_tile_from_kernel_name", "recorded_split_k"]


@dataclass(frozen=True)
class Transform:
    """A named raw-frame transform: source columns it reads, derived columns it adds, the function."""

    name: str
    needs: tuple[str, ...]
    adds: tuple[str, ...]
    apply: Callable[[pd.DataFrame], pd.DataFrame]


# cuBLAS / CUTLASS FP32 SIMT GEMM kernel names and the CTA tile they encode, each read along the caller's
# (PyTorch's row-major) m x n:
#   maxwell_sgemm_128x64_nn, volta_sgemm_32x128_tn, volta_sgemm_64x32_sliced1x4_tn,
#   ampere_sgemm_128x128_nn (legacy cuBLAS SGEMM: BK = 8, double-buffered shared memory). cuBLAS is
#   column-major: PyTorch's C = A B runs as C^T = B^T A^T, so the name's first number runs along the
#   caller's n and the second along m. NeuSight's launch grids show it: grid = ceil(n / first) x
#   ceil(m / second) on every one of its 136,783 bmm and linear launches with such a kernel, against 18% (bmm)
#   and 2% (linear) for the name's order along m x n (experiments/checks/neusight_grids.md;
#   tests/sources/test_sources_issue13.py checks real rows);
#   sm80_xmma_gemm_f32f32_..._tilesize128x128x8_stage3_warpsize2x2x1_ffma_... (cuBLASLt: BM x BN x BK along
#   the caller's m x n, grid ceil(m / BM) x ceil(n / BN) on every NeuSight row with one; stages, warps);
#   sgemm_32x32x32_NN[_vec] (BM x BN x BK) and
#   cutlass_80_simt_sgemm_256x128_8x4_nn_align1 (BM x BN, BK x stages): name order (their grids, swizzled or
#   split, decide neither reading; 0.6% of NeuSight's GEMM rows).
_TILE_PATTERNS: tuple[tuple[str, tuple[str, ...], dict[str, float]], ...] = (
    (r"tilesize(\d+)x(\d+)x(\d+)_stage(\d+)", ("block_m", "block_n", "block_k", "num_stages"), {}),
    (r"cutlass_\d+_simt_sgemm_(\d+)x(\d+)_(\d+)x(\d+)", ("block_m", "block_n", "block_k", "num_stages"), {}),
    (
        r"(?:maxwell|pascal|volta|turing|ampere)_sgemm_(\d+)x(\d+)",
        ("block_n", "block_m"),  # column-major: the name's first number along the caller's n
        {"block_k": 8.0, "num_stages": 2.0},
    ),
    (r"(?<![a-z_])sgemm_(\d+)x(\d+)x(\d+)_", ("block_m", "block_n", "block_k"), {"num_stages": 2.0}),
)


def cublas_tile_from_kernel_name(names: pd.Series | list[str]) -> pd.DataFrame:
    """BM, BN, BK and stages of FP32 SIMT GEMM kernels from their names (NaN where none is encoded).

    ``block_m`` / ``block_n`` are the CTA tile along the caller's m / n (C[m, n] = A[m, k] B[k, n], row-major,
    as PyTorch calls cuBLAS): a legacy cuBLAS SGEMM name (``volta_sgemm_128x64_tn``) gives the tile in
    cuBLAS's column-major view, so its first number is the caller's BN; a cuBLASLt ``tilesize`` name gives BM
    first. Both read off measured launch grids (see the comment above ``_TILE_PATTERNS``).

    >>> cublas_tile_from_kernel_name(["volta_sgemm_128x64_tn"]).iloc[0].tolist()
    [64.0, 128.0, 8.0, 2.0]
    """
    s = pd.Series(np.asarray(names, dtype=object)).astype(str)
    uniq = pd.Series(pd.unique(s))
    out = pd.DataFrame(np.nan, index=uniq.index, columns=["block_m", "block_n", "block_k", "num_stages"])
    done = np.zeros(len(uniq), dtype=bool)
    for pattern, cols, consts in _TILE_PATTERNS:
        ext = uniq.str.extract(pattern)
        hit = ext.notna().all(axis=1).to_numpy() & ~done
        for i, c in enumerate(cols):
            out.loc[hit, c] = pd.to_numeric(ext.loc[hit, i])
        for c, v in consts.items():
            out.loc[hit, c] = v
        done |= hit
    pos = pd.Index(uniq).get_indexer(s)
    return out.iloc[pos].reset_index(drop=True)


def _neusight_gemm(raw: pd.DataFrame) -> pd.DataFrame:
    tiles = cublas_tile_from_kernel_name(raw["Kernel Name"])
    out = raw.copy()
    for c in tiles.columns:
        out[f"_{c}"] = tiles[c].to_numpy()
    threads = (
        pd.to_numeric(raw["Block x"], errors="coerce")
        * pd.to_numeric(raw["Block y"], errors="coerce")
        * pd.to_numeric(raw["Block z"], errors="coerce")
    ).to_numpy(dtype=float)
    # warps per CTA: part of the kernel's identity (the launch's block size), NaN with the tile
    out["_num_warps"] = np.where(np.isfinite(tiles["block_m"].to_numpy()), threads / 32.0, np.nan)
    out["_split_k"] = recorded_split_k(raw["Kernel Name"], raw["Grid z"], raw["B"])
    return out


#: legacy cuBLAS SGEMM names (column-major tile, one CTA per output tile in grid x * y: neusight_grids.md)
_LEGACY_SGEMM = r"^(?:maxwell|pascal|volta|turing|ampere)_sgemm_"


def recorded_split_k(names: pd.Series, grid_z: pd.Series, batch: pd.Series) -> np.ndarray:
    """CTAs per output tile along the reduction that a launch ran (cuBLAS split-K), read off its grid.

    A legacy cuBLAS SGEMM (``volta_sgemm_128x64_tn`` ...) lays its output tiles over grid x * y and the batch and
    the reduction slices over z: split = grid z / batch (1 when z equals the batch; a third of NeuSight's
    ``linear`` launches split, by 2 to 162). NaN for other kernels, whose grid z means something else (the P4's
    ``sgemm_128x128x8_NT_vec`` tiles M over z): the front-end then assumes no split.

    >>> recorded_split_k(pd.Series(["volta_sgemm_128x64_tn", "sgemm_128x128x8_NT_vec"]), pd.Series([4, 256]),
    ...                  pd.Series([1, 1])).tolist()
    [4.0, nan]
    """
    legacy = pd.Series(np.asarray(names, dtype=object)).astype(str).str.contains(_LEGACY_SGEMM, regex=True)
    z = pd.to_numeric(pd.Series(np.asarray(grid_z)), errors="coerce").to_numpy(dtype=float)
    b = pd.to_numeric(pd.Series(np.asarray(batch)), errors="coerce").to_numpy(dtype=float)
    split = np.maximum(np.round(z / np.where(b > 0, b, np.nan)), 1.0)
    return np.where(legacy.to_numpy() & np.isfinite(split), split, np.nan)


def _fork_silu(raw: pd.DataFrame) -> pd.DataFrame:
    out = raw.copy()
    out["_inter_size"] = pd.to_numeric(raw["dim"], errors="coerce") / 2.0  # dim = input width 2 x I
    return out


def _fork_attention(raw: pd.DataFrame) -> pd.DataFrame:
    out = raw.copy()
    for src, dst in (("q_lengths", "_q_lengths"), ("kv_lengths", "_kv_lengths")):
        out[dst] = raw[src].astype(str).str.strip("[] ").str.replace(r"\s*,\s*", ";", regex=True)
    return out


def _vidur_mlp(raw: pd.DataFrame) -> pd.DataFrame:
    out = raw.copy()
    tp = pd.to_numeric(raw["num_tensor_parallel_workers"], errors="coerce")
    # the activation kernel of one tensor-parallel rank: I / tp outputs per token
    out["_inter_size"] = pd.to_numeric(raw["n_expanded_embd"], errors="coerce") / tp
    return out


TRANSFORMS: dict[str, Transform] = {
    t.name: t
    for t in (
        Transform(
            "neusight_gemm",
            ("Kernel Name", "Block x", "Block y", "Block z", "Grid z", "B"),
            ("_block_m", "_block_n", "_block_k", "_num_stages", "_num_warps", "_split_k"),
            _neusight_gemm,
        ),
        Transform("fork_silu_mul", ("dim",), ("_inter_size",), _fork_silu),
        Transform("fork_attention", ("q_lengths", "kv_lengths"), ("_q_lengths", "_kv_lengths"), _fork_attention),
        Transform("vidur_mlp", ("n_expanded_embd", "num_tensor_parallel_workers"), ("_inter_size",), _vidur_mlp),
    )
}
