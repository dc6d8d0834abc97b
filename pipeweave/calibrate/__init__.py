"""Few-shot calibration: a handful of launches measured on a new GPU correct the model there.

``plan_launches`` picks which launches to measure (k-means coverage of the regime space),
``calibrate_model`` adds a per-family Gaussian-process residual correction over regime
coordinates (:class:`ResidualCorrection`; :func:`regime_features` says which a family reads), stored in the model file's stamp so that
``pipeweave predict --model`` uses it like any other model. See ``pipeweave calibrate -h`` and
the few-shot protocol (``pipeweave evaluate --protocol few-shot``), which chooses the method and
its settings inside the training generations.
"""

from ._analog import (
    ANALOG_MIN_LAUNCHES,
    ANALOG_PREFIX,
    FAMILY_ANALOG_PENALTY,
    analog_columns,
    analog_gpus,
    analog_matrix,
    asked_on,
    default_analog_penalty,
    trained_gpus,
    with_analogs,
)
from ._correction import (
    AUTO_CANDIDATES,
    AUTO_MIN_LAUNCHES,
    CALIBRATED_BAND,
    CALIBRATED_BAND_MIN_SHOTS,
    DEFAULT_LENGTH_SCALE,
    DEFAULT_NOISE,
    LEVELS,
    METHODS,
    SETTING_RANGES,
    GPUCalibration,
    ResidualCorrection,
    setting_ok,
)
from ._fit import (
    TIMING_MISMATCHES,
    borrows_band,
    calibrate_model,
    merge_repeated_launches,
    plan_launches,
    residuals,
    trained_on,
)
from ._plan import plan_positions
from ._regime import (
    FAMILY_PLAN_MAX_LAUNCHES,
    FAMILY_REGIME_FEATURES,
    REGIME_FEATURES,
    REGIMES,
    regime_features,
    regime_matrix,
)

__all__ = [
    "ANALOG_MIN_LAUNCHES",
    "ANALOG_PREFIX",
    "FAMILY_ANALOG_PENALTY",
    "default_analog_penalty",
    "trained_gpus",
    "with_analogs",
    "analog_columns",
    "analog_gpus",
    "analog_matrix",
    "asked_on",
    "TIMING_MISMATCHES",
    "AUTO_CANDIDATES",
    "AUTO_MIN_LAUNCHES",
    "CALIBRATED_BAND",
    "CALIBRATED_BAND_MIN_SHOTS",
    "DEFAULT_LENGTH_SCALE",
    "DEFAULT_NOISE",
    "LEVELS",
    "METHODS",
    "FAMILY_PLAN_MAX_LAUNCHES",
    "FAMILY_REGIME_FEATURES",
    "REGIME_FEATURES",
    "REGIMES",
    "GPUCalibration",
    "ResidualCorrection",
    "SETTING_RANGES",
    "borrows_band",
    "setting_ok",
    "calibrate_model",
    "merge_repeated_launches",
    "plan_launches",
    "plan_positions",
    "regime_features",
    "regime_matrix",
    "residuals",
    "trained_on",
]
