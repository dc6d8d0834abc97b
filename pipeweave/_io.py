"""Atomic file writes: write to a temporary file in the same folder, then rename over the target.

Every file pipeweave writes goes through :func:`atomic_write`, so a reader never sees a half-written
file. The rules, in one place:

* the temporary file is named ``.<target name>.pwtmp-<pid>-<random><suffix>`` beside the target
  (same file system, so the final ``os.replace`` is atomic); :data:`TEMP_MARK` makes it
  recognisable;
* a process killed mid-write (``kill -9``, power loss) can leave its temporary file behind: the next
  write to the same target removes every such file whose writing process is gone
  (:func:`stale_temp_files`), so at most one dead writer's leftover ever exists, and only until the
  next write;
* a target that is a symbolic link keeps its link: the new content replaces the link's target
  (atomically, in the target's folder); a hard-linked target gets a new inode (the other names keep
  the old content, as with any atomic rename);
* a target that is a directory, lies under a regular file or cannot be written raises
  :class:`~pipeweave.DataError` naming the path, before anything is written.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._errors import DataError

__all__ = [
    "TEMP_MARK",
    "atomic_write",
    "atomic_write_json",
    "atomic_write_text",
    "CSV_NA_VALUES",
    "csv_na_options",
    "json_text",
    "json_ready",
    "save_figure_png",
    "check_csv_file",
    "check_writable",
    "read_csv_checked",
    "read_error_text",
    "stale_temp_files",
]


def read_error_text(exc: BaseException) -> str:
    """Where and why a file could not be parsed, in words: ``line 3, column 7: Expecting ',' delimiter``
    for JSON, ``byte 0xff at position 12 is not UTF-8`` for text, the OS reason for I/O errors."""
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        bad = exc.object[exc.start : exc.start + 1]
        return f"byte 0x{bad.hex() if bad else '??'} at position {exc.start:,} is not UTF-8"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    first = str(exc).splitlines()[0] if str(exc) else ""
    return first[:200] or type(exc).__name__


#: Marks pipeweave's temporary files: ``.<name>.pwtmp-<pid>-<random><suffix>``.
TEMP_MARK = ".pwtmp-"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


def stale_temp_files(path: str | os.PathLike[str]) -> list[Path]:
    """Temporary files of earlier writes to ``path`` whose writing process no longer runs."""
    path = Path(path)
    pattern = re.compile(re.escape(f".{path.name}{TEMP_MARK}") + r"(\d+)-[0-9a-f]+" + re.escape(path.suffix) + "$")
    out = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return []
    for e in entries:
        m = pattern.match(e.name)
        if m and not _pid_alive(int(m.group(1))):
            out.append(Path(e.path))
    return sorted(out)


def _target(path: Path) -> Path:
    """The file that will be replaced: ``path`` itself, or the end of its symlink chain."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def check_writable(path: str | os.PathLike[str], what: str = "output") -> Path:
    """Raise :class:`DataError` (naming ``path``) when ``path`` cannot receive a file; return the real target.

    Checks, without writing anything: not a directory, no regular file among its parent folders,
    and the nearest existing parent folder is writable.
    """
    p = Path(path)
    if str(path) == "" or p.name in ("", ".", ".."):
        raise DataError(f"{what} path {str(path)!r} names no file", hint="give a file path such as out/preds.csv")
    t = _target(p)
    if t.is_dir():
        raise DataError(f"{what} path {str(path)!r} is a directory", hint=f"give a file path, e.g. {str(p / 'out')!r}")
    if t.exists() and not t.is_file():  # a device, FIFO or socket: an atomic replace would swap it for a file
        raise DataError(
            f"{what} path {str(path)!r} is not a regular file (a device, pipe or socket)",
            hint="give a regular file path (results are written atomically: a file is replaced, never streamed)",
        )
    parent = t.parent
    while not parent.exists():
        if parent.is_symlink():  # dangling link in the way
            raise DataError(
                f"{what} path {str(path)!r}: {str(parent)!r} is a broken symbolic link",
                hint="fix the link or choose another folder",
            )
        parent = parent.parent
    if not parent.is_dir():
        raise DataError(
            f"{what} path {str(path)!r} lies under {str(parent)!r}, which is a file, not a folder",
            hint="choose a path inside a folder",
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DataError(
            f"{what} path {str(path)!r}: folder {str(parent)!r} is not writable",
            hint="choose a folder you can write to",
        )
    try:  # a real probe: permissions say yes for root even on read-only or virtual file systems
        with tempfile.TemporaryFile(dir=parent, prefix=f".pwprobe{TEMP_MARK}"):
            pass
    except OSError as exc:
        raise DataError(
            f"{what} path {str(path)!r}: cannot create files in {str(parent)!r} ({exc.strerror})",
            hint="choose a folder you can write to",
        ) from None
    return t


def atomic_write(path: str | os.PathLike[str], writer: Callable[[Path], None]) -> Path:
    """Call ``writer(tmp_path)`` and move the result onto ``path`` only if it succeeded.

    Returns ``path``. See the module docstring for temporary files, symlinks and errors.
    """
    path = Path(path)
    target = check_writable(path)
    for stale in stale_temp_files(target):
        try:
            stale.unlink()
        except OSError:
            pass
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(
            f"cannot create folder {str(target.parent)!r} for {str(path)!r}: {exc.strerror}",
            hint="choose another output path",
        ) from None
    tmp_path = target.parent / f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}{target.suffix}"
    try:
        fd = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
    except OSError as exc:
        raise DataError(f"cannot write {str(path)!r}: {exc.strerror}", hint="choose a writable path") from None
    try:
        try:
            writer(tmp_path)
        except OSError as exc:
            raise DataError(
                f"writing {str(path)!r} failed: {exc.strerror or exc}", hint="check free space and permissions"
            ) from None
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_path, 0o666 & ~umask)  # created 0600; give the usual file mode
        try:
            os.replace(tmp_path, target)
        except OSError as exc:
            raise DataError(
                f"cannot replace {str(path)!r}: {exc.strerror}", hint="choose another output path"
            ) from None
    finally:
        if tmp_path.exists():
            tmp_path.unlink()
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""

    def write(p: Path) -> None:
        p.write_text(text, encoding="utf-8")

    return atomic_write(path, write)


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int = 2) -> Path:
    """Write ``obj`` as JSON (sorted keys off, NaN rejected) to ``path`` atomically."""
    text = json.dumps(obj, indent=indent, allow_nan=False, default=_json_default) + "\n"
    return atomic_write_text(path, text)


