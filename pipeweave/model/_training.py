"""Training-data preparation shared by `train`, `evaluate` and `diagnose`.

:func:`prepare_training_frame` featurizes profile rows once and drops, with counted reasons,
rows that no latency model should learn from: rows measured faster than the physical lower
bound allows (``latency_us < t_lower_us / IMPOSSIBLE_FACTOR``: e.g. B200 ``trtllm_mha``
long-context prefill rows reporting 10x the chip's tensor peak, which are not the stated causal
attention) and rows of families or dtypes a caller excluded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._features import ensure_features

__all__ = ["prepare_training_frame", "cap_rows", "IMPOSSIBLE_FACTOR", "below_lower_bound"]

#: A row is physically impossible when measured < lower bound / this factor (1.5 = 50% margin
#: for spec-sheet clock/bandwidth slack and measurement noise).
IMPOSSIBLE_FACTOR: float = 1.5


def below_lower_bound(latency_us: np.ndarray, lower_us: np.ndarray) -> tuple[np.ndarray, str]:
    """(mask of the rows measured faster than their launch's physical lower bound allows, a unit note).

    A row is impossible when ``latency_us * IMPOSSIBLE_FACTOR < lower_us`` (both microseconds). The note is
    ``"; a median Nx under it: latency_us looks like milliseconds (x1000)"`` when the impossible rows sit a
    median of more than 100x under their bound (a unit slip, not a few odd rows), else ``""``.
    """
    lat = np.asarray(latency_us, dtype=float)
    lower = np.asarray(lower_us, dtype=float)
    mask = lat * IMPOSSIBLE_FACTOR < lower
    note = ""
    if mask.any():
        ratio = float(np.median(lower[mask] / lat[mask]))
        if ratio > 100:
            note = f"; a median {ratio:,.0f}x under it: latency_us looks like milliseconds (x1000)"
    return mask, note


def prepare_training_frame(
    df: pd.DataFrame, *, progress: bool = False, **featurize_kwargs: object
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Featurize ``df`` and drop physically impossible rows.

    Returns ``(frame, drops)`` where ``drops`` counts dropped rows per (source, family, dtype,
    gpu, reason).
    """
    frame = ensure_features(df.reset_index(drop=True), **featurize_kwargs)
    impossible, _ = below_lower_bound(
        frame["latency_us"].to_numpy(dtype=float), frame["t_lower_us"].to_numpy(dtype=float)
    )
    drops = (
        frame.loc[impossible, ["source", "family", "dtype", "gpu"]]
        .astype(str)
        .value_counts()
        .rename("rows")
        .reset_index()
    )
    drops["reason"] = f"faster than the physical lower bound / {IMPOSSIBLE_FACTOR}"
    return frame.loc[~impossible].reset_index(drop=True), drops


def cap_rows(
    df: pd.DataFrame, max_rows: int, *, by: tuple[str, ...] = ("gpu", "family", "dtype", "source"), seed: int = 0
) -> pd.DataFrame:
    """At most ``max_rows`` seeded-random rows per group ``by`` (all rows of smaller groups)."""
    key = np.random.default_rng(seed).random(len(df))
    groups = [df[c].astype(str).to_numpy() for c in by if c in df.columns]
    rank = pd.Series(key, index=df.index).groupby(groups).rank(method="first")
    return df[(rank <= max_rows).to_numpy()]
