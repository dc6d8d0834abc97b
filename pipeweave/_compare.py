"""Compare a workload across GPUs: which GPU runs these launches fastest, and by how much.

A workload is a table of launch rows (the rows ``predict`` takes, without a GPU) with an optional
``count`` column: how many times each launch runs per step (a decode step, a layer, a batch; default 1).
Every launch is predicted on every GPU (:func:`pipeweave.api.predict_frame`), and each GPU's **total**
is ``sum(count x latency_us_pred)`` over the launches predicted on *every* GPU, so the totals compare
the same work. Launches that cannot be predicted on some GPU (outside the valid domain there, e.g. a
tile config that does not fit its shared memory) are reported by row number and left out of every
total.

**Band of a total.** With ``interval``, each launch's error band (:meth:`PipeweaveRegressor.predict_interval`)
is summed end to end: ``sum(count x latency_us_lo)`` to ``sum(count x latency_us_hi)``, the widest band the
launches' bands allow together. On held-out generations (``experiments/workload_bands``) it holds for a
GPU whose launches the model gets right on average: 96-100% of random 20-launch GEMM workloads inside the
80% band on five of seven GPUs. Where the launches' errors share a bias (L40S GEMM: its compute-bound
launches run ~1.4x slower than predicted) the bias does not average out, the longest launches dominate the
total, and totals fall outside *more* often than single launches do (L40S GEMM: 44% of single launches, 9%
of 20-launch workloads). A GPU whose band overlaps the fastest GPU's band is marked ``overlaps_best``: the
model cannot tell them apart at that coverage.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["COUNT_COLUMN", "Comparison", "compare", "plot_comparison"]

#: workload column: how many times a launch runs per step (a number >= 0; absent or blank: 1)
COUNT_COLUMN: str = "count"
#: Largest plausible count (runs of one launch per step); a larger one is a typo, and overflows the totals
MAX_COUNT: float = 1e12


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare` (times in us).

    ``per_launch``: one row per launch and GPU: ``row`` (1-based workload row), ``gpu``, ``family``, ``count``,
    ``latency_us_pred`` (NaN where not predicted), with ``interval`` also ``latency_us_lo``, ``latency_us_hi``,
    ``band``, and ``problem`` (why a row was not predicted; ``""`` otherwise).
    ``summary``: one row per GPU, fastest first: ``gpu``, ``generation``, ``total_us``, ``total_lo_us``,
    ``total_hi_us`` (NaN without bands), ``speedup_vs_baseline`` (baseline total / this total),
    ``overlaps_best``, ``bands`` (the launches' band situations, e.g. ``"unseen 3"``), ``top_family`` and
    ``top_family_share`` (its share of the total).
    ``by_family``: the totals split by family, one row per GPU and family (``gpu``, ``family``, ``total_us``,
    ``share``).
    """

    per_launch: pd.DataFrame
    summary: pd.DataFrame
    by_family: pd.DataFrame
    baseline: str
    coverage: float | None
    launches: int
    common_launches: int


def _counts(df: pd.DataFrame) -> Any:
    """The ``count`` column as floats (1 where absent); a bad cell raises, naming its rows."""
    import numpy as np
    import pandas as pd

    if COUNT_COLUMN not in df.columns:
        import difflib

        # a misspelled count column would otherwise be ignored and every launch counted once
        lower = {str(c).strip().lower(): str(c) for c in df.columns}
        # case and plural variants ("Count", "counts", "cnt"), not other words ("token_count", "counter")
        close = [k for k in lower if k == "cnt"] or difflib.get_close_matches(
            COUNT_COLUMN, list(lower), n=1, cutoff=0.85
        )
        if close:
            raise DataError(
                f"no {COUNT_COLUMN!r} column, but {lower[close[0]]!r} looks like one (without it every launch "
                "counts once)",
                hint=f"rename the column to {COUNT_COLUMN!r} (runs of the launch per step)",
            )
        return np.ones(len(df))
    raw = df[COUNT_COLUMN]
    blank = raw.isna().to_numpy() | (raw.astype("string").str.strip().fillna("") == "").to_numpy(dtype=bool)
    c = np.where(blank, 1.0, pd.to_numeric(raw.where(~blank), errors="coerce").to_numpy(dtype=float))  # blank: once
    bad = np.flatnonzero(~(np.isfinite(c) & (c >= 0) & (c <= MAX_COUNT)))
    if len(bad):
        cells = [raw.iloc[i] for i in bad[:5]]
        shown = ", ".join(
            f"row {i + 1} ({(v.item() if isinstance(v, np.generic) else v)!r})" for i, v in zip(bad, cells)
        )
        raise DataError(
            f"the {COUNT_COLUMN!r} column must hold numbers in [0, {MAX_COUNT:g}] (runs of the launch per step): "
            f"{shown}" + (f" and {len(bad) - 5} more" if len(bad) > 5 else ""),
            hint=f"fix those cells, or drop the {COUNT_COLUMN!r} column to count every launch once",
        )
    if not (c > 0).any():
        raise DataError(
            f"every {COUNT_COLUMN!r} cell is 0: the workload runs nothing", hint="give at least one launch a count > 0"
        )
    return c


