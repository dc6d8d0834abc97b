"""Error anatomy of the leave-one-generation-out protocol: where the error sits and what it is made of.

One command regenerates the whole report::

    pipeweave evaluate --protocol anatomy --out experiments/error_anatomy

(the committed report is this command with its defaults: the six families of :data:`ANATOMY_FAMILIES`,
the LOGO report's 4000 training rows per GPU and 200 trees, about 6 minutes on the 2-core machine). It
runs LOGO for pipeweave, its feature-group ablations and the crude reference (``xgboost_crude``), then splits every fold's
error with pure functions over the per-row predictions:

* **regime** per row (:func:`regime_labels`): ``small`` (measured < 10 us: launch, fill and tail
  bound), else ``compute`` or ``memory`` by the roofline terms (useful FLOPs / tensor peak against
  compulsory bytes / DRAM bandwidth, i.e. the sign of ``log2_ai_over_ridge``);
* **layout** per row: the expert-parallel layout for MoE (``ep1``, ``ep>1 all-tokens``,
  ``ep>1 local-tokens`` from the manifest's ``moe_ep_semantics``), the backend for attention;
* **oracle scalars** (:func:`oracle_table`): each held-out GPU's predictions divided by the
  median predicted / measured ratio of that GPU (or of each regime on that GPU). This uses the
  held-out measurements on purpose: it is a diagnosis (how much of the error one number per GPU
  could remove), never a method;
* **goal misses** (:func:`goal_misses`): for every (family, held-out generation) with a LOGO goal
  (``ACCURACY_GOALS``), the MAPE, by how much it misses, and what share of the miss each cause removes:
  leaving out the rows the source manifest flags, the oracle per-GPU scalar, the per-(GPU, regime)
  scalars; ``kind`` names the first that removes at least half of it (else ``shape-dependent``), with the
  regime carrying most of the error;
* **feature-group ablations** (:func:`ablation_table`): pipeweave refitted without one group
  (L2 / scheduling, SASS, spec-sheet ratios, tile plan), on the headline families (bf16 GEMM and
  fused MoE) only, to keep the run within the shared CPU budget.

Everything is computed by ``anatomy_tables`` (pure: predictions in, tables out), written as
``results.json`` + small CSVs, drawn by ``plot_*(data, ax=None)`` and summarized in
``results.md``, whose "what this says" bullets are computed from the tables. Nothing is tuned on
a held-out generation: the models are fitted on the training generations only, exactly as in
``pipeweave evaluate --protocol logo``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._metrics import ape
from ._plots import new_axes, order_generations

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "ANATOMY_FAMILIES",
    "ANATOMY_KEEP",
    "FEATURE_GROUPS",
    "regime_labels",
    "regime_table",
    "oracle_table",
    "ep_semantics_evidence",
    "ablation_table",
    "fold_table",
    "goal_misses",
    "miss_findings",
    "DEFAULT_ABLATIONS",
    "anatomy_tables",
    "anatomy_findings",
    "render_anatomy_markdown",
    "plot_regimes",
    "plot_oracle",
    "run_anatomy",
    "write_anatomy_report",
]

#: families the anatomy runs on by default: every family whose LOGO goal (``ACCURACY_GOALS``) is not met
#: in the committed report (the memory-bound row families, rmsnorm and silu_mul, meet theirs)
ANATOMY_FAMILIES: tuple[str, ...] = (
    "gemm_bf16",
    "fused_moe_bf16",
    "attention_context",
    "attention_generation",
    "moe_w13",
    "gemm_fp32",
)
#: frame columns the regime split needs, carried into the predictions frame
ANATOMY_KEEP: tuple[str, ...] = (
    "dtype",
    "semantics_flagged",
    "log2_ai_over_ridge",
    "moe_ep_size",
    "moe_ep_semantics",
    "backend",
)
#: the two methods every table compares (the hybrid and the crude reference)
_MAIN, _CRUDE = "pipeweave", "xgboost_crude"
SMALL_US = 10.0

_SPEC_RATIO_BASE = ("l2_bw_over_dram_bw", "log2_ridge_flop_per_byte", "mma_generation")
_SPEC_HINTS = ("tdp", "power", "hbm", "gddr", "boost", "base_clock", "mem_tech", "sustained")


def _spec_ratio_features() -> tuple[str, ...]:
    from ..frontend import FEATURES

    return tuple(f for f in FEATURES if f in _SPEC_RATIO_BASE or any(h in f for h in _SPEC_HINTS))


def _tile_features() -> tuple[str, ...]:
    return ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages", "split_k")


#: ablation name -> what is removed (feature names; ``sass`` switches the SASS columns off)
FEATURE_GROUPS: dict[str, str] = {
    "pipeweave_no_l2_sched": "L2 and scheduling features (L2 pipe times, latency/fill/epilogue, waves, occupancy, "
    "working set over L2, L2 hit estimates)",
    "pipeweave_no_sass": "the Triton SASS instruction-mix columns (fused MoE only)",
    "pipeweave_no_spec_ratios": "spec-sheet ratios (L2/DRAM bandwidth, ridge FLOP/byte, MMA generation, and any "
    "power/memory-technology/clock field of the catalog)",
    "pipeweave_no_tile": "the resolved tile plan (block sizes, group_m, warps, stages, split-K)",
}


#: the ablations a default run refits (pipeweave_no_tile is available but left out to save CPU)
DEFAULT_ABLATIONS: tuple[str, ...] = ("pipeweave_no_l2_sched", "pipeweave_no_spec_ratios", "pipeweave_no_sass")


# --------------------------------------------------------------------------- pure tables


def regime_labels(pred: pd.DataFrame) -> pd.DataFrame:
    """``regime`` (small / compute / memory) and ``layout`` per predictions row (see the module docstring)."""
    lat = pred["latency_us"].to_numpy(dtype=float)
    ai = pd.to_numeric(pred.get("log2_ai_over_ridge", pd.Series(np.nan, index=pred.index)), errors="coerce").to_numpy(
        dtype=float
    )
    regime = np.where(lat < SMALL_US, "small", np.where(ai >= 0, "compute", "memory"))
    fam = pred["family"].astype(str).to_numpy()
    layout = np.full(len(pred), "-", dtype=object)
    if "moe_ep_size" in pred.columns:
        ep = np.nan_to_num(pd.to_numeric(pred["moe_ep_size"], errors="coerce").to_numpy(dtype=float), nan=1.0)
        sem = (
            pred["moe_ep_semantics"].astype(object).fillna("").astype(str).to_numpy()
            if "moe_ep_semantics" in pred.columns
            else np.full(len(pred), "")
        )
        moe = np.char.find(fam.astype(str), "moe") >= 0
        multi = np.where(sem == "rank_local_tokens", "ep>1 local-tokens", "ep>1 all-tokens")
        layout[moe] = np.where(ep[moe] > 1, multi[moe], "ep1")
    if "backend" in pred.columns:
        att = np.char.startswith(fam.astype(str), "attention")
        layout[att] = pred["backend"].astype(object).fillna("flash_attention").astype(str).to_numpy()[att]
    return pd.DataFrame({"regime": regime, "layout": layout}, index=pred.index)


def _with_errors(pred: pd.DataFrame) -> pd.DataFrame:
    ok = np.isfinite(pred["pred_us"].to_numpy(dtype=float))
    p = pred.loc[ok]
    lab = regime_labels(p)
    return p.assign(
        regime=lab["regime"].to_numpy(),
        layout=lab["layout"].to_numpy(),
        ape=ape(p["pred_us"].to_numpy(float), p["latency_us"].to_numpy(float)),
        ratio=p["pred_us"].to_numpy(float) / p["latency_us"].to_numpy(float),
    )


def _agg(d: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    g = d.groupby(by, sort=False, observed=True)
    out = g.agg(
        n=("ape", "size"), mape=("ape", "mean"), median_ratio=("ratio", "median"), ape_sum=("ape", "sum")
    ).reset_index()
    return out


def _share_table(d: pd.DataFrame, by: list[str], within: list[str]) -> pd.DataFrame:
    """:func:`_agg` per ``by`` plus each group's share (%) of the rows and of the summed APE of its ``within`` group."""
    t = _agg(d, by)
    tot = t.groupby(within, observed=True)[["n", "ape_sum"]].transform("sum")
    t["share_rows"] = 100.0 * t["n"] / tot["n"]
    t["share_error"] = 100.0 * t["ape_sum"] / tot["ape_sum"]
    return t


