"""optuna tuning: the objective is leave-one-generation-out MAPE and studies persist in storage."""

from __future__ import annotations

import pytest

from pipeweave import DataError
from pipeweave.model import logo_cv_mape, tune


def test_logo_cv_needs_two_generations(small_frame):
    one_gen = small_frame[small_frame["generation"] == "ampere"]
    with pytest.raises(DataError, match="two GPU generations"):
        logo_cv_mape(one_gen, {"n_estimators": 2})


def test_tune_resumes_a_shared_sqlite_study(small_frame, tmp_path, monkeypatch):
    import pipeweave.model._tune as t

    monkeypatch.setitem(t.SEARCH_SPACE, "n_estimators", (2, 4, False))  # keep each trial tiny
    url = f"sqlite:///{tmp_path / 'tune.db'}"
    study = tune(small_frame, n_trials=1, storage=url, study_name="s", progress=False, n_jobs=1)
    assert len(study.trials) == 1 and study.best_value > 0
    again = tune(small_frame, n_trials=1, storage=url, study_name="s", progress=False, n_jobs=1)
    assert len(again.trials) == 2  # the second process resumed the same study
    # other rows: the stored trials' MAPEs would be ranked against incomparable ones
    other = small_frame[small_frame["family"] == small_frame["family"].iloc[0]]
    with pytest.raises(DataError, match=r"study 's' was run on other rows \(families: study"):
        tune(other, n_trials=1, storage=url, study_name="s", progress=False, n_jobs=1)
