"""One diagnosis: predicted latency, ceiling, headroom, binding pipe and ranked tile configs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._errors import DataError
from ._ceiling import DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH, CeilingModel
from ._features import SHAPE_COLUMNS, candidate_features
from ._ranker import DEFAULT_RANKER_PATH, ConfigRanker
from ._space import CONFIG_COLUMNS, config_fits, format_config, smem_bytes

__all__ = ["DiagnoseModels", "diagnose", "TUNABLE_FAMILIES", "AT_CEILING_RATIO"]

#: Families with a Triton tile-config space (the ranker and the ceiling apply).
TUNABLE_FAMILIES: tuple[str, ...] = ("moe_w13", "fused_moe", "gemm")
#: Families whose ranker/ceiling were trained and validated on measured sweeps.
VALIDATED_FAMILIES: tuple[str, ...] = ("moe_w13",)
#: measured / ceiling at or below which a launch counts as "at the ceiling".
AT_CEILING_RATIO = 1.02


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
    def load(cls, models_dir: str | os.PathLike[str] | None = None, *, general: bool = True) -> "DiagnoseModels":
        """Load ``diagnose_ranker.ubj``, ``diagnose_ceiling.ubj``, ``diagnose_latency.ubj`` (and the
        main model ``pipeweave_default.ubj`` when present) from ``models_dir`` (default ``models/``)."""
        from ..model import DEFAULT_MODEL_PATH, load_model

        d = Path(models_dir) if models_dir is not None else DEFAULT_RANKER_PATH.parent
        rp, cp, lp = d / DEFAULT_RANKER_PATH.name, d / DEFAULT_CEILING_PATH.name, d / DEFAULT_LATENCY_PATH.name
        ranker = ConfigRanker.load(rp)
        ceiling = CeilingModel.load(cp)
        latency = load_model(lp)
        paths = {"ranker": str(rp), "ceiling": str(cp), "latency": str(lp)}
        gen = None
        gp = d / DEFAULT_MODEL_PATH.name
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


def _predict_latency(models: DiagnoseModels, df: pd.DataFrame,
                     feats: pd.DataFrame | None = None) -> tuple[np.ndarray, str]:
    """Per-config latency (us) and the name of the model used."""
    fam = str(df["family"].iloc[0])
    if feats is not None:
        df = pd.concat([df.drop(columns=[c for c in feats.columns if c in df.columns]), feats], axis=1)
    x = df
    if fam == "moe_w13" and models.latency is not None:
        return models.latency.predict(x), "diagnose_latency"
    gen = models.general
    if gen is not None and f"family_{fam}" in gen.feature_names_ and fam in gen.families_:
        return models.general.predict(x), "pipeweave_default"
    return x["t_env_us"].to_numpy(dtype=float), "analytical_envelope"


def diagnose(row: Mapping[str, Any] | pd.DataFrame | pd.Series, measured_us: float | None = None, top: int = 5, *,
             gpus: Mapping[str, object] | None = None, models: DiagnoseModels | None = None,
             data: object = None) -> dict[str, Any]:
    """Diagnose one launch: how fast could it be on its GPU, what binds it, which configs to try.

    ``row``: canonical launch columns (``gpu``, ``family``, ``dtype``, the family's shape columns,
    optionally the tile config ``block_m`` ... ``num_stages``; without one the kernel's own config
    is used). ``measured_us``: its measured latency, if known. Returns a JSON-ready dict with
    ``predicted_us``, ``ceiling_us``, ``headroom`` (measured / ceiling; null without a measurement),
    ``bound_pipe``, ``pipe_utilization`` (chip time of each pipe / latency) and ``recommendations``
    (top ``top`` configs with ``config``, ``predicted_us``, ``speedup`` over the given config).
    """
    from ..frontend import PIPES, featurize
    from ..hardware import get_gpu

    df = _as_row(row)
    for col in ("gpu", "family", "dtype"):
        if col not in df.columns:
            raise DataError(f"launch row lacks {col!r}", hint="give gpu, family, dtype and the shape columns")
    fam = str(df["family"].iloc[0])
    if fam not in TUNABLE_FAMILIES:
        raise DataError(f"family {fam!r} has no Triton tile-config space to diagnose",
                        hint=f"diagnose supports {list(TUNABLE_FAMILIES)}; use `pipeweave explain` for the others")
    if measured_us is not None and not (np.isfinite(measured_us) and measured_us > 0):
        raise DataError(f"--measured-us must be a positive number of microseconds, got {measured_us!r}")
    if int(top) < 1:
        raise DataError(f"--top must be >= 1, got {top!r}")
    gname = str(df["gpu"].iloc[0])
    spec = gpus[gname] if gpus is not None and gname in gpus else get_gpu(gname)
    gmap = {spec.name: spec, **(dict(gpus) if gpus else {})}
    df["gpu"] = spec.name
    df["generation"] = spec.generation
    dtype = str(df["dtype"].iloc[0])
    models = models if models is not None else DiagnoseModels.load()
    notes: list[str] = []

    # the given launch ----------------------------------------------------------------------------
    f = featurize(df, gpus=gmap, data=data)
    given = {c: float(f[c].iloc[0]) for c in CONFIG_COLUMNS}
    origin = str(f["tile_origin"].iloc[0])
    for c in CONFIG_COLUMNS:
        df[c] = given[c]
    fits = bool(config_fits(pd.DataFrame([given]), spec, dtype)[0])
    if not fits:
        need = smem_bytes(pd.DataFrame([given]), dtype, spec)[0] / 1024
        notes.append(f"the given config needs {need:.0f} KiB shared memory or more registers than {spec.name} "
                     "offers; Triton would refuse to launch it")
    pred, pred_model = _predict_latency(models, df, f)
    predicted = float(pred[0])

    # candidates ------------------------------------------------------------------------------------
    shape_cols = [c for c in SHAPE_COLUMNS[fam] if c in df.columns]
    keep = ["gpu", "generation", "family", "dtype", "source", *shape_cols, "distribution"]
    shape_row = df[[c for c in keep if c in df.columns]]
    cand, cfeat = candidate_features(shape_row, gpus=gmap)
    scores = models.ranker.decision_function(cfeat)
    allowed = models.ranker.restrict(cand) if hasattr(models.ranker, "restrict") else np.ones(len(cand), dtype=bool)
    order = np.argsort(-np.where(allowed, scores, -np.inf), kind="stable")
    k = min(int(top), len(order))
    top_idx = order[:k]
    cand_top = cand.iloc[top_idx].reset_index(drop=True)
    feat_top = cfeat.iloc[top_idx].reset_index(drop=True)
    top_pred, _ = _predict_latency(models, cand_top, feat_top)

    # ceiling -----------------------------------------------------------------------------------------
    lower = float(f["t_lower_us"].iloc[0])
    if fam in VALIDATED_FAMILIES and models.ceiling is not None:
        first = cand_top.iloc[[0]].drop(columns=[c for c in feat_top.columns if c in cand_top.columns])
        ceiling = float(models.ceiling.predict(pd.concat([first, feat_top.iloc[[0]]], axis=1))[0])
        ceiling_method = "learned best-config model at the top recommendation"
    else:
        ceiling = float(np.min(top_pred))
        ceiling_method = f"fastest predicted latency among the top {k} recommendations ({pred_model})"
        notes.append(f"the ranker and ceiling were validated on moe_w13 sweeps only; for {fam} they are applied "
                     "through the family-agnostic front-end features (not validated on measurements)")
    ceiling = max(ceiling, lower)

    latency = float(measured_us) if measured_us is not None else predicted
    if measured_us is not None and float(measured_us) < 0.98 * lower:
        notes.append(f"the measured {float(measured_us):.4g} us is below the analytical lower bound {lower:.4g} us "
                     "(useful FLOPs at peak, compulsory bytes at full bandwidth): check the units (microseconds), "
                     "the shape and the GPU")
    pipes = {p: float(f[f"t_chip_{p}_us"].iloc[0]) for p in PIPES}
    util = {p: t / latency for p, t in pipes.items()}
    basis = "measured" if measured_us is not None else "predicted"
    over = [p for p, u in util.items() if u > 1.0]
    if over:
        notes.append(f"analytical time of {', '.join(over)} exceeds the {basis} latency (utilization > 100%): the "
                     "front-end overestimates that pipe's traffic for this kernel or the spec understates its "
                     "bandwidth; read it as an upper estimate")
    recs = []
    for i in range(k):
        cfg = {c: float(cand_top[c].iloc[i]) for c in CONFIG_COLUMNS}
        smem_kib = float(smem_bytes(pd.DataFrame([cfg]), dtype, spec)[0] / 1024.0)
        recs.append({
            "rank": i + 1, "config": format_config(cfg), **{c: int(v) for c, v in cfg.items()},
            "predicted_us": float(top_pred[i]), "speedup": predicted / float(top_pred[i]),
            **({"speedup_vs_measured": float(measured_us) / float(top_pred[i])} if measured_us is not None else {}),
            "score": float(scores[top_idx[i]]), "smem_kib": smem_kib,
            "is_given": all(cfg[c] == given[c] for c in CONFIG_COLUMNS),
        })
    given_rank = None
    gvals = np.array([given[c] for c in CONFIG_COLUMNS])
    match = np.flatnonzero((cand[list(CONFIG_COLUMNS)].to_numpy() == gvals).all(axis=1))
    if len(match):
        given_rank = int(np.flatnonzero(order == match[0])[0]) + 1
    out: dict[str, Any] = {
        "gpu": spec.name, "generation": spec.generation, "family": fam, "dtype": dtype,
        "shape": {c: float(df[c].iloc[0]) for c in shape_cols},
        "config": format_config(given), "config_origin": origin, "config_fits": fits,
        "predicted_us": predicted, "measured_us": None if measured_us is None else float(measured_us),
        "ceiling_us": ceiling, "lower_bound_us": lower,
        "headroom": None if measured_us is None else float(measured_us) / ceiling,
        "headroom_pct": None if measured_us is None else 100.0 * (1.0 - ceiling / float(measured_us)),
        "predicted_headroom": predicted / ceiling,
        "at_ceiling": None if measured_us is None else bool(float(measured_us) / ceiling <= AT_CEILING_RATIO),
        "bound_pipe": str(f["bound_pipe"].iloc[0]),
        "pipe_utilization": util, "pipe_times_us": pipes, "utilization_basis": basis,
        "latency_bound_us": float(f["t_latency_us"].iloc[0]), "envelope_us": float(f["t_env_us"].iloc[0]),
        "occupancy": float(f["occupancy"].iloc[0]), "waves": float(f["waves"].iloc[0]),
        "recommendations": recs, "given_config_rank": given_rank, "n_candidates": int(len(cand)),
        "n_recommendable": int(allowed.sum()),
        "ceiling_method": ceiling_method, "latency_model": pred_model, "models": dict(models.paths),
        "notes": notes,
    }
    return out
