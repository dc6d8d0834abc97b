"""Error bands of a model recipe: held-out ``measured / predicted`` quantiles per family, for ``predict``.

:func:`estimate_error_bands` refits the recipe on parts of its own training rows and keeps the spread of
the ratios on the rows left out, in the three situations a prediction can be in
(:data:`pipeweave.model.BAND_SITUATIONS`):

- ``unseen``: leave-one-generation-out over the whole training frame (sklearn ``LeaveOneGroupOut`` through
  :func:`iter_folds`): every held-out row is of a GPU the refit never saw. A row is kept only when its
  family has training rows in the fold (a family measured on one generation alone would be an unseen
  family, another situation). Seen-GPU boosters are off in these refits (no test row is of a training GPU).
- ``sibling``: leave-one-GPU-out (``unseen-gpu`` folds), keeping the held-out rows whose family has training
  rows of the held-out GPU's generation in the fold (another GPU of that generation); GPUs without such a
  sibling are not refitted. Seen-GPU boosters off.
- ``seen``: :data:`UNSEEN_SHAPE_FOLD`: ``test_size`` of the launch shapes held out on every GPU
  (``GroupShuffleSplit``), the recipe as is (seen-GPU boosters on).

Refits train on at most ``max_rows_per_group`` seeded rows per (GPU, family, dtype, source) (default: the
leave-one-generation-out report's :data:`TRAIN_ROWS_PER_GPU` for ``logo``), so a band describes the
recipe at that size: a model trained on more rows is, if anything, a little better than its band says.

**Some families only** (``families=``): the same refits, on the same training rows, scoring only those
families' held-out rows; a fold with none of them is not refitted (for FP32 GEMM alone: 11 refits of 24
on the shared data). Every refit still trains the whole recipe on every row, so each band is the one a run
over all families gives, to the bit. :func:`pipeweave.model.merge_error_bands` puts such bands into an
earlier model's (``pipeweave train --error-bands-for FAMILY --error-bands-from OLD``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import DataError
from .._progress import progress_bar
from ._protocols import UNSEEN_SHAPE_FOLD, iter_folds

__all__ = ["estimate_error_bands", "error_band_layout", "BAND_ROWS_PER_GROUP"]

#: Default training-row cap of each refit (rows per (GPU, family, dtype, source)); the LOGO report's cap.
BAND_ROWS_PER_GROUP: int = 4000


def _wanted_rows(fam: np.ndarray, families: Sequence[str] | None) -> np.ndarray:
    """Bool per row: its family is one of ``families`` (every row for ``None``); unknown names are refused."""
    if families is None:
        return np.ones(len(fam), dtype=bool)
    if isinstance(families, str):
        families = [families]
    have = sorted(set(fam))
    bad = [f for f in families if f not in have]
    if bad or not len(families):
        raise DataError(
            f"error bands asked for families without training rows: {bad or list(families)}",
            hint=f"name some of the frame's families {have}, or pass families=None for all",
        )
    return np.isin(fam, list(families))


def _refit_predict(estimator: Any, train: pd.DataFrame, test: pd.DataFrame, **overrides: Any) -> np.ndarray:
    from sklearn.base import clone

    model = clone(estimator).set_params(**overrides)
    model.fit(train)
    return np.asarray(model.predict(test.drop(columns=["latency_us"])), dtype=float)


def estimate_error_bands(
    estimator: Any,
    frame: pd.DataFrame,
    *,
    max_rows_per_group: int | None = BAND_ROWS_PER_GROUP,
    test_size: float = 0.2,
    seed: int = 0,
    progress: bool = True,
    families: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Error bands of ``estimator``'s recipe (an unfitted :class:`~pipeweave.model.PipeweaveRegressor`, cloned
    for every refit) from its training ``frame`` (canonical rows with ``latency_us``, ``generation`` and
    ``gpu``; featurized or not). Returns the layout of :func:`pipeweave.model.check_error_bands`, ready for
    :meth:`~pipeweave.model.PipeweaveRegressor.set_error_bands`. Costs one refit per generation, one per GPU
    with a same-generation sibling for some family, plus one (24 on the shared data).

    ``families``: bands of these families only (model family names, each with rows in ``frame``); the refits
    are the same, the folds without a held-out row of them are skipped (module docstring).
    """
    from ..model import band_table, cap_rows, check_error_bands, seen_keys
    from ._suite import as_asked

    need = ["latency_us", "family", "dtype", "gpu", "generation"]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise DataError(f"estimate_error_bands needs the columns {missing}", hint=f"give training rows with {need}")
    if max_rows_per_group is not None and max_rows_per_group < 1:
        raise DataError(
            f"max_rows_per_group must be a whole number >= 1 or None, got {max_rows_per_group!r}",
            hint=f"e.g. {BAND_ROWS_PER_GROUP} (None: every row)",
        )
    frame = frame.reset_index(drop=True)
    generations = sorted(frame["generation"].astype(str).unique())
    if len(generations) < 2:
        raise DataError(
            f"error bands need training rows of at least two generations, got {generations}",
            hint="train on GPUs of more generations, or go without error bands",
        )

    def capped(pos: np.ndarray) -> pd.DataFrame:
        rows = frame.iloc[pos]
        return cap_rows(rows, max_rows_per_group, seed=seed) if max_rows_per_group else rows

    fam = frame["family"].astype(str).to_numpy()
    gen = frame["generation"].astype(str).to_numpy()
    gpu = seen_keys(frame)
    wanted = _wanted_rows(fam, families)
    has_sibling = _sibling_rows(fam, gen, gpu)
    parts: dict[str, list[pd.DataFrame]] = {"unseen": [], "sibling": [], "seen": []}
    # the folds that score a row: (held-out generation, its test rows whose family trains in the fold) and
    # (held-out GPU, its rows whose family has another GPU of their generation), of the wanted families
    logo = [
        f
        for f in (
            (held, train, test[np.isin(fam[test], np.unique(fam[train])) & wanted[test]])
            for held, train, test in iter_folds(pd.DataFrame({"generation": gen}), "logo")
        )
        if len(f[2])
    ]
    siblings = [
        f
        for f in (
            (held, train, test[has_sibling[test] & wanted[test]])
            for held, train, test in iter_folds(pd.DataFrame({"gpu": gpu}), "unseen-gpu")  # no frame copy
        )
        if len(f[2])
    ]
    bar = progress_bar(len(logo) + len(siblings) + 1, "error bands", unit="refit", enabled=progress)
    try:
        for held_gen, train_pos, test_pos in logo:
            bar.set_postfix_str(f"held-out={held_gen}")
            test = as_asked(frame.iloc[test_pos])  # scored as asked (no recorded cuBLAS tile / split)
            pred = _refit_predict(
                estimator, capped(train_pos), test, seen_gpu={}, max_rows_per_group=None, progress=False
            )
            parts["unseen"].append(test[["family", "dtype", "generation", "latency_us"]].assign(pred_us=pred))
            bar.update(1)
        for held, train_pos, test_pos in siblings:
            bar.set_postfix_str(f"held-out={held}")
            test = as_asked(frame.iloc[test_pos])  # scored as asked (no recorded cuBLAS tile / split)
            pred = _refit_predict(
                estimator, capped(train_pos), test, seen_gpu={}, max_rows_per_group=None, progress=False
            )
            parts["sibling"].append(test[["family", "dtype", "gpu", "latency_us"]].assign(gpu=held, pred_us=pred))
            bar.update(1)
        for _, train_pos, test_pos in iter_folds(frame, UNSEEN_SHAPE_FOLD, test_size=test_size, seed=seed):
            bar.set_postfix_str("held-out shapes")
            test = as_asked(frame.iloc[test_pos[wanted[test_pos]]])
            pred = _refit_predict(estimator, capped(train_pos), test, max_rows_per_group=None, progress=False)
            parts["seen"].append(test[["family", "dtype", "gpu", "latency_us"]].assign(pred_us=pred))
            bar.update(1)
    finally:
        bar.close()
    bands = error_band_layout(frame, max_rows_per_group=max_rows_per_group, test_size=test_size, seed=seed)
    for situation, group_col in (("unseen", "generation"), ("sibling", "gpu"), ("seen", "gpu")):
        rows = pd.concat(parts[situation], ignore_index=True) if parts[situation] else None
        bands[situation]["bands"] = band_table(rows, group_col=group_col) if rows is not None else {}
    return check_error_bands(bands)


