"""The few-shot protocol: a handful of launches measured on the held-out GPU, then calibrate.

On every leave-one-generation-out fold of an evaluation family:

1. the zero-shot model (``pipeweave`` of the LOGO suite: same estimator, same training cap) is
   fitted on the training generations;
2. on each GPU of the held-out generation, ``shots`` launches are chosen from that GPU's
   measured rows by the plan logic (:func:`pipeweave.calibrate.plan_positions`: k-means coverage
   of the regime coordinates, the measured rows being the candidates);
3. the model is calibrated on those launches (:class:`pipeweave.calibrate.ResidualCorrection`)
   and scored on the GPU's other rows. Every shot count is scored on the **same** rows: the rows
   not chosen by any shot count of the run, so the curve compares like with like.

The calibration method and its settings (none / per-GPU scalar / Gaussian-process residual with
a grid of length scales and noise ratios; or *refit*: the model retrained with the shots as
training rows of weight ``refit_weight`` each, optionally followed by the residual GP; for fused MoE also the GP
after the analog-GPU term, :data:`ANALOG_OPTIONS`; :data:`OPTIONS`; an option may also combine a refit with the
analog term, whose coordinates are then the refitted model's) are chosen per shot count **inside
the training generations**: each training generation in turn plays the new GPU (base model
fitted on the other training generations, shots planned and scored the same way), and the
option with the lowest mean MAPE over those inner folds is used on the held-out generation.
Nothing measured on the held-out generation reaches that choice except its own shots.

Results: ``results[family][str(shots)][generation] = {mape, median_ape, p90_ape, n}`` (errors
in %, rows pooled over the generation's GPUs), plus ``by_gpu``, the chosen options and the
inner-fold scores. Figures: MAPE against shots per held-out generation
(:func:`plot_data_few_shot` computes the numbers, :func:`plot_few_shot` draws them).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import DataError, shown
from ..calibrate import AUTO_CANDIDATES, METHODS
from ._metrics import ape
from ._plots import order_generations
from ._report import _DEFAULT_N_ESTIMATORS

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "ANALOG_OPTIONS",
    "DEFAULT_SHOTS",
    "FEW_SHOT_ANALOG_OPTIONS",
    "FEW_SHOT_OPTIONS",
    "OPTIONS",
    "REFIT_WEIGHTS",
    "BAND_SHOTS",
    "calibrated_band_coverage",
    "band_coverage_fold",
    "WORKLOAD_SIZES",
    "workload_band_coverage",
    "workload_band_rows",
    "few_shot_fold",
    "merge_few_shot_reports",
    "plot_data_few_shot",
    "plot_few_shot",
    "render_few_shot_markdown",
    "run_few_shot",
    "write_few_shot_report",
]

DEFAULT_SHOTS: tuple[int, ...] = (0, 8, 32, 128)
#: weights of the shots when the model is refitted with them (few-shot "refit" options)
REFIT_WEIGHTS: tuple[float, ...] = (10.0, 30.0)


#: calibration options tried inside the training generations (keyword arguments of ResidualCorrection)
OPTIONS: tuple[dict[str, Any], ...] = (
    # fixed settings: none, the per-GPU scalar, the residual GP over a grid (calibrate's AUTO_CANDIDATES)
    *(dict(c) for c in AUTO_CANDIDATES),
    # refit: the shots join the training rows with this weight each (a shot counts as that many
    # training rows), then nothing or the residual GP on top
    *({"refit_weight": w, "method": "none"} for w in REFIT_WEIGHTS),
    *(
        {"refit_weight": w, "method": "gp", "length_scale": ls, "noise": 0.3, "linear": 0.0}
        for w in REFIT_WEIGHTS
        for ls in (2.0, 4.0)
    ),
)
#: every GP option again over the family's own regime coordinates (``"regime": "family"``,
#: :data:`pipeweave.calibrate.FAMILY_REGIME_FEATURES`), offered only for a family that has them (fused MoE); an
#: option without ``regime`` reads the generic coordinates. Last, so a tie keeps the generic option
OPTIONS = (*OPTIONS, *({**o, "regime": "family"} for o in OPTIONS if o.get("method") == "gp"))
#: the GP after the analog-GPU term (``analog_penalty``: :mod:`pipeweave.calibrate._analog`) at penalties 1 / 10,
#: length scales 2 / 4 and noise 0.1 / 0.3, over the generic and the family's own coordinates; offered only for the
#: families of :data:`pipeweave.calibrate.FAMILY_ANALOG_PENALTY` (``experiments/few_shot/analog_screen.md``). Last,
#: so a tie keeps an option without the term
ANALOG_OPTIONS: tuple[dict[str, Any], ...] = tuple(
    {"method": "gp", "length_scale": ls, "noise": nz, "linear": 0.0, "analog_penalty": lam, **reg}
    for reg in ({}, {"regime": "family"})
    for lam in (1.0, 10.0)
    for ls in (2.0, 4.0)
    for nz in (0.1, 0.3)
)
OPTIONS = (*OPTIONS, *ANALOG_OPTIONS)
#: :data:`OPTIONS` under its public name (``pipeweave.evaluation.FEW_SHOT_OPTIONS``)
FEW_SHOT_OPTIONS = OPTIONS
#: :data:`ANALOG_OPTIONS` under its public name (``pipeweave.evaluation.FEW_SHOT_ANALOG_OPTIONS``)
FEW_SHOT_ANALOG_OPTIONS = ANALOG_OPTIONS


def _stats(errors: np.ndarray) -> dict[str, float | int]:
    return {
        "mape": round(float(np.mean(errors)), 4),
        "median_ape": round(float(np.median(errors)), 4),
        "p90_ape": round(float(np.percentile(errors, 90)), 4),
        "n": len(errors),
    }


def _correction_settings(option: Mapping[str, Any], family: str) -> dict[str, Any]:
    """Keyword arguments of :class:`~pipeweave.calibrate.ResidualCorrection` for a few-shot ``option`` on
    ``family``: its settings without ``refit_weight``, the coordinates of its ``regime`` (``"generic"`` when it
    names none; ``"family"``: :func:`~pipeweave.calibrate.regime_features`) unless it gives ``features`` itself."""
    from ..calibrate import regime_features

    kw = {k: v for k, v in option.items() if k not in ("refit_weight", "regime")}
    kw.setdefault("features", regime_features(family, str(option.get("regime", "generic"))))
    return kw


class _GPUCase:
    """One GPU's measured rows with its shot plans and the rows every shot count is scored on."""

    def __init__(self, rows: pd.DataFrame, shots: Sequence[int], seed: int) -> None:
        from ..calibrate import plan_positions
        from ._suite import as_asked

        self.rows = rows  # as measured: a refit trains on its shots as they ran
        # as a user asks for them (no recorded cuBLAS tile / split): what is planned, predicted and corrected
        self.asked = as_asked(rows)
        self.family = str(rows["family"].iloc[0]) if len(rows) and "family" in rows else ""
        self.lat = rows["latency_us"].to_numpy(dtype=float)
        self.t_lower = self.asked["t_lower_us"].to_numpy(dtype=float)
        self.plans = {s: plan_positions(self.asked, s, seed=seed) for s in shots if s > 0}
        used = np.zeros(len(rows), dtype=bool)
        for p in self.plans.values():
            used[p] = True
        self.score = ~used
        self.score_rows = self.asked.loc[self.score]

    def errors(
        self,
        base_pred: np.ndarray,
        shots: int,
        option: dict[str, Any],
        rows: pd.DataFrame | None = None,
    ) -> np.ndarray:
        """APE (%) of the scored rows after calibrating on ``shots`` planned launches with ``option``; ``rows``: the
        case's asked rows with their analog columns (:meth:`_BaseModels.analog_rows`) for an option with an
        ``analog_penalty`` (default: the asked rows)."""
        from ..calibrate import ResidualCorrection

        if shots == 0 or option.get("method") == "none":
            return ape(base_pred[self.score], self.lat[self.score])
        plan = self.plans[shots]
        r = np.log(self.lat[plan] / base_pred[plan])
        score_rows = self.score_rows if rows is None else rows.loc[self.score]
        rows = self.asked if rows is None else rows
        corr = ResidualCorrection(**_correction_settings(option, self.family)).fit(rows.iloc[plan], r, band=False)
        pred = np.maximum(base_pred[self.score] * np.exp(corr.predict(score_rows)), self.t_lower[self.score])
        return ape(pred, self.lat[self.score])


