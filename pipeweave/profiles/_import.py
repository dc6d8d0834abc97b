"""One entry point for every importer: files of one kind -> validated canonical rows + skip list."""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from .._errors import DataError, UnknownGPUError
from ._canonical import USER_SOURCE, check_profiles, profile_problems, read_profiles, with_generation

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = ["FIXED_COLUMNS", "IMPORT_KINDS", "IMPORT_OPTIONS", "check_fixed_columns", "import_profiles"]

IMPORT_KINDS: tuple[str, ...] = ("canonical", "kineto", "triton-autotune", "ncu")

#: the ``import_profiles`` arguments (besides ``gpu`` and ``source``) each kind of file takes
IMPORT_OPTIONS: dict[str, tuple[str, ...]] = {
    "canonical": ("family", "dtype", "fixed"),
    "kineto": (),
    "triton-autotune": ("family", "dtype", "key", "fixed"),
    "ncu": ("family", "dtype", "shapes", "fixed"),
}
_WHY_NOT = {
    "canonical": "a canonical file has its own columns",
    "kineto": "a Kineto trace gives the family, dtype and shape of every GEMM it records",
    "triton-autotune": "an autotune cache is one kernel's tile sweep",
    "ncu": "the shapes table gives each kernel's family, dtype and shape",
}
#: columns set by their own argument, never through ``fixed``
_OWN_ARGUMENT = {"gpu": "gpu", "family": "family", "dtype": "dtype", "source": "source"}
#: measurement columns besides the model's non-launch ones (pipeweave.model.NON_LAUNCH_COLUMNS), never set by hand
_NOT_SETTABLE_EXTRA = {"moe_ep_semantics", "window0_semantics", "kernel_name"}


def _fixed_columns() -> tuple[str, ...]:
    from ..model import NON_LAUNCH_COLUMNS
    from ..sources import PROFILE_COLUMNS

    not_settable = (set(NON_LAUNCH_COLUMNS) - {"timing"}) | _NOT_SETTABLE_EXTRA
    return tuple(c for c in PROFILE_COLUMNS if c not in _OWN_ARGUMENT and c not in not_settable)


#: canonical columns that ``fixed`` may set on every row (shape, MoE / attention options, tile plan, timing)
FIXED_COLUMNS: tuple[str, ...] = _fixed_columns()


def _check_fixed_used(fixed: Mapping[str, object], rows: pd.DataFrame) -> None:
    """A constant column no imported row's family reads (``topk`` on GEMM rows) would vanish from the output: a
    :class:`DataError` naming it and the columns those families do read."""
    from ..frontend import launch_columns

    fams = [str(f) for f in pd.unique(rows["family"].astype(str))] if "family" in rows.columns else []
    if not fams:
        return
    used = {c for f in fams for c in launch_columns(f)} | {"timing"}
    unused = [c for c in fixed if c not in used]
    if unused:
        reads = "; ".join(f"{f}: {', '.join(launch_columns(f)) or '(unknown family)'}" for f in fams)
        raise DataError(
            f"the fixed argument sets {unused}, which no imported row's family reads (the rows' families and "
            f"their launch columns: {reads}); the value would be dropped",
            hint="set only columns of the rows' family, or check the family the rows were given",
        )


def check_fixed_columns(fixed: Mapping[str, object], *, arg: str = "the fixed argument") -> dict[str, object]:
    """``fixed`` as a dict when every name is a column it may set; else a :class:`DataError` naming the bad
    names, the valid ones and a close match. ``arg`` names the argument in the message."""
    out: dict[str, object] = {}
    for col, val in dict(fixed).items():
        name = str(col).strip()
        if name in _OWN_ARGUMENT:
            raise DataError(
                f"{arg} names {name!r}, which has its own argument",
                hint=f"give {name} with the {_OWN_ARGUMENT[name]} argument instead",
            )
        if name not in FIXED_COLUMNS:
            close = difflib.get_close_matches(name, FIXED_COLUMNS, n=1, cutoff=0.6)
            from ..sources import PROFILE_COLUMNS

            why = " (computed, not set)" if name in PROFILE_COLUMNS else ""
            raise DataError(
                f"{arg} names {name!r}, not a canonical profile column it can set{why}"
                + (f"; did you mean {close[0]!r}?" if close else ""),
                hint=f"the columns it can set: {', '.join(FIXED_COLUMNS)}",
            )
        out[name] = val
    return out


