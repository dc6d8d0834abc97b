"""Nested leave-one-group-out selection of a hyperparameter inside the training rows.

The evaluation harness holds out a whole GPU generation; a learned baseline that tunes anything
does it here, on its training rows only: ``sklearn.model_selection.LeaveOneGroupOut`` over the
training generations, score = mean over inner folds of the MAPE (percent) of the latency.
The held-out generation never reaches this function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["select_by_inner_logo"]


def select_by_inner_logo(
    candidates: Sequence[Any],
    groups: np.ndarray,
    fit_predict: Callable[[Any, np.ndarray, np.ndarray], np.ndarray],
    latency_us: np.ndarray,
) -> tuple[Any, dict[str, float]]:
    """The candidate with the lowest mean inner-fold latency MAPE (percent) and every candidate's score.

    ``fit_predict(candidate, train_pos, test_pos)`` fits on the training positions and returns
    predicted latencies (us) of the test positions. ``groups`` (e.g. the generation of each
    training row) defines the inner folds; with fewer than 2 groups the first candidate is
    returned unscored.
    """
    from sklearn.model_selection import LeaveOneGroupOut

    cands = list(candidates)
    if len(cands) == 1 or len(np.unique(groups)) < 2:
        return cands[0], {}
    x = np.zeros((len(groups), 1))
    splits = list(LeaveOneGroupOut().split(x, groups=groups))
    scores: dict[str, float] = {}
    best, best_score = cands[0], np.inf
    for c in cands:
        per_fold = []
        for tr, te in splits:
            pred = np.asarray(fit_predict(c, tr, te), dtype=float)
            ape = np.abs(pred / latency_us[te] - 1.0) * 100.0
            per_fold.append(float(np.nanmean(np.where(np.isfinite(ape), ape, 1e4))))
        s = float(np.mean(per_fold))
        scores[str(c)] = round(s, 3)
        if s < best_score:
            best, best_score = c, s
    return best, scores
