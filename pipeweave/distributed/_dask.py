"""Dask implementations behind :mod:`pipeweave.distributed` (dask imported inside the functions)."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..model import PipeweaveRegressor

__all__ = ["connect", "is_dask_collection", "predict_dask", "predict_files", "train_dask", "tune_dask", "model_bytes"]

_LOCAL = re.compile(r"^local(?::(\d+))?$")


def _require_dask() -> None:
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise DataError(
            "the Dask integration needs dask and distributed", hint="pip install 'pipeweave[dask]'"
        ) from None


def connect(address: str) -> Any:
    """A ``distributed.Client`` for ``address``: ``local`` / ``local:N`` (a local cluster of N worker
    processes, one thread each; default 2) or a scheduler address such as ``tcp://host:8786``.

    Close it with ``client.close()`` (a local cluster closes with its client).
    """
    _require_dask()
    from distributed import Client

    m = _LOCAL.match(str(address).strip())
    if m:
        n = int(m.group(1) or 2)
        if n < 1:
            raise DataError(f"Dask address {address!r}: a local cluster needs at least one worker", hint="e.g. local:2")
        # worker processes start by spawn (distributed's default): safe after XGBoost ran in this process
        return Client(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
    if not re.match(r"^[a-z]+://", str(address)):
        raise DataError(
            f"Dask address {address!r} is neither local[:N] nor a scheduler address",
            hint="e.g. local:2 or tcp://scheduler:8786",
        )
    try:
        return Client(address, timeout="20s")
    except OSError as exc:
        raise DataError(
            f"cannot reach the Dask scheduler at {address!r}: {exc}",
            hint="start one with `dask scheduler` (and `dask worker ADDRESS`), or use the address local:2",
        ) from None


def is_dask_collection(obj: Any) -> bool:
    """Whether ``obj`` is a Dask collection (without importing dask when it is not)."""
    mod = type(obj).__module__ or ""
    if not mod.startswith("dask"):
        return False
    from dask import is_dask_collection as _is

    return bool(_is(obj))


# ------------------------------------------------------------------------------------ the model
def model_bytes(model: Any = None) -> bytes:
    """The model file's bytes (what workers load): ``model`` is None (the shipped model), a path or a fitted model."""
    from ..model import DEFAULT_MODEL_PATH, save_model

    if model is None or isinstance(model, (str, os.PathLike)):
        path = Path(model) if model is not None else DEFAULT_MODEL_PATH
        if not path.is_file():
            raise DataError(
                f"model file not found: {str(path)!r}",
                hint="pass model= (a saved model path or a fitted PipeweaveRegressor)",
            )
        return path.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:  # a fitted model: its model file, written as save_model writes it
        return save_model(model, Path(tmp) / "model.ubj").read_bytes()


_WORKER_MODELS: dict[str, Any] = {}


def _worker_model(blob: bytes) -> PipeweaveRegressor:
    """The model of ``blob`` on this worker process (loaded once per process, checked like any model file)."""
    from ..model import load_model

    key = hashlib.sha256(blob).hexdigest()
    if key not in _WORKER_MODELS:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "model.ubj"
            path.write_bytes(blob)
            _WORKER_MODELS[key] = load_model(path)
    return _WORKER_MODELS[key]


# ------------------------------------------------------------------------------------- predict
#: the columns a partition gains with ``interval`` (pipeweave.api.band_columns), and their dtypes
_BAND_COLUMNS: dict[str, Any] = {"latency_us_lo": float, "latency_us_hi": float, "band": "str"}


