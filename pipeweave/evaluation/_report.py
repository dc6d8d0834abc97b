"""Evaluation reports: a reproducible ``results.json``, a markdown summary, PNG figures + CSVs.

Family keys
    Results are keyed by the ``family`` label (opaque, e.g. ``gemm_bf16``) when only one source
    measured that family in the predictions frame, else by ``"family[source]"`` for each source
    (e.g. ``fused_moe_bf16[aiconfigurator]`` and ``fused_moe_bf16[pipeweave]``); see
    :func:`family_keys`. Sources are never pooled.

``results.json`` (all errors in percent, ``n`` / ``n_missing`` in rows)::

    protocol, data_fingerprint, versions{python,numpy,pandas,sklearn,xgboost?,pipeweave},
    methods[...], regimes{name: definition}, units,
    families{key: {family, source, folds[...], n_rows, generations[...], gpus{gpu: generation}}},
    results[key][method][generation | "all"]                 -> stats
    by_gpu[key][method][gpu]                                  -> stats
    by_regime[key][method][generation | "all"][regime]        -> stats (only non-empty regimes)
    by_op[key][method][op]                                     -> stats per framework operator (only for a key
        whose rows name two or more ops in an ``op`` column, e.g. NeuSight's bmm and linear)
    results_ge10us[key][method][generation | "all"]          -> stats over rows measured >= 10 us
    results_unflagged[key][method][generation | "all"]       -> stats without the rows whose
        ``semantics_flagged`` column is True (only when the predictions carry that column and
        some row of the key is flagged; see ``flagged`` for the counts)
    errors[{family_key, family, source, fold, method, error, n}],  extra (when given)

    stats = {mape, median_ape, p90_ape, within_10, within_25, n, n_missing, mape_ci95: [lo, hi]}

``results_ge10us`` is the population the anchors report on (KernelSight-LM fits and scores its
efficiency on kernels of at least 10 us); ``mape_ge10us`` in ``results[key][method][g]`` repeats
its MAPE next to the all-rows one. ``results_unflagged`` drops rows a source manifest flags as
measured under another semantics than the rest of the source (e.g. fused-MoE expert parallelism
timed per rank on some GPUs, see ``datasets/sources/aiconfigurator.toml``).

``generation`` is the held-out generation under ``logo``, the generation of the held-out GPUs (each
its own fold) under ``unseen-gpu``, of the tested GPUs under ``gpu-split`` and the generation of the held-out shapes' rows under
``unseen-shape``; ``"all"`` pools every test row of the family. ``n`` counts
the scored rows and ``n_missing`` the rows a failed method left NaN (excluded from its
metrics). Values are rounded to 4 decimals and NaN is written as null. No timestamp is stored,
so the same predictions give byte-identical JSON.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from .._errors import DataError, shown
from .._io import atomic_write, atomic_write_json, atomic_write_text, save_figure_png
from ._goals import goal_status
from ._metrics import summarize
from ._plots import (
    order_generations,
    plot_data_error_cdf,
    plot_data_mape_by_generation,
    plot_data_scatter,
    plot_error_cdf,
    plot_mape_by_generation,
    plot_scatter,
)
from ._protocols import DEEP_K_MIN, PRED_COLUMNS, REGIMES, TINY_US, fold_errors

__all__ = [
    "family_keys",
    "build_results",
    "merge_results",
    "refresh_differences",
    "render_markdown",
    "write_report",
    "STAT_KEYS",
    "FLAG_COLUMN",
    "GE_US",
]

#: Keys of every stats record in ``results.json``.
STAT_KEYS: tuple[str, ...] = ("mape", "median_ape", "p90_ape", "within_10", "within_25", "n", "n_missing", "mape_ci95")
_ALL = "all"
_KEY = "family_key"
#: boolean prediction column: the row was measured under a semantics the source manifest flags
FLAG_COLUMN = "semantics_flagged"
#: the anchors' population: rows measured at >= this many microseconds
GE_US: float = TINY_US
_FIGURES = (
    ("scatter", "predicted vs measured"),
    ("mape_by_generation", "MAPE per generation"),
    ("error_cdf", "error CDF"),
)


def family_keys(pred_df: pd.DataFrame) -> pd.Series:
    """Result key per row: ``family`` if that family has a single source, else ``family[source]``."""
    fam = pred_df["family"].astype(str)
    src = pred_df["source"].astype(str)
    n_src = src.groupby(fam).transform("nunique")
    return pd.Series(np.where(n_src > 1, fam + "[" + src + "]", fam), index=pred_df.index, name="family_key")


def _r(x: Any) -> float | None:
    x = float(x)
    return round(x, 4) if np.isfinite(x) else None


def _stats(row: Any) -> dict[str, Any]:
    return {
        "mape": _r(row.mape),
        "median_ape": _r(row.median_ape),
        "p90_ape": _r(row.p90_ape),
        "within_10": _r(row.within_10),
        "within_25": _r(row.within_25),
        "n": int(row.n),
        "n_missing": int(row.n_missing),
        "mape_ci95": [_r(row.mape_ci95_lo), _r(row.mape_ci95_hi)],
    }


def _lookup(summary: pd.DataFrame, by: list[str]) -> dict[tuple, dict[str, Any]]:
    return {tuple(getattr(row, c) for c in by): _stats(row) for row in summary.itertuples(index=False)}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, np.ndarray, pd.Series)):
        return [_jsonable(v) for v in (sorted(obj) if isinstance(obj, set) else list(obj))]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if np.isfinite(obj) else None
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if obj is None or isinstance(obj, str):
        return obj
    return str(obj)


def _versions() -> dict[str, str]:
    from importlib import metadata

    import sklearn

    from .. import __version__

    v = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "sklearn": sklearn.__version__,
    }
    try:  # read the installed version without importing xgboost (only `model` may)
        v["xgboost"] = metadata.version("xgboost")
    except metadata.PackageNotFoundError:
        pass
    v["pipeweave"] = __version__
    return v


def _check_pred_df(pred_df: pd.DataFrame) -> None:
    absent = [c for c in PRED_COLUMNS if c not in pred_df.columns]
    if absent:
        raise DataError(
            f"predictions frame lacks columns {absent}",
            hint="pass the frame returned by pipeweave.evaluation.run_protocol",
        )


def build_results(
    pred_df: pd.DataFrame,
    *,
    protocol: str,
    data_fingerprint: str,
    extra: Mapping[str, Any] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Nested, JSON-ready results of one protocol run (layout in the module docstring).

    ``pred_df`` is :func:`run_protocol`'s output (possibly several runs concatenated, one protocol);
    ``data_fingerprint`` identifies the measurements (e.g. a hash the lead computes); ``extra``
    (JSON-able; numpy scalars and NaN are converted) is stored under ``"extra"``. Deterministic:
    same predictions, same dict (``n_boot``/``seed`` drive the bootstrap CIs).
    """
    _check_pred_df(pred_df)
    df = pred_df.assign(**{_KEY: family_keys(pred_df)})
    methods = [str(m) for m in pd.unique(df["method"])]
    keys = sorted(pd.unique(df[_KEY]))
    kw: dict[str, Any] = {"n_boot": n_boot, "seed": seed}

    by_gen = _lookup(summarize(df, [_KEY, "method", "generation"], **kw), [_KEY, "method", "generation"])
    by_all = _lookup(summarize(df, [_KEY, "method"], **kw), [_KEY, "method"])
    by_gpu = _lookup(summarize(df, [_KEY, "method", "gpu"], **kw), [_KEY, "method", "gpu"])
    # per operator (a source that names the framework op of each row, e.g. NeuSight's bmm / linear)
    has_op = "op" in df.columns and bool(df["op"].notna().any())
    by_op = (
        _lookup(
            summarize(df[df["op"].notna()].astype({"op": str}), [_KEY, "method", "op"], **kw), [_KEY, "method", "op"]
        )
        if has_op
        else {}
    )
    by_reg: dict[str, tuple[dict, dict]] = {}
    for reg in REGIMES:
        sub = df[df[reg].to_numpy(dtype=bool)]
        by_reg[reg] = (
            _lookup(summarize(sub, [_KEY, "method", "generation"], **kw), [_KEY, "method", "generation"]),
            _lookup(summarize(sub, [_KEY, "method"], **kw), [_KEY, "method"]),
        )

    def per_gen(sub: pd.DataFrame) -> tuple[dict, dict]:
        return (
            _lookup(summarize(sub, [_KEY, "method", "generation"], **kw), [_KEY, "method", "generation"]),
            _lookup(summarize(sub, [_KEY, "method"], **kw), [_KEY, "method"]),
        )

    ge_gen, ge_all = per_gen(df[df["latency_us"].to_numpy(dtype=float) >= GE_US])
    flag = (
        df[FLAG_COLUMN].fillna(False).to_numpy(dtype=bool)
        if FLAG_COLUMN in df.columns
        else np.zeros(len(df), dtype=bool)
    )
    flagged_keys = sorted(pd.unique(df.loc[flag, _KEY])) if flag.any() else []
    uf_gen, uf_all = per_gen(df[~flag]) if flagged_keys else ({}, {})

    families: dict[str, Any] = {}
    results: dict[str, Any] = {}
    results_ge: dict[str, Any] = {}
    results_uf: dict[str, Any] = {}
    flagged: dict[str, Any] = {}
    gpu_results: dict[str, Any] = {}
    regime_results: dict[str, Any] = {}
    op_results: dict[str, Any] = {}
    for key in keys:
        sub = df[df[_KEY] == key]
        gens = order_generations(sub["generation"])
        gpu_gen = sub.drop_duplicates("gpu").set_index("gpu")["generation"].astype(str)
        gpus = sorted(gpu_gen.index.astype(str), key=lambda g: (gens.index(gpu_gen[g]), g))
        fam_methods = [m for m in methods if (sub["method"] == m).any()]
        families[key] = {
            "family": str(sub["family"].iloc[0]),
            "source": str(sub["source"].iloc[0]),
            "folds": order_generations(sub["fold"]),
            "n_rows": int((sub["method"] == fam_methods[0]).sum()),
            "generations": gens,
            "gpus": {g: str(gpu_gen[g]) for g in gpus},
        }
        results[key], gpu_results[key], regime_results[key], results_ge[key] = {}, {}, {}, {}
        if key in flagged_keys:
            results_uf[key] = {}
            fsub = sub[(sub["method"] == fam_methods[0]).to_numpy() & flag[(df[_KEY] == key).to_numpy()]]
            flagged[key] = {
                "n": int(len(fsub)),
                "by_generation": {g: int(v) for g, v in fsub["generation"].value_counts().items()},
                "by_gpu": {g: int(v) for g, v in fsub["gpu"].value_counts().items()},
            }
        for m in fam_methods:
            results[key][m] = {g: by_gen[(key, m, g)] for g in gens if (key, m, g) in by_gen}
            results[key][m][_ALL] = by_all[(key, m)]
            results_ge[key][m] = {g: ge_gen[(key, m, g)] for g in gens if (key, m, g) in ge_gen}
            if (key, m) in ge_all:
                results_ge[key][m][_ALL] = ge_all[(key, m)]
            for g, rec in results[key][m].items():
                rec["mape_ge10us"] = results_ge[key][m].get(g, {}).get("mape")
            if key in flagged_keys:
                results_uf[key][m] = {g: uf_gen[(key, m, g)] for g in gens if (key, m, g) in uf_gen}
                if (key, m) in uf_all:
                    results_uf[key][m][_ALL] = uf_all[(key, m)]
            gpu_results[key][m] = {g: by_gpu[(key, m, g)] for g in gpus if (key, m, g) in by_gpu}
            ops = sorted(pd.unique(sub["op"].dropna().astype(str))) if has_op else []
            if len(ops) > 1:
                op_results.setdefault(key, {})[m] = {o: by_op[(key, m, o)] for o in ops if (key, m, o) in by_op}
            reg_m: dict[str, Any] = {}
            for g in [*gens, _ALL]:
                cell = {}
                for reg in REGIMES:
                    table = by_reg[reg][1] if g == _ALL else by_reg[reg][0]
                    hit = table.get((key, m) if g == _ALL else (key, m, g))
                    if hit is not None:
                        cell[reg] = hit
                if cell:
                    reg_m[g] = cell
            regime_results[key][m] = reg_m

    errs = fold_errors(df)
    keymap = df.drop_duplicates(["family", "source"]).set_index(["family", "source"])[_KEY]
    errors = [
        {
            "family_key": str(keymap[(r.family, r.source)]),
            "family": str(r.family),
            "source": str(r.source),
            "fold": str(r.fold),
            "method": str(r.method),
            "error": str(r.error),
            "n": int(r.n),
        }
        for r in cast(Iterable[Any], errs.itertuples(index=False))
    ]
    out: dict[str, Any] = {
        "protocol": str(protocol),
        "data_fingerprint": str(data_fingerprint),
        "versions": _versions(),
        "methods": methods,
        "regimes": {"deep_k": f"gemm family, k >= {DEEP_K_MIN}", "tiny": f"measured latency < {TINY_US:g} us"},
        "units": "errors in percent: ape = |pred/measured - 1| * 100; n, n_missing in rows",
        "families": families,
        "results": results,
        "by_gpu": gpu_results,
        "by_regime": regime_results,
        "results_ge10us": results_ge,
        "errors": errors,
    }
    if op_results:
        out["by_op"] = op_results
    if flagged_keys:
        out["results_unflagged"] = results_uf
        out["flagged"] = flagged
    if extra is not None:
        out["extra"] = _jsonable(extra)
    return out


