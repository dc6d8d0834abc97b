"""Hyperparameter search with optuna over leave-one-generation-out cross-validation.

The objective is the mean over held-out generations of the MAPE (%) of
:class:`PipeweaveRegressor` trained on the other generations: the same question the model is
used for. ``storage`` is any optuna storage URL (``sqlite:///tune.db`` locally; a PostgreSQL/MySQL
URL lets several processes or machines share one study).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import DataError
from ._regressor import PipeweaveRegressor

__all__ = ["tune", "logo_cv_mape", "SEARCH_SPACE"]

#: name -> (low, high, log) for floats/ints (int when both bounds are ints)
SEARCH_SPACE: dict[str, tuple[float, float, bool]] = {
    "n_estimators": (200, 1200, True),
    "max_depth": (4, 10, False),
    "learning_rate": (0.02, 0.2, True),
    "subsample": (0.5, 1.0, False),
    "colsample_bytree": (0.4, 1.0, False),
    "min_child_weight": (1.0, 50.0, True),
    "reg_lambda": (1e-2, 10.0, True),
}


def logo_cv_mape(frame: pd.DataFrame, params: dict, *, n_jobs: int = 2) -> float:
    """Mean over generations of the held-out MAPE (%) of a model fit on the other generations."""
    from sklearn.model_selection import LeaveOneGroupOut

    groups = frame["generation"].astype(str).to_numpy()
    if len(set(groups)) < 2:
        raise DataError("tuning needs rows from at least two GPU generations", hint="load more GPUs")
    scores = []
    for tr, te in LeaveOneGroupOut().split(frame, groups=groups):
        model = PipeweaveRegressor(n_jobs=n_jobs, **params).fit(frame.iloc[tr])
        test = frame.iloc[te]
        pred = model.predict(test)
        scores.append(float(np.mean(np.abs(pred / test["latency_us"].to_numpy() - 1.0)) * 100))
    return float(np.mean(scores))


def tune(frame: pd.DataFrame, *, n_trials: int = 20, storage: str | None = None, study_name: str = "pipeweave",
         seed: int = 0, n_jobs: int = 2, progress: bool = True) -> "object":
    """Run (or resume) an optuna study; returns the study (``study.best_params``)."""
    import optuna

    def objective(trial: optuna.Trial) -> float:
        params = {}
        for name, (lo, hi, log) in SEARCH_SPACE.items():
            if isinstance(lo, int) and isinstance(hi, int):
                params[name] = trial.suggest_int(name, lo, hi, log=log)
            else:
                params[name] = trial.suggest_float(name, lo, hi, log=log)
        return logo_cv_mape(frame, params, n_jobs=n_jobs)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=study_name, storage=storage, direction="minimize",
                                sampler=optuna.samplers.TPESampler(seed=seed), load_if_exists=True)
    study.optimize(objective, n_trials=n_trials, show_progress_bar=progress)
    return study