def _predict_partition(
    df: pd.DataFrame,
    blob: bytes,
    gpus: Mapping[str, Any] | None,
    data: Any,
    coverage: float | None = None,
    gpu_name: str | None = None,
) -> pd.DataFrame:

    import pandas as pd

    from ..api import band_columns, predict_frame

    bands = {} if coverage is None else _BAND_COLUMNS
    if df.empty:
        empty = {c: pd.Series([], dtype=t, index=df.index) for c, t in {"latency_us_pred": float, **bands}.items()}
        return df.assign(**empty)
    model = _worker_model(blob)
    specs = dict(gpus) if gpus else None
    problems = None
    work = df
    if gpu_name is not None:  # the given GPU fills blank gpu cells; a cell naming another GPU is not predicted
        problems, cells = _gpu_conflicts(df, gpu_name, specs)
        work = df.assign(gpu=gpu_name)
        df = df.assign(gpu=cells)
    pred, _ = predict_frame(work, model, specs, data=data, problems=problems)
    out = df.assign(latency_us_pred=pred.to_numpy(dtype=float))
    if coverage is not None:
        out = out.assign(**band_columns(model, work, pred, coverage, specs))
        out["band"] = out["band"].astype("str")  # a text column parquet can type ('' where no band)
    return out


def _gpu_conflicts(df: pd.DataFrame, gpu_name: str, specs: Mapping[str, Any] | None) -> tuple[Any, Any]:
    """(reason per row, '' where none; the gpu cells to write back) for rows predicted on ``gpu_name``: a row whose
    own gpu cell names another GPU is refused, as ``pipeweave predict --input --gpu`` refuses it."""
    import numpy as np
    import pandas as pd

    from ..hardware import resolve_gpu_name

    if "gpu" not in df.columns:
        return pd.Series("", index=df.index, dtype=object), pd.Series(gpu_name, index=df.index, dtype="str")
    cells = df["gpu"].astype("string").fillna("").str.strip()
    same = {}
    for c in pd.unique(cells):
        try:
            same[c] = c == "" or c == gpu_name or (c not in (specs or {}) and resolve_gpu_name(c) == gpu_name)
        except Exception:  # noqa: BLE001 - an unknown name is another GPU
            same[c] = False
    ok = cells.map(same).to_numpy(dtype=bool)
    reasons = np.where(ok, "", "its gpu cell names another GPU than the one given")
    return pd.Series(reasons, index=df.index, dtype=object), cells.where(cells != "", gpu_name).astype("str")


def predict_dask(
    launches: Any, gpu: Any = None, *, model: Any = None, data: Any = None, interval: float | None = None
) -> Any:
    """Dask DataFrame ``launches`` plus ``latency_us_pred`` (us), predicted partition by partition.

    Each partition goes through :func:`pipeweave.api.predict_frame` on a worker (the same row
    checks and values as ``pipeweave.predict(..., bad_rows="nan")``: rows outside the model's
    domain get NaN). ``gpu`` (catalog name, spec file or GPUSpec) fills blank gpu cells; a row whose gpu
    cell names another GPU gets NaN, as on the CSV path; the model
    (``None`` = shipped, a path or a fitted model) travels to the workers as its model file.
    ``interval`` (0.5, 0.8 or 0.9) adds each prediction's error band, ``latency_us_lo``,
    ``latency_us_hi`` and ``band``, as ``pipeweave.predict(..., interval=...)`` does (a model with error
    bands is needed). Lazy: call ``.compute()`` or ``.to_parquet(...)``.
    """
    _require_dask()
    import pandas as pd

    coverage = None
    if interval is not None:
        from ..model import check_coverage, has_error_bands

        coverage = check_coverage(interval)
        if not has_error_bands(model):
            raise DataError(
                f"interval={interval!r}: the model has no error bands",
                hint="use the shipped model (model=None), a model trained with error bands, or drop interval",
            )

    gpus = None
    gpu_name = None
    if gpu is not None:
        from ..hardware import GPUSpec, get_gpu

        spec = gpu if isinstance(gpu, GPUSpec) else get_gpu(gpu)
        gpu_name = spec.name
        if "gpu" not in launches.columns:
            launches = launches.assign(gpu=spec.name)
        gpus = {spec.name: spec}
    elif "gpu" not in launches.columns:
        raise DataError(
            "the launches have no `gpu` column and no gpu was given",
            hint="pass gpu='H100' (a catalog name or a spec .toml path) or add a gpu column",
        )
    columns = {"latency_us_pred": float, **({} if coverage is None else _BAND_COLUMNS)}
    meta = launches._meta.assign(**{c: pd.Series([], dtype=t) for c, t in columns.items()})
    if gpu_name is not None:
        meta = meta.assign(gpu=pd.Series([], dtype="str"))
    return launches.map_partitions(_predict_partition, model_bytes(model), gpus, data, coverage, gpu_name, meta=meta)