def _as_files(files: object) -> list[str | os.PathLike[str]]:
    """A single path (str or PathLike) is one file, not an iterable of characters."""
    if isinstance(files, (str, os.PathLike)):
        return [files]
    bad = isinstance(files, (bytes, Mapping, pd.DataFrame))
    try:
        out = [] if bad else list(files)  # type: ignore[call-overload]
    except TypeError:
        bad = True
    if bad or not all(isinstance(f, (str, os.PathLike)) for f in out):
        raise DataError(
            f"files must be a path or a list of paths, got {type(files).__name__}",
            hint="e.g. import_profiles('kineto', 'trace.json') or import_profiles('kineto', ['a.json', 'b.json'])",
        )
    return out


def _resolve_gpu(
    gpu: str | os.PathLike[str] | GPUSpec | None, gpus: dict[str, GPUSpec]
) -> tuple[str | None, dict[str, GPUSpec]]:
    """(the GPU name rows get, ``gpus`` + the spec of a spec-file GPU): ``gpu`` resolved like the CLI does."""
    if gpu is None or (isinstance(gpu, str) and not gpu.strip()):
        return None, gpus
    if isinstance(gpu, str) and gpu in gpus:
        return gpu, gpus
    from ..hardware import get_gpu, gpu_names

    try:
        spec = get_gpu(gpu)
    except UnknownGPUError:
        from ._files import suggest_gpus

        close = suggest_gpus(str(gpu))
        raise DataError(
            f"unknown GPU {str(gpu)!r} (the gpu argument)" + (f"; did you mean {close}?" if close else ""),
            hint="pass gpu= a catalog name (`pipeweave gpus` lists them) or a GPU spec file (.toml) describing "
            "the GPU (see datasets/example_gpu_spec.toml)",
        ) from None
    if spec.name not in gpu_names():
        gpus = {**gpus, spec.name: spec}
    return spec.name, gpus


def _check_gpus(rows: pd.DataFrame, gpus: Mapping[str, GPUSpec]) -> None:
    """One error per unknown GPU name (with its rows and files), not one per row."""
    from ..hardware import gpu_names, resolve_gpu_name
    from ._files import suggest_gpus

    unknown: list[str] = []
    names = rows["gpu"].astype(str)
    for g in pd.unique(names):
        if g in gpus:
            continue
        try:
            resolve_gpu_name(g)
        except UnknownGPUError:
            unknown.append(g)
    if not unknown:
        return
    parts = []
    for g in unknown:
        at = (names == g).to_numpy()
        files = sorted(set(rows.loc[at, "dataset"].astype(str))) if "dataset" in rows.columns else []
        close = suggest_gpus(g)
        parts.append(
            f"unknown GPU {g!r} ({int(at.sum())} row{'s' if at.sum() != 1 else ''}"
            + (f" from {', '.join(files)}" if files else "")
            + ")"
            + (f"; did you mean {close}?" if close else "")
        )
    raise DataError(
        f"{'; '.join(parts)}; the catalog has {gpu_names()}",
        hint="pass gpu= a catalog name if the GPU is one of them, else a GPU spec file (.toml) describing the "
        "GPU (see datasets/example_gpu_spec.toml)",
    )


