"""Accuracy goals of the product and where a report stands against them.

The goals (issues 13 and 17) are MAPE ceilings of the ``pipeweave`` method per evaluation family and
protocol, on every held-out generation (``logo``), on every held-out GPU (``unseen-gpu``) or on the
held-out shapes (``unseen-shape``).
:func:`goal_status` reads a :func:`~pipeweave.evaluation.build_results` dict and says, per family
and column, whether the goal holds and by how many MAPE points it is missed, next to the best
baseline on the same rows. It is a pure function; the report renders its output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["ACCURACY_GOALS", "goal_status"]

#: family label -> protocol -> MAPE ceiling (%) of the pipeweave method on every column
ACCURACY_GOALS: dict[str, dict[str, float]] = {
    # unseen-gpu (issue 17): the GPUs kept aside by the data's curators (L20, B300, GB300; siblings of measured
    # GPUs) are to be predicted at <= 10% each; leave-one-GPU-out is this project's own view of that check
    "gemm_bf16": {"logo": 10.0, "unseen-gpu": 10.0, "unseen-shape": 5.0},
    "fused_moe_bf16": {"logo": 10.0, "unseen-gpu": 10.0, "unseen-shape": 5.0},
    "attention_context": {"logo": 20.0, "unseen-gpu": 10.0},
    "attention_generation": {"logo": 20.0, "unseen-gpu": 10.0},
    "moe_w13": {"logo": 6.0, "unseen-gpu": 10.0},
    # issue 13: the memory-bound norm families and FP32 GEMM on the CUDA cores (NeuSight reports 13.8-13.9%)
    "rmsnorm": {"logo": 15.0, "unseen-gpu": 10.0},
    "silu_mul": {"logo": 15.0, "unseen-gpu": 10.0},
    "gemm_fp32": {"logo": 15.0},
}

_MAIN = "pipeweave"
_COLUMNS = [
    "family_key",
    "generation",
    "goal_mape",
    "mape",
    "mape_unflagged",
    "miss_by",
    "met",
    "best_baseline",
    "best_baseline_mape",
    "below_every_baseline",
]


def goal_status(
    results: Mapping[str, Any], *, goals: Mapping[str, Mapping[str, float]] | None = None, method: str = _MAIN
) -> pd.DataFrame:
    """One row per (family key with a goal, column) of ``results``: the goal and where ``method`` stands.

    Columns: ``family_key``, ``generation`` (the report column: the held-out generation, the held-out
    GPU under ``unseen-gpu``, or ``all``), ``goal_mape``
    and ``mape`` (%), ``mape_unflagged`` (% without the rows a source manifest flags, where the
    report has them, else NaN), ``miss_by`` (MAPE points above the goal, 0 when met), ``met``,
    ``best_baseline`` / ``best_baseline_mape`` (the lowest-MAPE other method that is not a
    pipeweave ablation) and ``below_every_baseline``. Under ``logo`` the goal applies to each
    held-out generation; under ``unseen-gpu`` to each held-out GPU (``by_gpu``; no unflagged figure);
    under ``unseen-shape`` to all held-out shapes pooled (``all``)."""
    goals = ACCURACY_GOALS if goals is None else goals
    protocol = str(results["protocol"])
    rows = []
    for key, meta in results["families"].items():
        label = str(key).split("[", 1)[0]
        goal = goals.get(label, {}).get(protocol)
        by_gpu = protocol == "unseen-gpu"
        per = results["by_gpu" if by_gpu else "results"].get(key, {})
        if goal is None or method not in per:
            continue
        if protocol == "unseen-shape":
            cols = ["all"]
        else:
            cols = list(meta["gpus"] if by_gpu else meta["generations"])
        unflagged = {} if by_gpu else results.get("results_unflagged", {}).get(key, {}).get(method, {})
        for g in cols:
            rec = per[method].get(g)
            if rec is None or rec.get("mape") is None:
                continue
            mape = float(rec["mape"])
            base = {
                m: float(r[g]["mape"])
                for m, r in per.items()
                if not m.startswith(_MAIN) and g in r and r[g].get("mape") is not None and not r[g].get("n_missing")
            }
            best = min(base, key=base.__getitem__) if base else None
            uf = unflagged.get(g, {}).get("mape")
            rows.append(
                {
                    "family_key": str(key),
                    "generation": str(g),
                    "goal_mape": float(goal),
                    "mape": mape,
                    "mape_unflagged": float("nan") if uf is None else float(uf),
                    "miss_by": max(0.0, mape - float(goal)),
                    "met": mape <= float(goal),
                    "best_baseline": best,
                    "best_baseline_mape": float("nan") if best is None else base[best],
                    "below_every_baseline": best is None or mape < base[best],
                }
            )
    return pd.DataFrame(rows, columns=_COLUMNS)
