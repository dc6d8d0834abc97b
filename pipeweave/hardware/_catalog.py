"""The GPU catalog (``datasets/gpus.toml``), name resolution and user spec files."""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .._errors import DataError, PipeweaveError, UnknownGPUError, shown
from .._paths import DATASETS_DIR
from ._spec import (
    OPTIONAL_SPEC_FIELDS,
    REQUIRED_SPEC_FIELDS,
    SPEC_FIELDS,
    GPUSpec,
)

__all__ = [
    "CATALOG_PATH",
    "list_gpus",
    "gpu_names",
    "resolve_gpu_name",
    "resolve_gpu_names",
    "get_gpu",
    "load_spec_file",
    "spec_from_dict",
    "gpu_frame",
    "generation_of",
    "EXAMPLE_SPEC_PATH",
    "spec_to_toml",
    "suggest_gpu_names",
]

#: The catalog file.
CATALOG_PATH: Path = DATASETS_DIR / "gpus.toml"
#: A complete user spec file (a GeForce RTX 4090 from public numbers), the template error messages point at.
EXAMPLE_SPEC_PATH: Path = DATASETS_DIR / "example_gpu_spec.toml"
_SPEC_SUFFIXES = (".toml", ".json")
_NORM_RE = re.compile(r"[\s_\-]+")


def _norm(name: str) -> str:
    """Normalise a GPU name: lower case, no spaces/underscores/dashes, no leading 'nvidia'."""
    s = _NORM_RE.sub("", str(name).strip().lower())
    return s[len("nvidia") :] if s.startswith("nvidia") and len(s) > len("nvidia") else s


# --------------------------------------------------------------------------- spec parsing
def spec_from_dict(table: Mapping[str, Any], *, origin: str = "spec") -> GPUSpec:
    """Build a :class:`GPUSpec` from a mapping with the catalog's keys.

    Raises :class:`DataError` listing missing and unknown keys (and the expected keys).
    """
    if not isinstance(table, Mapping):
        raise DataError(
            f"{origin}: a GPU spec must be a table of fields, got {type(table).__name__}",
            hint=f"give a dict (or a TOML [gpu] table) of the spec fields; see {EXAMPLE_SPEC_PATH} for a complete one",
        )
    keys = set(table)
    missing = [k for k in REQUIRED_SPEC_FIELDS if k not in keys]
    unknown = sorted(keys - set(SPEC_FIELDS))
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing key(s) {missing}")
        if unknown:
            parts.append(f"unknown key(s) {unknown}")
        raise DataError(
            f"{origin}: GPU spec {table.get('name', '?')!r} has "
            + " and ".join(parts)
            + f"; expected keys {list(REQUIRED_SPEC_FIELDS)} (optional: {list(OPTIONAL_SPEC_FIELDS)})",
            hint=f"see {EXAMPLE_SPEC_PATH} for a complete spec file, or start from a catalog entry "
            "(pipeweave.hardware.spec_to_toml)",
        )
    try:
        return GPUSpec(**dict(table))
    except DataError as exc:  # GPUSpec's field checks: name the file, keep their fix
        raise DataError(
            f"{origin}: {getattr(exc, 'message', exc)}",
            hint=exc.hint or f"correct that field (see {EXAMPLE_SPEC_PATH} for a complete spec)",
        ) from None


def spec_to_toml(spec: GPUSpec, *, name: str | None = None) -> str:
    """``spec`` as the text of a spec file (a ``[gpu]`` table that :func:`load_spec_file` reads back).

    ``name`` renames it (a changed copy of a catalog GPU needs a name of its own); the copy drops the
    catalog entry's aliases, which belong to the measured GPU.
    """

    def key(k: Any) -> str:  # a bare TOML key, else a quoted one ("a.b" would be a dotted key)
        return str(k) if re.fullmatch(r"[A-Za-z0-9_-]+", str(k)) else json.dumps(str(k))

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(int(v)) if float(v).is_integer() else repr(float(v))
        if isinstance(v, Mapping):
            return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(str(v))  # a TOML basic string: JSON's escapes are TOML's

    table = spec.to_dict()
    origin = table["name"]
    if name is not None:
        table["name"] = name
    copy = name is not None or origin in _by_name()
    if copy:
        table["aliases"] = []
    lines = [
        f"# GPU spec file{f' copied from the catalog entry {origin}' if origin in _by_name() else ''}: keys and "
        "units as in datasets/gpus.toml.",
        "# Give a changed copy its own name; keep a public source per value you change (sources table).",
        *(
            [
                f"# What-if studies: the model never measured {table['name']!r} (its new-GPU path and error band), so",
                f"# compare an edited copy with this unedited one, not with {origin}: a copy differs from {origin} by",
                "# its name alone (a GPU the model trained on has seen-GPU predictions).",
            ]
            if table["name"] != origin
            else []
        ),
        "",
        "[gpu]",
    ]
    lines += [f"{k} = {value(v)}" for k, v in table.items() if not (k in ("aliases", "notes") and not v)]
    return "\n".join(lines) + "\n"


