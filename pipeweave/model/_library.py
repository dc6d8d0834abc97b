"""The kernel cuBLAS runs for an FP32 GEMM launch, read off measured launches of the same GPU nearest to it.

cuBLAS picks an FP32 GEMM's SIMT kernel (its tile) and split-K itself, by heuristics per architecture that look at
the shape, the operand layout and the alignment. A launch asked about without a tile is predicted from the model's
fastest tiles (``PipeweaveRegressor.library_tiles``), which assumes the library picks a fast kernel. On a GPU whose
launches the model trained on (their kernel names give the tile and split-K), the library's actual habit is known:
e.g. on the P4 it runs ``maxwell_sgemm_64x64_tn`` for unaligned ``linear`` shapes, ~2.5x slower than its fastest
tile would be. A :class:`TileTable` keeps a GPU's measured launches (shape coordinates, the tile and split they ran)
and gives a new launch the majority tile of its nearest neighbours (:data:`~pipeweave.model.LIBRARY_TILE_NEIGHBORS`).
A GPU without a table borrows the launches of the trained GPUs of its compute capability (the same heuristics), else
(:data:`~pipeweave.model.LIBRARY_TILE_BORROW`) the tile of those of its major compute capability (the same SIMT kernels;
the split-K is then inferred for the GPU asked about); a GPU of an architecture nobody measured keeps the fastest
tiles.

A table is a few arrays, so the model file stores it in its stamp as plain JSON (no pickle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._errors import DataError, shown
from .._frame import num_values
from ._recipe import LIBRARY_TILE_BORROW

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "TABLE_TILE_COLUMNS",
    "TILE_BORROW_RULES",
    "TileTable",
    "choose_tiles",
    "fit_tile_tables",
    "row_spec_values",
    "tile_coordinates",
]

#: what a table keeps of each launch's kernel: its tile plan, then its split-K
TABLE_TILE_COLUMNS: tuple[str, ...] = ("block_m", "block_n", "block_k", "num_warps", "num_stages", "split_k")
#: which trained GPUs' launches vote for a GPU without a table of its own: ``"compute_capability"``, those of its
#: exact compute capability (``"7.5"``); ``"architecture"``, those, else those of its major compute capability (the
#: architecture cuBLAS's SIMT kernels are built for: the T4, 7.5, runs the V100's ``volta_sgemm`` kernels, the L4,
#: 8.9, the A100's ``ampere_sgemm``, the P4, 6.1, the P100's ``maxwell_sgemm``); ``"architecture_tile"``, the same
#: GPUs, but from those of another compute capability only the tile: the split-K is the one
#: :func:`pipeweave.frontend.infer_split_k` finds for that tile on the GPU asked about (cuBLAS splits K by how many
#: CTAs fill the GPU, and its SM count is not theirs)
TILE_BORROW_RULES: tuple[str, ...] = ("compute_capability", "architecture", "architecture_tile")


def tile_coordinates(df: pd.DataFrame) -> np.ndarray:
    """Float matrix (rows x 5) of FP32 GEMM launch rows (raw or featurized): log2 of ``m``, ``n``, ``k`` and
    ``batch_size`` (blank: 1), and the operand layout (1 = B transposed, NeuSight's ``linear``; else 0)."""
    from ..frontend import b_transposed

    m, n, k = (num_values(df, c) for c in ("m", "n", "k"))
    batch = np.nan_to_num(num_values(df, "batch_size"), nan=1.0) if "batch_size" in df.columns else np.ones(len(df))
    layout = (
        np.nan_to_num(num_values(df, "b_transposed")) if "b_transposed" in df.columns else b_transposed(df)
    )  # a featurized frame carries the layout, a raw one its operator
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.column_stack([np.log2(m), np.log2(n), np.log2(k), np.log2(np.maximum(batch, 1.0)), layout])
    return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


@dataclass
class TileTable:
    """One GPU's measured FP32 GEMM launches: ``coords`` (:func:`tile_coordinates`), ``label`` (per launch, a row
    of ``tiles``) and ``tiles`` (distinct kernels, :data:`TABLE_TILE_COLUMNS`); ``compute_capability`` of the GPU
    (``""`` when the catalog does not know it)."""

    compute_capability: str
    coords: np.ndarray
    label: np.ndarray
    tiles: np.ndarray

    def choose(self, coords: np.ndarray, neighbors: int) -> np.ndarray:
        """Rows x 6 (:data:`TABLE_TILE_COLUMNS`): the majority kernel of the ``neighbors`` nearest launches of
        each row of ``coords`` (a tie: the kernel of the nearest among the tied ones)."""
        return _vote([self], coords, neighbors)

    def to_dict(self) -> dict:
        """JSON-able form (the coordinates rounded to 1e-4 of an octave)."""
        return {
            "compute_capability": self.compute_capability,
            "coords": np.round(self.coords, 4).tolist(),
            "label": self.label.astype(int).tolist(),
            "tiles": self.tiles.tolist(),
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> TileTable:
        """Inverse of :meth:`to_dict`; a malformed entry raises :class:`~pipeweave.DataError`."""
        try:
            coords = np.asarray(d["coords"], dtype=float).reshape(-1, 5)
            label = np.asarray(d["label"], dtype=np.int64)
            tiles = np.asarray(d["tiles"], dtype=float).reshape(-1, len(TABLE_TILE_COLUMNS))
            ok = len(label) == len(coords) and len(label) > 0 and (0 <= label).all() and (label < len(tiles)).all()
        except (KeyError, TypeError, ValueError) as err:
            raise DataError(
                f"a library-tile table in the model file is malformed ({err})",
                hint="re-train the model (pipeweave train) or use a model file written by this version",
            ) from err
        if not ok:
            raise DataError(
                "a library-tile table in the model file is malformed (labels do not index its kernels)",
                hint="re-train the model (pipeweave train) or use a model file written by this version",
            )
        return cls(str(d.get("compute_capability", "")), coords, label, tiles)


def _vote(tables: list[TileTable], coords: np.ndarray, neighbors: int) -> np.ndarray:
    """The majority kernel of the ``neighbors`` nearest launches of ``tables`` (pooled) for each row of ``coords``."""
    from sklearn.neighbors import NearestNeighbors

    pool = np.concatenate([t.coords for t in tables])
    kernels, inverse = np.unique(
        np.concatenate([t.tiles[t.label] for t in tables]), axis=0, return_inverse=True
    )  # the pooled tables' distinct kernels
    inverse = inverse.ravel()
    k = max(1, min(int(neighbors), len(pool)))
    _, idx = NearestNeighbors(n_neighbors=k).fit(pool).kneighbors(coords)
    votes = inverse[idx]  # rows x k, nearest first
    counts = np.stack([(votes == votes[:, [j]]).sum(axis=1) for j in range(k)], axis=1)
    # the most votes; among equals the nearest (argmax returns the first maximum, and columns run nearest first)
    return kernels[votes[np.arange(len(votes)), np.argmax(counts, axis=1)]]


def fit_tile_tables(
    rows: pd.DataFrame,
    *,
    max_rows: int,
    min_launches: int,
    seed: int = 0,
    gpus: Mapping[str, GPUSpec] | None = None,
) -> dict[str, TileTable]:
    """GPU (catalog name) -> :class:`TileTable` of the ``gemm_fp32`` rows of ``rows`` whose kernel is recorded
    (a tile given, or in a featurized frame ``tile_origin`` other than ``"simt_heuristic"``) and whose split-K is
    known; at most ``max_rows`` seeded-random launches per GPU, and none for a GPU with fewer than ``min_launches``."""
    from ..frontend import library_tile_rows
    from ._regressor import seen_keys

    if not len(rows) or "family" not in rows.columns:
        return {}
    fam = rows["family"].astype(str).str.strip().to_numpy() == "gemm_fp32"
    tiles = np.column_stack(
        [num_values(rows, c) if c in rows.columns else np.full(len(rows), np.nan) for c in TABLE_TILE_COLUMNS]
    )
    keep = fam & ~library_tile_rows(rows) & np.isfinite(tiles[:, :4]).all(axis=1)
    tiles[:, 4] = np.nan_to_num(tiles[:, 4], nan=2.0)  # stages: the front-end's default for a SIMT tile
    tiles[:, 5] = np.nan_to_num(tiles[:, 5], nan=1.0)  # a blank split: none
    if not keep.any():
        return {}
    keys = seen_keys(rows)
    ccs = row_spec_values(rows, "compute_capability", gpus)
    coords = tile_coordinates(rows)
    rng = np.random.default_rng(seed)
    out: dict[str, TileTable] = {}
    for key in sorted(set(keys[keep])):
        pos = np.flatnonzero(keep & (keys == key))
        if len(pos) < min_launches:
            continue
        if len(pos) > max_rows:
            pos = np.sort(rng.choice(pos, size=max_rows, replace=False))
        kernels, label = np.unique(tiles[pos], axis=0, return_inverse=True)
        out[str(key)] = TileTable(str(ccs[pos[0]]), coords[pos], label.ravel().astype(np.int64), kernels)
    return out


def row_spec_values(df: pd.DataFrame, attr: str, gpus: Mapping[str, GPUSpec] | None = None) -> np.ndarray:
    """Each row's GPU spec field ``attr`` as text (``"compute_capability"`` -> ``"8.0"``, ``"generation"``): from
    ``gpus``, then the catalog, one lookup per distinct GPU; ``""`` where neither knows the GPU or the rows name
    none."""
    from .._errors import PipeweaveError
    from .._frame import str_codes
    from ..hardware import get_gpu

    if "gpu" not in df.columns or not len(df):
        return np.full(len(df), "", dtype=object)
    codes, names = str_codes(df["gpu"])
    found = []
    for name in names:
        try:
            found.append(str(getattr((gpus or {}).get(name) or get_gpu(name), attr)))
        except PipeweaveError:
            found.append("")
    return np.asarray(found, dtype=object)[codes]


def choose_tiles(
    tables: Mapping[str, TileTable],
    df: pd.DataFrame,
    neighbors: int,
    gpus: Mapping[str, GPUSpec] | None = None,
    borrow: str = LIBRARY_TILE_BORROW,
) -> tuple[np.ndarray, np.ndarray]:
    """For FP32 GEMM launch rows without a tile: ``(kernels, source)``. ``kernels``: rows x 6
    (:data:`TABLE_TILE_COLUMNS`) voted by the ``neighbors`` nearest launches of the row's GPU's table, else of the
    tables of its compute capability (pooled), else (``borrow="architecture"`` or ``"architecture_tile"``,
    :data:`TILE_BORROW_RULES`) of its major compute capability (``"architecture_tile"``: the split NaN there, for
    the caller to infer); NaN where there is none. ``source``: the GPU names whose launches voted (``"T4"``,
    ``"A100-PCIe-40GB"``; several joined by ``" + "``), ``""`` where none."""
    from ._regressor import seen_keys

    if borrow not in TILE_BORROW_RULES:
        raise DataError(
            f"the tile borrowing rule must be one of {list(TILE_BORROW_RULES)}, got {shown(borrow)}",
            hint=f"use {LIBRARY_TILE_BORROW!r} (the default) or another of {list(TILE_BORROW_RULES)}",
        )
    kernels = np.full((len(df), len(TABLE_TILE_COLUMNS)), np.nan)
    source = np.full(len(df), "", dtype=object)
    if not tables or not len(df) or neighbors <= 0 or "gpu" not in df.columns:
        return kernels, source
    keys = seen_keys(df)
    ccs = row_spec_values(df, "compute_capability", gpus)
    coords = tile_coordinates(df)
    by_cc: dict[str, list[str]] = {}
    by_major: dict[str, list[str]] = {}
    for name, t in sorted(tables.items()):
        if t.compute_capability:
            by_cc.setdefault(t.compute_capability, []).append(name)
            by_major.setdefault(_major(t.compute_capability), []).append(name)
    # which tables vote for a row: its GPU's own, else those of its compute capability, else (architecture) those of
    # its major compute capability (one test per distinct pair)
    pairs, codes = np.unique(np.column_stack([keys.astype(str), ccs.astype(str)]), axis=0, return_inverse=True)
    codes = codes.ravel()
    for j, (key, cc) in enumerate(pairs):
        names = [str(key)] if str(key) in tables else by_cc.get(str(cc), [])
        other_cc = not names and borrow != "compute_capability" and bool(str(cc))
        if other_cc:
            names = by_major.get(_major(str(cc)), [])
        pos = np.flatnonzero(codes == j)
        if names and len(pos):
            kernels[pos] = _vote([tables[n] for n in names], coords[pos], neighbors)
            source[pos] = " + ".join(names)
            if other_cc and borrow == "architecture_tile":
                kernels[pos, TABLE_TILE_COLUMNS.index("split_k")] = np.nan  # inferred for the GPU asked about
    return kernels, source


def _major(cc: str) -> str:
    """The major part of a compute capability: ``"8.9"`` -> ``"8"``."""
    return cc.split(".")[0].strip()
