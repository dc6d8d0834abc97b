"""The learned back-end: XGBoost on dimensionless analytical features (the only XGBoost user).

Public API: :class:`PipeweaveRegressor`, :func:`save_model`, :func:`load_model`,
:func:`read_stamp`, :func:`ensure_features`, :func:`tune`.
"""

from ._artifact import (DEFAULT_MODEL_PATH, RETRAIN_COMMAND, SCHEMA_VERSION, check_model_path, load_model, read_stamp,
                        save_model, verify_model_file)
from ._features import design_matrix, ensure_features, model_feature_names
from ._regressor import PipeweaveRegressor
from ._tune import SEARCH_SPACE, logo_cv_mape, tune

__all__ = [
    "PipeweaveRegressor",
    "save_model",
    "load_model",
    "read_stamp",
    "verify_model_file",
    "check_model_path",
    "ensure_features",
    "design_matrix",
    "model_feature_names",
    "SCHEMA_VERSION",
    "DEFAULT_MODEL_PATH",
    "RETRAIN_COMMAND",
    "tune",
    "logo_cv_mape",
    "SEARCH_SPACE",
]