def predict_files(
    inputs: Sequence[str],
    output: str | os.PathLike[str],
    *,
    client: Any,
    gpu: Any = None,
    model: Any = None,
    data: Any = None,
    blocksize: str = "64MB",
    interval: float | None = None,
) -> int:
    """Predict CSV or parquet launch files on the cluster of ``client``; write partitioned parquet to ``output``.

    ``output`` is a new folder (``part.NNNNN.parquet`` files in row order, the input columns plus
    ``latency_us_pred``, and with ``interval`` the error-band columns of :func:`predict_dask`), written
    next to it first and moved into place when complete. Returns the number of rows.
    """
    _require_dask()
    import shutil

    import dask.dataframe as dd

    out = Path(output)
    if out.exists():
        raise DataError(
            f"output {str(out)!r} exists; the Dask path writes a new parquet folder",
            hint="remove it or choose another folder",
        )
    files = [str(p) for p in inputs]
    missing = [p for p in files if not Path(p).exists()]
    if missing:
        raise DataError(f"input file not found: {missing[0]!r}", hint="give CSV or parquet files of launch rows")
    if all(p.endswith((".parquet", ".pq")) or Path(p).is_dir() for p in files):
        ddf = dd.read_parquet(files)
    else:
        ddf = dd.read_csv(
            files,
            blocksize=blocksize,
            assume_missing=True,
            skipinitialspace=True,
            dtype={
                "family": "object",
                "dtype": "object",
                "gpu": "object",
                "source": "object",
                "distribution": "object",
                "backend": "object",
                "kv_cache_dtype": "object",
            },
        )
    pred = predict_dask(ddf, gpu, model=model, data=data, interval=interval)
    tmp = out.parent / f".{out.name}.pipeweave-tmp-{os.getpid()}"
    try:
        # zero-padded part numbers: the folder lists (and pandas reads it) in row order
        pred.to_parquet(str(tmp), write_index=False, compute=True, name_function=lambda i: f"part.{i:05d}.parquet")
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return int(dd.read_parquet(str(out), columns=["latency_us_pred"]).shape[0].compute())


# --------------------------------------------------------------------------------------- train
_TARGET, _FAMILY, _SOURCE, _GPU = "_pw_target", "_pw_family", "_pw_source", "_pw_gpu"
_SHARED_TARGET = "_pw_shared_target"  # the target on `reference` (the shared booster's, several families)
_CRUDE_TARGET = "_pw_crude_target"  # log(latency / wave-quantized roofline): the crude companions' target
_LATENCY = "_pw_latency_us"  # measured latency (us): the family's latency range (PipeweaveRegressor.extrapolated)
_SEEN = "_pw_seen_key"  # the row's GPU key of the seen-GPU boosters (pipeweave.model.seen_keys)
_LIBRARY = "_pw_library_kernel"  # 1 where the library picks the kernel (no named tile plan): seen-GPU rows


def _crude_columns() -> list[str]:
    """The crude view's columns in a training partition (the companion boosters' input)."""
    from ..frontend import crude_matrix_names

    return [f"_pw_crude_{n}" for n in crude_matrix_names()]


