"""Evaluation protocols: split, fit a fresh method per fold, collect per-row predictions.

Protocols (scikit-learn splitters with groups):

``logo``
    Leave-one-GPU-generation-out: ``LeaveOneGroupOut`` over the ``generation`` column; the fold
    is named after the held-out generation. Needs >= 2 generations in a (family, source) group.
``unseen-gpu``
    Leave-one-GPU-out: ``LeaveOneGroupOut`` over the ``gpu`` column; the fold is named after the
    held-out GPU, whose generation siblings stay in the training rows (a new SKU of a measured
    generation: B300 after B200, L20 after L40S). A GPU alone in its generation is held out exactly
    as under ``logo``. Needs >= 2 GPUs in a (family, source) group.
``unseen-shape``
    ``GroupShuffleSplit(n_splits=1, test_size=0.2, random_state=seed)`` with one group per shape
    (a hash of the family's shape columns, see :data:`SHAPE_COLUMNS`), so a held-out shape is
    held out on every GPU and with every tile config; the fold is named ``"unseen-shape"``.

Every (family, source) pair is evaluated on its own: a method is fitted on the training rows of
that family and source only, never on pooled sources. The target column (``latency_us``) is
dropped from the frame handed to ``predict``, and the training frame holds no row of the
held-out group, so nothing measured on it reaches the method.

A method is any object with ``fit(train_df) -> self`` and ``predict(test_df) -> np.ndarray``
(latency in microseconds, one per row). ``methods`` maps a name to a factory: a zero-argument
callable (or class) returning a fresh unfitted method, or an unfitted sklearn-style estimator
instance (anything with ``get_params``), which is ``sklearn.base.clone``-d. Either way each fold
gets a new instance. An exception in a method's factory, ``fit`` or ``predict`` (or a
prediction of the wrong length) does not stop the run: its rows get ``pred_us = NaN`` and the
message in the ``error`` column, and a :class:`RuntimeWarning` names it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
import pandas as pd

from .._errors import DataError

__all__ = [
    "Method",
    "PROTOCOLS",
    "SHAPE_COLUMNS",
    "REGIMES",
    "DEEP_K_MIN",
    "TINY_US",
    "PRED_COLUMNS",
    "UNSEEN_SHAPE_FOLD",
    "GPU_SPLIT_FOLD",
    "iter_folds",
    "shape_groups",
    "regime_flags",
    "run_protocol",
    "fold_errors",
]

PROTOCOLS: tuple[str, ...] = ("logo", "unseen-gpu", "unseen-shape", "gpu-split")
UNSEEN_SHAPE_FOLD = "unseen-shape"
#: the one fold of the ``gpu-split`` protocol: train on the named GPUs, test on every other GPU (a published
#: predictor's own split, e.g. NeuSight's: trained on P4, P100, T4, V100 and A100 PCIe 40 GB)
GPU_SPLIT_FOLD = "gpu-split"

#: Columns that identify a problem shape (whichever of them a family has, i.e. non-null);
#: tile-plan columns and dtype are deliberately not part of the key.
SHAPE_COLUMNS: tuple[str, ...] = (
    "m",
    "n",
    "k",
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "moe_tp_size",
    "moe_ep_size",
    "distribution",
    "batch_size",
    "isl",
    "num_heads",
    "num_key_value_heads",
    "head_dim",
    "step",
)

#: Regime flags added to every prediction row (booleans).
REGIMES: tuple[str, ...] = ("deep_k", "tiny")
DEEP_K_MIN = 8192  #: ``deep_k``: a GEMM family row with k >= this
TINY_US = 10.0  #: ``tiny``: measured latency < this many microseconds

#: Columns of :func:`run_protocol`'s output, in order (``keep`` columns follow).
PRED_COLUMNS: tuple[str, ...] = (
    "row_id",
    "family",
    "source",
    "gpu",
    "generation",
    "fold",
    "method",
    "latency_us",
    "pred_us",
    "deep_k",
    "tiny",
    "error",
)


@runtime_checkable
class Method(Protocol):
    """What the harness needs from a latency predictor (latencies in microseconds)."""

    def fit(self, df: pd.DataFrame) -> Any:
        """Learn from measured rows (``latency_us`` in microseconds)."""

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Latency (us) per row of ``df``."""


MethodFactory = Callable[[], Method] | Any


