"""Fast column helpers for the hot paths (featurize, predict).

``Series.astype(str)`` on pandas' Arrow-backed strings converts element by element; these
helpers factorize once and work on the few distinct values instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "row_list",
    "with_default_source",
    "training_latency",
    "is_missing",
    "num_values",
    "str_codes",
    "str_values",
    "str_map",
    "str_startswith",
    "distinct_rows",
    "whole_numbers_as_int",
]


def is_missing(value: object) -> bool:
    """A blank cell: None, NA, NaN or text that is empty or whitespace."""
    return (
        value is None
        or value is pd.NA
        or (isinstance(value, float) and value != value)  # NaN
        or (isinstance(value, str) and value.strip() == "")
    )


def num_values(df: pd.DataFrame, name: str) -> np.ndarray:
    """Column ``name`` of ``df`` as a float64 array; values that are not numbers become NaN."""
    return pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=float)


def str_codes(values: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (per row) and the distinct values as Python strings (missing -> 'nan')."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    names = np.array([str(u) for u in uniques], dtype=object)
    return codes, names


def str_values(values: pd.Series | np.ndarray) -> np.ndarray:
    """The column as an object array of Python strings, like ``astype(str).to_numpy()``."""
    codes, names = str_codes(values)
    return names[codes] if len(codes) else np.array([], dtype=object)


def str_map(values: pd.Series | np.ndarray, mapping: Mapping[str, object], default: object = np.nan) -> np.ndarray:
    """``mapping[str(value)]`` per row (``default`` for values the mapping lacks)."""
    codes, names = str_codes(values)
    mapped = np.array([mapping.get(n, default) for n in names], dtype=object)
    return mapped[codes] if len(codes) else np.array([], dtype=object)


def str_startswith(values: pd.Series | np.ndarray, prefix: str) -> np.ndarray:
    """Boolean array: ``str(value).startswith(prefix)`` per row."""
    codes, names = str_codes(values)
    hit = np.array([n.startswith(prefix) for n in names], dtype=bool)
    return hit[codes] if len(codes) else np.zeros(0, dtype=bool)


def distinct_rows(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Group rows by all columns of ``frame`` (NaN equals NaN).

    Returns ``codes`` (per row, 0..g-1 in order of first appearance) and ``first`` (the position
    of each group's first row), so ``frame.iloc[first]`` are the distinct rows and
    ``result[codes]`` broadcasts a per-group result back. Hash-based: one factorize per column.
    """
    codes = np.zeros(len(frame), dtype=np.int64)
    radix = 1  # codes < radix: the number of value combinations seen so far (mixed-radix key)
    for col in frame.columns:
        c, uniques = pd.factorize(frame[col], use_na_sentinel=False)
        k = max(len(uniques), 1)
        if k == 1:
            continue
        if radix > (2**62) // k:  # the combined key would overflow int64: compact it to 0..g-1 first
            codes, kept = pd.factorize(codes)
            radix = max(len(kept), 1)
        codes = codes * k + c
        radix *= k
    codes, _ = pd.factorize(codes)  # 0..g-1 in order of first appearance
    codes = codes.astype(np.int64, copy=False)
    first = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    return codes, first


def whole_numbers_as_int(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each float column whose values are all whole numbers (blanks allowed) as nullable ``Int64``,
    so a written CSV says ``m=4096``, not ``4096.0``; other columns unchanged (a new frame)."""
    out = frame.copy(deep=False)
    for col in frame.columns:
        v = frame[col]
        if not pd.api.types.is_float_dtype(v):
            continue
        a = v.to_numpy(dtype=float, na_value=np.nan)
        ok = np.isfinite(a)
        if (
            ok.any()
            and (~ok == np.isnan(a)).all()
            and (np.abs(a[ok]) < 2**53).all()
            and (a[ok] == np.round(a[ok])).all()
        ):
            out[col] = v.astype("Int64")
    return out


def training_latency(df: pd.DataFrame, who: str) -> np.ndarray:
    """``df``'s ``latency_us`` (microseconds) for ``who``'s fit, else a :class:`DataError`: the column is absent, or
    a value is not a finite number > 0 (named by row label)."""
    from ._errors import DataError

    if "latency_us" not in df.columns:
        raise DataError(
            f"{who} trains on measured rows: the rows lack the column 'latency_us'",
            hint="fit on measured profiles (latency_us in microseconds), e.g. pipeweave.load_profiles(...)",
        )
    lat = pd.to_numeric(df["latency_us"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(lat) | (lat <= 0)
    if bad.any():
        raise DataError(
            f"{int(bad.sum())} of {len(lat)} training rows of {who} have a latency_us that is not a finite number > 0 "
            f"(first row labels {df.index[bad][:5].tolist()})",
            hint="drop them or fix the measurement; latency_us is in microseconds, > 0",
        )
    return lat


def with_default_source(rows: pd.DataFrame, also: Sequence[str] = ()) -> pd.DataFrame:
    """``rows`` with each blank ``source`` (or one of ``also``) replaced by its family's default source
    (:func:`pipeweave.vocab.default_source`): the source ``pipeweave.predict`` gives a launch that names none.
    Returns ``rows`` itself when no cell is replaced."""
    from .vocab import default_source

    src = rows["source"] if "source" in rows.columns else pd.Series(np.nan, index=rows.index, dtype=object)
    text = src.astype("string").str.strip().fillna("")
    blank = ((text == "") | text.isin(list(also))).to_numpy(dtype=bool)
    if not blank.any():
        return rows
    return rows.assign(source=src.astype(object).where(~blank, rows["family"].astype(str).map(default_source)))


def row_list(rows: Iterable[int], limit: int = 12) -> str:
    """'rows 1-3, 7' for 0-based positions (printed 1-based), at most ``limit`` ranges."""
    nums = sorted(int(r) + 1 for r in rows)
    ranges: list[list[int]] = []
    for n in nums:
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:limit])
    more = f" and {len(ranges) - limit} more ranges" if len(ranges) > limit else ""
    return ("row " if len(nums) == 1 else "rows ") + text + more