class _BaseModels:
    """Zero-shot models fitted without a set of generations, each fitted once and shared by folds.

    The inner model of (held-out G, inner t) is trained on every generation but G and t: the same
    model as (held-out t, inner G), so a run needs one fit per generation pair plus one per fold.
    """

    def __init__(self, frame: pd.DataFrame, estimator: Any, progress: Any = None, cache: Path | None = None) -> None:
        self.frame = frame
        self.cache = cache
        self.gen = frame["generation"].astype(str).to_numpy()
        self.estimator = estimator
        self.progress = progress
        self._models: dict[frozenset[str], Any] = {}
        self._preds: dict[tuple[frozenset[str], str], np.ndarray] = {}
        self._refits: dict[tuple, dict[str, np.ndarray]] = {}
        self._analogs: dict[tuple[frozenset[str], str], np.ndarray] = {}
        self._analog_rows: dict[tuple[frozenset[str], str], pd.DataFrame] = {}
        # refitted models and their cases' rows with analog columns: kept for one (model, shot count) pass only
        # (:meth:`release_refits`), each frame being as large as a case's featurized rows
        self._refit_models: dict[tuple, Any] = {}
        self._refit_analog_rows: dict[tuple, pd.DataFrame] = {}

    def predict(self, without: frozenset[str], case: _GPUCase, gpu: str) -> np.ndarray:
        """Latency (us) of ``case``'s rows by the model fitted without the generations ``without``."""

        path = None
        if self.cache is not None:
            path = self.cache / f"{'-'.join(sorted(without))}.{gpu}.npy"
            if (without, gpu) not in self._preds and path.is_file():
                pred = np.load(path)
                if len(pred) == len(case.rows):
                    self._preds[(without, gpu)] = pred
        if (without, gpu) not in self._preds:
            self._preds[(without, gpu)] = np.asarray(self._model(without).predict(case.asked), dtype=float)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                np.save(path, self._preds[(without, gpu)])
        return self._preds[(without, gpu)]

    def _model(self, without: frozenset[str]) -> Any:
        """The zero-shot model fitted without the generations ``without`` (fitted on first use)."""
        from sklearn.base import clone

        if without not in self._models:
            train = self.frame[~np.isin(self.gen, list(without))]
            self._models[without] = clone(self.estimator).fit(train)
            if self.progress is not None:
                self.progress.update()
        return self._models[without]

    def analog(self, without: frozenset[str], case: _GPUCase, gpu: str) -> tuple[np.ndarray, list[str]]:
        """(rows x analogs matrix, analogs): the analog coordinates of ``case``'s rows under the model fitted
        without ``without`` (:func:`pipeweave.calibrate.analog_matrix`), the analogs being the GPUs of the
        generations it trained on, as a calibration of a GPU the model never saw would read them."""
        from ..calibrate import analog_matrix

        analogs = self._analog_gpus(without, gpu)
        key = (without, gpu)
        if key not in self._analogs:
            base = self.predict(without, case, gpu)
            cols = []
            for a in analogs:
                path = None
                if self.cache is not None:
                    path = self.cache / f"{'-'.join(sorted(without))}.{gpu}.as.{a}.npy"
                    if path.is_file():
                        z = np.load(path)
                        if len(z) == len(case.rows):
                            cols.append(z)
                            continue
                z = analog_matrix(self._model(without), case.asked, base, [a])[:, 0]
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    np.save(path, z)
                cols.append(z)
            self._analogs[key] = np.column_stack(cols) if cols else np.zeros((len(case.rows), 0))
        return self._analogs[key], analogs

    def _analog_gpus(self, without: frozenset[str], gpu: str) -> list[str]:
        """The analogs of ``gpu`` for the models fitted without ``without``: the GPUs of the other generations."""
        return sorted(set(self.frame.loc[~np.isin(self.gen, list(without)), "gpu"].astype(str)) - {gpu})

    def analog_rows(self, without: frozenset[str], case: _GPUCase, gpu: str) -> pd.DataFrame:
        """``case``'s asked rows with their analog columns (:meth:`analog`), joined once per (model, GPU)."""
        from ..calibrate import with_analogs

        key = (without, gpu)
        if key not in self._analog_rows:
            self._analog_rows[key] = with_analogs(case.asked, *self.analog(without, case, gpu))
        return self._analog_rows[key]

    def can_refit(self) -> bool:
        """Whether the estimator's ``fit`` takes ``sample_weight`` (needed by the refit options)."""
        return _can_refit(self.estimator)

    def refit_predict(
        self, without: frozenset[str], cases: dict[str, _GPUCase], shots: int, weight: float
    ) -> dict[str, np.ndarray]:
        """Latency (us) of each case's rows by the model refitted with the cases' shots as training rows.

        The training rows are those of :meth:`predict`'s model (the generations but ``without``,
        the same cap) plus every case's ``shots`` planned rows, each weighing ``weight`` rows.
        """
        from sklearn.base import clone

        from ..model import cap_rows

        key = (without, tuple(sorted(cases)), shots, float(weight))
        if key not in self._refits:
            est, cap, seed = _uncapped(self.estimator)
            train = self.frame[~np.isin(self.gen, list(without))]
            if cap:
                train = cap_rows(train, cap, by=("gpu",), seed=seed)
            shot_rows = [c.rows.iloc[c.plans[shots]] for c in cases.values()]
            rows = pd.concat([train, *shot_rows], ignore_index=True)
            w = np.concatenate([np.ones(len(train)), np.full(sum(len(x) for x in shot_rows), float(weight))])
            from ._suite import GroupTraining

            held = (
                {"held_out": sorted(without)} if isinstance(est, GroupTraining) else {}
            )  # shots are not training rows
            model = clone(est).fit(rows, sample_weight=w, **held)
            self._refits[key] = {g: np.asarray(model.predict(c.asked), dtype=float) for g, c in cases.items()}
            self._refit_models[key] = model
            if self.progress is not None:
                self.progress.update()
        return self._refits[key]

    def refit_analog_rows(
        self, without: frozenset[str], cases: dict[str, _GPUCase], shots: int, weight: float, gpu: str
    ) -> pd.DataFrame:
        """``cases[gpu]``'s asked rows with the analog columns of the model refitted with the shots
        (:meth:`refit_predict`): z_g = log(refitted model on analog g / refitted model on ``gpu``), the analogs being
        the training generations' GPUs (:meth:`analog`), so the refit's own view of the trained GPUs."""
        from ..calibrate import analog_matrix, with_analogs

        key = (without, tuple(sorted(cases)), shots, float(weight))
        if (*key, gpu) not in self._refit_analog_rows:
            if key not in self._refit_models:  # released (or never fitted): fit it (again)
                self._refits.pop(key, None)
            base = self.refit_predict(without, cases, shots, weight)[gpu]
            analogs = self._analog_gpus(without, gpu)
            matrix = analog_matrix(self._refit_models[key], cases[gpu].asked, base, analogs)
            self._refit_analog_rows[(*key, gpu)] = with_analogs(cases[gpu].asked, matrix, analogs)
        return self._refit_analog_rows[(*key, gpu)]

    def release_refits(self) -> None:
        """Drop the refitted models and their analog rows (their predictions stay cached)."""
        self._refit_models.clear()
        self._refit_analog_rows.clear()