def shape_groups(df: pd.DataFrame, shape_cols: Sequence[str] | None = None) -> np.ndarray:
    """One uint64 hash per row of the shape key (``shape_cols``, default: the :data:`SHAPE_COLUMNS`
    present in ``df`` with at least one non-null value). Equal shapes get equal hashes."""
    cols = _shape_cols(df, shape_cols)
    return pd.util.hash_pandas_object(df[cols], index=False).to_numpy(dtype=np.uint64)


def _shape_cols(df: pd.DataFrame, shape_cols: Sequence[str] | None) -> list[str]:
    if shape_cols is not None:
        cols = list(shape_cols)
        absent = [c for c in cols if c not in df.columns]
        if absent:
            raise DataError(
                f"shape columns {absent} are not in the frame",
                hint=f"choose among {[c for c in SHAPE_COLUMNS if c in df.columns]}",
            )
        return cols
    cols = [c for c in SHAPE_COLUMNS if c in df.columns and df[c].notna().any()]
    if not cols:
        raise DataError(
            "no shape column found for the unseen-shape protocol",
            hint=f"the frame needs some of {list(SHAPE_COLUMNS)} or pass shape_cols=",
        )
    return cols


def iter_folds(
    df: pd.DataFrame,
    protocol: str,
    *,
    group_col: str = "generation",
    shape_cols: Sequence[str] | None = None,
    test_size: float = 0.2,
    seed: int = 0,
    train_gpus: Sequence[str] | None = None,
) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Yield ``(fold_name, train_pos, test_pos)`` (positional row indices) for one family+source.

    ``logo``: one fold per value of ``group_col`` (sorted), named after it. ``unseen-gpu``: one fold
    per GPU (sorted), named after it. ``unseen-shape``: a single fold named ``"unseen-shape"`` holding
    out ``test_size`` of the shapes. ``gpu-split``: a single fold named ``"gpu-split"``: the rows on
    ``train_gpus`` train, every other row is tested.
    Yields nothing when the frame has fewer than 2 groups (nothing to hold out).
    """
    from sklearn.model_selection import GroupShuffleSplit, LeaveOneGroupOut, PredefinedSplit

    if protocol == GPU_SPLIT_FOLD:
        if not train_gpus:
            raise DataError(
                "the gpu-split protocol needs the training GPUs", hint="pass train_gpus=['P100-PCIe', 'V100-PCIe']"
            )
        on_train = df["gpu"].astype(str).isin([str(g) for g in train_gpus]).to_numpy()
        if on_train.all() or not on_train.any():
            return
        # PredefinedSplit: test_fold -1 = always trained on, 0 = the one test fold
        split = PredefinedSplit(np.where(on_train, -1, 0))
        train, test = next(split.split())
        yield GPU_SPLIT_FOLD, train, test
    elif protocol in ("logo", "unseen-gpu"):
        col = group_col if protocol == "logo" else "gpu"
        groups = df[col].astype(object).to_numpy()
        if pd.isna(groups).any():
            raise DataError(f"column {col!r} has missing values", hint=f"every row needs a {col}")
        if len(pd.unique(groups)) < 2:
            return
        x = np.zeros((len(df), 1))
        for train, test in LeaveOneGroupOut().split(x, groups=groups):
            yield str(groups[test[0]]), train, test
    elif protocol == UNSEEN_SHAPE_FOLD:
        groups = shape_groups(df, shape_cols)
        if len(np.unique(groups)) < 2:
            return
        x = np.zeros((len(df), 1))
        splitter = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
        train, test = next(splitter.split(x, groups=groups))
        yield UNSEEN_SHAPE_FOLD, np.sort(train), np.sort(test)
    else:
        raise DataError(f"unknown protocol {protocol!r}", hint=f"use one of {list(PROTOCOLS)}")


def regime_flags(df: pd.DataFrame, *, family_col: str = "family", target_col: str = "latency_us") -> pd.DataFrame:
    """Boolean regime columns: ``deep_k`` (family label starting with ``gemm`` and k >= 8192)
    and ``tiny`` (measured latency < 10 us)."""
    fam = df[family_col].astype(str)
    if "k" in df.columns:
        k = pd.to_numeric(df["k"], errors="coerce").to_numpy(dtype=np.float64)
        deep = fam.str.startswith("gemm").to_numpy(dtype=bool) & (np.nan_to_num(k, nan=0.0) >= DEEP_K_MIN)
    else:
        deep = np.zeros(len(df), dtype=bool)
    tiny = df[target_col].to_numpy(dtype=np.float64) < TINY_US
    return pd.DataFrame({"deep_k": deep, "tiny": tiny}, index=df.index)


def _make_method(spec: MethodFactory) -> Method:
    if not isinstance(spec, type) and hasattr(spec, "get_params") and hasattr(spec, "fit"):
        from sklearn.base import clone

        return clone(spec)
    if callable(spec):
        return spec()
    raise TypeError(f"a method must be a factory (callable) or an estimator with get_params, got {type(spec).__name__}")


def _fit_predict(spec: MethodFactory, train: pd.DataFrame, test: pd.DataFrame) -> tuple[np.ndarray, str | None]:
    """Fit a fresh method on ``train``, predict ``test``; never raises (error message instead)."""
    n = len(test)
    try:
        method = _make_method(spec)
        fitted = method.fit(train)
        if fitted is None:  # tolerate fit() that forgets to return self
            fitted = method
        pred = np.asarray(fitted.predict(test), dtype=np.float64)
        if pred.ndim == 2 and pred.shape[1] == 1:
            pred = pred[:, 0]
        if pred.shape != (n,):
            raise ValueError(f"predict returned shape {pred.shape}, expected ({n},)")
        return pred, None
    except Exception as exc:  # noqa: BLE001 - a failing method must not kill the run
        msg = f"{type(exc).__name__}: {exc}".strip()
        return np.full(n, np.nan), msg


def _fit_predict_at(
    spec: MethodFactory,
    df: pd.DataFrame,
    train_pos: np.ndarray,
    test_pos: np.ndarray,
    target_col: str,
    test_df: pd.DataFrame | None = None,
) -> tuple[np.ndarray, str | None]:
    """:func:`_fit_predict` on rows of ``df`` picked by position (a Dask task: ``df`` is scattered
    to the workers once, each task sends only its positions); test rows from ``test_df`` when given."""
    test = (df if test_df is None else test_df).iloc[test_pos].drop(columns=[target_col])
    return _fit_predict(spec, df.iloc[train_pos].copy(), test)


@dataclass(frozen=True)
class _Fold:
    family: str
    source: str
    fold: str
    train_pos: np.ndarray  # positions in the full frame
    test_pos: np.ndarray
    base: pd.DataFrame  # output columns of the test rows


def run_protocol(
    df: pd.DataFrame,
    methods: Mapping[str, MethodFactory],
    protocol: str,
    *,
    family_col: str = "family",
    group_col: str = "generation",
    progress: bool = True,
    n_jobs: int = 1,
    shape_cols: Sequence[str] | None = None,
    test_size: float = 0.2,
    seed: int = 0,
    target_col: str = "latency_us",
    keep: Sequence[str] = (),
    client: Any = None,
    train_gpus: Sequence[str] | None = None,
    test_frame: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Run ``protocol`` (``"logo"``, ``"unseen-gpu"``, ``"unseen-shape"`` or ``"gpu-split"`` with
    ``train_gpus``) for every method on every (family, source).

    ``test_frame``: the rows as the predictions are asked for, when that differs from how they train (same index
    as ``df``; e.g. :func:`~pipeweave.evaluation.as_asked`: without the kernel choice only running a launch
    records); default ``df``. Training rows, folds and the output's columns come from ``df``.

    ``df`` needs ``family_col``, ``source``, ``gpu``, ``group_col`` and ``target_col`` (measured
    latency, us, finite > 0) plus whatever the methods read; its index must be unique (it
    becomes ``row_id``). Returns one row per (test row, method, fold) with :data:`PRED_COLUMNS`
    (``pred_us`` in microseconds, NaN where the method failed, ``error`` = message or None)
    followed by the ``keep`` columns copied from ``df``. Rows are ordered by (family, source)
    sorted, fold, method (in ``methods`` order), then ``df`` order. ``n_jobs`` > 1 runs the
    (fold, method) fits in joblib worker processes; results are identical to ``n_jobs=1``.
    ``client`` (a ``distributed.Client``, see :func:`pipeweave.distributed.connect`) runs every
    (fold, method) fit as a Dask task instead: the frame is scattered to the workers once and each
    task fits one method on one fold; the output is the same as with ``n_jobs=1``.
    """
    if not methods:
        raise DataError("no methods to evaluate", hint="pass a dict name -> factory")
    if protocol not in PROTOCOLS:
        raise DataError(f"unknown protocol {protocol!r}", hint=f"use one of {list(PROTOCOLS)}")
    need = [family_col, "source", "gpu", group_col, target_col, *keep]
    absent = [c for c in dict.fromkeys(need) if c not in df.columns]
    if absent:
        raise DataError(
            f"run_protocol: columns {absent} are missing from the frame", hint=f"it has {list(df.columns)[:30]}"
        )
    if not df.index.is_unique:
        raise DataError(
            "the frame's index has duplicates; it is used as row_id", hint="call df.reset_index(drop=True) first"
        )
    if test_frame is not None and not test_frame.index.equals(df.index):
        raise DataError(
            f"test_frame must hold the frame's rows in its order (same index); got {len(test_frame):,} rows for "
            f"{len(df):,}",
            hint="build it from the same frame, e.g. pipeweave.evaluation.as_asked(df)",
        )
    y = df[target_col].to_numpy(dtype=np.float64)
    bad = ~(np.isfinite(y) & (y > 0))
    if bad.any():
        raise DataError(
            f"{int(bad.sum())} rows have a {target_col} that is not finite and > 0", hint="drop them before evaluating"
        )

    # one consolidation up front: a featurized frame holds hundreds of one-column blocks, and every
    # fold's row selection and per-method copy below would otherwise merge them again (a third of
    # the harness's time before this line existed)
    df = df.copy()
    asked = df if test_frame is None else test_frame.copy()
    folds = list(
        _iter_all_folds(
            df,
            protocol,
            family_col=family_col,
            group_col=group_col,
            shape_cols=shape_cols,
            test_size=test_size,
            seed=seed,
            target_col=target_col,
            keep=keep,
            train_gpus=train_gpus,
        )
    )
    names = list(methods)
    tasks = [(f, name) for f in folds for name in names]

    def frames() -> Iterator[tuple[_Fold, pd.DataFrame, pd.DataFrame]]:
        # built one fold at a time so only one fold's train/test copy is alive
        for f in folds:
            yield f, df.iloc[f.train_pos], asked.iloc[f.test_pos].drop(columns=[target_col])

    from .._progress import progress_bar

    # a tqdm bar on a terminal, one line per fit in a log (pipeweave._progress)
    bar = progress_bar(len(tasks), "evaluate", unit="fit", enabled=bool(progress))

    def tick(f: _Fold, name: str) -> None:
        bar.set_description(f"{f.family}[{f.source}] held-out={f.fold}", refresh=False)
        bar.set_postfix_str(name, refresh=False)
        bar.update()

    results: list[tuple[np.ndarray, str | None]] = []
    try:
        if client is not None:
            from distributed import as_completed

            shared = client.scatter(df, broadcast=True, hash=False)
            shared_test = None if test_frame is None else client.scatter(asked, broadcast=True, hash=False)
            futures = [
                client.submit(
                    _fit_predict_at,
                    methods[name],
                    shared,
                    f.train_pos,
                    f.test_pos,
                    target_col,
                    shared_test,
                    pure=False,
                )
                for f, name in tasks
            ]
            index = {fut.key: i for i, fut in enumerate(futures)}
            for fut in as_completed(futures):  # progress as fits finish, results kept in task order
                f, name = tasks[index[fut.key]]
                tick(f, name)
            results = client.gather(futures)
        elif n_jobs == 1 or len(tasks) <= 1:
            for f, train, test in frames():
                for name in names:  # a private copy per method: a method may add columns
                    results.append(_fit_predict(methods[name], train.copy(), test.copy()))
                    tick(f, name)
        else:
            from joblib import Parallel, delayed

            par = Parallel(n_jobs=n_jobs, return_as="generator")
            calls = (delayed(_fit_predict)(methods[name], train, test) for _, train, test in frames() for name in names)
            for (f, name), res in zip(tasks, par(calls)):
                results.append(res)
                tick(f, name)
    finally:
        bar.close()

    parts = []
    failures = []
    for (f, name), (pred, err) in zip(tasks, results):
        part = f.base.copy()
        part.insert(5, "fold", f.fold)
        part.insert(6, "method", name)
        part.insert(8, "pred_us", pred)
        part.insert(11, "error", pd.Series([err] * len(part), index=part.index, dtype=object))
        parts.append(part)
        if err is not None:
            failures.append(f"  {name!r} on {f.family}[{f.source}] fold {f.fold!r}: {err}")
    if failures:
        more = f"\n  ... and {len(failures) - 10} more" if len(failures) > 10 else ""
        warnings.warn(
            f"{len(failures)} of {len(tasks)} method fits failed; their rows have "
            f"pred_us=NaN and the message in the 'error' column:\n" + "\n".join(failures[:10]) + more,
            RuntimeWarning,
            stacklevel=2,
        )
    if parts:
        out = pd.concat(parts, ignore_index=True)
    else:
        out = pd.DataFrame({c: pd.Series(dtype=object) for c in [*PRED_COLUMNS, *keep]})
    _check_same_rows(out)
    return out


