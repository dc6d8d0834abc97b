"""The model's input matrix: analytical features + family/source indicators (+ optional SASS).

The target is dimensionless: ``log(latency_us / t_env_us)``, the log of measured time over the
analytical pipeline-envelope estimate, so trees learn efficiency corrections that carry across
GPUs instead of absolute hardware scale. Family and source enter as one-hot indicators (the
source encodes the timing method: CUDA-graph replay vs CUDA events around one launch).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._errors import DataError
from .._frame import str_codes, str_values
from ..frontend import FAMILIES, FEATURES, featurize
from ..vocab import ATTENTION_BACKENDS as KNOWN_BACKENDS
from ..vocab import DEFAULT_ATTENTION_BACKEND, SOURCES, attention_backend

__all__ = [
    "ensure_features",
    "design_matrix",
    "KNOWN_SOURCES",
    "KNOWN_BACKENDS",
    "model_feature_names",
    "SASS_PREFIX",
    "attach_sass_features",
    "SASS_FAMILIES",
    "GPU_CONSTANT_FEATURES",
    "gpu_blind_rows",
    "backend_gpu_counts",
    "unsupported_backends",
    "hold_backends",
    "with_extra_features",
    "extra_feature_names",
]

#: families whose measured kernel is a Triton kernel pipeweave ships SASS mixes for
SASS_FAMILIES: tuple[str, ...] = ("moe_w13", "fused_moe")

KNOWN_SOURCES: tuple[str, ...] = SOURCES  # pipeweave.vocab
# KNOWN_BACKENDS (``backend_<name>`` one-hots): the attention kernel that runs, a property of the
# launch the user knows, not of the GPU; non-attention rows get all zeros
SASS_PREFIX = "sass_"


#: features that are one constant per GPU (spec-sheet ratios): the GPU's identity to a tree. The rows
#: of the families in ``PipeweaveRegressor.gpu_blind_families`` (by default
#: ``pipeweave.model.GPU_BLIND_FAMILIES``) get them as missing values, so no booster keys those rows
#: on the GPU
GPU_CONSTANT_FEATURES: tuple[str, ...] = ("l2_bw_over_dram_bw", "log2_ridge_flop_per_byte", "mma_generation")


def gpu_blind_rows(family: pd.Series | np.ndarray, families: tuple[str, ...] | list[str]) -> np.ndarray:
    """Boolean mask of the rows whose ``family`` is one of ``families`` (they see no GPU-constant feature)."""
    codes, labels = str_codes(family)  # one test per distinct family, not per row
    return np.isin(labels, list(families))[codes] if len(codes) else np.zeros(0, dtype=bool)


def model_feature_names(sass_columns: list[str] | None = None, drop: tuple[str, ...] = ()) -> list[str]:
    """Ordered feature names: analytical FEATURES, family, source and backend one-hots, SASS columns."""
    names = [f for f in FEATURES if f not in drop]
    names += [f"family_{f}" for f in FAMILIES]
    names += [f"source_{s}" for s in KNOWN_SOURCES]
    names += [f"backend_{b}" for b in KNOWN_BACKENDS if f"backend_{b}" not in drop]
    names += list(sass_columns or [])
    return names


def ensure_features(df: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
    """Return ``df`` joined with its analytical features (computed once; reused if present).

    Features are reused only when every column :func:`featurize` would add for these options is
    present (a frame featurized with ``baselines=False`` lacks ``t_tilesight_us`` and is completed).
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(
            f"expected a pandas DataFrame of launch rows, got {type(df).__name__}",
            hint="e.g. pd.DataFrame([{'family': 'gemm', 'gpu': 'H100', 'dtype': 'bfloat16', 'm': 4096, 'n': 4096, "
            "'k': 4096}]), or rows read with pipeweave.profiles.read_profiles(path)",
        )
    if _has_features(df, bool(kwargs.get("baselines", True))):
        return df
    feats = featurize(df, **kwargs)
    keep = df.drop(columns=[c for c in feats.columns if c in df.columns])
    return pd.concat([keep, feats], axis=1)


def _has_features(df: pd.DataFrame, baselines: bool) -> bool:
    """Whether ``df`` already holds what ``featurize(..., baselines=baselines)`` adds."""
    return "t_env_us" in df.columns and (not baselines or "t_tilesight_us" in df.columns)


