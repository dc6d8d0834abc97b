"""ConfigRanker: scores Triton tile configs of one (shape, GPU) query; higher = more likely near-best.

A small scikit-learn-style wrapper around an XGBoost learning-to-rank booster (the only XGBoost
user outside :mod:`pipeweave.model`, because PipeweaveRegressor is a regressor). Training data
come from measured tile-config sweeps: each (GPU, shape) is one query; relevance grades are
4 = the fastest config, 3 = within 0.5% of it, 2 = within 1%, 1 = among the 3 fastest but more than
1% slower, 0 = a config of the enumerated space that is not in the measured near-best set (the sweep
found it slower than best/0.99, or did not run it). Features: :mod:`._features`.

Candidate vocabulary: a config that was never within 1% of the best for any shape on any training
GPU is almost never near-best elsewhere (on each sweep GPU, 95-100% of the shapes have a near-best
config among the other generations' near-best configs, which are ~800 of the 3,000-3,600 feasible
ones). ``fit(..., vocabulary=configs)`` stores that set; :meth:`restrict` keeps only candidates in it
(all feasible configs when the vocabulary is empty or none fits). The vocabulary is saved in the stamp.

Saved as an XGBoost UBJSON/JSON file whose attribute ``pipeweave_stamp`` records the schema
version, feature list, training GPUs, parameters and library versions (same convention as
:func:`pipeweave.model.save_model`; no pickle).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .._errors import DataError, SchemaMismatchError
from .._paths import MODELS_DIR
from ..model import predict_in_place, tree_params

__all__ = ["ConfigRanker", "RANKER_SCHEMA", "DEFAULT_RANKER_PATH", "REBUILD_COMMAND", "rebuild_how"]

RANKER_SCHEMA = "pipeweave-diagnose-ranker/3"
DEFAULT_RANKER_PATH = MODELS_DIR / "diagnose_ranker.ubj"
REBUILD_COMMAND = "pipeweave diagnose --rebuild-models --force"  # = python -m pipeweave.diagnose.build


def rebuild_how(models_dir: str | os.PathLike[str] | None = None) -> str:
    """How to (re)build the diagnose models in ``models_dir`` (default: the committed ``models/``): the committed
    folder's refresh command, or, for any other folder, the call that builds them there (never a command that
    would overwrite the committed models instead)."""
    d = Path(models_dir) if models_dir is not None else MODELS_DIR
    if d.resolve() == Path(MODELS_DIR).resolve():
        return REBUILD_COMMAND
    return f"pipeweave.diagnose.build.build_models(out_dir={str(d)!r})"


class ConfigRanker(BaseEstimator):
    """Learning-to-rank model over tile configs (scikit-learn contract; learned state ends in ``_``).

    ``fit(X, y, qid)``: ``X`` a DataFrame holding ``feature_names`` (see :func:`ranker_feature_names`),
    ``y`` relevance grades (0..4), ``qid`` one id per (GPU, shape) query. ``decision_function(X)``:
    one score per row (comparable within a query only).
    """

    def __init__(
        self,
        objective: str = "rank:pairwise",
        n_estimators: int = 400,
        max_depth: int = 6,
        learning_rate: float = 0.05,
        subsample: float = 0.8,
        colsample_bytree: float = 0.8,
        min_child_weight: float = 1.0,
        max_bin: int = 128,
        pairs_per_sample: int = 8,
        n_jobs: int = 2,
        random_state: int = 0,
    ) -> None:
        self.objective = objective
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.min_child_weight = min_child_weight
        self.max_bin = max_bin
        self.pairs_per_sample = pairs_per_sample
        self.n_jobs = n_jobs
        self.random_state = random_state

    def feature_names(self) -> list[str]:
        """The columns :meth:`fit` and :meth:`decision_function` read (:data:`RANKER_FEATURES`, in order)."""
        from ._features import RANKER_FEATURES

        return list(RANKER_FEATURES)

    def _params(self) -> dict:
        p = tree_params(
            max_depth=self.max_depth,
            learning_rate=self.learning_rate,
            subsample=self.subsample,
            colsample_bytree=self.colsample_bytree,
            min_child_weight=self.min_child_weight,
            n_jobs=self.n_jobs,
            random_state=self.random_state,
            max_bin=self.max_bin,
        )
        if self.objective.startswith("rank:"):
            p.update(
                objective=self.objective,
                lambdarank_num_pair_per_sample=int(self.pairs_per_sample),
                lambdarank_pair_method="mean" if self.objective == "rank:pairwise" else "topk",
            )
        elif self.objective == "binary:logistic":
            p.update(objective="binary:logistic")
        else:
            raise DataError(
                f"unknown ranker objective {self.objective!r}", hint="use rank:pairwise, rank:ndcg or binary:logistic"
            )
        return p

    def _matrix(self, X: pd.DataFrame, names: list[str]) -> np.ndarray:
        missing = [n for n in names if n not in X.columns]
        if missing:
            raise DataError(
                f"ranker input lacks features {missing[:5]}{'...' if len(missing) > 5 else ''}",
                hint="build candidate features with pipeweave.diagnose.candidate_features",
            )
        return X[names].to_numpy(dtype=np.float32)

    def fit(
        self, X: pd.DataFrame, y: np.ndarray, qid: np.ndarray, vocabulary: pd.DataFrame | None = None
    ) -> ConfigRanker:
        """Fit on candidate features ``X``, grades ``y`` and query ids ``qid``; ``vocabulary``: configs
        (tile columns) recommendations are drawn from (see module docstring)."""
        import xgboost as xgb

        from ._space import CONFIG_COLUMNS

        names = self.feature_names()
        y = np.asarray(y, dtype=float)
        qid = np.asarray(qid)
        order = np.argsort(qid, kind="stable")
        M = self._matrix(X, names)[order]
        if self.objective.startswith("rank:"):
            d = xgb.DMatrix(M, label=y[order], qid=qid[order], feature_names=names, nthread=int(self.n_jobs))
        else:
            d = xgb.DMatrix(M, label=(y[order] >= 2).astype(float), feature_names=names, nthread=int(self.n_jobs))
        self.booster_ = xgb.train(self._params(), d, num_boost_round=int(self.n_estimators))
        self.feature_names_ = names
        self.vocabulary_ = (
            np.zeros((0, 6), dtype=np.int64)
            if vocabulary is None
            else np.unique(vocabulary[list(CONFIG_COLUMNS)].to_numpy(dtype=np.int64), axis=0)
        )
        self.n_queries_ = int(len(np.unique(qid)))
        self.n_train_rows_ = int(len(y))
        return self

    def decision_function(self, X: pd.DataFrame) -> np.ndarray:
        """One score per row of ``X`` (higher = more likely near-best; comparable within one query)."""
        self._check_fitted()
        return predict_in_place(self.booster_, self._matrix(X, self.feature_names_), int(self.n_jobs))

    def restrict(self, cand: pd.DataFrame) -> np.ndarray:
        """Boolean mask of the candidates recommendations may come from (the vocabulary, see module doc)."""
        from ._space import CONFIG_COLUMNS, config_key

        self._check_fitted()
        voc = getattr(self, "vocabulary_", None)
        if voc is None or len(voc) == 0:
            return np.ones(len(cand), dtype=bool)
        vk = config_key(pd.DataFrame(voc, columns=list(CONFIG_COLUMNS)))
        mask = np.isin(config_key(cand), vk)
        return mask if mask.any() else np.ones(len(cand), dtype=bool)

    def _check_fitted(self) -> None:
        if not hasattr(self, "booster_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this ConfigRanker is not fitted yet; call fit(...) or ConfigRanker.load(path)")

    # -- persistence --------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str], *, extra: dict | None = None) -> Path:
        """Write the booster (``.ubj`` or ``.json``) atomically with its stamp."""
        from ..model import library_versions as _versions
        from ..model import save_booster

        self._check_fitted()
        path = Path(path)
        if path.suffix not in (".ubj", ".json"):
            raise DataError(f"ranker path must end in .ubj or .json, got {str(path)!r}", hint="e.g. models/ranker.ubj")
        stamp = {
            "schema_version": RANKER_SCHEMA,
            "features": self.feature_names_,
            "params": self.get_params(),
            "vocabulary": np.asarray(getattr(self, "vocabulary_", np.zeros((0, 6))), dtype=int).tolist(),
            "n_queries": self.n_queries_,
            "n_train_rows": self.n_train_rows_,
            "versions": _versions(),
            **(extra or {}),
        }
        booster = self.booster_.copy()
        booster.set_attr(pipeweave_stamp=json.dumps(stamp, sort_keys=True, default=str))
        return save_booster(booster, path)  # atomic, with a length + SHA-256 record checked on load

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> ConfigRanker:
        """Load a ranker written by :meth:`save`; refuses a schema or feature-list mismatch."""
        from ..model import load_booster

        path = Path(path) if path is not None else DEFAULT_RANKER_PATH
        how = rebuild_how(path.parent)
        if not path.is_file():
            raise DataError(f"config-ranker model not found: {str(path)!r}", hint=f"build it with `{how}`")
        # checked (length + digest, or structure for older files) before XGBoost parses a byte
        booster = load_booster(path, rebuild_command=how)
        raw = booster.attr("pipeweave_stamp")
        if raw is None:
            raise SchemaMismatchError(f"{str(path)!r} has no pipeweave stamp", hint=f"rebuild with `{how}`")
        stamp = json.loads(raw)
        params = {k: v for k, v in stamp.get("params", {}).items() if k in cls().get_params()}
        model = cls(**params)
        available = model.feature_names()
        stored = list(stamp.get("features", []))
        missing = [f for f in stored if f not in available]
        if stamp.get("schema_version") != RANKER_SCHEMA or not stored or missing:
            raise SchemaMismatchError(
                f"ranker file {str(path)!r} does not match this pipeweave "
                f"(schema {stamp.get('schema_version')!r}, {len(stored)} features"
                + (f", {len(missing)} no longer computed: {missing[:4]}" if missing else "")
                + f"; expected schema {RANKER_SCHEMA!r})",
                hint=f"rebuild with `{how}`",
            )
        model.booster_ = booster
        model.feature_names_ = stored  # features the booster was trained on (all still computed)
        model.vocabulary_ = np.asarray(stamp.get("vocabulary", []), dtype=np.int64).reshape(-1, 6)
        model.n_queries_ = int(stamp.get("n_queries", 0))
        model.n_train_rows_ = int(stamp.get("n_train_rows", 0))
        model.stamp_ = stamp
        return model