def save_figure_png(fig: Any, path: str | os.PathLike[str], *, dpi: int = 100, colors: int = 128) -> Path:
    """Write a matplotlib figure to ``path`` as an 8-bit palette PNG, atomically; returns ``path``.

    Report figures (a few flat colours, thousands of small markers) lose nothing visible with
    ``colors`` palette entries and are 3-4x smaller than matplotlib's RGBA output, which keeps the
    committed reports small. No timestamp or software tag is written, so a re-run with the same data
    gives the same bytes."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    buf.seek(0)
    img = Image.open(buf).convert("RGB").quantize(colors=colors, dither=Image.Dither.NONE)
    return atomic_write(path, lambda p: img.save(p, format="PNG", optimize=True))


def check_csv_file(path: str | os.PathLike[str], what: str = "--input") -> list[str]:
    """Check that ``path`` is a readable UTF-8 CSV file with a header of distinct names; return the header.

    Raises :class:`DataError` naming the file and the problem (missing, a directory, empty, UTF-16 or
    binary content, duplicate or blank column names) - before pandas parses anything.
    """
    import csv

    p = Path(path)
    if not p.exists():
        raise DataError(f"{what} file not found: {str(path)!r}", hint="give the path of a CSV of launch rows")
    if p.is_dir():
        raise DataError(f"{what} {str(path)!r} is a directory, not a CSV file", hint="give the path of a CSV file")
    try:
        with open(p, "rb") as fh:
            head = fh.read(65536)
    except OSError as exc:
        raise DataError(
            f"cannot read {what} {str(path)!r}: {exc.strerror}", hint="check the path and permissions"
        ) from None
    if not head.strip():
        raise DataError(f"{what} {str(path)!r} is empty", hint="give a CSV with a header line and one launch per row")
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(head) > 3 and head[1:4:2] == b"\x00\x00"):
        raise DataError(
            f"{what} {str(path)!r} is UTF-16 text", hint="save it as UTF-8 CSV (e.g. `iconv -f UTF-16 -t UTF-8`)"
        )
    if head[:4] == b"PAR1":
        raise DataError(
            f"{what} {str(path)!r} is a parquet file, not CSV text",
            hint="convert it: python -c \"import pandas as pd; pd.read_parquet('IN.parquet').to_csv('OUT.csv', "
            'index=False)"',
        )
    if b"\x00" in head:
        raise DataError(f"{what} {str(path)!r} is binary, not a CSV text file", hint="give a UTF-8 CSV file")
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut by the 64 KiB read
            raise DataError(
                f"{what} {str(path)!r} is not UTF-8 text (byte {exc.start}: {head[exc.start : exc.start + 1]!r})",
                hint="save it as UTF-8 CSV",
            ) from None
        text = head[: exc.start].decode("utf-8-sig")
    first = next(csv.reader(text.splitlines()[:1] or [""]), [])
    header = [h.strip() for h in first]
    if len(header) == 1 and ("\t" in header[0] or ";" in header[0]):
        sep = "tab" if "\t" in header[0] else "semicolon"
        raise DataError(
            f"{what} {str(path)!r} is {sep}-separated (its header is one column: {header[0][:60]!r})",
            hint="save it comma-separated (CSV)",
        )
    if not any(header):
        raise DataError(
            f"{what} {str(path)!r} has an empty first line (the header)",
            hint="the first line must name the columns, e.g. family,gpu,dtype,m,n,k",
        )
    blank = [i + 1 for i, h in enumerate(header) if not h]
    if blank:
        raise DataError(f"{what} {str(path)!r}: header column(s) {blank} have no name", hint="name every column")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise DataError(
            f"{what} {str(path)!r} names column(s) {dup} more than once", hint="keep one column of each name"
        )
    return header


#: Cells a launch CSV reader takes as blank: pandas' defaults without the spellings of NaN (``nan``, ``NaN``,
#: ``-nan`` ...). A literal NaN is a value the user wrote, and the row check names it (``m=nan is not a finite
#: number``) instead of reporting a blank cell; ``inf`` is read as a number, also refused by the check.
CSV_NA_VALUES: tuple[str, ...] = (
    "",
    "#N/A",
    "#N/A N/A",
    "#NA",
    "<NA>",
    "N/A",
    "NA",
    "NULL",
    "None",
    "n/a",
    "null",
)


def csv_na_options() -> dict[str, Any]:
    """``pandas.read_csv`` options that read :data:`CSV_NA_VALUES` (and only those) as blank."""
    return {"keep_default_na": False, "na_values": list(CSV_NA_VALUES)}


def read_csv_checked(path: str | os.PathLike[str], what: str = "--input", **kwargs: Any) -> Any:
    """``pandas.read_csv`` after :func:`check_csv_file`; parse errors (ragged rows) become :class:`DataError`.

    Rows are numbered 1.. in file order (row 1 = the first line after the header); a header-only
    file raises. Column names are stripped of surrounding spaces. Blank cells are those of
    :data:`CSV_NA_VALUES` (a literal ``nan`` stays text, for the row check to name).
    """
    import warnings

    import pandas as pd

    check_csv_file(path, what)
    try:
        with warnings.catch_warnings():
            # index_col=False: a row with more fields than the header must not turn column 1 into the index
            warnings.simplefilter("error", pd.errors.ParserWarning)
            na = {} if {"na_values", "keep_default_na"} & set(kwargs) else csv_na_options()
            df = pd.read_csv(path, encoding="utf-8-sig", skipinitialspace=True, index_col=False, **na, **kwargs)
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
        raise DataError(f"{what} {str(path)!r} could not be read as CSV: {exc}", hint="give a UTF-8 CSV file") from None
    if df.empty:
        raise DataError(
            f"{what} {str(path)!r} has a header but no rows", hint="add one launch per line below the header"
        )
    df.columns = [str(c).strip() for c in df.columns]
    return df


def json_ready(obj: Any) -> Any:
    """``obj`` with every non-finite float (NaN, +-inf; numpy's too) replaced by ``None``, numpy scalars and arrays
    as Python values, tuples as lists: what strict JSON (``allow_nan=False``) can hold. Other objects are kept."""
    import math

    import numpy as np

    if isinstance(obj, dict):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_ready(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def json_text(obj: Any, *, indent: int | None = 2, default: Callable[[Any], Any] | None = None) -> str:
    """``obj`` as strict JSON text (RFC 8259: a non-finite number is written ``null``, never ``NaN``)."""
    return json.dumps(json_ready(obj), indent=indent, allow_nan=False, default=default or _json_default)


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if not np.isfinite(o) else float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
