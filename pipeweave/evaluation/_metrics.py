"""Error metrics as pure, vectorized functions over arrays (all errors in percent).

``ape`` is the absolute percentage error ``|pred / meas - 1| * 100``. The scalar metrics take
``(pred, meas)`` arrays of latencies in the same unit (microseconds in pipeweave) and propagate
NaN: a NaN prediction gives a NaN metric. :func:`summarize` is the table-level entry point; it
drops rows whose prediction is not finite (a method that failed on a fold), counts them in
``n_missing`` and reports the metrics over the remaining ``n`` rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._errors import DataError

__all__ = [
    "ape",
    "mape",
    "median_ape",
    "p90_ape",
    "within",
    "bootstrap_ci",
    "summarize",
    "METRIC_COLUMNS",
]

ArrayLike = npt.ArrayLike

#: Columns :func:`summarize` adds after the ``by`` columns (errors in %, ``n`` in rows).
METRIC_COLUMNS: tuple[str, ...] = (
    "mape",
    "median_ape",
    "p90_ape",
    "within_10",
    "within_25",
    "n",
    "n_missing",
    "mape_ci95_lo",
    "mape_ci95_hi",
)


def ape(pred: ArrayLike, meas: ArrayLike) -> np.ndarray:
    """Absolute percentage error ``|pred / meas - 1| * 100`` (percent), element-wise.

    ``meas`` must be finite and > 0 (raises :class:`DataError` otherwise); NaN in ``pred`` gives
    NaN. Both arrays must have the same shape (same unit, e.g. microseconds).
    """
    p = np.asarray(pred, dtype=np.float64)
    m = np.asarray(meas, dtype=np.float64)
    if p.shape != m.shape:
        raise DataError(
            f"pred and meas differ in shape: {p.shape} vs {m.shape}", hint="pass one prediction per measured latency"
        )
    bad = ~(np.isfinite(m) & (m > 0))
    if bad.any():
        raise DataError(
            f"{int(bad.sum())} measured latencies are not finite and > 0, e.g. {m[bad][:3].tolist()}",
            hint="drop or fix those rows before scoring",
        )
    return np.abs(p / m - 1.0) * 100.0


def _nan_if_empty(a: np.ndarray) -> bool:
    return a.size == 0 or bool(np.isnan(a).any())


def mape(pred: ArrayLike, meas: ArrayLike) -> float:
    """Mean absolute percentage error (percent); NaN for empty input or any NaN prediction."""
    a = ape(pred, meas)
    return float("nan") if _nan_if_empty(a) else float(a.mean())


def median_ape(pred: ArrayLike, meas: ArrayLike) -> float:
    """Median absolute percentage error (percent)."""
    a = ape(pred, meas)
    return float("nan") if _nan_if_empty(a) else float(np.median(a))


def p90_ape(pred: ArrayLike, meas: ArrayLike) -> float:
    """90th percentile of the absolute percentage error (percent, linear interpolation)."""
    a = ape(pred, meas)
    return float("nan") if _nan_if_empty(a) else float(np.percentile(a, 90.0))


_WITHIN_TOL = 1e-9  # percent: |110/100 - 1| * 100 is 10.000000000000009 in float64


def _within(a: np.ndarray, pct: float) -> float:
    return float(np.mean(a <= pct + _WITHIN_TOL) * 100.0)


def within(pred: ArrayLike, meas: ArrayLike, pct: float) -> float:
    """Share of rows whose absolute percentage error is <= ``pct`` percent, in percent (0-100).

    The comparison allows 1e-9 % of float rounding, so a prediction exactly 10 % off counts as
    within 10 %."""
    a = ape(pred, meas)
    return float("nan") if _nan_if_empty(a) else _within(a, pct)


def bootstrap_ci(
    ape: ArrayLike,
    n_boot: int = 1000,
    seed: int = 0,
    *,
    level: float = 0.95,
    max_rows: int = 2_000,
    chunk_elems: int = 1 << 22,
) -> tuple[float, float]:
    """Percentile bootstrap interval ``(lo, hi)`` of the MAPE, from per-row APE values (percent).

    Resamples rows with replacement ``n_boot`` times (numpy, vectorized in chunks of at most
    ``chunk_elems`` indices) with a fixed ``seed``, so the result is deterministic. Above
    ``max_rows`` rows it uses the m-out-of-n bootstrap: each resample draws ``m = max_rows`` rows
    and the deviations from the full-sample mean are scaled by ``sqrt(m / n)``, which keeps the
    cost at ``n_boot * max_rows`` for 100k-row groups. Returns NaNs for empty input, ``n_boot <=
    0`` or any NaN value; a single row gives a zero-width interval.
    """
    a = np.asarray(ape, dtype=np.float64).ravel()
    n = a.size
    if n == 0 or n_boot <= 0 or np.isnan(a).any():
        return float("nan"), float("nan")
    full = float(a.mean())
    if n == 1:
        return full, full
    m = min(n, int(max_rows))
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot, dtype=np.float64)
    per_chunk = max(1, int(chunk_elems) // m)
    for start in range(0, n_boot, per_chunk):
        b = min(per_chunk, n_boot - start)
        idx = rng.integers(0, n, size=(b, m), dtype=np.int32 if n < 2**31 else np.int64)
        means[start : start + b] = a[idx].mean(axis=1)
    dev = (means - full) * np.sqrt(m / n)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(dev, [alpha, 1.0 - alpha])
    return full + float(lo), full + float(hi)


def summarize(
    pred_df: pd.DataFrame,
    by: Sequence[str] = (),
    *,
    pred_col: str = "pred_us",
    meas_col: str = "latency_us",
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row of metrics per group of ``pred_df`` (columns ``by`` + :data:`METRIC_COLUMNS`).

    Errors are in percent; ``n`` counts the scored rows (finite prediction) and ``n_missing`` the
    rows whose prediction is NaN/inf (left out of every metric). ``mape_ci95_lo/hi`` is the
    :func:`bootstrap_ci` of the MAPE (NaN when ``n_boot=0``). Groups keep their order of first
    appearance; ``by=()`` gives one row for the whole frame.
    """
    by = list(by)
    missing = [c for c in [*by, pred_col, meas_col] if c not in pred_df.columns]
    if missing:
        raise DataError(
            f"summarize: columns {missing} not in the predictions frame",
            hint=f"expected the output of run_protocol; it has {list(pred_df.columns)}",
        )
    pred = pred_df[pred_col].to_numpy(dtype=np.float64)
    meas = pred_df[meas_col].to_numpy(dtype=np.float64)
    ok = np.isfinite(pred)
    errs = np.full(pred.shape, np.nan)
    errs[ok] = ape(pred[ok], meas[ok])
    items: list[tuple[tuple, Any]]  # group positions (pandas-stubs: Index | ndarray | list)
    if by:
        groups = pred_df.groupby(by, sort=False, dropna=False).indices
        items = [((k if isinstance(k, tuple) else (k,)), v) for k, v in groups.items()]
    else:
        items = [((), np.arange(len(pred_df)))]
    rows = []
    for key, idx in items:
        e_all = errs[idx]
        e = e_all[ok[idx]]
        n = int(e.size)
        if n:
            lo, hi = bootstrap_ci(e, n_boot=n_boot, seed=seed)
            stats = (
                float(e.mean()),
                float(np.median(e)),
                float(np.percentile(e, 90.0)),
                _within(e, 10.0),
                _within(e, 25.0),
            )
        else:
            lo = hi = float("nan")
            stats = (float("nan"),) * 5
        rows.append((*key, *stats, n, int(idx.size - n), lo, hi))
    out = pd.DataFrame(rows, columns=[*by, *METRIC_COLUMNS])
    return out.astype({"n": np.int64, "n_missing": np.int64})