def load_spec_file(path: str | os.PathLike[str]) -> GPUSpec:
    """Load a user GPU spec file.

    TOML: a single ``[gpu]`` table, or the fields at top level. JSON: an object with the fields,
    or ``{"gpu": {...}}``. Keys are those of the catalog (``datasets/gpus.toml``).
    """
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{str(path)!r} is a directory, not a GPU spec file", hint="give a .toml or .json spec file")
    if path.suffix.lower() not in _SPEC_SUFFIXES:
        raise DataError(
            f"GPU spec file {str(path)!r} must be .toml or .json, got {path.suffix or 'no suffix'!r}",
            hint=f"write the spec as TOML (see {EXAMPLE_SPEC_PATH}) or JSON",
        )
    if not path.is_file():
        raise DataError(
            f"GPU spec file not found: {str(path)!r}",
            hint="pass a catalog name (see `pipeweave gpus`) or an existing .toml/.json spec file",
        )
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
        else:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(
            f"GPU spec file {str(path)!r} could not be parsed: {exc}",
            hint=f"fix the syntax at the line and column named; see {EXAMPLE_SPEC_PATH} for a valid spec file",
        ) from None
    if isinstance(data, Mapping) and "gpu" in data:
        table = data["gpu"]
        if isinstance(table, list):
            if len(table) != 1:
                raise DataError(
                    f"GPU spec file {str(path)!r} holds {len(table)} [[gpu]] tables; expected exactly one [gpu] table",
                    hint="write one spec file per GPU, each with a single [gpu] table",
                )
            table = table[0]
        extra = sorted(set(data) - {"gpu"})
        if extra:
            raise DataError(
                f"GPU spec file {str(path)!r}: unknown top-level key(s) {extra} next to [gpu]; "
                "expected only the [gpu] table",
                hint=f"move {extra} below the [gpu] header (or delete them); see {EXAMPLE_SPEC_PATH}",
            )
    else:
        table = data
    spec = spec_from_dict(table, origin=f"GPU spec file {str(path)!r}")
    _refuse_shadowing(spec, path)
    return spec


def _refuse_shadowing(spec: GPUSpec, path: Path) -> None:
    """A spec file may repeat a catalog GPU's numbers, but not redefine its name or aliases with others."""
    for n in (spec.name, *spec.aliases):
        try:
            cat = resolve_gpu_name(n)
        except PipeweaveError:
            continue
        if _by_name()[cat].flat() | {"name": ""} != spec.flat() | {"name": ""}:
            raise DataError(
                f"GPU spec file {str(path)!r} names {n!r}, which is the catalog GPU {cat!r}, with other "
                f"numbers; a spec file may not silently replace a catalog GPU",
                hint=f'rename it (e.g. name = "{spec.name}-custom", no catalog aliases) to predict '
                f"with your numbers, or use the catalog GPU {cat!r} itself",
            )


