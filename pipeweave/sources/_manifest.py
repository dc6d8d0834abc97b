"""Source manifests (``datasets/sources/*.toml``): where a source's files are and how its columns map.

The manifests are the single place that knows a source's file layout and column names; the
loaders only interpret them. See the header of ``datasets/sources/aiconfigurator.toml`` for the
format.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .._errors import DataError
from .._paths import DATASETS_DIR
from ._schema import FAMILIES, PROFILE_COLUMNS

__all__ = ["MANIFEST_DIR", "DatasetSpec", "SourceManifest", "load_manifests", "get_manifest", "manifests_digest"]

MANIFEST_DIR: Path = DATASETS_DIR / "sources"

_LATENCY_TO_US: dict[str, float] = {"s": 1e6, "ms": 1e3, "us": 1.0, "ns": 1e-3}


@dataclass(frozen=True)
class DatasetSpec:
    """One file group of a source and its mapping onto the canonical profile columns."""

    source: str
    name: str
    family: str
    files: tuple[str, ...]
    latency_column: str
    latency_factor_us: float  # multiply the source latency by this to get microseconds
    gpu_column: str  # source column or "@field" from path_regex
    columns: dict[str, str]  # canonical -> source column or "@field"
    optional: dict[str, tuple[str, Any]] = field(default_factory=dict)  # canonical -> (column, default)
    constants: dict[str, Any] = field(default_factory=dict)
    keep: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # source column -> allowed values
    values: dict[str, dict[str, Any]] = field(default_factory=dict)  # canonical col -> {raw: canonical}
    path_regex: str | None = None
    membership: tuple[str, dict[str, str]] | None = None  # ("@field", {value: bool column})
    timing: str = ""
    note: str = ""
    transform: str = ""  # name in pipeweave.sources._transforms.TRANSFORMS ("" = none)
    per_gpu: dict[str, dict[str, Any]] = field(default_factory=dict)  # canonical col -> {gpu | "default": value}

    def source_columns(self) -> list[str]:
        """Source columns that every file of this dataset must contain."""
        from ._transforms import TRANSFORMS

        cols = [self.latency_column, self.gpu_column, *self.columns.values(), *self.keep]
        derived: tuple[str, ...] = ()
        if self.transform:
            cols += list(TRANSFORMS[self.transform].needs)
            derived = TRANSFORMS[self.transform].adds
        return list(dict.fromkeys(c for c in cols if not c.startswith("@") and c not in derived))

    def optional_columns(self) -> list[str]:
        """Source columns read when present."""
        return [col for col, _ in self.optional.values()]


@dataclass(frozen=True)
class SourceManifest:
    """A parsed ``datasets/sources/<name>.toml``."""

    name: str
    kind: str  # "profiles" (latencies) or "tile_configs"
    path: Path
    meta: dict[str, Any]
    datasets: tuple[DatasetSpec, ...]
    raw: dict[str, Any]


def _bad(path: Path, what: str) -> DataError:
    return DataError(
        f"source manifest {str(path)!r}: {what}",
        hint="fix the manifest; the format is described at the top of datasets/sources/aiconfigurator.toml",
    )


def _parse_dataset(path: Path, source: dict[str, Any], d: dict[str, Any], i: int) -> DatasetSpec:
    where = f"[[dataset]] #{i + 1} ({d.get('name', '?')})"
    for key in ("name", "family", "files", "latency_column", "gpu_column"):
        if key not in d:
            raise _bad(path, f"{where} lacks the key {key!r}")
    if d["family"] not in FAMILIES:
        raise _bad(path, f"{where}: family {d['family']!r} is not one of {list(FAMILIES)}")
    unit = d.get("latency_unit", source.get("latency_unit"))
    if unit not in _LATENCY_TO_US:
        raise _bad(path, f"{where}: latency_unit {unit!r} is not one of {list(_LATENCY_TO_US)}")
    files = d["files"]
    files = (files,) if isinstance(files, str) else tuple(files)
    columns = dict(d.get("columns", {}))
    optional = {k: (v["column"], v.get("default")) for k, v in d.get("optional", {}).items()}
    constants = dict(d.get("constants", {}))
    per_gpu = {k: dict(v) for k, v in d.get("per_gpu", {}).items()}
    for name in [*columns, *optional, *constants, *per_gpu]:
        if name not in PROFILE_COLUMNS:
            raise _bad(path, f"{where}: {name!r} is not a canonical profile column (see PROFILE_COLUMNS)")
    if "dtype" not in columns and "dtype" not in constants:
        raise _bad(path, f"{where}: neither [columns] nor [constants] gives 'dtype'")
    membership = None
    if "membership" in d:
        m = d["membership"]
        membership = (m["field"], {str(k): v for k, v in m["columns"].items()})
    fields_needed = [c for c in [d["gpu_column"], *columns.values()] if c.startswith("@")]
    if membership:
        fields_needed.append(membership[0])
    transform = d.get("transform", "")
    if transform:
        from ._transforms import TRANSFORMS

        if transform not in TRANSFORMS:
            raise _bad(path, f"{where}: transform {transform!r} is not one of {sorted(TRANSFORMS)}")
    if fields_needed and not d.get("path_regex"):
        raise _bad(path, f"{where}: uses {fields_needed} but has no path_regex to take them from")
    return DatasetSpec(
        source=source["name"],
        name=d["name"],
        family=d["family"],
        files=files,
        latency_column=d["latency_column"],
        latency_factor_us=_LATENCY_TO_US[unit],
        gpu_column=d["gpu_column"],
        columns=columns,
        optional=optional,
        constants=constants,
        keep={k: tuple(v) for k, v in d.get("keep", {}).items()},
        values={k: dict(v) for k, v in d.get("values", {}).items()},
        path_regex=d.get("path_regex"),
        membership=membership,
        timing=d.get("timing", source.get("timing", "")),
        note=d.get("note", ""),
        transform=transform,
        per_gpu=per_gpu,
    )


def _parse(path: Path) -> SourceManifest:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise _bad(path, f"cannot be read as TOML ({exc})") from exc
    source = raw.get("source")
    if not isinstance(source, dict) or "name" not in source:
        raise _bad(path, "lacks a [source] table with a 'name'")
    kind = source.get("kind", "profiles")
    datasets = tuple(_parse_dataset(path, source, d, i) for i, d in enumerate(raw.get("dataset", [])))
    if kind == "profiles" and not datasets:
        raise _bad(path, "kind = 'profiles' but no [[dataset]] is declared")
    return SourceManifest(name=source["name"], kind=kind, path=path, meta=source, datasets=datasets, raw=raw)


@lru_cache(maxsize=8)
def _load_dir(directory: str, digest: str) -> dict[str, SourceManifest]:
    del digest  # part of the cache key only: re-parse when a manifest changes
    out: dict[str, SourceManifest] = {}
    for path in sorted(Path(directory).glob("*.toml")):
        m = _parse(path)
        if m.name in out:
            raise _bad(path, f"source name {m.name!r} is also declared in {str(out[m.name].path)!r}")
        out[m.name] = m
    return out


def manifests_digest(directory: Path = MANIFEST_DIR) -> str:
    """sha256 over the manifests' names and bytes (changes whenever a mapping changes)."""
    h = hashlib.sha256()
    for path in sorted(Path(directory).glob("*.toml")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def load_manifests(directory: Path = MANIFEST_DIR) -> dict[str, SourceManifest]:
    """All manifests in ``directory`` keyed by source name."""
    if not Path(directory).is_dir():
        raise DataError(
            f"source manifest folder {str(directory)!r} does not exist",
            hint="it ships with the repository (datasets/sources/*.toml); restore it from git",
        )
    return _load_dir(str(directory), manifests_digest(directory))


def get_manifest(name: str, directory: Path = MANIFEST_DIR) -> SourceManifest:
    """The manifest of source ``name``; DataError listing the known sources otherwise."""
    manifests = load_manifests(directory)
    if name not in manifests:
        raise DataError(
            f"no source manifest named {name!r} in {str(directory)!r}; known: {sorted(manifests)}",
            hint=f"use one of {sorted(manifests)}, or add {name}.toml to that folder to describe a new source",
        )
    return manifests[name]
