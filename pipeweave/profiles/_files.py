"""Checks shared by the importers: an input path is an existing, non-empty file; GPU-name suggestions."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from .._errors import DataError

__all__ = ["input_file", "suggest_gpus"]


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


# a product number: up to two letters, 1-4 digits, one optional letter (h100, a100, l40s, gb200, 4090, t4);
# memory sizes (80gb), memory types (hbm3) and form factors (sxm5, pcie, nvl72) do not match
_PRODUCT = re.compile(r"[a-z]{0,2}\d{1,4}[a-z]?")


def _products(name: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", name.lower()) if _PRODUCT.fullmatch(t) and not t.isalpha()}


def _norm(name: str) -> str:
    s = re.sub(r"[\s_\-]+", "", name.lower())
    return s[len("nvidia") :] if s.startswith("nvidia") else s


def suggest_gpus(name: str, n: int = 3) -> list[str]:
    """Catalog GPUs most like ``name``: those sharing its product number (H100 -> H100-SXM) first,
    then by string similarity."""
    from ..hardware import list_gpus

    want = _products(name)
    scored: list[tuple[int, float, int, str]] = []
    for order, spec in enumerate(list_gpus()):
        names = (spec.name, *spec.aliases)
        shared = max(len(want & _products(a)) for a in names)
        ratio = max(difflib.SequenceMatcher(None, _norm(name), _norm(a)).ratio() for a in names)
        scored.append((shared, ratio, -order, spec.name))
    scored.sort(reverse=True)
    if want and scored and scored[0][0] > 0:  # a product-number match: only those
        return [s[3] for s in scored if s[0] == scored[0][0]][:n]
    return [s[3] for s in scored if s[1] >= 0.6][:n]
