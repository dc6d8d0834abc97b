"""Progress reporting for long commands (evaluate, tune, train, sass --build-cache, diagnose --rebuild-models).

One helper for every loop over folds, steps or items: on a terminal (stderr is a TTY) a tqdm bar;
when stderr goes to a file or a pipe, plain lines (``evaluate [3/12] gemm_bf16 held-out=hopper
pipeweave (41.2 s)``): one per step, or one per tenth of the total for long loops (boosting rounds),
so a log shows where a long run is without megabytes of carriage returns.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["progress_bar", "progress", "LineProgress", "stderr_is_tty"]

T = TypeVar("T")


def stderr_is_tty() -> bool:
    """Whether stderr is a terminal."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


class LineProgress:
    """tqdm's ``update`` / ``set_description`` / ``set_postfix_str`` / ``close`` as plain lines on stderr."""

    def __init__(self, total: int | None, desc: str, unit: str = "it", every: int | None = None) -> None:
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0
        self.postfix = ""
        self.every = every if every is not None else (max(1, (total or 0) // 10) if (total or 0) > 20 else 1)
        self.t0 = time.perf_counter()
        self.closed = False

    def set_description(self, desc: str, refresh: bool = True) -> None:
        self.desc = desc

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = s

    def update(self, n: int = 1) -> None:
        before, self.n = self.n, self.n + n
        if self.n // self.every != before // self.every or self.n == self.total:
            tot = "?" if self.total is None else str(self.total)
            text = " ".join(x for x in (self.desc, f"[{self.n}/{tot} {self.unit}]", self.postfix) if x)
            print(f"{text} ({time.perf_counter() - self.t0:.1f} s)", file=sys.stderr, flush=True)

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Silent(LineProgress):
    def update(self, n: int = 1) -> None:
        self.n += n


def progress_bar(total: int | None, desc: str, *, unit: str = "it", enabled: bool = True) -> Any:
    """A progress object with tqdm's methods: a tqdm bar on a terminal, :class:`LineProgress` otherwise,
    a silent one when ``enabled`` is False."""
    if not enabled:
        return _Silent(total, desc, unit)
    if stderr_is_tty():
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)
    return LineProgress(total, desc, unit)


def progress(
    items: Iterable[T], *, desc: str, total: int | None = None, unit: str = "it", enabled: bool = True
) -> Iterator[T]:
    """Yield ``items`` while reporting progress with :func:`progress_bar`."""
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    bar = progress_bar(total, desc, unit=unit, enabled=enabled)
    try:
        for item in items:
            yield item
            bar.update(1)
    finally:
        bar.close()
