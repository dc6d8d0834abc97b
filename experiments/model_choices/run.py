"""Model-choice experiments for the XGBoost back-end, leave-one-generation-out.

    python experiments/model_choices/run.py [--data DIR] [--out experiments/model_choices]

Compares, on the same folds and rows (training capped at 4,000 seeded rows per GPU per family,
200 trees, no SASS features so every variant sees the same inputs):

* per_family      one PipeweaveRegressor per evaluation family, target log(latency / t_env_us)
* shared          one PipeweaveRegressor for all families per fold (family one-hots), same target
* ref_roofline    per family, target log(latency / t_roofline_us)
* ref_none        per family, target log(latency) (same features)
* monotone_ep     per family, envelope target, log2_ep_all_rows_over_env constrained non-decreasing
                  (the fused-MoE alternative EP reading can only add work)

Writes results.json and results.md (MAPE % per family and held-out generation).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import LeaveOneGroupOut

from pipeweave._io import atomic_write_json, atomic_write_text
from pipeweave.evaluation import EVAL_FAMILIES
from pipeweave.model import PipeweaveRegressor, cap_rows, ensure_features, prepare_training_frame
from pipeweave.sources import load_profiles
from pipeweave.vocab import order_generations

FAMILIES = ("gemm_bf16", "fused_moe_bf16", "attention_context", "attention_generation", "moe_w13")
VARIANTS = {
    "per_family": {},
    "shared": {},
    "ref_roofline": {"reference": "roofline"},
    "ref_none": {"reference": "none"},
    "monotone_ep": {"monotone_constraints": {"log2_ep_all_rows_over_env": 1}},
}
CAP = 4000


def load(data: str | None) -> dict[str, pd.DataFrame]:
    frames = {}
    for label in FAMILIES:
        fam, dtype = EVAL_FAMILIES[label]
        source = "pipeweave" if fam == "moe_w13" else "aiconfigurator"
        df = load_profiles(data, families=[fam], dtypes=[dtype], sources=[source])
        frame, _ = prepare_training_frame(df)
        frames[label] = ensure_features(frame).reset_index(drop=True)
    return frames


def run(frames: dict[str, pd.DataFrame]) -> dict:
    res: dict = {v: {f: {} for f in FAMILIES} for v in VARIANTS}
    rows = pd.concat([fr.assign(eval_family=f) for f, fr in frames.items()], ignore_index=True)
    groups = rows["generation"].astype(str).to_numpy()
    for train_idx, test_idx in LeaveOneGroupOut().split(rows, groups=groups):
        gen = groups[test_idx[0]]
        tr_all, te_all = rows.iloc[train_idx], rows.iloc[test_idx]
        train = {f: cap_rows(tr_all[tr_all["eval_family"] == f], CAP, by=("gpu",), seed=0) for f in FAMILIES}
        test = {f: te_all[te_all["eval_family"] == f] for f in FAMILIES}
        shared = PipeweaveRegressor(per_family=False).fit(pd.concat(list(train.values()), ignore_index=True))
        for variant, params in VARIANTS.items():
            for f in FAMILIES:
                if test[f].empty:
                    continue
                model = shared if variant == "shared" else PipeweaveRegressor(**params).fit(train[f])
                pred = model.predict(test[f])
                res[variant][f][gen] = round(
                    float(np.mean(np.abs(pred / test[f]["latency_us"].to_numpy() - 1)) * 100), 1
                )
        print(f"held out {gen}: done", flush=True)
    return res


def report(res: dict) -> str:
    lines = [
        "# Model choices (leave-one-generation-out, MAPE %)",
        "",
        "Command: `python experiments/model_choices/run.py`. See the module docstring for the variants.",
        "",
    ]
    for f in FAMILIES:
        gens = order_generations(g for v in VARIANTS for g in res[v][f])  # the held-out generations with rows
        lines += [f"## {f}", "", "| variant | " + " | ".join(gens) + " | mean |", "|---|" + "---:|" * (len(gens) + 1)]
        for v in VARIANTS:
            vals = [res[v][f].get(g) for g in gens]
            got = [x for x in vals if x is not None]
            lines.append(
                f"| {v} | " + " | ".join("–" if x is None else f"{x:.1f}" for x in vals) + f" | {np.mean(got):.1f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=None)
    p.add_argument("--out", default="experiments/model_choices")
    args = p.parse_args(argv)
    t = time.perf_counter()
    res = run(load(args.data))
    out = Path(args.out)
    atomic_write_json(
        out / "results.json", {"mape_pct": res, "cap_rows_per_gpu": CAP, "elapsed_s": round(time.perf_counter() - t, 1)}
    )
    atomic_write_text(out / "results.md", report(res) + "\n")
    print(f"wrote {out / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
