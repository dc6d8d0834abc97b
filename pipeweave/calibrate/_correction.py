"""The few-shot correction: a Gaussian-process residual model over regime coordinates.

For a model ``f`` and the ``n`` launches measured on the new GPU, the residual
``r_i = log(measured_i / f(x_i))`` is modelled as a constant (the mean residual: a per-GPU
scale factor) plus a zero-mean Gaussian process over the regime coordinates ``z``
(:func:`~pipeweave.calibrate.regime_matrix`) with an RBF kernel of length scale ``l`` and a
noise-to-signal ratio ``noise``. The posterior mean

    c(z) = mean(r) + k(z, Z) (K + noise I)^-1 (r - mean(r)),   k(a, b) = exp(-|a - b|^2 / (2 l^2))

corrects each launch by what the measurements of launches in the same regime say, and falls
back to the per-GPU factor far from every measured launch. ``linear`` > 0 adds a linear kernel
``linear * a.b`` (a Bayesian linear trend over the regime coordinates, e.g. "the more
tensor-bound, the slower than predicted"), which extrapolates where the RBF term cannot. It is clipped to the range of the
observed residuals (no extrapolation beyond what was measured). ``method="scalar"`` keeps the
mean only, ``"none"`` is the uncorrected model. The calibrated prediction is
``max(f(x) * exp(c(z)), t_lower_us)``.

The state is a few arrays (the measured coordinates and the weights), so it is stored in the
model file's stamp as plain JSON; no pickle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._errors import DataError
from ._regime import REGIME_FEATURES, regime_matrix

__all__ = ["DEFAULT_LENGTH_SCALE", "DEFAULT_NOISE", "METHODS", "GPUCalibration", "ResidualCorrection"]

METHODS: tuple[str, ...] = ("gp", "scalar", "none")
#: defaults of `pipeweave calibrate fit`: the fused-MoE option the few-shot protocol chose most often at
#: 32 shots, inside the training generations (experiments/few_shot/results.json, "chosen": length scale
#: 4 on 3 of 4 folds, noise 0.3 on 3 of 4; for GEMM it chose length scale 2 with noise 0.3 or 1.0)
DEFAULT_LENGTH_SCALE: float = 4.0
DEFAULT_NOISE: float = 0.3


@dataclass
class ResidualCorrection:
    """log-latency correction c(z) of one (GPU, family): see the module docstring."""

    method: str = "gp"
    length_scale: float = DEFAULT_LENGTH_SCALE
    noise: float = DEFAULT_NOISE
    linear: float = 0.0
    features: dict[str, float] = field(default_factory=lambda: dict(REGIME_FEATURES))
    mean_: float = 0.0
    lo_: float = 0.0
    hi_: float = 0.0
    Z_: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    alpha_: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def fit(self, frame: pd.DataFrame, residual: np.ndarray) -> ResidualCorrection:
        """Fit on featurized measured rows and their residuals log(measured / predicted)."""
        if self.method not in METHODS:
            raise DataError(
                f"calibration method must be one of {list(METHODS)}, got {self.method!r}", hint="use 'gp' (default)"
            )
        if not (self.length_scale > 0 and self.noise > 0):
            raise DataError(
                f"length_scale and noise must be > 0, got {self.length_scale!r}, {self.noise!r}",
                hint=f"defaults: {DEFAULT_LENGTH_SCALE}, {DEFAULT_NOISE}",
            )
        r = np.asarray(residual, dtype=float)
        if len(r) != len(frame) or not np.isfinite(r).all():
            raise DataError(f"residuals must be finite, one per row ({len(r)} for {len(frame)} rows)")
        if self.method == "none" or len(r) == 0:
            self.mean_, self.lo_, self.hi_ = 0.0, 0.0, 0.0
            self.Z_, self.alpha_ = np.zeros((0, len(self.features))), np.zeros(0)
            return self
        self.mean_ = float(r.mean())
        self.lo_, self.hi_ = float(r.min()), float(r.max())
        if self.method == "scalar" or len(r) < 2:
            self.Z_, self.alpha_ = np.zeros((0, len(self.features))), np.zeros(0)
            return self
        Z = regime_matrix(frame, self.features) / self.length_scale
        K = self._kernel(Z, Z) + self.noise * np.eye(len(Z))
        self.Z_ = Z
        self.alpha_ = np.linalg.solve(K, r - self.mean_)
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """Correction c(z) (log units) for featurized rows."""
        out = np.full(len(frame), self.mean_)
        if len(self.alpha_):
            Z = regime_matrix(frame, self.features) / self.length_scale
            for lo in range(0, len(Z), 65536):  # bounded memory: chunks of rows x shots
                hi = lo + 65536
                out[lo:hi] += self._kernel(Z[lo:hi], self.Z_) @ self.alpha_
        return np.clip(out, self.lo_, self.hi_)

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
        )
        c.mean_, c.lo_, c.hi_ = float(d["mean"]), float(d["lo"]), float(d["hi"])
        c.alpha_ = np.asarray(d["alpha"], dtype=float)
        c.Z_ = np.asarray(d["Z"], dtype=float).reshape(len(c.alpha_), len(c.features))
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

    def log_correction(self, frame: pd.DataFrame) -> np.ndarray:
        """Correction (log units) of each featurized row: 0 on other GPUs and uncalibrated families."""
        out = np.zeros(len(frame))
        on_gpu = frame["gpu"].astype(str).to_numpy() == self.gpu
        if not on_gpu.any():
            return out
        fam = frame["family"].astype(str).to_numpy()
        for name, corr in self.corrections.items():
            m = on_gpu & (fam == name)
            if m.any():
                out[m] = corr.predict(frame.loc[m] if not m.all() else frame)
        return out

    def to_dict(self) -> dict:
        """JSON-ready state (stored in the model stamp under ``calibration``)."""
        return {
            "gpu": self.gpu,
            "n_shots": self.n_shots,
            "profiles": self.profiles,
            "corrections": {k: v.to_dict() for k, v in self.corrections.items()},
        }

    @classmethod
    def from_dict(cls, d: dict) -> GPUCalibration:
        """Inverse of :meth:`to_dict`."""
        return cls(
            gpu=str(d["gpu"]),
            n_shots={k: int(v) for k, v in d.get("n_shots", {}).items()},
            profiles=list(d.get("profiles", [])),
            corrections={k: ResidualCorrection.from_dict(v) for k, v in d["corrections"].items()},
        )
