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


def test_pruning_metrics_keep_count_is_the_top_k_pick():
    # hand-made: one query of 6 candidates; the best (label 4) is ranked third, a within-1% one fifth
    q = np.zeros(6, dtype=int)
    score = np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0])
    label = np.array([0.0, 0.0, 4.0, 0.0, 2.0, 0.0])
    rel = np.array([np.log(1.04), np.nan, 0.0, np.nan, np.log(1.008), np.nan])
    worst = np.full(6, np.log(1.04))
    top1 = pruning_metrics(score, q, label, rel, worst, keep_count=1)
    assert top1["hit"].tolist() == [False] and top1["ratio"] == pytest.approx([1 / 1.04]) and top1["exact"].all()
    top2 = pruning_metrics(score, q, label, rel, worst, keep_count=2)  # the second pick is unmeasured
    assert top2["hit"].tolist() == [False] and top2["ratio"] == pytest.approx([1 / 1.04])
    top3 = pruning_metrics(score, q, label, rel, worst, keep_count=3)
    assert top3["hit"].tolist() == [True] and top3["ratio"] == pytest.approx([1.0])
