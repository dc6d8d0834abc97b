"""The few-shot correction: a Gaussian-process residual model over regime coordinates.

For a model ``f`` and the ``n`` launches measured on the new GPU, the residual
``r_i = log(measured_i / f(x_i))`` is modelled as a constant (the mean residual: a per-GPU
scale factor) plus a zero-mean Gaussian process over the regime coordinates ``z``
(:func:`~pipeweave.calibrate.regime_matrix`) with an RBF kernel of length scale ``l`` and a
noise-to-signal ratio ``noise``. The posterior mean

    c(z) = mean(r) + k(z, Z) (K + noise I)^-1 (r - mean(r)),   k(a, b) = exp(-|a - b|^2 / (2 l^2))

corrects each launch by what the measurements of launches in the same regime say, and falls
back to the per-GPU factor far from every measured launch. ``level="median"`` takes the median residual
instead of the mean as that constant: a few launches far slower than the model (a skewed residual) then
move the whole GPU less. ``linear`` > 0 adds a linear kernel
``linear * a.b`` (a Bayesian linear trend over the regime coordinates, e.g. "the more
tensor-bound, the slower than predicted"), which extrapolates where the RBF term cannot. It is clipped to the range of the
observed residuals (no extrapolation beyond what was measured). ``method="scalar"`` keeps the
mean only, ``"none"`` is the uncorrected model. The calibrated prediction is
``max(f(x) * exp(c(z)), t_lower_us)``.

``analog_penalty`` > 0 first fits the residuals with a ridge regression on the analog coordinates (how the
model says each GPU it trained on differs from this one, :mod:`pipeweave.calibrate._analog`:
``b + sum_g w_g z_g(x)``, penalty ``analog_penalty`` on ``w``), clipped to its range on the measured launches,
and the GP above models what remains.

**Choosing the settings from the launches themselves** (``method="auto"``). Each setting of
:data:`AUTO_CANDIDATES` (none, the scalar, the GP over a grid of length scales, noise ratios and
linear weights) is scored by its leave-one-out MAPE on the measured launches (each launch predicted
by the setting refitted on the others; for ``none``, the model's own error on them), and the lowest
wins, the simpler setting on a tie. So a correction that does not predict held-back launches of this
GPU better than the model alone is not applied: with these launches as the only evidence, a
calibration does not make the GPU's predictions worse than the model's. Fewer than
:data:`AUTO_MIN_LAUNCHES` launches cannot be compared this way and keep the model (``none``).

**Error band on the calibrated GPU.** Each measured launch ``i`` is left out in turn: the
correction refitted on the other ``n - 1`` launches predicts it with the error
``e_i = r_i - c_{-i}(z_i)`` and the GP's predictive variance ``v_{-i}(z_i)`` (kernel units,
noise included: ``v(z) = k(z, z) + noise - k(z, Z) (K + noise I)^-1 k(Z, z)``; 1 for the scalar
method). The quantiles ``q`` of the standardized errors ``t_i = e_i / sqrt(v_{-i}(z_i))`` at
:data:`pipeweave.model.BAND_LEVELS` are kept, and a launch gets the band
``prediction * exp(q * sqrt(v(z)))``: narrow next to measured launches, wider far from them.
Fewer than :data:`CALIBRATED_BAND_MIN_SHOTS` launches give no band (a 10% quantile of fewer
left-out errors is a guess).

The state is a few arrays (the measured coordinates and the weights), so it is stored in the
model file's stamp as plain JSON; no pickle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import DataError, shown
from ._analog import ANALOG_PREFIX
from ._regime import REGIME_FEATURES, regime_matrix

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "AUTO_CANDIDATES",
    "AUTO_MIN_LAUNCHES",
    "CALIBRATED_BAND",
    "CALIBRATED_BAND_MIN_SHOTS",
    "DEFAULT_LENGTH_SCALE",
    "DEFAULT_NOISE",
    "METHODS",
    "GPUCalibration",
    "ResidualCorrection",
    "LEVELS",
    "SETTING_RANGES",
    "setting_ok",
]

METHODS: tuple[str, ...] = ("gp", "scalar", "none", "auto")
#: how the constant part of the correction (the per-GPU level) is taken from the residuals (module docstring)
LEVELS: tuple[str, ...] = ("mean", "median")
#: defaults of `pipeweave calibrate fit`: the fused-MoE option the few-shot protocol chose most often at
#: 32 shots, inside the training generations (experiments/few_shot/results.json, "chosen": length scale
#: 4 on 3 of 4 folds, noise 0.3 on 3 of 4; for GEMM it chose length scale 2 with noise 0.3 or 1.0)
DEFAULT_LENGTH_SCALE: float = 4.0
DEFAULT_NOISE: float = 0.3
#: the settings ``method="auto"`` chooses among by leave-one-out MAPE (module docstring), simplest first:
#: none, the per-GPU scalar, then the GP over length scales 1-8 (regime units), noise ratios 0.1-1 and
#: linear-trend weights 0 / 0.02 (the grid the few-shot protocol offers as fixed settings)
AUTO_CANDIDATES: tuple[dict, ...] = (
    {"method": "none"},
    {"method": "scalar"},
    *(
        {"method": "gp", "length_scale": ls, "noise": nz, "linear": lin}
        for ls in (1.0, 2.0, 4.0, 8.0)
        for nz in (0.1, 0.3, 1.0)
        for lin in (0.0, 0.02)
    ),
)
#: fewest measured launches of a family ``method="auto"`` compares settings on (fewer: the model alone)
AUTO_MIN_LAUNCHES: int = 4
#: the accepted range of each GP setting: (low, high, low itself allowed, the range in words); see :func:`setting_ok`
SETTING_RANGES: dict[str, tuple[float, float, bool, str]] = {
    "length_scale": (1e-3, 1e3, True, "in [0.001, 1000] regime units"),
    "noise": (0.0, 1e3, False, "> 0 and <= 1000"),
    "linear": (0.0, 1e3, True, "in [0, 1000]"),
    "analog_penalty": (0.0, 1e6, True, "in [0, 1e6] (0: no analog GPUs)"),
}


def setting_ok(name: str, value: float) -> bool:
    """Whether ``value`` is finite and inside :data:`SETTING_RANGES` [``name``] (``length_scale``, ``noise``,
    ``linear``, ``analog_penalty``)."""
    import math

    lo, hi, lo_ok, _ = SETTING_RANGES[name]
    v = float(value)
    return math.isfinite(v) and (lo <= v if lo_ok else lo < v) and v <= hi


def check_analog_penalty(value: float) -> None:
    """Raise :class:`~pipeweave.DataError` naming ``value`` unless it is a valid ``analog_penalty`` (see
    :data:`SETTING_RANGES`)."""
    if not setting_ok("analog_penalty", value):
        raise DataError(
            f"analog_penalty must be in [0, 1e6], got {shown(value)}",
            hint="0 (no analog GPUs) or a ridge penalty such as 1",
        )


#: fewest measured launches of a family for an error band on the calibrated GPU (module docstring)
CALIBRATED_BAND_MIN_SHOTS: int = 16
#: the ``band`` value (situation) of a row whose band comes from the calibration's left-out launches
CALIBRATED_BAND: str = "calibrated"


@dataclass
class ResidualCorrection:
    """log-latency correction c(z) of one (GPU, family): see the module docstring."""

    method: str = "gp"
    length_scale: float = DEFAULT_LENGTH_SCALE
    noise: float = DEFAULT_NOISE
    linear: float = 0.0
    features: dict[str, float] = field(default_factory=lambda: dict(REGIME_FEATURES))
    #: ridge penalty of the analog-GPU term (module docstring); 0: none
    analog_penalty: float = 0.0
    #: the constant part (per-GPU level) from the residuals' "mean" or "median" (:data:`LEVELS`)
    level: str = "mean"
    mean_: float = 0.0
    lo_: float = 0.0
    hi_: float = 0.0
    Z_: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    alpha_: np.ndarray = field(default_factory=lambda: np.zeros(0))
    band_t_: np.ndarray = field(default_factory=lambda: np.zeros(0))
    loo_mape_: float = float("nan")
    #: with ``method="auto"``: the left-out MAPE (%) of each setting of :data:`AUTO_CANDIDATES`, in order (the
    #: fitted ``method`` and settings are the winner's); empty otherwise
    auto_loo_: np.ndarray = field(default_factory=lambda: np.zeros(0))
    #: where ``band_t_`` came from: "" (no band), "shots" (this correction's left-out launches) or
    #: "band_model" (the same correction fitted on another model's residuals: see ``borrow_band``)
    band_source_: str = ""
    #: with ``analog_penalty`` > 0: the analog GPUs (the frame columns ``ANALOG_PREFIX + gpu``, in this order), the
    #: ridge intercept and weights, and the range of the analog term on the measured launches (its clip)
    analog_gpus_: tuple[str, ...] = ()
    analog_b_: float = 0.0
    analog_w_: np.ndarray = field(default_factory=lambda: np.zeros(0))
    analog_lo_: float = 0.0
    analog_hi_: float = 0.0
    #: the analog term's mean over the measured launches (so ``mean_ + analog_mean_`` is the mean correction there)
    analog_mean_: float = 0.0
    _chol: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    def fit(self, frame: pd.DataFrame, residual: np.ndarray, *, band: bool = True) -> ResidualCorrection:
        """Fit on featurized measured rows and their residuals log(measured / predicted).

        ``band``: also estimate the error band from the left-out launches (``band_t_``, ``loo_mape_``);
        pass False when the base model trained on these launches (their left-out errors would be optimistic).
        """
        if self.method not in METHODS:
            raise DataError(
                f"calibration method must be one of {list(METHODS)}, got {self.method!r}", hint="use 'gp' (default)"
            )
        if not (setting_ok("length_scale", self.length_scale) and setting_ok("noise", self.noise)):
            raise DataError(
                f"length_scale and noise must be > 0 (length_scale in [0.001, 1000] regime units, noise <= 1000), "
                f"got {self.length_scale!r}, {self.noise!r}",
                hint=f"defaults: {DEFAULT_LENGTH_SCALE}, {DEFAULT_NOISE}",
            )
        if not setting_ok("linear", self.linear):
            raise DataError(
                f"linear (the trend's prior weight) must be in [0, 1000], got {self.linear!r}", hint="e.g. 0"
            )
        if self.level not in LEVELS:
            raise DataError(
                f"level must be one of {list(LEVELS)}, got {shown(self.level)}", hint="use 'mean' (default)"
            )
        check_analog_penalty(self.analog_penalty)
        r = np.asarray(residual, dtype=float)
        if len(r) != len(frame) or not np.isfinite(r).all():
            raise DataError(
                f"residuals must be finite, one per row ({len(r)} for {len(frame)} rows)",
                hint="pass one finite log(measured / predicted) per row of frame; drop rows whose latency or "
                "prediction is zero, negative or NaN",
            )
        X = regime_matrix(frame, self.features)
        A = self._analog_matrix(frame, fitting=True)
        if self.method == "auto":
            self._select(X, r, A)
        Z = X / self.length_scale
        self._fit_scaled(Z, r, A)
        self.band_t_, self.loo_mape_ = self._loo_band(Z, r, A) if band else (np.zeros(0), float("nan"))
        self.band_source_ = "shots" if len(self.band_t_) else ""
        return self

    def settings(self) -> dict[str, Any]:
        """The correction's settings (``method``, ``length_scale``, ``noise``, ``linear``, ``analog_penalty``,
        ``level``) as keyword arguments."""
        return {
            "method": self.method,
            "length_scale": self.length_scale,
            "noise": self.noise,
            "linear": self.linear,
            "analog_penalty": self.analog_penalty,
            "level": self.level,
        }

    def _analog_matrix(self, frame: pd.DataFrame, *, fitting: bool = False) -> np.ndarray | None:
        """The analog coordinates of ``frame`` (rows x analog GPUs), None without the analog term. ``fitting``: take
        the analog GPUs from the frame's ``ANALOG_PREFIX`` columns (``analog_gpus_``); else read those learned."""
        if self.analog_penalty <= 0 or self.method == "none":
            if fitting:
                self.analog_gpus_ = ()
            return None
        if fitting:
            self.analog_gpus_ = tuple(
                c[len(ANALOG_PREFIX) :] for c in frame.columns if str(c).startswith(ANALOG_PREFIX)
            )
            if not self.analog_gpus_:
                raise DataError(
                    f"analog_penalty={shown(self.analog_penalty)} needs the analog coordinates, and the rows have no "
                    f"{ANALOG_PREFIX!r} column",
                    hint="join them with pipeweave.calibrate.with_analogs(rows, analog_matrix(model, rows, base_us, "
                    "analogs), analogs), or set analog_penalty=0",
                )
        cols = [ANALOG_PREFIX + g for g in self.analog_gpus_]
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise DataError(
                f"the correction reads the analog GPUs {list(self.analog_gpus_)} and the rows lack {missing}",
                hint="predict through the calibrated model (it adds them), or join them with "
                "pipeweave.calibrate.with_analogs(...) for these GPUs",
            )
        A = frame[cols].to_numpy(dtype=float)
        return np.nan_to_num(A, nan=0.0, posinf=0.0, neginf=0.0)

    def _select(self, X: np.ndarray, r: np.ndarray, A: np.ndarray | None = None) -> None:
        """``method="auto"``: take the settings of :data:`AUTO_CANDIDATES` with the lowest leave-one-out MAPE on
        the launches (regime coordinates ``X``, unscaled; residuals ``r``; analog coordinates ``A``); the first of
        equals wins."""
        if len(r) < AUTO_MIN_LAUNCHES:
            self.method, self.auto_loo_ = "none", np.zeros(0)
            return
        scores = np.empty(len(AUTO_CANDIDATES))
        for i, cand in enumerate(AUTO_CANDIDATES):
            c = ResidualCorrection(**cand, features=self.features, analog_penalty=self.analog_penalty, level=self.level)
            e = c._loo_errors(X / c.length_scale, r, A if c.method != "none" else None)[0]
            scores[i] = float(np.mean(np.abs(np.expm1(-e))) * 100)
        best = AUTO_CANDIDATES[int(np.argmin(scores))]
        self.method = best["method"]
        self.length_scale = float(best.get("length_scale", self.length_scale))
        self.noise = float(best.get("noise", self.noise))
        self.linear = float(best.get("linear", 0.0))
        self.auto_loo_ = scores

    def borrow_band(self, other: ResidualCorrection) -> ResidualCorrection:
        """Take ``other``'s band (fitted with the same settings on the same launches, but on the residuals
        of a model that did not train on them); returns self.

        The band's width at a launch is ``sqrt(v(z))``, which depends only on the measured coordinates
        and the settings, so the standardized quantiles carry over. Used for a model retrained with the
        measured launches (the refit recipe), whose own left-out errors would flatter it: the band is
        then that of the calibration without the refit, wider where the refit helps.
        """
        if (self.method, self.length_scale, self.noise, self.linear, self.level) != (
            other.method,
            other.length_scale,
            other.noise,
            other.linear,
            other.level,
        ) or not np.array_equal(self.Z_, other.Z_):
            raise DataError(
                "a borrowed band needs the same correction settings and launches",
                hint="fit both corrections with the same settings on the same measured rows",
            )
        self.band_t_, self.loo_mape_ = other.band_t_.copy(), other.loo_mape_
        self.band_source_ = "band_model" if len(self.band_t_) else ""
        return self

    def _fit_scaled(self, Z: np.ndarray, r: np.ndarray, A: np.ndarray | None = None) -> None:
        """Fit on regime coordinates already divided by the length scale (``Z``), residuals ``r`` and analog
        coordinates ``A`` (None: no analog term)."""
        self._chol = None
        self.analog_b_, self.analog_w_, self.analog_lo_, self.analog_hi_ = 0.0, np.zeros(0), 0.0, 0.0
        self.analog_mean_ = 0.0
        if A is not None and self.method != "none" and len(r) >= 2:
            # ridge r ~ b + A w: the intercept free, the weights shrunk by analog_penalty
            X = np.column_stack([np.ones(len(r)), A])
            P = self.analog_penalty * np.eye(X.shape[1])
            P[0, 0] = 0.0
            coef = np.linalg.solve(X.T @ X + P, X.T @ r)
            part = X @ coef
            self.analog_b_, self.analog_w_ = float(coef[0]), coef[1:]
            self.analog_lo_, self.analog_hi_ = float(part.min()), float(part.max())
            self.analog_mean_ = float(part.mean())
            r = r - part
        if self.method == "none" or len(r) == 0:
            self.mean_, self.lo_, self.hi_ = 0.0, 0.0, 0.0
            self.Z_, self.alpha_ = np.zeros((0, len(self.features))), np.zeros(0)
            return
        self.mean_ = float(np.median(r)) if self.level == "median" else float(r.mean())
        self.lo_, self.hi_ = float(r.min()), float(r.max())
        if self.method == "scalar" or len(r) < 2:
            self.Z_, self.alpha_ = np.zeros((0, len(self.features))), np.zeros(0)
            return
        K = self._kernel(Z, Z) + self.noise * np.eye(len(Z))
        self.Z_ = Z
        self.alpha_ = np.linalg.solve(K, r - self.mean_)

    def _predict_scaled(self, Z: np.ndarray, A: np.ndarray | None = None) -> np.ndarray:
        out = np.full(len(Z), self.mean_)
        if len(self.alpha_):
            for lo in range(0, len(Z), 65536):  # bounded memory: chunks of rows x shots
                hi = lo + 65536
                out[lo:hi] += self._kernel(Z[lo:hi], self.Z_) @ self.alpha_
        out = np.clip(out, self.lo_, self.hi_)
        if A is not None and len(self.analog_w_):  # the analog term, within its range on the measured launches
            out += np.clip(self.analog_b_ + A @ self.analog_w_, self.analog_lo_, self.analog_hi_)
        return out

    def _variance_scaled(self, Z: np.ndarray) -> np.ndarray:
        """Predictive variance v(z) of the residual at scaled coordinates, kernel units, noise included."""
        if not len(self.alpha_):
            return np.ones(len(Z))
        if self._chol is None:
            self._chol = np.linalg.cholesky(self._kernel(self.Z_, self.Z_) + self.noise * np.eye(len(self.Z_)))
        out = np.empty(len(Z))
        for lo in range(0, len(Z), 65536):
            hi = lo + 65536
            A = np.linalg.solve(self._chol, self._kernel(self.Z_, Z[lo:hi]))  # L^-1 k(Z, z)
            prior = 1.0 + (self.linear * (Z[lo:hi] ** 2).sum(1) * self.length_scale**2 if self.linear > 0 else 0.0)
            out[lo:hi] = prior + self.noise - (A * A).sum(0)
        return np.maximum(out, self.noise)  # the noise floor: rounding never makes it smaller

    def _loo_band(self, Z: np.ndarray, r: np.ndarray, A: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """(quantiles at BAND_LEVELS of the standardized leave-one-out errors, leave-one-out MAPE in %);
        (empty, NaN) with too few launches."""
        from ..model import BAND_LEVELS

        if self.method == "none" or len(r) < CALIBRATED_BAND_MIN_SHOTS:
            return np.zeros(0), float("nan")
        e, t = self._loo_errors(Z, r, A, standardized=True)
        # e = log(measured / corrected prediction): APE = |prediction - measured| / measured = |exp(-e) - 1|
        return np.quantile(t, BAND_LEVELS, method="hazen"), float(np.mean(np.abs(np.expm1(-e))) * 100)

    def _loo_errors(
        self, Z: np.ndarray, r: np.ndarray, A: np.ndarray | None = None, *, standardized: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """(e, t): each launch's left-out error ``e_i = r_i - c_{-i}(z_i)`` (log units; ``r`` itself for method
        none) and, with ``standardized``, ``e_i / sqrt(v_{-i}(z_i))`` (else empty). ``Z``: coordinates already
        divided by the length scale; ``A``: analog coordinates (None: no analog term; refitted per left-out launch)."""
        n = len(r)
        if self.method == "none":
            return r.copy(), np.zeros(0)
        e, t = np.empty(n), np.empty(n if standardized else 0)
        keep = np.ones(n, dtype=bool)
        for i in range(n):  # n refits of n - 1 launches: O(n^4), well under a second for n <= 256
            keep[i] = False
            sub = ResidualCorrection(**self.settings(), features=self.features)
            sub._fit_scaled(Z[keep], r[keep], None if A is None else A[keep])
            e[i] = r[i] - sub._predict_scaled(Z[i : i + 1], None if A is None else A[i : i + 1])[0]
            if standardized:
                t[i] = e[i] / np.sqrt(sub._variance_scaled(Z[i : i + 1])[0])
            keep[i] = True
        return e, t

    def band_ratio(self, frame: pd.DataFrame, coverage: float) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) multipliers of the calibrated prediction holding the middle ``coverage`` (0.5, 0.8 or
        0.9) of the left-out errors, per featurized row; NaN when the correction has no band."""
        from ..model import coverage_levels

        i_lo, i_hi = coverage_levels(coverage)
        if not len(self.band_t_):
            nan = np.full(len(frame), np.nan)
            return nan, nan.copy()
        sd = np.sqrt(self._variance_scaled(regime_matrix(frame, self.features) / self.length_scale))
        return np.exp(self.band_t_[i_lo] * sd), np.exp(self.band_t_[i_hi] * sd)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """Correction c(z) (log units) for featurized rows (with the analog columns when the correction has an
        analog term)."""
        A = self._analog_matrix(frame) if len(self.analog_w_) else None
        # the regime coordinates only where the GP has measured launches to compare them with
        Z = regime_matrix(frame, self.features) / self.length_scale if len(self.alpha_) else np.zeros((len(frame), 0))
        return self._predict_scaled(Z, A)

    def _kernel(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        K = np.exp(-0.5 * _sqdist(A, B))
        if self.linear > 0:  # coordinates are scaled by the length scale; undo it for the linear term
            K += self.linear * (A @ B.T) * self.length_scale**2
        return K

    def to_dict(self) -> dict:
        """JSON-ready state."""
        return {
            "method": self.method,
            "length_scale": self.length_scale,
            "noise": self.noise,
            "linear": self.linear,
            "features": [[k, v] for k, v in self.features.items()],  # ordered: the columns of Z
            "mean": self.mean_,
            "lo": self.lo_,
            "hi": self.hi_,
            "Z": self.Z_.tolist(),
            "alpha": self.alpha_.tolist(),
            "band_t": self.band_t_.tolist(),
            "loo_mape": None if np.isnan(self.loo_mape_) else self.loo_mape_,
            "band_source": self.band_source_,
            **({"auto_loo": [round(float(v), 4) for v in self.auto_loo_]} if len(self.auto_loo_) else {}),
            **({"level": self.level} if self.level != "mean" else {}),
            **(
                {
                    "analog_penalty": self.analog_penalty,
                    "analog_gpus": list(self.analog_gpus_),
                    "analog_b": self.analog_b_,
                    "analog_w": self.analog_w_.tolist(),
                    "analog_lo": self.analog_lo_,
                    "analog_hi": self.analog_hi_,
                    "analog_mean": self.analog_mean_,
                }
                if self.analog_penalty > 0
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, d: dict) -> ResidualCorrection:
        """Inverse of :meth:`to_dict`."""
        c = cls(
            method=d["method"],
            length_scale=float(d["length_scale"]),
            noise=float(d["noise"]),
            linear=float(d.get("linear", 0.0)),
            features={str(k): float(v) for k, v in d["features"]},
            analog_penalty=float(d.get("analog_penalty", 0.0)),  # files before the analog term: none
            level=str(d.get("level", "mean")),  # files before the setting: the mean
        )
        if c.level not in LEVELS:
            raise DataError(
                f"calibration level must be one of {list(LEVELS)}, got {d.get('level')!r}",
                hint="the model file is damaged: re-run `pipeweave calibrate fit`",
            )
        c.analog_gpus_ = tuple(str(g) for g in d.get("analog_gpus", []))
        c.analog_b_ = float(d.get("analog_b", 0.0))
        c.analog_w_ = np.asarray(d.get("analog_w", []), dtype=float)
        c.analog_lo_, c.analog_hi_ = float(d.get("analog_lo", 0.0)), float(d.get("analog_hi", 0.0))
        c.analog_mean_ = float(d.get("analog_mean", 0.0))
        if len(c.analog_w_) not in (0, len(c.analog_gpus_)) or not np.isfinite(c.analog_w_).all():
            raise DataError(
                f"calibration analog_w must hold one finite weight per analog GPU {list(c.analog_gpus_)}, "
                f"got {d.get('analog_w')!r}",
                hint="the model file is damaged: re-run `pipeweave calibrate fit`",
            )
        c.mean_, c.lo_, c.hi_ = float(d["mean"]), float(d["lo"]), float(d["hi"])
        c.alpha_ = np.asarray(d["alpha"], dtype=float)
        c.Z_ = np.asarray(d["Z"], dtype=float).reshape(len(c.alpha_), len(c.features))
        c.band_t_ = np.asarray(d.get("band_t", []), dtype=float)  # files before the calibrated band: none
        c.loo_mape_ = float("nan") if d.get("loo_mape") is None else float(d["loo_mape"])
        c.band_source_ = str(d.get("band_source", "shots" if len(c.band_t_) else ""))
        c.auto_loo_ = np.asarray(d.get("auto_loo", []), dtype=float)
        from ..model import BAND_LEVELS

        if len(c.band_t_) not in (0, len(BAND_LEVELS)) or not (
            np.isfinite(c.band_t_).all() and (np.diff(c.band_t_) >= 0).all()
        ):
            raise DataError(
                f"calibration band_t must be {len(BAND_LEVELS)} non-decreasing finite quantiles or empty, "
                f"got {d.get('band_t')!r}",
                hint="the model file is damaged: re-run `pipeweave calibrate fit`",
            )
        return c


def _sqdist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.maximum(d, 0.0)


@dataclass
class GPUCalibration:
    """Per-family residual corrections for the launches of one GPU (what a calibrated model adds)."""

    gpu: str
    corrections: dict[str, ResidualCorrection]
    n_shots: dict[str, int] = field(default_factory=dict)
    profiles: list[dict] = field(default_factory=list)
    #: the GPU's spec when calibrated (``GPUSpec.flat()``, NaN as None; empty for files written before it was kept)
    spec: dict = field(default_factory=dict)

    def spec_changes(self, spec: GPUSpec) -> list[str]:
        """``"key: calibrated -> now"`` for each spec value that differs from the spec the GPU was calibrated on
        (empty when they agree or the calibration kept no spec)."""
        if not self.spec:
            return []
        now = spec_record(spec)
        return [
            f"{k}: {self.spec.get(k)!r} -> {now.get(k)!r}"
            for k in sorted(set(self.spec) | set(now))
            if k != "name" and self.spec.get(k) != now.get(k)
        ]

    def spec_changes_on(self, rows: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None = None) -> list[str]:
        """:meth:`spec_changes` of the spec ``rows`` on the calibrated GPU are predicted with (``gpus``, then the
        catalog); empty when no row is on that GPU, or the GPU is known to neither."""
        from .._errors import PipeweaveError
        from ..hardware import get_gpu

        if not self.spec or "gpu" not in rows.columns or not self._on_gpu(rows).any():
            return []
        try:
            spec = (gpus or {}).get(self.gpu) or get_gpu(self.gpu)
        except PipeweaveError:
            return []
        return self.spec_changes(spec)

    def log_correction(
        self,
        frame: pd.DataFrame,
        *,
        model: Any = None,
        base_us: np.ndarray | None = None,
        gpus: Mapping[str, GPUSpec] | None = None,
        data: Any = None,
    ) -> np.ndarray:
        """Correction (log units) of each featurized row: 0 on other GPUs and uncalibrated families.

        A correction with an analog term reads how ``model`` (the uncalibrated model) predicts each row on its
        analog GPUs against ``base_us`` (its prediction on this GPU, us): both are then required, unless the
        frame already holds the analog columns (:func:`~pipeweave.calibrate.with_analogs`).
        """
        from ._analog import analog_matrix, with_analogs

        out = np.zeros(len(frame))
        on_gpu = self._on_gpu(frame)
        if not on_gpu.any():
            return out
        fam = frame["family"].astype(str).to_numpy()
        for name, corr in self.corrections.items():
            m = on_gpu & (fam == name)
            if not m.any():
                continue
            rows = frame.loc[m] if not m.all() else frame
            needed = [ANALOG_PREFIX + g for g in corr.analog_gpus_] if len(corr.analog_w_) else []
            if needed and not all(c in rows.columns for c in needed):
                if model is None or base_us is None:
                    raise DataError(
                        f"the calibration of {name!r} on {self.gpu} reads the model's predictions on its analog GPUs "
                        f"{list(corr.analog_gpus_)}, and no model or base prediction was given",
                        hint="predict through the calibrated model (model.predict), which passes both",
                    )
                A = analog_matrix(
                    model, rows, np.asarray(base_us, dtype=float)[m], corr.analog_gpus_, gpus=gpus, data=data
                )
                rows = with_analogs(rows, A, corr.analog_gpus_)
            out[m] = corr.predict(rows)
        return out

    def has_band(self) -> bool:
        """Whether some family's correction carries an error band (enough launches, base model not trained on them)."""
        return any(len(c.band_t_) for c in self.corrections.values())

    def band_rows(self, frame: pd.DataFrame) -> np.ndarray:
        """Boolean mask of the rows (canonical or featurized) whose band comes from this calibration: rows on
        the calibrated GPU of a family whose correction carries a band."""
        banded = [name for name, c in self.corrections.items() if len(c.band_t_)]
        if not banded or "gpu" not in frame.columns or "family" not in frame.columns:
            return np.zeros(len(frame), dtype=bool)
        return self._on_gpu(frame) & np.isin(frame["family"].astype(str), banded)

    def rows_on_gpu(self, frame: pd.DataFrame) -> np.ndarray:
        """Boolean mask of the rows of ``frame`` (with a ``gpu`` column; none without one) on the calibrated GPU,
        its aliases included: the only rows the calibration changes."""
        if "gpu" not in frame.columns:
            return np.zeros(len(frame), dtype=bool)
        return self._on_gpu(frame)

    def _on_gpu(self, frame: pd.DataFrame) -> np.ndarray:
        """Rows on the calibrated GPU, its aliases included ("NVIDIA B200" is B200)."""
        from ..hardware import resolve_gpu_name

        names = frame["gpu"].astype(str)
        hits = {}
        for n in pd.unique(names):
            try:
                hits[n] = n == self.gpu or resolve_gpu_name(n) == self.gpu
            except Exception:  # noqa: BLE001 - a spec-file GPU: its own name only
                hits[n] = n == self.gpu
        return names.map(hits).to_numpy(dtype=bool)

    def band_ratio(self, frame: pd.DataFrame, coverage: float) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) multipliers of the calibrated prediction per featurized row
        (:meth:`ResidualCorrection.band_ratio`); NaN on rows outside :meth:`band_rows`."""
        lo, hi = np.full(len(frame), np.nan), np.full(len(frame), np.nan)
        on = self.band_rows(frame)
        fam = frame["family"].astype(str).to_numpy() if "family" in frame.columns else np.zeros(0)
        for name, corr in self.corrections.items():
            m = on & (fam == name)
            if m.any():
                lo[m], hi[m] = corr.band_ratio(frame.loc[m] if not m.all() else frame, coverage)
        return lo, hi

    def to_dict(self) -> dict:
        """JSON-ready state (stored in the model stamp under ``calibration``)."""
        return {
            "gpu": self.gpu,
            "n_shots": self.n_shots,
            "profiles": self.profiles,
            "corrections": {k: v.to_dict() for k, v in self.corrections.items()},
            **({"spec": self.spec} if self.spec else {}),
        }

    @classmethod
    def from_dict(cls, d: dict) -> GPUCalibration:
        """Inverse of :meth:`to_dict`."""
        return cls(
            gpu=str(d["gpu"]),
            n_shots={k: int(v) for k, v in d.get("n_shots", {}).items()},
            profiles=list(d.get("profiles", [])),
            corrections={k: ResidualCorrection.from_dict(v) for k, v in d["corrections"].items()},
            spec=dict(d.get("spec", {})),
        )


def spec_record(spec: GPUSpec) -> dict:
    """The record of ``spec`` a calibration keeps (:attr:`GPUCalibration.spec`): ``spec.flat()`` as JSON-ready
    values (NaN -> None, numpy scalars -> Python)."""
    out: dict = {}
    for k, v in spec.flat().items():
        if isinstance(v, (float, np.floating)):
            out[k] = None if not np.isfinite(v) else float(v)
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[k] = int(v)
        else:
            out[k] = v
    return out