def regime_table(pred: pd.DataFrame, by: str = "regime") -> pd.DataFrame:
    """MAPE (%), row share (%), share of the GPU's summed APE (%) and median predicted / measured per
    (family, method, fold, gpu, ``by``); ``by`` is ``regime`` or ``layout``."""
    t = _share_table(_with_errors(pred), ["family", "method", "fold", "gpu", by], ["family", "method", "gpu"])
    return t.drop(columns="ape_sum").round(4)


def _oracle_rows(d: pd.DataFrame) -> pd.DataFrame:
    """``d`` (:func:`_with_errors` rows) plus the APE after the oracle per-GPU scalar (``ape_gpu``) and after the
    per-(GPU, regime) scalars (``ape_regime``): each row's ratio divided by the median ratio of its group."""
    keys = ["family", "method", "fold", "gpu"]
    r_gpu = d.groupby(keys, observed=True)["ratio"].transform("median").to_numpy()
    r_reg = d.groupby([*keys, "regime"], observed=True)["ratio"].transform("median").to_numpy()
    return d.assign(
        ape_gpu=np.abs(d["ratio"].to_numpy() / r_gpu - 1.0) * 100.0,
        ape_regime=np.abs(d["ratio"].to_numpy() / r_reg - 1.0) * 100.0,
        r_gpu=r_gpu,
    )


def oracle_table(pred: pd.DataFrame) -> pd.DataFrame:
    """Per (family, method, fold, gpu): MAPE (%), MAPE after dividing by the oracle per-GPU median ratio,
    and after dividing by the oracle per-(GPU, regime) median ratio (diagnosis only)."""
    d = _oracle_rows(_with_errors(pred))
    t = (
        d.groupby(["family", "method", "fold", "gpu"], sort=False, observed=True)
        .agg(
            n=("ape", "size"),
            mape=("ape", "mean"),
            median_ratio=("r_gpu", "first"),
            mape_oracle_gpu=("ape_gpu", "mean"),
            mape_oracle_regime=("ape_regime", "mean"),
        )
        .reset_index()
    )
    return t.round(4)


