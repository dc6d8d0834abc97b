"""Generic, manifest-driven reader: source files -> canonical profile rows, with counted drops.

Everything source-specific (paths, column names, units, filters, renames) comes from the
manifest (:mod:`._manifest`); this module only interprets it. All work is vectorised per file;
GPU names are resolved once per distinct name.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._errors import DataError, UnknownGPUError
from ._manifest import DatasetSpec
from ._report import DropLog
from ._schema import BOOL_COLUMNS, FAMILY_KEY_COLUMNS, STRING_COLUMNS, TILE_COLUMNS, ZERO_OK_COLUMNS

__all__ = ["expand_files", "read_dataset", "resolve_gpus", "concat_frames"]

_REASON_EXACT = "exact duplicate row"
_REASON_AGG = "duplicate key aggregated (median latency)"
_REASON_MERGED = "same measurement in several files (kept once, membership flags set)"


def expand_files(spec: DatasetSpec, data_dir: Path) -> list[Path]:
    """The files of ``spec`` under ``data_dir`` (globs expanded, sorted, unique)."""
    found: dict[str, Path] = {}
    for pattern in spec.files:
        for p in sorted(data_dir.glob(pattern)):
            if p.is_file():
                found.setdefault(p.relative_to(data_dir).as_posix(), p)
    return [found[k] for k in sorted(found)]


def _file_columns(path: Path) -> list[str]:
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return [str(c) for c in pd.read_csv(path, nrows=0).columns]
    except Exception as exc:  # unreadable / corrupt file
        raise DataError(
            f"cannot read {str(path)!r}: {type(exc).__name__}: {exc}",
            hint="re-copy the file from its source (see the folder's PROVENANCE.md)",
        ) from exc


def _read_table(path: Path, columns: list[str], categorical: list[str]) -> pd.DataFrame:
    """Read ``columns``; string columns of parquet files and ``categorical`` CSV columns as Categorical."""
    try:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
            strings = [
                c
                for c in columns
                if pa.types.is_string(schema.field(c).type) or pa.types.is_large_string(schema.field(c).type)
            ]
            table = pq.read_table(path, columns=columns, read_dictionary=strings)
            return table.to_pandas()
        return pd.read_csv(path, usecols=columns, dtype={c: "category" for c in categorical if c in columns})
    except Exception as exc:
        raise DataError(
            f"cannot read {str(path)!r}: {type(exc).__name__}: {exc}",
            hint="re-copy the file from its source (see the folder's PROVENANCE.md)",
        ) from exc


def _read_file(spec: DatasetSpec, path: Path, rel: str, log: DropLog) -> pd.DataFrame | None:
    """One file -> canonical columns (+ ``_gpu_raw``, ``_file``); None if the file is skipped."""
    fields: dict[str, str] = {}
    if spec.path_regex:
        match = re.search(spec.path_regex, rel)
        if match is None:
            log.note(
                f"{spec.source}/{spec.name}: file {rel!r} matches the glob but not path_regex "
                f"{spec.path_regex!r}; skipped"
            )
            return None
        fields = {k: v for k, v in match.groupdict().items() if v is not None}
    found = _file_columns(path)
    required = spec.source_columns()
    missing = [c for c in required if c not in found]
    if missing:
        raise DataError(
            f"{str(path)!r} ({spec.source} {spec.name}) lacks column(s) {missing}; columns found: {found}",
            hint=f"expected columns {required} (mapping in datasets/sources/{spec.source}.toml); "
            "the file may be from another version of the source or renamed",
        )
    optional_present = [c for c in spec.optional_columns() if c in found]
    to_cat = [src for canon, src in spec.columns.items() if canon in STRING_COLUMNS] + [spec.gpu_column]
    to_cat = [c for c in to_cat if c in found]  # columns a transform derives are read after it runs
    raw = _read_table(path, list(dict.fromkeys([*required, *optional_present])), to_cat)
    if spec.transform:
        from ._transforms import TRANSFORMS

        raw = TRANSFORMS[spec.transform].apply(raw)
    fam = spec.family

    keep = np.ones(len(raw), dtype=bool)
    for col, allowed in spec.keep.items():
        ok = raw[col].isin(list(allowed)).to_numpy()
        bad = keep & ~ok
        if bad.any():
            for value, cnt in raw.loc[bad, col].value_counts(dropna=False).items():
                if cnt:
                    log.add(spec.source, spec.name, fam, f"{col}={value} not loaded", cnt)
        keep &= ok
    raw = raw.loc[keep].reset_index(drop=True)
    n = len(raw)

    def column(src: str, string: bool) -> Any:
        if src.startswith("@"):
            name = src[1:]
            if name not in fields:
                raise DataError(
                    f"{str(path)!r}: path_regex {spec.path_regex!r} has no group {name!r}",
                    hint=f"add a named group (?P<{name}>...) to path_regex of dataset {spec.name!r} in "
                    f"{spec.source}.toml, or map the column to a file column instead of @{name}",
                )
            if string:
                return _const(fields[name], n)
            return float(pd.to_numeric(pd.Series([fields[name]]), errors="coerce").iloc[0])
        col = raw[src]
        if string:
            return col.array if isinstance(col.dtype, pd.CategoricalDtype) else pd.Categorical(col.to_numpy(object))
        return pd.to_numeric(col, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)

    out: dict[str, Any] = {}
    for canon, src in spec.columns.items():
        out[canon] = column(src, canon in STRING_COLUMNS)
    for canon, (src, default) in spec.optional.items():
        if src in raw:
            out[canon] = column(src, canon in STRING_COLUMNS)
        else:
            out[canon] = _const(default, n) if canon in STRING_COLUMNS else default
    for canon, value in spec.constants.items():
        out[canon] = _const(value, n) if canon in STRING_COLUMNS else float(value)
    out["_gpu_raw"] = column(spec.gpu_column, True)
    out["latency_us"] = (
        pd.to_numeric(raw[spec.latency_column], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        * spec.latency_factor_us
    )
    if spec.membership is not None:
        fld, flag_cols = spec.membership
        value = fields.get(fld[1:])
        if value not in flag_cols:
            raise DataError(
                f"{str(path)!r}: membership field {fld!r} = {value!r} is not one of {sorted(flag_cols)}",
                hint=f"name the file so that {fld} is one of {sorted(flag_cols)}, or add {value!r} to "
                f"[dataset.membership] of dataset {spec.name!r} in {spec.source}.toml",
            )
        for v, col in flag_cols.items():
            out[col] = v == value
    out["_file"] = _const(rel, n)
    for canon, mapping in spec.values.items():
        target = "_gpu_raw" if canon == "gpu" else canon
        out[target] = _recode(out[target], {k: mapping.get(str(k), k) for k in out[target].categories})
    return pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)


def _const(value: Any, n: int) -> pd.Categorical:
    """A Categorical of ``n`` copies of ``value`` (all missing when value is None)."""
    if value is None:
        return pd.Categorical.from_codes(np.full(n, -1, dtype=np.int8), categories=pd.Index([], dtype=object))
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), categories=pd.Index([value], dtype=object))


def _recode(cat: pd.Categorical, mapping: dict[Any, Any]) -> pd.Categorical:
    """Map the categories of ``cat`` through ``mapping`` (many-to-one allowed; None -> missing), via codes."""
    old = list(cat.categories)
    new_vals = [mapping.get(c) for c in old]
    cats = sorted({v for v in new_vals if v is not None}, key=str)
    pos = {v: i for i, v in enumerate(cats)}
    remap = np.array([pos[v] if v is not None else -1 for v in new_vals] + [-1], dtype=np.int32)
    codes = remap[np.asarray(cat.codes, dtype=np.int64)]
    return pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object))


def concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate frames column-wise without leaving Categorical: categories are unioned, absent
    string columns become missing, absent bool columns False, absent numeric columns NaN."""
    from pandas.api.types import union_categoricals

    if len(frames) == 1:
        return frames[0].reset_index(drop=True)
    cols = list(dict.fromkeys(c for f in frames for c in f.columns))
    out: dict[str, Any] = {}
    for c in cols:
        present = [f[c] for f in frames if c in f.columns]
        if any(isinstance(s.dtype, pd.CategoricalDtype) for s in present):
            parts = [
                f[c].array
                if c in f.columns and isinstance(f[c].dtype, pd.CategoricalDtype)
                else pd.Categorical(f[c].to_numpy(object))
                if c in f.columns
                else _const(None, len(f))
                for f in frames
            ]
            parts = [p.set_categories(p.categories.astype(object)) for p in parts]
            out[c] = union_categoricals(parts, ignore_order=True)
        elif all(s.dtype == bool for s in present):
            out[c] = np.concatenate(
                [f[c].to_numpy() if c in f.columns else np.zeros(len(f), dtype=bool) for f in frames]
            )
        else:
            out[c] = np.concatenate(
                [f[c].to_numpy(dtype="float64") if c in f.columns else np.full(len(f), np.nan) for f in frames]
            )
    return pd.DataFrame(out, index=pd.RangeIndex(sum(len(f) for f in frames)), copy=False)


