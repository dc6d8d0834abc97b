"""One diagnosis: predicted latency, ceiling, headroom, binding pipe and ranked tile configs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import DataError
from ..vocab import LATENCY_ORDERED_FAMILIES
from ._ceiling import DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH, CeilingModel
from ._features import SHAPE_COLUMNS, candidate_features
from ._ranker import DEFAULT_RANKER_PATH, ConfigRanker
from ._space import CONFIG_COLUMNS, config_fits, format_config, smem_bytes

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "BELOW_BOUND_TOLERANCE",
    "TUNABLE_FAMILIES",
    "DiagnoseModels",
    "ceiling_error_band",
    "check_invariants",
    "diagnose",
    "headroom_verdict",
]

#: Families with a Triton tile-config space (the ranker and the ceiling apply).
TUNABLE_FAMILIES: tuple[str, ...] = ("moe_w13", "fused_moe", "gemm")
#: Families whose ranker/ceiling were trained and validated on measured sweeps.
VALIDATED_FAMILIES: tuple[str, ...] = ("moe_w13",)


@dataclass
class DiagnoseModels:
    """The models a diagnosis uses: config ranker, ceiling model, per-config latency models.

    ``latency`` predicts any config of ``moe_w13`` (trained on its default-config launches and
    sweeps); ``general`` (the main pipeweave model, optional) predicts the other families.
    """

    ranker: ConfigRanker
    ceiling: CeilingModel | None = None
    latency: Any = None
    general: Any = None
    paths: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, models_dir: str | os.PathLike[str] | None = None, *, general: bool = True) -> DiagnoseModels:
        """Load ``diagnose_ranker.ubj``, ``diagnose_ceiling.ubj``, ``diagnose_latency.ubj`` and the main model
        ``pipeweave_default.ubj`` from ``models_dir`` (default ``models/``).

        A folder without the main model uses the shipped one (it predicts gemm and fused_moe configs, as the
        ``pipeweave.triton`` hook falls back to it); a folder holding only a main model (e.g. one trained on your own
        GEMM tile sweeps) uses it with the shipped diagnose models. ``paths`` names every file used."""
        from ..model import DEFAULT_MODEL_PATH, load_model

        d = Path(models_dir) if models_dir is not None else DEFAULT_RANKER_PATH.parent
        rp, cp, lp = d / DEFAULT_RANKER_PATH.name, d / DEFAULT_CEILING_PATH.name, d / DEFAULT_LATENCY_PATH.name
        gp = d / DEFAULT_MODEL_PATH.name
        missing = [p.name for p in (rp, cp, lp) if not p.is_file()]
        if len(missing) == 3 and d.is_dir() and gp.is_file():  # only a main model: the shipped diagnose models
            rp, cp, lp = DEFAULT_RANKER_PATH, DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH
            missing = [p.name for p in (rp, cp, lp) if not p.is_file()]
        if missing:  # one error for the folder, with the fix that builds all three there
            from ._ranker import rebuild_how

            what = (
                "does not exist"
                if not d.exists()
                else "is not a folder"
                if not d.is_dir()
                else f"has no {', '.join(missing)}"
            )
            raise DataError(
                f"diagnose models folder {str(d)!r} {what}", hint=f"build the diagnose models with `{rebuild_how(d)}`"
            )
        ranker = ConfigRanker.load(rp)
        ceiling = CeilingModel.load(cp)
        latency = load_model(lp)
        paths = {"ranker": str(rp), "ceiling": str(cp), "latency": str(lp)}
        gen = None
        if general and not gp.is_file():
            gp = DEFAULT_MODEL_PATH
        if general and gp.is_file():
            try:
                gen = load_model(gp)
                paths["general"] = str(gp)
            except Exception:  # a stale main model must not break diagnose of moe_w13
                gen = None
        return cls(ranker=ranker, ceiling=ceiling, latency=latency, general=gen, paths=paths)


def _as_row(row: Mapping[str, Any] | pd.DataFrame | pd.Series) -> pd.DataFrame:
    if isinstance(row, pd.DataFrame):
        if len(row) != 1:
            raise DataError(f"diagnose takes one launch row, got {len(row)}", hint="pass df.iloc[[i]]")
        return row.reset_index(drop=True).copy()
    if isinstance(row, pd.Series):
        return row.to_frame().T.reset_index(drop=True).infer_objects()
    return pd.DataFrame([dict(row)])


def _predict_with_specs(model: Any, x: pd.DataFrame, gpus: Mapping[str, GPUSpec] | None) -> np.ndarray:
    """``model.predict(x)``, given the specs of GPUs outside the catalog when the model takes them."""
    import inspect

    if gpus and "gpus" in inspect.signature(model.predict).parameters:
        return np.asarray(model.predict(x, gpus=gpus), dtype=float)
    return np.asarray(model.predict(x), dtype=float)


def _predict_latency(
    models: DiagnoseModels,
    df: pd.DataFrame,
    feats: pd.DataFrame | None = None,
    gpus: Mapping[str, GPUSpec] | None = None,
) -> tuple[np.ndarray, str]:
    """Per-config latency (us) and the name of the model used (``gpus``: specs of GPUs outside the catalog)."""
    fam = str(df["family"].iloc[0])
    if feats is not None:
        df = pd.concat([df.drop(columns=[c for c in feats.columns if c in df.columns]), feats], axis=1)
    x = df
    if fam == "moe_w13" and models.latency is not None:
        return _predict_with_specs(models.latency, x, gpus), "diagnose_latency"
    gen = models.general
    if gen is not None and f"family_{fam}" in gen.feature_names_ and fam in gen.families_:
        return _predict_with_specs(models.general, x, gpus), "pipeweave_default"
    return x["t_env_us"].to_numpy(dtype=float), "analytical_envelope"


def ceiling_error_band(path: str | os.PathLike[str] | None = None) -> float | None:
    """Held-out MAPE of the ceiling (fraction) from the dse report (``experiments/dse/results.json``), or None."""
    import json

    from .._paths import EXPERIMENTS_DIR

    p = Path(path) if path is not None else EXPERIMENTS_DIR / "dse" / "results.json"
    try:
        v = json.loads(p.read_text())["results"]["all"]["pipeweave"]["ceiling_mape"]
    except Exception:  # no report: no band, the verdict says so
        return None
    return None if v is None else float(v) / 100.0


#: measured / ceiling from which a headroom verdict also asks to check units, shape and GPU
FAR_ABOVE_CEILING: float = 100.0
#: Relative tolerance under the analytical lower bound before a measurement counts as physically impossible
#: (timer resolution, clock boost above the spec clock).
BELOW_BOUND_TOLERANCE = 0.02


def check_measured_us(measured_us: Any) -> float | None:
    """A measured latency (us) as a positive float (a number given as text is accepted), or None; else DataError."""
    if measured_us is None:
        return None
    try:
        m_us = float(measured_us)
    except (TypeError, ValueError):
        m_us = float("nan")
    if not (np.isfinite(m_us) and m_us > 0):
        raise DataError(
            f"measured_us must be a positive number of microseconds, got {measured_us!r}",
            hint="e.g. measured_us=2321.0",
        )
    from ..frontend import MAX_LATENCY_US  # the one plausibility bound of a measured launch

    if m_us > MAX_LATENCY_US:
        raise DataError(
            f"measured_us={measured_us!r} is {m_us / 1e6:.4g} s for one kernel launch: a unit slip?",
            hint="give microseconds (a nanosecond count is 1000x too large)",
        )
    return m_us


def headroom_verdict(
    measured_us: float | None,
    ceiling_us: float,
    lower_us: float,
    band: float | None,
    *,
    no_band_why: str | None = None,
) -> tuple[str | None, str | None]:
    """(verdict, sentence) for a measurement against the ceiling; verdicts: ``below_physical_bound``,
    ``at_or_below_ceiling``, ``within_error_band``, ``likely_headroom``, ``no_error_band`` (None without one;
    ``no_band_why`` says why there is no band; default: the dse report is missing)."""
    if measured_us is None:
        return None, None
    m = float(measured_us)
    if m < (1.0 - BELOW_BOUND_TOLERANCE) * lower_us:
        return "below_physical_bound", (
            f"the measured {m:.4g} us is below the analytical lower bound {lower_us:.4g} us (useful FLOPs at peak "
            "tensor rate, compulsory bytes at full DRAM bandwidth), which no launch can beat: check the units "
            "(microseconds, not milliseconds or seconds), the shape and the GPU; no headroom or utilization is derived "
            "from it"
        )
    r = m / ceiling_us
    if r <= 1.0:
        return "at_or_below_ceiling", f"measured {m:.4g} us is at or below the ceiling estimate ({r:.2f}x)"
    if band is None:
        return "no_error_band", (
            f"measured / ceiling = {r:.2f}; the ceiling has no validated error band here "
            f"({no_band_why or 'experiments/dse/results.json missing'}), so no headroom is claimed"
        )
    if r <= 1.0 + band:
        return "within_error_band", (
            f"measured / ceiling = {r:.2f} is within the ceiling's held-out error "
            f"({100 * band:.0f}% MAPE): no reliable headroom can be claimed"
        )
    check = (  # two orders of magnitude is more than any config explains: more likely units, shape or GPU
        f"; {r:.0f}x is more than a tile config explains: check the units (microseconds), the shape and the GPU"
        if r >= FAR_ABOVE_CEILING
        else ""
    )
    return "likely_headroom", (
        f"measured / ceiling = {r:.2f} is beyond the ceiling's held-out error "
        f"({100 * band:.0f}% MAPE): a faster config likely exists{check}"
    )


def _diagnose_models(models: Any) -> DiagnoseModels:
    """``models`` as :class:`DiagnoseModels`: ``None`` = the shipped ones, a folder = those built there."""
    if models is None:
        return DiagnoseModels.load()
    if isinstance(models, (str, os.PathLike)):
        return DiagnoseModels.load(models)
    if not isinstance(models, DiagnoseModels):
        raise DataError(
            f"models must be DiagnoseModels, a models folder or None (the shipped ones), got {type(models).__name__}",
            hint="e.g. models=pipeweave.diagnose.DiagnoseModels.load('my_models/'), or leave it out",
        )
    return models


def diagnose(
    row: Mapping[str, Any] | pd.DataFrame | pd.Series,
    measured_us: float | None = None,
    top: int = 5,
    *,
    gpus: Mapping[str, GPUSpec] | None = None,
    models: DiagnoseModels | str | os.PathLike[str] | None = None,
    data: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Diagnose one launch: how fast could it be on its GPU, what binds it, which configs to try.

    ``row``: canonical launch columns (``gpu``, ``family``, ``dtype``, the family's shape columns,
    optionally the tile config ``block_m`` ... ``num_stages``; without one the kernel's own config
    is used). ``measured_us``: its measured latency in microseconds, if known. ``models``:
    :class:`DiagnoseModels`, the folder they were built in (:meth:`DiagnoseModels.load`), or ``None`` for
    the shipped ones.

    How configs are ranked (one order, used everywhere in the output): the config ranker shortlists
    the ``top`` best-scored configs of its vocabulary (for ``pipeweave.vocab.LATENCY_ORDERED_FAMILIES``, ``gemm``: the
    ``top`` fastest predicted of every feasible config); the shortlist plus the given config are ordered by
    predicted latency (us). Invariants (tested): ranks follow predicted latency; ``speedup`` =
    given predicted / candidate predicted; the given config's ``given_config_rank`` is its place in
    that order; ``lower_bound_us <= ceiling_us <=`` every ranked prediction; utilizations are in
    [0, 1] (pipes whose modeled time exceeds the latency are listed in ``pipes_over_latency``) and
    are null when the measurement is below the physical lower bound (``headroom_verdict``
    ``below_physical_bound``). Returns a JSON-ready dict.
    """
    from ..frontend import PIPES, featurize, fill_launch_defaults
    from ..hardware import get_gpu

    df = fill_launch_defaults(_as_row(row))  # the same defaults as `pipeweave predict` (e.g. balanced routing)
    for col in ("gpu", "family", "dtype"):
        if col not in df.columns:
            raise DataError(f"launch row lacks {col!r}", hint="give gpu, family, dtype and the shape columns")
    fam = str(df["family"].iloc[0])
    if fam not in TUNABLE_FAMILIES:
        raise DataError(
            f"family {fam!r} has no Triton tile-config space to diagnose",
            hint=f"diagnose supports {list(TUNABLE_FAMILIES)}; pipeweave.explain(launch, gpu=...) describes the others",
        )
    measured_us = check_measured_us(measured_us)
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or int(top) < 1:
        raise DataError(f"top must be an integer >= 1, got {top!r}", hint="e.g. top=5")
    gname = str(df["gpu"].iloc[0])
    spec = gpus[gname] if gpus is not None and gname in gpus else get_gpu(gname)
    gmap = {spec.name: spec, **(dict(gpus) if gpus else {})}
    df["gpu"] = spec.name
    df["generation"] = spec.generation
    dtype = str(df["dtype"].iloc[0])
    models = _diagnose_models(models)
    notes: list[str] = []

    # the given launch ----------------------------------------------------------------------------
    f = featurize(df, gpus=gmap, data=data)
    given = {c: float(f[c].iloc[0]) for c in CONFIG_COLUMNS}
    # the row's own tile plan is the config the user gave; else the kernel's default (or a heuristic)
    origin = {"recorded": "given"}.get(str(f["tile_origin"].iloc[0]), str(f["tile_origin"].iloc[0]))
    for c in CONFIG_COLUMNS:
        df[c] = given[c]
    fits = bool(config_fits(pd.DataFrame([given]), spec, dtype)[0])
    if not fits:
        need = smem_bytes(pd.DataFrame([given]), dtype, spec)[0] / 1024
        notes.append(
            f"the given config needs {need:.0f} KiB shared memory or more registers than {spec.name} "
            "offers; Triton refuses it (shared memory) or launches it with register spills, several times slower"
        )
    lower = float(f["t_lower_us"].iloc[0])
    pred, pred_model = _predict_latency(models, df, f, gpus)
    predicted = max(float(pred[0]), lower)

    # candidates: ranker shortlist ------------------------------------------------------------------
    shape_cols = [c for c in SHAPE_COLUMNS[fam] if c in df.columns]
    keep = ["gpu", "generation", "family", "dtype", "source", *shape_cols, "distribution"]
    shape_row = df[[c for c in keep if c in df.columns]]
    cand, cfeat = candidate_features(shape_row, gpus=gmap)
    scores = models.ranker.decision_function(cfeat)
    by_latency = fam in LATENCY_ORDERED_FAMILIES
    allowed = (
        models.ranker.restrict(cand)
        if hasattr(models.ranker, "restrict") and not by_latency
        else np.ones(len(cand), dtype=bool)
    )
    gvals = np.array([given[c] for c in CONFIG_COLUMNS])
    cvals = cand[list(CONFIG_COLUMNS)].to_numpy()
    is_given = (cvals == gvals).all(axis=1)
    # every recommendable config is predicted, so that the ceiling does not depend on how many are shown
    all_pred = np.full(len(cand), np.inf)
    idx_allowed = np.flatnonzero(allowed)
    if len(idx_allowed):
        cand_a = cand.iloc[idx_allowed].reset_index(drop=True)
        feat_a = cfeat.iloc[idx_allowed].reset_index(drop=True)
        all_pred[idx_allowed] = np.maximum(_predict_latency(models, cand_a, feat_a, gpus)[0], lower)
    if by_latency:  # fastest predicted first, ties by the ranker's score
        order = np.lexsort((-scores, np.where(np.isfinite(all_pred), all_pred, np.inf)))
    else:
        order = np.argsort(-np.where(allowed, scores, -np.inf), kind="stable")
    # the shortlist, ties that differ in one parameter only folded into one row: exact ties, or for a
    # latency-ordered family predictions within 0.5% (else its top is one config with every GROUP_M value)
    tie_rtol = 0.005 if by_latency else 0.0

    def _twins(j: int, i: int) -> bool:
        close = abs(all_pred[j] - all_pred[i]) <= tie_rtol * all_pred[j] or all_pred[j] == all_pred[i]
        return bool(close and int((cvals[j] != cvals[i]).sum()) == 1)

    short: list[int] = []
    folded: dict[int, list[int]] = {}
    for i in order:
        if len(short) >= int(top) or not allowed[i]:
            break
        if is_given[i]:
            continue
        twin = next((j for j in short if _twins(j, i)), None)
        if twin is not None:
            folded.setdefault(twin, []).append(int(i))
            continue
        short.append(int(i))
    best_i = int(np.argmin(all_pred)) if len(idx_allowed) else None
    if best_i is not None and not is_given[best_i] and best_i not in short:
        if not any(_twins(j, best_i) for j in short):
            # the fastest config of the whole space is always listed (in the ranker's last slot)
            short = [*short[: max(int(top) - 1, 0)], best_i]
    folded = {j: v for j, v in folded.items() if j in short}
    s_pred = all_pred[short] if short else np.zeros(0)
    cand_s = cand.iloc[short].reset_index(drop=True)

    # one order: shortlist + the given config, by predicted latency -----------------------------------
    ranked: list[dict[str, Any]] = [
        {
            "config": {c: float(cand_s[c].iloc[i]) for c in CONFIG_COLUMNS},
            "predicted_us": float(s_pred[i]),
            "score": float(scores[short[i]]),
            "is_given": False,
            "same_as": [
                format_config({c: float(cand[c].iloc[j]) for c in CONFIG_COLUMNS}) for j in folded.get(short[i], [])
            ],
        }
        for i in range(len(short))
    ]
    gscore = float(scores[np.flatnonzero(is_given)[0]]) if is_given.any() else None
    ranked.append({"config": given, "predicted_us": predicted, "score": gscore, "is_given": True, "same_as": []})
    ranked.sort(key=lambda r: (r["predicted_us"], not r["is_given"]))
    given_rank = next(i for i, r in enumerate(ranked) if r["is_given"]) + 1
    ranker_position = None
    if is_given.any():
        ranker_position = int(np.flatnonzero(order == np.flatnonzero(is_given)[0])[0]) + 1

    # ceiling ------------------------------------------------------------------------------------------
    fastest = min(r["predicted_us"] for r in ranked)  # the whole space's fastest is among them (listed above)
    best_cfg = ranked[0]["config"]
    if fam in VALIDATED_FAMILIES and models.ceiling is not None:
        key = (cand[list(CONFIG_COLUMNS)].to_numpy() == np.array([best_cfg[c] for c in CONFIG_COLUMNS])).all(axis=1)
        if key.any():
            i = int(np.flatnonzero(key)[0])
            first = cand.iloc[[i]].drop(columns=[c for c in cfeat.columns if c in cand.columns]).reset_index(drop=True)
            learned = float(
                models.ceiling.predict(pd.concat([first, cfeat.iloc[[i]].reset_index(drop=True)], axis=1))[0]
            )
        else:  # the given config is the fastest and lies outside the feasible space
            learned = fastest
        ceiling = min(learned, fastest)
        ceiling_method = (
            "learned best-config model at the fastest ranked config, capped at the fastest ranked prediction"
        )
    else:
        ceiling = fastest
        ceiling_method = (
            f"fastest predicted latency over all {len(idx_allowed)} recommendable configs and the given one "
            f"({pred_model})"
        )
        notes.append(
            f"{fam} configs are shortlisted by the latency model's prediction of every feasible config; that order "
            "was checked on exhaustive H200 sweeps of one Triton matmul kernel only (best of its first four configs "
            "1.08x the measured best, experiments/device_h200); the ceiling is the fastest prediction"
            if by_latency
            else f"the ranker and ceiling were validated on moe_w13 sweeps only; for {fam} they are applied "
            "through the family-agnostic front-end features (not validated on measurements)"
        )
    ceiling = max(ceiling, lower)

    # measurement, utilization ---------------------------------------------------------------------------
    # the dse report validates the shipped diagnose models: models built elsewhere (e.g. from a user's rows) have
    # no validated error band, and no headroom is claimed with them
    shipped = Path(models.paths.get("ceiling", str(DEFAULT_CEILING_PATH))).resolve() == DEFAULT_CEILING_PATH.resolve()
    band = ceiling_error_band() if shipped else None
    elsewhere = None if shipped else Path(models.paths["ceiling"]).parent
    why = None if elsewhere is None else f"the models in {elsewhere} were not validated by `evaluate --protocol dse`"
    verdict, sentence = headroom_verdict(measured_us, ceiling, lower, band, no_band_why=why)
    below = verdict == "below_physical_bound"
    given_is_fastest = given_rank == 1 and ceiling >= predicted * (1.0 - 1e-9)
    if verdict == "likely_headroom" and given_is_fastest and sentence:
        # no other config is predicted faster: the gap is the launch against its own prediction, not a config
        sentence = sentence.split(": a faster config likely exists")[0] + (
            f", but none of the {len(idx_allowed)} recommendable configs is predicted faster than the given one: the "
            "launch runs slower "
            "than predicted for its own config (check the clocks, the timing method and the shape)"
        )
    if sentence:
        notes.append(sentence)
    latency = float(measured_us) if measured_us is not None else predicted
    pipes = {p: float(f[f"t_chip_{p}_us"].iloc[0]) for p in PIPES}
    over = [p for p, t in pipes.items() if t > latency]
    util: dict[str, float] | None = None if below else {p: min(t / latency, 1.0) for p, t in pipes.items()}
    basis = "measured" if measured_us is not None else "predicted"
    if over and not below:
        notes.append(
            f"the modeled time of {', '.join(over)} exceeds the {basis} latency: the front-end "
            "overestimates that pipe's traffic for this kernel or the spec understates its bandwidth; its "
            "utilization is shown as 100% (an upper estimate)"
        )
    if given_rank == 1 and len(ranked) > 1 and not (verdict == "likely_headroom" and given_is_fastest):
        notes.append(f"no config of the {len(idx_allowed)} recommendable ones is predicted faster than the given one")
    n_folded = sum(len(v) for v in folded.values())
    if n_folded:
        notes.append(
            f"{n_folded} config(s) that differ from a listed one in a single parameter and are predicted "
            + ("within 0.5% of it" if tie_rtol else "exactly the same")
            + " were folded into it (see same_as): that parameter has "
            + ("(almost) " if tie_rtol else "")
            + "no modeled effect here"
        )

    recs = []
    for i, r in enumerate(ranked):  # the shortlist and the given config, in one order
        cfg = r["config"]
        recs.append(
            {
                "rank": i + 1,
                "config": format_config(cfg),
                **{c: int(v) for c, v in cfg.items()},
                "predicted_us": r["predicted_us"],
                "speedup": predicted / r["predicted_us"],
                **(
                    {"speedup_vs_measured": float(measured_us) / r["predicted_us"]}
                    if measured_us is not None and not below
                    else {}
                ),
                "score": r["score"],
                "smem_kib": float(smem_bytes(pd.DataFrame([cfg]), dtype, spec)[0] / 1024.0),
                "is_given": r["is_given"],
                "same_as": r["same_as"],
            }
        )
    out: dict[str, Any] = {
        "gpu": spec.name,
        "generation": spec.generation,
        "family": fam,
        "dtype": dtype,
        "shape": {c: float(df[c].iloc[0]) for c in shape_cols},
        "config": format_config(given),
        "config_origin": origin,
        "config_fits": fits,
        "predicted_us": predicted,
        "measured_us": None if measured_us is None else float(measured_us),
        "ceiling_us": ceiling,
        "lower_bound_us": lower,
        "measured_over_ceiling": None if measured_us is None or below else float(measured_us) / ceiling,
        "headroom_verdict": verdict,
        "ceiling_error_band": band,
        "measurement_below_bound": bool(below),
        "bound_pipe": str(f["bound_pipe"].iloc[0]),
        "pipe_utilization": util,
        "pipes_over_latency": over,
        "pipe_times_us": pipes,
        "pipe_times_busiest_sm_us": {p: float(f[f"t_sm_{p}_us"].iloc[0]) for p in PIPES if f"t_sm_{p}_us" in f},
        "pipe_times_basis": "pipe_times_us: chip (work spread over all SMs); pipe_times_busiest_sm_us: the "
        "busiest SM (picks bound_pipe)",
        "utilization_basis": basis,
        "latency_bound_us": float(f["t_latency_us"].iloc[0]),
        "envelope_us": float(f["t_env_us"].iloc[0]),
        "occupancy": float(f["occupancy"].iloc[0]),
        "waves": float(f["waves"].iloc[0]),
        "recommendations": recs,
        "given_config_rank": given_rank,
        "n_ranked": len(ranked),
        "given_ranker_position": ranker_position,
        "shortlist_order": "predicted_latency" if by_latency else "ranker",
        "n_candidates": len(cand),
        "n_recommendable": int(allowed.sum()),
        "ceiling_method": ceiling_method,
        "latency_model": pred_model,
        "models": dict(models.paths),
        "notes": notes,
    }
    check_invariants(out)
    return out