#: the sections of :func:`build_results`'s dict keyed by family key (what a refresh replaces per family)
_FAMILY_SECTIONS = (
    "families",
    "results",
    "by_gpu",
    "by_regime",
    "results_ge10us",
    "by_op",
    "results_unflagged",
    "flagged",
)
#: the family-keyed sections :func:`build_results` writes only when some family has an entry
_OPTIONAL_SECTIONS = ("by_op", "results_unflagged", "flagged")
#: what must agree between a report and a refresh of some of its families (the rows' settings, not the code)
_REFRESH_SAME = ("protocol", "data_fingerprint", "versions")
_REFRESH_SAME_EXTRA = (
    "method_names",
    "max_train_rows_per_gpu",
    "n_estimators",
    "sass_features",
    "train_gpus",
    "profiles",
    "train_dtypes",
)
#: boosting rounds of the learned methods when not set: what a report whose ``extra`` has no
#: ``n_estimators`` (written before it was recorded, or run without --n-estimators) ran
_DEFAULT_N_ESTIMATORS = 200


def _command_option(command: str, flag: str) -> list[str] | None:
    """The values a recorded ``pipeweave evaluate`` command gives ``flag`` (``--families a b`` -> ``['a', 'b']``;
    None when the command does not name it): how a report written before its settings were recorded is read."""
    mark = f" {flag} "
    return command.split(mark, 1)[1].split(" --", 1)[0].split() if mark in command else None


