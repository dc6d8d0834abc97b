"""Checks every learned baseline shares: the training latency and the fitted state."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from .._errors import DataError

__all__ = ["training_latency", "check_fitted", "check_rounds"]


def training_latency(df: pd.DataFrame, who: str) -> np.ndarray:
    """``df``'s ``latency_us`` (microseconds) for ``who``'s fit, else a :class:`DataError`: the column is absent, or
    a value is not a finite number > 0 (named by row label)."""
    if "latency_us" not in df.columns:
        raise DataError(
            f"{who} trains on measured rows: the rows lack the column 'latency_us'",
            hint="fit on measured profiles (latency_us in microseconds), e.g. pipeweave.load_profiles(...)",
        )
    lat = pd.to_numeric(df["latency_us"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(lat) | (lat <= 0)
    if bad.any():
        raise DataError(
            f"{int(bad.sum())} of {len(lat)} training rows of {who} have a latency_us that is not a finite number > 0 "
            f"(first row labels {df.index[bad][:5].tolist()})",
            hint="drop them or fix the measurement; latency_us is in microseconds, > 0",
        )
    return lat


def check_fitted(estimator: Any, attr: str) -> None:
    """Raise scikit-learn's ``NotFittedError`` (as :class:`pipeweave.PipeweaveRegressor` does) unless ``estimator``
    has its learned ``attr``."""
    if not hasattr(estimator, attr):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"this {type(estimator).__name__} is not fitted yet; call fit(df) first")


def check_rounds(estimator: Any, *names: str) -> None:
    """Refuse a count hyperparameter (``n_estimators``, ``max_depth`` ...) that is not a whole number >= 1 before any
    work: XGBoost would train nothing, or fail deep inside."""
    for name in names:
        v = getattr(estimator, name)
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise DataError(
                f"{type(estimator).__name__}: {name} must be an integer >= 1, got {v!r}",
                hint=f"e.g. {type(estimator).__name__}({name}={type(estimator)().get_params()[name]!r}) (the default)",
            )
