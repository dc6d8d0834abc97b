"""Which launches to measure on a new GPU: coverage of the regimes by k-means.

The residual of the zero-shot model on a new GPU is a smooth function of the launch's regime
(compute-, DRAM-, L2- or latency-bound, few or many waves, small or large working set): e.g. a
GPU that sustains less of its spec-sheet tensor peak than the training GPUs is over-predicted
on every compute-bound launch by about the same factor. The most informative ``n`` launches are
therefore the ones that cover the regime space: the candidates' regime coordinates
(:func:`~pipeweave.calibrate.regime_matrix`) are clustered into ``n`` groups by k-means, and the
candidate closest to each centroid is measured. Dense regimes get more clusters, isolated
regimes still get one.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._errors import DataError
from ._regime import regime_matrix

__all__ = ["plan_positions"]


def plan_positions(
    frame: pd.DataFrame, n: int, *, seed: int = 0, features: Mapping[str, float] | None = None
) -> np.ndarray:
    """Sorted positions (0..len-1) of the ``n`` rows of featurized ``frame`` to measure.

    All rows when ``n >= len(frame)``; rows with identical regime coordinates count once. ``features``: the
    coordinates (feature -> scale of one unit) to cover, default :data:`~pipeweave.calibrate.REGIME_FEATURES`.
    """
    if n < 0:
        raise DataError(f"number of launches to plan must be >= 0, got {n}", hint="e.g. n=32")
    if n == 0 or len(frame) == 0:
        return np.zeros(0, dtype=np.int64)
    Z = regime_matrix(frame, None if features is None else dict(features))
    _, first = np.unique(Z, axis=0, return_index=True)
    first = np.sort(first)
    if n >= len(first):
        return first.astype(np.int64)
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    Zu = Z[first]
    with threadpool_limits(limits=1):  # OpenMP threads oversubscribe a shared machine (20x slower)
        km = KMeans(n_clusters=n, n_init=1, max_iter=100, random_state=seed).fit(Zu)
    d2 = ((Zu - km.cluster_centers_[km.labels_]) ** 2).sum(axis=1)
    order = np.lexsort((d2, km.labels_))  # by cluster, then distance to its centroid
    labels = km.labels_[order]
    keep = order[np.r_[True, labels[1:] != labels[:-1]]]
    return np.sort(first[keep]).astype(np.int64)
