"""The public Python API: the functions ``import pipeweave as pw`` offers (the CLI is a thin layer over them).

Latencies are in microseconds. A *launch* is one row of the canonical profile table (columns
``family``, ``dtype`` and the family's shape columns, optional tile plan, see
:data:`pipeweave.sources.PROFILE_COLUMNS`); a *GPU* is a catalog name or alias (``"H100"``,
``"B300"``), a spec file (``.toml``/``.json``) or a :class:`pipeweave.hardware.GPUSpec`.

Examples
--------
>>> import pipeweave as pw                                                     # doctest: +SKIP
>>> pw.predict({"family": "gemm", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096},
...            gpu="B300")                                                     # doctest: +SKIP
0    93.5...
Name: latency_us_pred, dtype: float64
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._compare import COUNT_COLUMN, Comparison, compare, plot_comparison
from ._errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .hardware import GPUSpec
    from .model import PipeweaveRegressor
    from .sources import LoadReport

__all__ = [
    "predict",
    "predict_frame",
    "band_columns",
    "load_model",
    "featurize",
    "explain",
    "explain_launch",
    "library_tile_choice",
    "library_tile_frame",
    "LIBRARY_TILE_FRAME_COLUMNS",
    "load_profiles",
    "load_profiles_report",
    "evaluate",
    "get_gpu",
    "list_gpus",
    "diagnose",
    "as_launch_frame",
    "compare",
    "Comparison",
    "plot_comparison",
    "COUNT_COLUMN",
]

_MODEL_CACHE: dict[str, Any] = {}


# ----------------------------------------------------------------------------------- helpers
def as_launch_frame(launches: Any) -> pd.DataFrame:
    """A new DataFrame of launch rows from a DataFrame, one mapping or row (Series), or a sequence of mappings.

    The caller's object is never modified (a DataFrame is copied shallowly).

    Raises
    ------
    DataError
        ``launches`` is none of the accepted types, or empty.
    """
    import pandas as pd

    if isinstance(launches, pd.DataFrame):
        df = launches.copy(deep=False)
    elif isinstance(launches, Mapping):
        df = pd.DataFrame([dict(launches)])
    elif isinstance(launches, pd.Series):  # one row of a frame (df.iloc[i]): column name -> value
        df = pd.DataFrame([{str(k): v for k, v in launches.items()}])
    elif (
        isinstance(launches, Sequence)
        and not isinstance(launches, (str, bytes))
        and all(isinstance(r, Mapping) for r in launches)
    ):
        df = pd.DataFrame([dict(r) for r in launches])
    else:
        raise DataError(
            f"launches must be a DataFrame, a mapping, one row (Series) or a list of mappings, got "
            f"{type(launches).__name__}",
            hint="e.g. {'family': 'gemm', 'dtype': 'bfloat16', 'm': 4096, 'n': 4096, 'k': 4096}",
        )
    if df.empty:
        raise DataError("no launch rows were given", hint="pass at least one row")
    return df


def _checked_data(data: str | os.PathLike[str] | None) -> str | os.PathLike[str] | None:
    """``data`` when it is None or a directory, else the :class:`DataError` of a data directory that is not there
    (named before any work, even when no row needs the measurements)."""
    if data is not None:
        from ._paths import resolve_data_dir

        resolve_data_dir(data)
    return data


def _resolve_gpu(gpu: Any) -> GPUSpec:
    from .hardware import get_gpu

    return get_gpu(gpu)  # a GPUSpec passes through (checked against the catalog entry of its name)


def _with_gpu(df: pd.DataFrame, gpu: Any) -> tuple[pd.DataFrame, dict[str, GPUSpec] | None]:
    """``df`` with its ``gpu`` column set from ``gpu`` (if given) and the spec lookup to featurize with."""
    if gpu is None:
        if "gpu" not in df.columns:
            raise DataError(
                "the launches have no `gpu` column and no gpu was given",
                hint="pass gpu='H100' (a catalog name, a spec file or a GPUSpec) or add a gpu column",
            )
        return df, None
    spec = _resolve_gpu(gpu)
    # the rows move to this GPU: a generation column they carry (e.g. measured rows) moves with them
    moved = {"generation": spec.generation} if "generation" in df.columns else {}
    return df.assign(gpu=spec.name, **moved), {spec.name: spec}


def _model(model: Any) -> PipeweaveRegressor:
    if model is None:
        return _default_model()
    if isinstance(model, (str, os.PathLike)):
        return load_model(model)
    if not callable(getattr(model, "predict", None)):
        raise DataError(
            f"model must be a fitted model, a model file path or None (the shipped model), got {type(model).__name__}",
            hint="e.g. model='models/mine.ubj', or model=pw.load_model(path)",
        )
    return model


def _default_model() -> PipeweaveRegressor:
    """The shipped model, loaded once per process (the object predictions use; never handed to the user)."""
    from .model import load_model as _load

    if "default" not in _MODEL_CACHE:
        _MODEL_CACHE["default"] = _load(None)
    return _MODEL_CACHE["default"]


# ------------------------------------------------------------------------------------ predict
def _check_calibrated_spec(model: Any, rows: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None) -> None:
    """Warn when rows are predicted on the GPU a model was calibrated on, but with a different spec (a spec
    file that reuses the name): the correction was fitted against the old spec's predictions."""
    import warnings

    cal = getattr(model, "calibration_", None)
    if cal is None:
        return
    changes = cal.spec_changes_on(rows, gpus)
    if changes:
        warnings.warn(
            f"the model was calibrated on {cal.gpu} with another spec ({'; '.join(changes[:4])}"
            f"{'; ...' if len(changes) > 4 else ''}); its correction was fitted to that spec's predictions: "
            "calibrate again with this spec, or give the spec the model was calibrated on",
            stacklevel=3,
        )


def _warn_lookalike_columns(df: pd.DataFrame) -> None:
    """Warn about an input column that is no launch column but reads like one of the rows' families (``num_warp``
    for ``num_warps``): it passes through untouched, so the launch takes the column's default instead."""
    import difflib
    import warnings

    from .frontend import DERIVED_COLUMNS, launch_columns
    from .sources import PROFILE_COLUMNS

    fams = [str(f) for f in df["family"].dropna().astype(str).unique()] if "family" in df.columns else []
    wanted = list(dict.fromkeys(c for f in fams for c in launch_columns(f)))
    known = set(PROFILE_COLUMNS) | set(DERIVED_COLUMNS) | set(wanted)
    for col in (str(c) for c in df.columns):
        if col in known:
            continue
        close = [c for c in difflib.get_close_matches(col, wanted, n=1, cutoff=0.7) if c not in df.columns]
        if close:
            warnings.warn(
                f"input column {col!r} is not a launch column and is passed through unread; did you mean "
                f"{close[0]!r}? (the launches are predicted as if {close[0]} were not given)",
                UserWarning,
                stacklevel=3,
            )


