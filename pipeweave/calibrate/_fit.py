"""Plan and fit a few-shot calibration for one GPU (the API behind `pipeweave calibrate`)."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import DataError
from ._analog import (
    analog_gpus,
    analog_matrix,
    canonical_gpu,
    default_analog_penalty,
    trained_gpus,
    with_analogs,
)
from ._correction import (
    DEFAULT_LENGTH_SCALE,
    DEFAULT_NOISE,
    GPUCalibration,
    ResidualCorrection,
    spec_record,
)
from ._plan import plan_positions
from ._regime import check_regime, regime_features

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "TIMING_MISMATCHES",
    "borrows_band",
    "calibrate_model",
    "merge_repeated_launches",
    "plan_launches",
    "residuals",
    "trained_on",
]


def merge_repeated_launches(measured: pd.DataFrame) -> pd.DataFrame:
    """``measured`` with each repeated launch merged into one row (median ``latency_us``), in first-seen order.

    The launch key is every column except measurement metadata (``pipeweave.model.NON_LAUNCH_COLUMNS``).
    A correction fitted on repeats counts one launch several times: its left-out errors (and the error band
    built from them) would score a launch against its own copy. Returns ``measured`` itself when no launch
    repeats.
    """
    from .._frame import distinct_rows
    from ..model import NON_LAUNCH_COLUMNS

    key = [c for c in measured.columns if c not in NON_LAUNCH_COLUMNS]
    if len(measured) < 2 or not key or "latency_us" not in measured.columns:
        return measured
    codes, first = distinct_rows(measured[key])
    if len(first) == len(measured):
        return measured
    lat = pd.to_numeric(measured["latency_us"], errors="coerce").to_numpy(dtype=float)
    med = pd.Series(lat).groupby(codes).median().to_numpy()
    out = measured.iloc[first].copy()
    out["latency_us"] = med[codes[first]]
    return out


def plan_launches(
    candidates: pd.DataFrame,
    n: int,
    *,
    gpus: Mapping[str, GPUSpec] | None = None,
    seed: int = 0,
    regime: str = "generic",
) -> pd.DataFrame:
    """The ``n`` rows per family of ``candidates`` (canonical launch rows) most worth measuring.

    Returns the chosen rows of ``candidates`` with their original columns and index (a subset).
    ``gpus`` maps names to GPUSpec for GPUs outside the catalog. ``regime``: the coordinates the plan covers
    (:func:`~pipeweave.calibrate.regime_features`): ``"generic"`` (default) or ``"family"`` (fused MoE's routing and
    shape too: better for 8 launches; not for 12, 16 or 24, worse for 32 or more, in the few-shot protocol's training
    generations; ``experiments/few_shot/plan_screen.md``).
    """
    from ..model import ensure_features

    if not isinstance(candidates, pd.DataFrame):
        raise DataError(
            f"candidates must be a DataFrame of launch rows, got {type(candidates).__name__}",
            hint="e.g. pd.DataFrame([{'family': 'gemm', 'dtype': 'bfloat16', 'm': 4096, 'n': 4096, 'k': 4096}])",
        )
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise DataError(f"n (launches per family) must be an integer, got {n!r}", hint="e.g. n=32")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2**32:
        raise DataError(f"seed must be an integer in [0, 2**32), got {seed!r}", hint="e.g. seed=0")
    if candidates.empty:
        raise DataError("no candidate launches to plan from", hint="pass a non-empty candidates table (launch rows)")
    check_regime(regime)  # a bad regime is named before any work
    feats = ensure_features(candidates.reset_index(drop=True), gpus=gpus, baselines=False)
    keep: list[np.ndarray] = []
    fam = feats["family"].astype(str).to_numpy()
    for name in sorted(set(fam)):
        pos = np.flatnonzero(fam == name)
        keep.append(pos[plan_positions(feats.iloc[pos], n, seed=seed, features=regime_features(name, regime))])
    chosen = np.sort(np.concatenate(keep))
    return candidates.iloc[chosen]


def residuals(
    model: Any, measured: pd.DataFrame, *, gpus: Mapping[str, GPUSpec] | None = None
) -> tuple[pd.DataFrame, np.ndarray]:
    """(featurized rows, log(measured / model prediction)) for measured canonical rows.

    A row whose ``source`` is blank or the placeholder of a user's file (``pipeweave.vocab.USER_SOURCE``) is
    predicted with its family's default source, as ``pipeweave.predict`` predicts a launch that names none:
    the correction fitted on these residuals is applied to exactly those predictions. (The source of a
    measured row says who measured it; the model's timing convention for an unnamed source is another.)
    """
    from .._frame import with_default_source
    from ..model import ensure_features
    from ..vocab import USER_SOURCE

    if "latency_us" not in measured.columns:
        raise DataError("measured rows lack the column 'latency_us'", hint="calibrate on measured launches")
    lat = pd.to_numeric(measured["latency_us"], errors="coerce").to_numpy(dtype=float)
    bad = ~(np.isfinite(lat) & (lat > 0))
    if bad.any():
        raise DataError(
            f"{int(bad.sum())} measured rows have a latency_us that is not finite and > 0 "
            f"(first rows {np.flatnonzero(bad)[:5].tolist()})",
            hint="drop or re-measure them",
        )
    rows = measured.reset_index(drop=True)
    if "family" in rows.columns:
        rows = with_default_source(rows, also=(USER_SOURCE,))
    feats = ensure_features(rows, gpus=gpus)
    pred = np.asarray(model.predict(feats), dtype=float)
    return feats, np.log(lat / pred)


#: ``timing`` suffixes of measurements known to time another operation than the shipped model's training rows of
#: the family and dtype, with what was seen: (family, dtype, timing suffix) -> the note
TIMING_MISMATCHES: dict[tuple[str, str, str], str] = {
    ("gemm", "fp8", "_torch_scaled_mm"): (
        "a bare torch._scaled_mm of pre-quantized operands, while the shipped model's fp8 GEMM rows "
        "(AIConfigurator's) time more: on one H200 they read a median 1.64x the bare call (1.65x the bf16 GEMM "
        "below 10 us, where the bare call is 0.99x; experiments/device_h200), so the correction would learn the "
        "difference of the two operations rather than the GPU"
    ),
}


def _note_timing_conventions(measured: pd.DataFrame) -> None:
    """Warn about measured rows whose ``timing`` is known to time another operation than the model's training rows
    of their family and dtype (:data:`TIMING_MISMATCHES`)."""
    if not {"timing", "family", "dtype"} <= set(measured.columns):
        return
    timing = measured["timing"].astype("string").fillna("")
    fam, dt = measured["family"].astype(str), measured["dtype"].astype(str)
    for (family, dtype, suffix), what in TIMING_MISMATCHES.items():
        n = int(((fam == family) & (dt == dtype) & timing.str.endswith(suffix)).sum())
        if n:
            warnings.warn(
                f"{n} measured {family} {dtype} rows were timed as {suffix.lstrip('_')}: {what}",
                UserWarning,
                stacklevel=3,
            )


def _with_analogs(
    model: Any, rows: pd.DataFrame, base_us: np.ndarray, analogs: Sequence[str], gpus: Mapping[str, GPUSpec] | None
) -> pd.DataFrame:
    """``rows`` joined with their analog coordinates under ``model`` (unchanged without analogs)."""
    if not analogs:
        return rows
    return with_analogs(rows, analog_matrix(model, rows, base_us, analogs, gpus=gpus), analogs)


def _usable_gpus(names: Sequence[str], gpus: Mapping[str, GPUSpec] | None = None) -> list[str]:
    """The names of ``names`` the catalog or ``gpus`` knows (a model's training GPU from a spec file the user no
    longer passes cannot be predicted on)."""
    from .._errors import PipeweaveError
    from ..hardware import get_gpu

    out = []
    for g in names:
        try:
            if not (gpus and g in gpus):
                get_gpu(g)
            out.append(g)
        except PipeweaveError:
            continue
    return out


def trained_on(model: Any, gpu: str, family: str) -> bool:
    """Whether fitted ``model`` has training rows of ``family`` on ``gpu`` (a catalog name or an alias): the
    error bands' record of it (``seen_gpus``, per family) when the model has bands, else any training row on
    ``gpu`` (:func:`~pipeweave.calibrate.trained_gpus`)."""
    return canonical_gpu(gpu) in trained_gpus(model, family)


def borrows_band(model: Any, band_model: Any, gpu: str, family: str) -> bool:
    """Whether a calibration of ``model`` on ``gpu`` takes ``family``'s band (and, with ``method="auto"``, its
    choice of settings) from ``band_model``'s residuals: ``model`` trained on the GPU's rows of the family (its
    own left-out errors would flatter) and ``band_model`` is given and did not."""
    return band_model is not None and trained_on(model, gpu, family) and not trained_on(band_model, gpu, family)


def calibrate_model(
    model: Any,
    measured: pd.DataFrame,
    *,
    gpu: str,
    gpus: Mapping[str, GPUSpec] | None = None,
    method: str = "gp",
    length_scale: float = DEFAULT_LENGTH_SCALE,
    noise: float = DEFAULT_NOISE,
    linear: float = 0.0,
    regime: str = "family",
    profiles: Sequence[dict] = (),
    band_model: Any = None,
    analog_penalty: float | None = None,
) -> Any:
    """A copy of fitted ``model`` whose predictions on ``gpu`` are corrected by ``measured`` rows.

    ``measured``: canonical rows with ``latency_us`` (us) on ``gpu`` (other GPUs' rows raise).
    One :class:`ResidualCorrection` per family; the copy's ``calibration_`` holds them and
    ``pipeweave.model.save_model`` stores them in the stamp. Each correction also carries an error band
    from its left-out launches (:data:`~pipeweave.calibrate.CALIBRATED_BAND_MIN_SHOTS` or more), unless the base model was
    trained on rows of ``gpu`` (e.g. retrained with the same measurements: their left-out errors would be
    optimistic); then ``predict_interval`` gives the base model's band there, unless ``band_model`` (a
    fitted model that did not train on them, e.g. the model before the refit) is given: the family's band
    is then the left-out band of the same correction fitted on ``band_model``'s residuals
    (:meth:`ResidualCorrection.borrow_band`).

    ``regime``: the coordinates each family's correction reads (:func:`~pipeweave.calibrate.regime_features`):
    ``"family"`` (default; fused MoE adds its routing and shape, the others the generic set) or ``"generic"``.

    ``method="auto"`` chooses the settings per family by leave-one-out MAPE on the measured launches
    (:data:`~pipeweave.calibrate.AUTO_CANDIDATES`; ``length_scale``, ``noise`` and ``linear`` are then ignored):
    on ``band_model``'s residuals when it is given for a model trained on the launches, else on ``model``'s
    (a model trained on them fits them too well for the choice to mean much).

    ``analog_penalty`` > 0 adds each family's analog term (:mod:`pipeweave.calibrate._analog`): the residuals are
    first regressed on how ``model`` says each GPU it trained the family on (:func:`analog_gpus`) differs from
    ``gpu`` on the same launches (ridge penalty ``analog_penalty``), the GP then corrects what remains. The
    calibrated model then predicts every launch of ``gpu`` on those GPUs too (one more prediction per analog).
    ``None`` (default): per family, :func:`default_analog_penalty` (fused MoE with 32 or more launches); 0: none.
    """
    import os

    from ..model import load_model

    check_regime(regime)  # a bad regime is named before any work
    from ._correction import check_analog_penalty

    if analog_penalty is not None:  # named before any work
        check_analog_penalty(analog_penalty)
    model = load_model(model) if isinstance(model, (str, os.PathLike)) else model  # a model file path
    if not callable(getattr(model, "predict", None)):
        raise DataError(
            f"model must be a fitted model or a model file path, got {type(model).__name__}",
            hint="pass pipeweave.load_model() (the shipped model), a fitted pipeweave.PipeweaveRegressor, "
            "or the path of a file written by pipeweave.save_model",
        )
    if not isinstance(measured, pd.DataFrame):
        raise DataError(
            f"measured must be a DataFrame of measured rows, got {type(measured).__name__}",
            hint="read them with pipeweave.profiles.read_profiles(path)",
        )
    gpu = canonical_gpu(gpu, gpus)  # "NVIDIA L40" calibrates L40, the name predictions look it up by
    if not (gpus and gpu in gpus):
        from ..hardware import get_gpu

        get_gpu(gpu)  # an unknown name is named as such (with close names), not as rows on "other" GPUs
    if "gpu" in measured.columns:
        names = {n: canonical_gpu(n, gpus) for n in pd.unique(measured["gpu"].astype(str))}
        g = measured["gpu"].astype(str).map(names)
    else:
        g = pd.Series(gpu, index=measured.index)
    other = sorted(set(g) - {gpu})
    if other:
        raise DataError(
            f"measured rows are on GPUs {other}, not on the calibrated GPU {gpu!r}",
            hint="calibrate one GPU at a time (keep only that GPU's rows, or pass the matching gpu=)",
        )
    measured = measured.assign(gpu=gpu)
    if getattr(model, "calibration_", None) is not None:
        raise DataError("the model is already calibrated", hint="calibrate the uncalibrated base model")
    _note_timing_conventions(measured)
    merged = merge_repeated_launches(measured)
    if len(merged) < len(measured):
        warnings.warn(
            f"{len(measured) - len(merged)} measured rows repeat a launch; merged into {len(merged)} distinct "
            "launches (median latency each): a repeat would be scored against its own copy and flatter the band",
            stacklevel=2,
        )
        measured = merged
    feats, r = residuals(model, measured, gpus=gpus)
    # a latency below the physical lower bound (with the training filter's margin) is not a measurement of
    # the stated launch: most often the wrong unit (ms or s written as us), else a launch that did less work
    from ..model import below_lower_bound

    lat = feats["latency_us"].to_numpy(dtype=float)
    lower = feats["t_lower_us"].to_numpy(dtype=float)
    impossible, unit = below_lower_bound(lat, lower)
    if impossible.any():
        rows = np.flatnonzero(impossible)
        idx = measured.index
        label = [int(i) + 1 for i in idx[rows]] if pd.api.types.is_integer_dtype(idx) else (rows + 1).tolist()
        what = (
            f"{len(rows)} of {len(lat)} measured rows are faster than the physical lower bound of their launch "
            f"on {gpu} (rows {label[:8]}{', ...' if len(rows) > 8 else ''}; e.g. row {label[0]}: "
            f"{lat[rows[0]]:.4g} us against a bound of {lower[rows[0]]:.4g} us){unit}"
        )
        if 2 * len(rows) >= len(lat):
            raise DataError(
                what, hint="check the unit of latency_us (microseconds) and that the rows are the stated launches"
            )
        warnings.warn(what + "; left out of the calibration", stacklevel=2)
        measured = measured.iloc[np.flatnonzero(~impossible)]
        feats, r = feats.iloc[np.flatnonzero(~impossible)].reset_index(drop=True), r[~impossible]
    fam = feats["family"].astype(str).to_numpy()
    corrections, shots = {}, {}
    ref_r: np.ndarray | None = None
    lat = feats["latency_us"].to_numpy(dtype=float)
    for name in sorted(set(fam)):
        m = fam == name
        own = not trained_on(model, gpu, name)
        settings: dict[str, Any] = {"method": method, "length_scale": length_scale, "noise": noise, "linear": linear}
        coords = regime_features(name, regime)
        fam_rows = feats.loc[m].reset_index(drop=True)
        penalty = default_analog_penalty(name, int(m.sum())) if analog_penalty is None else float(analog_penalty)
        analogs = _usable_gpus(analog_gpus(model, name, gpu), gpus) if penalty > 0 else []
        if penalty > 0 and not analogs:
            warnings.warn(
                f"no analog GPU for {name!r}: the model trained it on no other GPU than {gpu}; calibrated without "
                "the analog term",
                stacklevel=2,
            )
        settings["analog_penalty"] = penalty if analogs else 0.0
        ref = None
        if borrows_band(model, band_model, gpu, name):
            if ref_r is None:
                ref_r = residuals(band_model, measured, gpus=gpus)[1]
            # method "auto" chooses on the residuals of the model that did not train on these launches
            ref_rows = _with_analogs(band_model, fam_rows, lat[m] * np.exp(-ref_r[m]), analogs, gpus)
            ref = ResidualCorrection(**settings, features=coords).fit(ref_rows, ref_r[m], band=True)
            settings = ref.settings()
        # the model's own prediction of each launch on this GPU: measured / exp(residual)
        fam_rows = _with_analogs(model, fam_rows, lat[m] * np.exp(-r[m]), analogs, gpus)
        corrections[name] = ResidualCorrection(**settings, features=coords).fit(fam_rows, r[m], band=own)
        if ref is not None:
            corrections[name].auto_loo_ = ref.auto_loo_
            corrections[name].borrow_band(ref)
        shots[name] = int(m.sum())
    out = copy.copy(model)
    from ..hardware import get_gpu

    spec = (gpus or {}).get(gpu) or get_gpu(gpu)
    out.calibration_ = GPUCalibration(
        gpu=gpu, corrections=corrections, n_shots=shots, profiles=list(profiles), spec=spec_record(spec)
    )
    return out
