"""Triton autotune cache (``@triton.autotune(..., cache_results=True)``) -> canonical tile-sweep rows.

Triton (3.x, ``triton/runtime/autotuner.py``, ``Autotuner.check_disk_cache``) writes one
``<kernel>.autotune.json`` per tuning key into its cache directory
(``~/.triton/cache/<hash>/``)::

    {"key": [4096, 4096, 4096, "torch.bfloat16", "torch.bfloat16", "torch.bfloat16"],
     "configs_timings": [[{"kwargs": {"BLOCK_SIZE_M": 128, ...}, "num_warps": 8, "num_ctas": 1,
                           "num_stages": 3, "maxnreg": null, ...}, [0.412, 0.409, 0.418]], ...]}

``key`` is the values of the autotuner's ``key`` arguments followed by the dtype of every tensor
argument; each timing is ``triton.testing.do_bench(..., quantiles=(0.5, 0.2, 0.8))`` in
**milliseconds** (a config that failed to compile or run has ``Infinity``). Each config with a
finite time becomes one row (latency = the median, in us; ``timing = "triton_do_bench"``).
The file names neither the GPU nor the family: pass them (``--gpu``, ``--family``); ``--key``
names the shape column of each leading key entry (e.g. ``m,n,k``, or for the fused-MoE kernel
``num_tokens,...``; ``_`` ignores an entry). ``--dtype`` defaults to the first tensor dtype in the key.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .._errors import DataError, PipeweaveError
from .._io import read_error_text
from ..vocab import canonical_dtype
from ._files import input_file
from ._kineto import TORCH_DTYPES

__all__ = ["TILE_NAMES", "autotune_files", "import_triton_autotune"]

_WHICH_FILE = "pass the <kernel>.autotune.json written by cache_results=True"
#: the columns every autotune row gets from the file and its config (``fixed`` may not set them)
_OWN_COLUMNS = ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages", "timing")


def autotune_files(path: str | os.PathLike[str]) -> list[Path]:
    """``[path]`` for a file; the ``*.autotune.json`` files under a directory (a Triton cache directory, or
    ``~/.triton/cache`` with one sub-directory per kernel hash), sorted."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    found = sorted(f for f in p.rglob("*.autotune.json") if f.is_file())
    kernels = sorted({f.name[: -len(".autotune.json")] for f in found})
    if len(kernels) > 1:  # one family and one key mapping cannot describe two kernels' files
        raise DataError(
            f"directory {str(p)!r} holds the autotune files of {len(kernels)} kernels {kernels}",
            hint="import one kernel at a time: pass its <kernel>.autotune.json files (each with its own family "
            "and key names)",
        )
    if not found:
        raise DataError(
            f"directory {str(p)!r} holds no *.autotune.json file",
            hint="run the kernel with @triton.autotune(..., cache_results=True), then pass its Triton cache "
            "directory (~/.triton/cache/<hash>/) or the <kernel>.autotune.json file",
        )
    return found


#: Triton config names -> tile-plan column
TILE_NAMES: dict[str, str] = {
    "BLOCK_SIZE_M": "block_m",
    "BLOCK_M": "block_m",
    "BLOCK_SIZE_N": "block_n",
    "BLOCK_N": "block_n",
    "BLOCK_SIZE_K": "block_k",
    "BLOCK_K": "block_k",
    "GROUP_SIZE_M": "group_m",
    "GROUP_M": "group_m",
    "BM": "block_m",
    "BN": "block_n",
    "BK": "block_k",
    "GM": "group_m",
}
#: config names that split the reduction across CTAs: a value above 1 is a launch the tile plan does not describe
SPLIT_NAMES: tuple[str, ...] = ("SPLIT_K", "SPLITK", "SPLIT_K_FACTOR")