def predict_frame(
    df: pd.DataFrame,
    model: PipeweaveRegressor | str | os.PathLike[str] | None,
    gpus: Mapping[str, GPUSpec] | None = None,
    data: str | os.PathLike[str] | None = None,
    problems: pd.Series | None = None,
) -> tuple[pd.Series, pd.Series]:
    """Predict every valid row of ``df``; report the others instead of failing the batch.

    Every row is checked against the valid domain (:func:`pipeweave.frontend.row_problems`) and against the
    families the model was trained on (``model.families_``); rows with a reason (or a reason already in
    ``problems``) are not predicted. Absent/blank optional
    columns take :data:`pipeweave.frontend.LAUNCH_DEFAULTS`, a blank ``source`` the family's default
    (:data:`pipeweave.vocab.DEFAULT_SOURCE`), a blank FP32 GEMM ``split_k`` the split of the smallest envelope
    (:func:`pipeweave.frontend.infer_split_k`; a fitted estimator's own ``predict``, like training, reads it as
    none), and an FP32 GEMM launch without a tile the geometric mean of the model's predictions for its fastest
    cuBLAS SIMT tiles (:meth:`pipeweave.model.PipeweaveRegressor.library_tiles`, each tile with its inferred split); columns
    pipeweave computes itself (``t_env_us`` ...) are ignored for featurization.

    Parameters
    ----------
    df : pandas.DataFrame
        Launch rows with a ``gpu`` column (catalog names, or names of ``gpus``). Not modified. A mapping or a
        list of mappings is read as :func:`predict` reads it.
    model : PipeweaveRegressor or path
        A fitted model (e.g. :func:`load_model`), a model file, or ``None`` for the shipped model.
    gpus : mapping of str to GPUSpec, optional
        Specs of GPUs that are not in the catalog (e.g. read from a spec file).
    data : path, optional
        Measurement directory, only needed for SGLang's tuned fused-MoE configs.
    problems : pandas.Series, optional
        Reasons already found by the caller (``''`` = none), aligned to ``df``.

    Returns
    -------
    (pandas.Series, pandas.Series)
        ``latency_us_pred`` (NaN on rows that were not predicted) and the reason each row was not
        predicted (``''`` for predicted rows), both aligned to ``df.index``.
    """
    import numpy as np
    import pandas as pd

    from ._frame import with_default_source
    from .frontend import DERIVED_COLUMNS, fill_launch_defaults, row_problems

    if not isinstance(df, pd.DataFrame):
        df = as_launch_frame(df)
    model = _model(model)
    _warn_lookalike_columns(df)
    work = df.drop(columns=[c for c in DERIVED_COLUMNS if c in df.columns])
    work = fill_launch_defaults(work)
    found = row_problems(work, dict(gpus) if gpus else None)
    _check_calibrated_spec(model, work, gpus)
    known = getattr(model, "families_", None)
    if known and "family" in work.columns:  # a family the model never trained on: no prediction, say so
        fam_all = work["family"].astype(str)
        unknown = (found == "") & ~fam_all.isin(list(known))
        if unknown.any():
            found = found.where(
                ~unknown,
                "the model was not trained on family '" + fam_all + f"' (it knows {sorted(known)}): retrain with "
                "rows of that family, or use the shipped model",
            )
    if problems is not None:
        found = problems.where(problems != "", found)
    ok = (found == "").to_numpy()
    pred = pd.Series(np.nan, index=df.index, name="latency_us_pred")
    if ok.any():
        from .model import ensure_features

        sub = work.iloc[np.flatnonzero(ok)]
        sub = with_default_source(sub, also=_untrained_user_source(model, sub))
        from .model import PipeweaveRegressor

        # a PipeweaveRegressor chooses an FP32 GEMM's tile, and the split with it, where the launch gives none
        sub = _with_inferred_split_k(sub, gpus, tiled_only=isinstance(model, PipeweaveRegressor))
        _note_unmeasured_sources(sub["source"], sub["family"].astype(str))

        if isinstance(model, PipeweaveRegressor):  # the hot path: each distinct launch featurized once, no frame
            raw, floored = model.predict(sub, gpus=gpus, data=data, return_floored=True)
            vals = np.asarray(raw, dtype=float)
            _note_floored(sub, np.asarray(floored, dtype=bool))
        else:
            vals = np.asarray(model.predict(ensure_features(sub, gpus=gpus, data=data, baselines=False)), dtype=float)
        bad = ~(np.isfinite(vals) & (vals > 0))
        if bad.any():  # never return a non-finite or non-positive latency
            found = found.copy()
            found.iloc[np.flatnonzero(ok)[bad]] = "the model gave no finite positive latency for this row"
            vals = np.where(bad, np.nan, vals)
        pred.iloc[np.flatnonzero(ok)] = vals  # type: ignore[call-overload]  # pandas-stubs: float arrays are fine
    return pred, found


def _with_inferred_split_k(
    rows: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None, *, tiled_only: bool = False
) -> pd.DataFrame:
    """``rows`` with the blank ``split_k`` of its ``gemm_fp32`` rows filled by :func:`pipeweave.frontend.infer_split_k`
    (the split of the smallest envelope for the row's tile, the front-end's heuristic one where it gives none);
    ``rows`` itself when none is blank. ``tiled_only`` (prediction): only rows that give a tile; a row without one
    keeps its blank, and the model infers the split with each tile it tries
    (:meth:`pipeweave.model.PipeweaveRegressor.library_tiles`). Training rows are never filled: they keep what
    their source records."""
    import numpy as np

    from ._frame import num_values
    from .frontend import infer_split_k, library_tile_rows

    if "family" not in rows.columns or not (rows["family"].astype(str) == "gemm_fp32").any():
        return rows
    given = num_values(rows, "split_k") if "split_k" in rows.columns else np.full(len(rows), np.nan)
    fill = (rows["family"].astype(str).str.strip().to_numpy() == "gemm_fp32") & ~np.isfinite(given)
    if tiled_only:
        fill &= ~library_tile_rows(rows)
    if not fill.any():
        return rows
    split = given.copy()
    split[fill] = infer_split_k(rows.iloc[np.flatnonzero(fill)], dict(gpus) if gpus else None)
    return rows.assign(split_k=split)


