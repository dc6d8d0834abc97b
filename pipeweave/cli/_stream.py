"""Chunked reading of a launch CSV for `pipeweave predict --input` (memory bounded by the chunk size).

Each chunk comes twice: parsed as pandas parses a whole file (numbers as numbers, what the model
reads) and as the file's own text (what the output repeats, so a cell is written back as the user
wrote it whatever the chunk boundaries: chunked output == one-chunk output, byte for byte).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from typing import Any

from .._errors import DataError

__all__ = ["DEFAULT_CHUNK_ROWS", "iter_csv_chunks"]

#: rows per chunk of `predict --input` (about 0.3 GB of working memory per 200,000 rows)
DEFAULT_CHUNK_ROWS = 200_000


def iter_csv_chunks(
    path: str | os.PathLike[str], chunk_rows: int = DEFAULT_CHUNK_ROWS, what: str = "--input"
) -> Iterator[tuple[Any, Any]]:
    """Yield ``(parsed, text)`` DataFrames of consecutive row blocks of the CSV at ``path``.

    Both share the row index (0-based file order across chunks; row N of the file = index N-1);
    ``text`` holds every cell as the file's string ('' for blank). Raises :class:`DataError` for
    the problems :func:`pipeweave._io.read_csv_checked` reports (ragged rows, no rows ...).
    """
    import pandas as pd

    from .._io import check_csv_file, csv_na_options

    if int(chunk_rows) < 1:
        raise DataError(f"--chunk-rows must be >= 1, got {chunk_rows!r}", hint=f"e.g. {DEFAULT_CHUNK_ROWS}")
    check_csv_file(path, what)
    opts: dict[str, Any] = {
        "encoding": "utf-8-sig",
        "skipinitialspace": True,
        "index_col": False,
        "chunksize": int(chunk_rows),
    }
    empty = True
    try:
        with warnings.catch_warnings():
            # index_col=False: a row with more fields than the header must not turn column 1 into the index
            warnings.simplefilter("error", pd.errors.ParserWarning)
            with (
                pd.read_csv(path, **opts, **csv_na_options()) as parsed,  # a literal nan stays text: named, not blank
                pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, **opts) as text,
            ):
                for df, raw in zip(parsed, text):
                    if len(df) != len(raw):  # both readers see the same rows; guard against a parser difference
                        raise DataError(
                            f"{what} {str(path)!r}: rows {df.index[0] + 1}.. parsed inconsistently",
                            hint="check the file's quoting",
                        )
                    if df.empty:  # a header-only file still yields one empty chunk
                        continue
                    empty = False
                    df.columns = [str(c).strip() for c in df.columns]
                    raw.columns = list(df.columns)
                    yield df, raw
    except pd.errors.ParserWarning:
        raise DataError(
            f"{what} {str(path)!r} has a row with more fields than its header (line 2 or later)",
            hint="every row needs as many fields as the header; quote fields that contain commas",
        ) from None
    except pd.errors.ParserError as exc:
        msg = str(exc).strip().splitlines()[-1]
        raise DataError(
            f"{what} {str(path)!r} is not a well-formed CSV: {msg}", hint="every row needs as many fields as the header"
        ) from None
    except (UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{what} {str(path)!r} could not be read as CSV: {exc}", hint="give a UTF-8 CSV file") from None
    if empty:
        raise DataError(
            f"{what} {str(path)!r} has a header but no rows", hint="add one launch per line below the header"
        )