def _uncapped(estimator: Any) -> tuple[Any, int | None, int]:
    """(the estimator that is fitted, the training cap per GPU or None, the cap's seed)."""
    from ._suite import CappedTraining

    if isinstance(estimator, CappedTraining):
        return estimator.estimator, estimator.max_rows_per_gpu, estimator.random_state
    return estimator, None, 0


def _can_refit(estimator: Any) -> bool:
    """Whether the fitted estimator's ``fit`` takes ``sample_weight`` (needed by the refit options)."""
    from sklearn.utils.validation import has_fit_parameter

    return bool(has_fit_parameter(_uncapped(estimator)[0], "sample_weight"))


def _option_errors(
    models: _BaseModels,
    without: frozenset[str],
    cases: dict[str, _GPUCase],
    base: dict[str, np.ndarray],
    shots: int,
    option: dict[str, Any],
) -> dict[str, np.ndarray]:
    """APE (%) of the scored rows of each case (one generation's GPUs) under one calibration option:
    ``base`` (zero-shot predictions per GPU), or for a refit option the model refitted with the shots; an option with
    ``analog_penalty`` reads the analog coordinates of the model it corrects (the refitted one after a refit)."""
    preds = base
    refit = float(option.get("refit_weight") or 0.0) if shots > 0 else 0.0
    if refit:
        preds = models.refit_predict(without, cases, shots, refit)
    use_analogs = shots > 0 and bool(option.get("analog_penalty")) and option.get("method") != "none"

    def rows(g: str, c: _GPUCase) -> pd.DataFrame | None:
        if not use_analogs:
            return None
        # a refit reads the refitted model's analog coordinates, else the zero-shot model's
        return models.refit_analog_rows(without, cases, shots, refit, g) if refit else models.analog_rows(without, c, g)

    return {g: c.errors(preds[g], shots, option, rows(g, c)) for g, c in cases.items()}