def resolve_gpus(df: pd.DataFrame, spec: DatasetSpec, log: DropLog) -> pd.DataFrame:
    """Map ``_gpu_raw`` to canonical ``gpu`` + ``generation``; rows of unknown GPUs dropped and reported."""
    from ..hardware import generation_of, resolve_gpu_name

    raw = df["_gpu_raw"].array
    missing = np.asarray(raw.codes) < 0
    if missing.any():
        log.add(spec.source, spec.name, spec.family, "GPU name missing", int(missing.sum()))
    canon: dict[Any, Any] = {}
    gen: dict[str, str] = {}
    for code, name in enumerate(raw.categories):
        sel = np.asarray(raw.codes) == code
        if not sel.any():
            continue
        try:
            c = resolve_gpu_name(str(name))
        except UnknownGPUError:
            canon[name] = None
            files = sorted(str(f) for f in pd.unique(df.loc[sel, "_file"]))
            cnt = int(sel.sum())
            log.add(spec.source, spec.name, spec.family, f"unknown GPU {name!r}", cnt)
            msg = (
                f"{spec.source}/{spec.name}: GPU {name!r} is not in the GPU catalog; its {cnt:,} rows were "
                f"skipped (files: {', '.join(files[:5])}{' ...' if len(files) > 5 else ''}). Add the GPU or "
                "an alias to datasets/gpus.toml to load them."
            )
            log.note(msg)
            warnings.warn(msg, stacklevel=4)
            continue
        canon[name] = c
        gen[c] = generation_of(c)
    gpu = _recode(raw, canon)
    generation = _recode(gpu, gen)
    ok = np.asarray(gpu.codes) >= 0
    df = df.drop(columns=["_gpu_raw"])
    df["gpu"] = gpu
    df["generation"] = generation
    return df.loc[ok] if not ok.all() else df


