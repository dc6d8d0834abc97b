"""The learned back-end: XGBoost on dimensionless analytical features (the only XGBoost user).

Public API: :class:`PipeweaveRegressor`, :func:`save_model`, :func:`load_model`,
:func:`read_stamp`, :func:`ensure_features`, :func:`tune`.
"""

# shared with the learned baselines, the evaluation suite, the diagnose ranker and the CLI
from ._artifact import (
    DEFAULT_MODEL_PATH,
    RETRAIN_COMMAND,
    SCHEMA_VERSION,
    check_model_path,
    library_versions,
    load_booster,
    load_model,
    read_stamp,
    save_booster,
    save_model,
    verify_model_file,
)
from ._features import (
    GPU_CONSTANT_FEATURES,
    KNOWN_SOURCES,
    SASS_FAMILIES,
    attach_sass_features,
    design_matrix,
    ensure_features,
    gpu_blind_rows,
    model_feature_names,
)
from ._recipe import (
    COMPANION_PARAMS,
    DEFAULT_MAX_ROWS_PER_GROUP,
    DEFAULT_MODEL_PARAMS,
    FAMILY_BOOSTER_ROWS,
    FAMILY_COMPANION,
    FAMILY_REFERENCE,
    GPU_BLIND_FAMILIES,
    INFORMATIVE_SAMPLING_FAMILIES,
    SEEN_GPU_MIN_ROWS,
    SEEN_GPU_PARAMS,
    SEEN_GPU_WEIGHT,
)
from ._regressor import (
    REFERENCES,
    PipeweaveRegressor,
    companion_booster_params,
    companion_family,
    explicit_tile_rows,
    seen_booster_params,
    seen_keys,
)
from ._training import IMPOSSIBLE_FACTOR, cap_rows, prepare_training_frame
from ._tune import SEARCH_SPACE, logo_cv_mape, tune
from ._xgb import predict_in_place, tree_params

__all__ = [
    "PipeweaveRegressor",
    "companion_family",
    "save_model",
    "load_model",
    "read_stamp",
    "verify_model_file",
    "save_booster",
    "load_booster",
    "check_model_path",
    "ensure_features",
    "design_matrix",
    "model_feature_names",
    "GPU_CONSTANT_FEATURES",
    "gpu_blind_rows",
    "GPU_BLIND_FAMILIES",
    "INFORMATIVE_SAMPLING_FAMILIES",
    "FAMILY_BOOSTER_ROWS",
    "FAMILY_REFERENCE",
    "FAMILY_COMPANION",
    "COMPANION_PARAMS",
    "companion_booster_params",
    "SEEN_GPU_WEIGHT",
    "SEEN_GPU_PARAMS",
    "SEEN_GPU_MIN_ROWS",
    "seen_booster_params",
    "seen_keys",
    "explicit_tile_rows",
    "REFERENCES",
    "SCHEMA_VERSION",
    "DEFAULT_MODEL_PATH",
    "RETRAIN_COMMAND",
    "tune",
    "logo_cv_mape",
    "SEARCH_SPACE",
    "attach_sass_features",
    "KNOWN_SOURCES",
    "SASS_FAMILIES",
    "prepare_training_frame",
    "cap_rows",
    "IMPOSSIBLE_FACTOR",
    "tree_params",
    "predict_in_place",
    "library_versions",
    "DEFAULT_MODEL_PARAMS",
    "DEFAULT_MAX_ROWS_PER_GROUP",
]