def few_shot_fold(
    frame: pd.DataFrame,
    held_out: str,
    models: _BaseModels,
    shots: Sequence[int],
    *,
    cases: dict[str, _GPUCase],
    options: Sequence[dict[str, Any]] = OPTIONS,
) -> dict[str, Any]:
    """One leave-one-generation-out fold: choose options in the training generations, score held-out.

    ``frame``: featurized rows of one evaluation family with ``generation``, ``gpu``,
    ``latency_us``; ``models``: the zero-shot models by excluded generations; ``cases``:
    :class:`_GPUCase` per GPU. Returns ``{"by_gpu", "generation", "chosen", "inner"}`` (APE
    statistics in %).
    """
    from ..calibrate import FAMILY_ANALOG_PENALTY, FAMILY_REGIME_FEATURES

    gen = frame["generation"].astype(str).to_numpy()
    train_gens = sorted(set(gen) - {held_out})
    if not models.can_refit():  # an estimator whose fit takes no sample_weight: no refit options
        options = [o for o in options if not o.get("refit_weight")]
    families = set(frame["family"].astype(str)) if "family" in frame else set()
    if not families & set(FAMILY_REGIME_FEATURES):  # the family's own coordinates are the generic ones
        options = [o for o in options if o.get("regime", "generic") != "family"]
    if not families & set(FAMILY_ANALOG_PENALTY):  # the analog options are offered where they were screened in
        options = [o for o in options if not o.get("analog_penalty")]
    # 1. inner simulation: each training generation plays the new GPU (model without it and held_out)
    inner: dict[int, list[list[float]]] = {s: [] for s in shots}
    for t in train_gens:
        gpus = sorted(set(frame.loc[gen == t, "gpu"].astype(str)))
        without = frozenset({held_out, t})
        inner_cases = {g: cases[g] for g in gpus}
        preds = {g: models.predict(without, cases[g], g) for g in gpus}
        for s in shots:
            per_opt = []
            for opt in options if s > 0 else options[:1]:
                errs = _option_errors(models, without, inner_cases, preds, s, opt)
                per_opt.append(float(np.concatenate(list(errs.values())).mean()))
            inner[s].append(per_opt)
            models.release_refits()
    chosen: dict[str, dict[str, Any]] = {}
    inner_out: dict[str, list[float]] = {}
    for s in shots:
        scores = np.asarray(inner[s], dtype=float).mean(axis=0) if inner[s] else np.zeros(1)
        best = int(np.argmin(scores))
        chosen[str(s)] = dict(options[best] if s > 0 else options[0])
        inner_out[str(s)] = [round(float(v), 4) for v in scores]
    # 2. the held-out generation
    gpus = sorted(set(frame.loc[gen == held_out, "gpu"].astype(str)))
    held = {g: cases[g] for g in gpus}
    base = {g: models.predict(frozenset({held_out}), cases[g], g) for g in gpus}
    by_gpu: dict[str, dict[str, Any]] = {}
    pooled: dict[str, Any] = {}
    for s in shots:
        gpu_errs = _option_errors(models, frozenset({held_out}), held, base, s, chosen[str(s)])
        by_gpu[str(s)] = {g: _stats(e) for g, e in gpu_errs.items()}
        pooled[str(s)] = _stats(np.concatenate(list(gpu_errs.values())))
        models.release_refits()
    return {
        "by_gpu": by_gpu,
        "generation": pooled,
        "chosen": chosen,
        "inner": inner_out,
        "inner_generations": train_gens,
    }


def _eval_labels(families: Sequence[str] | None) -> list[str]:
    """The evaluation families asked for (default bf16 GEMM and fused MoE); an unknown one raises."""
    from ._suite import EVAL_FAMILIES

    labels = list(families or ("gemm_bf16", "fused_moe_bf16"))
    bad = [f for f in labels if f not in EVAL_FAMILIES]
    if bad:
        raise DataError(f"unknown evaluation family {bad}", hint=f"use some of {list(EVAL_FAMILIES)}")
    return labels


def _zero_shot_families(
    families: Sequence[str] | None,
    data: str | os.PathLike[str] | None,
    max_rows: int | None,
    n_estimators: int | None,
    cache_dir: str | Path | None,
) -> Iterator[tuple[str, pd.DataFrame, list[str], _BaseModels]]:
    """Per evaluation family with rows: (label, its rows, its generations oldest first, the zero-shot models
    of its leave-one-generation-out folds, as :func:`run_few_shot` fits and caches them)."""
    from ._suite import labels_to_load, load_eval_frame

    labels = _eval_labels(families)
    frame, _drops, _fp = load_eval_frame(data, labels_to_load(labels))
    has_sass = any(c.startswith("sass_") for c in frame.columns)
    for label in labels:
        sub = frame[frame["eval_family"] == label].reset_index(drop=True)
        if sub.empty:
            continue
        est = _zero_shot_estimator(label, frame, has_sass, max_rows, n_estimators)
        cache = _cache_path(cache_dir, sub, label, max_rows, n_estimators, est)
        yield label, sub, order_generations(sub["generation"].astype(str)), _BaseModels(sub, est, None, cache)


def _zero_shot_estimator(
    label: str, frame: pd.DataFrame, has_sass: bool, max_rows: int | None, n_estimators: int | None
) -> Any:
    """The zero-shot model of ``label``'s folds: the ``pipeweave`` method of the LOGO suite (same cap, seed)."""
    from ._suite import make_methods, with_group_training

    # one XGBoost thread: on a shared, oversubscribed machine two threads run ~5x slower
    methods = make_methods(
        ["pipeweave"],
        label=label,
        has_sass=has_sass,
        max_rows_per_gpu=max_rows,
        n_estimators=n_estimators,
        n_jobs=1,
        seen_gpu=False,  # the held-out GPU has no training rows (its shots are below SEEN_GPU_MIN_ROWS)
    )
    return with_group_training(methods, label, frame, max_rows)["pipeweave"]


