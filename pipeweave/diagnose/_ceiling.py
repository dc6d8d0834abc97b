"""CeilingModel: the latency achievable for a kernel shape on a GPU (its best tile config).

A :class:`pipeweave.model.PipeweaveRegressor` (analytical envelope x learned correction, floored
at the analytical lower bound ``t_lower_us``) trained on one row per measured (GPU, shape): the
fastest config of the sweep, with its latency. At prediction time the row carries the config at
which to evaluate it - the ranker's top recommendation - so the ceiling reads "what the best
config would take". ``quantile`` switches to a pinball loss (e.g. 0.3 = a slightly optimistic
ceiling). Saved with :func:`pipeweave.model.save_model` (stamp ``diagnose_role = "ceiling"``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import DataError
from .._paths import MODELS_DIR
from ._features import SHAPE_COLUMNS

if TYPE_CHECKING:
    from ..model import PipeweaveRegressor

__all__ = [
    "CeilingModel",
    "best_per_shape",
    "DEFAULT_CEILING_PATH",
    "DEFAULT_LATENCY_PATH",
    "latency_training_rows",
    "fit_latency_model",
]

_MODELS = MODELS_DIR
DEFAULT_CEILING_PATH = _MODELS / "diagnose_ceiling.ubj"
DEFAULT_LATENCY_PATH = _MODELS / "diagnose_latency.ubj"

#: Boosting settings of the diagnose regressors (smaller than the main model: ~2k-30k rows).
REGRESSOR_PARAMS = {
    "n_estimators": 400,
    "max_depth": 6,
    "learning_rate": 0.05,
    "min_child_weight": 3.0,
    "n_jobs": 2,
    "max_rows_per_group": None,
}  # every sweep row (no row cap of the latency recipe)


def best_per_shape(sweeps: pd.DataFrame) -> pd.DataFrame:
    """The fastest measured row of every (GPU, dtype, family, shape) of sweep rows."""
    if sweeps.empty:
        raise DataError(
            "no sweep rows to take per-shape best configs from",
            hint="pass moe_dse rows (load_profiles(sources='pipeweave', families='moe_w13'))",
        )
    fam = sweeps["family"].astype(str).iloc[0]
    keys = ["gpu", "dtype", "family", *[c for c in SHAPE_COLUMNS[fam] if c in sweeps.columns]]
    filled = sweeps.fillna({c: -1.0 for c in keys if sweeps[c].dtype.kind == "f"})
    idx = filled.groupby(keys, sort=False)["latency_us"].idxmin()
    return sweeps.loc[idx.to_numpy()].reset_index(drop=True)


class CeilingModel:
    """Learned performance ceiling (see module docstring). ``fit(sweeps)`` / ``predict(rows)`` in us."""

    def __init__(self, quantile: float | None = None, n_jobs: int = 2, random_state: int = 0, **params: object) -> None:
        self.quantile = quantile
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.params = {**REGRESSOR_PARAMS, **params}

    def _regressor(self):  # noqa: ANN202
        from ..model import PipeweaveRegressor

        p: dict[str, Any] = {
            **self.params,
            "n_jobs": self.n_jobs,
            "random_state": self.random_state,
            "quantile": self.quantile,
        }
        return PipeweaveRegressor(**p)

    def fit(self, sweeps: pd.DataFrame) -> CeilingModel:
        """Fit on measured sweep rows (tile columns + latency_us): one training row per shape, its best."""
        best = best_per_shape(sweeps)
        self.regressor_ = self._regressor().fit(best)
        self.gpus_ = sorted(set(best["gpu"].astype(str)))
        self.n_shapes_ = int(len(best))
        return self

    def predict(self, rows: pd.DataFrame) -> np.ndarray:
        """Ceiling (us) of each row, evaluated at the row's tile config (floored at t_lower_us)."""
        if not hasattr(self, "regressor_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this CeilingModel is not fitted yet; call fit(sweeps) or CeilingModel.load()")
        return self.regressor_.predict(rows)

    def save(
        self,
        path: str | os.PathLike[str] = DEFAULT_CEILING_PATH,
        *,
        data_fingerprint: str = "",
        extra: dict | None = None,
    ) -> Path:
        """Write the ceiling's regressor as a stamped model file (``extra``: more stamp fields)."""
        from ..model import save_model

        return save_model(
            self.regressor_,
            path,
            data_fingerprint=data_fingerprint,
            extra={"diagnose_role": "ceiling", "n_shapes": getattr(self, "n_shapes_", 0), **(extra or {})},
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> CeilingModel:
        from ..model import load_model

        reg = load_model(Path(path) if path is not None else DEFAULT_CEILING_PATH)
        m = cls(quantile=reg.quantile)
        m.regressor_ = reg
        m.gpus_ = list(reg.gpus_)
        m.n_shapes_ = int(getattr(reg, "stamp_", {}).get("n_shapes", 0))
        return m


def latency_training_rows(
    defaults: pd.DataFrame, sweeps: pd.DataFrame, per_shape: int = 4, seed: int = 0
) -> pd.DataFrame:
    """Rows for the per-config latency model: default-config launches + a few sweep rows per shape.

    Every default-config row (the kernel's own config, anywhere in the quality range) plus, per
    swept (GPU, shape), its 3 fastest configs and ``per_shape - 3`` more drawn at random from its
    near-best set, so that each shape weighs about the same whatever the size of its near-best set.
    """
    parts = [defaults]
    if not sweeps.empty and per_shape > 0:
        rng = np.random.default_rng(seed)
        fam = sweeps["family"].astype(str).iloc[0]
        keys = ["gpu", *[c for c in SHAPE_COLUMNS[fam] if c in sweeps.columns]]
        s = sweeps.assign(_r=rng.random(len(sweeps)))
        s = s.assign(_rank=s.groupby(keys)["latency_us"].rank(method="first"))
        top = s["_rank"] <= min(3, per_shape)
        rest = s[~top].sort_values("_r").groupby(keys).head(max(per_shape - 3, 0))
        parts.append(pd.concat([s[top], rest]).drop(columns=["_r", "_rank"]))
    out = pd.concat(parts, ignore_index=True)
    return out


def fit_latency_model(
    defaults: pd.DataFrame, sweeps: pd.DataFrame, *, per_shape: int = 4, n_jobs: int = 2, random_state: int = 0
) -> PipeweaveRegressor:
    """A PipeweaveRegressor of the latency (us) of any config (see :func:`latency_training_rows`)."""
    from ..model import PipeweaveRegressor

    rows = latency_training_rows(defaults, sweeps, per_shape=per_shape, seed=random_state)
    p: dict[str, Any] = {**REGRESSOR_PARAMS, "n_jobs": n_jobs, "random_state": random_state}
    return PipeweaveRegressor(**p).fit(rows)