_MISS_COLUMNS = [
    "family",
    "fold",
    "n",
    "goal_mape",
    "mape",
    "miss_by",
    "met",
    "mape_unflagged",
    "mape_oracle_gpu",
    "mape_oracle_regime",
    "crude_mape",
    "miss_removed_unflagged",
    "miss_removed_gpu",
    "miss_removed_regime",
    "top_regime",
    "top_regime_share_rows",
    "top_regime_share_error",
    "top_regime_mape",
    "top_regime_median_ratio",
    "kind",
]


#: a cause "explains" a miss when removing it takes away at least this share of the points above the goal
MISS_EXPLAINED_SHARE = 0.5


def _removed(mape: pd.Series, after: pd.Series, miss_by: pd.Series) -> pd.Series:
    """Share (%) of the points above the goal that a correction taking ``mape`` to ``after`` removes
    (clipped to [0, 100]; NaN where the goal is met or ``after`` is unknown)."""
    share = (mape - after) / miss_by.where(miss_by > 0)
    return 100.0 * share.clip(0.0, 1.0)


def _miss_kind(r: pd.Series) -> str:
    """What kind of error a (family, fold) miss is: the first cause, in this order, that removes at least
    :data:`MISS_EXPLAINED_SHARE` of the points above the goal."""
    if r["met"]:
        return "met"
    for kind, col in (
        ("flagged rows", "miss_removed_unflagged"),  # the rows the source manifest flags (other timing semantics)
        ("GPU level", "miss_removed_gpu"),  # one number per held-out GPU
        ("regime levels", "miss_removed_regime"),  # one number per (GPU, regime)
    ):
        if np.isfinite(r[col]) and r[col] >= 100.0 * MISS_EXPLAINED_SHARE:
            return kind
    return "shape-dependent"  # none: the error varies with the shape inside a regime


def goal_misses(
    pred: pd.DataFrame, *, goals: Mapping[str, Mapping[str, float]] | None = None, method: str = _MAIN
) -> pd.DataFrame:
    """One row per (family with a LOGO goal, held-out generation): how far ``method`` is from the goal and why.

    Columns: ``n``; ``goal_mape``, ``mape``, ``miss_by`` (MAPE points above the goal, 0 when met), ``met``;
    ``mape_unflagged`` (% without the rows flagged by the source manifest, NaN if none are);
    ``mape_oracle_gpu`` / ``mape_oracle_regime`` (% after the oracle per-GPU / per-(GPU, regime) median
    scalars, fitted on the held-out rows: diagnosis only); ``crude_mape`` (``xgboost_crude`` on the same
    rows, NaN if absent); ``miss_removed_unflagged`` / ``_gpu`` / ``_regime`` (% of the points above the goal
    that leaving out the flagged rows / the per-GPU scalar / the per-(GPU, regime) scalars remove); ``top_regime`` and its ``share_rows`` / ``share_error`` (%), ``mape`` and
    ``median_ratio`` (predicted / measured): the regime carrying most of the fold's summed APE; ``kind``:
    ``met``, else the first of ``flagged rows``, ``GPU level``, ``regime levels`` whose removal takes away at
    least :data:`MISS_EXPLAINED_SHARE` of the miss, else ``shape-dependent``. Pure."""
    from ._goals import ACCURACY_GOALS

    goals = ACCURACY_GOALS if goals is None else goals
    d = _with_errors(pred)
    label = d["family"].astype(str).str.split("[", n=1).str[0]  # a report key may carry a "[dtype]" suffix
    d = d[label.map(lambda f: "logo" in goals.get(f, {})).to_numpy(dtype=bool)]
    if d.empty:
        return pd.DataFrame(columns=_MISS_COLUMNS)
    crude = d[d["method"] == _CRUDE].groupby(["family", "fold"], observed=True)["ape"].mean()
    d = _oracle_rows(d[d["method"] == method])
    keys = ["family", "fold"]
    flagged = d["semantics_flagged"].astype(bool) if "semantics_flagged" in d.columns else None
    t = d.groupby(keys, sort=False, observed=True).agg(
        n=("ape", "size"),
        mape=("ape", "mean"),
        mape_oracle_gpu=("ape_gpu", "mean"),
        mape_oracle_regime=("ape_regime", "mean"),
    )
    if flagged is not None and flagged.any():
        t["mape_unflagged"] = d[~flagged.to_numpy()].groupby(keys, observed=True)["ape"].mean()
    else:
        t["mape_unflagged"] = np.nan
    t["crude_mape"] = crude.reindex(t.index)
    reg = _share_table(d, [*keys, "regime"], keys)
    top = reg.sort_values("share_error", ascending=False).groupby(keys, observed=True).head(1).set_index(keys)
    for c in ("share_rows", "share_error", "mape", "median_ratio"):
        t[f"top_regime_{c}"] = top[c].reindex(t.index)
    t["top_regime"] = top["regime"].reindex(t.index)
    t = t.reset_index()
    t["goal_mape"] = [float(goals[str(f).split("[", 1)[0]]["logo"]) for f in t["family"]]
    t["miss_by"] = np.maximum(t["mape"] - t["goal_mape"], 0.0)
    t["met"] = t["mape"] <= t["goal_mape"]
    for key, col in (("unflagged", "mape_unflagged"), ("gpu", "mape_oracle_gpu"), ("regime", "mape_oracle_regime")):
        t[f"miss_removed_{key}"] = _removed(t["mape"], t[col], t["miss_by"])
    t["kind"] = [_miss_kind(r) for _, r in t.iterrows()]  # one row per (family, fold): a handful
    order = {g: i for i, g in enumerate(order_generations(pd.unique(t["fold"])))}
    t = t.sort_values(["family", "fold"], key=lambda c: c.map(order) if c.name == "fold" else c, kind="stable")
    return t[_MISS_COLUMNS].reset_index(drop=True).round(4)


