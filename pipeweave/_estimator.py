"""Stand-ins for scikit-learn's ``BaseEstimator``/``RegressorMixin``, used only where scikit-learn is blocked.

The estimators of pipeweave subclass scikit-learn's classes. Importing scikit-learn costs about
a second (it imports most of SciPy), which a one-launch ``pipeweave predict`` process cannot
afford; that process blocks the import (as XGBoost itself supports: ``xgboost.compat``) and the
model module falls back to these two classes, which keep the same parameter protocol
(``get_params``/``set_params`` from the ``__init__`` signature). In any ordinary import
scikit-learn is present and these classes are unused.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["BaseEstimator", "RegressorMixin", "sklearn_blocked"]


class BaseEstimator:
    """Parameter protocol of ``sklearn.base.BaseEstimator`` (hyperparameters = ``__init__`` arguments)."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Hyperparameters by name (``deep`` is accepted for the scikit-learn signature)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> BaseEstimator:
        """Set hyperparameters by name; unknown names raise ``ValueError`` like scikit-learn."""
        valid = set(self._get_param_names())
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"invalid parameter {name!r} for estimator {type(self).__name__}; valid parameters: {sorted(valid)}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RegressorMixin:
    """``score`` = coefficient of determination R^2 of ``predict(X)`` against ``y``."""

    _estimator_type = "regressor"

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """R^2 of the predictions (sample weights optional)."""
        import numpy as np

        y = np.asarray(y, dtype=float)
        w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        resid = np.sum(w * (y - np.asarray(self.predict(X), dtype=float)) ** 2)  # type: ignore[attr-defined,type-var]
        total = np.sum(w * (y - np.average(y, weights=w)) ** 2)
        return float(1.0 - resid / total) if total > 0 else 0.0


@contextlib.contextmanager
def sklearn_blocked() -> Iterator[None]:
    """Imports inside the block see scikit-learn as absent (unless it is already imported).

    For short-lived processes that only predict (``pipeweave predict``): XGBoost then skips its
    scikit-learn wrappers and the model classes use the stand-ins above. Outside the block
    scikit-learn imports normally again.
    """
    if "sklearn" in sys.modules:
        yield
        return
    sys.modules["sklearn"] = None  # type: ignore[assignment]  # import machinery: ImportError
    try:
        yield
    finally:
        if "sklearn" in sys.modules and sys.modules["sklearn"] is None:
            del sys.modules["sklearn"]
