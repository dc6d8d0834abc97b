"""dse pruning metrics (top-10% hit rate, kept best ratio) on hand-made inputs (labelled as such)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave.diagnose._dse import pruning_metrics  # noqa: PLC2701 - the protocol's own helper


def test_pruning_metrics_hand_made():
    # two queries of 10 candidates; scores rank candidate 0 first in query 0, candidate 19 first in query 1
    q = np.repeat([0, 1], 10)
    score = np.r_[np.arange(10, 0, -1), np.arange(1, 11)].astype(float)
    label = np.zeros(20)
    rel = np.full(20, np.nan)
    label[0], rel[0] = 2, np.log(1.005)  # query 0: the kept config is measured, 0.5% slower than the best
    label[10], rel[10] = 4, 0.0  # query 1: the best config is ranked last -> not kept at 10%
    rel[11] = np.log(1.03)  # a measured top-3 config, not kept either
    worst = np.r_[np.full(10, np.log(1.005)), np.full(10, np.log(1.03))]
    m = pruning_metrics(score, q, label, rel, worst, keep=0.1)
    assert m["hit"].tolist() == [True, False]
    assert m["exact"].tolist() == [True, False]
    # exact ratio for query 0; upper bound (best / slowest published config) for query 1
    assert m["ratio"] == pytest.approx([1 / 1.005, 1 / 1.03])
    m50 = pruning_metrics(score, q, label, rel, worst, keep=1.0)
    assert m50["hit"].all() and m50["ratio"] == pytest.approx([1.0 / 1.005, 1.0])