def fold_table(pred: pd.DataFrame) -> pd.DataFrame:
    """MAPE (%) per (family, method, fold) on all rows and on rows measured >= 10 us."""
    d = _with_errors(pred)
    a = d.groupby(["family", "method", "fold"], sort=False, observed=True).agg(n=("ape", "size"), mape=("ape", "mean"))
    big = d[d["latency_us"] >= SMALL_US]
    b = big.groupby(["family", "method", "fold"], sort=False, observed=True).agg(mape_ge10us=("ape", "mean"))
    return a.join(b).reset_index().round(4)


def ablation_table(folds: pd.DataFrame) -> pd.DataFrame:
    """Ablations against pipeweave: per (family, fold, variant) the MAPE and its change (points)."""
    base = folds[folds["method"] == _MAIN].set_index(["family", "fold"])["mape"]
    ab = folds[folds["method"].str.startswith(_MAIN + "_") | (folds["method"] == _CRUDE)].copy()
    ab["pipeweave_mape"] = base.reindex(pd.MultiIndex.from_frame(ab[["family", "fold"]])).to_numpy()
    ab["delta_vs_pipeweave"] = ab["mape"] - ab["pipeweave_mape"]
    return ab.rename(columns={"method": "variant"})[
        ["family", "fold", "variant", "n", "mape", "pipeweave_mape", "delta_vs_pipeweave"]
    ].round(4)