def refresh_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between report ``old`` and a refresh ``new`` (either may be just its top-level keys and
    ``extra``) that makes a merge unsound: ``'key: old -> new'`` each; empty = mergeable."""
    diff = [f"{k}: {shown(old.get(k))} -> {shown(new.get(k))}" for k in _REFRESH_SAME if old.get(k) != new.get(k)]
    oe, ne = old.get("extra") or {}, new.get("extra") or {}
    for k in _REFRESH_SAME_EXTRA:
        absent = _DEFAULT_N_ESTIMATORS if k == "n_estimators" else None  # an older report ran the default
        a, b = oe.get(k, absent), ne.get(k, absent)
        if a != b:
            diff.append(f"extra.{k}: {shown(a)} -> {shown(b)}")
    return diff


def _report_to_refresh(
    out: str | os.PathLike[str], families: Iterable[str] | None, what: str, check: Any
) -> dict[str, Any]:
    """The ``results.json`` in ``out`` that a refresh of ``families`` merges into: refused (a DataError naming the
    file and the fix) when no family is named, the file is missing, or it is not JSON that ``check(report)``
    accepts (``check`` raises KeyError, TypeError, ValueError or AttributeError on a report of another shape).
    ``what`` names the kind of report in the messages ("report", "few-shot report")."""
    import json

    if not families:
        raise DataError(
            f"a refresh re-runs some families of a {what}: none were named",
            hint="name the families whose predictions changed, e.g. families=['gemm_fp32']",
        )
    path = Path(out) / "results.json"
    if not path.is_file():
        raise DataError(
            f"nothing to refresh: no {what} at {str(path)!r}",
            hint="run the whole report into that folder first (without refresh)",
        )
    try:
        report = json.loads(path.read_text())
        if not isinstance(report, dict):
            raise TypeError(f"a JSON {type(report).__name__}, not an object")
        check(report)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(
            f"{str(path)!r} is not a {what} written by pipeweave evaluate ({type(exc).__name__}: {exc})",
            hint="run the whole report into that folder (without refresh)",
        ) from None
    return report


def merge_results(old: Mapping[str, Any], new: Mapping[str, Any], *, raw_families: Mapping[str, Any]) -> dict:
    """``old`` (a :func:`build_results` dict) with the families scored in ``new`` replaced by ``new``'s.

    A refresh: after a change that moves only some families' predictions (their recipe, say), re-running
    those families and merging gives the report a whole re-run would, without refitting the others
    (under every protocol a family's folds and training rows do not depend on which other families are
    scored). Refused, listing every difference (:func:`refresh_differences`), unless both were made on the
    same data (same ``data_fingerprint``: the caller fingerprints the rows of every family of ``old``), with
    the same library versions, requested methods, training-row cap, boosting rounds, SASS columns, training
    GPUs and profile files. ``raw_families``: evaluation family -> its ``(family, dtype)`` in the profile
    table, to replace the refreshed families' dropped-row records. The refresh is recorded in
    ``extra["refreshed"]`` (families, command; chained over refreshes); ``extra["command"]`` stays the
    whole report's."""
    diff = refresh_differences(old, new)
    if diff:
        raise DataError(
            "cannot merge a refresh into this report: it was made with other settings or data ("
            + "; ".join(diff)
            + ")",
            hint="re-run the whole report (every family), or refresh with the report's own settings",
        )
    oe, ne = old.get("extra") or {}, new.get("extra") or {}
    old_labels = {str(m["family"]) for m in old["families"].values()}
    labels = sorted({str(m["family"]) for m in new["families"].values()})
    unknown = sorted(set(labels) - old_labels)
    if unknown:
        raise DataError(
            f"the refresh scores families {unknown} that the report does not have (it has {sorted(old_labels)})",
            hint="re-run the whole report to add a family",
        )
    out: dict[str, Any] = {k: v for k, v in old.items() if k not in _FAMILY_SECTIONS}
    keep = [k for k, m in old["families"].items() if str(m["family"]) not in labels]
    keys = sorted([*keep, *new["families"]])
    for sec in _FAMILY_SECTIONS:
        merged = {}
        for k in keys:  # a refreshed family's entry from the refresh, the others' from the report
            src = (new if k in new["families"] else old).get(sec) or {}
            if k in src:
                merged[k] = src[k]
        if merged or sec not in _OPTIONAL_SECTIONS:
            out[sec] = merged
    out["methods"] = list(dict.fromkeys([*old.get("methods", []), *new.get("methods", [])]))
    out["errors"] = [e for e in old.get("errors", []) if str(e["family"]) not in labels] + list(new.get("errors", []))
    pairs = {tuple(raw_families[lab]) for lab in labels}
    extra = dict(oe)
    if "dropped_impossible_rows" in oe or "dropped_impossible_rows" in ne:
        extra["dropped_impossible_rows"] = [
            r for r in oe.get("dropped_impossible_rows", []) if (r["family"], r["dtype"]) not in pairs
        ] + list(ne.get("dropped_impossible_rows", []))
    if "method_notes" in ne:
        extra["method_notes"] = ne["method_notes"]
    extra["refreshed"] = [*oe.get("refreshed", []), {"families": labels, "command": ne.get("command")}]
    out["extra"] = extra
    return out