def _note_floored(rows: pd.DataFrame, floored: Any) -> None:
    """Warn about launches the model predicted under their physical lower bound (raised to it: a bound)."""
    if not floored.any():
        return
    import warnings

    where = rows.loc[floored, ["gpu", "family"]].astype(str).value_counts().index.tolist()
    named = ", ".join(f"{f} on {g}" for g, f in where[:3]) + (", ..." if len(where) > 3 else "")
    known = (
        " (B200's window-0 prefill rows timed less work than they state: see the README)"
        if ("B200", "attention_context") in where
        else ""
    )
    warnings.warn(
        f"{int(floored.sum())} of {len(rows)} launches were predicted under their physical lower bound and raised "
        f"to it ({named}): there the model extrapolates, or learned from rows timed with less work{known}; read "
        "those values as optimistic bounds",
        UserWarning,
        stacklevel=3,
    )


def _untrained_user_source(model: Any, rows: pd.DataFrame) -> tuple[str, ...]:
    """``(USER_SOURCE,)`` when ``rows`` name it and ``model`` never trained on rows of it (then, as in
    :func:`pipeweave.calibrate.residuals`, they are predicted for the family's default source, with a note),
    else ``()``. A model that did not train on a user's rows has never seen their (empty) source indicator:
    its prediction there would be an extrapolation, not a timing convention."""
    import warnings

    from .vocab import USER_SOURCE

    if "source" not in rows.columns or USER_SOURCE in (getattr(model, "sources_", None) or ()):
        return ()
    if not (rows["source"].astype("string").str.strip() == USER_SOURCE).any():
        return ()
    warnings.warn(
        f"rows with source {USER_SOURCE!r} (your own measurements): this model did not train on any, so they are "
        "predicted for each family's default source (its main training source); a model trained on your "
        "profiles predicts them under their own source",
        UserWarning,
        stacklevel=4,
    )
    return (USER_SOURCE,)


def _note_unmeasured_sources(src: pd.Series, fam: pd.Series) -> None:
    """Warn about rows asking for a shared source's timing of a family that source never measured."""
    import warnings

    import pandas as pd

    from .sources import source_families

    measured = source_families()
    distinct = pd.DataFrame({"s": src.astype(str).to_numpy(), "f": fam.astype(str).to_numpy()}).drop_duplicates()
    pairs = {(s, f) for s, f in distinct.itertuples(index=False) if s in measured and f not in measured[s]}
    for s, f in sorted(pairs):
        warnings.warn(
            f"source {s!r} measured no {f} launches (it measured {list(measured[s])}): the prediction carries its "
            f"timing convention over to {f} by extrapolation; leave source blank for {f}'s own source",
            UserWarning,
            stacklevel=3,
        )


def predict(
    launches: Any,
    gpu: Any = None,
    *,
    model: Any = None,
    data: str | os.PathLike[str] | None = None,
    bad_rows: str = "raise",
    interval: float | None = None,
) -> pd.Series | pd.DataFrame:
    """Predicted latency (us) of kernel launches on a GPU, measured or not.

    Parameters
    ----------
    launches : DataFrame, mapping or list of mappings
        Launch rows: ``family``, ``dtype`` and the family's shape columns (e.g. ``m, n, k`` for
        ``gemm``); optional tile plan (``block_m`` ... ``num_stages``), ``backend`` for attention and
        ``source`` (the timing convention; default: the family's main training source,
        :data:`pipeweave.vocab.DEFAULT_SOURCE`). Not modified. A Dask DataFrame is predicted
        partition by partition on its cluster (:func:`pipeweave.distributed.predict_dask`): the
        result is then a lazy Dask DataFrame, the launches plus ``latency_us_pred``, with NaN for
        rows outside the domain.
    gpu : str, path or GPUSpec, optional
        Catalog name or alias, spec file, or GPUSpec for every row; default: the rows' ``gpu`` column.
    model : PipeweaveRegressor or path, optional
        Default: the shipped model (``models/pipeweave_default.ubj``), loaded once per process.
    data : path, optional
        Measurement directory (for SGLang's tuned fused-MoE configs; default ``$PIPEWEAVE_DATA``).
    bad_rows : {"raise", "nan"}
        ``"raise"``: a :class:`DataError` lists every row that cannot be predicted (1-based row
        number and reason). ``"nan"``: those rows get NaN and the others are predicted.
    interval : {0.5, 0.8, 0.9}, optional
        Also return each prediction's error band at this coverage
        (:meth:`PipeweaveRegressor.predict_interval`: the middle share of the model's held-out
        measured / predicted ratios for the family: on a GPU of a generation it never measured
        (``band == "unseen"``: leave-one-generation-out errors), on a GPU it never measured of a measured
        generation (``"sibling"``: leave-one-GPU-out errors), on a GPU it was trained on, for shapes it
        never saw (``"seen"``), or on the GPU a few-shot calibration measured (``"calibrated"``: the left-out
        errors of its measured launches); ``""`` where the model has no band for the family). Needs a model with
        error bands (the shipped one; ``pipeweave train --error-bands``). A Dask DataFrame gains the
        same three columns.

    Returns
    -------
    pandas.Series or pandas.DataFrame
        ``latency_us_pred`` in microseconds, aligned to the rows of ``launches``; with ``interval``, a
        DataFrame of ``latency_us_pred``, ``latency_us_lo``, ``latency_us_hi`` (us) and ``band``.

    Raises
    ------
    DataError
        Rows outside the model's domain (with ``bad_rows="raise"``), no GPU given, bad arguments.
    UnknownGPUError
        ``gpu`` is not a catalog name, alias or readable spec file.
    SchemaMismatchError
        The model file was written for another feature list.

    Examples
    --------
    >>> import pipeweave as pw                                                 # doctest: +SKIP
    >>> pw.predict({"family": "gemm", "dtype": "bfloat16", "m": 8192, "n": 8192, "k": 8192}, gpu="B300")
    """
    if bad_rows not in ("raise", "nan"):
        raise DataError(f"bad_rows must be 'raise' or 'nan', got {bad_rows!r}", hint="use bad_rows='nan' to keep going")
    from .distributed import is_dask_collection
    from .model import check_coverage, has_error_bands

    coverage = None if interval is None else check_coverage(interval)
    if is_dask_collection(launches):  # partition-wise on the Dask cluster; lazy, rows outside the domain get NaN
        from .distributed import predict_dask

        return predict_dask(launches, gpu, model=model, data=data, interval=coverage)
    df, gpus = _with_gpu(as_launch_frame(launches), gpu)
    data = _checked_data(data)
    fitted = _model(model)
    if coverage is not None and not has_error_bands(fitted):
        raise DataError(
            f"interval={interval!r}: this model has no error bands",
            hint="use the shipped model (model=None), attach bands with model.set_error_bands("
            "pipeweave.evaluation.estimate_error_bands(...)), or drop interval",
        )
    pred, problems = predict_frame(df, fitted, gpus, data=data)
    bad = (problems != "").to_numpy()
    if bad.any() and bad_rows == "raise":
        import numpy as np

        pos = np.flatnonzero(bad)
        lines = [f"row {i + 1}: {problems.iloc[i]}" for i in pos[:10]]
        more = f"\n  ... and {len(pos) - 10} more rows" if len(pos) > 10 else ""
        raise DataError(
            f"{len(pos)} of {len(df)} launch rows cannot be predicted:\n  " + "\n  ".join(lines) + more,
            hint="fix those rows, or pass bad_rows='nan' to predict the others",
        )
    if coverage is None:
        return pred
    return pred.to_frame().assign(**band_columns(fitted, df, pred, coverage, gpus))