# --------------------------------------------------------------------------- catalog
@functools.lru_cache(maxsize=1)
def _catalog() -> tuple[tuple[GPUSpec, ...], dict[str, str], dict[str, str]]:
    """Parse the catalog once: (specs, exact-name map, normalised-name map) -> canonical name."""
    try:
        with CATALOG_PATH.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise DataError(
            f"GPU catalog not found at {str(CATALOG_PATH)!r}; the repository is incomplete",
            hint="restore datasets/gpus.toml (git checkout -- datasets/gpus.toml) or reinstall pipeweave",
        ) from None
    tables = data.get("gpu")
    if not isinstance(tables, list) or not tables:
        raise DataError(
            f"GPU catalog {str(CATALOG_PATH)!r} has no [[gpu]] tables",
            hint="restore datasets/gpus.toml (git checkout -- datasets/gpus.toml) or reinstall pipeweave",
        )
    specs = tuple(spec_from_dict(t, origin=f"GPU catalog {CATALOG_PATH.name}") for t in tables)
    exact: dict[str, str] = {}
    normed: dict[str, str] = {}
    for spec in specs:
        for alias in (spec.name, *spec.aliases):
            for table_, key in ((exact, alias), (normed, _norm(alias))):
                prev = table_.get(key)
                if prev is not None and prev != spec.name:
                    raise DataError(
                        f"GPU catalog {CATALOG_PATH.name}: name {alias!r} is claimed by both {prev!r} and {spec.name!r}",
                        hint=f"remove {alias!r} from the aliases of one of the two [[gpu]] tables in {CATALOG_PATH}",
                    )
                table_[key] = spec.name
    return specs, exact, normed


def _by_name() -> dict[str, GPUSpec]:
    return {s.name: s for s in _catalog()[0]}


def list_gpus() -> list[GPUSpec]:
    """All catalog GPUs, in catalog order."""
    return list(_catalog()[0])


def gpu_names() -> list[str]:
    """Canonical catalog names, in catalog order."""
    return [s.name for s in _catalog()[0]]


def resolve_gpu_name(name: str) -> str:
    """Canonical catalog name for ``name`` (a canonical name, an alias or a device string).

    Exact matches first; then case-insensitive, ignoring spaces/underscores/dashes and a leading
    "NVIDIA". Raises :class:`UnknownGPUError` listing the valid names and close matches.
    """
    if not isinstance(name, str):
        raise UnknownGPUError(
            f"GPU name must be a string, got {name!r} ({type(name).__name__})",
            hint="pass a catalog name or alias such as 'H100' (pipeweave.list_gpus() lists them)",
        )
    return _resolve(name)


@functools.lru_cache(maxsize=4096)
def _resolve(name: str) -> str:
    _, exact, normed = _catalog()
    hit = exact.get(name.strip()) or normed.get(_norm(name))
    if hit is not None:
        return hit
    suggest = suggest_gpu_names(name)
    msg = f"unknown GPU {shown(name)}; valid names are {gpu_names()}"
    if suggest:
        msg += f"; did you mean {suggest}?"
    raise UnknownGPUError(
        msg,
        hint=f"run `pipeweave gpus` for the catalog and aliases, or pass a .toml spec file (see {EXAMPLE_SPEC_PATH})",
    )


def suggest_gpu_names(name: str) -> list[str]:
    """Catalog names close to an unknown GPU ``name`` (at most 5): those holding its product number and every
    other token ("a100 80gb" -> the two 80 GB A100s; "H100 PCIe" -> H100-SXM), else close spellings
    ("H1OO" -> H100-SXM)."""
    _, _, normed = _catalog()
    text = str(name).strip().lower()
    tokens = [t for t in re.findall(r"[a-z]*\d+[a-z]*|[a-z]+", text) if t != "nvidia"]
    product = [t for t in tokens if re.search(r"\d", t)]
    hits: list[str] = []
    for want in (tokens, product[:1]):  # every token, else the product number alone
        if want:
            hits = [normed[k] for k in normed if all(t in k for t in want)]
        if hits:
            break
    if hits:
        return list(dict.fromkeys(hits))[:5]
    close: list[str] = []
    for cutoff in (0.6, 0.5):  # "h1oo" is 0.5 from "h100"
        close = difflib.get_close_matches(_norm(name), list(normed), n=5, cutoff=cutoff)
        if close:
            break
    return list(dict.fromkeys(normed[c] for c in close))


def match_gpu_name(name: str, specs: Iterable[GPUSpec]) -> str | None:
    """The name of the first of ``specs`` (e.g. spec-file GPUs) that ``name`` denotes, by its name or an
    alias, compared like catalog names (case, spaces, underscores, dashes and a leading "NVIDIA" ignored);
    None when none does."""
    key = _norm(name)
    for spec in specs:
        if any(_norm(a) == key for a in (spec.name, *spec.aliases)):
            return spec.name
    return None