def _show(v: object) -> str:
    """A cell value as a user wrote it (8192, not 8192.0)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _fill(df: pd.DataFrame, values: Mapping[str, object], file: str, args: Mapping[str, str]) -> pd.DataFrame:
    """``df`` + constant columns; a column the file already gives is refused, never overridden."""
    clash = [c for c in values if c in df.columns and df[c].notna().any()]
    if clash:
        shown = ", ".join(
            f"{c}={_show(values[c])} (the file has {', '.join(_show(v) for v in pd.unique(df[c].dropna())[:3])})"
            for c in clash
        )
        names = sorted({args[c] for c in clash})
        fixed = [c for c in clash if args[c] == "the fixed argument"]
        drop = [f"{', '.join(fixed)} from the fixed argument"] if fixed else []
        drop += [args[c] for c in clash if c not in fixed]
        raise DataError(
            f"{' and '.join(names)} would override what {file} already gives: {shown}",
            hint=f"leave out {' and '.join(drop)}; the rows take {', '.join(clash)} from the file",
        )
    for col, val in values.items():
        df[col] = val  # type: ignore[call-overload]
    return df


def _merge_repeats(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct launch (median latency_us, ``n_raw_rows`` launches), across files too."""
    from ..sources import PROFILE_COLUMNS

    meta = {"latency_us", "n_raw_rows", "dataset", "kernel_name", "source"}
    key = [c for c in PROFILE_COLUMNS if c in rows.columns and c not in meta]
    if "n_raw_rows" not in rows.columns:
        rows = rows.assign(n_raw_rows=1.0)
    rows = rows.assign(n_raw_rows=rows["n_raw_rows"].fillna(1.0))
    g = rows.groupby(key, sort=False, dropna=False)
    others = [c for c in rows.columns if c not in key and c not in ("latency_us", "n_raw_rows", "dataset", "_file")]
    out = g.agg(
        latency_us=("latency_us", "median"),
        n_raw_rows=("n_raw_rows", "sum"),
        dataset=("dataset", lambda s: "+".join(dict.fromkeys(s.astype(str)))),
        n_files=("_file", "nunique"),
        **{c: (c, "first") for c in others},
    ).reset_index()
    spanning = out["n_files"] > 1
    if spanning.any():
        n_launch = int(out.loc[spanning, "n_raw_rows"].sum())
        warnings.warn(
            f"merged {n_launch} launches measured in more than one file into {int(spanning.sum())} "
            f"row{'s' if spanning.sum() != 1 else ''} (median latency_us; n_raw_rows counts the launches)",
            stacklevel=3,
        )
    return out[[c for c in rows.columns if c != "_file"]]