def _cache_path(
    cache_dir: str | Path | None,
    sub: pd.DataFrame,
    label: str,
    max_rows: int | None,
    n_estimators: int | None,
    est: Any,
) -> Path | None:
    """Where the zero-shot predictions of ``label``'s folds are cached: keyed by the rows, the settings, the
    model recipe's constants, the feature lists and the package's own code (:func:`_code_digest`: a cache made
    by other code, e.g. before a front-end formula changed, is not reused); ``None`` without a cache dir."""
    if cache_dir is None:
        return None
    import hashlib
    import json

    from .. import model as pw_model
    from ..sources import PROFILE_COLUMNS, data_fingerprint

    rows_fp = data_fingerprint(sub[[c for c in PROFILE_COLUMNS if c in sub.columns]])
    # the recipe constants the estimator's None defaults resolve to (repr shows only non-defaults)
    recipe = [
        getattr(pw_model, n)
        for n in (
            "FAMILY_BOOSTER_ROWS",
            "FAMILY_REFERENCE",
            "FAMILY_COMPANION",
            "COMPANION_PARAMS",
            "GPU_BLIND_FAMILIES",
            "INFORMATIVE_SAMPLING_FAMILIES",
            "MIN_BACKEND_GPUS",
            "FAMILY_ROOFLINE_BLEND",
            "ROOFLINE_GENERATION_GATE",
            "SIBLING_COMPANION",
            "FAMILY_EXTRA_FEATURES",
            "DEFAULT_MAX_ROWS_PER_GROUP",
        )
    ]
    from ..frontend import EXTRA_FEATURES, FEATURES

    recipe += [list(FEATURES), list(EXTRA_FEATURES)]
    key = json.dumps(
        [rows_fp, label, max_rows, n_estimators, repr(est), recipe, _code_digest()], default=str, sort_keys=True
    )
    return Path(cache_dir) / f"{label}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def _code_digest(root: Path | None = None) -> str:
    """SHA-256 (hex) of the package's code and data files (``*.py``, ``*.toml``, ``*.json`` under ``root``,
    default the installed ``pipeweave`` folder), by relative path: any edit changes it."""
    import hashlib

    base = Path(__file__).resolve().parents[1] if root is None else Path(root)
    h = hashlib.sha256()
    for f in sorted(p for p in base.rglob("*") if p.suffix in (".py", ".toml", ".json") and p.is_file()):
        h.update(f.relative_to(base).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _checked_options(options: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``options`` as a list of dicts, the first the uncorrected model; a bad entry raises, naming it."""
    opts: list[Any] = [options] if isinstance(options, (str, dict)) else list(options)
    for i, o in enumerate(opts):
        if not isinstance(o, dict) or o.get("method", "gp") not in METHODS:
            raise DataError(
                f"few-shot option {i} must be a dict with a method in {list(METHODS)}, got {shown(o)}",
                hint="e.g. {'method': 'gp', 'length_scale': 4.0, 'noise': 0.3}",
            )
    if not opts or opts[0] != {"method": "none"}:
        raise DataError(
            "the first few-shot option must be the uncorrected model {'method': 'none'}, got "
            + (shown(opts[0]) if opts else "no options"),
            hint="start the options with pipeweave.evaluation.FEW_SHOT_OPTIONS[0]",
        )
    return opts


def run_few_shot(
    *,
    families: Sequence[str] | None = None,
    shots: Sequence[int] = DEFAULT_SHOTS,
    out: str | Path = "experiments/few_shot",
    data: str | os.PathLike[str] | None = None,
    max_train_rows_per_gpu: int | None = 4_000,
    n_estimators: int | None = _DEFAULT_N_ESTIMATORS,
    seed: int = 0,
    progress: bool = True,
    plots: bool = True,
    cache_dir: str | Path | None = None,
    options: Sequence[dict[str, Any]] = OPTIONS,
    refresh: bool = False,
) -> dict:
    """Run the few-shot protocol on the evaluation ``families`` and write results.json/.md and figures.

    ``refresh=True``: merge the run into the few-shot report already in ``out``
    (:func:`merge_few_shot_reports`), replacing those families there and keeping the others (each family
    keeps its own data fingerprint); refused before any fit unless the report's shots, options, training
    cap, boosting rounds and seed are this run's.

    ``cache_dir``: keep the zero-shot models' predictions there (keyed by the data fingerprint and
    the model settings), so a re-run only redoes the planning and calibration. ``options``: the
    calibration options the inner folds choose among (default :data:`OPTIONS`; keyword arguments of
    :class:`~pipeweave.calibrate.ResidualCorrection`, plus ``refit_weight``), the first being the
    uncorrected model.
    """
    from tqdm.auto import tqdm

    from ._suite import labels_to_load, load_eval_frame

    shots = sorted({int(s) for s in shots})
    if not shots or shots[0] < 0:
        raise DataError(f"shots must be integers >= 0, got {list(shots)}", hint="e.g. shots=(0, 8, 32, 128)")
    labels = _eval_labels(families)
    options = _checked_options(options)
    settings = {"max_train_rows_per_gpu": max_train_rows_per_gpu, "n_estimators": n_estimators, "seed": seed}
    previous = _refreshed_few_shot(out, families, shots, options, settings) if refresh else None
    t0 = time.perf_counter()
    frame, _drops, fp = load_eval_frame(data, labels_to_load(labels))  # + rows that only train (group_labels)
    has_sass = any(c.startswith("sass_") for c in frame.columns)
    results: dict[str, Any] = {}
    by_gpu: dict[str, Any] = {}
    chosen: dict[str, Any] = {}
    inner: dict[str, Any] = {}
    for label in labels:
        sub = frame[frame["eval_family"] == label].reset_index(drop=True)
        if sub.empty:
            continue
        est = _zero_shot_estimator(label, frame, has_sass, max_train_rows_per_gpu, n_estimators)
        gens = order_generations(sub["generation"].astype(str))
        cases = {
            g: _GPUCase(sub[sub["gpu"].astype(str) == g], shots, seed) for g in sorted(set(sub["gpu"].astype(str)))
        }
        n_refits = sum(1 for s in shots if s > 0) if _can_refit(est) else 0
        bar = tqdm(  # zero-shot fits, inner refits, and at most one refit per held-out generation and shot count
            total=len(gens) * (len(gens) + 1) // 2
            + len(gens) * (len(gens) - 1) * n_refits * len(REFIT_WEIGHTS)
            + len(gens) * n_refits,
            desc=f"few-shot {label}",
            unit="fit",
            disable=None if progress else True,
        )
        cache = _cache_path(cache_dir, sub, label, max_train_rows_per_gpu, n_estimators, est)
        if cache is not None:
            print(f"  {label}: zero-shot predictions cached in {cache}", flush=True)
        models = _BaseModels(sub, est, bar, cache)
        results[label], by_gpu[label], chosen[label], inner[label] = {str(s): {} for s in shots}, {}, {}, {}
        try:
            for g in gens:
                fold = few_shot_fold(sub, g, models, shots, cases=cases, options=options)
                print(
                    f"  {label} held-out {g}: "
                    + ", ".join(f"{s} shots {fold['generation'][str(s)]['mape']:.1f}%" for s in shots),
                    flush=True,
                )
                for s in shots:
                    results[label][str(s)][g] = fold["generation"][str(s)]
                by_gpu[label][g] = fold["by_gpu"]
                chosen[label][g] = fold["chosen"]
                inner[label][g] = {"generations": fold["inner_generations"], "mape_per_option": fold["inner"]}
        finally:
            bar.close()
    elapsed = time.perf_counter() - t0
    report = {
        "protocol": "few-shot",
        "data_fingerprint": fp,
        "units": {"mape": "%", "median_ape": "%", "p90_ape": "%", "n": "rows"},
        "shots": shots,
        "results": results,
        "by_gpu": by_gpu,
        "chosen": chosen,
        "options": list(options),
        "inner": inner,
        "extra": {
            "command": "pipeweave evaluate --protocol few-shot --shots "
            + " ".join(map(str, shots))
            + " --families "
            + " ".join(labels),
            "max_train_rows_per_gpu": max_train_rows_per_gpu,
            "n_estimators": n_estimators,
            "seed": seed,
            "sass_features": has_sass,
            "elapsed_s": round(elapsed, 1),
        },
    }
    if previous is not None and previous["results"]:  # the report's other families, kept as they are
        report = merge_few_shot_reports([previous, report])
    write_few_shot_report(report, out, plots=plots)
    print(f"few-shot protocol in {elapsed / 60:.1f} min; wrote {out}/results.json", flush=True)
    return report


def _refreshed_few_shot(
    out: str | Path,
    families: Sequence[str] | None,
    shots: Sequence[int],
    options: Sequence[dict[str, Any]],
    settings: dict[str, Any],
) -> dict:
    """The few-shot report in ``out`` without ``families`` (what a refresh of them merges into), after checking
    that it was made with this run's shots, options and settings."""
    from ._report import _report_to_refresh

    def check(report: dict) -> None:
        if not all(isinstance(report[k], dict) for k in ("extra", "results", "by_gpu", "chosen", "inner")):
            raise TypeError("its results, by_gpu, chosen, inner and extra are not all mappings")

    old = _report_to_refresh(out, families, "few-shot report", check)
    old_extra = old["extra"]
    families = list(families or ())  # named: checked above
    want = {"protocol": "few-shot", "shots": list(shots), "options": list(options)}
    diff = [f"{k}: {shown(old.get(k))} -> {shown(v)}" for k, v in want.items() if old.get(k) != v]
    diff += [
        f"extra.{k}: {shown(old_extra.get(k))} -> {shown(v)}" for k, v in settings.items() if old_extra.get(k) != v
    ]
    if diff:
        raise DataError(
            f"cannot refresh {sorted(families)} in {str(out)!r}: the report was made with other settings ("
            + "; ".join(diff)
            + ")",
            hint="re-run the whole report without refresh, or refresh with the report's own settings",
        )
    drop = set(families)
    kept = dict(old)
    for key in ("results", "by_gpu", "chosen", "inner"):
        kept[key] = {f: v for f, v in old[key].items() if f not in drop}
    kept["data_fingerprint"] = {f: _fingerprint_of(old, f) for f in kept["results"]}
    runs = old_extra.get("runs", [old_extra])  # a run all of whose families are refreshed is dropped
    kept["extra"] = {**old_extra, "runs": [r for r in runs if not _run_families_of(r) <= drop]}
    return kept


def _run_families_of(run: Mapping[str, Any]) -> set[str]:
    """The families a few-shot run's recorded command names (``--families a b ...``)."""
    from ._report import _command_option

    return set(_command_option(str(run.get("command", "")), "--families") or ())


#: shot counts of :func:`calibrated_band_coverage` (a band needs CALIBRATED_BAND_MIN_SHOTS launches)
BAND_SHOTS: tuple[int, ...] = (16, 32, 64, 128)


def band_coverage_fold(
    frame: pd.DataFrame,
    held_out: str,
    models: _BaseModels,
    shots: Sequence[int],
    *,
    label: str = "",
    seed: int = 0,
    refit_weight: float | None = None,
) -> list[dict[str, Any]]:
    """One fold of :func:`calibrated_band_coverage`: each GPU of the ``held_out`` generation calibrated by the
    default :class:`~pipeweave.calibrate.ResidualCorrection` on each shot count's planned launches and scored
    on its rows no shot count measured (MAPE % and the share % inside the 50 / 80 / 90% bands).

    ``refit_weight``: the refit recipe instead: the model refitted with the generation's shots (each weighing
    that many rows), the correction fitted on the refit's residuals, and the band borrowed from the correction
    of the model without the refit (:meth:`~pipeweave.calibrate.ResidualCorrection.borrow_band`, what
    ``calibrate fit`` does with a band model). Without the refit, a family and shot count for which ``calibrate
    fit`` adds the analog-GPU term by default (:func:`~pipeweave.calibrate.default_analog_penalty`) gets it, read
    from the zero-shot model (column ``analog_penalty``); the refit recipe is scored without it."""
    from ..calibrate import ResidualCorrection, default_analog_penalty, regime_features

    gen, gpu_col = frame["generation"].astype(str), frame["gpu"].astype(str)
    without = frozenset({held_out})
    cases = {gpu: _GPUCase(frame[gpu_col == gpu], shots, seed) for gpu in sorted(set(gpu_col[gen == held_out]))}
    recipe = "gp" if refit_weight is None else f"refit{refit_weight:g}+gp"
    out: list[dict[str, Any]] = []
    for gpu, case in cases.items():
        base = models.predict(without, case, gpu)
        lat = case.lat[case.score]
        coords = regime_features(case.family)  # calibrate fit's default coordinates for the family
        for n in shots:
            plan = case.plans[n]
            penalty = default_analog_penalty(case.family, n) if refit_weight is None else 0.0
            rows, score_rows = case.asked, case.score_rows
            if penalty > 0:  # calibrate fit's default analog term for the family
                rows = models.analog_rows(without, case, gpu)
                score_rows = rows.loc[case.score]
            corr = ResidualCorrection(features=coords, analog_penalty=penalty).fit(
                rows.iloc[plan], np.log(case.lat[plan] / base[plan])
            )
            if refit_weight is not None:
                refit = models.refit_predict(without, cases, n, float(refit_weight))[gpu]
                own = ResidualCorrection(features=coords).fit(
                    case.asked.iloc[plan], np.log(case.lat[plan] / refit[plan]), band=False
                )
                corr, base_n = own.borrow_band(corr), refit
            else:
                base_n = base
            pred = np.maximum(base_n[case.score] * np.exp(corr.predict(score_rows)), case.t_lower[case.score])
            rec: dict[str, Any] = {
                "family": label,
                "recipe": recipe,
                "analog_penalty": penalty,
                "generation": held_out,
                "gpu": gpu,
                "shots": len(plan),
                "n": int(len(lat)),
                "mape": float(np.mean(ape(pred, lat))),
            }
            for cov in (0.5, 0.8, 0.9):
                r_lo, r_hi = corr.band_ratio(score_rows, cov)
                inside = (lat >= pred * r_lo) & (lat <= pred * r_hi)
                rec[f"cover{round(cov * 100)}"] = float(inside.mean() * 100) if len(corr.band_t_) else np.nan
                rec[f"width{round(cov * 100)}"] = float(np.median(np.log(r_hi / r_lo)))
            out.append(rec)
    return out


def calibrated_band_coverage(
    *,
    families: Sequence[str] | None = None,
    shots: Sequence[int] = BAND_SHOTS,
    data: str | os.PathLike[str] | None = None,
    max_train_rows_per_gpu: int | None = 4_000,
    n_estimators: int | None = _DEFAULT_N_ESTIMATORS,
    seed: int = 0,
    progress: bool = True,
    cache_dir: str | Path | None = None,
    refit_weight: float | None = None,
) -> pd.DataFrame:
    """Do a calibrated GPU's error bands hold on its launches that were not measured? (few-shot folds)

    On every leave-one-generation-out fold, each held-out GPU is calibrated the way ``pipeweave calibrate
    fit`` does it by default (:class:`~pipeweave.calibrate.ResidualCorrection` with its default settings)
    on ``shots`` launches planned among its measured rows, and its other rows (those no shot count
    measured, as in :func:`run_few_shot`) are scored: MAPE (%) of the calibrated prediction and the share
    (%) of measurements inside its 50 / 80 / 90% band, with the band's median width ``log(hi / lo)``.
    Returns one row per family, held-out generation, GPU and shot count (columns ``family, recipe,
    generation, gpu, shots, n, analog_penalty, mape, cover50, cover80, cover90, width50, width80, width90``). The zero-shot
    models are those of :func:`run_few_shot` (and share its ``cache_dir`` layout). ``refit_weight``: score the
    refit recipe instead (see :func:`band_coverage_fold`; ``recipe`` = ``refit<W>+gp``).
    """
    from tqdm.auto import tqdm

    from ..calibrate import CALIBRATED_BAND_MIN_SHOTS

    shots = sorted({int(s) for s in shots})
    if not shots or shots[0] < CALIBRATED_BAND_MIN_SHOTS:
        raise DataError(
            f"shots must be integers >= {CALIBRATED_BAND_MIN_SHOTS} (fewer launches give no band), got {list(shots)}",
            hint=f"e.g. shots={BAND_SHOTS}",
        )
    out: list[dict[str, Any]] = []
    for label, sub, gens, models in _zero_shot_families(
        families, data, max_train_rows_per_gpu, n_estimators, cache_dir
    ):
        bar = tqdm(total=len(gens), desc=f"calibrated bands {label}", unit="fold", disable=None if progress else True)
        try:
            for g in gens:
                out += band_coverage_fold(sub, g, models, shots, label=label, seed=seed, refit_weight=refit_weight)
                bar.update()
        finally:
            bar.close()
    return pd.DataFrame(out)


#: workload sizes (launches per workload) of :func:`workload_band_coverage`
WORKLOAD_SIZES: tuple[int, ...] = (1, 5, 20, 100)


def workload_band_rows(
    held: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]],
    sizes: Sequence[int],
    levels: Sequence[float],
    *,
    n_workloads: int,
    max_count: int,
    rng: np.random.Generator,
    label: str = "",
) -> list[dict[str, Any]]:
    """The scoring of :func:`workload_band_coverage` on given held-out predictions.

    ``held``: ``(generation, gpu) -> (measured us, predicted us)`` of each GPU's launches, predicted by a model
    that did not train on that generation; ``levels``: the two quantile levels of the band. The band of a
    generation comes from the other generations' ratios only (each generation weighing the same).
    """
    from ..model import weighted_quantiles

    out: list[dict[str, Any]] = []
    for g in dict.fromkeys(gg for gg, _ in held):
        other = [(gg, lat, p) for (gg, _), (lat, p) in held.items() if gg != g]
        if not other:
            raise DataError(
                f"generation {g!r} has no other generation to take its band from",
                hint="score at least two generations",
            )
        gen_rows = pd.Series([len(lat) for _, lat, _ in other]).groupby([gg for gg, _, _ in other]).sum()
        r = np.concatenate([np.log(lat / p) for _, lat, p in other])
        w = np.concatenate(
            [np.full(len(lat), 1.0 / gen_rows[gg]) for gg, lat, _ in other]
        )  # generations weigh the same
        q_lo, q_hi = np.exp(weighted_quantiles(r, w, levels))
        for (gg, gpu), (lat, pred) in held.items():
            if gg != g:
                continue
            for k in sizes:
                idx = rng.integers(0, len(lat), size=(n_workloads, k))
                cnt = rng.integers(1, max_count + 1, size=(n_workloads, k))
                tm, tp = (lat[idx] * cnt).sum(1), (pred[idx] * cnt).sum(1)
                out.append(
                    {
                        "family": label,
                        "generation": g,
                        "gpu": gpu,
                        "launches": k,
                        "inside": float(np.mean((tm >= tp * q_lo) & (tm <= tp * q_hi)) * 100),
                        "mape": float(np.mean(ape(tp, tm))),
                        "band_lo": float(q_lo),
                        "band_hi": float(q_hi),
                    }
                )
    return out


