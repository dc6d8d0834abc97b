"""FP32 GEMM on the CUDA cores (NeuSight's torch.bmm / linear with TF32 off).

cuBLAS runs SIMT SGEMM kernels (``maxwell_sgemm_128x64_nn``, ``volta_sgemm_128x128_tn``,
``ampere_sgemm_*``, ``sm80_xmma_gemm_f32f32_..._tilesize128x128x8_..._ffma``,
``cutlass_80_simt_sgemm_256x128_8x4``): the same tiled structure as a tensor-core GEMM, but every
multiply-add is an FFMA on the FMA pipe (``fp32_lanes_per_sm`` per clock), and each thread
computes a TM x TN register micro-tile, reading TM + TN operands from shared memory per k-step.
The tile comes from the kernel name the source recorded (``block_m`` ... columns filled by the
loader); the front-end gives a row without one the SIMT tile with the smallest envelope among cuBLAS's
SGEMM tiles, like the bf16 path's cuBLAS-like heuristic. A fitted model predicts such a launch under
every SIMT tile instead and averages the fastest (:func:`library_tile_rows`, :func:`simt_tile_launches`;
``pipeweave.model.PipeweaveRegressor.library_tiles``).

The operator's operand layout is reported as ``b_transposed`` (1 for ``op="linear"``: y = x W^T with
W stored [n, k], which cuBLAS runs as a ``tn`` kernel; 0 for ``op="bmm"``: row-major A and B, ``nn``).
The demand model does not change with it (same FFMA count, same tile traffic); the FP32 GEMM booster
reads it (``pipeweave.model.FAMILY_EXTRA_FEATURES``): the layout changes the kernel cuBLAS picks and its
global-load pattern, which the spec sheet does not describe.

A recorded ``split_k`` (a legacy SGEMM's grid z / batch) splits each output tile's reduction over that many CTAs.
Training rows keep what their source records (blank: none); for launches a user asks about without it,
:func:`infer_split_k` gives the split of the smallest envelope, which ``pipeweave.predict`` fills in (for a launch
without a tile, with each tile it tries).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._frame import num_values, str_codes
from ._demand import SCHEDULE_SPEC_KEYS, KernelDemand, envelope_us
from ._kernels import tiled_matmul

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "FP32_FAMILIES",
    "SIMT_TILES",
    "SPLIT_K_CANDIDATES",
    "SPLIT_K_MIN_SLICE",
    "b_transposed",
    "given_split_k",
    "infer_split_k",
    "library_tile_rows",
    "simt_gemm",
    "simt_tile_launches",
    "tiled_launches",
]

Spec = dict[str, np.ndarray]

#: cuBLAS SIMT SGEMM tiles (BM, BN, BK, warps, stages) the heuristic chooses from.
SIMT_TILES: tuple[tuple[float, float, float, float, float], ...] = (
    (128.0, 128.0, 8.0, 8.0, 2.0),
    (128.0, 64.0, 8.0, 4.0, 2.0),
    (64.0, 128.0, 8.0, 4.0, 2.0),
    (64.0, 64.0, 8.0, 2.0, 2.0),
    (128.0, 32.0, 8.0, 8.0, 2.0),
    (32.0, 128.0, 8.0, 8.0, 2.0),
    (32.0, 32.0, 8.0, 4.0, 2.0),
)


def simt_gemm(
    name: str,
    *,
    batch: np.ndarray,
    m: np.ndarray,
    n: np.ndarray,
    k: np.ndarray,
    bm: np.ndarray,
    bn: np.ndarray,
    bk: np.ndarray,
    warps: np.ndarray,
    stages: np.ndarray,
    spec: Spec,
    split_k: np.ndarray | float = 1.0,
) -> KernelDemand:
    """Demand of ``batch`` FP32 GEMMs C[m,n] = A[m,k] B[k,n] on the FMA pipe with BM x BN x BK tiles.

    ``split_k``: CTAs per output tile along the reduction (cuBLAS split-K: each over k / split_k, fp32 partials
    written and summed; 1 = none).

    Built as a tiled matmul over ``batch * m`` rows (each batch's tiles are independent; the L2
    reuse model sees one tall operand), then the tensor work moves to the FMA pipe
    (BM*BN*BK FFMA per k-step) and shared-memory traffic becomes the micro-tile operand reads:
    threads * (TM + TN) * 4 B per k with TM * TN = BM*BN/threads.
    """
    batch = np.maximum(np.asarray(batch, dtype=float), 1.0)
    tm = np.ceil(m / bm)
    kd = tiled_matmul(
        name,
        rows=batch * tm * bm,
        n=n,
        k=k,
        bm=bm,
        bn=bn,
        bk=bk,
        group_m=np.ones_like(bm),
        warps=warps,
        stages=stages,
        a_bytes=4.0,
        b_bytes=4.0,
        out_bytes=4.0,
        tensor_rate=np.ones_like(bm),
        spec=spec,
        split_k=split_k,
        loaded_rows=batch * m,
        a_comp_rows=batch * m,
        b_groups=batch,
        useful_rows=batch * m,
    )
    threads = warps * 32.0
    micro = np.sqrt(np.maximum(bm * bn / threads, 1.0))
    kd.fma_it = bm * bn * bk
    kd.tensor_flop_it = np.zeros_like(kd.fma_it)
    kd.smem_bytes_it = threads * 2.0 * micro * 4.0 * bk + (bm + bn) * bk * 4.0
    kd.alu_it = threads * 4.0 * bk / 8.0 + kd.alu_it * 0.0
    kd.useful_flop = 2.0 * batch * m * n * k
    return kd


def _heuristic(batch, m, n, k, spec: Spec) -> np.ndarray:
    """(rows, 5) SIMT tile with the smallest envelope time per row (ties: first in SIMT_TILES)."""
    sub = {key: spec[key] for key in SCHEDULE_SPEC_KEYS if key in spec}
    best = np.full(len(m), np.inf)
    choice = np.zeros((len(m), 5))
    for cand in SIMT_TILES:
        c = [np.full(len(m), v) for v in cand]
        kd = simt_gemm(
            "gemm_fp32", batch=batch, m=m, n=n, k=k, bm=c[0], bn=c[1], bk=c[2], warps=c[3], stages=c[4], spec=spec
        )
        env = envelope_us(kd, sub)
        better = env < best
        best = np.where(better, env, best)
        choice[better] = cand
    return choice


def b_transposed(df: pd.DataFrame) -> np.ndarray:
    """1.0 where B is read transposed (``op == "linear"``: x @ W^T, cuBLAS ``tn``), else 0.0 (``bmm``, blank or absent)."""
    if "op" not in df.columns or not len(df):
        return np.zeros(len(df))
    codes, names = str_codes(df["op"])  # one test per distinct operator (cells as validated: stripped)
    return np.array([str(n).strip() == "linear" for n in names], dtype=float)[codes]


def _resolved_launch(df: pd.DataFrame, spec: Spec) -> dict[str, np.ndarray]:
    """Shape (batch, m, n, k) and tile plan (bm, bn, bk, warps, stages; ``has``: recorded) of FP32 GEMM rows: the
    recorded tile (the cuBLAS kernel name's), else the SIMT tile with the smallest envelope (assuming no split)."""
    m, n, k = num_values(df, "m"), num_values(df, "n"), num_values(df, "k")
    batch = np.nan_to_num(num_values(df, "batch_size"), nan=1.0) if "batch_size" in df else np.ones(len(df))
    rec = {
        c: (num_values(df, c) if c in df else np.full(len(df), np.nan))
        for c in ("block_m", "block_n", "block_k", "num_warps", "num_stages")
    }
    from ._families import named_tile_rows  # the front-end's one rule for a given tile (_families imports this module)

    has = named_tile_rows(df)
    bm, bn, bk = rec["block_m"].copy(), rec["block_n"].copy(), rec["block_k"].copy()
    warps = np.where(np.isfinite(rec["num_warps"]), rec["num_warps"], np.clip(bm * bn / 2048.0, 1.0, 8.0))
    stages = np.where(np.isfinite(rec["num_stages"]), rec["num_stages"], 2.0)
    if (~has).any():
        idx = np.flatnonzero(~has)
        sub = {key: v[idx] for key, v in spec.items()}
        h = _heuristic(batch[idx], m[idx], n[idx], k[idx], sub)
        bm[idx], bn[idx], bk[idx], warps[idx], stages[idx] = h.T
    return {
        "batch": batch,
        "m": m,
        "n": n,
        "k": k,
        "bm": bm,
        "bn": bn,
        "bk": bk,
        "warps": warps,
        "stages": stages,
        "has": has,
    }


#: Splits a blank ``split_k`` is chosen among (:func:`infer_split_k`), and the least of the reduction each slice
#: keeps (a slice of fewer than 128 k-steps would be mostly prologue; fixed before any measurement was compared)
SPLIT_K_CANDIDATES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)
SPLIT_K_MIN_SLICE = 128