def check_invariants(res: Mapping[str, Any], rtol: float = 1e-9) -> None:
    """Raise AssertionError when a diagnosis contradicts itself (the rules in :func:`diagnose`'s docstring)."""
    recs = res["recommendations"]
    preds = [r["predicted_us"] for r in recs]
    lo, ceil, given = res["lower_bound_us"], res["ceiling_us"], res["predicted_us"]
    tol = 1.0 + rtol
    assert lo <= ceil * tol, f"ceiling {ceil} below the lower bound {lo}"
    assert all(ceil <= p * tol for p in preds), f"ceiling {ceil} above a ranked prediction {min(preds)}"
    assert ceil <= given * tol, f"ceiling {ceil} above the given config's prediction {given}"
    assert preds == sorted(preds), f"ranks not sorted by predicted latency: {preds}"
    ranks = [r["rank"] for r in recs]
    assert not ranks or (ranks[0] == 1 and all(a < b for a, b in zip(ranks, ranks[1:]))), f"ranks {ranks}"
    for r in recs:
        assert abs(r["speedup"] - given / r["predicted_us"]) <= 1e-9 * r["speedup"], "speedup != given / candidate"
        if r["rank"] < res["given_config_rank"]:
            assert r["predicted_us"] <= given * tol, "a config ranked above the given one is predicted slower"
        if r["rank"] > res["given_config_rank"]:
            assert r["predicted_us"] >= given / tol, "a config ranked below the given one is predicted faster"
    given_rows = [r for r in recs if r["is_given"]]
    assert len(given_rows) <= 1 and all(r["rank"] == res["given_config_rank"] for r in given_rows)
    util = res["pipe_utilization"]
    if res.get("measurement_below_bound"):
        assert util is None and res.get("measured_over_ceiling") is None
    else:
        assert all(0.0 <= u <= 1.0 for u in util.values()), f"utilization outside [0, 1]: {util}"
