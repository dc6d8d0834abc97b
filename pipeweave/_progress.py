"""Progress reporting for long commands: one helper for every loop over folds, steps or items.

On a terminal (stderr is a TTY) it draws a tqdm bar; when stderr goes to a file or a pipe it prints
one line per step (``[3/12] fold hopper (41.2 s)``), so a log shows where a long run is.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["progress", "progress_line"]

T = TypeVar("T")


def _is_tty() -> bool:
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def progress_line(message: str) -> None:
    """Print one progress line to stderr (flushed)."""
    print(message, file=sys.stderr, flush=True)


def progress(items: Iterable[T], *, desc: str, total: int | None = None, enabled: bool = True,
             label: object = None) -> Iterator[T]:
    """Yield ``items`` with progress: a tqdm bar on a terminal, else one line per item on stderr.

    ``label``: a function item -> text shown for that item in the line mode (default ``str(item)``
    for short items). ``enabled=False`` yields silently.
    """
    if not enabled:
        yield from items
        return
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if _is_tty():
        from tqdm.auto import tqdm

        yield from tqdm(items, desc=desc, total=total)
        return
    t0 = time.perf_counter()
    n = "?" if total is None else str(total)
    for i, item in enumerate(items, 1):
        text = label(item) if callable(label) else (str(item) if len(str(item)) <= 60 else "")
        progress_line(f"{desc} [{i}/{n}] {text} (start +{time.perf_counter() - t0:.1f} s)".replace("  ", " "))
        yield item
    progress_line(f"{desc}: done {n if total is not None else ''} in {time.perf_counter() - t0:.1f} s")