def import_profiles(
    kind: str,
    files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    gpu: str | os.PathLike[str] | GPUSpec | None = None,
    family: str | None = None,
    dtype: str | None = None,
    key: str | Sequence[str] = (),
    shapes: str | os.PathLike[str] | None = None,
    fixed: Mapping[str, object] | None = None,
    source: str = USER_SOURCE,
    gpus: Mapping[str, GPUSpec] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(rows, skipped)``: canonical, validated rows from ``files`` (a path or a list of paths) of ``kind``;
    ``skipped`` lists what could not become a row (``file, kernel, reason, count``).

    ``gpu`` (catalog name, spec-file path, GPUSpec, or the name of a spec in ``gpus``) overrides what the
    files say; ``family``/``dtype`` fill in what a file cannot say; ``key`` names the Triton key entries
    (a list or "m,n,k"); ``shapes`` is the ncu shapes table; ``fixed`` adds constant columns
    (:data:`FIXED_COLUMNS`). An argument the kind does not take (:data:`IMPORT_OPTIONS`), or a value for a
    column the file already gives, is refused. The same launch imported more than once (within a file or
    across files; not for ``canonical``) becomes one row: the median latency, ``n_raw_rows`` launches. A
    Triton cache directory stands for the ``*.autotune.json`` files under it.
    """
    if kind not in IMPORT_KINDS:
        raise DataError(f"unknown import format {kind!r}", hint=f"use one of {list(IMPORT_KINDS)}")
    paths = _as_files(files)
    if not paths:
        raise DataError("no input files", hint="pass one or more FILE arguments")
    if isinstance(key, str):
        key = [k.strip() for k in key.split(",")] if key.strip() else []
    key = list(key)
    given = {"family": family, "dtype": dtype, "key": key or None, "shapes": shapes, "fixed": fixed or None}
    unused = [n for n, v in given.items() if v is not None and n not in IMPORT_OPTIONS[kind]]
    if unused:
        args = ", ".join(f"the {n} argument" for n in unused)
        takes = ", ".join(f"the {n} argument" for n in ("gpu", *IMPORT_OPTIONS[kind], "source"))
        raise DataError(
            f"{args} {'does' if len(unused) == 1 else 'do'} not apply to {kind!r} files ({_WHY_NOT[kind]})",
            hint=f"leave {'it' if len(unused) == 1 else 'them'} out; {kind!r} files take only {takes}",
        )
    fixed_cols = check_fixed_columns(fixed or {})
    gpu_name, known = _resolve_gpu(gpu, dict(gpus or {}))
    if kind == "triton-autotune":
        from ._triton import autotune_files

        paths = [f for p in paths for f in autotune_files(p)]
    frames: list[pd.DataFrame] = []
    skips: list[pd.DataFrame] = []
    fill: dict[str, object] = dict(fixed_cols)
    argname = {c: "the fixed argument" for c in fixed_cols}
    if kind != "triton-autotune":  # the autotune importer takes family and dtype itself
        for col, val in (("family", family), ("dtype", dtype)):
            if val:
                fill[col], argname[col] = val, f"the {col} argument"
    for f in paths:
        if kind == "canonical":
            df = read_profiles(f, gpus=known)
            skip = pd.DataFrame(columns=["file", "kernel", "reason", "count"])
        elif kind == "kineto":
            from ._kineto import kineto_launches

            df, skip = kineto_launches(f, gpu=gpu_name)
        elif kind == "triton-autotune":
            from ._triton import import_triton_autotune

            df, skip = import_triton_autotune(f, gpu=gpu_name, family=family, key=key, dtype=dtype)
        else:
            from ._ncu import import_ncu

            df, skip = import_ncu(f, shapes=shapes, gpu=gpu_name)
        if len(df):
            label = Path(f).name if kind != "ncu" else f"{Path(f).name} with the shapes table {Path(str(shapes)).name}"
            df = _fill(df, fill, label, argname)
            if gpu_name and kind == "canonical":
                df["gpu"] = gpu_name
            df["source"] = df["source"] if "source" in df.columns and kind == "canonical" else source
            df["dataset"] = os.path.basename(str(f))
            df["_file"] = len(frames)  # which file (two files may share a name)
            frames.append(df)
        skips.append(skip)
    skipped = pd.concat(skips, ignore_index=True) if skips else pd.DataFrame()
    if not frames:
        reasons = "; ".join(skipped["reason"].astype(str).unique()[:3]) if len(skipped) else "empty input"
        raise DataError(
            f"no usable launch rows in {[str(f) for f in paths]} ({reasons})",
            hint=f"check that the files are {kind!r} files (the kind) and their contents",
        )
    allrows = pd.concat(frames, ignore_index=True)
    _check_fixed_used(fixed_cols, allrows)
    if kind == "canonical":  # the user's own canonical files: every row must be valid
        return check_profiles(allrows.drop(columns="_file"), what="imported rows", gpus=known), skipped
    _check_gpus(allrows, known)
    from ..hardware import resolve_gpu_name

    # one name per GPU before merging ("NVIDIA H100 80GB HBM3" in one trace, "H100" given for another)
    allrows["gpu"] = (
        allrows["gpu"]
        .astype(str)
        .map({g: g if g in known else resolve_gpu_name(g) for g in pd.unique(allrows["gpu"].astype(str))})
    )
    allrows = _merge_repeats(allrows)
    # a converted row outside the valid domain (e.g. a tile plan pipeweave thinks cannot fit the GPU) is
    # skipped with its reason, like what the importer could not convert; the other rows are kept
    rows, why = profile_problems(allrows, what="imported rows", gpus=known)
    bad = (why != "").to_numpy()
    if bad.all():
        groups: dict[str, list[int]] = {}
        for i, r in why.items():
            groups.setdefault(str(r), []).append(int(i) + 1)  # type: ignore[call-overload]
        listed = "; ".join(
            f"row{'s' if len(n) > 1 else ''} {', '.join(map(str, n[:5]))}{' ...' if len(n) > 5 else ''}: {r}"
            for r, n in list(groups.items())[:3]
        )
        raise DataError(
            f"no imported row is a valid launch ({listed})",
            hint="check the GPU, family, dtype and key given for the files",
        )
    if bad.any():
        invalid = pd.DataFrame(
            {
                "file": rows.loc[bad, "dataset"].astype(str).to_numpy(),
                "kernel": [f"converted row {i + 1}" for i in range(len(rows)) if bad[i]],
                "reason": "outside the valid domain: " + why[bad].astype(str).to_numpy(),
                "count": 1,
            }
        )
        skipped = pd.concat([skipped, invalid], ignore_index=True) if len(skipped) else invalid
    return with_generation(rows[~bad].reset_index(drop=True), known), skipped
