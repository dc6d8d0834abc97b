"""Model files: the XGBoost booster as UBJSON (or JSON) with a stamp in its attributes.

The stamp records the schema version, the ordered feature list, the families, sources and GPUs
trained on, a fingerprint of the training data, the hyperparameters and library versions.
:func:`load_model` refuses a file whose schema version or feature list differs from what this
version of pipeweave computes, listing the differences and the command that retrains. No pickle.

A model with one booster per family (``per_family=True``) is still one file: the shared booster
is the file's booster, and each family's booster is stored as its own UBJSON bytes (base64) in the
attribute ``pipeweave_family_<family>``; the stamp lists them under ``family_boosters``.
"""

from __future__ import annotations

import base64
import json
import os
import platform
from pathlib import Path

from .. import __version__
from .._errors import DataError, SchemaMismatchError
from .._io import atomic_write
from ._features import model_feature_names
from ._regressor import PipeweaveRegressor

__all__ = ["save_model", "load_model", "read_stamp", "SCHEMA_VERSION", "DEFAULT_MODEL_PATH", "RETRAIN_COMMAND"]

_FAMILY_ATTR = "pipeweave_family_"

#: Bump when features, target or file layout change meaning.
SCHEMA_VERSION = "pipeweave-model/1"
DEFAULT_MODEL_PATH = Path(__file__).resolve().parents[2] / "models" / "pipeweave_default.ubj"
RETRAIN_COMMAND = "pipeweave train --out models/pipeweave_default.ubj"


def _versions() -> dict[str, str]:
    import numpy
    import pandas
    import sklearn
    import xgboost

    return {"pipeweave": __version__, "xgboost": xgboost.__version__, "numpy": numpy.__version__,
            "pandas": pandas.__version__, "scikit-learn": sklearn.__version__, "python": platform.python_version()}


def save_model(model: PipeweaveRegressor, path: str | os.PathLike[str], *, data_fingerprint: str = "",
               extra: dict | None = None) -> Path:
    """Write ``model`` to ``path`` (``.ubj`` -> UBJSON, ``.json`` -> JSON) atomically with its stamp."""
    model._check_fitted()
    path = Path(path)
    if path.suffix not in (".ubj", ".json"):
        raise DataError(f"model path must end in .ubj or .json, got {str(path)!r}", hint="e.g. models/mine.ubj")
    stamp = {
        "schema_version": SCHEMA_VERSION,
        "features": model.feature_names_,
        "families": model.families_,
        "sources": model.sources_,
        "gpus": model.gpus_,
        "n_train_rows": model.n_train_rows_,
        "data_fingerprint": data_fingerprint,
        "params": model.get_params(),
        "versions": _versions(),
        "family_boosters": sorted(getattr(model, "family_boosters_", None) or {}),
        **(extra or {}),
    }
    booster = model.booster_.copy()
    for fam, fb in (getattr(model, "family_boosters_", None) or {}).items():
        booster.set_attr(**{_FAMILY_ATTR + fam: base64.b64encode(bytes(fb.save_raw("ubj"))).decode("ascii")})
    booster.set_attr(pipeweave_stamp=json.dumps(stamp, sort_keys=True, default=str))

    def write(tmp: Path) -> None:
        # xgboost picks the format from the suffix; the temp file keeps the target's suffix
        booster.save_model(str(tmp))

    return atomic_write(path, write)


def read_stamp(path: str | os.PathLike[str]) -> dict:
    """The stamp of a saved model (no compatibility check)."""
    import xgboost as xgb

    path = Path(path)
    if not path.is_file():
        raise DataError(f"model file not found: {str(path)!r}",
                        hint=f"train one with `{RETRAIN_COMMAND}` or pass --model PATH")
    booster = xgb.Booster()
    try:
        booster.load_model(str(path))
    except Exception as exc:  # xgboost raises its own XGBoostError for corrupt files
        raise DataError(f"{str(path)!r} is not an XGBoost model file ({exc.__class__.__name__})",
                        hint=f"retrain with `{RETRAIN_COMMAND}`") from None
    raw = booster.attr("pipeweave_stamp")
    if raw is None:
        raise SchemaMismatchError(f"{str(path)!r} has no pipeweave stamp (not written by pipeweave)",
                                  hint=f"retrain with `{RETRAIN_COMMAND}`")
    return {"_booster": booster, **json.loads(raw)}


def load_model(path: str | os.PathLike[str] | None = None) -> PipeweaveRegressor:
    """Load a model written by :func:`save_model`; refuses schema or feature-list mismatches."""
    import xgboost as xgb

    path = Path(path) if path is not None else DEFAULT_MODEL_PATH
    stamp = read_stamp(path)
    booster = stamp.pop("_booster")
    params = dict(stamp.get("params", {}))
    model = PipeweaveRegressor(**{k: v for k, v in params.items() if k in PipeweaveRegressor().get_params()})
    sass_cols = [f for f in stamp.get("features", []) if f.startswith("sass_")]
    expected = model_feature_names(sass_cols, tuple(model.drop_features or ()))
    diffs = []
    if stamp.get("schema_version") != SCHEMA_VERSION:
        diffs.append(f"schema_version: file {stamp.get('schema_version')!r} != expected {SCHEMA_VERSION!r}")
    got = stamp.get("features", [])
    if got != expected:
        missing = [f for f in expected if f not in got]
        extra = [f for f in got if f not in expected]
        diffs.append(f"features: missing {missing}, unexpected {extra}" if (missing or extra)
                     else "features: same names in a different order")
    if diffs:
        raise SchemaMismatchError(f"model file {str(path)!r} does not match this pipeweave:\n  - " + "\n  - ".join(diffs),
                                  hint=f"retrain with `{RETRAIN_COMMAND}`")
    if isinstance(model.drop_features, list):
        model.drop_features = tuple(model.drop_features)
    model.booster_ = booster
    model.family_boosters_ = {}
    for fam in stamp.get("family_boosters", []):
        raw = booster.attr(_FAMILY_ATTR + fam)
        if raw is None:
            raise SchemaMismatchError(f"model file {str(path)!r} lists a booster for family {fam!r} but lacks it",
                                      hint=f"the file is damaged; retrain with `{RETRAIN_COMMAND}`")
        model.family_boosters_[fam] = xgb.Booster(model_file=bytearray(base64.b64decode(raw)))
    model.feature_names_ = got
    model.families_ = stamp.get("families", [])
    model.sources_ = stamp.get("sources", [])
    model.gpus_ = stamp.get("gpus", [])
    model.n_train_rows_ = stamp.get("n_train_rows", 0)
    model.stamp_ = stamp
    return model