def _key_columns(spec: DatasetSpec, df: pd.DataFrame) -> list[str]:
    key = ["gpu", "dtype", *FAMILY_KEY_COLUMNS[spec.family]]
    key += [c for c in TILE_COLUMNS if c in df.columns]
    missing = [c for c in key if c not in df.columns]
    if missing:
        raise DataError(
            f"source manifest {spec.source}.toml, dataset {spec.name!r} (family {spec.family}) maps no "
            f"column to {missing}; every key column of the family must be mapped or given a constant",
            hint=f"add {missing} to [dataset.columns] (a file column) or [dataset.constants] (one value) of that "
            "dataset",
        )
    return key


def _drop(df: pd.DataFrame, mask: np.ndarray, spec: DatasetSpec, log: DropLog, reason: str) -> pd.DataFrame:
    if mask.any():
        log.add(spec.source, spec.name, spec.family, reason, int(mask.sum()))
        return df.loc[~mask]
    return df


def _aggregate(df: pd.DataFrame, key: list[str], spec: DatasetSpec, log: DropLog, reason: str) -> pd.DataFrame:
    """Collapse rows sharing ``key``: median latency, summed ``n_raw_rows``, OR-ed flags; first row kept."""
    dup = df.duplicated(key, keep=False).to_numpy()
    if not dup.any():
        return df
    d = df.loc[dup]
    gid = d.groupby(key, sort=False, dropna=False, observed=True).ngroup().to_numpy()
    first = ~pd.Series(gid).duplicated().to_numpy()
    first_idx = d.index[first]
    order = gid[first]  # group ids of the first rows (0..G-1 in order of appearance)
    lat = d["latency_us"].groupby(gid).median()
    nraw = d["n_raw_rows"].groupby(gid).sum()
    df = df.copy()
    # pandas-stubs: .loc takes label arrays (an Index, integer group ids) too
    df.loc[first_idx, "latency_us"] = lat.loc[order].to_numpy()  # type: ignore[index]
    df.loc[first_idx, "n_raw_rows"] = nraw.loc[order].to_numpy()  # type: ignore[index]
    for col in BOOL_COLUMNS:
        if col in df.columns:
            df.loc[first_idx, col] = d[col].groupby(gid).any().loc[order].to_numpy()  # type: ignore[index]
    log.add(spec.source, spec.name, spec.family, reason, int(dup.sum() - first.sum()))
    drop = dup.copy()
    drop[np.flatnonzero(dup)[first]] = False
    return df.loc[~drop]