_EP_KEYS = ("num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "distribution")


def ep_semantics_evidence(
    profiles: pd.DataFrame,
    *,
    min_tokens: float = 4096,
    min_experts: float = 128,
    eps: tuple[float, ...] = (2.0, 4.0, 8.0),
) -> pd.DataFrame:
    """Per (source, GPU): how fused-MoE latency scales with expert parallelism (the evidence behind the
    manifest's ``moe_ep_semantics``).

    On TP-1 rows with >= ``min_tokens`` tokens and >= ``min_experts`` experts, each EP in ``eps`` row
    is divided by the same shape's EP-1 latency. ``share_per_rank`` (%): ratio < 1.6 / EP (the rank
    timed T x topk / EP rows); ``share_flat`` (%): ratio > 0.6 (all T x topk rows entered the grid);
    ``median_ep<k>``: median ratio at EP k; ``flag``: the manifest's value.
    """
    d = profiles[
        (profiles["family"].astype(str) == "fused_moe")
        & (pd.to_numeric(profiles["moe_tp_size"], errors="coerce") == 1)
        & (pd.to_numeric(profiles["num_tokens"], errors="coerce") >= min_tokens)
        & (pd.to_numeric(profiles["num_experts"], errors="coerce") >= min_experts)
    ]
    if d.empty:
        return pd.DataFrame(columns=["source", "gpu", "flag", "n", "share_per_rank", "share_flat"])
    keys = ["source", "gpu", "dtype", *_EP_KEYS]
    d = d.assign(**{c: d[c].astype(str) for c in ("source", "gpu", "dtype", "distribution")})
    base = d[d["moe_ep_size"] == 1].groupby(keys, observed=True)["latency_us"].median().rename("ep1")
    m = d[d["moe_ep_size"].isin(eps)].join(base, on=keys, how="inner")
    m = m.assign(ratio=m["latency_us"] / m["ep1"])
    m = m.assign(per_rank=m["ratio"] < 1.6 / m["moe_ep_size"], flat=m["ratio"] > 0.6)
    g = m.groupby(["source", "gpu"], observed=True)
    out = g.agg(n=("ratio", "size"), share_per_rank=("per_rank", "mean"), share_flat=("flat", "mean"))
    out[["share_per_rank", "share_flat"]] *= 100.0
    for ep in eps:
        out[f"median_ep{int(ep)}"] = (
            m[m["moe_ep_size"] == ep].groupby(["source", "gpu"], observed=True)["ratio"].median()
        )
    flag = (
        d.assign(flag=d["moe_ep_semantics"].astype(object).fillna("").astype(str))
        .groupby(["source", "gpu"], observed=True)["flag"]
        .first()
        if "moe_ep_semantics" in d.columns
        else None
    )
    out.insert(0, "flag", flag.reindex(out.index).to_numpy() if flag is not None else "")
    return out.reset_index().round(3)


def anatomy_tables(pred: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Every table of the report from one predictions frame (``run_protocol`` output with
    :data:`ANATOMY_KEEP` columns). Pure: same predictions, same tables."""
    folds = fold_table(pred)
    return {
        "folds": folds,
        "regimes": regime_table(pred, "regime"),
        "layouts": regime_table(pred, "layout"),
        "oracle": oracle_table(pred),
        "ablations": ablation_table(folds),
        "misses": goal_misses(pred),
    }


# --------------------------------------------------------------------------- findings


def _f(x: float) -> str:
    return f"{x:.1f}"


def anatomy_findings(tables: dict[str, pd.DataFrame]) -> dict[str, list[str]]:
    """Computed one-line findings per family (numbers from the tables, nothing typed in)."""
    out: dict[str, list[str]] = {}
    folds, reg, orc, abl = tables["folds"], tables["regimes"], tables["oracle"], tables["ablations"]
    for fam in pd.unique(folds["family"]):
        lines: list[str] = []
        f = folds[folds["family"] == fam]
        gens = order_generations(pd.unique(f["fold"]))
        main = f[f["method"] == _MAIN].set_index("fold")
        crude = f[f["method"] == _CRUDE].set_index("fold")
        if len(main) and len(crude):
            lines.append(
                "pipeweave vs xgboost_crude MAPE per held-out generation: "
                + ", ".join(
                    f"{g} {_f(main.loc[g, 'mape'])} vs {_f(crude.loc[g, 'mape'])}"
                    for g in gens
                    if g in main.index and g in crude.index
                )
            )
        o = orc[(orc["family"] == fam) & (orc["method"] == _MAIN)]
        if len(o):
            lines.append(
                "oracle per-GPU scalar (pipeweave): "
                + ", ".join(
                    f"{r.gpu} {_f(r.mape)} -> {_f(r.mape_oracle_gpu)} (x{r.median_ratio:.2f}), "
                    f"per-regime {_f(r.mape_oracle_regime)}"
                    for r in o.itertuples()
                )
            )
            gain_gpu = float((o["mape"] - o["mape_oracle_gpu"]).sum() / o["mape"].sum() * 100)
            gain_reg = float((o["mape"] - o["mape_oracle_regime"]).sum() / o["mape"].sum() * 100)
            lines.append(
                f"share of pipeweave's summed per-GPU MAPE a per-GPU scalar removes: {gain_gpu:.0f}%; "
                f"a per-(GPU, regime) scalar: {gain_reg:.0f}% (the rest is shape-dependent)"
            )
        r = reg[(reg["family"] == fam) & (reg["method"] == _MAIN)]
        if len(r):
            worst = r.sort_values("share_error", ascending=False).groupby("gpu", sort=False).head(1)
            lines.append(
                "regime carrying most of each GPU's error (pipeweave; share of error / share of rows, "
                "MAPE, median pred/meas): "
                + "; ".join(
                    f"{w.gpu} {w.regime} {w.share_error:.0f}%/{w.share_rows:.0f}%, {_f(w.mape)}, x{w.median_ratio:.2f}"
                    for w in worst.itertuples()
                )
            )
        a = abl[(abl["family"] == fam) & (abl["variant"] != _CRUDE)]
        for v in pd.unique(a["variant"]):
            s = a[a["variant"] == v].set_index("fold")
            lines.append(
                f"{v}: change of MAPE per held-out generation (points) "
                + ", ".join(f"{g} {s.loc[g, 'delta_vs_pipeweave']:+.1f}" for g in gens if g in s.index)
            )
        out[str(fam)] = lines
    return out


_KIND_TEXT = {
    "flagged rows": "mostly the rows the source manifest flags (other timing semantics)",
    "GPU level": "mostly a GPU level the training generations' spec-sheet features did not predict",
    "regime levels": "mostly a level per (GPU, regime) the features did not predict",
    "shape-dependent": "shape-dependent (no one level per GPU or per regime removes half of it)",
}


def miss_findings(misses: pd.DataFrame) -> list[str]:
    """One computed sentence per missed (family, held-out generation) of :func:`goal_misses`."""
    lines = []
    for r in misses[~misses["met"].astype(bool)].to_dict(orient="records"):
        mape, crude = float(r["mape"]), float(r["crude_mape"])
        causes: list[tuple[str, float, float]] = [
            ("one scalar per GPU", float(r["mape_oracle_gpu"]), float(r["miss_removed_gpu"])),
            ("one per (GPU, regime)", float(r["mape_oracle_regime"]), float(r["miss_removed_regime"])),
        ]
        unflagged = float(r["mape_unflagged"])
        if np.isfinite(unflagged) and unflagged != mape:
            causes.insert(0, ("without the flagged rows", unflagged, float(r["miss_removed_unflagged"])))
        removed = [f"{what} -> {_f(after)} ({share:.0f}% of the miss)" for what, after, share in causes]
        line = (
            f"{r['family']} / {r['fold']}: {_f(mape)} against <= {float(r['goal_mape']):g}, missed by "
            f"{_f(float(r['miss_by']))}: {_KIND_TEXT[str(r['kind'])]}; {', '.join(removed)}; the {r['top_regime']} "
            f"rows ({float(r['top_regime_share_rows']):.0f}% of rows) carry {float(r['top_regime_share_error']):.0f}% "
            f"of the error at {_f(float(r['top_regime_mape']))} MAPE, median predicted / measured "
            f"x{float(r['top_regime_median_ratio']):.2f}"
        )
        if np.isfinite(crude) and crude < mape:
            line += f"; xgboost_crude is lower ({_f(crude)})"
        lines.append(line)
    return lines


# --------------------------------------------------------------------------- figures


def plot_regimes(data: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Grouped bars: MAPE (%) per (GPU, regime) for each method in ``data`` (:func:`regime_table`
    rows of one family). Returns the Axes."""
    if ax is None:
        ax = new_axes(figsize=(max(6.0, 0.6 * len(data) / max(data["method"].nunique(), 1) + 2.0), 4.0))[0, 0]
    if data.empty:
        return ax
    keys = data.drop_duplicates(["gpu", "regime"])[["gpu", "regime"]]
    labels = [f"{g}\n{r}" for g, r in keys.itertuples(index=False)]
    methods = list(pd.unique(data["method"]))
    width = 0.8 / len(methods)
    x = np.arange(len(keys))
    for i, m in enumerate(methods):
        sub = data[data["method"] == m].set_index(["gpu", "regime"]).reindex(pd.MultiIndex.from_frame(keys))
        ax.bar(
            x + (i - (len(methods) - 1) / 2) * width,
            np.nan_to_num(sub["mape"].to_numpy(float)),
            width,
            label=m,
            color=f"C{i}",
        )
    ax.set_xticks(x, labels, fontsize="x-small", rotation=90)
    ax.set_ylabel("MAPE (%)")
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return ax


def plot_oracle(data: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Bars per GPU: MAPE (%) as predicted, with the oracle per-GPU scalar and with per-regime scalars
    (``data`` = :func:`oracle_table` rows of one family and method). Returns the Axes."""
    if ax is None:
        ax = new_axes(figsize=(max(5.0, 0.9 * len(data) + 2.0), 4.0))[0, 0]
    if data.empty:
        return ax
    x = np.arange(len(data))
    cols = [
        ("mape", "as predicted"),
        ("mape_oracle_gpu", "oracle per-GPU scalar"),
        ("mape_oracle_regime", "oracle per-regime scalars"),
    ]
    for i, (c, lab) in enumerate(cols):
        ax.bar(x + (i - 1) * 0.27, data[c].to_numpy(float), 0.27, label=lab, color=f"C{i}")
    ax.set_xticks(x, [f"{g}\n({f})" for g, f in zip(data["gpu"], data["fold"])], fontsize="small")
    ax.set_ylabel("MAPE (%)")
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return ax


# --------------------------------------------------------------------------- report


def _cell(v: object) -> str:
    if isinstance(v, float):
        return "–" if not np.isfinite(v) else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"
    return str(v)


def _md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = [
        "| " + " | ".join(cols) + " |",
        "|" + "|".join("---:" if pd.api.types.is_numeric_dtype(df[c]) else "---" for c in cols) + "|",
    ]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def render_anatomy_markdown(
    tables: dict[str, pd.DataFrame], meta: dict[str, Any], figures: dict[str, dict[str, str]]
) -> str:
    """The markdown report (tables pivoted for reading; figures linked)."""
    findings = anatomy_findings(tables)
    out = [
        "# Error anatomy of the leave-one-generation-out protocol",
        "",
        f"Command: `{meta['command']}` (data fingerprint `{meta['data_fingerprint']}`, "
        f"{meta['max_train_rows_per_gpu']} training rows per GPU per fold, {meta['n_estimators']} trees).",
        "",
        "Honest protocol: every model is fitted on the training generations only; nothing (hyperparameter, "
        "feature, threshold) is tuned on the held-out generation. The learned baselines that tune anything "
        "(kernelsight's ridge penalty, xgboost_raw's depth) do it by nested leave-one-generation-out inside "
        "the training generations. The **oracle scalars** below use the held-out measurements on purpose: "
        "they are a diagnosis of how much of the error one number per GPU (or per GPU and regime) could "
        "remove, not a method.",
        "",
        "Regimes: `small` = measured < 10 us; otherwise `compute` / `memory` by the roofline terms (useful "
        "FLOPs / tensor peak vs compulsory bytes / DRAM bandwidth). Layouts: the expert-parallel layout for "
        "fused MoE (`ep>1 local-tokens` = GPUs whose manifest flag says the rank timed T x topk / EP rows), "
        "the backend for attention. Ablations: "
        + "; ".join(f"`{k}` drops {v}" for k, v in FEATURE_GROUPS.items() if k in meta.get("ablations", FEATURE_GROUPS))
        + ".",
        "",
        "Errors in percent (APE = |pred / measured - 1| x 100).",
        "",
    ]
    misses = tables.get("misses")
    if misses is not None and len(misses):
        out += [
            "## Goal misses: by how much and why (computed)",
            "",
            "Each family with a leave-one-generation-out goal (`pipeweave.evaluation.ACCURACY_GOALS`), per held-out "
            "generation: pipeweave's MAPE against the goal; the same after the oracle per-GPU and per-(GPU, regime) "
            "scalars (fitted on the held-out rows: how much of the miss one number per GPU could remove, never a "
            "method); without the rows the source manifest flags; the regime carrying most of the error; and "
            f"`kind`: the first of `flagged rows`, `GPU level` (the per-GPU scalar), `regime levels` (the "
            f"per-(GPU, regime) scalars) whose removal takes away at least {MISS_EXPLAINED_SHARE:.0%} of the points "
            "above the goal, else `shape-dependent`; the bullets give each share (`misses.csv` has them). What "
            "was tried against each miss is in `experiments/accuracy_log/results.md`.",
            "",
            _md(
                misses.drop(
                    columns=["n", "met", "miss_removed_unflagged", "miss_removed_gpu", "miss_removed_regime"]
                ).rename(
                    columns={
                        "goal_mape": "goal",
                        "mape_unflagged": "unflagged",
                        "mape_oracle_gpu": "oracle_gpu",
                        "mape_oracle_regime": "oracle_gpu_regime",
                        "crude_mape": "xgboost_crude",
                        "top_regime_share_rows": "rows_%",
                        "top_regime_share_error": "error_%",
                        "top_regime_mape": "regime_mape",
                        "top_regime_median_ratio": "regime_ratio",
                    }
                )
            ),
            "",
        ]
        out += [f"- {line}" for line in miss_findings(misses)]
        out.append("")
    ev = tables.get("ep_evidence")
    if ev is not None and len(ev):
        out += [
            "## Fused-MoE expert-parallel semantics per GPU (the evidence behind `moe_ep_semantics`)",
            "",
            "TP-1 rows with >= 4,096 tokens and >= 128 experts at EP 2, 4, 8, each divided by the same "
            "shape's EP-1 latency. `share_per_rank`: ratio < 1.6 / EP (the rank timed T x topk / EP rows); "
            "`share_flat`: ratio > 0.6 (all T x topk rows entered the rank's grid). The LOGO report scores "
            "fused MoE with and without the EP > 1 rows of the minority semantics.",
            "",
            _md(ev),
            "",
        ]
    folds = tables["folds"]
    for fam in pd.unique(folds["family"]):
        f = folds[folds["family"] == fam]
        gens = order_generations(pd.unique(f["fold"]))
        out += [f"## {fam}", "", "### What this says (computed)", ""]
        out += [f"- {line}" for line in findings.get(str(fam), [])]
        piv = f.pivot_table(index="method", columns="fold", values="mape", sort=False).reindex(columns=gens)
        piv10 = f.pivot_table(index="method", columns="fold", values="mape_ge10us", sort=False).reindex(columns=gens)
        out += [
            "",
            "### MAPE per held-out generation, all rows",
            "",
            _md(piv.reset_index()),
            "",
            "### MAPE per held-out generation, rows measured >= 10 us",
            "",
            _md(piv10.reset_index()),
        ]
        o = tables["oracle"]
        o = o[(o["family"] == fam) & o["method"].isin([_MAIN, _CRUDE])]
        out += [
            "",
            "### Per GPU: as predicted, oracle per-GPU scalar, oracle per-regime scalars",
            "",
            _md(
                o[
                    ["method", "fold", "gpu", "n", "mape", "median_ratio", "mape_oracle_gpu", "mape_oracle_regime"]
                ].reset_index(drop=True)
            ),
        ]
        for by in ("regimes", "layouts"):
            r = tables[by]
            r = r[(r["family"] == fam) & r["method"].isin([_MAIN, _CRUDE])]
            col = "regime" if by == "regimes" else "layout"
            if by == "layouts" and set(r[col]) <= {"-"}:
                continue
            out += [
                "",
                f"### Per GPU and {col}",
                "",
                _md(
                    r[["method", "gpu", col, "n", "share_rows", "share_error", "mape", "median_ratio"]]
                    .sort_values(["gpu", col, "method"])
                    .reset_index(drop=True)
                ),
            ]
        figs = figures.get(str(fam), {})
        if figs:
            out += ["", "### Figures", ""] + [f"![{k}]({v})" for k, v in figs.items()]
        out.append("")
    return "\n".join(out) + "\n"


def anatomy_command(out: str | Path, max_train_rows_per_gpu: int | None, n_estimators: int | None) -> str:
    """The CLI line that reproduces a report written to ``out`` with these settings (defaults left out)."""
    cmd = f"pipeweave evaluate --protocol anatomy --out {out}"
    if max_train_rows_per_gpu != 4_000:
        cmd += f" --max-train-rows-per-gpu {max_train_rows_per_gpu or 0}"  # 0 = every row
    if n_estimators != 200:
        cmd += f" --n-estimators {n_estimators}"
    return cmd


def run_anatomy(
    *,
    families: Sequence[str] | None = None,
    out: str | Path = "experiments/error_anatomy",
    data: str | os.PathLike[str] | None = None,
    max_train_rows_per_gpu: int | None = 4_000,
    n_estimators: int | None = 200,
    progress: bool = True,
    predictions_path: str | Path | None = None,
    ablations: Sequence[str] = DEFAULT_ABLATIONS,
    methods: Sequence[str] = ("pipeweave", "xgboost_crude"),
) -> dict[str, Any]:
    """Fit and predict every anatomy method under LOGO, then write the report under ``out``.

    ``ablations``: names of :data:`FEATURE_GROUPS` to refit (headline families only); ``methods``:
    harness methods fitted besides the ablations (must include ``pipeweave``)."""
    from sklearn.base import clone

    from ._protocols import run_protocol
    from ._suite import (
        ABLATION_FAMILIES,
        L2_SCHED_FEATURES,
        SASS_ABLATION_FAMILIES,
        flagged_and_asked,
        labels_to_load,
        load_eval_frame,
        make_methods,
        present_labels,
        with_group_training,
    )

    t0 = time.perf_counter()
    labels = list(families or ANATOMY_FAMILIES)
    frame, _drops, fp = load_eval_frame(data, labels_to_load(labels))  # + rows that only train (group_labels)
    has_sass = any(c.startswith("sass_") for c in frame.columns)
    preds = []
    for label in present_labels(frame, labels):
        sub = frame[frame["eval_family"] == label]
        ms = make_methods(
            list(methods),
            label=label,
            has_sass=has_sass,
            max_rows_per_gpu=max_train_rows_per_gpu,
            n_estimators=n_estimators,
            seen_gpu=False,  # leave-one-generation-out: no test row is of a training GPU
        )
        base = ms["pipeweave"]
        drops = {
            "pipeweave_no_l2_sched": L2_SCHED_FEATURES,
            "pipeweave_no_spec_ratios": _spec_ratio_features(),
            "pipeweave_no_tile": _tile_features(),
        }
        drops = {k: v for k, v in drops.items() if k in ablations}
        if label not in ABLATION_FAMILIES:  # feature-group ablations on the headline families only (CPU)
            drops = {}
        for name, feats in drops.items():
            est = clone(base)
            prior = tuple(est.estimator.get_params().get("drop_features", ()) or ())
            est.set_params(estimator__drop_features=tuple(dict.fromkeys((*prior, *feats))))
            ms[name] = est
        if (
            label in ABLATION_FAMILIES
            and "pipeweave_no_sass" in ablations
            and has_sass
            and label in SASS_ABLATION_FAMILIES
        ):
            ms["pipeweave_no_sass"] = clone(base).set_params(estimator__use_sass=False)
        ms = with_group_training(ms, label, frame, max_train_rows_per_gpu)
        keep = tuple(c for c in ANATOMY_KEEP if c in sub.columns or c == "semantics_flagged")
        rows, asked = flagged_and_asked(sub)  # scored as asked (no recorded cuBLAS tile / split), as the LOGO report
        preds.append(
            run_protocol(rows, ms, "logo", family_col="eval_family", progress=progress, keep=keep, test_frame=asked)
        )
    pred = pd.concat(preds, ignore_index=True)
    meta = {
        "command": anatomy_command(out, max_train_rows_per_gpu, n_estimators),
        "data_fingerprint": fp,
        "max_train_rows_per_gpu": max_train_rows_per_gpu,
        "n_estimators": n_estimators,
        "families": labels,
        "feature_groups": FEATURE_GROUPS,
        "ablations": list(ablations),
        "methods": list(methods),
        "spec_ratio_features": list(_spec_ratio_features()),
        "small_us": SMALL_US,
    }
    if predictions_path:  # scratch copy (e.g. to re-render without refitting); never under experiments/
        pred.to_pickle(predictions_path)
    results = write_anatomy_report(pred, ep_semantics_evidence(frame), out, meta)
    print(f"error anatomy in {(time.perf_counter() - t0) / 60:.1f} min; wrote {out}/results.md", flush=True)
    return results


def write_anatomy_report(
    pred: pd.DataFrame, ep_evidence: pd.DataFrame, out: str | Path, meta: dict[str, Any]
) -> dict[str, Any]:
    """Tables, CSVs, figures, ``results.json`` and ``results.md`` from anatomy predictions (no fitting)."""
    from .._io import atomic_write, atomic_write_json, atomic_write_text, save_figure_png

    tables = anatomy_tables(pred)
    tables["ep_evidence"] = ep_evidence
    outp = Path(out)
    (outp / "figures").mkdir(parents=True, exist_ok=True)
    figures: dict[str, dict[str, str]] = {}
    for fam in pd.unique(pred["family"]):
        reg = tables["regimes"]
        reg = reg[(reg["family"] == fam) & reg["method"].isin([_MAIN, _CRUDE])]
        reg = reg.groupby(["method", "gpu", "regime"], sort=False).first().reset_index()
        orc = tables["oracle"]
        orc = orc[(orc["family"] == fam) & (orc["method"] == _MAIN)]
        figures[str(fam)] = {}
        for kind, draw, d in (("regimes", plot_regimes, reg), ("oracle", plot_oracle, orc)):
            ax = draw(d)
            ax.set_title(f"{fam}: {'MAPE per GPU and regime' if kind == 'regimes' else 'oracle scalars (pipeweave)'}")
            path = outp / "figures" / f"{fam}.{kind}.png"

            save_figure_png(ax.figure, path, dpi=100)
            figures[str(fam)][kind] = f"figures/{fam}.{kind}.png"
    for name, t in tables.items():

        def save_csv(p: Path, t: pd.DataFrame = t) -> None:
            t.to_csv(p, index=False, float_format="%.4g", lineterminator="\n")

        atomic_write(outp / f"{name}.csv", save_csv)
    results = {
        "meta": meta,
        "findings": anatomy_findings(tables),
        "miss_findings": miss_findings(tables["misses"]),
        **{k: v.astype(object).where(v.notna(), None).to_dict(orient="records") for k, v in tables.items()},
    }
    atomic_write_json(outp / "results.json", results)
    atomic_write_text(outp / "results.md", render_anatomy_markdown(tables, meta, figures))
    return results