def resolve_gpu_names(names: Iterable[str] | pd.Series) -> pd.Series | list[str]:
    """Resolve many names at once (each distinct value once). A Series gives a Series back."""
    if isinstance(names, str):
        raise UnknownGPUError(
            f"resolve_gpu_names takes a list of names, got the string {names!r}",
            hint=f"resolve_gpu_name({names!r}) resolves one name, resolve_gpu_names([{names!r}]) a list",
        )
    if isinstance(names, pd.Series):
        uniq = names.dropna().unique()
        mapping = {u: resolve_gpu_name(u) for u in uniq}
        return names.map(mapping)
    names = list(names)
    mapping = {u: resolve_gpu_name(u) for u in dict.fromkeys(names)}
    return [mapping[n] for n in names]


def _looks_like_path(s: str) -> bool:
    return s.lower().endswith(_SPEC_SUFFIXES) or os.sep in s or (os.altsep is not None and os.altsep in s)


def get_gpu(name_or_path: str | os.PathLike[str] | GPUSpec) -> GPUSpec:
    """A :class:`GPUSpec` from a catalog name/alias, or from a .toml/.json spec file path.

    A GPUSpec passes through, unless it carries a catalog GPU's name with other numbers (e.g.
    ``dataclasses.replace(get_gpu("H100"), sm_count=66)``): the model would take it for the GPU it was
    measured on, so it must have a name of its own (as a spec file must).
    """
    if isinstance(name_or_path, GPUSpec):
        listed = _by_name().get(name_or_path.name)
        if listed is not None and listed != name_or_path:
            changed = [
                f
                for f in SPEC_FIELDS
                if f not in ("aliases", "sources", "notes") and getattr(listed, f) != getattr(name_or_path, f)
            ]
            if changed:
                raise DataError(
                    f"GPUSpec {name_or_path.name!r} differs from the catalog's {name_or_path.name} in {changed}: "
                    "predictions would treat it as the measured catalog GPU",
                    hint=f"give it its own name, e.g. dataclasses.replace(spec, name='{name_or_path.name}-custom')",
                )
        return name_or_path
    if isinstance(name_or_path, os.PathLike):
        return load_spec_file(name_or_path)
    if not isinstance(name_or_path, str):
        raise UnknownGPUError(
            f"expected a GPU name or spec-file path, got {name_or_path!r} ({type(name_or_path).__name__})",
            hint="pass a catalog name such as 'H100' (pipeweave.list_gpus() lists them), the path of a .toml/.json "
            f"spec file (see {EXAMPLE_SPEC_PATH}) or a GPUSpec",
        )
    if _looks_like_path(name_or_path) and (
        Path(name_or_path).is_file()
        or Path(name_or_path).is_dir()
        or name_or_path.lower().endswith((*_SPEC_SUFFIXES, ".yaml", ".yml"))
    ):
        return load_spec_file(name_or_path)
    return _by_name()[resolve_gpu_name(name_or_path)]


def generation_of(name: str) -> str:
    """Generation (``ampere``, ``ada``, ``hopper``, ``blackwell``) of a catalog GPU or alias."""
    return _by_name()[resolve_gpu_name(name)].generation


@functools.lru_cache(maxsize=256)
def _frame(names: tuple[str, ...]) -> pd.DataFrame:
    by = _by_name()
    rows = [by[n].flat() for n in names]
    df = pd.DataFrame(rows, index=pd.Index(names, name="gpu"))
    return df


def gpu_frame(names: Iterable[str | GPUSpec] | None = None) -> pd.DataFrame:
    """Spec table: one row per GPU (indexed by canonical name, index name ``gpu``), ``flat()`` columns.

    ``names`` may hold aliases (resolved, duplicates dropped) or :class:`GPUSpec` objects (e.g. from a
    spec file); ``None`` gives the whole catalog. The result is a fresh copy (safe to modify).
    """
    if names is None:
        return _frame(tuple(gpu_names())).copy()
    items = [names] if isinstance(names, (str, GPUSpec)) else list(names)
    if all(isinstance(x, str) for x in items):
        canon = tuple(dict.fromkeys(resolve_gpu_name(str(x)) for x in items))
        return _frame(canon).copy()
    specs = [get_gpu(x) for x in items]
    uniq = list({s.name: s for s in specs}.values())
    df = pd.DataFrame([s.flat() for s in uniq], index=pd.Index([s.name for s in uniq], name="gpu"))
    return df
