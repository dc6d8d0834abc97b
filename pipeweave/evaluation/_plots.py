"""Report figures, split the optuna way: ``plot_data_*`` compute the plotted numbers as a
DataFrame (pure, deterministic, written to CSV next to each PNG), ``plot_*(data, ax=None)`` only
draw them. Figures are built on the Agg canvas directly (``matplotlib.figure.Figure``), so no
display and no global pyplot state is touched. Latencies in microseconds, errors in percent.

Every ``plot_data_*`` takes a predictions frame as returned by
:func:`pipeweave.evaluation.run_protocol` (filter it to one family first).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..vocab import GENERATIONS
from ..vocab import order_generations as _order_generations
from ._metrics import ape, summarize

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "GENERATION_ORDER",
    "order_generations",
    "plot_data_scatter",
    "plot_data_mape_by_generation",
    "plot_data_error_cdf",
    "plot_scatter",
    "plot_mape_by_generation",
    "plot_error_cdf",
    "plot_error_bands",
    "new_axes",
]

#: Display order of GPU generations (unknown ones follow, sorted): :data:`pipeweave.vocab.GENERATIONS`.
GENERATION_ORDER: tuple[str, ...] = GENERATIONS
_GEN_COLORS = {"ampere": "tab:blue", "ada": "tab:green", "hopper": "tab:orange", "blackwell": "tab:red"}
_ALL = "all"


def order_generations(values: Iterable[str]) -> list[str]:
    """Unique generations in display order: :data:`GENERATION_ORDER` first, then the rest sorted."""
    if not isinstance(values, (pd.Series, pd.Index, np.ndarray)):
        values = pd.Series(list(values), dtype=object)
    return _order_generations(pd.unique(values))


def _methods(df: pd.DataFrame) -> list[str]:
    return [str(m) for m in pd.unique(df["method"])]


def plot_data_scatter(pred_df: pd.DataFrame, *, max_points: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """Points of the predicted-vs-measured scatter: columns ``method, generation, gpu, row_id,
    latency_us, pred_us`` (us). Rows with a non-finite or non-positive prediction are left out
    (no place on a log axis); above ``max_points`` per method a seeded random subset is kept
    (the same rows for every method that predicted all rows), in input order."""
    cols = ["method", "generation", "gpu", "row_id", "latency_us", "pred_us"]
    parts = []
    for method in _methods(pred_df):
        sub = pred_df.loc[pred_df["method"] == method, cols]
        p = sub["pred_us"].to_numpy(dtype=np.float64)
        sub = sub[np.isfinite(p) & (p > 0)]
        if len(sub) > max_points:
            rng = np.random.default_rng(seed)
            keep = np.sort(rng.choice(len(sub), size=max_points, replace=False))
            sub = sub.iloc[keep]
        parts.append(sub)
    if not parts:
        return pd.DataFrame(columns=cols)
    return pd.concat(parts, ignore_index=True)


def plot_data_mape_by_generation(pred_df: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """MAPE (%) per method and generation, plus generation ``"all"`` (every row): columns
    ``method, generation, mape, mape_ci95_lo, mape_ci95_hi, median_ape, p90_ape, n, n_missing``."""
    cols = ["method", "generation", "mape", "mape_ci95_lo", "mape_ci95_hi", "median_ape", "p90_ape", "n", "n_missing"]
    if pred_df.empty:
        return pd.DataFrame(columns=cols)
    per_gen = summarize(pred_df, ["method", "generation"], n_boot=n_boot, seed=seed)
    overall = summarize(pred_df, ["method"], n_boot=n_boot, seed=seed).assign(generation=_ALL)
    data = pd.concat([per_gen, overall], ignore_index=True)[cols]
    gens = [*order_generations(per_gen["generation"]), _ALL]
    methods = _methods(pred_df)
    data["_m"] = data["method"].map({m: i for i, m in enumerate(methods)})
    data["_g"] = data["generation"].map({g: i for i, g in enumerate(gens)})
    return data.sort_values(["_m", "_g"], kind="stable").drop(columns=["_m", "_g"]).reset_index(drop=True)


def plot_data_error_cdf(pred_df: pd.DataFrame, *, n_points: int = 200, floor_pct: float = 1e-2) -> pd.DataFrame:
    """Empirical CDF of the APE per method: columns ``method, ape_pct, fraction``.

    ``fraction`` is the share (0-1) of all the method's rows with APE <= ``ape_pct``; rows it
    failed to predict (NaN) never count, so such a curve ends below 1. At most ``n_points``
    evenly spaced order statistics per method (always including the largest); APE below
    ``floor_pct`` is raised to it so that the log x axis can show it."""
    parts = []
    for method in _methods(pred_df):
        sub = pred_df[pred_df["method"] == method]
        p = sub["pred_us"].to_numpy(dtype=np.float64)
        ok = np.isfinite(p)
        a = np.sort(ape(p[ok], sub["latency_us"].to_numpy(dtype=np.float64)[ok]))
        n = a.size
        if n == 0:
            continue
        idx = np.unique(np.round(np.linspace(0, n - 1, min(n, n_points))).astype(np.int64))
        parts.append(
            pd.DataFrame({"method": method, "ape_pct": np.maximum(a[idx], floor_pct), "fraction": (idx + 1) / len(sub)})
        )
    if not parts:
        return pd.DataFrame(columns=["method", "ape_pct", "fraction"])
    return pd.concat(parts, ignore_index=True)


def new_axes(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float] | None = None) -> np.ndarray:
    """A fresh Agg figure with an ``nrows x ncols`` array of Axes (no pyplot, no display)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize or (5.0 * ncols, 4.0 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    return fig.subplots(nrows, ncols, squeeze=False)


def _color(gen: str, i: int) -> str:
    return _GEN_COLORS.get(gen, f"C{(i + 4) % 10}")


def plot_scatter(data: pd.DataFrame, ax: Axes | Sequence[Axes] | None = None) -> Axes | np.ndarray:
    """Log-log predicted vs measured latency (us), one subplot per method, coloured by generation,
    with the y = x line and +-10 % / +-25 % bands. ``data`` is :func:`plot_data_scatter`'s output.

    ``ax=None`` creates a figure with one subplot per method and returns the array of its Axes;
    a sequence of Axes gets one method each (returned as an array); a single Axes gets every
    method overlaid (coloured by method) and is returned."""
    from matplotlib.ticker import NullLocator

    methods = _methods(data) if len(data) else []
    overlay = ax is not None and not isinstance(ax, (Sequence, np.ndarray))
    if ax is None:
        n = max(1, len(methods))
        ncols = min(n, 3)
        axes = new_axes(
            (n + ncols - 1) // ncols, ncols, figsize=(4.2 * ncols, 4.0 * ((n + ncols - 1) // ncols))
        ).ravel()
        for extra in axes[n:]:
            extra.set_visible(False)
        axes = axes[:n]
    elif overlay:
        axes = np.array([ax] * max(1, len(methods)), dtype=object)
    else:
        axes = np.asarray(ax, dtype=object).ravel()
        if axes.size < len(methods):
            raise ValueError(f"plot_scatter needs {len(methods)} Axes, got {axes.size}")
    if len(data):
        v = np.concatenate([data["latency_us"].to_numpy(float), data["pred_us"].to_numpy(float)])
        lo, hi = float(v.min()) / 1.5, float(v.max()) * 1.5
    else:
        lo, hi = 1.0, 10.0
    gens = order_generations(data["generation"]) if len(data) else []
    line = np.array([lo, hi])
    for i, method in enumerate(methods):
        a = axes[i]
        sub = data[data["method"] == method]
        if overlay:
            a.scatter(
                sub["latency_us"],
                sub["pred_us"],
                s=4,
                alpha=0.5,
                color=f"C{i}",
                label=f"{method} (n={len(sub)})",
                rasterized=True,
                linewidths=0,
            )
        else:
            for j, g in enumerate(gens):
                s = sub[sub["generation"] == g]
                if len(s):
                    a.scatter(
                        s["latency_us"],
                        s["pred_us"],
                        s=4,
                        alpha=0.5,
                        color=_color(g, j),
                        label=g,
                        rasterized=True,
                        linewidths=0,
                    )
            a.set_title(f"{method} (n={len(sub)})")
    for a in axes[:1] if overlay else axes[: len(methods)]:
        a.plot(line, line, color="black", lw=0.8)
        for f, ls in ((0.10, ":"), (0.25, "--")):
            a.plot(line, line * (1 + f), color="gray", lw=0.6, ls=ls)
            a.plot(line, line * (1 - f), color="gray", lw=0.6, ls=ls)
        a.set_xscale("log")
        a.set_yscale("log")
        # decade ticks only: the log axes' minor ticks (8 per decade, up to 6 decades, 16 axes) were
        # most of the report's drawing time and carry nothing at this scale
        a.xaxis.set_minor_locator(NullLocator())
        a.yaxis.set_minor_locator(NullLocator())
        a.set_xlim(lo, hi)
        a.set_ylim(lo, hi)
        a.set_xlabel("measured latency (us)")
        a.set_ylabel("predicted latency (us)")
        a.legend(loc="upper left", fontsize="small", markerscale=3)
    return axes[0] if overlay else axes


def plot_mape_by_generation(data: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Grouped bars of MAPE (%) per generation (one bar per method, 95 % bootstrap CI as error
    bars); ``data`` is :func:`plot_data_mape_by_generation`'s output. Returns the Axes."""
    if ax is None:
        ax = new_axes(figsize=(max(5.0, 1.4 * data["generation"].nunique() + 2.0), 4.0))[0, 0]
    if data.empty:
        return ax
    methods = _methods(data)
    gens = list(pd.unique(data["generation"]))
    gens = [*order_generations(g for g in gens if g != _ALL), *([_ALL] if _ALL in gens else [])]
    width = 0.8 / len(methods)
    x = np.arange(len(gens))
    for i, method in enumerate(methods):
        sub = data[data["method"] == method].set_index("generation").reindex(gens)
        y = sub["mape"].to_numpy(float)
        err = np.vstack([y - sub["mape_ci95_lo"].to_numpy(float), sub["mape_ci95_hi"].to_numpy(float) - y])
        err = np.where(np.isfinite(err), np.maximum(err, 0.0), 0.0)
        ax.bar(
            x + (i - (len(methods) - 1) / 2) * width,
            np.nan_to_num(y),
            width,
            yerr=err,
            capsize=2,
            label=method,
            color=f"C{i}",
        )
    first = data[data["method"] == methods[0]].set_index("generation").reindex(gens)
    n = (first["n"] + first["n_missing"]).fillna(0).astype(int).to_numpy()
    ax.set_xticks(x, [f"{g}\nn={k}" for g, k in zip(gens, n)])
    ax.set_ylabel("MAPE (%)")
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return ax


def plot_error_cdf(data: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Step CDF of the APE (x: %, log scale; y: fraction of rows 0-1), one line per method, with
    guides at 10 % and 25 %; ``data`` is :func:`plot_data_error_cdf`'s output. Returns the Axes."""
    if ax is None:
        ax = new_axes(figsize=(5.5, 4.0))[0, 0]
    for i, method in enumerate(_methods(data) if len(data) else []):
        sub = data[data["method"] == method]
        ax.step(sub["ape_pct"], sub["fraction"], where="post", label=method, color=f"C{i}")
    for pct in (10.0, 25.0):
        ax.axvline(pct, color="gray", lw=0.6, ls="--")
    ax.set_xscale("log")
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("|prediction error| (%)")
    ax.set_ylabel("fraction of rows")
    if len(data):
        ax.legend(fontsize="small", loc="lower right")
    ax.grid(alpha=0.3)
    return ax


def plot_error_bands(data: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Horizontal bars of each band key's range of measured / predicted (x, log scale), one bar per situation
    present (top to bottom: ``unseen``, a new generation; ``sibling``, a new GPU of a measured generation;
    ``seen``, a trained GPU and a new shape), with the median as a tick and the y = 1 line; ``data`` is
    :func:`pipeweave.model.band_summary`'s output. Returns the Axes."""
    styles = {
        "unseen": ("tab:red", "new generation"),
        "sibling": ("tab:orange", "new GPU of a measured generation"),
        "seen": ("tab:blue", "trained GPU, new shape"),
    }
    present = [s for s in styles if f"{s}_lo" in data.columns]
    if ax is None:
        ax = new_axes(figsize=(6.5, 0.18 * len(present) * max(len(data), 1) + 1.4))[0, 0]
    y = np.arange(len(data))[::-1].astype(float)
    height = 0.8 / max(len(present), 1)
    for i, s in enumerate(present):
        dy = 0.4 - height * (i + 0.5)
        lo, hi, mid = (data[f"{s}_{c}"].to_numpy(dtype=float) for c in ("lo", "hi", "q50"))
        ok = np.isfinite(lo)
        color, label = styles[s]
        ax.barh(y[ok] + dy, (hi - lo)[ok], left=lo[ok], height=height * 0.9, color=color, alpha=0.6, label=label)
        ax.plot(mid[ok], y[ok] + dy, "|", color="black", ms=6)
    ax.axvline(1.0, color="gray", lw=0.8)
    ax.set_xscale("log")
    ends = data[[f"{s}_{c}" for s in present for c in ("lo", "hi")]].to_numpy(dtype=float)
    ends = ends[np.isfinite(ends)]
    if ends.size:  # every bar inside the axes, ticks as plain ratios
        x_lo, x_hi = min(float(ends.min()), 1.0) / 1.1, max(float(ends.max()), 1.0) * 1.1
        ax.set_xlim(x_lo, x_hi)
        ticks = [t for t in (0.25, 0.33, 0.5, 0.67, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0) if x_lo <= t <= x_hi]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
    ax.set_yticks(y, [str(k) for k in data["key"]] if len(data) else [])
    ax.set_xlabel("measured / predicted (held-out rows)")
    if len(data):
        ax.legend(fontsize="small", loc="lower right")
    ax.grid(alpha=0.3, axis="x")
    return ax
