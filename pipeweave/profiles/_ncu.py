"""Nsight Compute CSV (``ncu --csv --page raw``) + a shapes table -> canonical rows.

``ncu --csv --page raw --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,
launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
-o ... `` (or ``ncu --import rep.ncu-rep --csv --page raw``) prints a header row of column and
metric names, a **unit row** (empty for the identification columns; ``nsecond``/``usecond``/
``msecond``, ``byte``/``Kbyte`` ...), then one row per profiled launch with quoted values that
may carry thousands separators ("1,234,567"). ``gpu__time_duration.sum`` is the kernel's
duration (ncu serializes launches and by default flushes caches before each: ``timing = "ncu"``).

ncu knows the kernel name, not its family or shape: the shapes table (CSV) gives them, with a
column ``id`` (the ncu ``ID`` of a launch; ``11+12`` for one launch made of several kernels, e.g. a
split-K GEMM and its reduce kernel: their times are summed into one row) and/or ``kernel`` (a regular
expression searched in the kernel name; the first matching row wins, ``id`` before ``kernel``), plus ``family``,
``dtype`` and the family's shape columns (optionally the tile plan). The GPU is the
``device__attribute_display_name`` column when profiled, else ``--gpu``.
Unmatched launches are listed as skipped.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import DataError
from ._files import input_file, note_relabelled

__all__ = ["TIME_UNITS_US", "import_ncu", "read_ncu_csv", "read_shapes"]

#: time unit in the unit row -> microseconds per unit
TIME_UNITS_US: dict[str, float] = {
    "nsecond": 1e-3,
    "ns": 1e-3,
    "usecond": 1.0,
    "us": 1.0,
    "msecond": 1e3,
    "ms": 1e3,
    "second": 1e6,
    "s": 1e6,
}
_BYTE_UNITS: dict[str, float] = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "KB": 1e3, "KiB": 1024.0, "B": 1.0}
_TIME = "gpu__time_duration.sum"
_EXPORT = "export with: ncu --import report.ncu-rep --csv --page raw > file.csv"
# the header row: "ID" (quoted or not) and the delimiter after it
_HEADER = re.compile(r'^\s*"?ID"?\s*([,;\t])')
_DELIM_NAMES = {";": "semicolon", "\t": "tab"}
# a number with a comma is read only when every comma is a thousands separator ("1,234,567.5"); "1234,5", "0,25",
# "1237,284" (a first group of four digits) or "1.237,284" (grouping by points) write a decimal comma
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?")


def _number(s: pd.Series) -> np.ndarray:
    """Numbers from ncu cells ("1,234.5", "n/a" -> NaN)."""
    return pd.to_numeric(s.astype(str).str.replace(",", "", regex=False).str.strip(), errors="coerce").to_numpy(float)


def read_ncu_csv(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """(one row per launch as strings, unit per column) of an ``ncu --csv --page raw`` file."""
    path = input_file(path, "ncu CSV", hint=_EXPORT)
    text = path.read_text(encoding="utf-8-sig", errors="replace")  # utf-8-sig: a byte-order mark is dropped
    lines = [ln.lstrip("\ufeff") for ln in text.splitlines()]
    start = next((i for i, ln in enumerate(lines) if _HEADER.match(ln)), None)
    if start is None:  # ncu may print ==PROF== lines first
        raise DataError(
            f'{str(path)!r} has no header row starting with "ID": not `ncu --csv --page raw` output',
            hint=_EXPORT,
        )
    m = _HEADER.match(lines[start])
    delim = m.group(1) if m else ","  # ncu writes commas; a spreadsheet re-save may use ';' or tabs
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:])), delimiter=delim))
    header = [h.strip() for h in rows[0]]
    if _TIME not in header:
        raise DataError(
            f"{str(path)!r} lacks the metric {_TIME!r}",
            hint=f"profile with ncu --metrics {_TIME},launch__grid_size,launch__block_size (or ncu --set full)",
        )
    ragged = [
        i
        for i, r in enumerate(rows[1:], start=start + 2)  # line numbers of the file
        if any(c.strip() for c in r) and len(r) != len(header) and not r[0].lstrip().startswith("==")
    ]
    if ragged:  # a cut or edited file: a row with missing cells would be dropped without a word
        raise DataError(
            f"{str(path)!r} line {ragged[0]} has another number of cells than the header ({len(header)})"
            + (f", as have {len(ragged) - 1} more line(s)" if len(ragged) > 1 else "")
            + ": a truncated or edited file",
            hint="export the CSV again from ncu: " + _EXPORT.split(": ", 1)[1],
        )
    body = [r for r in rows[1:] if len(r) == len(header)]
    # a re-saved file may write decimal commas (1234,88): never guess which comma is which
    odd = [
        (h, r[j])
        for j, h in enumerate(header)
        if h == _TIME or h.startswith("launch__")
        for r in body
        if "," in r[j] and not _THOUSANDS.fullmatch(r[j].strip())
    ]
    if odd:
        sep = f"is {_DELIM_NAMES.get(delim, 'comma')}-separated and "
        raise DataError(
            f"{str(path)!r} {sep}writes numbers with a decimal comma ({odd[0][1]!r} in {odd[0][0]}): which comma "
            "is a decimal point would be a guess",
            hint="export the CSV again from ncu, unedited: " + _EXPORT.split(": ", 1)[1],
        )
    if not body:
        raise DataError(f"{str(path)!r} has no launch rows", hint="profile at least one kernel")
    units_row = body[0] if not body[0][0].strip() else [""] * len(header)  # the unit row has no ID
    data = body[1:] if not body[0][0].strip() else body
    units = dict(zip(header, units_row))
    return pd.DataFrame(data, columns=header), units


def read_shapes(shapes: str | os.PathLike[str]) -> pd.DataFrame:
    """The shapes table (CSV; commas, or semicolons from a spreadsheet) as a DataFrame."""
    hint = (
        "a CSV with columns kernel (regex) or id, family, dtype and the shape columns, e.g. kernel,family,dtype,m,n,k"
    )
    p = input_file(shapes, "shapes file", hint=hint)
    try:
        table = pd.read_csv(p, encoding="utf-8-sig")
        if len(table.columns) == 1 and ";" in str(table.columns[0]):
            table = pd.read_csv(p, encoding="utf-8-sig", sep=";")
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read shapes file {str(p)!r}: {exc}".splitlines()[0], hint=hint) from None
    table.columns = [str(c).strip() for c in table.columns]
    if table.empty:
        raise DataError(f"shapes file {str(p)!r} has a header but no rows", hint=hint)
    return table


def _id_groups(cells: pd.Series, shapes: str | os.PathLike[str]) -> list[list[float]]:
    """The ncu IDs of each row of the shapes table's ``id`` column (``11`` -> [11.0], ``11+12`` -> [11.0, 12.0],
    blank -> []); a cell that is not whole numbers joined by ``+`` raises :class:`DataError` naming its row."""
    out: list[list[float]] = []
    for i, cell in enumerate(cells):
        text = "" if pd.isna(cell) else str(cell).strip()
        if not text:
            out.append([])
            continue
        try:
            members = [float(t) for t in text.split("+")]
        except ValueError:
            members = []
        if not members or not all(math.isfinite(m) and m >= 0 and m % 1 == 0 for m in members):
            raise DataError(
                f"shapes file {str(shapes)!r} row {i + 1}: id {text!r} is not an ncu ID",
                hint="give the ID column's number, or IDs joined by + for one launch of several kernels (e.g. 11+12)",
            )
        out.append(members)
    return out


def _kernel_patterns(cells: pd.Series, shapes: str | os.PathLike[str]) -> list[tuple[int, re.Pattern[str]]]:
    """(row position, compiled pattern) of each non-blank ``kernel`` cell of the shapes table; a pattern that is not
    a regular expression raises :class:`DataError` naming its row (1 = the first line after the header)."""
    out: list[tuple[int, re.Pattern[str]]] = []
    for i, pat in enumerate(cells):
        if not isinstance(pat, str) or not pat.strip():
            continue
        try:
            out.append((i, re.compile(pat)))
        except re.error as exc:
            raise DataError(
                f"shapes file {str(shapes)!r} row {i + 1}: kernel pattern {pat!r} is not a regular expression ({exc})",
                hint="fix the pattern (a Python regular expression searched in the kernel name, e.g. gemm|xmma; "
                "escape literal brackets as \\[ and \\])",
            ) from None
    return out


def import_ncu(
    path: str | os.PathLike[str], *, shapes: str | os.PathLike[str] | None, gpu: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows, skipped) from one ncu raw CSV joined with the ``shapes`` table (see module docstring)."""
    path = Path(path)
    if shapes is None:
        raise DataError(
            "ncu files need a shapes CSV (shapes=): ncu does not know each kernel's family and shape",
            hint="a CSV with columns kernel (regex) or id, family, dtype and the shape columns",
        )
    launches, units = read_ncu_csv(path)
    table = read_shapes(shapes)
    if "id" not in table.columns and "kernel" not in table.columns:
        raise DataError(
            f"shapes file {str(shapes)!r} needs a column 'kernel' (regex on the kernel name) or 'id'",
            hint="e.g. kernel,family,dtype,m,n,k",
        )
    unit = units.get(_TIME, "").strip() or "nsecond"
    if unit not in TIME_UNITS_US:
        raise DataError(
            f"{path.name}: unknown time unit {unit!r} for {_TIME}", hint=f"expected one of {list(TIME_UNITS_US)}"
        )
    lat = _number(launches[_TIME]) * TIME_UNITS_US[unit]
    name = launches["Kernel Name"].astype(str) if "Kernel Name" in launches else pd.Series("", index=launches.index)
    ids = _number(launches["ID"])
    match = np.full(len(launches), -1)
    groups: list[list[float]] = []  # ids of one launch made of several kernels (an id cell "11+12")
    if "id" in table.columns:
        pos: dict[float, int] = {}
        for i, members in reversed(list(enumerate(_id_groups(table["id"], shapes)))):
            pos.update(dict.fromkeys(members, i))
            if len(members) > 1:
                groups.append(members)
        match = np.array([pos.get(v, -1) for v in ids])
    if "kernel" in table.columns:
        # every pattern is compiled before any is used: a bad one is named with its row, whatever engine pandas
        # would hand it to (pyarrow strings use RE2, whose errors are not Python's); matched with Python's re
        patterns = _kernel_patterns(table["kernel"], shapes)
        codes, uniq = pd.factorize(name)
        by_id = match >= 0
        for i, rx in patterns:
            hit = np.array([rx.search(str(u)) is not None for u in uniq], dtype=bool)[codes]
            twice = hit & (match >= 0) & ~by_id  # two patterns claim one kernel: its family and shape are a guess
            if twice.any():
                k = int(np.flatnonzero(twice)[0])
                raise DataError(
                    f"shapes file {str(shapes)!r}: kernel {name.iloc[k]!r} matches the patterns of rows "
                    f"{int(match[k]) + 1} and {i + 1}",
                    hint="make the kernel patterns exclusive (e.g. anchor them, or match the kernel by id)",
                )
            match = np.where((match < 0) & hit, i, match)
    unused = sorted(set(range(len(table))) - set(match[match >= 0].tolist()))
    if unused:
        import warnings

        warnings.warn(
            f"{path.name}: row(s) {[u + 1 for u in unused]} of the shapes file {Path(shapes).name} matched no launch",
            UserWarning,
            stacklevel=2,
        )
    skipped = [(n, "no row of the shapes table matches this kernel") for n in name[match < 0]]
    bad_t = (match >= 0) & ~(np.isfinite(lat) & (lat > 0))
    skipped += [(n, f"no usable {_TIME}") for n in name[bad_t]]
    ok = (match >= 0) & ~bad_t
    for members in groups:  # the first kernel's row carries the launch: the others' times are added to it
        at = [np.flatnonzero(ids == v) for v in members]
        missing = [int(v) for v, a in zip(members, at, strict=True) if not len(a)]
        if missing:
            raise DataError(
                f"shapes file {Path(shapes).name}: id {'+'.join(str(int(v)) for v in members)} names ncu IDs "
                f"{missing} that {path.name} does not have",
                hint="use the ID column of this ncu file (each launch's kernels are consecutive IDs)",
            )
        first, rest = int(at[0][0]), [int(a[0]) for a in at[1:]]
        lat[first] = lat[first] + float(np.sum(lat[rest]))
        ok[rest] = False
    cols = [c for c in table.columns if c not in ("id", "kernel")]
    rows = table.iloc[match[ok]][cols].reset_index(drop=True)
    rows["latency_us"] = lat[ok]
    rows["timing"] = "ncu"
    rows["kernel_name"] = name[ok].to_numpy()
    rows["ncu_id"] = ids[ok]
    if gpu:
        if "device__attribute_display_name" in launches:
            note_relabelled(path.name, launches["device__attribute_display_name"].to_numpy()[ok], gpu)
        rows["gpu"] = gpu
    elif "gpu" not in rows.columns:
        if "device__attribute_display_name" not in launches:
            raise DataError(
                f"{path.name} does not name the GPU (no device__attribute_display_name)",
                hint="pass gpu= (a catalog name or a spec .toml path)",
            )
        rows["gpu"] = launches["device__attribute_display_name"].to_numpy()[ok]
    for metric, col, conv in (
        ("launch__grid_size", "grid_size", None),
        ("launch__block_size", "block_size", None),
        ("launch__registers_per_thread", "registers_per_thread", None),
        ("launch__shared_mem_per_block_static", "smem_static_bytes", _BYTE_UNITS),
        ("launch__shared_mem_per_block_dynamic", "smem_dynamic_bytes", _BYTE_UNITS),
    ):
        if metric in launches:
            scale = conv.get(units.get(metric, "byte").strip() or "byte", 1.0) if conv else 1.0
            rows[col] = _number(launches[metric])[ok] * scale
    skip = pd.DataFrame(skipped, columns=["kernel", "reason"])
    skip = skip.value_counts().rename("count").reset_index() if len(skip) else skip.assign(count=0)
    skip.insert(0, "file", path.name)
    return rows, skip
