"""Hyperparameter search with optuna over leave-one-generation-out cross-validation.

The objective is the mean over held-out generations of the MAPE (%) of
:class:`PipeweaveRegressor` trained on the other generations: the same question the model is
used for. ``storage`` is any optuna storage URL (``sqlite:///tune.db`` locally; a PostgreSQL/MySQL
URL lets several processes or machines share one study).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from .._errors import DataError
from ._regressor import PipeweaveRegressor

if TYPE_CHECKING:
    import optuna

__all__ = ["SEARCH_SPACE", "logo_cv_mape", "open_study", "process_seed", "tune"]

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
        # no seen-GPU boosters unless asked: no held-out row is of a training GPU, they would only cost time
        model = PipeweaveRegressor(n_jobs=n_jobs, **{"seen_gpu": {}, **params}).fit(frame.iloc[tr])
        test = frame.iloc[te]
        pred = model.predict(test)
        scores.append(float(np.mean(np.abs(pred / test["latency_us"].to_numpy() - 1.0)) * 100))
    return float(np.mean(scores))


def tune(
    frame: pd.DataFrame,
    *,
    n_trials: int = 20,
    storage: str | None = None,
    study_name: str = "pipeweave",
    seed: int = 0,
    n_jobs: int = 2,
    progress: bool = True,
) -> optuna.Study:
    """Run (or resume, or join) an optuna study; returns the study (``study.best_params``).

    Several processes may share one ``storage`` (e.g. ``sqlite:///tune.db``) and ``study_name``: the
    study is created by whichever process comes first (a lost creation race is retried as a load),
    and each process samples with its own seed, so they explore different parameters: the process
    that creates the study uses ``seed``; a process that joins an existing study uses a seed derived
    from ``seed`` and its process id (a single process is reproducible; a shared study, like any
    parallel optuna run, is not bit-for-bit). A family booster's own settings
    (:data:`~pipeweave.model.FAMILY_BOOSTER_PARAMS`) stay over the searched ones, as in a fit with them.
    """
    import optuna

    gens = sorted(set(frame["generation"].astype(str))) if "generation" in frame.columns else []
    if len(gens) < 2:  # before any study is created or joined
        raise DataError(
            f"tuning needs rows from at least two GPU generations, got {gens}",
            hint="load more GPUs (the objective is leave-one-generation-out)",
        )

    def objective(trial: optuna.Trial) -> float:
        params: dict[str, float] = {}
        for name, (lo, hi, log) in SEARCH_SPACE.items():
            if isinstance(lo, int) and isinstance(hi, int):
                params[name] = trial.suggest_int(name, lo, hi, log=log)
            else:
                params[name] = trial.suggest_float(name, lo, hi, log=log)
        return logo_cv_mape(frame, params, n_jobs=n_jobs)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study, _ = open_study(storage, study_name, seed)
    # a stored study's trials were scored on some rows: resuming it on other rows would rank
    # incomparable MAPEs together, so the rows' description is kept with the study and must match
    settings = {
        "families": sorted({str(f) for f in frame["family"]}) if "family" in frame.columns else [],
        "gpus": sorted({str(g) for g in frame["gpu"]}) if "gpu" in frame.columns else [],
        "rows": int(len(frame)),
    }
    stored = study.user_attrs.get("pipeweave_rows")
    if stored is None:
        study.set_user_attr("pipeweave_rows", settings)
    elif stored != settings:
        diff = [f"{k}: study {stored.get(k)!r}, now {v!r}" for k, v in settings.items() if stored.get(k) != v]
        raise DataError(
            f"study {study_name!r} was run on other rows ({'; '.join(diff)}): its trials' MAPEs are not comparable",
            hint="use another study name for these rows, or the same families and row cap as before",
        )
    from .._progress import progress_bar, stderr_is_tty

    if progress and not stderr_is_tty():  # a log: one line per trial (pipeweave._progress), no bar
        bar = progress_bar(n_trials, "tune", unit="trial")

        def one_line(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
            bar.set_postfix_str(
                f"trial {trial.number}: MAPE {trial.value:.2f} (best {study.best_value:.2f})"
                if trial.value is not None
                else f"trial {trial.number}: {trial.state.name}"
            )
            bar.update()

        study.optimize(objective, n_trials=n_trials, callbacks=[one_line])
    else:
        study.optimize(objective, n_trials=n_trials, show_progress_bar=progress)
    return study


def process_seed(seed: int) -> int:
    """Sampler seed of a process joining a shared study: derived from ``seed`` and the process id."""
    import os

    return int(np.random.SeedSequence([int(seed), os.getpid()]).generate_state(1)[0])


def open_study(storage: str | None, study_name: str, seed: int, *, attempts: int = 8) -> tuple[optuna.Study, bool]:
    """(study, joined): create ``study_name`` in ``storage``, or load it when it exists (joined=True).

    Concurrent first use of a fresh SQLite file races on creating the schema and the study; the
    loser's IntegrityError / "database is locked" is retried with a short back-off.
    """
    import time

    import optuna
    from sqlalchemy.exc import IntegrityError, OperationalError

    last: Exception | None = None
    for attempt in range(attempts):
        try:
            try:
                study = optuna.create_study(
                    study_name=study_name,
                    storage=storage,
                    direction="minimize",
                    sampler=optuna.samplers.TPESampler(seed=seed),
                )
                return study, False
            except optuna.exceptions.DuplicatedStudyError:
                return optuna.load_study(
                    study_name=study_name,
                    storage=cast(str, storage),  # set: a duplicate
                    sampler=optuna.samplers.TPESampler(seed=process_seed(seed)),
                ), True
        except (IntegrityError, OperationalError, KeyError) as exc:  # creation race; retry
            last = exc
            time.sleep(0.2 * (attempt + 1))
    raise DataError(
        f"could not open study {study_name!r} in {storage!r} after {attempts} attempts "
        f"({last.__class__.__name__ if last else '?'})",
        hint="check the storage URL and that the database is reachable",
    )