def band_columns(
    model: PipeweaveRegressor,
    df: pd.DataFrame,
    pred: pd.Series,
    coverage: float,
    gpus: Mapping[str, GPUSpec] | None = None,
) -> dict[str, Any]:
    """``latency_us_lo``, ``latency_us_hi`` (us) and ``band`` arrays of :func:`predict_frame`'s predictions
    ``pred`` of ``df`` (:meth:`PipeweaveRegressor.predict_interval`; ``gpus``: specs of GPUs outside the
    catalog); NaN / ``""`` on rows not predicted."""
    import numpy as np

    n = len(df)
    out: dict[str, Any] = {"latency_us_lo": np.full(n, np.nan), "latency_us_hi": np.full(n, np.nan)}
    out["band"] = np.full(n, "", dtype=object)
    ok = np.flatnonzero(pred.notna().to_numpy())
    if len(ok):  # rows not predicted may lack the columns a band is looked up by
        iv = model.predict_interval(df.iloc[ok], coverage, pred_us=pred.to_numpy()[ok], gpus=gpus)
        for col in out:
            out[col][ok] = iv[col].to_numpy()
    return out


def load_model(path: str | os.PathLike[str] | None = None) -> PipeweaveRegressor:
    """Load a model file written by :func:`pipeweave.model.save_model` (default: the shipped model).

    Parameters
    ----------
    path : path, optional
        ``.ubj``/``.json`` model file; default ``models/pipeweave_default.ubj`` (repository
        checkout, else the copy shipped in the installed package). The default model is read
        once per process; each call returns its own copy (changing it changes no later prediction).

    Returns
    -------
    PipeweaveRegressor
        The fitted model.

    Raises
    ------
    DataError
        The file does not exist or is not a model file.
    SchemaMismatchError
        The file was written for another schema or feature list (retrain it).

    Examples
    --------
    >>> model = pw.load_model()                                                # doctest: +SKIP
    >>> model.families_                                                        # doctest: +SKIP
    """
    from .model import load_model as _load

    if path is not None:
        return _load(path)
    import copy

    return copy.copy(_default_model())  # attributes (bands, calibration) set on it stay on the copy


# ---------------------------------------------------------------------------- featurize / explain
def featurize(
    launches: Any, gpu: Any = None, *, data: str | os.PathLike[str] | None = None, baselines: bool = True
) -> pd.DataFrame:
    """Analytical features of launches: per-pipe work and time, tile plan, waves, envelope, bounds.

    Parameters
    ----------
    launches : DataFrame, mapping or list of mappings
        Launch rows (see :func:`predict`); not modified.
    gpu : str, path or GPUSpec, optional
        GPU for every row; default: the rows' ``gpu`` column.
    data : path, optional
        Measurement directory (SGLang tuned configs for ``fused_moe``).
    baselines : bool
        Also compute the TileSight-style baseline column ``t_tilesight_us``.

    Returns
    -------
    pandas.DataFrame
        One row per launch, same index: :data:`pipeweave.frontend.FEATURES` plus the time columns
        (``t_env_us`` envelope, ``t_env_warm_us`` the envelope of a replay that finds its operands in L2,
        ``t_lower_us`` lower bound, ``t_roofline_us``; all microseconds).

    Raises
    ------
    DataError
        A row the front-end cannot describe (unknown family, missing shape column, dtype the GPU lacks).

    Examples
    --------
    >>> f = pw.featurize({"family": "gemm", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096}, gpu="H100")
    ...                                                                        # doctest: +SKIP
    >>> f[["t_env_us", "bound_pipe"]]                                          # doctest: +SKIP
    """
    from .frontend import featurize as _featurize

    df, gpus = _with_gpu(as_launch_frame(launches), gpu)
    df = _checked_launches(df, gpus)
    return _featurize(df, gpus=gpus, data=_checked_data(data), baselines=baselines)


def _checked_launches(df: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None, verb: str = "described") -> pd.DataFrame:
    """``df`` with the launch defaults :func:`predict` fills (:data:`pipeweave.frontend.LAUNCH_DEFAULTS`, and a
    blank FP32 GEMM ``split_k``: :func:`pipeweave.frontend.infer_split_k`), or a :class:`DataError` naming every
    row :func:`predict` would not predict (rows count from 1; the message says they cannot be ``verb``)."""
    import numpy as np

    from .frontend import fill_launch_defaults, row_problems

    work = fill_launch_defaults(df)
    found = row_problems(work, dict(gpus) if gpus else None)
    bad = found[found != ""]
    if len(bad):
        pos = [int(i) for i in np.flatnonzero((found != "").to_numpy())]
        shown = "; ".join(f"row {p + 1}: {found.iloc[p]}" for p in pos[:3])
        raise DataError(
            f"{len(bad)} of {len(df)} launch rows cannot be {verb}: {shown}" + ("; ..." if len(bad) > 3 else ""),
            hint="fix the launch's values"
            if len(df) == 1
            else "fix those rows; pipeweave.predict(rows, bad_rows='nan') predicts the others",
        )
    return _with_inferred_split_k(work, gpus)