def _clean(df: pd.DataFrame, spec: DatasetSpec, log: DropLog) -> pd.DataFrame:
    key = _key_columns(spec, df)
    for col in key:
        if col in STRING_COLUMNS:
            bad = df[col].isna().to_numpy()
            df = _drop(df, bad, spec, log, f"missing {col}")
        else:
            vals = pd.to_numeric(df[col], errors="coerce")
            df[col] = vals.astype("float64")
            bad = ~np.isfinite(vals.to_numpy(dtype="float64", na_value=np.nan))
            df = _drop(df, bad, spec, log, f"missing or non-numeric {col}")
            low = (df[col] < 0) if col in ZERO_OK_COLUMNS else (df[col] <= 0)
            df = _drop(df, low.to_numpy(), spec, log, f"{col} {'< 0' if col in ZERO_OK_COLUMNS else '<= 0'}")
    lat = df["latency_us"].to_numpy()
    df = _drop(df, np.isnan(lat), spec, log, "latency missing or non-numeric")
    lat = df["latency_us"].to_numpy()
    df = _drop(df, np.isinf(lat), spec, log, "latency not finite")
    lat = df["latency_us"].to_numpy()
    df = _drop(df, lat == 0, spec, log, "latency is zero")
    lat = df["latency_us"].to_numpy()
    df = _drop(df, lat < 0, spec, log, "latency is negative")
    from ..frontend import MAX_LATENCY_US  # the one plausibility bound (a larger value is a unit slip)

    lat = df["latency_us"].to_numpy()
    df = _drop(df, lat > MAX_LATENCY_US, spec, log, f"latency above {MAX_LATENCY_US:g} us (unit slip?)")

    df = df.reset_index(drop=True)
    df["n_raw_rows"] = 1.0
    within = key + (["_file"] if spec.membership is not None else [])
    df = _drop(df, df.duplicated([*within, "latency_us"]).to_numpy(), spec, log, _REASON_EXACT)
    df = _aggregate(df, within, spec, log, _REASON_AGG)
    if spec.membership is not None:
        df = _aggregate(df, key, spec, log, _REASON_MERGED)
    return df


def read_dataset(spec: DatasetSpec, data_dir: Path, log: DropLog) -> pd.DataFrame | None:
    """All files of one dataset -> clean canonical rows (not yet :func:`conform`-ed); None if no files."""
    files = expand_files(spec, data_dir)
    if not files:
        log.note(f"{spec.source}/{spec.name}: no file under {str(data_dir)!r} matches {list(spec.files)}")
        return None
    frames = [f for p in files if (f := _read_file(spec, p, p.relative_to(data_dir).as_posix(), log)) is not None]
    frames = [f for f in frames if len(f)]
    if not frames:
        return None
    df = concat_frames(frames)
    df = resolve_gpus(df, spec, log)
    if df.empty:
        return None
    for canon, by_gpu in spec.per_gpu.items():  # per-GPU constants, e.g. a measurement-semantics flag
        default = by_gpu.get("default")
        df[canon] = _recode(df["gpu"].array, {g: by_gpu.get(str(g), default) for g in df["gpu"].array.categories})
    df = _clean(df, spec, log)
    n = len(df)
    df = df.drop(columns=["_file"]).reset_index(drop=True)
    df["source"] = _const(spec.source, n)
    df["dataset"] = _const(spec.name, n)
    df["family"] = _const(spec.family, n)
    df["timing"] = _const(spec.timing or None, n)
    return df