# --------------------------------------------------------------------------- markdown


def _fmt(x: float | None, nd: int = 1) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _metric_table(
    per_method: dict[str, dict[str, dict]], columns: list[str], labels: list[str], field: str = "mape"
) -> str:
    """Rows = methods, columns = ``columns`` keys of each method's dict; lowest value in bold."""
    methods = list(per_method)
    best = {}
    for c in columns:  # only methods that predicted every row of the column compete
        recs = [r for r in (per_method[m].get(c) for m in methods) if r is not None and r.get(field) is not None]
        full = [r[field] for r in recs if not r.get("n_missing")]
        best[c] = min(full) if full else None
    rows = []
    for m in methods:
        cells = [m]
        for c in columns:
            rec = per_method[m].get(c)
            v = None if rec is None else rec.get(field)
            s = _fmt(v)
            if v is not None and rec is not None and v == best[c] and not rec.get("n_missing") and len(methods) > 1:
                s = f"**{s}**"
            if rec is not None and rec.get("n_missing"):
                s += " †"
            cells.append(s)
        rows.append(cells)
    return _md_table(["method", *labels], rows)


def _col_n(per_method: dict[str, dict[str, dict]], col: str) -> int:
    for m in per_method:
        rec = per_method[m].get(col)
        if rec is not None:
            return int(rec["n"] + rec["n_missing"])
    return 0