def design_matrix(df: pd.DataFrame, names: list[str], columns: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
    """Float32 matrix of ``names`` for featurized rows (one-hots built from family/source/backend).

    ``columns``: feature arrays in row order (:func:`pipeweave.frontend.feature_arrays`) read
    before ``df``'s columns, so the prediction path needs no featurized DataFrame.
    """
    n = len(df)
    columns = columns or {}

    def codes_of(col: str, default: str) -> tuple[np.ndarray, list[str]]:
        if col not in df.columns:
            return np.zeros(n, dtype=np.int64), [default]
        codes, labels = str_codes(df[col])
        return codes, list(labels)

    fam, fam_names = codes_of("family", "")
    src, src_names = codes_of("source", KNOWN_SOURCES[0])
    bk, bk_names = codes_of("backend", "nan")
    # attention rows whose backend is unspecified run FlashAttention
    attention = np.array([f.startswith("attention") for f in fam_names], dtype=bool)[fam]
    resolved = np.array([attention_backend(b) for b in bk_names], dtype=object)
    unspecified = (resolved != np.array(bk_names, dtype=object))[bk] & attention

    def one_hot(codes: np.ndarray, labels: list[str], value: str) -> np.ndarray:
        return codes == labels.index(value) if value in labels else np.zeros(n, dtype=bool)

    X = np.empty((n, len(names)), dtype=np.float32)
    for j, name in enumerate(names):
        if name.startswith("family_"):
            X[:, j] = one_hot(fam, fam_names, name[len("family_") :])
        elif name.startswith("source_"):
            X[:, j] = one_hot(src, src_names, name[len("source_") :])
        elif name.startswith("backend_"):
            b = name[len("backend_") :]
            X[:, j] = one_hot(bk, bk_names, b) | (unspecified if b == DEFAULT_ATTENTION_BACKEND else False)
        elif name in columns:
            X[:, j] = columns[name]
        elif name in df.columns:
            X[:, j] = pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=np.float32)
        else:
            X[:, j] = np.nan
    return X


def with_extra_features(
    X: np.ndarray,
    names: list[str],
    extras: tuple[str, ...],
    df: pd.DataFrame,
    columns: Mapping[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, list[str]]:
    """``(X, names)`` with the ``extras`` columns (``pipeweave.frontend.EXTRA_FEATURES`` names, read as
    :func:`design_matrix` reads them from ``df`` / ``columns``) inserted after the analytical features: the
    input of a family booster that reads them (``PipeweaveRegressor.family_extra_features``). Unchanged when
    ``extras`` is empty."""
    if not extras:
        return X, names
    at = _extras_at(names)
    values = design_matrix(df, list(extras), columns)
    return np.concatenate([X[:, :at], values, X[:, at:]], axis=1), extra_feature_names(names, extras)


def _extras_at(names: list[str]) -> int:
    """Where a family booster's extra columns go in ``names``: after the analytical features."""
    return next((i for i, n in enumerate(names) if n not in FEATURES), len(names))


def extra_feature_names(names: list[str], extras: tuple[str, ...]) -> list[str]:
    """The feature names of a booster that reads ``extras`` besides ``names`` (:func:`with_extra_features`)."""
    at = _extras_at(names)
    return [*names[:at], *extras, *names[at:]]


def backend_gpu_counts(X: np.ndarray, names: list[str], gpu: Any) -> dict[str, int]:
    """Attention backend -> number of distinct GPUs among the rows whose ``backend_<name>`` column of the
    design matrix ``X`` (columns ``names``) is 1; ``gpu``: the rows' GPU names."""
    gpus = np.asarray(str_values(gpu))
    return {
        n[len("backend_") :]: len(np.unique(gpus[X[:, j] == 1.0]))
        for j, n in enumerate(names)
        if n.startswith("backend_")
    }


def unsupported_backends(gpus_per_backend: Mapping[str, int], min_gpus: Any) -> tuple[str, ...]:
    """The attention backends whose one-hot is held at 0: measured on fewer than ``min_gpus`` (and at least
    one) distinct GPUs, given each backend's GPU count (:func:`backend_gpu_counts`).

    A backend measured on one GPU only is that GPU to a tree: whatever its rows do (a kernel's pathology on
    that architecture, the GPU's own speed) would be carried through the one-hot onto every other GPU
    running the backend.
    """
    if isinstance(min_gpus, (bool, np.bool_)) or not isinstance(min_gpus, (int, np.integer)) or min_gpus < 1:
        raise DataError(
            f"min_backend_gpus must be an integer >= 1, got {min_gpus!r}",
            hint="e.g. min_backend_gpus=2 (the recipe); 1 keeps every attention-backend one-hot",
        )
    return tuple(b for b, n in gpus_per_backend.items() if 0 < int(n) < int(min_gpus))


def hold_backends(X: np.ndarray, names: list[str], backends: tuple[str, ...] | list[str]) -> np.ndarray:
    """``X`` (columns ``names``) with the one-hots ``backend_<b>`` of ``backends`` at 0 (in place)."""
    for b in backends:
        if f"backend_{b}" in names:
            X[:, names.index(f"backend_{b}")] = 0.0
    return X


def attach_sass_features(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` plus numeric ``sass_*`` columns from the shipped instruction-mix cache.

    Rows are matched on (family's builtin kernel, the GPU's arch, dtype, resolved tile plan);
    rows without a cache entry (or of non-Triton families) get NaN. Needs no triton install.
    """
    from ..frontend.sass import arch_for_gpu, load_sass_features

    tri = frame["family"].astype(str).isin(SASS_FAMILIES).to_numpy()
    if not tri.any():
        return frame
    sub = frame.loc[tri]
    gpus = pd.unique(sub["gpu"].astype(str))
    arch = sub["gpu"].astype(str).map({g: arch_for_gpu(g) for g in gpus})
    cols = ["family", "dtype", "block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"]
    sass = load_sass_features(sub[cols].assign(arch=arch.to_numpy()))
    sass = sass[[c for c in sass.columns if pd.api.types.is_numeric_dtype(sass[c])]]
    out = frame.drop(columns=[c for c in sass.columns if c in frame.columns])
    return pd.concat([out, sass.reindex(frame.index)], axis=1)