def workload_band_coverage(
    *,
    families: Sequence[str] | None = None,
    sizes: Sequence[int] = WORKLOAD_SIZES,
    n_workloads: int = 2000,
    max_count: int = 64,
    coverage: float = 0.8,
    data: str | os.PathLike[str] | None = None,
    max_train_rows_per_gpu: int | None = 4_000,
    n_estimators: int | None = _DEFAULT_N_ESTIMATORS,
    seed: int = 0,
    progress: bool = True,
    cache_dir: str | Path | None = None,
) -> pd.DataFrame:
    """Does the band of a workload's total (``pipeweave compare``: the launches' bands added end to end) hold?

    On every leave-one-generation-out fold, the zero-shot model (:func:`run_few_shot`'s) predicts the held-out
    generation's measured launches, and the band is the one a new generation gets
    (:func:`pipeweave.model.weighted_quantiles` of the other generations' held-out ``measured / predicted``,
    each generation weighing the same; the held-out one is not used). For each held-out GPU,
    ``n_workloads`` random workloads of ``k`` launches (drawn from its measured launches, each with a random
    count 1..``max_count``) are scored: the share (%) whose measured total ``sum(count x latency)`` lies inside
    ``[sum(count x pred x q_lo), sum(count x pred x q_hi)]``, and the MAPE (%) of the predicted total.
    ``k = 1`` is the single-launch band. Returns one row per family, held-out generation, GPU and ``k``
    (columns ``family, generation, gpu, launches, inside, mape, band_lo, band_hi``).
    """
    from tqdm.auto import tqdm

    from ..model import BAND_LEVELS, coverage_levels

    levels = [BAND_LEVELS[i] for i in coverage_levels(coverage)]
    sizes = sorted({int(k) for k in sizes})
    if not sizes or sizes[0] < 1 or n_workloads < 1 or max_count < 1:
        raise DataError(
            f"sizes must be integers >= 1 and n_workloads, max_count >= 1, got {sizes}, {n_workloads}, {max_count}",
            hint=f"e.g. sizes={WORKLOAD_SIZES}",
        )
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for label, sub, gens, models in _zero_shot_families(
        families, data, max_train_rows_per_gpu, n_estimators, cache_dir
    ):
        gen, gpu_col = sub["generation"].astype(str), sub["gpu"].astype(str)
        held: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        bar = tqdm(total=len(gens), desc=f"workload bands {label}", unit="fold", disable=None if progress else True)
        try:
            for g in gens:
                for gpu in sorted(set(gpu_col[gen == g])):
                    case = _GPUCase(sub[gpu_col == gpu], (), seed)
                    held[(g, gpu)] = (case.lat, models.predict(frozenset({g}), case, gpu))
                bar.update()
        finally:
            bar.close()
        out += workload_band_rows(
            held, sizes, levels, n_workloads=n_workloads, max_count=max_count, rng=rng, label=label
        )
    return pd.DataFrame(out)