def import_triton_autotune(
    path: str | os.PathLike[str],
    *,
    gpu: str | None,
    family: str | None,
    key: Sequence[str],
    dtype: str | None = None,
    fixed: dict[str, object] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows, skipped) from one ``*.autotune.json``; ``fixed`` adds constant columns (e.g. topk)."""
    try:
        return _import_triton_autotune(path, gpu=gpu, family=family, key=key, dtype=dtype, fixed=fixed)
    except PipeweaveError:  # already says what is wrong (DataError is a ValueError too)
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:  # a field of an unexpected type
        raise DataError(
            f"{Path(path).name}: a malformed autotune entry ({exc})",
            hint="pass the file Triton wrote (@triton.autotune(..., cache_results=True)); an edited file cannot be read",
        ) from None


def _import_triton_autotune(
    path: str | os.PathLike[str],
    *,
    gpu: str | None,
    family: str | None,
    key: Sequence[str],
    dtype: str | None = None,
    fixed: dict[str, object] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    path = Path(path)
    if not gpu or not family:  # say only what is missing
        what = (
            "names neither the GPU nor the kernel family"
            if not gpu and not family
            else f"does not name the {'GPU' if not gpu else 'kernel family'}"
        )
        need = [
            p for p, miss in (("gpu= (a catalog name or a spec .toml path)", not gpu), ("family=", not family)) if miss
        ]
        raise DataError(f"{str(path)!r}: a Triton autotune cache {what}", hint=f"pass {' and '.join(need)}")
    if not key:
        raise DataError(
            "key (the shape column names) is required for triton-autotune files",
            hint="name the shape column of each key entry, e.g. key=('m', 'n', 'k')",
        )
    path = input_file(
        path,
        "autotune file",
        hint=_WHICH_FILE,
        directory_hint="pass the <kernel>.autotune.json files in it (import_profiles searches a directory for them)",
    )
    try:
        with open(path, encoding="utf-8-sig") as fh:
            data = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(
            f"{str(path)!r} is not JSON ({read_error_text(exc)})",
            hint=_WHICH_FILE,
        ) from None
    if not isinstance(data, dict) or "key" not in data or "configs_timings" not in data:
        raise DataError(
            f"{str(path)!r} lacks 'key' / 'configs_timings': not a Triton autotune cache file",
            hint=_WHICH_FILE,
        )
    from ..sources import FAMILY_KEY_COLUMNS

    known = FAMILY_KEY_COLUMNS.get(str(family))
    odd = [k for k in key if known is not None and k != "_" and k not in known]
    if odd:
        raise DataError(
            f"key names {odd} are not shape columns of family {family!r}",
            hint=f"name each key entry one of {list(known or ())}, or _ to ignore it",
        )
    kvals = list(data["key"]) if isinstance(data["key"], (list, tuple)) else [data["key"]]
    if len(key) > len(kvals):
        raise DataError(
            f"key names {len(key)} entries but {path.name} has a key of {len(kvals)}: {kvals}",
            hint="give one name (or _) per leading key entry",
        )
    unnamed = [v for v in kvals[len(key) :] if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if unnamed:  # a shape entry left unnamed would be dropped, and the rows would describe another launch
        raise DataError(
            f"key names {len(key)} entries but {path.name}'s key {kvals} has {len(unnamed)} more number(s) "
            f"{unnamed} after them",
            hint="give one name (or _ to ignore it) per number of the key, in order",
        )
    shape: dict[str, object] = {}
    for name, val in zip(key, kvals):
        if name != "_":
            shape[name] = float(val) if isinstance(val, (int, float)) else val
    clash = [c for c in (fixed or {}) if c in shape or c in _OWN_COLUMNS]
    if clash:
        given = ", ".join(
            f"{c}={(fixed or {})[c]!r} (the file has {shape[c]!r})" if c in shape else f"{c}={(fixed or {})[c]!r}"
            for c in clash
        )
        raise DataError(
            f"the fixed argument gives {given}, which {path.name} already provides (its key or its configs)",
            hint="leave those columns out of the fixed argument: each row takes them from the file",
        )
    own = next((TORCH_DTYPES[str(v)] for v in kvals[len(key) :] if str(v) in TORCH_DTYPES), None)
    dtype = None if dtype is None else canonical_dtype(dtype)  # bf16 -> bfloat16, as every importer writes it
    if dtype is not None and own is not None and dtype != own:
        raise DataError(
            f"dtype={dtype!r} would override what {path.name} gives (its key's first tensor dtype is {own!r})",
            hint="leave dtype out: each row takes it from the file",
        )
    if dtype is None:
        dtype = own
        if dtype is None:
            raise DataError(
                f"{path.name}: no bf16/fp16 tensor dtype in the key {kvals}", hint="pass dtype= (e.g. 'bfloat16')"
            )
    rows, skipped = [], []
    unread: set[str] = set()  # config names that are neither tile sizes nor split-K (EVEN_K, ...): not modelled
    for i, item in enumerate(data["configs_timings"]):
        try:
            cfg, times = item
            t = float(times[0] if isinstance(times, (list, tuple)) else times)
        except (TypeError, ValueError, IndexError):
            skipped.append((f"config {i}", f"unreadable entry {item!r:.80}"))
            continue
        kw = dict(cfg.get("kwargs") or {})
        label = ",".join(f"{k}={v}" for k, v in kw.items()) + f",num_warps={cfg.get('num_warps')}"
        if not math.isfinite(t) or t <= 0:
            skipped.append((label, "config failed to compile or run (time is inf)"))
            continue
        split = next((kw[k] for k in SPLIT_NAMES if k in kw and float(kw[k]) > 1), None)
        if split is not None:
            skipped.append((label, f"split-K {split}: the tile plan describes one CTA per output tile"))
            continue
        unread.update(k for k in kw if k not in TILE_NAMES and k not in SPLIT_NAMES)
        row: dict[str, object] = {
            "gpu": gpu,
            "family": family,
            "dtype": dtype,
            **shape,
            **(fixed or {}),
            "latency_us": float(f"{t * 1000.0:.12g}"),  # ms -> us without binary noise (30.2, not 30.200000000000003)
            "timing": "triton_do_bench",
        }
        for k, v in kw.items():
            if k in TILE_NAMES:
                row[TILE_NAMES[k]] = float(v)
        row["num_warps"] = float(cfg.get("num_warps", 4))
        row["num_stages"] = float(cfg.get("num_stages", 3))
        if "group_m" not in row:
            row["group_m"] = 1.0
        rows.append(row)
    if unread:
        import warnings

        warnings.warn(
            f"{path.name}: config parameters {sorted(unread)} are not tile-plan columns and are not modelled "
            f"(read: {sorted(TILE_NAMES)}, num_warps, num_stages)",
            UserWarning,
            stacklevel=3,
        )
    skip = pd.DataFrame(skipped, columns=["kernel", "reason"]).assign(count=1)
    skip.insert(0, "file", path.name)
    return pd.DataFrame(rows), skip
