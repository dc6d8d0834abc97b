"""Checks shared by the importers: an input path is an existing, non-empty file; GPU-name suggestions."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .._errors import DataError

__all__ = ["input_file", "note_relabelled", "suggest_gpus"]


def input_file(path: str | os.PathLike[str], what: str, *, hint: str, directory_hint: str | None = None) -> Path:
    """``path`` as a Path when it is an existing, non-empty file; else a :class:`DataError` naming it.

    ``what`` names the kind of file ("trace file", "ncu CSV" ...), ``hint`` says which file to pass.
    """
    p = Path(path)
    if p.is_dir():
        raise DataError(f"{what} {str(p)!r} is a directory, not a file", hint=directory_hint or hint)
    if not p.exists():
        raise DataError(f"{what} not found: {str(p)!r}", hint="check the path")
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise DataError(f"cannot read {what} {str(p)!r} ({exc.strerror or type(exc).__name__})", hint=hint) from None
    if size == 0:
        raise DataError(f"{what} {str(p)!r} is empty (0 bytes)", hint=hint)
    return p


def suggest_gpus(name: str, n: int = 3) -> list[str]:
    """Catalog GPUs most like ``name`` (:func:`pipeweave.hardware.suggest_gpu_names`: the product number
    first, H100 -> H100-SXM, then close spellings), at most ``n``."""
    from ..hardware import suggest_gpu_names

    return suggest_gpu_names(name)[:n]


def note_relabelled(file_name: str, devices: Iterable[object], gpu: str) -> None:
    """Warn once per device of ``devices`` (the GPU names a file records) that is not ``gpu``, the GPU its rows are
    labelled with as asked (a catalog name or a spec-file GPU; names the catalog does not know compare as text)."""
    import warnings

    from .._errors import PipeweaveError
    from ..hardware import resolve_gpu_name

    for device in sorted({str(d) for d in devices} - {""}):
        try:
            same = resolve_gpu_name(device) == resolve_gpu_name(str(gpu))
        except PipeweaveError:
            same = device.strip().lower() == str(gpu).strip().lower()
        if not same:
            warnings.warn(
                f"{file_name} was profiled on {device!r}; its rows are labelled {gpu!r} as asked",
                UserWarning,
                stacklevel=3,
            )
