"""Parquet cache of the parsed profile table, keyed by a fingerprint of the source files.

Key = loader version + loader source code + manifests + GPU catalog + data directory + (relative
path, size, mtime) of every matched source file. Writes are atomic; an unreadable or inconsistent cache file is
ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from .._io import atomic_write
from ._manifest import SourceManifest, manifests_digest
from ._read import expand_files
from ._schema import PROFILE_COLUMNS, conform

__all__ = [
    "CACHE_ENV_VAR",
    "LOADER_VERSION",
    "cache_dir",
    "files_fingerprint",
    "cache_path",
    "read_cache",
    "write_cache",
]

CACHE_ENV_VAR = "PIPEWEAVE_CACHE"
#: Bump whenever the loader's output for the same files changes.
LOADER_VERSION = "sources-1"
_META_KEY = b"pipeweave.sources"
_KEEP_CACHES = 4


def cache_dir() -> Path:
    """``$PIPEWEAVE_CACHE`` if set, else ``~/.cache/pipeweave``."""
    env = os.environ.get(CACHE_ENV_VAR)
    return Path(env) if env else Path.home() / ".cache" / "pipeweave"


def _catalog_digest() -> str:
    try:
        from ..hardware import CATALOG_PATH

        return hashlib.sha256(Path(CATALOG_PATH).read_bytes()).hexdigest()
    except Exception:  # catalog missing: resolution will fail loudly later anyway
        return "no-catalog"


def _code_digest() -> str:
    """sha256 of this subpackage's source: editing the loader invalidates old caches automatically."""
    h = hashlib.sha256()
    for p in sorted(Path(__file__).parent.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def files_fingerprint(data_dir: Path, manifests: dict[str, SourceManifest]) -> str:
    """sha256 over loader version and code, manifests, GPU catalog, data dir and each file's path/size/mtime."""
    h = hashlib.sha256()
    h.update(f"{LOADER_VERSION}\n{_code_digest()}\n{manifests_digest()}\n{_catalog_digest()}\n{data_dir}\n".encode())
    for name in sorted(manifests):
        for spec in manifests[name].datasets:
            for p in expand_files(spec, data_dir):
                st = p.stat()
                h.update(
                    f"{name}/{spec.name}|{p.relative_to(data_dir).as_posix()}|{st.st_size}|{st.st_mtime_ns}\n".encode()
                )
    return h.hexdigest()


def cache_path(fingerprint: str) -> Path:
    """The cache file for a fingerprint."""
    return cache_dir() / f"profiles-{fingerprint[:24]}.parquet"


def read_cache(path: Path, fingerprint: str) -> tuple[pd.DataFrame, dict[str, Any]] | None:
    """(table, metadata) from a cache file, or None if absent, unreadable or for another fingerprint."""
    if not path.is_file():
        return None
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        meta = json.loads((table.schema.metadata or {})[_META_KEY].decode())
        if meta.get("fingerprint") != fingerprint or table.column_names != PROFILE_COLUMNS:
            return None
        return conform(table.to_pandas()), meta
    except Exception:  # corrupt or foreign file: rebuild
        return None


def write_cache(path: Path, df: pd.DataFrame, meta: dict[str, Any]) -> str | None:
    """Write ``df`` + ``meta`` atomically; returns an error message instead of raising."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(df, preserve_index=False)
        md = dict(table.schema.metadata or {})
        md[_META_KEY] = json.dumps(meta).encode()
        table = table.replace_schema_metadata(md)
        atomic_write(path, lambda p: pq.write_table(table, p, compression="lz4"))
        _prune(path)
        return None
    except Exception as exc:  # read-only home, full disk ...: loading still works
        return f"could not write the cache {str(path)!r}: {type(exc).__name__}: {exc}"


def _prune(keep: Path) -> None:
    others = sorted(
        (p for p in keep.parent.glob("profiles-*.parquet") if p != keep), key=lambda p: p.stat().st_mtime, reverse=True
    )
    for p in others[_KEEP_CACHES - 1 :]:
        try:
            p.unlink()
        except OSError:
            pass