def write_few_shot_report(report: dict, out: str | Path, *, plots: bool = True) -> None:
    """Write ``results.json``, ``results.md`` and the MAPE-vs-shots figures (PNG + CSV) under ``out``."""
    from .._io import atomic_write_json, atomic_write_text

    outp = Path(out)
    atomic_write_json(outp / "results.json", report)
    atomic_write_text(outp / "results.md", render_few_shot_markdown(report))
    if plots:
        from ._report import _save_csv, _save_png  # the report's atomic figure writers

        for label in report["results"]:
            data = plot_data_few_shot(report, label)
            _save_csv(data, outp / "figures" / f"{label}.mape_vs_shots.csv")
            _save_png(plot_few_shot(data, title=label), outp / "figures" / f"{label}.mape_vs_shots.png", 110)


def _fingerprint_of(report: dict, family: str) -> str:
    """The data fingerprint of ``family``'s rows in a report (a merged report keeps one per family)."""
    fp = report["data_fingerprint"]
    return str(fp[family]) if isinstance(fp, dict) else str(fp)


def merge_few_shot_reports(reports: Sequence[dict]) -> dict:
    """One report from runs of the same protocol settings on different families (e.g. run in parallel);
    a report that is itself a merge can be merged again (its runs and per-family fingerprints are kept)."""
    if not reports:
        raise DataError("no few-shot reports to merge", hint="pass results.json files of few-shot runs")
    first = reports[0]
    for r in reports[1:]:
        for key in ("shots", "options"):
            if r.get(key) != first.get(key):
                raise DataError(f"few-shot reports differ in {key!r}", hint="merge runs made with the same settings")
    out = {k: v for k, v in first.items() if k not in ("results", "by_gpu", "chosen", "inner", "extra")}
    for key in ("results", "by_gpu", "chosen", "inner"):
        out[key] = {fam: v for r in reports for fam, v in r[key].items()}
    fams = list(out["results"])
    out["data_fingerprint"] = {fam: _fingerprint_of(r, fam) for r in reports for fam in r["results"]}
    # a merged report's own runs are carried over, so merging is associative
    runs = [run for r in reports for run in r["extra"].get("runs", [r["extra"]])]
    out["extra"] = {
        **first["extra"],
        "command": "pipeweave evaluate --protocol few-shot --shots "
        + " ".join(map(str, first["shots"]))
        + " --families "
        + " ".join(fams),
        "runs": runs,
        "elapsed_s": round(sum(float(run.get("elapsed_s", 0)) for run in runs), 1),
    }
    return out


