"""One entry point for every importer: files of one kind -> validated canonical rows + skip list."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from .._errors import DataError
from ._canonical import USER_SOURCE, check_profiles, profile_problems, read_profiles, with_generation

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = ["IMPORT_KINDS", "import_profiles"]

IMPORT_KINDS: tuple[str, ...] = ("canonical", "kineto", "triton-autotune", "ncu")


def import_profiles(
    kind: str,
    files: Sequence[str | os.PathLike[str]],
    *,
    gpu: str | None = None,
    family: str | None = None,
    dtype: str | None = None,
    key: Sequence[str] = (),
    shapes: str | os.PathLike[str] | None = None,
    fixed: Mapping[str, object] | None = None,
    source: str = USER_SOURCE,
    gpus: Mapping[str, GPUSpec] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(rows, skipped)``: canonical, validated rows from ``files`` of ``kind``; ``skipped`` lists
    what could not become a row (``file, kernel, reason, count``).

    ``gpu`` (catalog name or the name of a spec in ``gpus``) overrides what the files say;
    ``family``/``dtype`` fill in what a file cannot say; ``key`` names the Triton key entries;
    ``shapes`` is the ncu shapes table; ``fixed`` adds constant columns.
    """
    if kind not in IMPORT_KINDS:
        raise DataError(f"unknown import format {kind!r}", hint=f"use one of {list(IMPORT_KINDS)}")
    if not files:
        raise DataError("no input files", hint="pass one or more FILE arguments")
    frames, skips = [], []
    for f in files:
        if kind == "canonical":
            df = read_profiles(f, gpus=gpus)
            skip = pd.DataFrame(columns=["file", "kernel", "reason", "count"])
        elif kind == "kineto":
            from ._kineto import import_kineto

            df, skip = import_kineto(f, gpu=gpu)
        elif kind == "triton-autotune":
            from ._triton import import_triton_autotune

            df, skip = import_triton_autotune(f, gpu=gpu, family=family, key=key, dtype=dtype, fixed=dict(fixed or {}))
        else:
            from ._ncu import import_ncu

            df, skip = import_ncu(f, shapes=shapes, gpu=gpu)
        if len(df):
            for col, val in (fixed or {}).items():
                if col not in df.columns:
                    df[col] = val  # type: ignore[call-overload]
            if gpu and kind == "canonical":
                df["gpu"] = gpu
            if family and "family" not in df.columns:
                df["family"] = family
            if dtype and "dtype" not in df.columns:
                df["dtype"] = dtype
            df["source"] = df["source"] if "source" in df.columns and kind == "canonical" else source
            df["dataset"] = os.path.basename(str(f))
            frames.append(df)
        skips.append(skip)
    skipped = pd.concat(skips, ignore_index=True) if skips else pd.DataFrame()
    if not frames:
        reasons = "; ".join(skipped["reason"].astype(str).unique()[:3]) if len(skipped) else "empty input"
        raise DataError(
            f"no usable launch rows in {[str(f) for f in files]} ({reasons})",
            hint=f"check that the files are {kind!r} files (the kind) and their contents",
        )
    allrows = pd.concat(frames, ignore_index=True)
    if kind == "canonical":  # the user's own canonical files: every row must be valid
        return check_profiles(allrows, what="imported rows", gpus=gpus), skipped
    # a converted row outside the valid domain (e.g. a tile plan pipeweave thinks cannot fit the GPU) is
    # skipped with its reason, like what the importer could not convert; the other rows are kept
    rows, why = profile_problems(allrows, what="imported rows", gpus=gpus)
    bad = (why != "").to_numpy()
    if bad.all():
        listed = "; ".join(f"row {int(i) + 1}: {r}" for i, r in list(why.items())[:3])  # type: ignore[call-overload]
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
    return with_generation(rows[~bad].reset_index(drop=True), gpus), skipped