def compare(
    launches: Any,
    gpus: Sequence[Any],
    *,
    model: Any = None,
    data: str | os.PathLike[str] | None = None,
    interval: float | None = 0.8,
    baseline: Any = None,
) -> Comparison:
    """Predict a workload on several GPUs and compare their totals (see the module docstring).

    Parameters
    ----------
    launches : DataFrame, mapping or list of mappings
        Launch rows as :func:`pipeweave.predict` takes them, plus an optional ``count`` column (runs per
        step). A ``gpu`` column is replaced by each compared GPU. Not modified.
    gpus : sequence of str, path or GPUSpec
        The GPUs to compare (catalog names or aliases, spec files, GPUSpec); at least one, no GPU twice.
    model : PipeweaveRegressor or path, optional
        Default: the shipped model.
    interval : {0.5, 0.8, 0.9} or None
        Coverage of the error bands (default 0.8); ``None`` for none (needed for a model without bands).
    baseline : str, path or GPUSpec, optional
        The GPU the speedups are relative to (default: the first of ``gpus``).

    Returns
    -------
    Comparison
        ``per_launch`` (each launch's prediction and band per GPU) and ``summary`` (each GPU's count-weighted
        total and band, speedup against ``baseline``); every time in microseconds.

    Raises
    ------
    DataError
        No GPU, a GPU given twice, a bad ``count`` cell, a baseline not among ``gpus``, a model without
        bands with ``interval``, or no launch predicted on every GPU.
    """
    import numpy as np
    import pandas as pd

    from ._paths import resolve_data_dir
    from .api import as_launch_frame, band_columns, load_model, predict_frame
    from .hardware import GPUSpec, get_gpu
    from .model import check_coverage, has_error_bands

    def spec_of(g: Any) -> GPUSpec:
        return get_gpu(g)  # a GPUSpec passes through (checked against the catalog entry of its name)

    if isinstance(gpus, (np.ndarray, pd.Index, pd.Series, pd.api.extensions.ExtensionArray)):  # df.gpu.unique()
        gpus = list(gpus)
    if isinstance(gpus, (str, bytes, os.PathLike)) or not isinstance(gpus, Sequence) or not len(gpus):
        raise DataError(
            f"gpus must be a non-empty list of GPUs, got {gpus!r}", hint="e.g. gpus=['H100', 'B200', 'B300']"
        )
    specs = [spec_of(g) for g in gpus]
    names = [s.name for s in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        differ = [n for n in twice if any(s != next(t for t in specs if t.name == n) for s in specs if s.name == n)]
        if differ:
            raise DataError(
                f"different GPU specs share the name {differ} (e.g. two what-if spec files)",
                hint="give each spec file its own name (the name key of its [gpu] table)",
            )
        raise DataError(f"GPUs given more than once: {twice} (aliases name the same GPU)", hint="list each GPU once")

    def key(n: str) -> str:  # "RTX 4090" and "rtx-4090" name the same compared GPU
        return "".join(ch for ch in n.lower() if ch.isalnum())

    if baseline is None:
        base = names[0]
    elif isinstance(baseline, str) and key(baseline) in {key(n) for n in names}:
        base = next(n for n in names if key(n) == key(baseline))  # a compared GPU by its name (spec files too)
    else:
        base = spec_of(baseline).name
    if base not in names:
        raise DataError(f"baseline {base!r} is not among the compared GPUs {names}", hint="pick one of them")
    coverage = None if interval is None else check_coverage(interval)
    fitted = load_model(model) if model is None or isinstance(model, (str, os.PathLike)) else model
    if not callable(getattr(fitted, "predict", None)):
        raise DataError(
            f"model must be a fitted model, a model file path or None (the shipped model), got {type(model).__name__}",
            hint="e.g. model='models/mine.ubj', or model=pw.load_model(path)",
        )
    if data is not None:  # named before any work, even when no row needs the measurements (as predict does)
        resolve_data_dir(data)
    if coverage is not None and not has_error_bands(fitted):
        raise DataError(
            f"interval={interval!r}: this model has no error bands", hint="pass interval=None, or use the shipped model"
        )
    work = as_launch_frame(launches)
    count = _counts(work)
    work = work.drop(columns=[c for c in (COUNT_COLUMN, "gpu", "generation") if c in work.columns])
    n = len(work)
    # one long frame: the workload once per GPU (GPU-major), predicted in one call
    long = pd.concat([work.assign(gpu=s.name, generation=s.generation) for s in specs], ignore_index=True)
    lookup = {s.name: s for s in specs}
    pred, problems = predict_frame(long, fitted, lookup, data=data)
    per = pd.DataFrame(
        {
            "row": np.tile(np.arange(1, n + 1), len(specs)),
            "gpu": np.repeat(names, n),
            "family": long["family"].astype(str).to_numpy() if "family" in long.columns else "",
            "count": np.tile(count, len(specs)),
            "latency_us_pred": pred.to_numpy(),
        }
    )
    if coverage is not None:
        per = per.assign(**band_columns(fitted, long, pred, coverage, lookup))
    per["problem"] = problems.to_numpy()
    ok = np.isfinite(per["latency_us_pred"].to_numpy()).reshape(len(specs), n)
    common = ok.all(axis=0)
    if not common.any():
        bad = per[per["problem"] != ""].head(3)
        reasons = "; ".join(f"row {r} on {g}: {p}" for r, g, p in zip(bad["row"], bad["gpu"], bad["problem"]))
        raise DataError(
            f"no launch of the workload could be predicted on every GPU of {names} ({reasons})",
            hint="fix those rows, or leave out the GPUs that cannot run them",
        )
    if not common.all():  # the totals leave these launches out on every GPU: say so (the CLI prints its own line)
        import warnings

        bad = per[per["problem"] != ""]
        where = ", ".join(sorted(set(bad["gpu"].astype(str))))
        warnings.warn(
            f"{int((~common).sum())} of {n} launches could not be predicted on {where} and are left out of every "
            f"GPU's total (first: row {bad['row'].iloc[0]} on {bad['gpu'].iloc[0]}: {bad['problem'].iloc[0]}); "
            "Comparison.per_launch['problem'] lists them",
            UserWarning,
            stacklevel=2,
        )
    mask = np.tile(common, len(specs))
    used = per[mask]
    w = used["count"].to_numpy() * used["latency_us_pred"].to_numpy()
    totals = pd.Series(w, index=used.index).groupby(used["gpu"].to_numpy(), sort=False).sum()
    summary = pd.DataFrame({"gpu": names, "generation": [s.generation for s in specs]})
    summary["total_us"] = totals.reindex(names).to_numpy()
    if coverage is not None:
        gpu_of = used["gpu"].to_numpy()
        for col, end in (("total_lo_us", "latency_us_lo"), ("total_hi_us", "latency_us_hi")):
            v = pd.Series(used["count"].to_numpy() * used[end].to_numpy(dtype=float), index=used.index)
            # a launch without a band (its family has none) leaves the total's band undefined
            whole = v.notna().groupby(gpu_of, sort=False).all().reindex(names).to_numpy(dtype=bool)
            summary[col] = np.where(whole, v.groupby(gpu_of, sort=False).sum().reindex(names).to_numpy(), np.nan)
        summary["bands"] = [
            ", ".join(f"{k} {v}" for k, v in used.loc[used["gpu"] == g, "band"].value_counts().items() if k) or ""
            for g in names
        ]
    else:
        summary["total_lo_us"] = np.nan
        summary["total_hi_us"] = np.nan
        summary["bands"] = ""
    base_total = float(summary.loc[summary["gpu"] == base, "total_us"].iloc[0])
    summary["speedup_vs_baseline"] = base_total / summary["total_us"]
    fam = (
        pd.Series(w, index=used.index)
        .groupby([used["gpu"].to_numpy(), used["family"].to_numpy()], sort=False)
        .sum()
        .rename_axis(["gpu", "family"])
        .reset_index(name="total_us")
    )
    fam["share"] = fam["total_us"] / fam.groupby("gpu")["total_us"].transform("sum")
    top = fam.sort_values("share", ascending=False, kind="stable").drop_duplicates("gpu").set_index("gpu")
    summary["top_family"] = top["family"].reindex(names).to_numpy()
    summary["top_family_share"] = top["share"].reindex(names).to_numpy()
    summary = summary.sort_values("total_us", kind="stable", ignore_index=True)
    lo_t, hi_t = summary["total_lo_us"].to_numpy(dtype=float), summary["total_hi_us"].to_numpy(dtype=float)
    known = np.isfinite(lo_t) & np.isfinite(hi_t) & np.isfinite(lo_t[0]) & np.isfinite(hi_t[0])
    overlap = (lo_t <= hi_t[0]) & (hi_t >= lo_t[0])  # the fastest GPU (row 0) overlaps itself
    summary["overlaps_best"] = pd.array([bool(o) if k else pd.NA for o, k in zip(overlap, known)], dtype="boolean")
    summary = summary[
        [
            "gpu",
            "generation",
            "total_us",
            "total_lo_us",
            "total_hi_us",
            "speedup_vs_baseline",
            "overlaps_best",
            "bands",
            "top_family",
            "top_family_share",
        ]
    ]
    return Comparison(
        per_launch=per,
        summary=summary,
        by_family=fam,
        baseline=base,
        coverage=coverage,
        launches=n,
        common_launches=int(common.sum()),
    )


def plot_comparison(summary: Any, *, baseline: str | None = None, ax: Axes | None = None) -> Axes:
    """Horizontal bars of each GPU's total (us), fastest on top, with the band as an error bar and the speedup
    over ``baseline`` (a GPU of the summary; default: the comparison's own baseline) as a label.
    ``summary``: a :class:`Comparison` or its :attr:`Comparison.summary`. ``ax=None`` creates a figure;
    returns the Axes."""
    import numpy as np
    import pandas as pd

    from .evaluation import new_axes

    if isinstance(summary, Comparison):
        baseline = summary.baseline if baseline is None else baseline
        summary = summary.summary
    need = {"gpu", "total_us", "total_lo_us", "total_hi_us", "speedup_vs_baseline"}
    if not isinstance(summary, pd.DataFrame) or not need <= set(summary.columns) or summary.empty:
        got = list(summary.columns) if isinstance(summary, pd.DataFrame) else type(summary).__name__
        raise DataError(
            f"plot_comparison needs a Comparison or its non-empty summary (columns {sorted(need)}), got {got}",
            hint="pass the result of pipeweave.compare(...) or its .summary",
        )
    if baseline is not None:  # speedups over the asked-for GPU, not the comparison's baseline
        gpus = summary["gpu"].astype(str).tolist()
        if str(baseline) not in gpus:  # an alias of a compared catalog GPU ("h100" is H100-SXM)
            from ._errors import PipeweaveError
            from .hardware import resolve_gpu_name

            try:
                baseline = resolve_gpu_name(str(baseline))
            except PipeweaveError:
                pass
        if str(baseline) not in gpus:
            raise DataError(f"baseline {baseline!r} is not a GPU of the summary {gpus}", hint="pick one of them")
        base_total = float(summary.loc[summary["gpu"].astype(str) == str(baseline), "total_us"].iloc[0])
        summary = summary.assign(speedup_vs_baseline=base_total / summary["total_us"].to_numpy(dtype=float))
    if ax is None:
        ax = new_axes(figsize=(6.5, 0.9 + 0.45 * len(summary)))[0, 0]
    d = summary.iloc[::-1]  # fastest at the top
    y = np.arange(len(d))
    total = d["total_us"].to_numpy(dtype=float)
    lo, hi = d["total_lo_us"].to_numpy(dtype=float), d["total_hi_us"].to_numpy(dtype=float)
    has_band = np.isfinite(lo) & np.isfinite(hi)
    ax.barh(y, total, color=["C2" if i == len(d) - 1 else "C0" for i in range(len(d))], alpha=0.8)
    if has_band.any():
        err = np.vstack([np.where(has_band, total - lo, 0.0), np.where(has_band, hi - total, 0.0)])
        ax.errorbar(total, y, xerr=err, fmt="none", ecolor="black", capsize=3, lw=1)
    for yi, t, s, hb, h in zip(y, total, d["speedup_vs_baseline"], has_band, hi):
        ax.text(float(h if hb else t) * 1.01, float(yi), f"  {s:.2f}x", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(d["gpu"].astype(str).tolist())
    ax.set_xlabel("predicted total latency (us)" + ("; bars: error band" if has_band.any() else ""))
    ax.set_xlim(0, float(np.nanmax(np.where(has_band, hi, total))) * 1.18)
    ax.set_title("workload per GPU" + (f" (speedup vs {baseline})" if baseline else ""))
    return ax