#: where a report's goal misses are explained, per protocol ("" = any other)
_WHY: dict[str, str] = {
    "logo": "Why each miss happens (the share of it that the rows a source manifest flags, one level per "
    "held-out GPU, or one level per GPU and regime explain, and the regime carrying most of the error) is "
    'computed per cell in `experiments/error_anatomy/results.md`, section "Goal misses" (`pipeweave evaluate '
    "--protocol anatomy`); what was tried against each, in `experiments/accuracy_log/results.md`.",
    "unseen-gpu": "A GPU alone in its generation is held out exactly as under `logo` (see `experiments/logo`); "
    "where each miss sits is in the per-GPU tables below; what was tried, in "
    "`experiments/accuracy_log/results.md`.",
    "": "Where each miss sits is in the per-GPU tables below; what was tried, in "
    "`experiments/accuracy_log/results.md`.",
}


def _goals_section(results: Mapping[str, Any]) -> list[str]:
    """The goal table (:func:`goal_status`): one row per family with a goal, one cell per column."""
    st = goal_status(results)
    if st.empty:
        return []
    met, n = int(st["met"].sum()), len(st)
    head = [
        "",
        "## Goals",
        "",
        f"MAPE (%) of `pipeweave` against the product's goals (`pipeweave.evaluation.ACCURACY_GOALS`): "
        f"{met} of {n} cells met. A miss is reported with its size; a cell also names the best baseline "
        "when that baseline is lower. " + _WHY.get(str(results.get("protocol")), _WHY[""]),
        "",
    ]
    if results.get("protocol") == "unseen-gpu":  # one cell per held-out GPU: a list per family, not a column each
        gen_of = {g: str(gen) for meta in results["families"].values() for g, gen in meta["gpus"].items()}
        order = {g: i for i, g in enumerate(order_generations(gen_of.values()))}
        lines = []
        for key, sub in st.groupby("family_key", sort=False):
            recs = sorted(
                sub.to_dict("records"), key=lambda r: (order.get(gen_of.get(r["generation"], ""), 99), r["generation"])
            )
            cells = [
                _goal_cell(r, f"{r['generation']} ({gen_of.get(r['generation'], '?')}) ", listed=True) for r in recs
            ]
            lines.append(
                [
                    str(key),
                    f"<= {sub['goal_mape'].iloc[0]:g}",
                    f"{int(sub['met'].sum())} of {len(sub)}",
                    "; ".join(cells),
                ]
            )
        return head + [_md_table(["family", "goal", "GPUs met", "held-out GPU (generation): MAPE"], lines)]
    cols = order_generations(st["generation"])  # oldest first; "all" (unseen-shape) last
    rows = []
    for key, sub in st.groupby("family_key", sort=False):
        cells = [str(key), f"<= {sub['goal_mape'].iloc[0]:g}"]
        by_g = sub.set_index("generation")
        for g in cols:
            if g not in by_g.index:
                cells.append("–")
                continue
            cells.append(_goal_cell(by_g.loc[g]))
        rows.append(cells)
    return head + [_md_table(["family", "goal", *cols], rows)]


