"""Analog GPUs: the model's own view of how each trained GPU differs from the calibrated one.

For a launch ``x`` to be predicted on the calibrated GPU ``G`` and each GPU ``g`` the model trained on (an
*analog*), the analog coordinate is

    z_g(x) = log(f(x on g) / f(x on G))

with ``f`` the uncalibrated model: how much slower (> 0) or faster the model says ``x`` runs on ``g``. It is
a function of the launch's shape through every feature the model reads (tile quantization, waves on each
GPU's SM count, working set against each L2, ...). With ``analog_penalty`` > 0, the residual correction
(:class:`~pipeweave.calibrate.ResidualCorrection`) first fits ``b + sum_g w_g z_g(x)`` to the measured
launches' residuals by ridge regression (``analog_penalty`` = the L2 penalty on the weights ``w``; the
intercept ``b`` is free), then its Gaussian process on what remains: "the new GPU departs from the model the
way the model says this mixture of trained GPUs departs from it". Screened in the few-shot protocol's
training generations (``experiments/few_shot/analog_screen.md``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import DataError, shown

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "ANALOG_MIN_LAUNCHES",
    "ANALOG_PREFIX",
    "FAMILY_ANALOG_PENALTY",
    "analog_columns",
    "analog_gpus",
    "analog_matrix",
    "asked_on",
    "default_analog_penalty",
    "trained_gpus",
    "with_analogs",
]

#: prefix of the frame columns that hold the analog coordinates z_g (one column per analog GPU ``g``)
ANALOG_PREFIX: str = "analog_log_ratio:"
#: family -> the analog term's ridge penalty a calibration uses by default for that family, given at least
#: :data:`ANALOG_MIN_LAUNCHES` launches of it; the few-shot protocol offers its analog options for these families
#: only. Chosen inside the few-shot protocol's training generations (``experiments/few_shot/analog_screen.md``): fused
#: MoE's best analog option was below the best other one in all 8 inner cells at 32 and 128 shots on two plan seeds
#: (by 1.04 / 1.16 points at 32); bf16 GEMM (1 of 12 cells) and decode attention (0 of 8 on two seeds) were not, the
#: refit options staying ahead there
FAMILY_ANALOG_PENALTY: dict[str, float] = {"fused_moe": 1.0}
#: fewest launches of a family for its default analog term: with 8 the seven ridge terms of six analogs were worse
#: inside the training generations on 3 of 4 folds, at 32 and 128 better on all (analog_screen.md)
ANALOG_MIN_LAUNCHES: int = 32


def default_analog_penalty(family: str, n_launches: int) -> float:
    """The analog term's penalty a calibration of ``family`` on ``n_launches`` measured launches uses when none is
    asked for: :data:`FAMILY_ANALOG_PENALTY` [``family``] from :data:`ANALOG_MIN_LAUNCHES` launches, else 0 (none)."""
    return float(FAMILY_ANALOG_PENALTY.get(str(family), 0.0)) if n_launches >= ANALOG_MIN_LAUNCHES else 0.0


def analog_gpus(model: Any, family: str, gpu: str) -> list[str]:
    """The GPUs ``model`` trained ``family`` on (:func:`trained_gpus`), sorted, without ``gpu`` itself: the analogs of
    a calibration of ``gpu``."""
    return sorted(trained_gpus(model, family) - {canonical_gpu(gpu)})


def trained_gpus(model: Any, family: str) -> set[str]:
    """The catalog names of the GPUs fitted ``model`` has training rows of ``family`` on: its error bands' record
    (``seen_gpus``, per family) when it has one, else every training GPU; none for a family it never trained."""
    known = getattr(model, "families_", None)
    if known is not None and family not in known:  # a family it never trained on has no rows on any GPU
        return set()
    seen = (getattr(model, "error_bands_", None) or {}).get("seen_gpus", {})
    names = seen[family] if family in seen else getattr(model, "gpus_", ())
    return {canonical_gpu(g) for g in names}


def canonical_gpu(name: Any, gpus: Mapping[str, GPUSpec] | None = None) -> str:
    """The catalog name of GPU ``name`` (an alias, a device string, a GPUSpec), or ``name`` itself when it
    names a spec in ``gpus`` or no catalog GPU (a spec-file GPU keeps its own name)."""
    from ..hardware import GPUSpec, resolve_gpu_name

    if isinstance(name, GPUSpec):
        return name.name
    text = str(name)
    if gpus and text in gpus:
        return text
    try:
        return resolve_gpu_name(text)
    except Exception:  # noqa: BLE001 - not a catalog GPU: a spec-file name, kept as given
        return text


def asked_on(rows: pd.DataFrame, gpu: str, gpus: Mapping[str, GPUSpec] | None = None) -> pd.DataFrame:
    """``rows``' launch columns (the canonical profile columns, without ``latency_us``) asked on ``gpu``, with its
    ``generation`` where the rows carry one: what a user would ask the model for that GPU."""
    from ..sources import PROFILE_COLUMNS

    cols = [c for c in PROFILE_COLUMNS if c in rows.columns and c != "latency_us"]
    out = rows[cols].reset_index(drop=True).assign(gpu=gpu)
    if "generation" in out.columns:
        from ..hardware import get_gpu

        spec = (gpus or {}).get(gpu) or get_gpu(gpu)
        out["generation"] = spec.generation
    return out


def analog_matrix(
    model: Any,
    rows: pd.DataFrame,
    base_us: np.ndarray,
    analogs: Sequence[str],
    *,
    gpus: Mapping[str, GPUSpec] | None = None,
    data: str | os.PathLike[str] | None = None,
) -> np.ndarray:
    """Rows x analogs matrix of z_g = log(model's latency of the row on analog g / ``base_us``) (module docstring).

    ``rows``: launches (canonical or featurized); ``base_us``: the uncalibrated prediction of each row on the
    calibrated GPU (us). A row the model cannot predict on an analog gets 0 there (no information).
    """
    base = np.asarray(base_us, dtype=float)
    if len(base) != len(rows):
        raise DataError(
            f"base_us has {len(base)} values for {len(rows)} rows",
            hint="pass one uncalibrated prediction (us) per row",
        )
    out = np.zeros((len(rows), len(analogs)))
    if not len(rows):
        return out
    kw = {k: v for k, v in (("gpus", gpus), ("data", data)) if v is not None}
    for j, g in enumerate(analogs):
        p = np.asarray(model.predict(asked_on(rows, g, gpus), **kw), dtype=float)
        z = np.log(p / base)
        out[:, j] = np.where(np.isfinite(z), z, 0.0)
    return out


def analog_columns(matrix: np.ndarray, analogs: Sequence[str]) -> pd.DataFrame:
    """The analog coordinates as frame columns (``ANALOG_PREFIX + gpu``), to join to featurized rows
    (:func:`with_analogs`)."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[1] != len(analogs):
        raise DataError(
            f"the analog matrix must have one column per analog GPU ({len(analogs)}), got shape {shown(m.shape)}",
            hint="build it with pipeweave.calibrate.analog_matrix",
        )
    return pd.DataFrame(m, columns=[ANALOG_PREFIX + str(g) for g in analogs])


def with_analogs(rows: pd.DataFrame, matrix: np.ndarray, analogs: Sequence[str]) -> pd.DataFrame:
    """``rows`` (re-indexed 0..n-1) with the analog coordinates ``matrix`` (rows x ``analogs``) as their
    :func:`analog_columns`, in place of any columns of those names the rows had."""
    cols = analog_columns(matrix, analogs)
    if len(cols) != len(rows):
        raise DataError(
            f"the analog matrix has {len(cols)} rows for {len(rows)} launches",
            hint="build it with pipeweave.calibrate.analog_matrix on the same rows",
        )
    kept = rows.drop(columns=[c for c in cols.columns if c in rows.columns]).reset_index(drop=True)
    return pd.concat([kept, cols], axis=1)