def infer_split_k(df: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None = None) -> np.ndarray:
    """``split_k`` per row (CTAs per output tile along the reduction): the given value where there is one, and for
    ``gemm_fp32`` rows with a blank or absent ``split_k`` the candidate of :data:`SPLIT_K_CANDIDATES` with the
    smallest envelope time whose slices keep at least :data:`SPLIT_K_MIN_SLICE` of k (1 when none does better);
    NaN on other families' rows.

    cuBLAS's legacy SGEMMs split long reductions over few output tiles (a third of NeuSight's ``linear``
    launches, split 2-162): a launch predicted as one CTA per tile there runs many times slower than measured.
    ``pipeweave.predict`` and ``pipeweave.explain`` fill a blank ``split_k`` with this; training rows keep what
    their source records (blank: none). Rows must be valid launches (:func:`row_problems`).
    """
    from ._featurize import spec_arrays

    out = np.full(len(df), np.nan)
    if not len(df) or "family" not in df.columns:
        return out
    fam = df["family"].astype(str).str.strip().to_numpy() == "gemm_fp32"
    given = num_values(df, "split_k") if "split_k" in df.columns else np.full(len(df), np.nan)
    out[fam] = given[fam]
    idx = np.flatnonzero(fam & ~np.isfinite(given))
    if not len(idx):
        return out
    sub = df.iloc[idx]
    spec = spec_arrays(sub["gpu"], gpus)
    launch = _resolved_launch(sub, spec)
    keys = {key: spec[key] for key in SCHEDULE_SPEC_KEYS if key in spec}
    best, choice = np.full(len(idx), np.inf), np.ones(len(idx))
    for cand in SPLIT_K_CANDIDATES:
        kd = simt_gemm(
            "gemm_fp32",
            **{c: launch[c] for c in ("batch", "m", "n", "k", "bm", "bn", "bk", "warps", "stages")},
            spec=spec,
            split_k=float(cand),
        )
        env = np.where((cand == 1) | (launch["k"] / cand >= SPLIT_K_MIN_SLICE), envelope_us(kd, keys), np.inf)
        better = env < best
        best, choice = np.where(better, env, best), np.where(better, float(cand), choice)
    out[idx] = choice
    return out


