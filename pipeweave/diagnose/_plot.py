"""Pictures of one diagnosis (:func:`~pipeweave.diagnose.diagnose` or :func:`~pipeweave.diagnose.diagnose_kernel`).

Each function draws from the result dict alone (no model is run) and returns the Axes it drew on:
``ax=None`` creates a figure. :func:`plot_diagnosis` puts both panels side by side, as
``pipeweave diagnose --plot FILE.png`` writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import DataError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_configs", "plot_diagnosis", "plot_pipes"]

#: what every diagnosis holds that the pictures read
_NEEDED = ("gpu", "pipe_times_us", "bound_pipe", "predicted_us", "ceiling_us", "lower_bound_us", "recommendations")
#: what :func:`plot_pipes` needs: the GPU, the binding pipe and the pipe times (a diagnosis' ``pipe_times_us``, or the
#: ``pipes`` table of :func:`pipeweave.explain`)
_NEEDED_PIPES = ("gpu", "bound_pipe")


def _checked(result: Any, needed: tuple[str, ...] = _NEEDED, one_of: tuple[str, ...] = ()) -> Mapping[str, Any]:
    """``result`` when it is a mapping holding every key of ``needed`` and (when given) one of ``one_of``."""
    if not isinstance(result, Mapping):
        raise DataError(
            f"expected the dict a diagnosis returns, got {type(result).__name__}",
            hint="pass the result of pipeweave.diagnose(launch), diagnose_kernel(...) or (plot_pipes) pipeweave.explain",
        )
    missing = [k for k in needed if k not in result]
    if one_of and not any(k in result for k in one_of):
        missing.append(one_of[0])
    if missing:
        raise DataError(
            f"the diagnosis lacks {missing} (keys given: {sorted(result)[:12]})",
            hint="pass the unchanged result of pipeweave.diagnose(launch) or diagnose_kernel(...)",
        )
    return result


def _pipe_times(r: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """Pipe -> time (us) to draw, and what the times are of: the busiest SM's when the result has them (they pick
    ``bound_pipe``), else the result's own ``pipe_times_us``."""
    if r.get("pipe_times_busiest_sm_us"):
        return r["pipe_times_busiest_sm_us"], "busiest SM"
    if "pipe_times_us" in r:
        return r["pipe_times_us"], str(r.get("pipe_times_basis", "chip"))
    pipes = r["pipes"]  # pipeweave.explain: pipe -> {work, time_us, busiest_sm_time_us}
    if not isinstance(pipes, Mapping) or not all(isinstance(v, Mapping) for v in pipes.values()):
        raise DataError(
            f"'pipes' must map each pipe to its times, got {type(pipes).__name__}",
            hint="pass the unchanged result of pipeweave.explain(launch)",
        )
    times = {p: v.get("busiest_sm_time_us") for p, v in pipes.items()}
    if r.get("latency_bound_us") is not None:
        times["latency"] = r["latency_bound_us"]
    return times, "busiest SM"


def _new_axes(figsize: tuple[float, float]) -> Axes:
    from ..evaluation import new_axes

    return new_axes(figsize=figsize)[0, 0]


def _latency_lines(ax: Axes, r: Mapping[str, Any]) -> None:
    """Vertical lines at the lower bound, the ceiling, the predicted and (when given) the measured latency (us)."""
    lines = [
        ("lower bound", r.get("lower_bound_us"), "0.35", ":"),
        ("ceiling", r.get("ceiling_us"), "C2", "--"),
        ("envelope", None if "predicted_us" in r else r.get("envelope_us"), "C4", "--"),  # explain: no prediction
        ("predicted", r.get("predicted_us"), "C0", "-."),
        ("measured", r.get("measured_us"), "C3", "-"),
    ]
    for label, x, color, style in lines:
        if x is not None and np.isfinite(float(x)):
            ax.axvline(float(x), color=color, ls=style, lw=1.4, label=f"{label} {float(x):.4g} us")


def _legend_below(ax: Axes) -> None:
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4, frameon=False)