def _train_partition(df: pd.DataFrame, params: dict[str, Any], names: list[str], data: Any) -> pd.DataFrame:
    """Featurized design matrix + target of one partition of profile rows (impossible rows dropped)."""
    import numpy as np
    import pandas as pd

    from .._frame import str_values
    from ..frontend import EXTRA_FEATURES, crude_matrix
    from ..model import PipeweaveRegressor, design_matrix, explicit_tile_rows, prepare_training_frame, seen_keys

    crude = _crude_columns()
    cols = [
        *names,
        *EXTRA_FEATURES,
        _TARGET,
        _SHARED_TARGET,
        *crude,
        _CRUDE_TARGET,
        _LATENCY,
        _LIBRARY,
        _FAMILY,
        _SOURCE,
        _GPU,
        _SEEN,
    ]
    if df.empty:
        return _train_meta(names)
    frame, _ = prepare_training_frame(df, data=data)
    if frame.empty:
        return _train_meta(names)
    est = PipeweaveRegressor(**params)
    out = pd.DataFrame(est.feature_matrix(frame, names), columns=names)
    extra = design_matrix(frame, list(EXTRA_FEATURES))  # the columns some family boosters read besides names
    for i, c in enumerate(EXTRA_FEATURES):
        out[c] = extra[:, i]
    out[_TARGET] = est.training_target(frame)  # each row on its family's reference (the family boosters')
    out[_SHARED_TARGET] = est.training_target(frame, reference=est.reference)
    Xc, t_wq = crude_matrix(frame)
    for i, c in enumerate(crude):
        out[c] = Xc[:, i]
    out[_LATENCY] = frame["latency_us"].to_numpy(dtype=float)
    out[_CRUDE_TARGET] = np.log(out[_LATENCY].to_numpy() / t_wq)
    out[_FAMILY] = str_values(frame["family"])
    out[_SOURCE] = str_values(frame["source"]) if "source" in frame.columns else ""
    out[_GPU] = str_values(frame["gpu"])
    out[_SEEN] = seen_keys(frame)
    out[_LIBRARY] = (~explicit_tile_rows(frame)).astype(float)
    return (
        out[cols]
        .astype({_FAMILY: object, _SOURCE: object, _GPU: object, _SEEN: object})
        .set_axis(np.arange(len(out)), axis=0)
    )


