"""The canonical profile file: what `pipeweave train --profiles` and `calibrate fit` read.

A CSV or parquet file, one row per measured kernel launch, with the canonical columns of
``pipeweave data`` (:data:`pipeweave.sources.PROFILE_COLUMNS`):

* required: ``gpu`` (catalog name or alias, see ``pipeweave gpus``; a spec-file GPU is given
  with ``--gpu my.toml`` instead), ``family`` (gemm, fused_moe, moe_w13, attention_context,
  attention_generation), ``dtype`` (bfloat16, float16, fp8, fp8_block), the family's shape
  columns (gemm: m, n, k; MoE: num_tokens, hidden_size, inter_size, topk, num_experts; ...)
  and ``latency_us`` (microseconds, finite, > 0 and <= 1e9: a larger value is a unit slip);
* optional: ``source`` (default ``user``), ``timing`` (how it was timed: ``cuda_graph``,
  ``cuda_event``, ``kineto``, ``triton_do_bench``, ``ncu`` ...; kept, never pooled silently),
  the tile plan (block_m, block_n, block_k, group_m, num_warps, num_stages), the MoE options
  (moe_tp_size, moe_ep_size, distribution) and attention options (backend, window_size ...).

Rows are validated like ``pipeweave predict`` input (:func:`pipeweave.frontend.row_problems`)
plus the latency; a bad row stops the read with its row number and reason.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._errors import DataError, shown

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "PROFILE_SUFFIXES",
    "REQUIRED_COLUMNS",
    "USER_SOURCE",
    "check_profiles",
    "file_record",
    "read_profiles",
    "write_profiles",
]

PROFILE_SUFFIXES: tuple[str, ...] = (".csv", ".parquet")
REQUIRED_COLUMNS: tuple[str, ...] = ("gpu", "family", "dtype", "latency_us")
#: ``source`` of rows whose file does not name one
USER_SOURCE = "user"


def _read_table(path: Path) -> pd.DataFrame:
    if path.suffix not in PROFILE_SUFFIXES:
        raise DataError(
            f"profile file {str(path)!r} must end in .csv or .parquet",
            hint="convert it to canonical rows first (pipeweave.profiles.import_profiles)",
        )
    from ._files import input_file

    input_file(path, "profile file", hint="pass a canonical profile file (CSV or parquet) with a header row")
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise DataError(
            f"cannot read profile file {str(path)!r}: {exc}".splitlines()[0],
            hint="write it with `pipeweave profiles import` (CSV or parquet)",
        ) from None


def check_profiles(
    df: pd.DataFrame,
    *,
    what: str = "profile rows",
    gpus: Mapping[str, GPUSpec] | None = None,
    need_latency: bool = True,
) -> pd.DataFrame:
    """Validated canonical rows (gpu names resolved, ``source`` defaulted, family defaults filled).

    Raises :class:`DataError` naming the first bad rows (1-based row numbers) and their reason.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(
            f"check_profiles checks a DataFrame of rows, got {type(df).__name__}",
            hint="read a profile file with read_profiles(path), which checks it too",
        )
    df, reasons = profile_problems(df, what=what, gpus=gpus, need_latency=need_latency)
    bad = reasons[reasons != ""]
    if len(bad):
        # rows with the same reason are listed together (one unknown GPU is one problem, not one per row)
        groups: dict[str, list[int]] = {}
        for i, r in bad.items():
            groups.setdefault(str(r), []).append(int(i) + 1)  # type: ignore[call-overload]
        parts = []
        for r, rows in list(groups.items())[:5]:
            listed = ", ".join(str(n) for n in rows[:5]) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
            parts.append(f"row{'s' if len(rows) > 1 else ''} {listed}: {r}")
        more = f" (and {len(groups) - 5} more problems)" if len(groups) > 5 else ""
        hint = "fix or drop those rows (row numbers count data rows from 1)"
        if any(r.startswith("unknown GPU") for r in groups):
            hint += "; a GPU outside the catalog is described by a spec file (see datasets/example_gpu_spec.toml)"
        raise DataError(
            f"{what}: {len(bad)} bad row{'s' if len(bad) != 1 else ''}: {'; '.join(parts)}{more}", hint=hint
        )
    return with_generation(df, gpus)