def _build_gemm_fp32(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    launch = _resolved_launch(df, spec)
    bm, bn, bk, warps, stages, has = (launch[c] for c in ("bm", "bn", "bk", "warps", "stages", "has"))
    # the recorded split-K (blank: none; pipeweave.predict fills a blank with infer_split_k); the heuristic tile
    # of _resolved_launch assumes none
    split = np.nan_to_num(num_values(df, "split_k"), nan=1.0) if "split_k" in df else np.ones(len(df))
    kd = simt_gemm(
        "gemm_fp32",
        batch=launch["batch"],
        m=launch["m"],
        n=launch["n"],
        k=launch["k"],
        bm=bm,
        bn=bn,
        bk=bk,
        warps=warps,
        stages=stages,
        spec=spec,
        split_k=split,
    )
    tiles = pd.DataFrame(
        {
            "block_m": bm,
            "block_n": bn,
            "block_k": bk,
            "group_m": np.ones(len(df)),
            "num_warps": warps,
            "num_stages": stages,
            "tile_origin": np.where(has, "kernel_name", "simt_heuristic").astype(object),
            "b_transposed": b_transposed(df),
        }
    )
    return [kd], tiles


#: (name, shape columns, dtypes, builder, description); registered by :mod:`._families`.
FP32_FAMILIES = (
    (
        "gemm_fp32",
        ("m", "n", "k"),
        ("float32",),
        _build_gemm_fp32,
        "FP32 GEMM / batched GEMM on the CUDA cores (cuBLAS SIMT SGEMM; batch_size GEMMs of m x n x k)",
    ),
)


def library_tile_rows(df: pd.DataFrame) -> np.ndarray:
    """Bool per row: a ``gemm_fp32`` launch whose tile the library chooses, because the row does not give one
    (``block_m`` / ``block_n`` / ``block_k`` not all given; in a featurized frame, ``tile_origin`` is
    ``"simt_heuristic"``). A fitted :class:`~pipeweave.model.PipeweaveRegressor` gives such a row the kernel cuBLAS ran
    for the nearest measured launches of its GPU or its architecture, else predicts it under every tile of
    :data:`SIMT_TILES` (:func:`simt_tile_launches`) and averages the fastest
    (:meth:`~pipeweave.model.PipeweaveRegressor.library_tiles`)."""
    # the front-end's rule for a given tile (imported here: _families imports this module)
    from ._families import named_tile_rows

    if not len(df) or "family" not in df.columns:
        return np.zeros(len(df), dtype=bool)
    fam = df["family"].astype(str).str.strip().to_numpy() == "gemm_fp32"
    if "tile_origin" in df.columns:
        return fam & (df["tile_origin"].astype(str).to_numpy() == "simt_heuristic")
    return fam & ~named_tile_rows(df)


def simt_tile_launches(
    df: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None = None
) -> list[tuple[tuple[float, float, float, float, float], pd.DataFrame]]:
    """The launch rows of ``df`` (``gemm_fp32`` rows without a tile: :func:`library_tile_rows`) once per tile of
    :data:`SIMT_TILES`: ``[(tile, rows), ...]``, ``rows`` as :func:`tiled_launches` gives them for that tile (the
    given ``split_k`` where the launch gives one, else the split :func:`infer_split_k` finds for that tile).
    ``gpus``: specs of GPUs outside the catalog."""
    names = ("block_m", "block_n", "block_k", "num_warps", "num_stages")
    return [(tile, tiled_launches(df, dict(zip(names, tile, strict=True)), gpus)) for tile in SIMT_TILES]


def given_split_k(df: pd.DataFrame) -> np.ndarray:
    """The ``split_k`` each launch row of ``df`` gives (NaN where it gives none). A featurized frame's ``split_k`` is
    a feature (1 for a blank), not what the user gave: its rows count as giving none."""
    if "split_k" not in df.columns or "t_env_us" in df.columns:
        return np.full(len(df), np.nan)
    return num_values(df, "split_k")


def tiled_launches(
    df: pd.DataFrame, tile: Mapping[str, Any], gpus: Mapping[str, GPUSpec] | None = None
) -> pd.DataFrame:
    """The launch rows of ``df`` without their computed columns, naming the tile plan ``tile`` (``block_m``,
    ``block_n``, ``block_k``, ``num_warps``, ``num_stages``: one value or one per row; the other tile columns
    blank) and a split-K per row: the given ``split_k`` where the launch gives one, else ``tile["split_k"]`` where
    it holds one, else the split :func:`infer_split_k` finds for that tile. A featurized frame's ``split_k`` is a
    feature (1 for a blank), not what the user gave: its rows count as giving none."""
    from ._tileplan import TILE_COLUMNS
    from ._validate import DERIVED_COLUMNS

    given = given_split_k(df)
    if "split_k" in tile:
        given = np.where(np.isfinite(given), given, np.broadcast_to(np.asarray(tile["split_k"], dtype=float), len(df)))
    base = df.drop(columns=[c for c in df.columns if c in DERIVED_COLUMNS or str(c).startswith("sass_")])
    rows = base.assign(**{c: np.nan for c in TILE_COLUMNS}).assign(
        **{c: tile[c] for c in ("block_m", "block_n", "block_k", "num_warps", "num_stages")}, split_k=given
    )
    return rows.assign(split_k=infer_split_k(rows, gpus))  # the given split where there is one