def _train_meta(names: list[str]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    from ..frontend import EXTRA_FEATURES

    meta = pd.DataFrame({n: np.array([], dtype=np.float32) for n in [*names, *EXTRA_FEATURES]})
    meta[_TARGET] = np.array([], dtype=float)
    meta[_SHARED_TARGET] = np.array([], dtype=float)
    for c in [*_crude_columns(), _CRUDE_TARGET, _LATENCY, _LIBRARY]:
        meta[c] = np.array([], dtype=float)
    for c in (_FAMILY, _SOURCE, _GPU, _SEEN):
        meta[c] = np.array([], dtype=object)
    return meta


def _key_rows(profiles: Any) -> pd.DataFrame:
    """A pandas frame of the ``family`` / ``gpu`` / ``dtype`` / ``generation`` columns of ``profiles`` (a Dask frame)
    with one row per training row, built from their counts: what the blends' lists are learned from."""
    cols = [c for c in ("family", "gpu", "dtype", "generation") if c in profiles.columns]
    keys = profiles[cols].astype(object).fillna("").astype(str)
    counts = keys.groupby(cols).size().compute()
    frame = counts.index.to_frame(index=False)
    return frame.loc[frame.index.repeat(counts.to_numpy())].reset_index(drop=True)


def train_dask(
    client: Any, profiles: Any, params: Mapping[str, Any] | None = None, *, data: Any = None
) -> PipeweaveRegressor:
    """Fit a :class:`~pipeweave.model.PipeweaveRegressor` on a Dask DataFrame of measured profiles.

    Partitions are featurized on the workers (physically impossible rows dropped, as
    :func:`pipeweave.model.prepare_training_frame` does); the boosters (shared and, with
    ``per_family``, one per family) are trained with ``xgboost.dask`` over the workers. The result
    predicts and saves like a locally fitted model (same file format and stamp). Distributed
    histogram training sketches quantiles per worker, so the trees differ slightly from a
    single-process fit (tests: predictions agree within a few percent).
    """
    _require_dask()
    import xgboost as xgb
    from xgboost import dask as dxgb

    from ..model import PipeweaveRegressor, extra_feature_names, model_feature_names, unsupported_backends

    est = PipeweaveRegressor(**dict(params or {}))
    if est.use_sass or est.monotone_constraints:
        raise DataError(
            "use_sass and monotone_constraints are not supported by the Dask trainer",
            hint="train those on one machine (PipeweaveRegressor.fit, no Dask)",
        )
    est.companion_weights()  # validated before any work is sent to the workers
    est.sibling_companion_weights()
    est.roofline_blend_weights()
    est.roofline_gated_families()
    extras_of = est.extra_features()
    est.seen_gpu_weights()
    names = model_feature_names([], tuple(est.drop_features))
    if "latency_us" not in profiles.columns:
        raise DataError("training rows lack the column 'latency_us'", hint="train on measured profiles")
    feats = profiles.map_partitions(_train_partition, est.get_params(), names, data, meta=_train_meta(names))
    feats = client.persist(feats)
    # as PipeweaveRegressor.fit: the backend one-hots of fewer than min_backend_gpus GPUs are held at 0
    backends = [n for n in names if n.startswith("backend_")]
    n_gpus = client.gather(client.compute([feats[_GPU][feats[n] == 1.0].nunique() for n in backends]))
    counts = {n[len("backend_") :]: int(c) for n, c in zip(backends, n_gpus, strict=True)}
    est.unsupported_backends_ = unsupported_backends(counts, est.min_backend_gpus)
    if est.unsupported_backends_:
        feats = client.persist(feats.assign(**{f"backend_{b}": 0.0 for b in est.unsupported_backends_}))
    xgb_params = est.booster_params()
    xgb_params.pop("nthread", None)  # each worker uses its own threads

    def fit(part: Any, target: str = _TARGET, extras: tuple[str, ...] = ()) -> xgb.Booster:
        cols = extra_feature_names(names, extras)  # a family booster's extra columns (family_extra_features)
        dm = dxgb.DaskDMatrix(client, part[cols], part[target], feature_names=cols)
        return dxgb.train(client, xgb_params, dm, num_boost_round=int(est.n_estimators))["booster"]

    n_rows = int(feats.shape[0].compute())
    if n_rows == 0:
        raise DataError("no training rows left after featurization", hint="check the profiles' latency_us")
    families = sorted(feats[_FAMILY].unique().compute().astype(str))
    # as PipeweaveRegressor.fit: the shared booster on `reference` (on the family's own when it is the only
    # one), each family booster on its family's reference
    refs = {f: est.reference_of(f) for f in families}  # resolved before fitting (the settings)
    one = len(families) == 1
    est.shared_extra_features_ = est.shared_extras(families)  # as fit: the one family's, else none
    est.booster_ = fit(feats, _TARGET if one else _SHARED_TARGET, extras=est.shared_extra_features_)
    est.shared_reference_ = refs[families[0]] if one else est.reference
    per_family = est.per_family and not one
    est.family_boosters_ = (
        {f: fit(feats[feats[_FAMILY] == f], extras=extras_of.get(f, ())) for f in families} if per_family else {}
    )
    est.family_extra_features_ = {f: extras_of[f] for f in est.family_boosters_ if f in extras_of}
    est.family_references_ = {f: refs[f] for f in est.family_boosters_}
    # crude companions (as PipeweaveRegressor.fit): an XGBoost on the crude view of each listed family's rows
    from ..model import COMPANION_PARAMS, companion_booster_params, companion_family

    crude = _crude_columns()
    cparams = companion_booster_params(1, int(est.random_state))
    cparams.pop("nthread", None)  # each worker uses its own threads
    est.companion_boosters_, est.companion_weights_ = {}, {}
    weights = est.companion_weights()
    sib_families = [companion_family(k) for k in est.sibling_companion_weights()]
    for f in dict.fromkeys([*(companion_family(k) for k in weights), *sib_families]):  # one booster per family
        if f in families:
            part = feats[feats[_FAMILY] == f]
            dm = dxgb.DaskDMatrix(client, part[crude], part[_CRUDE_TARGET])
            est.companion_boosters_[f] = dxgb.train(
                client, cparams, dm, num_boost_round=int(COMPANION_PARAMS["n_estimators"])
            )["booster"]
            est.companion_weights_.update({k: w for k, w in weights.items() if companion_family(k) == f})
    # seen-GPU boosters (as PipeweaveRegressor.fit): the features + a one-hot of each GPU with enough rows
    from ..model import SEEN_GPU_PARAMS, seen_booster_params

    sparams = seen_booster_params(1, int(est.random_state))
    sparams.pop("nthread", None)
    est.seen_boosters_, est.seen_keys_, est.seen_weights_ = {}, {}, {}
    for f, w in est.seen_gpu_weights().items():
        if f not in families:
            continue
        part = feats[(feats[_FAMILY] == f) & (feats[_LIBRARY] > 0)]  # as fit: library-picked kernels only
        counts = part[_SEEN].value_counts().compute()
        known = sorted(str(k) for k, c in counts.items() if c >= int(est.seen_gpu_min_rows))
        if not known:
            continue
        onehot = {est.seen_feature_name(k): (part[_SEEN] == k).astype("float32") for k in known}
        X = part[names].assign(**onehot)
        dm = dxgb.DaskDMatrix(client, X, part[_TARGET])
        est.seen_boosters_[f] = dxgb.train(client, sparams, dm, num_boost_round=int(SEEN_GPU_PARAMS["n_estimators"]))[
            "booster"
        ]
        est.seen_keys_[f], est.seen_weights_[f] = known, float(w)
    # the blends' learned lists (as PipeweaveRegressor.fit), from one row per training row's key
    est.fit_blend_lists(_key_rows(profiles))
    est.feature_names_ = names
    est.blind_families_ = est.blind_families()  # what _train_partition's feature_matrix hid
    est.families_ = families
    est.sources_ = sorted(str(s) for s in feats[_SOURCE].unique().compute() if str(s))
    est.gpus_ = sorted(feats[_GPU].unique().compute().astype(str))
    est.n_train_rows_ = n_rows
    span = feats.groupby(_FAMILY)[_LATENCY].agg(["min", "max"]).compute()
    est.latency_range_us_ = {str(f): [float(r["min"]), float(r["max"])] for f, r in span.sort_index().iterrows()}
    return est


# ---------------------------------------------------------------------------------------- tune
def _tune_task(frame: pd.DataFrame, n_trials: int, storage: str, study_name: str, seed: int) -> int:
    from ..model import tune

    study = tune(frame, n_trials=n_trials, storage=storage, study_name=study_name, seed=seed, n_jobs=1, progress=False)
    return len(study.trials)


def tune_dask(
    client: Any, frame: pd.DataFrame, *, n_trials: int, storage: str, study_name: str = "pipeweave", seed: int = 0
) -> Any:
    """Run an optuna study from every worker of ``client`` at once, sharing the RDB ``storage``.

    ``n_trials`` is split over the workers; each joins the study (:func:`pipeweave.model.tune`)
    with its own sampler seed. Returns the study loaded from ``storage``.
    """
    _require_dask()
    import optuna

    if not storage or storage.startswith("sqlite:///:memory:"):
        raise DataError(
            "tuning on Dask workers needs a shared optuna storage",
            hint="pass storage='sqlite:///tune.db' (same machine) or postgresql://... (a cluster)",
        )
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    share = [n_trials // workers + (1 if i < n_trials % workers else 0) for i in range(workers)]
    frame_f = client.scatter(frame, broadcast=True)
    futures = [client.submit(_tune_task, frame_f, k, storage, study_name, seed, pure=False) for k in share if k > 0]
    client.gather(futures)
    return optuna.load_study(study_name=study_name, storage=storage)
