"""``load_profiles``: every real measurement in the data directory as one canonical table."""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, overload

import pandas as pd

from .._errors import DataError, UnknownFamilyError, shown
from .._paths import resolve_data_dir
from ..vocab import canonical_dtype, closest_family
from ._cache import cache_path, files_fingerprint, read_cache, write_cache
from ._manifest import SourceManifest, load_manifests
from ._read import concat_frames, read_dataset
from ._report import DropLog, LoadReport, kept_counts
from ._schema import DTYPES, FAMILIES, conform

__all__ = ["load_profiles", "load_profiles_report", "data_fingerprint", "profile_sources", "source_families"]


def profile_sources() -> dict[str, SourceManifest]:
    """Manifests of the sources that hold latencies (kind = "profiles"), keyed by name."""
    return {n: m for n, m in load_manifests().items() if m.kind == "profiles"}


def source_families() -> dict[str, tuple[str, ...]]:
    """The kernel families each shared source measured (its manifest's datasets), by source name."""
    return {n: tuple(sorted({d.family for d in m.datasets})) for n, m in profile_sources().items()}


def _as_list(value: str | Iterable[str] | None, what: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Iterable):
        raise DataError(
            f"{what} must be a name or a list of names, got {type(value).__name__} ({shown(value)})",
            hint=f"pass {what}= one name or a list of names (strings), or None for all",
        )
    out = list(value)
    if not all(isinstance(v, str) for v in out):
        raise DataError(
            f"{what} must be strings, got {out!r}",
            hint=f"pass {what}= one name or a list of names (strings), or None for all",
        )
    return out


def _check_filters(
    sources: list[str] | None,
    families: list[str] | None,
    dtypes: list[str] | None,
    gpus: list[str] | None,
    known_sources: list[str],
) -> list[str] | None:
    if sources is not None:
        bad = [s for s in sources if s not in known_sources]
        if bad:
            raise DataError(
                f"unknown source(s) {bad}; known sources: {known_sources}",
                hint="use names from the known sources (one manifest each in datasets/sources/), or sources=None "
                "for all",
            )
    if families is not None:
        bad = [f for f in families if f not in FAMILIES]
        if bad:
            guesses = {b: closest_family(b) for b in bad}
            close = "".join(f"; for {b!r} did you mean {g!r}?" for b, g in guesses.items() if g)
            raise UnknownFamilyError(
                f"unknown kernel family {bad}; valid families: {list(FAMILIES)}",
                hint=f"use names from the valid families, or families=None for all{close}",
            )
    if dtypes is not None:
        bad = [d for d in dtypes if d not in DTYPES]
        if bad:
            raise DataError(
                f"unknown dtype(s) {bad}; valid dtypes: {list(DTYPES)}",
                hint="use names from the valid dtypes (aliases such as 'bf16' are accepted), or dtypes=None for all",
            )
    if gpus is None:
        return None
    from ..hardware import resolve_gpu_name

    return [resolve_gpu_name(g) for g in gpus]


def _build(data_dir: Path, manifests: dict[str, SourceManifest]) -> tuple[pd.DataFrame, DropLog]:
    log = DropLog()
    frames = []
    for name in sorted(manifests):
        for spec in manifests[name].datasets:
            df = read_dataset(spec, data_dir, log)
            if df is not None and len(df):
                frames.append(df)
    if not frames:
        globs = [g for m in manifests.values() for s in m.datasets for g in s.files]
        raise DataError(
            f"no measurements found under {str(data_dir)!r}: no file matches any of {globs}",
            hint="give the data directory (the `data` argument) or set $PIPEWEAVE_DATA to the folder holding aiconfigurator/, pipeweave/ ... "
            "(see README.md, section 'Data')",
        )
    return conform(concat_frames(frames)), log


def load_profiles_report(
    data: str | os.PathLike[str] | None = None,
    *,
    sources: str | Iterable[str] | None = None,
    families: str | Iterable[str] | None = None,
    dtypes: str | Iterable[str] | None = None,
    gpus: str | Iterable[str] | None = None,
    cache: bool = True,
) -> tuple[pd.DataFrame, LoadReport]:
    """:func:`load_profiles` and its :class:`LoadReport` (rows kept per source/dataset, drops by reason)."""
    return load_profiles(data, sources=sources, families=families, dtypes=dtypes, gpus=gpus, report=True, cache=cache)


@overload
def load_profiles(
    data: str | os.PathLike[str] | None = None,
    *,
    sources: str | Iterable[str] | None = None,
    families: str | Iterable[str] | None = None,
    dtypes: str | Iterable[str] | None = None,
    gpus: str | Iterable[str] | None = None,
    report: Literal[False] = False,
    cache: bool = True,
) -> pd.DataFrame: ...


@overload
def load_profiles(
    data: str | os.PathLike[str] | None = None,
    *,
    sources: str | Iterable[str] | None = None,
    families: str | Iterable[str] | None = None,
    dtypes: str | Iterable[str] | None = None,
    gpus: str | Iterable[str] | None = None,
    report: Literal[True],
    cache: bool = True,
) -> tuple[pd.DataFrame, LoadReport]: ...


