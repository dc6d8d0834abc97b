"""The hybrid regressor: analytical envelope x learned efficiency correction (XGBoost).

prediction_us = max(t_env_us * exp(f(x)), t_lower_us), where f is an XGBoost model of
log(measured / t_env) over dimensionless features x (see :mod:`._features`). ``reference`` swaps
the envelope for the roofline time or for 1 us (raw log latency); these alternatives exist to
measure the choice (``experiments/model_choices``), the envelope is the default.
``family_reference`` gives a family's booster another reference (the recipe: decode attention on
the warm-L2 replay envelope ``t_env_warm_us``): that booster's target uses it on all its rows and
its family's rows are predicted from it. One booster is
trained on all families (family one-hots are features) and, with ``per_family`` (the default, the
shipped model's recipe), one more booster per family on its own rows, the shared one remaining the
fallback for families without their own; ``quantile`` switches the objective to a pinball loss for
performance ceilings (e.g. 0.1 = the fast tail of achievable latencies).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

try:
    from sklearn.base import BaseEstimator, RegressorMixin
except ImportError:  # only where scikit-learn is blocked on purpose (the `pipeweave predict` process, for start-up)
    from .._estimator import BaseEstimator, RegressorMixin

from .._errors import DataError, shown
from .._frame import distinct_rows, num_values, str_codes, str_values, training_latency
from ..frontend import EXTRA_FEATURES
from ._bands import band_bounds, check_coverage, check_error_bands
from ._library import TABLE_TILE_COLUMNS, TILE_BORROW_RULES, choose_tiles, fit_tile_tables, row_spec_values
from ._recipe import (
    COMPANION_PARAMS,
    DEFAULT_MAX_ROWS_PER_GROUP,
    DTYPE_BOOSTERS,
    FAMILY_BOOSTER_PARAMS,
    FAMILY_BOOSTER_ROWS,
    FAMILY_BOOSTER_SETTINGS,
    FAMILY_COMPANION,
    FAMILY_EXTRA_FEATURES,
    FAMILY_REFERENCE,
    FAMILY_ROOFLINE_BLEND,
    GPU_BLIND_FAMILIES,
    INFORMATIVE_SAMPLING_FAMILIES,
    LIBRARY_TILE_BORROW,
    LIBRARY_TILE_MIN_LAUNCHES,
    LIBRARY_TILE_NEIGHBORS,
    LIBRARY_TILE_TABLE_ROWS,
    MIN_BACKEND_GPUS,
    ROOFLINE_GENERATION_GATE,
    ROW_CAP_GROUP,
    SEEN_GPU_MIN_ROWS,
    SEEN_GPU_PARAMS,
    SEEN_GPU_WEIGHT,
    SIBLING_COMPANION,
)
from ._xgb import predict_in_place, tree_params

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "REFERENCES",
    "PipeweaveRegressor",
    "companion_booster_params",
    "explicit_tile_rows",
    "seen_booster_params",
    "seen_keys",
]

#: reference time of the target log(latency / reference): name -> featurized column (None = 1 us)
REFERENCES: dict[str, str | None] = {
    "envelope": "t_env_us",
    "warm_envelope": "t_env_warm_us",  # the envelope of a replay that finds its operands in L2 as far as they fit
    "roofline": "t_roofline_us",
    "none": None,
}

#: input columns that do not describe the launch (measurement metadata): left out of the
#: distinct-launch key of :meth:`PipeweaveRegressor.predict`; every other column is part of it
NON_LAUNCH_COLUMNS: frozenset[str] = frozenset(
    {
        "latency_us",
        "latency_us_pred",
        "timing",
        "dataset",
        "generation",
        "n_raw_rows",
        "split",
        "in_dse_99",
        "in_dse_99_5",
        "in_dse_top3",
    }
)


def companion_booster_params(n_jobs: int, random_state: int) -> dict[str, Any]:
    """XGBoost training parameters of a crude companion booster (:data:`~pipeweave.model.COMPANION_PARAMS`,
    squared error on log(latency / wave-quantized roofline)); its rounds are ``COMPANION_PARAMS["n_estimators"]``."""
    params = tree_params(
        max_depth=int(COMPANION_PARAMS["max_depth"]),
        learning_rate=float(COMPANION_PARAMS["learning_rate"]),
        subsample=float(COMPANION_PARAMS["subsample"]),
        colsample_bytree=float(COMPANION_PARAMS["colsample_bytree"]),
        min_child_weight=float(COMPANION_PARAMS["min_child_weight"]),
        n_jobs=n_jobs,
        random_state=random_state,
    )
    params["objective"] = "reg:squarederror"
    return params


def seen_booster_params(n_jobs: int, random_state: int) -> dict[str, Any]:
    """XGBoost training parameters of a seen-GPU booster (:data:`~pipeweave.model.SEEN_GPU_PARAMS`, without
    ``n_estimators``, which is the number of boosting rounds)."""
    p = {k: v for k, v in SEEN_GPU_PARAMS.items() if k != "n_estimators"}
    return tree_params(**p, n_jobs=n_jobs, random_state=random_state) | {"objective": "reg:squarederror"}


def _catalog_name(name: str) -> str:
    """The catalog's name of a GPU name or alias (``H100`` -> ``H100-SXM``); a GPU outside it keeps its name."""
    from .._errors import UnknownGPUError
    from ..hardware import resolve_gpu_name

    try:
        return resolve_gpu_name(name)
    except UnknownGPUError:
        return name


def explicit_tile_rows(rows: pd.DataFrame) -> np.ndarray:
    """Bool per row: the launch names its own tile plan (a Triton config: ``block_m``, ``block_n`` and ``block_k``
    given; in a featurized frame, ``tile_origin == "recorded"``) rather than leaving the kernel to the library."""
    if "tile_origin" in rows.columns:
        return (str_values(rows["tile_origin"]) == "recorded").astype(bool)
    from ..frontend import named_tile_rows  # the front-end's own rule for "recorded"

    return named_tile_rows(rows)


def seen_keys(rows: pd.DataFrame) -> np.ndarray:
    """Per row, the key of a seen-GPU booster's one-hot: the GPU by its catalog name (an alias such as ``H100`` is
    the same GPU; a GPU outside the catalog keeps its name). The source is not part of it: the model's source
    features already tell the timing conventions apart, and a user's own rows (source ``user``) make their GPU
    a seen one for predictions, which name a catalog source."""
    gcodes, gnames = str_codes(rows["gpu"])
    names = np.array([_catalog_name(g) for g in gnames], dtype=object)  # one lookup per distinct name
    return names[gcodes] if len(gcodes) else np.array([], dtype=object)


def _keys_with_rows(keys: np.ndarray, min_rows: int) -> list[str]:
    """The distinct GPU keys (:func:`seen_keys`) with at least ``min_rows`` rows in ``keys``, sorted: the GPUs
    a family counts as trained on (seen-GPU one-hots, the roofline blend's exceptions)."""
    uniq, counts = np.unique(np.asarray(keys).astype(str), return_counts=True)
    return [str(k) for k, c in zip(uniq, counts, strict=True) if c >= min_rows]