def _goal_cell(r: Any, prefix: str = "", *, listed: bool = False) -> str:
    """One goal cell: the MAPE, met or missed by how much, the unflagged MAPE and a lower baseline;
    ``listed``: one of several cells joined by "; " in one table cell (the baseline then in parentheses)."""
    # a miss that one decimal would show as 0.0 (10.04 against 10) gets two, so the cell never reads "missed by 0.0"
    nd = 1 if r["met"] or r["miss_by"] >= 0.05 else 2
    s = f"{prefix}{r['mape']:.{nd}f} " + ("met" if r["met"] else f"**missed by {r['miss_by']:.{nd}f}**")
    if pd.notna(r["mape_unflagged"]):
        s += f" ({r['mape_unflagged']:.1f} unflagged)"
    if not r["below_every_baseline"]:
        lower = f"{r['best_baseline']} {r['best_baseline_mape']:.1f} is lower"
        s += f" ({lower})" if listed else f"; {lower}"
    return s


def render_markdown(results: Mapping[str, Any], *, figures: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """Markdown summary of :func:`build_results`'s dict; ``figures[key][kind]`` = relative PNG path."""
    protocol = results["protocol"]
    extra = results.get("extra") or {}
    col_word = {
        "logo": "held-out generation",
        "unseen-gpu": "generation of the held-out GPUs",
        "gpu-split": "generation of the tested GPUs",
    }.get(protocol, "generation")
    v = ", ".join(f"{k} {val}" for k, val in results["versions"].items())
    out = [
        f"# pipeweave evaluation: protocol `{protocol}`",
        "",
        f"- data fingerprint: `{results['data_fingerprint']}`",
        f"- versions: {v}",
        f"- methods: {', '.join(results['methods'])}",
        "- errors in percent: APE = |predicted / measured - 1| x 100, MAPE = mean APE, "
        "<=10% / <=25% = share of rows within that APE; **bold** = best per column; "
        "† = the method failed on some rows (metrics over the rows it predicted).",
    ]
    if protocol == "logo":
        out.append("- columns = the held-out GPU generation: no GPU of it was in the training rows.")
    elif protocol == "unseen-gpu":
        out.append(
            "- each GPU is held out in turn (one fold per GPU): its rows were never in the training rows, its "
            "generation's other GPUs were; a generation column pools the folds of its GPUs, the per-GPU table "
            "is each held-out GPU's own score."
        )
    elif protocol == "gpu-split":
        trained = ", ".join(extra.get("train_gpus") or []) or "the named GPUs"
        out.append(
            f"- one fold: trained on every row of {trained} only; every other GPU's rows are tested (a published "
            "predictor's own split). Columns = the generation of the tested GPUs; the per-GPU table scores each."
        )
    else:
        out.append("- the held-out shapes were never in the training rows, on any GPU.")
    from ..vocab import RECORDED_TILE_FAMILIES

    asked = sorted({f for k in results.get("results", {}) for f in RECORDED_TILE_FAMILIES if str(k).startswith(f)})
    if asked:  # pipeweave.evaluation.as_asked
        out.append(
            f"- scored as asked: a test launch of {', '.join(f'`{f}`' for f in asked)} is predicted without the tile "
            "and split-K its kernel recorded on the measured GPU (what a user knows of a launch nobody ran; "
            "`pipeweave.evaluation.as_asked`): `pipeweave` gives it, as `pipeweave.predict` does "
            "(`PipeweaveRegressor.library_tiles`), the tile and split cuBLAS ran for its nearest training launches "
            "of the same GPU, or of a training GPU of its compute capability; else the tile of the nearest training "
            "launches of the GPUs of its major compute capability (the same SIMT kernels), with the split inferred "
            "for it (`LIBRARY_TILE_BORROW`); else the geometric mean of the "
            "`LIBRARY_TILE_FASTEST` fastest cuBLAS SIMT tiles, each with the split inferred for it; the other "
            "methods read the front-end's heuristic tile (the smallest envelope) and its inferred split. Training "
            "rows keep the recorded ones."
        )
    # families re-run since (merge_results); the others are the whole run's. The same refresh repeated (the record
    # keeps each) is one line with its count
    refreshes: dict[str, int] = {}
    for ref in extra.get("refreshed") or ():
        line = f"{', '.join(f'`{f}`' for f in ref['families'])} re-run alone (`{ref.get('command')}`)"
        refreshes[line] = refreshes.get(line, 0) + 1
    for line, times in refreshes.items():
        again = "" if times == 1 else f" ({times} times, the last one's figures)"
        out.append(f"- refreshed: {line}{again} and merged into the whole run's report.")
    if extra.get("tuning"):
        out.append(f"- tuning: {extra['tuning']}.")
    if "max_train_rows_per_gpu" in extra:
        cap = extra["max_train_rows_per_gpu"]
        out.append(
            "- training rows per fold: "
            + ("every training row" if cap is None else f"at most {int(cap):,} seeded random rows per GPU")
            + " (the models' own caps, e.g. `PipeweaveRegressor(max_rows_per_group=10000)`, still apply)."
        )
        if extra.get("train_dtypes") == "all":
            out.append(
                "- training rows are every dtype of the evaluated family (for `pipeweave`; fp8 and fp8_block GEMM "
                "beside bf16, float16 rmsnorm / silu_mul, fp8 attention ...) and of the families its booster also "
                "trains on (`pipeweave.model.FAMILY_BOOSTER_ROWS`), as the shipped model trains "
                "(`train_dtypes='all'`); the baselines train on the evaluated dtype's rows; "
                "no row of a held-out generation or GPU trains, whatever its dtype."
            )
        else:
            out.append(
                "- training rows are the evaluated family's dtype (for `pipeweave`, plus the evaluation families its "
                "booster also trains on, `pipeweave.model.FAMILY_BOOSTER_ROWS`); the shipped model also trains a "
                "family's other dtypes (float16 rmsnorm / silu_mul, fp8_block GEMM and fused MoE, fp8 attention), "
                "so its own held-out errors (`experiments/error_bands`) can differ from these (`train_dtypes='all'` "
                "trains as it does; the project's run of it: `experiments/logo_as_shipped`)."
            )
    out += _goals_section(results)
    notes = extra.get("method_notes") or {}
    if notes:
        out += ["", "## Methods", ""] + [f"- `{m}`: {note}" for m, note in notes.items()]
    for key, meta in results["families"].items():
        res = results["results"][key]
        gens = [*meta["generations"], _ALL]
        out += [
            "",
            f"## {key}",
            "",
            f"family `{meta['family']}`, source `{meta['source']}`, {meta['n_rows']} test rows, "
            f"folds: {', '.join(meta['folds'])}",
            "",
            f"### MAPE (%) per {col_word}",
            "",
            _metric_table(res, gens, [f"{g} (n={_col_n(res, g)})" for g in gens]),
        ]
        ge = results.get("results_ge10us", {}).get(key, {})
        ge_cols = [g for g in gens if any(g in p for p in ge.values())]
        if ge_cols:
            out += [
                "",
                f"### MAPE (%) per {col_word}, rows measured >= {GE_US:g} us (the anchors' population)",
                "",
                _metric_table(ge, ge_cols, [f"{g} (n={_col_n(ge, g)})" for g in ge_cols]),
            ]
        uf = results.get("results_unflagged", {}).get(key)
        if uf:
            fl = results["flagged"][key]
            where = ", ".join(f"{g} {n}" for g, n in sorted(fl["by_gpu"].items()))
            uf_cols = [g for g in gens if any(g in p for p in uf.values())]
            out += [
                "",
                f"### MAPE (%) per {col_word}, without the {fl['n']} rows flagged by the source manifest ({where})",
                "",
                _metric_table(uf, uf_cols, [f"{g} (n={_col_n(uf, g)})" for g in uf_cols]),
            ]
        rows = []
        for m, per in res.items():
            a = per[_ALL]
            ci = a["mape_ci95"]
            rows.append(
                [
                    m,
                    _fmt(a["mape"]),
                    f"[{_fmt(ci[0])}, {_fmt(ci[1])}]",
                    _fmt(a["median_ape"]),
                    _fmt(a["p90_ape"]),
                    _fmt(a["within_10"]),
                    _fmt(a["within_25"]),
                    f"{a['n']}" + (f" (+{a['n_missing']} missing)" if a["n_missing"] else ""),
                ]
            )
        out += [
            "",
            "### All test rows",
            "",
            _md_table(["method", "MAPE", "95% CI", "median APE", "p90 APE", "<=10% (%)", "<=25% (%)", "n"], rows),
        ]
        gpus = list(meta["gpus"])
        gres = results["by_gpu"][key]
        out += [
            "",
            "### MAPE (%) per GPU",
            "",
            _metric_table(gres, gpus, [f"{g} ({meta['gpus'][g]}, n={_col_n(gres, g)})" for g in gpus]),
        ]
        ores = results.get("by_op", {}).get(key)
        if ores:
            ops = list(dict.fromkeys(o for per in ores.values() for o in per))  # every method's ops
            out += [
                "",
                "### MAPE (%) per operator (the source's framework op of each row)",
                "",
                _metric_table(ores, ops, [f"{o} (n={_col_n(ores, o)})" for o in ops]),
            ]
        rres = results["by_regime"][key]
        for reg in REGIMES:
            per = {m: {g: cell[reg] for g, cell in by_g.items() if reg in cell} for m, by_g in rres.items()}
            cols = [g for g in gens if any(g in p for p in per.values())]
            if not cols:
                continue
            out += [
                "",
                f"### MAPE (%) in regime `{reg}` ({results['regimes'][reg]})",
                "",
                _metric_table(per, cols, [f"{g} (n={_col_n(per, g)})" for g in cols]),
            ]
        figs = (figures or {}).get(key, {})
        if figs:
            out += ["", "### Figures", ""]
            out += [f"![{title}]({figs[kind]})" for kind, title in _FIGURES if kind in figs]
    if results["errors"]:
        out += ["", "## Errors", ""]
        out += [
            f"- `{e['method']}` on {e['family_key']} fold `{e['fold']}` ({e['n']} rows): {e['error']}"
            for e in results["errors"]
        ]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- files


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", key).strip("_") or "family"


def _save_png(ax_or_axes: Any, path: Path, dpi: int) -> None:
    ax = np.asarray(ax_or_axes, dtype=object).ravel()[0]
    fig = ax.figure
    save_figure_png(fig, path, dpi=dpi)


def _save_csv(data: pd.DataFrame, path: Path) -> None:
    atomic_write(path, lambda p: data.to_csv(p, index=False, float_format="%.6g", lineterminator="\n"))


#: figures whose data is not saved next to them (one point per test row; the command regenerates it)
_NO_CSV: frozenset[str] = frozenset({"scatter"})


def write_report(
    results: Mapping[str, Any],
    pred_df: pd.DataFrame,
    out_dir: str | os.PathLike[str],
    *,
    predictions: bool = False,
    with_figures: bool = True,
    max_scatter_points: int = 8_000,
    n_boot: int = 1000,
    seed: int = 0,
    dpi: int = 110,
) -> dict[str, Path]:
    """Write ``results.json``, ``results.md`` and, per family key, three PNG figures under
    ``figures/`` (``<key>.scatter``, ``.mape_by_generation``, ``.error_cdf``), the last two with a
    CSV of exactly the plotted data. The scatter's points (one per test row: tens of thousands of
    measured latencies) are not written: the command that wrote the report regenerates them, and
    ``predictions=True`` writes every prediction to ``predictions.csv.gz``. A family with no rows in
    ``pred_df`` (kept from an earlier run by :func:`merge_results`) keeps the figures already under
    ``out_dir``, which ``results.md`` links. Every file is written
    atomically. ``with_figures=False`` writes no figure (``results.md`` links none). Returns ``{name: path}`` of the files
    written (name = path relative to out_dir)."""
    _check_pred_df(pred_df)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    written["results.json"] = atomic_write_json(out / "results.json", _jsonable(results))

    keys = family_keys(pred_df)
    figures: dict[str, dict[str, str]] = {}
    used: set[str] = set()
    for key in results["families"] if with_figures else ():
        slug = _slug(key)
        while slug in used:
            slug += "_"
        used.add(slug)
        sub = pred_df[keys == key]
        if sub.empty:  # a family kept from an earlier run (a refresh): link its figures if they are there
            kept = {kind: f"figures/{slug}.{kind}.png" for kind, _title in _FIGURES}
            if all((out / path).is_file() for path in kept.values()):
                figures[key] = kept
            continue
        data = {
            "scatter": plot_data_scatter(sub, max_points=max_scatter_points, seed=seed),
            "mape_by_generation": plot_data_mape_by_generation(sub, n_boot=n_boot, seed=seed),
            "error_cdf": plot_data_error_cdf(sub),
        }
        draw = {"scatter": plot_scatter, "mape_by_generation": plot_mape_by_generation, "error_cdf": plot_error_cdf}
        figures[key] = {}
        for kind, _title in _FIGURES:
            stem = f"figures/{slug}.{kind}"
            axes = draw[kind](data[kind])
            first = np.asarray(axes, dtype=object).ravel()[0]
            first.figure.suptitle(f"{key}: {_title} ({results['protocol']})")
            if kind not in _NO_CSV:
                _save_csv(data[kind], out / f"{stem}.csv")
                written[f"{stem}.csv"] = out / f"{stem}.csv"
            _save_png(axes, out / f"{stem}.png", dpi)
            written[f"{stem}.png"] = out / f"{stem}.png"
            figures[key][kind] = f"{stem}.png"

    written["results.md"] = atomic_write_text(out / "results.md", render_markdown(results, figures=figures))
    if predictions:
        path = out / "predictions.csv.gz"
        atomic_write(
            path,
            lambda p: pred_df.to_csv(
                p, index=False, float_format="%.6g", lineterminator="\n", compression={"method": "gzip", "mtime": 0}
            ),
        )
        written["predictions.csv.gz"] = path
    return written