def plot_pipes(result: Mapping[str, Any], *, ax: Axes | None = None) -> Axes:
    """Horizontal bars of each pipe's modeled time (us) for the diagnosed launch, the binding pipe in orange,
    with vertical lines at the lower bound, ceiling, predicted and measured latency (us) where the result has
    them. Also draws a :func:`pipeweave.explain` result (its envelope in place of a prediction).

    The busiest SM's times when the diagnosis has them (``pipe_times_busiest_sm_us``: they pick
    ``bound_pipe``), else ``pipe_times_us``. A pipe past the latency lines is one the front-end gives more time
    than the launch took (``pipes_over_latency``). ``ax=None`` creates a figure; returns the Axes."""
    r = _checked(result, _NEEDED_PIPES, one_of=("pipe_times_us", "pipes"))
    times, basis = _pipe_times(r)
    names = [p for p, t in times.items() if t is not None and np.isfinite(float(t))]
    if not names:
        raise DataError("the diagnosis has no finite pipe time to draw", hint="check pipe_times_us of the result")
    t = np.array([float(times[p]) for p in names])
    if ax is None:
        ax = _new_axes((6.5, 1.7 + 0.38 * len(names)))
    y = np.arange(len(names))[::-1]
    bound = str(r["bound_pipe"])
    ax.barh(y, t, color=["C1" if p == bound else "C7" for p in names], alpha=0.85)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{p} (binds)" if p == bound else p for p in names])
    _latency_lines(ax, r)
    ax.set_xlabel(f"modeled time (us), {basis}")
    marks = [float(r[k]) for k in ("predicted_us", "ceiling_us", "measured_us", "envelope_us") if r.get(k) is not None]
    ax.set_xlim(0.0, 1.12 * max([float(t.max()), *[m for m in marks if np.isfinite(m)]]))
    _legend_below(ax)
    ax.set_title(f"where the time goes: {r.get('family', r.get('kernel', 'launch'))} on {r['gpu']}", fontsize=10)
    return ax


def plot_configs(result: Mapping[str, Any], *, ax: Axes | None = None) -> Axes:
    """Horizontal bars of the ranked configs' predicted latency (us), fastest on top, the given config in
    orange (its measured latency as a red mark when given), with the ceiling as a dashed line.
    ``ax=None`` creates a figure; returns the Axes."""
    r = _checked(result)
    recs = list(r["recommendations"])
    if not recs:
        raise DataError(
            "the diagnosis ranks no config (a kernel diagnosis without search)",
            hint="diagnose_kernel(..., search=True) ranks variants; or draw plot_pipes alone",
        )
    if ax is None:
        ax = _new_axes((6.5, 1.7 + 0.38 * len(recs)))
    y = np.arange(len(recs))[::-1]
    pred = np.array([float(c["predicted_us"]) for c in recs])
    given = np.array([bool(c.get("is_given")) for c in recs])
    ax.barh(y, pred, color=np.where(given, "C1", "C0"), alpha=0.85)
    labels = [f"{c['config']} (given)" if g else str(c["config"]) for c, g in zip(recs, given)]
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    for yi, c, p in zip(y, recs, pred):
        s = c.get("speedup")
        if s is not None:
            ax.text(p * 1.01, float(yi), f" {float(s):.2f}x", va="center", fontsize=7)
    ax.axvline(float(r["ceiling_us"]), color="C2", ls="--", lw=1.4, label=f"ceiling {float(r['ceiling_us']):.4g} us")
    hi = float(pred.max())
    if r.get("measured_us") is not None and given.any():
        m = float(r["measured_us"])
        ax.plot([m], [float(y[given][0])], marker="|", ms=16, mew=2.5, color="C3", label=f"measured {m:.4g} us")
        hi = max(hi, m)
    ax.set_xlim(0.0, hi * 1.18)
    ax.set_xlabel("predicted latency (us); label: speedup over the given config")
    _legend_below(ax)
    ax.set_title("configs to try (BM,BN,BK,GROUP_M,warps,stages)", fontsize=10)
    return ax


def plot_diagnosis(result: Mapping[str, Any]) -> Figure:
    """Both pictures of one diagnosis side by side (:func:`plot_pipes`, then :func:`plot_configs` when the
    diagnosis ranks configs); returns the Figure."""
    from ..evaluation import new_axes

    r = _checked(result)
    n = 2 if r["recommendations"] else 1
    rows = max(len(r.get("pipe_times_busiest_sm_us") or r["pipe_times_us"]), len(r["recommendations"]))
    axes = new_axes(1, n, figsize=(6.5 * n, 1.9 + 0.38 * rows))
    plot_pipes(r, ax=axes[0, 0])
    if n == 2:
        plot_configs(r, ax=axes[0, 1])
    return axes[0, 0].figure