def with_generation(df: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None = None) -> pd.DataFrame:
    """``df`` with its ``generation`` column filled from each row's GPU (``gpus``, then the catalog)."""
    known = dict(gpus or {})
    if "generation" not in df.columns or df["generation"].isna().any():
        from ..hardware import get_gpu

        gen = {g: (known[g] if g in known else get_gpu(g)).generation for g in pd.unique(df["gpu"])}
        df = df.assign(generation=df["gpu"].map(gen))
    return df


def profile_problems(
    df: pd.DataFrame,
    *,
    what: str = "profile rows",
    gpus: Mapping[str, GPUSpec] | None = None,
    need_latency: bool = True,
) -> tuple[pd.DataFrame, pd.Series]:
    """``(rows, reasons)``: the canonical rows (gpu names resolved, ``source`` defaulted, family defaults
    filled; index 0..n-1) and why each is invalid (``""``: valid). Raises :class:`DataError` only for what no
    row can survive (missing columns, no rows)."""
    from ..frontend import row_problems
    from ..hardware import resolve_gpu_name
    from ..sources import FAMILY_DEFAULTS

    need = [c for c in REQUIRED_COLUMNS if need_latency or c != "latency_us"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        other_latency = [str(c) for c in df.columns if str(c).lower().startswith("latency") and c != "latency_us"]
        found = (
            f" (it has {other_latency}: the latency column is latency_us, in microseconds)"
            if "latency_us" in missing and other_latency
            else ""
        )
        raise DataError(
            (f"{what} has no column {missing}" if len(missing) == 1 else f"{what} has no columns {missing}") + found,
            hint=f"a canonical profile row has the columns {list(need)} and the family's shape columns "
            "(pipeweave.frontend.launch_columns(family); every column: pipeweave.sources.PROFILE_COLUMNS)",
        )
    if df.empty:
        raise DataError(f"{what}: no rows", hint="give at least one measured launch")
    df = df.reset_index(drop=True).copy()
    if "source" not in df.columns:
        df["source"] = USER_SOURCE
    df["source"] = df["source"].fillna(USER_SOURCE).astype(str)
    known = dict(gpus or {})
    names = {}
    for g in pd.unique(df["gpu"].astype(str)):
        try:
            names[g] = g if g in known else resolve_gpu_name(g)
        except Exception:  # noqa: BLE001 - reported row by row below
            names[g] = g
    df["gpu"] = df["gpu"].astype(str).map(names)
    for fam, defaults in FAMILY_DEFAULTS.items():
        m = (df["family"].astype(str) == fam).to_numpy()
        for col, val in defaults.items():
            if m.any():
                if col not in df.columns:
                    df[col] = np.nan if not isinstance(val, str) else None
                df.loc[m & df[col].isna().to_numpy(), col] = val
    # a user file names its own source (a label kept with the rows), so only the launch is checked
    reasons = row_problems(df.drop(columns=["source"]), known or None)
    if "generation" in df.columns:  # a generation cell must agree with the row's GPU (or be blank)
        from ..hardware import get_gpu

        given = df["generation"].astype("string").fillna("").str.strip().str.lower().to_numpy(dtype=object)
        true: dict[str, str] = {}
        for g in pd.unique(df["gpu"]):
            try:
                true[g] = (known[g] if g in known else get_gpu(g)).generation
            except Exception:  # noqa: BLE001 - an unknown GPU is already reported by row_problems
                true[g] = ""
        want = df["gpu"].map(true).fillna("").to_numpy(dtype=object)
        wrong = (given != "") & (want != "") & (given != want)
        for i in np.flatnonzero(wrong & (reasons == "").to_numpy()).tolist():
            reasons.iat[i] = (
                f"generation={df['generation'].iat[i]!r} but {df['gpu'].iat[i]} is a {want[i]} GPU: the row was "
                "measured on another GPU, or its generation cell is wrong (blank it to take the GPU's)"
            )
    if need_latency:
        from ..frontend import MAX_LATENCY_US  # the one plausibility bound (a larger value is a unit slip)

        lat_cells = df["latency_us"]
        lat = pd.to_numeric(lat_cells, errors="coerce").to_numpy(dtype=float)
        if pd.api.types.is_bool_dtype(lat_cells.dtype) or lat_cells.dtype == object:  # true / false: not a latency
            lat = np.where([isinstance(x, (bool, np.bool_)) for x in lat_cells.to_numpy()], np.nan, lat)
        bad_lat = ~(np.isfinite(lat) & (lat > 0) & (lat <= MAX_LATENCY_US))
        reasons = reasons.where(
            (reasons != "") | ~bad_lat,
            f"latency_us must be a finite number > 0 and <= {MAX_LATENCY_US:g} (microseconds; a larger value "
            "is a unit slip: seconds or nanoseconds?)",
        )
    return df, reasons


def read_profiles(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    gpus: Mapping[str, GPUSpec] | None = None,
    need_latency: bool = True,
) -> pd.DataFrame:
    """Read and validate canonical profile files (CSV/parquet) into one DataFrame.

    ``gpus`` maps names to GPUSpec for rows on GPUs outside the catalog. The input files are
    never modified.
    """
    if isinstance(paths, pd.DataFrame):
        raise DataError(
            "read_profiles reads profile files (paths), got a DataFrame",
            hint="check a DataFrame with check_profiles(df)",
        )
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths) if isinstance(paths, Iterable) else None
    if items is None or not all(isinstance(p, (str, os.PathLike)) for p in items):
        raise DataError(
            f"read_profiles takes a path or a list of paths, got {shown(paths)}",
            hint="e.g. read_profiles('mine.csv') or read_profiles(['a.csv', 'b.parquet'])",
        )
    if not items:
        raise DataError("no profile files given", hint="pass one or more .csv or .parquet profile paths")
    frames = []
    for p in items:
        df = check_profiles(_read_table(Path(p)), what=str(p), gpus=gpus, need_latency=need_latency)
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def write_profiles(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write canonical rows to ``path`` (.csv or .parquet) atomically; empty optional columns left out."""
    from .._io import atomic_write
    from ..sources import PROFILE_COLUMNS

    if not isinstance(df, pd.DataFrame):
        raise DataError(
            f"write_profiles writes a DataFrame of profile rows, got {type(df).__name__}",
            hint="e.g. write_profiles(pd.DataFrame(list_of_row_dicts), 'mine.csv')",
        )
    if not isinstance(path, (str, os.PathLike)):
        raise DataError(
            f"the output path must be a string or a path, got {type(path).__name__}", hint="e.g. 'mine.csv'"
        )
    path = Path(path)
    if path.suffix not in PROFILE_SUFFIXES:
        raise DataError(f"a profile file must end in .csv or .parquet, got {str(path)!r}", hint="e.g. my_profiles.csv")
    cols = [c for c in PROFILE_COLUMNS if c in df.columns and df[c].notna().any()]
    cols += [c for c in df.columns if c not in cols and c not in PROFILE_COLUMNS and df[c].notna().any()]
    from .._frame import whole_numbers_as_int

    out = df[cols]
    if path.suffix == ".parquet":  # typed columns: floats stay floats
        return atomic_write(path, lambda p: out.to_parquet(p, index=False))
    text = whole_numbers_as_int(out)  # text: m=4096, not 4096.0 (read back as numbers either way)
    return atomic_write(path, lambda p: text.to_csv(p, index=False, lineterminator="\n"))


def file_record(path: str | os.PathLike[str], rows: int) -> dict[str, object]:
    """What a model stamp records about a profile file: name, row count, sha256 of its bytes."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        from .._io import read_error_text

        raise DataError(
            f"cannot read profile file {str(path)!r}: {read_error_text(exc)}",
            hint="pass the path of the profile file the rows were read from",
        ) from None
    return {"file": Path(path).name, "path": str(path), "rows": int(rows), "sha256": h.hexdigest()}