def _iter_all_folds(
    df: pd.DataFrame,
    protocol: str,
    *,
    family_col: str,
    group_col: str,
    shape_cols: Sequence[str] | None,
    test_size: float,
    seed: int,
    target_col: str,
    keep: Sequence[str],
    train_gpus: Sequence[str] | None = None,
) -> Iterator[_Fold]:
    flags = regime_flags(df, family_col=family_col, target_col=target_col)
    keys = df[[family_col, "source"]].astype(str)
    for key, idx_ in sorted(keys.groupby([family_col, "source"], sort=True).indices.items()):
        family, source = cast(tuple[str, str], key)
        idx = cast(np.ndarray, idx_)
        sub = df.iloc[idx]
        n_folds = 0
        for fold, train_pos, test_pos in iter_folds(
            sub,
            protocol,
            group_col=group_col,
            shape_cols=shape_cols,
            test_size=test_size,
            seed=seed,
            train_gpus=train_gpus,
        ):
            test = sub.iloc[test_pos]
            base = pd.DataFrame(
                {
                    "row_id": test.index.to_numpy(),
                    "family": str(family),
                    "source": str(source),
                    "gpu": test["gpu"].astype(str).to_numpy(),
                    "generation": test[group_col].astype(str).to_numpy(),
                    "latency_us": test[target_col].to_numpy(dtype=np.float64),
                    "deep_k": flags["deep_k"].to_numpy()[idx[test_pos]],
                    "tiny": flags["tiny"].to_numpy()[idx[test_pos]],
                }
            )
            for c in keep:
                if c not in base.columns:
                    base[c] = test[c].to_numpy()
            n_folds += 1
            yield _Fold(str(family), str(source), fold, idx[train_pos], idx[test_pos], base)
        if n_folds == 0:
            if protocol == GPU_SPLIT_FOLD:
                on = sorted(pd.unique(sub["gpu"].astype(str)))
                train = [str(g) for g in train_gpus or []]
                which = "are all training GPUs" if set(on) <= set(train) else "include no training GPU"
                why = f"its GPUs {on} {which} ({train})"
            else:
                what = {"logo": "generation", "unseen-gpu": "GPU"}.get(protocol, "shape")
                why = f"only one {what} ({len(sub)} rows)"
            warnings.warn(f"{family}[{source}]: {why}; nothing to hold out, skipped", RuntimeWarning, stacklevel=3)


def _check_same_rows(pred_df: pd.DataFrame) -> None:
    """Raise if the methods of a fold did not predict exactly the same test rows."""
    if pred_df.empty:
        return
    sig = pred_df.groupby(["family", "source", "fold", "method"], sort=False)["row_id"].agg(tuple)
    per_fold = sig.groupby(level=["family", "source", "fold"], sort=False).nunique()
    if (per_fold > 1).any():
        raise RuntimeError(f"methods predicted different test rows in folds {list(per_fold[per_fold > 1].index)}")


def fold_errors(pred_df: pd.DataFrame) -> pd.DataFrame:
    """The failed (family, source, fold, method) runs with their error message and row count."""
    cols = ["family", "source", "fold", "method", "error"]
    if "error" not in pred_df.columns:
        return pd.DataFrame(columns=[*cols, "n"])
    failed = pred_df[pred_df["error"].notna()]
    return failed.groupby(cols, sort=False).size().rename("n").reset_index()
