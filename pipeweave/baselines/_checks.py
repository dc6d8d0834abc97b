"""Checks every learned baseline shares: the training latency and the fitted state."""

from __future__ import annotations

import numbers
from typing import Any

from .._errors import DataError
from .._frame import training_latency  # the model's check too: one definition

__all__ = ["training_latency", "check_fitted", "check_rounds"]


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
