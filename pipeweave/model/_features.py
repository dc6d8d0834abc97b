"""The model's input matrix: analytical features + family/source indicators (+ optional SASS).

The target is dimensionless: ``log(latency_us / t_env_us)``, the log of measured time over the
analytical pipeline-envelope estimate, so trees learn efficiency corrections that carry across
GPUs instead of absolute hardware scale. Family and source enter as one-hot indicators (the
source encodes the timing method: CUDA-graph replay vs CUDA events around one launch).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._frame import str_values

from ..frontend import FEATURES, FAMILIES, featurize

__all__ = ["ensure_features", "design_matrix", "KNOWN_SOURCES", "KNOWN_BACKENDS", "model_feature_names", "SASS_PREFIX",
           "attach_sass_features", "SASS_FAMILIES"]

#: families whose measured kernel is a Triton kernel pipeweave ships SASS mixes for
SASS_FAMILIES: tuple[str, ...] = ("moe_w13", "fused_moe")

KNOWN_SOURCES: tuple[str, ...] = ("aiconfigurator", "pipeweave")
#: attention kernel implementations in the profiles (the ``backend`` column): a property of the
#: launch the user knows (which kernel runs), not of the GPU; rows without one get all zeros
KNOWN_BACKENDS: tuple[str, ...] = ("flash_attention", "trtllm_mha", "triton")
DEFAULT_ATTENTION_BACKEND = "flash_attention"
SASS_PREFIX = "sass_"


def model_feature_names(sass_columns: list[str] | None = None, drop: tuple[str, ...] = ()) -> list[str]:
    """Ordered feature names: analytical FEATURES, family, source and backend one-hots, SASS columns."""
    names = [f for f in FEATURES if f not in drop]
    names += [f"family_{f}" for f in FAMILIES]
    names += [f"source_{s}" for s in KNOWN_SOURCES]
    names += [f"backend_{b}" for b in KNOWN_BACKENDS if f"backend_{b}" not in drop]
    names += list(sass_columns or [])
    return names


def ensure_features(df: pd.DataFrame, **kwargs: object) -> pd.DataFrame:
    """Return ``df`` joined with its analytical features (computed once; reused if present)."""
    if "t_env_us" in df.columns:
        return df
    feats = featurize(df, **kwargs)
    keep = df.drop(columns=[c for c in feats.columns if c in df.columns])
    return pd.concat([keep, feats], axis=1)


def design_matrix(df: pd.DataFrame, names: list[str]) -> np.ndarray:
    """Float32 matrix of ``names`` for featurized rows (one-hots built from family/source)."""
    fam = str_values(df["family"])
    src = str_values(df["source"]) if "source" in df.columns else np.full(len(df), KNOWN_SOURCES[0])
    backend = str_values(df["backend"]) if "backend" in df.columns else np.full(len(df), "nan", dtype=object)
    # an attention launch always runs some implementation: unspecified means FlashAttention
    unspecified = np.char.startswith(fam.astype(str), "attention") & np.isin(backend, ["nan", "None", ""])
    backend = np.where(unspecified, DEFAULT_ATTENTION_BACKEND, backend)
    cols = []
    for name in names:
        if name.startswith("family_"):
            cols.append((fam == name[len("family_"):]).astype(np.float32))
        elif name.startswith("source_"):
            cols.append((src == name[len("source_"):]).astype(np.float32))
        elif name.startswith("backend_"):
            cols.append((backend == name[len("backend_"):]).astype(np.float32))
        elif name in df.columns:
            cols.append(pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=np.float32))
        else:
            cols.append(np.full(len(df), np.nan, dtype=np.float32))
    return np.column_stack(cols) if cols else np.empty((len(df), 0), dtype=np.float32)


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
