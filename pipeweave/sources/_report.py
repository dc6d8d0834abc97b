"""What a load kept and what it dropped (and why): :class:`LoadReport`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = ["LoadReport", "KEPT_COLUMNS", "DROP_COLUMNS", "DropLog", "kept_counts"]

#: Columns of :attr:`LoadReport.kept`.
KEPT_COLUMNS: list[str] = ["source", "dataset", "family", "dtype", "gpu", "rows"]
#: Columns of :attr:`LoadReport.drops`.
DROP_COLUMNS: list[str] = ["source", "dataset", "family", "reason", "rows"]


def kept_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of a profile table per (source, dataset, family, dtype, gpu)."""
    keys = KEPT_COLUMNS[:-1]
    if df.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in keys} | {"rows": pd.Series(dtype="int64")})
    counts = df.groupby(keys, observed=True, sort=True).size().rename("rows").reset_index()
    for c in keys:
        counts[c] = counts[c].astype(object)
    return counts[counts["rows"] > 0].reset_index(drop=True)


class DropLog:
    """Accumulates dropped-row counts per (source, dataset, family, reason)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str, str], int] = {}
        self.messages: list[str] = []

    def add(self, source: str, dataset: str, family: str, reason: str, rows: int) -> None:
        """Count ``rows`` dropped rows (no-op for 0)."""
        if rows:
            key = (source, dataset, family, reason)
            self._counts[key] = self._counts.get(key, 0) + int(rows)

    def note(self, message: str) -> None:
        """Record a file-level message (e.g. a whole file skipped)."""
        if message not in self.messages:
            self.messages.append(message)

    def frame(self) -> pd.DataFrame:
        """The counts as a DataFrame with :data:`DROP_COLUMNS`, sorted."""
        rows = [(*k, v) for k, v in sorted(self._counts.items())]
        return pd.DataFrame(rows, columns=DROP_COLUMNS).astype({"rows": "int64"})


@dataclass
class LoadReport:
    """Summary of one :func:`load_profiles` call.

    ``kept``: rows per source/dataset/family/dtype/gpu (:data:`KEPT_COLUMNS`); ``drops``: rows
    removed per source/dataset/family/reason (:data:`DROP_COLUMNS`; "duplicate key aggregated"
    counts the rows merged into a median, not lost measurements); ``messages``: file-level notes;
    ``cache``: "hit", "miss" (built and written) or "off"; ``seconds``: wall time of the call.
    """

    data_dir: str
    kept: pd.DataFrame
    drops: pd.DataFrame
    messages: list[str] = field(default_factory=list)
    cache: str = "off"
    cache_path: str | None = None
    seconds: float = 0.0
    files_fingerprint: str = ""

    @property
    def total_rows(self) -> int:
        """Rows in the returned table."""
        return int(self.kept["rows"].sum()) if len(self.kept) else 0

    @property
    def total_dropped(self) -> int:
        """Source rows that did not become a row of their own (all reasons)."""
        return int(self.drops["rows"].sum()) if len(self.drops) else 0

    def kept_records(self) -> list[dict[str, Any]]:
        """``kept`` as a list of plain dicts (JSON-ready)."""
        return [
            {str(k): (int(v) if k == "rows" else str(v)) for k, v in r.items()}
            for r in self.kept.to_dict(orient="records")
        ]

    def drop_records(self) -> list[dict[str, Any]]:
        """``drops`` as a list of plain dicts (JSON-ready)."""
        return [
            {str(k): (int(v) if k == "rows" else str(v)) for k, v in r.items()}
            for r in self.drops.to_dict(orient="records")
        ]

    def to_text(self) -> str:
        """A human-readable table of the kept rows, the drops and the messages."""
        lines = [f"data: {self.data_dir}"]
        lines.append(_table(self.kept, KEPT_COLUMNS, right={"rows"}))
        lines.append(f"total: {self.total_rows:,} rows")
        if len(self.drops):
            lines.append("")
            lines.append("dropped or merged source rows:")
            lines.append(_table(self.drops, DROP_COLUMNS, right={"rows"}))
            lines.append(f"total: {self.total_dropped:,} source rows")
        else:
            lines.append("no source rows dropped")
        for m in self.messages:
            lines.append(f"note: {m}")
        where = f" ({self.cache_path})" if self.cache_path else ""
        lines.append(f"cache: {self.cache}{where}; {self.seconds:.2f} s")
        return "\n".join(lines)


def _table(df: pd.DataFrame, cols: list[str], right: set[str]) -> str:
    cells = [[str(c) for c in cols]]
    for rec in df[cols].itertuples(index=False):
        cells.append([f"{v:,}" if c in right else str(v) for c, v in zip(cols, rec)])
    widths = [max(len(r[i]) for r in cells) for i in range(len(cols))]
    out = []
    for r in cells:
        out.append("  ".join(v.rjust(w) if c in right else v.ljust(w) for c, v, w in zip(cols, r, widths)).rstrip())
    return "\n".join(out)