def _sibling_rows(fam: np.ndarray, gen: np.ndarray, gpu: np.ndarray) -> np.ndarray:
    """Bool per row: another GPU of the row's generation has rows of the row's family (its GPU has a sibling)."""
    pair = pd.Series(fam, dtype=object) + "|" + pd.Series(gen, dtype=object)
    n_gpus = pd.Series(gpu).groupby(pair.to_numpy()).nunique()
    return (pair.map(n_gpus) > 1).to_numpy()


def error_band_layout(
    frame: pd.DataFrame,
    *,
    max_rows_per_group: int | None = BAND_ROWS_PER_GROUP,
    test_size: float = 0.2,
    seed: int = 0,
) -> dict[str, Any]:
    """What :func:`estimate_error_bands` would return for ``frame`` before any refit: each situation's
    ``protocol`` (with empty ``bands``), ``seen_gpus`` and ``seen_generations``. Costs no fit: e.g. to check
    that an earlier model's bands can be merged (:func:`pipeweave.model.merge_error_bands`) before refitting."""
    from ..model import BAND_LEVELS, check_error_bands, seen_keys

    fam = frame["family"].astype(str).to_numpy()
    gen = frame["generation"].astype(str).to_numpy()
    gpu = seen_keys(frame)
    generations = sorted(set(gen))
    n_sibling_gpus = len(set(gpu[_sibling_rows(fam, gen, gpu)]))
    cap = f"{max_rows_per_group:,}" if max_rows_per_group else "every"
    protocols = {
        "unseen": f"leave-one-generation-out over {', '.join(generations)}; refits on {cap} rows per "
        "(GPU, family, dtype, source), no seen-GPU boosters; each held-out generation weighs the same",
        "sibling": f"leave-one-GPU-out over the {n_sibling_gpus} GPUs with another GPU of their generation "
        f"measured for the family (its rows scored where that sibling trains); refits on {cap} rows per "
        "(GPU, family, dtype, source), no seen-GPU boosters; each held-out GPU weighs the same",
        "seen": f"{test_size:.0%} of the launch shapes held out on every GPU (seed {seed}); refit on {cap} rows "
        "per (GPU, family, dtype, source); each GPU weighs the same",
    }
    bands: dict[str, Any] = {
        "levels": list(BAND_LEVELS),
        "seen_gpus": {str(f): sorted(set(gpu[fam == f])) for f in np.unique(fam)},
        "seen_generations": {str(f): sorted(set(gen[fam == f])) for f in np.unique(fam)},
    }
    for situation, text in protocols.items():
        bands[situation] = {"protocol": text, "bands": {}}
    return check_error_bands(bands)