def load_profiles(
    data: str | os.PathLike[str] | None = None,
    *,
    sources: str | Iterable[str] | None = None,
    families: str | Iterable[str] | None = None,
    dtypes: str | Iterable[str] | None = None,
    gpus: str | Iterable[str] | None = None,
    report: bool = False,
    cache: bool = True,
) -> pd.DataFrame | tuple[pd.DataFrame, LoadReport]:
    """Load the real measurements in the data directory as one canonical profile table.

    Returns the DataFrame; :func:`load_profiles_report` returns it with its :class:`LoadReport`
    (``report=True`` here does the same and is kept for old callers).

    ``data``: the data directory (default: $PIPEWEAVE_DATA, else ../shared/datasets).
    ``sources`` / ``families`` / ``dtypes`` / ``gpus`` keep only those rows (GPU aliases accepted).
    One row = one measured launch; ``latency_us`` in microseconds (see ``PROFILE_COLUMNS``).
    Rows with missing/zero/negative latency or impossible shapes are dropped, exact duplicates
    removed and repeated keys median-aggregated; all of it is counted in the :class:`LoadReport`
    returned with the table when ``report=True``. ``cache``: read/write the parsed table under
    $PIPEWEAVE_CACHE (default ~/.cache/pipeweave), keyed by the source files' fingerprint.
    Raises :class:`DataError` for a missing data directory or a malformed source file.
    """
    t0 = time.perf_counter()
    data_dir = resolve_data_dir(data)
    manifests = profile_sources()
    src_list, fam_list = _as_list(sources, "sources"), _as_list(families, "families")
    dt_list, gpu_list = _as_list(dtypes, "dtypes"), _as_list(gpus, "gpus")
    if dt_list is not None:
        dt_list = [canonical_dtype(d) for d in dt_list]  # "bf16" is bfloat16
    gpu_list = _check_filters(src_list, fam_list, dt_list, gpu_list, sorted(manifests))

    status = "off"
    where: str | None = None
    df: pd.DataFrame | None = None
    drops: pd.DataFrame | None = None
    messages: list[str] = []
    fingerprint = ""
    if cache:
        fingerprint = files_fingerprint(data_dir, manifests)
        path = cache_path(fingerprint)
        where = str(path)
        hit = read_cache(path, fingerprint)
        if hit is not None:
            df, meta = hit
            drops = pd.DataFrame(meta["drops"]["rows"], columns=meta["drops"]["columns"])
            messages = list(meta["messages"])
            status = "hit"
    if df is None:
        build = manifests if (cache or src_list is None) else {k: manifests[k] for k in src_list}
        df, log = _build(data_dir, build)
        drops, messages = log.frame(), list(log.messages)
        for m in messages:  # fresh build: the unknown-GPU warnings were already emitted
            if "not in the GPU catalog" not in m:
                warnings.warn(m, stacklevel=2)
        if cache:
            status = "miss"
            meta = {
                "fingerprint": fingerprint,
                "messages": messages,
                "drops": {"columns": list(drops.columns), "rows": drops.values.tolist()},
            }
            err = write_cache(path, df, meta)
            if err:
                messages.append(err)
                warnings.warn(err, stacklevel=2)
    elif messages:
        for m in messages:
            warnings.warn(m, stacklevel=2)

    mask = pd.Series(True, index=df.index)
    if src_list is not None:
        mask &= df["source"].isin(src_list)
    if fam_list is not None:
        mask &= df["family"].isin(fam_list)
    if dt_list is not None:
        mask &= df["dtype"].isin(dt_list)
    if gpu_list is not None:
        mask &= df["gpu"].isin(gpu_list)
    if not mask.any() and len(df):  # each filter matched something, their combination nothing: say which
        asked = {
            k: v
            for k, v in (("sources", src_list), ("families", fam_list), ("dtypes", dt_list), ("gpus", gpu_list))
            if v
        }
        measured = {}
        if fam_list is not None:
            sub = df[df["family"].isin(fam_list)]
            measured = {f: sorted(set(sub.loc[sub["family"] == f, "gpu"].astype(str))) for f in fam_list}
        warnings.warn(
            f"no measured rows match {asked}" + (f" (GPUs measured per family: {measured})" if measured else ""),
            UserWarning,
            stacklevel=2,
        )
    if not mask.all():
        df = df.loc[mask.to_numpy()].reset_index(drop=True)
        for col in df.select_dtypes("category").columns:
            df[col] = df[col].cat.remove_unused_categories()
    if not report:
        return df
    assert drops is not None  # set by the cache hit or the build above
    dmask = pd.Series(True, index=drops.index)
    if src_list is not None:
        dmask &= drops["source"].isin(src_list)
    if fam_list is not None:
        dmask &= drops["family"].isin(fam_list)
    rep = LoadReport(
        data_dir=str(data_dir),
        kept=kept_counts(df),
        drops=drops.loc[dmask].reset_index(drop=True),
        messages=messages,
        cache=status,
        cache_path=where,
        seconds=time.perf_counter() - t0,
        files_fingerprint=fingerprint,
    )
    return df, rep


def data_fingerprint(df: pd.DataFrame) -> str:
    """A stable 16-hex-digit hash of a table's content (columns, dtypes, values, row order; not the index).

    Categorical columns hash by value, so the same table rebuilt with other category codes
    hashes the same. Used in model stamps to tie a model to the exact training rows.
    """
    h = hashlib.sha256()
    h.update(json.dumps([[str(c), _dtype_tag(df[c])] for c in df.columns]).encode())
    h.update(str(len(df)).encode())
    if len(df.columns) and len(df):
        h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def _dtype_tag(s: pd.Series) -> str:
    if isinstance(s.dtype, pd.CategoricalDtype):
        return "category"
    return str(s.dtype)