def launch_groups(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
    """``(codes, first)`` of the distinct launches of ``df`` (see ``pipeweave._frame.distinct_rows``).

    The key is every column except :data:`NON_LAUNCH_COLUMNS`; ``None`` when every row is distinct.
    """
    key = [c for c in df.columns if c not in NON_LAUNCH_COLUMNS]
    if len(df) < 2 or not key:
        return None
    codes, first = distinct_rows(df[key])
    return None if len(first) == len(df) else (codes, first)


def _row_generations(df: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None = None) -> np.ndarray:
    """Each row's GPU generation: the ``generation`` column where given, else the GPU's spec (``gpus``, then
    the catalog); ``""`` where neither knows the GPU."""
    if "generation" in df.columns:
        given = str_values(df["generation"].astype(object).where(df["generation"].notna(), ""))
    else:
        given = np.full(len(df), "", dtype=object)
    if "gpu" not in df.columns:
        return given
    return np.where(given != "", given, row_spec_values(df, "generation", gpus))


def _family_tuple(
    param: str, value: Any, recipe: tuple[str, ...], example: str, family_of: Callable[[str], str] = str
) -> tuple[str, ...]:
    """Hyperparameter ``param``, a tuple of family names (or keys whose ``family_of`` is one), resolved (``None`` ->
    ``recipe``) and validated."""
    if value is None:
        return recipe
    if isinstance(value, str) or not all(isinstance(f, str) for f in value):
        raise DataError(
            f"{param} must be a tuple of family names, got {value!r}",
            hint=f"e.g. {param}={example}; None = the recipe, () = none",
        )
    _require_known_families(param, [family_of(f) for f in value])
    return tuple(value)


def _require_known_families(param: str, names: Any) -> None:
    """Raise a DataError naming the entries of ``names`` (hyperparameter ``param``) that are no kernel family."""
    from ..frontend import FAMILIES

    unknown = sorted(set(names) - set(FAMILIES))
    if unknown:
        raise DataError(
            f"{param} names unknown families {unknown}", hint=f"use kernel family names: {sorted(FAMILIES)}"
        )


def _require_known_dtypes(param: str, keys: Iterable[str]) -> None:
    """Raise a DataError naming the ``family:dtype`` keys of ``keys`` (hyperparameter ``param``) whose dtype is no
    dtype of :data:`pipeweave.vocab.DTYPES`."""
    from ..vocab import DTYPES

    bad = sorted(k for k in keys if _companion_dtype(k) not in (None, *DTYPES))
    if bad:
        raise DataError(
            f"{param} names unknown dtypes in {bad}", hint=f"use family:dtype with a dtype of {list(DTYPES)}"
        )


def _family_mapping(
    param: str,
    value: Any,
    recipe: Mapping[str, Any],
    what: str,
    example: str,
    family_of: Callable[[str], str] = str,
) -> Mapping[str, Any]:
    """A family-keyed hyperparameter resolved (``None`` -> ``recipe``) and its keys validated: a mapping of
    string keys whose ``family_of`` is a kernel family name (to ``what``), else a DataError naming
    ``param``, the value and ``example``."""
    out = recipe if value is None else value
    if not isinstance(out, Mapping) or not all(isinstance(k, str) for k in out):
        raise DataError(f"{param} must map family names to {what}, got {out!r}", hint=example)
    _require_known_families(param, [family_of(k) for k in out])
    return out


def _blend_weights(param: str, weights: Mapping[str, Any], *, include_one: bool, hint: str) -> dict[str, float]:
    """``weights`` (key -> geometric blend weight) validated: each a number in [0, 1) (``include_one``: [0, 1]),
    else a DataError naming ``param[key]`` and the value; weight 0 entries dropped (no booster for them)."""
    out: dict[str, float] = {}
    for k, v in weights.items():
        w = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float("nan")
        if not (0.0 <= w <= 1.0 if include_one else 0.0 <= w < 1.0):
            raise DataError(
                f"{param}[{k!r}] must be a blend weight in [0, 1{']' if include_one else ')'}, got {v!r}", hint=hint
            )
        if w > 0:
            out[k] = w
    return out


def companion_family(key: str) -> str:
    """The kernel family of a companion key: ``"gemm"`` (every row of the family) or ``"gemm:fp8"`` (its fp8
    rows, a dtype-specific blend weight of the family's one companion booster)."""
    return key.split(":", 1)[0]


def _companion_dtype(key: str) -> str | None:
    """The dtype of a ``family:dtype`` companion key (``None`` for a whole-family key)."""
    return key.split(":", 1)[1] if ":" in key else None


def _family_key_rows(key: str, family: np.ndarray, dtype: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows a family key names: ``"gemm"`` every row of the family, ``"gemm:fp8"`` its rows of
    that dtype (``family`` and ``dtype``: one string per row)."""
    sel = np.asarray(family) == companion_family(key)
    dt = _companion_dtype(key)
    return sel if dt is None else sel & (np.asarray(dtype) == dt)


def _row_dtypes(rows: pd.DataFrame) -> np.ndarray:
    """Each row's dtype as a string (``""`` for every row of a frame without the column)."""
    return str_values(rows["dtype"]) if "dtype" in rows.columns else np.full(len(rows), "", dtype=object)


class PipeweaveRegressor(RegressorMixin, BaseEstimator):
    """Latency regressor for kernel launches (scikit-learn contract; learned state ends in ``_``).

    ``fit(df)`` takes canonical profile rows with ``latency_us`` (features are computed if
    absent); ``predict(df)`` returns latency in microseconds, never below the analytical lower
    bound ``t_lower_us``. The defaults are the shipped model's recipe (:mod:`._recipe`): one
    booster per family plus the shared fallback, 200 trees of depth 6, and at most
    ``max_rows_per_group`` (10,000) seeded-random training rows per (GPU, family, dtype, source);
    ``max_rows_per_group=None`` trains on every row. ``sample_informative_only`` makes column
    subsampling (``colsample_bytree``) draw only among the columns that vary on a booster's training
    rows (a column missing or constant there, e.g. the MoE shape columns for an attention booster,
    cannot be split on): ``True`` for every booster, ``False`` for none, a tuple of families for
    their boosters (the default, :data:`~pipeweave.model.INFORMATIVE_SAMPLING_FAMILIES`: prefill
    attention, where nested leave-one-generation-out found a gain; it only changes training). ``gpu_blind_families`` hides the per-GPU constant features
    (:data:`~pipeweave.model.GPU_CONSTANT_FEATURES`) from the rows of those families (``None``, the
    default: :data:`~pipeweave.model.GPU_BLIND_FAMILIES`, the memory-bound families and prefill
    attention; ``()``: none): to a tree they are a GPU id, and the same nested protocol found them
    harmful there. Model files written before the option existed load with ``()``, so they predict
    as they did. ``family_booster_rows`` maps a family to the families whose rows its booster is
    fitted on (``None``, the default: :data:`~pipeweave.model.FAMILY_BOOSTER_ROWS`, the attention
    boosters learning from the other tensor-core families and FP32 GEMM and softmax from NeuSight's FP32
    families; ``{}``: every family booster on its own rows); it only changes training.
    ``family_extra_features`` maps a family to launch descriptors of
    :data:`pipeweave.frontend.EXTRA_FEATURES` that its own booster reads besides the model's features
    (``None``, the default: :data:`~pipeweave.model.FAMILY_EXTRA_FEATURES`, FP32 GEMM's operand layout;
    ``{}``: none); no other booster sees them (learned: ``family_extra_features_``; files written before
    the option: none, so they predict as they did). ``shared_extra_features``: those of the shared booster
    (``None``, the default: the family's own when the rows are of one family, else none; learned:
    ``shared_extra_features_``); the evaluation harness sets it to the evaluated family's when that family's
    booster trains on other families' rows too, as it sets ``reference``.
    ``family_booster_params`` maps a family to settings of its booster (``max_depth``, ``min_child_weight``,
    ``reg_lambda``: :data:`~pipeweave.model.FAMILY_BOOSTER_SETTINGS`) in place of this estimator's there (``None``,
    the default: :data:`~pipeweave.model.FAMILY_BOOSTER_PARAMS`, element-wise and layernorm at reg_lambda 10,
    softmax at max_depth 3; ``{}``: this estimator's everywhere), and of the shared booster when every row is of
    that family (:meth:`booster_settings_of`). It only changes training.
    ``family_reference`` maps a family to the reference of its booster (``None``, the default:
    :data:`~pipeweave.model.FAMILY_REFERENCE`, decode attention on ``warm_envelope``; ``{}``: every
    booster on ``reference``); a family with a reference of its own gets a booster of its own.
    ``companion`` maps a family to the weight w in [0, 1) of its crude companion booster (``None``, the
    default: :data:`~pipeweave.model.FAMILY_COMPANION`; ``{}``: none): an XGBoost on the crude view of
    the launch (:func:`pipeweave.frontend.crude_matrix`), fitted on the family's own rows, and the
    family's rows are predicted as exp((1 - w) log(hybrid) + w log(companion)) before the lower-bound
    floor. Model files written before the option load without companions, predicting as they did.
    ``sibling_companion`` (``None``, the default: :data:`~pipeweave.model.SIBLING_COMPANION`; ``{}``: none) maps a
    family (or ``family:dtype``) to the companion's weight on the rows of a new GPU of a generation the family
    trained on (fewer than ``seen_gpu_min_rows`` training rows of the GPU, at least that many of its generation;
    learned: ``sibling_trained_gpus_``, ``sibling_trained_generations_``), replacing the ``companion`` weight
    there; a family listed here alone gets a companion booster used on those rows only. Files written before the
    option: none.
    ``roofline_blend`` maps a family to the weight w in [0, 1) of the calibrated roofline
    (:func:`pipeweave.frontend.calibrated_roofline_us`; nothing learned) in a last geometric blend,
    exp((1 - w) log(model) + w log(roofline)), before the floor (``None``, the default:
    :data:`~pipeweave.model.FAMILY_ROOFLINE_BLEND`; ``{}``: none), on the rows of a GPU the family has fewer
    than ``seen_gpu_min_rows`` training rows of (learned: ``roofline_trained_gpus_``): the blend's weights
    were chosen on GPUs the model never saw, and on a trained GPU it only costs accuracy. For the families of
    ``roofline_generation_gate`` (``None``, the default: :data:`~pipeweave.model.ROOFLINE_GENERATION_GATE`;
    ``()``: none) a new GPU of a generation with at least ``seen_gpu_min_rows`` training rows of the family
    (learned: ``roofline_trained_generations_``) is the model alone as well. Files written before the option:
    none; files written before ``roofline_trained_gpus_``: every row of the family; before
    ``roofline_trained_generations_``: every row of a GPU the family did not train on.

    ``seen_gpu`` maps a family to the weight w in (0, 1] of its seen-GPU booster (``None``, the default:
    :data:`~pipeweave.model.SEEN_GPU_WEIGHT`; ``{}``: none): an XGBoost with more capacity
    (:data:`~pipeweave.model.SEEN_GPU_PARAMS`) on the model's features plus a one-hot of the row's GPU,
    fitted on every training row of the family (no row cap) that leaves the kernel to the library (no explicit
    tile plan: cuBLAS's or SGLang's per-shape choice is what it learns); such rows of a GPU with at least
    ``seen_gpu_min_rows`` (:data:`~pipeweave.model.SEEN_GPU_MIN_ROWS`) training rows of the family are
    predicted as exp((1 - w) log(model) + w log(seen)), every other row (a GPU the model never saw, a named
    tile plan) as before. Files written before the option load without seen-GPU boosters, predicting as
    they did.

    ``min_backend_gpus`` (default :data:`~pipeweave.model.MIN_BACKEND_GPUS`, 2): an attention-backend
    one-hot (``backend_<name>``) whose training rows come from fewer GPUs is held at 0 in training and
    prediction (learned: ``unsupported_backends_``; :func:`~pipeweave.model.unsupported_backends`). Files written before
    the option hold none, predicting as they did.

    ``library_tile_neighbors`` (default :data:`~pipeweave.model.LIBRARY_TILE_NEIGHBORS`, 5; 0 = off): an FP32 GEMM
    launch without a tile on a GPU whose launches the model trained on with their kernel recorded (at least
    :data:`~pipeweave.model.LIBRARY_TILE_MIN_LAUNCHES`), or on a GPU of the compute capability of such GPUs, gets
    the tile and split-K cuBLAS ran for its nearest measured launches (majority of this many; learned:
    ``library_tile_tables_``, at most :data:`~pipeweave.model.LIBRARY_TILE_TABLE_ROWS` launches per GPU); on any
    other GPU, the fastest tiles (:meth:`library_tiles`). Files written before the option keep no launches and
    predict as they did. ``library_tile_borrow`` (default :data:`~pipeweave.model.LIBRARY_TILE_BORROW`,
    ``"architecture_tile"``; one of :data:`~pipeweave.model.TILE_BORROW_RULES`): whether a GPU with no trained GPU
    of its compute capability borrows from those of its major one (``"compute_capability"``: no; ``"architecture"``:
    their tile and split; ``"architecture_tile"``: their tile, its split inferred for this GPU).

    ``error_bands_`` (``None`` until :meth:`set_error_bands`; the shipped model has them): held-out
    ``measured / predicted`` quantiles per family that :meth:`predict_interval` turns into an error band per
    prediction (:func:`pipeweave.evaluation.estimate_error_bands` computes them; ``pipeweave train
    --error-bands``).

    ``latency_range_us_`` (learned) maps each family to the [fastest, slowest] latency (us) of its
    training rows, on any GPU; :meth:`extrapolated` marks predictions outside it (a launch smaller or
    larger than anything measured: the prediction is an extrapolation). Files written before it: ``{}``.

    Examples
    --------
    >>> import pipeweave as pw                                                 # doctest: +SKIP
    >>> model = pw.PipeweaveRegressor().fit(pw.load_profiles(families="moe_w13"))  # doctest: +SKIP
    >>> model.predict(rows)                                                    # doctest: +SKIP
    """

    def __init__(
        self,
        n_estimators: int = 200,
        max_depth: int = 6,
        learning_rate: float = 0.1,
        subsample: float = 0.8,
        colsample_bytree: float = 0.8,
        min_child_weight: float = 20.0,
        reg_lambda: float = 1.0,
        reg_alpha: float = 0.0,
        quantile: float | None = None,
        use_sass: bool = False,
        drop_features: tuple[str, ...] = (),
        reference: str = "envelope",
        monotone_constraints: dict[str, int] | None = None,
        per_family: bool = True,
        n_jobs: int = 2,
        random_state: int = 0,
        progress: bool = False,
        max_rows_per_group: int | None = DEFAULT_MAX_ROWS_PER_GROUP,
        sample_informative_only: bool | tuple[str, ...] = INFORMATIVE_SAMPLING_FAMILIES,
        gpu_blind_families: tuple[str, ...] | None = None,
        family_booster_rows: Mapping[str, tuple[str, ...]] | None = None,
        family_extra_features: Mapping[str, tuple[str, ...]] | None = None,
        shared_extra_features: tuple[str, ...] | None = None,
        family_reference: Mapping[str, str] | None = None,
        family_booster_params: Mapping[str, Mapping[str, float]] | None = None,
        companion: Mapping[str, float] | None = None,
        sibling_companion: Mapping[str, float] | None = None,
        roofline_blend: Mapping[str, float] | None = None,
        roofline_generation_gate: tuple[str, ...] | None = None,
        seen_gpu: Mapping[str, float] | None = None,
        seen_gpu_min_rows: int = SEEN_GPU_MIN_ROWS,
        min_backend_gpus: int = MIN_BACKEND_GPUS,
        dtype_boosters: tuple[str, ...] | None = None,
        library_tile_neighbors: int = LIBRARY_TILE_NEIGHBORS,
        library_tile_borrow: str = LIBRARY_TILE_BORROW,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.min_child_weight = min_child_weight
        self.reg_lambda = reg_lambda
        self.reg_alpha = reg_alpha
        self.quantile = quantile
        self.use_sass = use_sass
        self.drop_features = drop_features
        self.reference = reference
        self.monotone_constraints = monotone_constraints
        self.per_family = per_family
        self.max_rows_per_group = max_rows_per_group
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress
        self.sample_informative_only = sample_informative_only
        self.gpu_blind_families = gpu_blind_families
        self.family_booster_rows = family_booster_rows
        self.family_extra_features = family_extra_features
        self.shared_extra_features = shared_extra_features
        self.family_reference = family_reference
        self.family_booster_params = family_booster_params
        self.companion = companion
        self.sibling_companion = sibling_companion
        self.roofline_blend = roofline_blend
        self.roofline_generation_gate = roofline_generation_gate
        self.seen_gpu = seen_gpu
        self.seen_gpu_min_rows = seen_gpu_min_rows
        self.min_backend_gpus = min_backend_gpus
        self.dtype_boosters = dtype_boosters
        self.library_tile_neighbors = library_tile_neighbors
        self.library_tile_borrow = library_tile_borrow

    # ------------------------------------------------------------------------------------------
    def _check_reference(self, name: Any, param: str = "reference") -> str:
        if not isinstance(name, str) or name not in REFERENCES:
            raise DataError(
                f"{param} must be one of {sorted(REFERENCES)}, got {name!r}", hint="use 'envelope' (default)"
            )
        return name

    def family_references(self) -> dict[str, str]:
        """Family -> reference of its booster (``family_reference`` resolved and validated: ``None`` ->
        :data:`~pipeweave.model.FAMILY_REFERENCE`); families not listed use ``reference``."""
        refs = _family_mapping(
            "family_reference",
            self.family_reference,
            FAMILY_REFERENCE,
            "references",
            "e.g. {'attention_generation': 'warm_envelope'}; None = the recipe, {} = none",
        )
        return {k: self._check_reference(v, f"family_reference[{k!r}]") for k, v in refs.items()}

    def family_booster_settings(self) -> dict[str, dict[str, float]]:
        """Family -> the settings of its booster that differ from this estimator's (``family_booster_params``
        resolved and validated: ``None`` -> :data:`~pipeweave.model.FAMILY_BOOSTER_PARAMS`; names of
        :data:`~pipeweave.model.FAMILY_BOOSTER_SETTINGS`, ``max_depth`` a whole number >= 1, the others >= 0)."""
        import math

        hint = "e.g. {'softmax_fp32': {'max_depth': 4}}; None = the recipe, {} = this estimator's settings everywhere"
        fams = _family_mapping(
            "family_booster_params", self.family_booster_params, FAMILY_BOOSTER_PARAMS, "booster settings", hint
        )
        out: dict[str, dict[str, float]] = {}
        for fam, settings in fams.items():
            if not isinstance(settings, Mapping):
                raise DataError(
                    f"family_booster_params[{fam!r}] must map setting names to values, got {shown(settings)}",
                    hint=hint,
                )
            unknown = sorted(str(k) for k in settings if k not in FAMILY_BOOSTER_SETTINGS)
            if unknown:
                raise DataError(
                    f"family_booster_params[{fam!r}] names unknown settings {unknown}",
                    hint=f"a family's booster may set {list(FAMILY_BOOSTER_SETTINGS)}",
                )
            out[fam] = {}
            for k, v in settings.items():
                x = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float("nan")
                whole = k != "max_depth" or (math.isfinite(x) and x == int(x) and x >= 1)
                if not (math.isfinite(x) and x >= 0.0 and whole):
                    want = "a whole number >= 1" if k == "max_depth" else "a finite number >= 0"
                    raise DataError(
                        f"family_booster_params[{fam!r}][{k!r}] must be {want}, got {shown(v)}",
                        hint="e.g. {'max_depth': 4} or {'reg_lambda': 10.0} (pipeweave.model.FAMILY_BOOSTER_PARAMS)",
                    )
                out[fam][k] = int(x) if k == "max_depth" else x
        return out

    def booster_settings_of(self, family: str) -> dict[str, float]:
        """The estimator settings (``max_depth``, ``min_child_weight``, ``reg_lambda``) a booster of ``family`` is
        trained with: this estimator's, with the family's own (:meth:`family_booster_settings`) over them."""
        return self._settings_over(self.family_booster_settings().get(family, {}))

    def _settings_over(self, own: Mapping[str, float]) -> dict[str, float]:
        """This estimator's :data:`~pipeweave.model.FAMILY_BOOSTER_SETTINGS` with ``own`` (a family's) over them."""
        return {**{k: getattr(self, k) for k in FAMILY_BOOSTER_SETTINGS}, **own}

    def reference_of(self, family: str) -> str:
        """The reference the rows of ``family`` are predicted from (fitted: what was trained; else the settings)."""
        if hasattr(self, "booster_"):
            return str(
                getattr(self, "family_references_", {}).get(family, getattr(self, "shared_reference_", self.reference))
            )
        return self.family_references().get(family, self._check_reference(self.reference))

    def companion_weights(self) -> dict[str, float]:
        """Family (or ``family:dtype``) -> blend weight of the family's crude companion booster (``companion``
        resolved and validated: ``None`` -> :data:`~pipeweave.model.FAMILY_COMPANION`); weight 0 entries are
        dropped. A ``family:dtype`` key sets the weight of that dtype's rows of the family."""
        comp = _family_mapping(
            "companion",
            self.companion,
            FAMILY_COMPANION,
            "blend weights",
            "e.g. {'gemm': 0.35, 'gemm:fp8': 0.65}; None = the recipe, {} = no companion boosters",
            family_of=companion_family,
        )
        _require_known_dtypes("companion", comp)
        return _blend_weights(
            "companion",
            comp,
            include_one=False,
            hint="0 = the hybrid alone; e.g. 0.35 (pipeweave.model.FAMILY_COMPANION)",
        )

    def sibling_companion_weights(self) -> dict[str, float]:
        """Family (or ``family:dtype``) -> weight of the crude companion on a new GPU of a trained generation
        (``sibling_companion`` resolved and validated: ``None`` -> :data:`~pipeweave.model.SIBLING_COMPANION`);
        weight 0 entries are dropped."""
        sib = _family_mapping(
            "sibling_companion",
            self.sibling_companion,
            SIBLING_COMPANION,
            "blend weights",
            "e.g. {'silu_mul': 0.35}; None = the recipe, {} = none",
            family_of=companion_family,
        )
        _require_known_dtypes("sibling_companion", sib)
        return _blend_weights(
            "sibling_companion",
            sib,
            include_one=False,
            hint="0 = the family's companion weight; e.g. 0.35 (pipeweave.model.SIBLING_COMPANION)",
        )

    def roofline_blend_weights(self) -> dict[str, float]:
        """Family (or ``family:dtype``) -> weight of the calibrated roofline in the family's last blend
        (``roofline_blend`` resolved and validated: ``None`` -> :data:`~pipeweave.model.FAMILY_ROOFLINE_BLEND`);
        weight 0 entries dropped. A ``family:dtype`` key sets the weight of that dtype's rows of the family."""
        blend = _family_mapping(
            "roofline_blend",
            self.roofline_blend,
            FAMILY_ROOFLINE_BLEND,
            "blend weights",
            "e.g. {'softmax_fp32': 0.1, 'gemm:fp8': 0.3}; None = the recipe, {} = none",
            family_of=companion_family,
        )
        _require_known_dtypes("roofline_blend", blend)
        return _blend_weights(
            "roofline_blend",
            blend,
            include_one=False,
            hint="0 = the model alone; e.g. 0.1 (pipeweave.model.FAMILY_ROOFLINE_BLEND)",
        )

    def _blend_roofline(
        self,
        rows: pd.DataFrame,
        pred: np.ndarray,
        family: np.ndarray,
        columns: Mapping[str, Any] | None = None,
        *,
        gpus: Mapping[str, GPUSpec] | None = None,
        data: str | os.PathLike[str] | None = None,
    ) -> np.ndarray:
        """``pred`` (us) with each listed family's rows blended geometrically with their calibrated roofline.

        The roofline reads the featurized columns :data:`pipeweave.frontend.ROOFLINE_COLUMNS` (``columns``, else ``rows``); a reduced
        frame without them gets them from the front-end (``gpus``, ``data`` as in :meth:`predict`)."""
        weights = getattr(self, "roofline_blend_", None) or {}
        if not weights or not np.isin(family, [companion_family(k) for k in weights]).any():
            return pred
        from ..frontend import ROOFLINE_COLUMNS, calibrated_roofline_us, feature_arrays

        dtype = _row_dtypes(rows)
        w = np.zeros(len(rows))  # each row's weight: its family's, overridden by a family:dtype key
        for key in sorted(weights, key=lambda k: _companion_dtype(k) is not None):
            w[_family_key_rows(key, family, dtype)] = weights[key]
        m = w > 0
        if not m.any():
            return pred
        # left to the model alone: a GPU the family trained on (the blend is for GPUs it never saw), and for the gated
        # keys a new GPU of a generation the family trained on (the weights were chosen on generations the model never
        # saw). Each list maps a family or family:dtype key to its trained values; a row's value (its GPU, its
        # generation) is looked up only when a listed family's row is still blended
        for lists, values_of in (
            (getattr(self, "roofline_trained_gpus_", None) or {}, lambda: seen_keys(rows)),
            (getattr(self, "roofline_trained_generations_", None) or {}, lambda: _row_generations(rows, gpus)),
        ):
            if lists and (m & np.isin(family, [companion_family(k) for k in lists])).any():
                values = values_of()
                for name, known in lists.items():
                    m &= ~(_family_key_rows(name, family, dtype) & np.isin(values, known))
                if not m.any():
                    return pred
        if columns is None and any(c not in rows.columns for c in ROOFLINE_COLUMNS):
            columns = feature_arrays(rows, gpus=gpus, data=data, baselines=False)
        src = rows if columns is None else columns
        sub = {k: np.asarray(src[k], dtype=float)[m] for k in ROOFLINE_COLUMNS}
        out = np.array(pred, dtype=float, copy=True)
        roof = np.maximum(calibrated_roofline_us(sub), 1e-6)
        out[m] = np.exp((1.0 - w[m]) * np.log(out[m]) + w[m] * np.log(roof))
        return out

    def seen_gpu_weights(self) -> dict[str, float]:
        """Family -> blend weight of its seen-GPU booster (``seen_gpu`` resolved and validated: ``None`` ->
        :data:`~pipeweave.model.SEEN_GPU_WEIGHT`); weight 0 entries are dropped."""
        seen = _family_mapping(
            "seen_gpu",
            self.seen_gpu,
            SEEN_GPU_WEIGHT,
            "blend weights",
            "e.g. {'gemm': 1.0}; None = the recipe, {} = no seen-GPU boosters",
        )
        out = _blend_weights(
            "seen_gpu",
            seen,
            include_one=True,
            hint="0 = the model alone, 1 = the seen-GPU booster alone on a GPU the model was trained on",
        )
        if out:
            self._check_min_rows()
        return out

    def _check_min_rows(self) -> int:
        """``seen_gpu_min_rows``, validated (a whole number >= 1)."""
        n = self.seen_gpu_min_rows
        if not (isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1):
            raise DataError(
                f"seen_gpu_min_rows must be a whole number of training rows >= 1, got {n!r}",
                hint=f"e.g. {SEEN_GPU_MIN_ROWS} (pipeweave.model.SEEN_GPU_MIN_ROWS)",
            )
        return int(n)

    @staticmethod
    def seen_feature_name(key: str) -> str:
        """The name of a seen-GPU booster's one-hot column of ``key`` (a catalog GPU name)."""
        return f"seen={key}"

    def _seen_matrix(self, X: np.ndarray, keys: np.ndarray, known: list[str]) -> np.ndarray:
        """``X`` (rows x model features) with one float32 column per key of ``known``: 1 where the row's key is it."""
        onehot = (np.asarray(keys, dtype=object)[:, None] == np.asarray(known, dtype=object)[None, :]).astype(
            np.float32
        )
        return np.hstack([np.asarray(X, dtype=np.float32), onehot])

    def _blend_seen(
        self,
        rows: pd.DataFrame,
        pred: np.ndarray,
        family: np.ndarray,
        X: np.ndarray,
        columns: Mapping[str, np.ndarray] | None = None,
    ) -> np.ndarray:
        """``pred`` (us) with the rows of a seen GPU blended geometrically with their family's
        seen-GPU booster; other rows unchanged. ``X``: the rows' :meth:`feature_matrix` (the one the family boosters
        predicted from); ``columns``: the rows' feature arrays, when the caller has them."""
        weights = getattr(self, "seen_weights_", None) or {}
        if not weights or not np.isin(family, list(weights)).any():
            return pred
        boosters, known_of = self.seen_boosters_, self.seen_keys_
        out = np.array(pred, dtype=float, copy=True)
        keys = seen_keys(rows)
        library = ~explicit_tile_rows(rows)  # a named tile plan: no library choice to have learned
        refs, base_ref = self.family_references(), self._check_reference(self.reference)
        for name, w in weights.items():
            if name not in boosters:  # a family the fit found too few rows of any GPU for
                continue
            m = (family == name) & library & np.isin(keys, known_of[name])
            if not m.any():
                continue
            # the reference _fit_seen trained on: the family's (family_reference), else `reference`
            ref_name = refs.get(name, base_ref)
            ref = self._reference_values(ref_name, rows, columns)[m]
            seen = ref * np.exp(
                predict_in_place(boosters[name], self._seen_matrix(X[m], keys[m], known_of[name]), int(self.n_jobs))
            )
            out[m] = np.exp((1.0 - w) * np.log(out[m]) + w * np.log(np.maximum(seen, 1e-6)))
        return out

    def _blend_companions(
        self,
        rows: pd.DataFrame,
        pred: np.ndarray,
        family: np.ndarray,
        columns: Mapping[str, np.ndarray] | None = None,
        *,
        gpus: Mapping[str, GPUSpec] | None = None,
        data: str | os.PathLike[str] | None = None,
    ) -> np.ndarray:
        """``pred`` (us) with each companion family's rows blended geometrically with its crude companion.

        The crude view reads :data:`~pipeweave.frontend.CRUDE_INPUT_COLUMNS` (``columns``, else ``rows``);
        rows featurized without them (e.g. a reduced feature frame) get them from the front-end (``gpus``,
        ``data`` as in :meth:`predict`)."""
        weights = getattr(self, "companion_weights_", None) or {}
        siblings = getattr(self, "sibling_companion_", None) or {}
        boosters = getattr(self, "companion_boosters_", None) or {}
        families = list(dict.fromkeys(companion_family(k) for k in (*weights, *siblings)))
        if not families or not np.isin(family, families).any():
            return pred
        from ..frontend import CRUDE_INPUT_COLUMNS, crude_matrix, feature_arrays

        if columns is None and any(c not in rows.columns for c in CRUDE_INPUT_COLUMNS):
            columns = feature_arrays(rows, gpus=gpus, data=data, baselines=False)
        out = np.array(pred, dtype=float, copy=True)
        dtype = _row_dtypes(rows)
        w = np.zeros(len(rows))  # each row's weight: its family's, overridden by a family:dtype key
        for key in sorted(weights, key=lambda k: _companion_dtype(k) is not None):
            w[_family_key_rows(key, family, dtype)] = weights[key]
        if siblings and np.isin(family, [companion_family(k) for k in siblings]).any():
            # a new GPU of a generation the key trained on: the sibling weight (a GPU the key trained on is not new)
            gpu_keys, gens = seen_keys(rows), _row_generations(rows, gpus)
            trained_gpus = getattr(self, "sibling_trained_gpus_", None) or {}
            trained_gens = getattr(self, "sibling_trained_generations_", None) or {}
            for key in sorted(siblings, key=lambda k: _companion_dtype(k) is not None):
                sel = _family_key_rows(key, family, dtype) & np.isin(gens, trained_gens.get(key, []))
                w[sel & ~np.isin(gpu_keys, trained_gpus.get(key, []))] = siblings[key]
        for name in families:
            m = (family == name) & (w > 0)
            if not m.any():
                continue
            spec = (
                None if columns is None else {k: np.asarray(columns[k])[m] for k in CRUDE_INPUT_COLUMNS if k in columns}
            )
            Xc, t_wq = crude_matrix(rows[m] if not m.all() else rows, spec)
            comp = t_wq * np.exp(predict_in_place(boosters[name], Xc, int(self.n_jobs)))
            wm = w[m]
            out[m] = np.exp((1.0 - wm) * np.log(out[m]) + wm * np.log(np.maximum(comp, 1e-6)))
        return out

    def _reference_values(
        self, name: str, df: pd.DataFrame, columns: Mapping[str, np.ndarray] | None = None
    ) -> np.ndarray:
        col = REFERENCES[self._check_reference(name)]
        if col is None:
            return np.ones(len(df))
        return np.asarray(columns[col], dtype=float) if columns is not None else df[col].to_numpy(dtype=float)

    def _reference_us(
        self, df: pd.DataFrame, columns: Mapping[str, np.ndarray] | None = None, family: np.ndarray | None = None
    ) -> np.ndarray:
        """Per row, the time its target is relative to, log(latency / reference): the reference of the
        booster that predicts the row (:meth:`reference_of` its family)."""
        fam = str_values(df["family"]) if family is None else family
        names = {f: self.reference_of(f) for f in pd.unique(fam)}
        if len(set(names.values())) == 1:
            return self._reference_values(next(iter(names.values())), df, columns)
        out = np.empty(len(fam))
        for ref in set(names.values()):
            m = np.isin(fam, [f for f, r in names.items() if r == ref])
            out[m] = self._reference_values(ref, df, columns)[m]
        return out

    def booster_params(self) -> dict:
        """The XGBoost training parameters of these hyperparameters (what ``fit`` passes to ``xgboost.train``)."""
        return self._xgb_params()

    def training_target(self, prepared: pd.DataFrame, reference: str | None = None) -> np.ndarray:
        """The regression target of featurized rows with ``latency_us``: log(latency / reference), each row
        on its family's reference (:meth:`reference_of`), or on ``reference`` (a name of
        :data:`REFERENCES`) for every row when given."""
        lat = pd.to_numeric(prepared["latency_us"], errors="coerce").to_numpy(dtype=float)
        ref = self._reference_us(prepared) if reference is None else self._reference_values(reference, prepared)
        return np.log(lat / ref)

    def _xgb_params(self, own: Mapping[str, float] | None = None) -> dict:
        """XGBoost parameters of a booster; ``own``: a family's settings over this estimator's
        (:meth:`family_booster_settings`)."""
        settings = self._settings_over(own or {})
        params = tree_params(
            max_depth=int(settings["max_depth"]),
            learning_rate=self.learning_rate,
            subsample=self.subsample,
            colsample_bytree=self.colsample_bytree,
            min_child_weight=settings["min_child_weight"],
            n_jobs=self.n_jobs,
            random_state=self.random_state,
        )
        params.update({"lambda": float(settings["reg_lambda"]), "alpha": float(self.reg_alpha)})
        if self.quantile is None:
            params["objective"] = "reg:squarederror"
        else:
            if not 0.0 < float(self.quantile) < 1.0:
                raise DataError(f"quantile must be in (0, 1), got {self.quantile!r}", hint="e.g. quantile=0.1")
            params["objective"] = "reg:quantileerror"
            params["quantile_alpha"] = float(self.quantile)
        return params

    def _prepare(self, df: pd.DataFrame, **featurize_kwargs: object) -> pd.DataFrame:
        from ._features import ensure_features

        if not isinstance(df, pd.DataFrame):
            raise DataError(
                f"expected a pandas DataFrame of profile rows, got {type(df).__name__}",
                hint="load rows with pipeweave.sources.load_profiles or pandas.read_csv",
            )
        df = ensure_features(df, baselines=False, **featurize_kwargs)  # the TileSight column is not a model input
        if "gpu" not in df.columns:  # a featurized frame that lost it (e.g. pandas 3's groupby().apply drops the key)
            raise DataError(
                "the rows lack the column 'gpu' (the GPU each launch ran or is asked on)",
                hint="keep the gpu column in the frame, e.g. df.groupby('gpu').head(n) instead of groupby().apply, or "
                "df.assign(gpu='H100')",
            )
        if self.use_sass and not any(c.startswith("sass_") for c in df.columns):
            from ._features import attach_sass_features

            df = attach_sass_features(df)
        return df

    def _sass_columns(self, df: pd.DataFrame) -> list[str]:
        from ._features import SASS_PREFIX

        if not self.use_sass:
            return []
        return sorted(c for c in df.columns if c.startswith(SASS_PREFIX) and pd.api.types.is_numeric_dtype(df[c]))

    def blind_families(self) -> tuple[str, ...]:
        """The families whose rows see no GPU-constant feature: what was fitted (``blind_families_``),
        else ``gpu_blind_families`` resolved (``None`` -> :data:`~pipeweave.model.GPU_BLIND_FAMILIES`)."""
        if hasattr(self, "blind_families_"):
            return tuple(self.blind_families_)
        return _family_tuple(
            "gpu_blind_families", self.gpu_blind_families, GPU_BLIND_FAMILIES, "('rmsnorm', 'silu_mul')"
        )

    def roofline_gated_families(self) -> tuple[str, ...]:
        """The families (or ``family:dtype`` keys: that dtype's rows of the family) whose roofline blend leaves a new
        GPU of a trained generation alone (``roofline_generation_gate`` resolved and validated: ``None`` ->
        :data:`~pipeweave.model.ROOFLINE_GENERATION_GATE`)."""
        keys = _family_tuple(
            "roofline_generation_gate",
            self.roofline_generation_gate,
            ROOFLINE_GENERATION_GATE,
            "('attention_context', 'gemm:fp8')",
            family_of=companion_family,
        )
        _require_known_dtypes("roofline_generation_gate", keys)
        return keys

    def _blind_columns(self, names: list[str]) -> list[int]:
        """Positions in ``names`` of the GPU-constant features the blind families' rows do not see."""
        from ._features import GPU_CONSTANT_FEATURES

        if not self.blind_families():
            return []
        return [i for i, n in enumerate(names) if n in GPU_CONSTANT_FEATURES]

    def feature_matrix(
        self,
        prepared: pd.DataFrame,
        names: list[str],
        columns: Mapping[str, np.ndarray] | None = None,
        family: np.ndarray | None = None,
    ) -> np.ndarray:
        """The boosters' input (float32, rows x ``names``) of featurized rows, as ``fit`` and ``predict`` build it.

        The GPU-constant columns are missing (NaN) on the rows of :meth:`blind_families`: trees never
        split on them for those rows (a family booster never sees a value; the shared booster sends
        them down its default branch). ``family``: the rows' family names when the caller has them.
        """
        from ._features import design_matrix, hold_backends

        fam = prepared["family"] if family is None else family
        X = hold_backends(design_matrix(prepared, names, columns), names, getattr(self, "unsupported_backends_", ()))
        return self._blind(X, fam, names)

    def _blind(self, X: np.ndarray, family: Any, names: list[str]) -> np.ndarray:
        """``X`` with the GPU-constant columns NaN on the rows of the blind families (in place)."""
        from ._features import gpu_blind_rows

        cols = self._blind_columns(names)
        if cols and len(X):
            rows = gpu_blind_rows(family, self.blind_families())
            if rows.any():
                X[np.ix_(rows, np.asarray(cols, dtype=np.intp))] = np.nan
        return X

    def booster_rows(self) -> dict[str, tuple[str, ...]]:
        """Family -> the families whose training rows its booster is fitted on (``family_booster_rows``
        resolved: ``None`` -> :data:`~pipeweave.model.FAMILY_BOOSTER_ROWS`); unlisted families: their own."""
        groups = FAMILY_BOOSTER_ROWS if self.family_booster_rows is None else self.family_booster_rows
        ok = isinstance(groups, Mapping) and all(
            isinstance(k, str) and not isinstance(v, str) and all(isinstance(f, str) for f in v)
            for k, v in groups.items()
        )
        if not ok:
            raise DataError(
                f"family_booster_rows must map a family name to a tuple of family names, got {groups!r}",
                hint="e.g. {'attention_generation': ('attention_generation', 'gemm')}; None = the recipe, {} = none",
            )
        _require_known_families("family_booster_rows", [*groups, *(f for v in groups.values() for f in v)])
        return {k: tuple(dict.fromkeys((k, *v))) for k, v in groups.items()}  # a booster always sees its own rows

    def dtype_booster_keys(self) -> tuple[tuple[str, str], ...]:
        """``dtype_boosters`` validated, as (family, dtype) pairs (``None`` -> :data:`~pipeweave.model.DTYPE_BOOSTERS`):
        each names a known family and dtype (``"gemm:bfloat16"``)."""
        from ..vocab import DTYPES

        keys = DTYPE_BOOSTERS if self.dtype_boosters is None else self.dtype_boosters
        hint = "e.g. dtype_boosters=('gemm:bfloat16',); None = the recipe, () = none"
        if isinstance(keys, str) or not isinstance(keys, Iterable):
            raise DataError(f"dtype_boosters must be a tuple of 'family:dtype' keys, got {keys!r}", hint=hint)
        pairs: list[tuple[str, str]] = []
        for k in keys:
            dt = _companion_dtype(k) if isinstance(k, str) else None  # the family keys' parsing; a dtype required
            if dt is None or dt not in DTYPES:
                raise DataError(
                    f"dtype_boosters key {k!r} is not 'family:dtype' with a dtype among {list(DTYPES)}", hint=hint
                )
            pairs.append((companion_family(k), dt))
        _require_known_families("dtype_boosters", [f for f, _ in pairs])
        return tuple(dict.fromkeys(pairs))

    def extra_features(self) -> dict[str, tuple[str, ...]]:
        """Family -> the extra columns its booster reads (``family_extra_features`` resolved and validated:
        ``None`` -> :data:`~pipeweave.model.FAMILY_EXTRA_FEATURES`); families not listed: none."""
        hint = "e.g. {'gemm_fp32': ('b_transposed',)}; None = the recipe, {} = none"
        groups = _family_mapping(
            "family_extra_features", self.family_extra_features, FAMILY_EXTRA_FEATURES, "feature names", hint
        )
        out: dict[str, tuple[str, ...]] = {}
        for fam, cols in groups.items():
            if isinstance(cols, str) or not isinstance(cols, Iterable) or not all(isinstance(c, str) for c in cols):
                raise DataError(
                    f"family_extra_features[{fam!r}] must be a tuple of feature names, got {cols!r}", hint=hint
                )
            unknown = [c for c in cols if c not in EXTRA_FEATURES]
            if unknown:
                raise DataError(
                    f"family_extra_features[{fam!r}] names unknown columns {unknown}",
                    hint=f"use names of pipeweave.frontend.EXTRA_FEATURES: {list(EXTRA_FEATURES)}",
                )
            if cols:
                out[fam] = tuple(dict.fromkeys(cols))
        return out

    def shared_extras(self, families: Iterable[str]) -> tuple[str, ...]:
        """The shared booster's extra columns for training rows of ``families``: ``shared_extra_features``
        validated, else (``None``) the one family's (:meth:`extra_features`) when there is one, else none."""
        cols = self.shared_extra_features
        if cols is None:
            own = sorted(set(families))
            return self.extra_features().get(own[0], ()) if len(own) == 1 else ()
        if isinstance(cols, str) or not isinstance(cols, Iterable) or not all(c in EXTRA_FEATURES for c in cols):
            raise DataError(
                f"shared_extra_features must be None or a tuple of names of pipeweave.frontend.EXTRA_FEATURES "
                f"{list(EXTRA_FEATURES)}, got {cols!r}",
                hint="e.g. shared_extra_features=('b_transposed',); None = the family's own when there is one",
            )
        return tuple(dict.fromkeys(cols))

    def _informative_families(self) -> bool | tuple[str, ...]:
        """``sample_informative_only`` validated: a bool, or a tuple of known family names."""
        opt = self.sample_informative_only
        if isinstance(opt, (bool, np.bool_)):
            return bool(opt)
        if isinstance(opt, str) or not isinstance(opt, Iterable) or not all(isinstance(f, str) for f in opt):
            raise DataError(
                f"sample_informative_only must be True, False or a tuple of family names, got {opt!r}",
                hint="e.g. sample_informative_only=('attention_context',)",
            )
        _require_known_families("sample_informative_only", opt)
        return tuple(opt)

    def _informative(self, families: Any) -> bool:
        """Whether a booster trained on rows of ``families`` samples informative columns only."""
        opt = self._informative_families()
        if isinstance(opt, bool):
            return opt
        fams = set(np.asarray(families).astype(str))
        return bool(fams) and fams <= set(opt)

    def _set_feature_weights(
        self, dmatrix: Any, X: np.ndarray, never: list[int] | None = None, informative: bool = False
    ) -> None:
        """Column-sampling weights: 0 for the columns in ``never`` and, when ``informative``
        (:meth:`_informative` of the booster's families), for columns without two distinct finite
        values in ``X``; 1 for the rest (XGBoost never draws a 0-weight column). Nothing is set when
        every weight would be 1 or no sampling happens."""
        if self.colsample_bytree >= 1.0 or X.shape[0] == 0:
            return
        w = np.ones(X.shape[1], dtype=np.float32)
        if informative:
            with np.errstate(invalid="ignore"):
                lo = np.nanmin(np.where(np.isfinite(X), X, np.nan), axis=0, initial=np.inf)
                hi = np.nanmax(np.where(np.isfinite(X), X, np.nan), axis=0, initial=-np.inf)
            w = (hi > lo).astype(np.float32)
        if never:
            w[never] = 0.0
        if w.any() and not w.all():
            dmatrix.set_info(feature_weights=w)

    def _fit_seen(
        self,
        rows: pd.DataFrame,
        names: list[str],
        seen: Mapping[str, float],
        refs: Mapping[str, str],
        base_ref: str,
        weight: np.ndarray | None,
        X: np.ndarray | None = None,
    ) -> None:
        """Fit the seen-GPU boosters (``seen_boosters_``, ``seen_keys_``, ``seen_weights_``) on featurized
        ``rows`` (every training row, not the capped draw: the booster's point is the density of one GPU's
        shapes); ``X``: their feature matrix when the caller has it."""
        import xgboost as xgb

        self.seen_boosters_: MutableMapping[str, Any] = {}  # load_model gives a LazyBoosters
        self.seen_keys_: dict[str, list[str]] = {}
        self.seen_weights_: dict[str, float] = {}
        if not seen or rows.empty:
            return
        lat = training_latency(rows, "PipeweaveRegressor")
        fam = str_values(rows["family"])
        X = self.feature_matrix(rows, names, family=fam) if X is None else X
        keys = seen_keys(rows)
        sparams = seen_booster_params(int(self.n_jobs), int(self.random_state))
        library = ~explicit_tile_rows(rows)  # rows whose kernel the library picked (what the booster learns)
        for name, w in seen.items():
            m = (fam == name) & library
            if not m.any():
                continue
            known = _keys_with_rows(keys[m], int(self.seen_gpu_min_rows))
            if not known:
                continue
            sub = rows if m.all() else rows[m]
            target = np.log(lat[m] / self._reference_values(refs.get(name, base_ref), sub))
            ds = xgb.DMatrix(
                self._seen_matrix(X[m], keys[m], known),
                feature_names=[*names, *(self.seen_feature_name(k) for k in known)],
                label=target,
                weight=None if weight is None else weight[m],
                nthread=int(self.n_jobs),
            )
            self.seen_boosters_[name] = xgb.train(sparams, ds, num_boost_round=int(SEEN_GPU_PARAMS["n_estimators"]))
            self.seen_keys_[name] = known
            self.seen_weights_[name] = float(w)

    def fit_blend_lists(self, rows: pd.DataFrame) -> None:
        """Learn the blends' lists (``fit`` calls it; so does the Dask trainer) from every training row (``rows``:
        before the row cap; only its ``family``, ``gpu``, ``dtype`` and ``generation`` columns are read, so a frame
        of one row per training row's key serves): the sibling weights of the families with a companion booster
        (``companion_boosters_``, fitted before) and the GPUs and generations each key trained on; the calibrated
        roofline's weight of each listed family with training rows (nothing learned), the GPUs each trained on and
        the generations of the gated keys."""
        siblings = self.sibling_companion_weights()
        boosters = getattr(self, "companion_boosters_", None) or {}
        self.sibling_companion_ = {k: w for k, w in siblings.items() if companion_family(k) in boosters}
        self.sibling_trained_gpus_ = self._trained_gpus(rows, self.sibling_companion_)
        self.sibling_trained_generations_ = self._trained_generations(rows, self.sibling_companion_)
        trained = set(str_values(rows["family"])) if "family" in rows.columns else set()
        self.roofline_blend_ = {
            k: w for k, w in self.roofline_blend_weights().items() if companion_family(k) in trained
        }
        blended = list(dict.fromkeys(companion_family(k) for k in self.roofline_blend_))
        # a GPU the family trained on is left alone, whichever of its keys weighs a row
        self.roofline_trained_gpus_ = self._trained_gpus(rows, blended)
        gated = [k for k in self.roofline_gated_families() if companion_family(k) in blended]
        self.roofline_trained_generations_ = self._trained_generations(rows, gated)

    def _trained_gpus(self, rows: pd.DataFrame, families: Iterable[str]) -> dict[str, list[str]]:
        """Family -> the GPUs (:func:`seen_keys`) with at least ``seen_gpu_min_rows`` of ``rows`` of the family
        (every training row, before the row cap), for each of ``families``."""
        return self._trained_keys(rows, families, seen_keys)

    def _trained_generations(self, rows: pd.DataFrame, families: Iterable[str]) -> dict[str, list[str]]:
        """Family -> the generations (:func:`_row_generations`) with at least ``seen_gpu_min_rows`` of ``rows`` of
        the family (every training row, before the row cap), for each of ``families``; a GPU of unknown
        generation counts for none."""
        return self._trained_keys(rows, families, _row_generations)

    def _trained_keys(
        self, rows: pd.DataFrame, families: Iterable[str], key: Callable[[pd.DataFrame], np.ndarray]
    ) -> dict[str, list[str]]:
        """Family (or ``family:dtype``, :func:`_family_key_rows`) -> the non-empty values of ``key`` (per row) with at
        least ``seen_gpu_min_rows`` of the family's ``rows``, for each of ``families``."""
        want = list(families)
        if not want or not isinstance(rows, pd.DataFrame) or not {"family", "gpu"} <= set(rows.columns):
            return {}
        min_rows = self._check_min_rows()
        fam = str_values(rows["family"])
        sel = np.isin(fam, [companion_family(k) for k in want])
        sub = rows[sel]
        keys, fam, dtype = key(sub), fam[sel], _row_dtypes(sub)
        return {
            name: [k for k in _keys_with_rows(keys[_family_key_rows(name, fam, dtype)], min_rows) if k] for name in want
        }

    def fit(self, df: pd.DataFrame, y: object = None, sample_weight: Any = None) -> PipeweaveRegressor:
        """Fit on canonical profile rows (``pipeweave.profiles.read_profiles``) with ``latency_us`` (us, > 0).

        ``y`` (latency in us, one per row) replaces the ``latency_us`` column when given, so
        ``fit(rows_without_latency, latencies)`` works too; ``sample_weight`` weighs rows (default 1). Error
        bands of an earlier fit are dropped (``error_bands_ = None``: they described other boosters).
        """
        import xgboost as xgb

        self._check_hyperparameters()
        self.error_bands_: dict[str, Any] | None = None

        from ._features import (
            backend_gpu_counts,
            gpu_blind_rows,
            hold_backends,
            model_feature_names,
            unsupported_backends,
            with_extra_features,
        )

        if y is not None and isinstance(df, pd.DataFrame):
            yv = np.asarray(y, dtype=float).ravel()
            if len(yv) != len(df):
                raise DataError(f"y has {len(yv)} latencies for {len(df)} rows", hint="pass one latency (us) per row")
            df = df.assign(latency_us=yv)
        if isinstance(df, pd.DataFrame) and "family" not in df.columns:
            raise DataError(
                "training rows lack the column 'family' (a featurize() output alone is not enough)",
                hint="fit on the canonical profile rows themselves: PipeweaveRegressor().fit(rows)",
            )
        all_rows, all_weight = df, sample_weight  # the seen-GPU boosters train on every row (see _fit_seen)
        if self.max_rows_per_group and isinstance(df, pd.DataFrame):
            # the shipped recipe: at most max_rows_per_group seeded-random rows per (gpu, family, dtype, source)
            from ._training import cap_rows

            pos = pd.DataFrame({c: df[c].to_numpy() for c in ROW_CAP_GROUP if c in df.columns})
            keep = cap_rows(
                pos.assign(_row=np.arange(len(df))),
                int(self.max_rows_per_group),
                by=ROW_CAP_GROUP,
                seed=int(self.random_state),
            )["_row"].to_numpy()
            if len(keep) < len(df):
                if sample_weight is not None and np.ndim(sample_weight) and len(sample_weight) == len(df):
                    sample_weight = np.asarray(sample_weight, dtype=float).ravel()[keep]
                df = df.iloc[keep]
        df = self._prepare(df)
        if "latency_us" not in df.columns:
            raise DataError(
                "training rows lack the column 'latency_us'",
                hint="train on measured profiles, or pass the latencies as y: fit(rows, y)",
            )
        lat = training_latency(df, "PipeweaveRegressor")
        self.__dict__.pop("blind_families_", None)  # a refit resolves gpu_blind_families anew
        self.blind_families_ = self.blind_families()
        rows_of = self.booster_rows()  # validated before any booster is trained
        extras_of = self.extra_features()
        refs = self.family_references()
        own_settings = self.family_booster_settings()
        companions = self.companion_weights()
        siblings = self.sibling_companion_weights()
        self.roofline_blend_weights()  # validated before any booster is trained (used by fit_blend_lists)
        seen = self.seen_gpu_weights()
        for attr in ("shared_reference_", "family_references_"):  # a refit resolves the references anew
            self.__dict__.pop(attr, None)
        names = model_feature_names(self._sass_columns(df), tuple(self.drop_features))
        fam = str_values(df["family"])
        self.unsupported_backends_: tuple[str, ...] = ()  # a refit decides anew
        X = self.feature_matrix(df, names, family=fam)
        self.unsupported_backends_ = unsupported_backends(
            backend_gpu_counts(X, names, df["gpu"]), self.min_backend_gpus
        )
        X = hold_backends(X, names, self.unsupported_backends_)
        # the shared booster's reference: `reference`, or the family's own when it is the only one
        base_ref = self._check_reference(self.reference)
        own = sorted(set(fam))
        shared_ref = refs.get(own[0], base_ref) if len(own) == 1 else base_ref
        targets: dict[str, np.ndarray] = {}  # reference -> log(latency / reference) of every row

        def target_of(ref: str) -> np.ndarray:
            if ref not in targets:
                targets[ref] = np.log(lat / self._reference_values(ref, df))
            return targets[ref]

        target = target_of(shared_ref)
        weight = None
        if sample_weight is not None:
            weight = np.asarray(sample_weight, dtype=float).ravel()
            if len(weight) != len(df) or not (np.isfinite(weight) & (weight >= 0)).all():
                raise DataError(f"sample_weight must be {len(df)} finite values >= 0", hint="one weight per row")
        # the shared booster's extra columns: shared_extra_features, or the family's own when it is the only one
        self.shared_extra_features_ = self.shared_extras(own)
        Xs, snames = with_extra_features(X, names, self.shared_extra_features_, df)
        dtrain = xgb.DMatrix(Xs, label=target, weight=weight, feature_names=snames, nthread=int(self.n_jobs))
        # a single blind family: the shared booster is that family's own
        all_blind = len(fam) > 0 and bool(gpu_blind_rows(fam, self.blind_families()).all())
        self._set_feature_weights(
            dtrain, Xs, self._blind_columns(snames) if all_blind else None, informative=self._informative(fam)
        )
        self._xgb_params()  # the settings checked before any booster is trained
        mono = self.monotone_constraints or {}
        if mono:
            unknown = sorted(set(mono) - set(names) - set(EXTRA_FEATURES))
            bad = {k: v for k, v in mono.items() if v not in (-1, 0, 1)}
            if unknown or bad:
                raise DataError(
                    f"monotone_constraints: unknown features {unknown}, bad directions {bad}",
                    hint="use model feature names (pipeweave.model.model_feature_names()) -> -1, 0 or +1",
                )

        def params_for(cols: list[str], family: str | None = None) -> dict[str, Any]:
            """XGBoost settings of a booster on ``cols`` (its monotone constraints, one per column) for ``family``
            (its own settings where ``family_booster_params`` lists it)."""
            out = self._xgb_params(own_settings.get(family or "", {}))
            if mono:
                out["monotone_constraints"] = "(" + ",".join(str(int(mono.get(n, 0))) for n in cols) + ")"
            return out

        callbacks = []
        if self.progress:
            callbacks.append(_tqdm_callback(int(self.n_estimators)))
        self.booster_ = xgb.train(
            params_for(snames, own[0] if len(own) == 1 else None),  # one family: the shared booster is its own
            dtrain,
            num_boost_round=int(self.n_estimators),
            callbacks=callbacks,
        )

        def train_rows(m: np.ndarray, ref: str, ext: tuple[str, ...], family: str) -> Any:
            """A booster of ``family`` on the rows of mask ``m``: target relative to ``ref``, extra columns ``ext``,
            the settings (feature weights, blind columns) of the families of those rows, ``family``'s own settings."""
            Xf, fnames = with_extra_features(X[m], names, ext, df[m])
            dm = xgb.DMatrix(
                Xf,
                label=target_of(ref)[m],
                weight=None if weight is None else weight[m],
                feature_names=fnames,
                nthread=int(self.n_jobs),
            )
            on = np.unique(fam[m])  # the families of the booster's rows
            blind = self._blind_columns(fnames) if set(on) <= set(self.blind_families()) else None
            self._set_feature_weights(dm, Xf, blind, informative=self._informative(on))
            return xgb.train(params_for(fnames, family), dm, num_boost_round=int(self.n_estimators))

        # per_family: one more booster per family on its own rows (plus those of the families
        # booster_rows() lists for it); the shared booster above stays as the fallback for families without one
        self.family_boosters_: MutableMapping[str, Any] = {}  # load_model gives a LazyBoosters
        self.family_extra_features_: dict[str, tuple[str, ...]] = {}
        family_refs: dict[str, str] = {}
        if self.per_family and len(set(fam)) > 1:  # with one family the shared booster is that family's
            # (families of the rows, reference, extra columns, own settings) -> booster: same inputs, same booster
            trained: dict[tuple[tuple[str, ...], str, tuple[str, ...], tuple[tuple[str, float], ...]], Any] = {}
            for name in sorted(set(fam)):
                m = np.isin(fam, rows_of.get(name, (name,)))
                ref = family_refs[name] = refs.get(name, base_ref)
                ext = extras_of.get(name, ())
                if ext:
                    self.family_extra_features_[name] = ext
                key = (tuple(np.unique(fam[m])), ref, ext, tuple(sorted(own_settings.get(name, {}).items())))
                if key in trained:  # e.g. FP32 GEMM and softmax of FAMILY_BOOSTER_ROWS: one fit
                    self.family_boosters_[name] = trained[key]
                    continue
                self.family_boosters_[name] = trained[key] = train_rows(m, ref, ext, name)
        # dtype boosters: a (family, dtype)'s own booster on its rows alone (the family's reference, extra columns and
        # settings), where the family has rows of another dtype; the family's booster (or the shared one) keeps
        # every row and predicts the other dtypes
        dtypes = _row_dtypes(df)
        for name, dt in self.dtype_booster_keys():
            bkey = f"{name}:{dt}"
            m = _family_key_rows(bkey, fam, dtypes)
            if not m.any() or not ((fam == name) & ~m).any():
                continue
            ref = family_refs.get(name, shared_ref)  # the reference predict uses for the family's rows (reference_of)
            ext = extras_of.get(name, ())
            if ext:
                self.family_extra_features_[bkey] = ext
            self.family_boosters_[bkey] = train_rows(m, ref, ext, name)
        # crude companions: an XGBoost on the crude view of the launch, on each listed family's own rows
        self.companion_boosters_: MutableMapping[str, Any] = {}  # load_model gives a LazyBoosters
        self.companion_weights_: dict[str, float] = {}
        from ..frontend import crude_matrix

        cparams = companion_booster_params(int(self.n_jobs), int(self.random_state))
        for name in dict.fromkeys(companion_family(k) for k in (*companions, *siblings)):  # one booster per family
            m = fam == name
            if not m.any():
                continue
            Xc, t_wq = crude_matrix(df[m])
            dcomp = xgb.DMatrix(
                Xc, label=np.log(lat[m] / t_wq), weight=None if weight is None else weight[m], nthread=int(self.n_jobs)
            )
            self.companion_boosters_[name] = xgb.train(
                cparams, dcomp, num_boost_round=int(COMPANION_PARAMS["n_estimators"])
            )
            self.companion_weights_.update({k: w for k, w in companions.items() if companion_family(k) == name})
        self.fit_blend_lists(all_rows)
        # seen-GPU boosters: the model's features + a one-hot of the GPU, on each listed family's rows
        if len(df) < len(all_rows) and seen:  # capped: featurize every row of the listed families
            sel = np.isin(str_values(all_rows["family"]), list(seen))
            full = self._prepare(all_rows[sel])
            full_w = None if weight is None else np.asarray(all_weight, dtype=float).ravel()[sel]
            self._fit_seen(full, names, seen, refs, base_ref, full_w)
        else:
            self._fit_seen(df, names, seen, refs, base_ref, weight, X=X)
        self.shared_reference_ = shared_ref
        self.family_references_ = family_refs
        self.feature_names_ = names
        self.families_ = sorted(set(df["family"].astype(str)))
        self.sources_ = sorted(set(df["source"].astype(str))) if "source" in df.columns else []
        self.gpus_ = sorted(set(df["gpu"].astype(str)))
        self.n_train_rows_ = int(len(df))
        # the measured latency range of each family's training rows (any GPU): what `extrapolated` checks
        codes, fam_names = str_codes(fam)
        lo, hi = np.full(len(fam_names), np.inf), np.full(len(fam_names), -np.inf)
        np.minimum.at(lo, codes, lat)
        np.maximum.at(hi, codes, lat)
        self.latency_range_us_ = {str(n): [float(a), float(b)] for n, a, b in zip(fam_names, lo, hi, strict=True)}
        # each GPU's FP32 GEMM launches with the kernel they ran: the tile a launch without one gets (library_tiles)
        self.library_tile_tables_ = (
            fit_tile_tables(
                df, max_rows=LIBRARY_TILE_TABLE_ROWS, min_launches=LIBRARY_TILE_MIN_LAUNCHES, seed=self.random_state
            )
            if self.library_tile_neighbors
            else {}
        )
        return self

    def extrapolated(self, family: Any, latency_us: Any) -> np.ndarray:
        """Bool per row: the latency (us; e.g. the prediction) lies outside the range measured for the row's
        family in training (``latency_range_us_``, any GPU), i.e. the launch is smaller or larger than anything
        the model learned from. Families without a recorded range (older model files) are never marked."""
        self._check_fitted()
        codes, names = str_codes(np.asarray(family, dtype=object))
        t = np.asarray(latency_us, dtype=float)
        if len(codes) != len(t):
            raise DataError(f"extrapolated: {len(codes)} families for {len(t)} latencies", hint="one family per row")
        ranges = getattr(self, "latency_range_us_", None) or {}
        bounds = np.array([ranges.get(n, (0.0, np.inf)) for n in names], dtype=float).reshape(-1, 2)
        return np.isfinite(t) & ((t < bounds[codes, 0]) | (t > bounds[codes, 1]))

    def set_error_bands(self, bands: Mapping[str, Any] | None) -> PipeweaveRegressor:
        """Attach error bands (``error_bands_``; the layout of :func:`pipeweave.model.check_error_bands`, as
        :func:`pipeweave.evaluation.estimate_error_bands` returns it for this model's recipe and rows), or
        remove them with ``None``. Validated here; saved in the model file's stamp. Returns ``self``."""
        self._check_fitted()
        if bands is None:
            self.error_bands_ = None
            return self
        checked = check_error_bands(bands)
        trained = {_catalog_name(str(g)) for g in self.gpus_}
        foreign = sorted({g for gs in checked["seen_gpus"].values() for g in gs} - trained)
        if foreign:
            raise DataError(
                f"the error bands were estimated on GPUs this model was not trained on: {foreign}",
                hint="estimate them from the model's own training rows (pipeweave.evaluation.estimate_error_bands)",
            )
        self.error_bands_ = checked
        return self

    def predict_interval(
        self,
        df: pd.DataFrame,
        coverage: float = 0.8,
        *,
        pred_us: Any = None,
        gpus: Mapping[str, GPUSpec] | None = None,
        data: str | os.PathLike[str] | None = None,
    ) -> pd.DataFrame:
        """Error band (us) of each row's prediction: ``latency_us_lo``, ``latency_us_hi`` and ``band``.

        The band holds the middle ``coverage`` (0.5, 0.8 or 0.9) of the held-out ``measured / predicted``
        ratios of the row's family (and dtype) in its situation (``band``): ``unseen``, a GPU of a generation
        without training rows of the family (leave-one-generation-out residuals); ``sibling``, a GPU without
        training rows of the family whose generation has some (leave-one-GPU-out residuals); ``seen``, a GPU
        the model was trained on (held-out shapes). A row's generation is its ``generation`` column, else
        its GPU's (``gpus`` for GPUs outside the catalog). ``pred_us``: the rows' predictions when the caller
        has them (else :meth:`predict`). On the GPU of a few-shot calibration (``calibration_``), rows of a
        family whose correction carries a band get it instead (``band == "calibrated"``: the left-out errors of
        the measured launches, scaled by the correction's uncertainty at the row; :mod:`pipeweave.calibrate`).
        Rows without a band get NaN and ``band == ""``. Raises :class:`DataError` when the model has no bands
        (``pipeweave train --error-bands`` adds them; ``pipeweave calibrate fit`` adds the calibrated GPU's).
        """
        self._check_fitted()
        if isinstance(df, pd.DataFrame):  # "bf16" or a left-out dtype finds the bfloat16 band
            from ..frontend import fill_launch_defaults

            df = fill_launch_defaults(df)
        bands = getattr(self, "error_bands_", None)
        calibration = getattr(self, "calibration_", None)
        if not bands and not (calibration is not None and calibration.has_band()):
            raise DataError(
                "this model has no error bands",
                hint="attach bands: model.set_error_bands(pipeweave.evaluation.estimate_error_bands(recipe, rows)), "
                "or load the shipped model",
            )
        pred = self.predict(df, gpus=gpus, data=data) if pred_us is None else np.asarray(pred_us, dtype=float)
        if len(pred) != len(df):
            raise DataError(f"predict_interval: {len(pred)} predictions for {len(df)} rows", hint="one per row")
        if bands:
            dtype = str_values(df["dtype"]) if "dtype" in df.columns else np.full(len(df), "", dtype=object)
            lo, hi, situation = band_bounds(
                bands, str_values(df["family"]), dtype, seen_keys(df), pred, coverage, _row_generations(df, gpus)
            )
        else:
            check_coverage(coverage)
            lo, hi, situation = np.full(len(df), np.nan), np.full(len(df), np.nan), np.full(len(df), "", dtype=object)
        if calibration is not None and calibration.has_band():
            # the calibrated GPU: the band of the calibration's left-out launches (pipeweave.calibrate)
            from ..calibrate import CALIBRATED_BAND

            pos = np.flatnonzero(calibration.band_rows(df) & np.isfinite(pred))
            if len(pos):
                r_lo, r_hi = calibration.band_ratio(self._prepare(df.iloc[pos], gpus=gpus, data=data), coverage)
                lo[pos], hi[pos], situation[pos] = pred[pos] * r_lo, pred[pos] * r_hi, CALIBRATED_BAND
        return pd.DataFrame({"latency_us_lo": lo, "latency_us_hi": hi, "band": situation}, index=df.index)

    def predict_log_ratio(self, df: pd.DataFrame) -> np.ndarray:
        """Raw model output: predicted log(latency / reference) per row (reference: :meth:`reference_of` the
        row's family; ``t_env_us`` by default)."""
        self._check_fitted()
        return self._log_ratio(self._prepare(df))

    def _log_ratio(
        self,
        prepared: pd.DataFrame,
        columns: Mapping[str, np.ndarray] | None = None,
        family: np.ndarray | None = None,
        X: np.ndarray | None = None,
    ) -> np.ndarray:
        """Predicted log(latency / reference) per row; ``X``: the rows' :meth:`feature_matrix`, when the caller
        has built it (the predict paths build it once for this and for :meth:`_blend_seen`)."""
        fam = str_values(prepared["family"]) if family is None else family
        if X is None:
            X = self.feature_matrix(prepared, self.feature_names_, columns, family=fam)
        out = np.empty(len(X))
        todo = np.ones(len(X), dtype=bool)
        family_boosters = getattr(self, "family_boosters_", None) or {}
        keyed = [k for k in family_boosters if ":" in k]  # (family, dtype) boosters: their rows, after the rest
        if family_boosters:
            for name in family_boosters:  # only the families present build their booster (LazyBoosters)
                if ":" in name:
                    continue
                m = fam == name
                if m.any():
                    Xf = self._booster_matrix(self._extras_of(name), X, prepared, columns, rows=m)
                    out[m] = predict_in_place(family_boosters[name], Xf, int(self.n_jobs))
                    todo &= ~m
        if todo.any():  # the shared booster: all rows, or families without their own booster
            Xs = self._booster_matrix(self._extras_of(None), X, prepared, columns, rows=None if todo.all() else todo)
            out[todo] = predict_in_place(self.booster_, Xs, int(self.n_jobs))
        if keyed:
            dtypes = _row_dtypes(prepared)
            for key in keyed:
                m = _family_key_rows(key, fam, dtypes)
                if m.any():
                    Xf = self._booster_matrix(self._extras_of(key), X, prepared, columns, rows=m)
                    out[m] = predict_in_place(family_boosters[key], Xf, int(self.n_jobs))
        return out

    def family_matrix(
        self,
        family: str,
        X: np.ndarray,
        prepared: pd.DataFrame,
        columns: Mapping[str, np.ndarray] | None = None,
        rows: np.ndarray | None = None,
    ) -> np.ndarray:
        """The input of the booster that predicts ``family`` (its own, else the shared one): the
        :meth:`feature_matrix` ``X`` of ``prepared``'s rows (those of boolean mask ``rows``, default all),
        with the extra columns that booster was trained on (``family_extra_features_`` /
        ``shared_extra_features_``) read from ``prepared`` / ``columns`` and inserted where fit put them."""
        own = family in (getattr(self, "family_boosters_", None) or {})
        return self._booster_matrix(self._extras_of(family if own else None), X, prepared, columns, rows)

    def _extras_of(self, family: str | None) -> tuple[str, ...]:
        """The extra columns of ``family``'s own booster (``None``: of the shared booster), as fitted."""
        if family is None:
            return tuple(getattr(self, "shared_extra_features_", ()) or ())
        return (getattr(self, "family_extra_features_", None) or {}).get(family, ())

    def _booster_matrix(
        self,
        ext: tuple[str, ...],
        X: np.ndarray,
        prepared: pd.DataFrame,
        columns: Mapping[str, np.ndarray] | None,
        rows: np.ndarray | None = None,
    ) -> np.ndarray:
        """``X`` (its ``rows``) with the extra columns ``ext`` inserted (:func:`~pipeweave.model.with_extra_features`)."""
        from ._features import with_extra_features

        if rows is None:
            return with_extra_features(X, self.feature_names_, ext, prepared, columns)[0]
        if not ext:
            return X[rows]
        cols = {c: np.asarray(columns[c])[rows] for c in ext if columns is not None and c in columns}
        return with_extra_features(X[rows], self.feature_names_, ext, prepared[rows], cols)[0]

    def predict(
        self,
        df: pd.DataFrame,
        *,
        gpus: Mapping[str, GPUSpec] | None = None,
        data: str | os.PathLike[str] | None = None,
        return_floored: bool = False,
    ) -> Any:
        """Predicted latency (us) of each row, floored at the analytical lower bound ``t_lower_us``.

        With ``return_floored=True``, returns ``(pred, floored)``: ``floored`` marks the rows the model
        predicted under their lower bound (raised to it: there the model extrapolates, or learned from rows
        timed with less work than they state, so the value is a bound rather than an estimate).

        Each distinct launch is featurized and predicted once (every column but
        :data:`NON_LAUNCH_COLUMNS` is the key; repeated rows get the same value). ``gpus`` maps
        names to :class:`~pipeweave.hardware.GPUSpec` for GPUs outside the catalog (spec files);
        ``data`` is the data directory (SGLang tuned MoE configs). A row of a family the model was not
        trained on raises :class:`~pipeweave.DataError` (``pipeweave.predict`` reports such rows one by one).
        A ``gemm_fp32`` row without a tile (cuBLAS's choice) gets :meth:`library_tiles`' latency: the tile cuBLAS
        ran for the nearest measured launches of its GPU (or of a trained GPU of its compute capability, else of its
        architecture, ``library_tile_borrow``), else the geometric mean of its fastest SIMT tiles' predictions.
        """
        self._check_fitted()
        self._check_families(df)
        if isinstance(df, pd.DataFrame):  # the launch defaults pipeweave.predict reads (dtype, MoE routing ...)
            from ..frontend import fill_launch_defaults, library_tile_rows

            df = fill_launch_defaults(df)
            chosen = library_tile_rows(df)
            if chosen.any():  # FP32 GEMM launches without a tile: the model's fastest SIMT tiles (library_tiles)
                pred, floored = np.empty(len(df)), np.zeros(len(df), dtype=bool)
                if (~chosen).any():
                    pred[~chosen], floored[~chosen] = self.predict(
                        df.iloc[np.flatnonzero(~chosen)], gpus=gpus, data=data, return_floored=True
                    )
                tile = self.library_tiles(df.iloc[np.flatnonzero(chosen)], gpus=gpus, data=data)
                pred[chosen], floored[chosen] = tile["latency_us"].to_numpy(), tile["floored"].to_numpy()
                return (pred, floored) if return_floored else pred
        if (
            isinstance(df, pd.DataFrame)
            and "t_env_us" not in df.columns
            and not self.use_sass
            and len(df)
            # a calibration changes only its GPU's rows (e.g. not the launches asked on its analog GPUs)
            and (getattr(self, "calibration_", None) is None or not self.calibration_.rows_on_gpu(df).any())
        ):
            pred, floored = self._predict_launches(df, gpus, data)
            return (pred, floored) if return_floored else pred
        df = self._prepare(df, gpus=gpus, data=data)  # featurize (and attach SASS) once
        fam = str_values(df["family"])
        X = self.feature_matrix(df, self.feature_names_, family=fam)
        pred = self._reference_us(df, family=fam) * np.exp(self._log_ratio(df, family=fam, X=X))
        pred = self._blend_companions(df, pred, fam, gpus=gpus, data=data)
        pred = self._blend_seen(df, pred, fam, X)
        pred = self._blend_roofline(df, pred, fam, gpus=gpus, data=data)
        lower = df["t_lower_us"].to_numpy(dtype=float)
        calibration = getattr(self, "calibration_", None)  # few-shot correction of one GPU (pipeweave.calibrate)
        if calibration is not None:
            base = np.maximum(pred, lower)  # an analog term reads the model's predictions on its analog GPUs
            pred = base * np.exp(calibration.log_correction(df, model=self, base_us=base, gpus=gpus, data=data))
        floored = pred < lower
        pred = np.maximum(pred, lower)
        return (pred, floored) if return_floored else pred

    def library_tiles(
        self,
        df: pd.DataFrame,
        *,
        gpus: Mapping[str, GPUSpec] | None = None,
        data: str | os.PathLike[str] | None = None,
    ) -> pd.DataFrame:
        """The tile each ``gemm_fp32`` launch of ``df`` that gives none is predicted with, and the latency (us)
        :meth:`predict` returns for such a launch.

        cuBLAS chooses an FP32 GEMM's SIMT kernel (and its split-K) itself. Two cases:

        - **a GPU whose launches the model trained on** with their kernel recorded (``library_tile_tables_``), or a
          GPU of the same compute capability as such GPUs (cuBLAS's heuristics are per architecture): the tile and
          split-K cuBLAS ran for the launch's nearest measured launches (the majority of
          ``library_tile_neighbors``; a given ``split_k`` is kept), predicted as a launch naming that tile; a GPU
          with no such GPU but trained GPUs of its major compute capability (the same SIMT kernels:
          ``library_tile_borrow``): their launches' tile, with the split inferred for this GPU;
        - **any other GPU** (no launch of its architecture measured): each row is predicted under every tile of
          :data:`pipeweave.frontend.SIMT_TILES`, with the given ``split_k`` or else the split
          :func:`pipeweave.frontend.infer_split_k` finds for that tile (:func:`pipeweave.frontend.simt_tile_launches`);
          its latency is the geometric mean of the :data:`~pipeweave.model.LIBRARY_TILE_FASTEST` smallest
          predictions (a tuned library picks one of the fast kernels; chosen on nested leave-one-generation-out
          folds).

        Returns a frame on ``df.index``: ``block_m``, ``block_n``, ``block_k``, ``num_warps``, ``num_stages`` and
        ``split_k`` of the tile used (the neighbours' or the fastest), ``latency_fastest_us`` (that tile's
        prediction), ``latency_us`` (what :meth:`predict` returns: the same, or the geometric mean of the fastest),
        ``floored`` (a prediction used was raised to its lower bound, as :meth:`predict`'s ``return_floored``) and
        ``tile_source`` (the GPUs whose measured launches chose the tile, e.g. ``"T4"``, or ``"fastest"``) and
        ``split_source`` (``"given"``: the launch's own; ``"voted"``: the neighbours'; ``"inferred"``: the split of
        the smallest envelope for that tile on this GPU); NaN / False / ``""`` on rows that give a tile or are not
        ``gemm_fp32``.
        """
        from ..frontend import given_split_k, library_tile_rows, simt_tile_launches, tiled_launches
        from ._recipe import LIBRARY_TILE_FASTEST

        self._check_fitted()
        cols = list(TABLE_TILE_COLUMNS)
        values = {c: np.full(len(df), np.nan) for c in (*cols, "latency_fastest_us", "latency_us")}
        floored = np.zeros(len(df), dtype=bool)
        source = np.full(len(df), "", dtype=object)
        pos = np.flatnonzero(library_tile_rows(df))
        # where each chosen row's split comes from: the launch's own, else the vote's, else inferred for the tile
        split_source = np.full(len(df), "", dtype=object)
        split_source[pos] = np.where(np.isfinite(given_split_k(df.iloc[pos])), "given", "inferred")
        tables = getattr(self, "library_tile_tables_", None) or {}
        if len(pos) and tables:  # the kernel cuBLAS ran for the nearest measured launches of the GPU (or its arch)
            kernels, by = choose_tiles(
                tables, df.iloc[pos], int(self.library_tile_neighbors), gpus, str(self.library_tile_borrow)
            )
            has = np.isfinite(kernels[:, 0])
            if has.any():
                at = pos[has]
                rows = tiled_launches(df.iloc[at], dict(zip(cols, kernels[has].T, strict=True)), gpus)
                p, f = self.predict(rows, gpus=gpus, data=data, return_floored=True)
                for col in cols:  # the voted kernel, with the launch's own split where it gives one
                    values[col][at] = num_values(rows, col)
                values["latency_fastest_us"][at] = values["latency_us"][at] = np.asarray(p, dtype=float)
                floored[at], source[at] = np.asarray(f, dtype=bool), by[has]
                split_source[at] = np.where(
                    (split_source[at] == "inferred") & np.isfinite(kernels[has, cols.index("split_k")]),
                    "voted",
                    split_source[at],
                )
                pos = pos[~has]
        if len(pos):  # the model's fastest SIMT tiles
            cands = simt_tile_launches(df.iloc[pos], gpus)
            preds, floors = [], []
            for _, rows in cands:
                p, f = self.predict(rows, gpus=gpus, data=data, return_floored=True)
                preds.append(np.asarray(p, dtype=float))
                floors.append(np.asarray(f, dtype=bool))
            # a candidate without a finite positive prediction sorts last and is left out of the mean (none: NaN)
            stack = np.stack(preds, axis=1)
            stack = np.where(np.isfinite(stack) & (stack > 0), stack, np.inf)
            order = np.argsort(stack, axis=1, kind="stable")
            pick = np.arange(len(pos))
            best = order[:, 0]
            for col in cols:
                values[col][pos] = np.stack([num_values(rows, col) for _, rows in cands], axis=1)[pick, best]
            fastest = np.take_along_axis(stack, order[:, :LIBRARY_TILE_FASTEST], axis=1)
            logs = np.log(np.where(np.isfinite(fastest), fastest, np.nan))
            n_ok = np.isfinite(logs).sum(axis=1)
            values["latency_fastest_us"][pos] = np.where(n_ok > 0, stack[pick, best], np.nan)
            values["latency_us"][pos] = np.where(
                n_ok > 0, np.exp(np.nansum(logs, axis=1) / np.maximum(n_ok, 1)), np.nan
            )
            used = np.take_along_axis(np.stack(floors, axis=1), order[:, :LIBRARY_TILE_FASTEST], axis=1)
            floored[pos] = used.any(axis=1)
            source[pos] = "fastest"
        return pd.DataFrame(
            {**values, "floored": floored, "tile_source": source, "split_source": split_source}, index=df.index
        )

    def _predict_launches(
        self, df: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None, data: str | os.PathLike[str] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The hot path: feature arrays (no featurized DataFrame) of each distinct launch, then the boosters;
        ``(pred, floored)`` as :meth:`predict` with ``return_floored``."""
        from ..frontend import feature_arrays

        groups = launch_groups(df)
        rows = df if groups is None else df.iloc[groups[1]]
        cols = feature_arrays(rows, gpus=gpus, data=data, baselines=False)
        fam = str_values(rows["family"])
        X = self.feature_matrix(rows, self.feature_names_, cols, family=fam)
        pred = self._reference_us(rows, cols, fam) * np.exp(self._log_ratio(rows, cols, fam, X=X))
        pred = self._blend_companions(rows, pred, fam, cols)
        pred = self._blend_seen(rows, pred, fam, X, cols)
        pred = self._blend_roofline(rows, pred, fam, cols)
        lower = np.asarray(cols["t_lower_us"], dtype=float)
        floored = pred < lower
        pred = np.maximum(pred, lower)
        return (pred, floored) if groups is None else (pred[groups[0]], floored[groups[0]])

    def _check_hyperparameters(self) -> None:
        """Refuse a hyperparameter outside its range before any work (XGBoost would fail deep inside, or a
        value such as ``n_estimators=0`` would fit a model that predicts nothing learned)."""
        import numbers

        def check(name: str, ok: bool, expected: str) -> None:
            if not ok:
                raise DataError(
                    f"{name} must be {expected}, got {getattr(self, name)!r}",
                    hint=f"e.g. PipeweaveRegressor({name}={PipeweaveRegressor().get_params()[name]!r}) (the default)",
                )

        def is_int(v: Any) -> bool:
            return isinstance(v, numbers.Integral) and not isinstance(v, bool)

        def is_num(v: Any) -> bool:
            return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))

        check("n_estimators", is_int(self.n_estimators) and self.n_estimators >= 1, "an integer >= 1")
        check("max_depth", is_int(self.max_depth) and self.max_depth >= 1, "an integer >= 1")
        check("learning_rate", is_num(self.learning_rate) and 0 < self.learning_rate <= 1, "a number in (0, 1]")
        for name in ("subsample", "colsample_bytree"):
            check(name, is_num(getattr(self, name)) and 0 < getattr(self, name) <= 1, "a number in (0, 1]")
        for name in ("min_child_weight", "reg_lambda", "reg_alpha"):
            check(name, is_num(getattr(self, name)) and getattr(self, name) >= 0, "a number >= 0")
        cap = self.max_rows_per_group
        check("max_rows_per_group", cap is None or (is_int(cap) and cap >= 0), "None or an integer >= 0 (0: all rows)")
        check("n_jobs", is_int(self.n_jobs) and self.n_jobs >= 1, "an integer >= 1 (threads)")
        nb = self.library_tile_neighbors
        check("library_tile_neighbors", is_int(nb) and nb >= 0, "an integer >= 0 (0: the fastest tiles only)")
        check(
            "library_tile_borrow",
            isinstance(self.library_tile_borrow, str) and self.library_tile_borrow in TILE_BORROW_RULES,
            f"one of {list(TILE_BORROW_RULES)}",
        )
        self._check_drop_features()
        self._informative_families()
        self.roofline_gated_families()

    def _check_drop_features(self) -> None:
        """Refuse a ``drop_features`` that is not a collection of droppable feature names: a string would be read
        character by character (as substrings) and a misspelled name would drop nothing, silently."""
        import difflib

        from ..frontend import FEATURES
        from ._features import KNOWN_BACKENDS

        drop = self.drop_features
        if drop is None:
            return
        if isinstance(drop, str) or not isinstance(drop, Iterable) or not all(isinstance(f, str) for f in drop):
            raise DataError(
                f"drop_features must be a tuple of feature names, got {drop!r}",
                hint="e.g. PipeweaveRegressor(drop_features=('mma_generation',)); () drops none",
            )
        droppable = [*FEATURES, *(f"backend_{b}" for b in KNOWN_BACKENDS)]
        unknown = [f for f in drop if f not in droppable]
        if unknown:
            close = {f: difflib.get_close_matches(f, droppable, n=1, cutoff=0.75) for f in unknown}
            guesses = ", ".join(f"{c[0]!r} for {f!r}" for f, c in close.items() if c)
            raise DataError(
                f"drop_features names no model feature: {unknown}" + (f" (did you mean {guesses}?)" if guesses else ""),
                hint="use names of pipeweave.frontend.FEATURES or the attention-backend one-hots (backend_<name>)",
            )

    def _check_families(self, df: Any) -> None:
        """Refuse rows of families without training rows (the shared booster would answer for them blindly)."""
        known = getattr(self, "families_", None)
        if not known or not isinstance(df, pd.DataFrame) or "family" not in df.columns or not len(df):
            return
        fam = str_values(df["family"])
        unknown = ~np.isin(fam, list(known))
        if unknown.any():
            rows = np.flatnonzero(unknown)
            raise DataError(
                f"the model was not trained on family {sorted(set(fam[unknown]))} (rows {rows[:5].tolist()}"
                f"{' ...' if len(rows) > 5 else ''}, counted from 0); it knows {sorted(known)}",
                hint="retrain with rows of that family, or predict it with the shipped model",
            )

    def _check_fitted(self) -> None:
        if not hasattr(self, "booster_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this PipeweaveRegressor is not fitted yet; call fit(df) or load_model(path)")


def _tqdm_callback(total: int):  # noqa: ANN202
    """XGBoost training callback that drives a tqdm bar (one tick per boosting round)."""
    import xgboost as xgb

    from .._progress import progress_bar

    class _Bar(xgb.callback.TrainingCallback):
        def __init__(self) -> None:
            super().__init__()
            self.bar = progress_bar(total, "boosting", unit="tree")  # tqdm on a terminal, lines in a log

        def after_iteration(self, model, epoch, evals_log) -> bool:  # noqa: ANN001
            self.bar.update(1)
            return False

        def after_training(self, model):  # noqa: ANN001, ANN202
            self.bar.close()
            return model

    return _Bar()