#: the columns :func:`library_tile_frame` adds: the kernel an FP32 GEMM launch without a tile was predicted with
LIBRARY_TILE_FRAME_COLUMNS: tuple[str, ...] = (
    "tile_block_m",
    "tile_block_n",
    "tile_block_k",
    "tile_num_warps",
    "tile_num_stages",
    "tile_split_k",
    "tile_source",
    "split_source",
)


def library_tile_frame(
    model: Any,
    df: pd.DataFrame,
    gpus: Mapping[str, GPUSpec] | None = None,
    data: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """For each ``gemm_fp32`` launch of ``df`` without a tile (cuBLAS chooses its kernel), the kernel ``model``
    predicts it with (:meth:`pipeweave.model.PipeweaveRegressor.library_tiles`): :data:`LIBRARY_TILE_FRAME_COLUMNS`
    on ``df.index`` (``tile_block_m`` ... ``tile_split_k``; ``tile_source``: the GPUs whose measured launches voted
    for the tile, or ``"fastest"``, the model's fastest SIMT tile; ``split_source``: ``"given"``, ``"voted"`` or
    ``"inferred"``); NaN / ``""`` on every other row, and on all rows for a model that is not a
    :class:`~pipeweave.model.PipeweaveRegressor`. Rows must be predictable (see :func:`predict_frame`)."""
    import numpy as np
    import pandas as pd

    from ._frame import with_default_source
    from .frontend import library_tile_rows
    from .model import TABLE_TILE_COLUMNS, PipeweaveRegressor

    cols: dict[str, np.ndarray] = {
        c: (np.full(len(df), "", dtype=object) if c.endswith("source") else np.full(len(df), np.nan))
        for c in LIBRARY_TILE_FRAME_COLUMNS
    }
    pos = np.flatnonzero(library_tile_rows(df)) if len(df) else np.array([], dtype=int)
    if isinstance(model, PipeweaveRegressor) and len(pos):
        got = model.library_tiles(with_default_source(df.iloc[pos]), gpus=gpus, data=data)
        for c in TABLE_TILE_COLUMNS:
            cols[f"tile_{c}"][pos] = got[c].to_numpy(dtype=float)
        cols["tile_source"][pos] = got["tile_source"].to_numpy()
        cols["split_source"][pos] = got["split_source"].to_numpy()
    return pd.DataFrame(cols, index=df.index)


def library_tile_choice(
    model: Any,
    df: pd.DataFrame,
    gpus: Mapping[str, GPUSpec] | None = None,
    data: str | os.PathLike[str] | None = None,
) -> dict[str, Any] | None:
    """For an FP32 GEMM launch without a tile (the first row of ``df``; cuBLAS chooses its kernel), the kernel
    ``model`` predicts it with (:meth:`pipeweave.model.PipeweaveRegressor.library_tiles`) as a JSON-ready dict:
    ``block_m`` ... ``num_stages``, ``split_k``, ``latency_fastest_us`` (that kernel's prediction, us), ``source``
    (the GPUs whose measured launches voted for it, or ``"fastest"``: the model's fastest SIMT tile, and then
    ``averaged``, how many fastest tiles the prediction averages), ``split_source`` (``"given"``, ``"voted"`` or
    ``"inferred"`` for that tile on this GPU). None for any other launch, or a model that is not a
    :class:`~pipeweave.model.PipeweaveRegressor`."""
    from ._frame import with_default_source
    from .frontend import library_tile_rows
    from .model import LIBRARY_TILE_FASTEST, TABLE_TILE_COLUMNS, PipeweaveRegressor

    if not isinstance(model, PipeweaveRegressor) or not len(df) or not library_tile_rows(df.iloc[:1]).any():
        return None
    row = model.library_tiles(with_default_source(df.iloc[:1]), gpus=gpus, data=data).iloc[0]
    return {
        **{k: int(row[k]) if float(row[k]).is_integer() else float(row[k]) for k in TABLE_TILE_COLUMNS},
        "latency_fastest_us": float(row["latency_fastest_us"]),
        "source": str(row["tile_source"]),
        "split_source": str(row["split_source"]),
        **({"averaged": LIBRARY_TILE_FASTEST} if row["tile_source"] == "fastest" else {}),
    }


def _explain_model(model: Any) -> Any:
    """The model whose kernel choice :func:`explain` shows for an FP32 GEMM without a tile: ``False`` none; ``None``
    the shipped model when it loads (else none: the explanation is analytical and does not need it)."""
    from ._errors import PipeweaveError

    if model is False:
        return None
    if model is None:
        try:
            return _default_model()
        except PipeweaveError:
            return None
    return _model(model)


def explain_launch(
    df: pd.DataFrame, spec: GPUSpec, data: str | os.PathLike[str] | None = None, model: Any = False
) -> dict[str, Any]:
    """Explanation dict of the first row of ``df`` on ``spec`` (see :func:`explain`; ``model`` as there, default
    ``False``: the front-end's heuristic tile)."""
    import numpy as np

    from .frontend import PIPES, given_split_k
    from .frontend import featurize as _featurize
    from .model import TABLE_TILE_COLUMNS
    from .vocab import TILE_COLUMNS

    first = df.iloc[:1].assign(gpu=spec.name)
    one = _checked_launches(first, {spec.name: spec})
    fp32 = str(one["family"].iloc[0]) == "gemm_fp32"
    # (the launch as given: the checked one carries the split the front-end infers for its heuristic tile)
    chosen = library_tile_choice(_explain_model(model), first, {spec.name: spec}, data) if fp32 else None
    if chosen is not None:  # the kernel predict uses for this launch (cuBLAS's vote, or the model's fastest tile)
        one = one.assign(**{c: float(chosen[c]) for c in TABLE_TILE_COLUMNS})
    f = _featurize(one, gpus={spec.name: spec}, data=data).iloc[0]
    given_split = bool(np.isfinite(given_split_k(first)[0]))
    if chosen is None:  # an FP32 GEMM's split: as given, or inferred (the smallest envelope) where left blank
        origin = str(f["tile_origin"]) + ("; split_k of the smallest envelope" if fp32 and not given_split else "")
    elif chosen["source"] == "fastest":
        origin = (
            "the model's fastest cuBLAS SIMT tile (no measured launch of this architecture; its prediction is the "
            f"geometric mean of the {chosen['averaged']} fastest tiles')"
        )
    elif chosen["split_source"] == "inferred":
        origin = (
            f"the tile cuBLAS ran for the nearest measured launches on {chosen['source']} (its architecture); "
            "split_k of the smallest envelope on this GPU"
        )
    else:
        origin = f"the kernel cuBLAS ran for the nearest measured launches on {chosen['source']}"
    if chosen is not None and given_split:
        origin += "; split_k as given"
    pipes = {
        p: {
            "work": float(f[f"work_{p}"]),
            "time_us": float(f[f"t_chip_{p}_us"]),
            "busiest_sm_time_us": float(f[f"t_sm_{p}_us"]),
        }
        for p in PIPES
    }
    return {
        "gpu": spec.name,
        "family": one["family"].iloc[0],
        "dtype": one["dtype"].iloc[0],
        "tile_plan": {
            # whole numbers as ints (block_m 128, not 128.0: the form --config and the tile columns take)
            **{c: int(f[c]) if float(f[c]).is_integer() else float(f[c]) for c in TILE_COLUMNS},
            "split_k": int(f["split_k"]) if float(f["split_k"]).is_integer() else float(f["split_k"]),
            "origin": origin,
        },
        **({"library_tile": chosen} if chosen is not None else {}),
        "grid_ctas": float(f["grid_ctas"]),
        "ctas_per_sm": float(f["ctas_per_sm"]),
        "waves": float(f["waves"]),
        "wave_efficiency": float(f["wave_efficiency"]),
        "occupancy": float(f["occupancy"]),
        "pipes": pipes,
        "latency_bound_us": float(f["t_latency_us"]),
        "bound_pipe": str(f["bound_pipe"]),
        "envelope_us": float(f["t_env_us"]),
        "warm_l2_envelope_us": float(f["t_env_warm_us"]),
        "lower_bound_us": float(f["t_lower_us"]),
        "roofline_us": float(f["t_roofline_us"]),
        "tilesight_us": float(f["t_tilesight_us"]),
    }


def explain(
    launch: Any, gpu: Any = None, *, data: str | os.PathLike[str] | None = None, model: Any = None
) -> dict[str, Any]:
    """The analytical view of one launch: tile plan, per-pipe work and time, binding pipe, bounds.

    Parameters
    ----------
    launch : mapping or one-row DataFrame
        One launch (see :func:`predict`); with several rows, the first is explained.
    gpu : str, path or GPUSpec, optional
        The GPU; default: the launch's ``gpu`` value.
    data : path, optional
        Measurement directory (SGLang tuned configs for ``fused_moe``).
    model : PipeweaveRegressor, path, None or False, optional
        Read only for an FP32 GEMM launch without a tile (cuBLAS chooses its kernel): it is explained with the
        kernel this model predicts it with, as :func:`predict` does (:func:`library_tile_choice`). Default: the
        shipped model (the front-end's heuristic tile when no model file is installed); ``False``: the heuristic
        tile (the smallest envelope).

    Returns
    -------
    dict
        ``tile_plan`` (the six tile columns, ``split_k``, ``origin``), ``grid_ctas``, ``ctas_per_sm``,
        ``waves``, ``pipes`` (per pipe: ``work``, ``time_us``, ``busiest_sm_time_us``),
        ``bound_pipe``, ``envelope_us``, ``warm_l2_envelope_us``, ``lower_bound_us``, ``roofline_us``,
        ``tilesight_us``; for an FP32 GEMM launch a model chose the kernel of, ``library_tile``
        (:func:`library_tile_choice`).

    Raises
    ------
    DataError
        The launch cannot be described (see :func:`featurize`).

    Examples
    --------
    >>> pw.explain({"family": "gemm", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096},
    ...            gpu="H100")["bound_pipe"]                                   # doctest: +SKIP
    'tensor'
    """
    df = as_launch_frame(launch)
    if len(df) != 1:
        raise DataError(
            f"explain takes one launch, got {len(df)} rows",
            hint="pass one row (e.g. df.iloc[i]); pipeweave.featurize gives the pipe times of many rows",
        )
    if gpu is None:
        if "gpu" not in df.columns:
            raise DataError("the launch has no `gpu` value and no gpu was given", hint="pass gpu='H100'")
        gpu = str(df["gpu"].iloc[0])
    return explain_launch(df, _resolve_gpu(gpu), data=_checked_data(data), model=model)


# ------------------------------------------------------------------------------------- profiles
def load_profiles(
    data: str | os.PathLike[str] | None = None,
    *,
    sources: str | Iterable[str] | None = None,
    families: str | Iterable[str] | None = None,
    dtypes: str | Iterable[str] | None = None,
    gpus: str | Iterable[str] | None = None,
    cache: bool = True,
) -> pd.DataFrame:
    """The real measurements of the data directory as one canonical profile table.

    Parameters
    ----------
    data : path, optional
        Measurement directory (default ``$PIPEWEAVE_DATA``, else ``../shared/datasets``).
    sources, families, dtypes, gpus : str or list of str, optional
        Keep only these (GPU aliases accepted).
    cache : bool
        Reuse/write the parsed table under ``$PIPEWEAVE_CACHE`` (keyed by the files' fingerprint).

    Returns
    -------
    pandas.DataFrame
        One row per measured launch (:data:`pipeweave.sources.PROFILE_COLUMNS`; ``latency_us`` in
        microseconds, ``source`` and ``timing`` kept).

    Raises
    ------
    DataError
        Missing data directory, malformed source file or unknown filter value.

    See Also
    --------
    load_profiles_report : the same table plus the count of every dropped row.

    Examples
    --------
    >>> df = pw.load_profiles(families="gemm", dtypes="bfloat16")               # doctest: +SKIP
    """
    from .sources import load_profiles as _load

    return _load(data, sources=sources, families=families, dtypes=dtypes, gpus=gpus, cache=cache)


def load_profiles_report(
    data: str | os.PathLike[str] | None = None,
    *,
    sources: str | Iterable[str] | None = None,
    families: str | Iterable[str] | None = None,
    dtypes: str | Iterable[str] | None = None,
    gpus: str | Iterable[str] | None = None,
    cache: bool = True,
) -> tuple[pd.DataFrame, LoadReport]:
    """:func:`load_profiles` plus its :class:`pipeweave.sources.LoadReport` (rows per source, drops by reason).

    Parameters and Raises: as :func:`load_profiles`.

    Returns
    -------
    (pandas.DataFrame, LoadReport)

    Examples
    --------
    >>> df, rep = pw.load_profiles_report(families="gemm")                      # doctest: +SKIP
    >>> print(rep.to_text())                                                   # doctest: +SKIP
    """
    from .sources import load_profiles_report as _load

    return _load(data, sources=sources, families=families, dtypes=dtypes, gpus=gpus, cache=cache)


# ----------------------------------------------------------------------------------- evaluate
def evaluate(
    protocol: str = "logo",
    *,
    out: str | os.PathLike[str],
    families: str | Sequence[str] | None = None,
    methods: str | Sequence[str] | None = None,
    data: str | os.PathLike[str] | None = None,
    max_train_rows_per_gpu: int | None = 4_000,
    n_estimators: int | None = 200,
    progress: bool = True,
    force: bool = False,
    profiles: Sequence[str | os.PathLike[str]] | None = None,
    shared: bool = True,
    dask: str | None = None,
    train_gpus: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Run an evaluation protocol over the shared measurements and write its report to ``out``.

    Parameters
    ----------
    protocol : {"logo", "unseen-gpu", "unseen-shape", "gpu-split", "dse"}
        ``logo``: train on the other GPU generations, predict the held-out one from spec sheets;
        ``unseen-gpu``: hold out each GPU in turn, its generation's other GPUs still measured (a new
        SKU of a known generation); ``unseen-shape``: hold out 20% of shapes on all GPUs;
        ``gpu-split``: train on ``train_gpus``, test every other GPU (a published predictor's own
        split); ``dse``: the Triton config recommender.
    out : path
        Report folder (``results.json``, ``results.md``, figures). Required: committed reports are
        not a default target.
    families, methods : str or list of str, optional
        Evaluation families (:data:`pipeweave.evaluation.EVAL_FAMILIES`) and methods
        (:data:`pipeweave.evaluation.METHODS`), one name or a list; default all.
    data : path, optional
        Measurement directory.
    max_train_rows_per_gpu : int or None
        Seeded cap on training rows per GPU per fold (None = all; default 4,000, the ``logo`` and
        ``unseen-gpu`` time budget).
    n_estimators : int or None
        Boosting rounds of the learned methods.
    progress : bool
        Progress bar on a terminal, one line per fold otherwise.
    force : bool
        Overwrite ``out`` even when it holds a report committed to the repository.
    profiles : list of path, optional
        ``logo`` / ``unseen-gpu`` / ``unseen-shape`` / ``gpu-split``: your own canonical profile files (:mod:`pipeweave.profiles`),
        scored as their own source.
    shared : bool
        ``False``: evaluate the ``profiles`` rows alone, without the shared measurements.
    dask : str, optional
        ``logo`` / ``unseen-gpu`` / ``unseen-shape`` / ``gpu-split``: a Dask address (``local:N`` or ``tcp://host:8786``); every
        (fold, method) fit runs as a task there, with the same predictions.
    train_gpus : list of str, optional
        ``gpu-split`` (required there): the GPUs (catalog names or aliases) whose rows train the one fold;
        every other GPU is tested, e.g. NeuSight's split ``["P100", "P4", "T4", "V100", "A100-PCIe-40GB"]``.

    Returns
    -------
    dict
        The results (the content of ``results.json``).

    Raises
    ------
    DataError
        Unknown protocol, family or method; ``out`` holds committed results and ``force`` is False.

    Examples
    --------
    >>> res = pw.evaluate("logo", families=["moe_w13"], methods=["pipeweave", "roofline"],
    ...                   out="/tmp/pw_logo")                                  # doctest: +SKIP
    """
    from ._outputs import refuse_committed_output

    refuse_committed_output(out, force=force)
    if protocol == "dse":
        if profiles or not shared or dask:
            raise DataError(
                "profiles / shared / dask apply to the 'logo', 'unseen-gpu' and 'unseen-shape' protocols, not 'dse'",
                hint="drop them, or use protocol='logo', 'unseen-gpu' or 'unseen-shape'",
            )
        from .diagnose import run_dse_protocol

        return run_dse_protocol(data=data, out_dir=out, progress=progress)
    if protocol in ("few-shot", "anatomy"):
        name = "run_few_shot" if protocol == "few-shot" else "run_anatomy"
        raise DataError(
            f"protocol {protocol!r} has its own function and arguments: pipeweave.evaluation.{name}(...)",
            hint="pw.evaluate runs 'logo', 'unseen-gpu', 'unseen-shape' and 'dse'",
        )
    if protocol not in ("logo", "unseen-gpu", "unseen-shape", "gpu-split"):
        raise DataError(
            f"unknown protocol {protocol!r}", hint="use 'logo', 'unseen-gpu', 'unseen-shape', 'gpu-split' or 'dse'"
        )
    from .evaluation import EVAL_FAMILIES, METHODS, run_evaluation

    # one name is a list of one (a string is not read letter by letter)
    families = [families] if isinstance(families, str) else families
    methods = [methods] if isinstance(methods, str) else methods
    # names are checked before minutes of loading and featurizing
    for what, given, valid in (("method", methods, METHODS), ("family", families, EVAL_FAMILIES)):
        bad = sorted({str(x) for x in (given or ())} - {str(v) for v in valid})
        if bad:
            raise DataError(f"unknown evaluation {what} {bad}", hint=f"use some of {sorted(str(v) for v in valid)}")

    return run_evaluation(
        protocol,
        families=families,
        methods=methods,
        out=Path(out),
        data=data,
        max_train_rows_per_gpu=max_train_rows_per_gpu,
        n_estimators=n_estimators,
        progress=progress,
        profiles=profiles,
        shared=shared,
        dask=dask,
        train_gpus=train_gpus,
    )


# ------------------------------------------------------------------------------ GPUs / diagnose
def get_gpu(name_or_path: str | os.PathLike[str]) -> GPUSpec:
    """The :class:`GPUSpec` of a catalog name/alias (``"H100"``) or a spec file (``.toml``/``.json``).

    Raises
    ------
    UnknownGPUError
        Not a catalog name or alias (the message lists close names).
    DataError
        A spec file that is missing fields or has implausible values.

    Examples
    --------
    >>> pw.get_gpu("NVIDIA H100 80GB HBM3").name
    'H100-SXM'
    """
    from .hardware import get_gpu as _get

    return _get(name_or_path)


def list_gpus() -> list[GPUSpec]:
    """Every GPU of the catalog (``datasets/gpus.toml``), oldest generation first.

    Examples
    --------
    >>> "B300" in [g.name for g in pw.list_gpus()]                              # doctest: +SKIP
    True
    """
    from .hardware import list_gpus as _list

    return list(_list())


def diagnose(
    launch: Any,
    gpu: Any = None,
    *,
    measured_us: float | None = None,
    top: int = 5,
    models: Any = None,
    data: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Ceiling, binding pipe, pipe utilizations and ranked tile configs of one Triton kernel launch.

    Parameters
    ----------
    launch : mapping, one-row DataFrame or Series
        One launch of a tiled-matmul family (``moe_w13``, ``fused_moe``, ``gemm``); may hold a tile
        plan (``block_m`` ... ``num_stages``), else the kernel's own config is diagnosed.
    gpu : str, path or GPUSpec, optional
        The GPU; default: the launch's ``gpu`` value.
    measured_us : float, optional
        The launch's measured latency (microseconds): utilizations and the headroom verdict use it.
    top : int
        Number of ranked configs to return (default 5).
    models, data
        Diagnose models (:class:`pipeweave.diagnose.DiagnoseModels` or the folder they were built in; default:
        the shipped ones) and the data directory (SGLang's tuned configs).

    Returns
    -------
    dict
        ``predicted_us``, ``ceiling_us``, ``lower_bound_us``, ``measured_over_ceiling`` and
        ``headroom_verdict`` (with ``measured_us``), ``bound_pipe``, ``pipe_utilization``,
        ``recommendations`` (``[{"config", "predicted_us", "speedup", ...}]``), ``notes`` ...

    Raises
    ------
    DataError
        A launch the diagnosis does not cover, or one outside the valid domain :func:`predict` checks (e.g.
        ``topk > num_experts``, a tile plan that does not launch on the GPU).

    Examples
    --------
    >>> pw.diagnose({"family": "moe_w13", "dtype": "bfloat16", "num_tokens": 4096, "num_experts": 64,
    ...              "topk": 8, "hidden_size": 3584, "inter_size": 2560}, gpu="H100",
    ...             measured_us=2321.0)["headroom_verdict"]                    # doctest: +SKIP
    'likely_headroom'
    """
    from .diagnose import diagnose as _diagnose

    df = as_launch_frame(launch)
    if len(df) != 1:
        raise DataError(f"diagnose takes one launch, got {len(df)} rows", hint="pass one row (e.g. df.iloc[[i]])")
    from ._frame import is_missing

    row = _diagnose_row({str(k): v for k, v in df.iloc[0].to_dict().items()})
    gpus = None
    if gpu is not None:
        spec = _resolve_gpu(gpu)
        given = row.get("gpu")
        if not is_missing(given) and str(given).strip() != spec.name:
            from ._errors import PipeweaveError

            try:
                other = _resolve_gpu(str(given)).name != spec.name
            except PipeweaveError:  # not a catalog name (e.g. a spec file's GPU): a different name all the same
                other = True
            if other:
                import warnings

                warnings.warn(f"the launch's gpu {given!r} is replaced by gpu={spec.name!r}", UserWarning, stacklevel=2)
        row["gpu"] = spec.name
        gpus = {spec.name: spec}
    elif "gpu" not in row:
        raise DataError("the launch has no `gpu` value and no gpu was given", hint="pass gpu='H100'")
    import pandas as pd

    from .diagnose import TUNABLE_FAMILIES
    from .frontend import DERIVED_COLUMNS

    # the valid domain of predict and explain (a tile plan must launch on the GPU, topk <= num_experts ...);
    # a family diagnose does not cover is left to its own message
    if str(row.get("family", "")).strip() in TUNABLE_FAMILIES:
        frame = pd.DataFrame([row])
        _checked_launches(frame.drop(columns=[c for c in DERIVED_COLUMNS if c in frame.columns]), gpus, "diagnosed")
    return _diagnose(row, measured_us, top, gpus=gpus, models=models, data=_checked_data(data))


def _diagnose_row(row: dict[str, Any]) -> dict[str, Any]:
    """The launch of :func:`diagnose` checked: a ``config`` text becomes the tile columns, a partial tile plan
    and a key that looks like a misspelled launch column are refused (they would be ignored)."""
    import difflib

    from ._frame import is_missing
    from .sources import PROFILE_COLUMNS
    from .vocab import TILE_COLUMNS, parse_tile_config

    if "config" in row:
        text = row.pop("config")
        if not is_missing(text):
            if any(not is_missing(row.get(c)) for c in TILE_COLUMNS):
                raise DataError(
                    "the launch gives both config and tile columns",
                    hint="give the tile plan one way: config or columns",
                )
            row.update(dict(zip(TILE_COLUMNS, parse_tile_config(str(text)))))
    from .frontend import DERIVED_COLUMNS
    from .model import NON_LAUNCH_COLUMNS

    # every column pipeweave reads or writes (explain's tile plan and predict's outputs merge into a launch)
    known = (
        set(PROFILE_COLUMNS)
        | set(TILE_COLUMNS)
        | set(NON_LAUNCH_COLUMNS)
        | set(DERIVED_COLUMNS)
        | {"split_k", "origin", "latency_us_lo", "latency_us_hi", "band", "count"}
    )
    for key in row:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.8)
            if close:
                raise DataError(
                    f"unknown launch key {key!r} (did you mean {close[0]!r}?)", hint=f"rename it to {close[0]!r}"
                )
    tiles = [c for c in TILE_COLUMNS if not is_missing(row.get(c))]
    if tiles and len(tiles) < len(TILE_COLUMNS):
        raise DataError(
            f"tile plan incomplete: the launch gives {tiles} of {list(TILE_COLUMNS)}",
            hint="give all six tile columns (or config='BM,BN,BK,GM,WARPS,STAGES'), or none for the kernel's own "
            "config",
        )
    return row