def plot_data_few_shot(report: dict, family: str) -> pd.DataFrame:
    """MAPE (%) against shots per held-out generation: columns ``generation, shots, mape, median_ape, p90_ape, n``."""
    rows = []
    for s, per_gen in report["results"].get(family, {}).items():
        for g, st in per_gen.items():
            rows.append({"generation": g, "shots": int(s), **st})
    cols = ["generation", "shots", "mape", "median_ape", "p90_ape", "n"]
    if not rows:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(rows)[cols]
    order = {g: i for i, g in enumerate(order_generations(df["generation"]))}
    return df.sort_values(
        ["generation", "shots"], key=lambda c: c.map(order) if c.name == "generation" else c, ignore_index=True
    )


def plot_few_shot(data: pd.DataFrame, *, title: str = "", ax: Axes | None = None) -> Axes:
    """Draw :func:`plot_data_few_shot` output: one line per generation, MAPE (%) vs shots (symlog x)."""
    from ._plots import _GEN_COLORS, new_axes

    if ax is None:
        ax = new_axes(figsize=(5.5, 4.0))[0, 0]
    for g in pd.unique(data["generation"]):
        d = data[data["generation"] == g]
        ax.plot(d["shots"], d["mape"], marker="o", label=str(g), color=_GEN_COLORS.get(str(g)))
    ax.set_xscale("symlog", linthresh=8)
    ticks = sorted(pd.unique(data["shots"])) if len(data) else []
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.axhline(8.0, color="grey", lw=0.8, ls="--", label="8% goal")
    ax.set_xlabel("launches measured on the held-out GPU (shots)")
    ax.set_ylabel("MAPE % (held-out generation)")
    ax.set_title(title)
    ax.legend(title="held out")
    return ax


def render_few_shot_markdown(report: dict) -> str:
    """results.md: per family, MAPE (%) per shot count and held-out generation, and the chosen options."""
    lines = [
        "# Few-shot calibration (leave-one-generation-out)",
        "",
        (
            f"Command: `{report['extra']['command']}`. MAPE in % on the held-out generation's rows that no "
            "shot count measured (same rows for every shot count); shots are per GPU. Calibration option per "
            "shot count chosen inside the training generations (see `chosen`, `inner` in results.json)."
        ),
        "",
    ]
    for fam, per_shot in report["results"].items():
        gens = order_generations({g for v in per_shot.values() for g in v})
        lines += [f"## {fam}", "", "| shots | " + " | ".join(gens) + " |", "|---:|" + "---:|" * len(gens)]
        for s, per_gen in per_shot.items():
            lines.append(
                f"| {s} | " + " | ".join(f"{per_gen[g]['mape']:.1f}" if g in per_gen else "–" for g in gens) + " |"
            )
        lines += ["", "Chosen calibration (per held-out generation, per shot count):", ""]
        for g, ch in report["chosen"].get(fam, {}).items():
            lines.append(
                f"- {g}: "
                + "; ".join(f"{s}: " + ",".join(f"{k}={v}" for k, v in o.items()) for s, o in ch.items() if s != "0")
            )
        lines.append("")
    return "\n".join(lines) + "\n"
