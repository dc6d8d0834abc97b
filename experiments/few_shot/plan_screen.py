"""Screen: should the shot plan cover fused MoE's own coordinates (routing and shape) too?

Since session 33 fused MoE's residual GP reads the routing exponent and the five MoE shape columns
(:data:`pipeweave.calibrate.FAMILY_REGIME_FEATURES`), while the plan that picks which launches to measure
(:func:`pipeweave.calibrate.plan_positions`, k-means coverage) still covers the generic regime coordinates. This
runs the few-shot protocol (:func:`pipeweave.evaluation.run_few_shot`, its own options) with the plan over the
family's coordinates (``--plan family``: ``plan_positions(..., features=regime_features(family))``) or the generic
ones (``--plan generic``, what the protocol does), per plan seed. The inner folds (each training generation playing
the new GPU) give, per held-out generation and shot count, the MAPE of the option the protocol chooses (the
lowest inner score); that is what is compared. Held-out numbers are reported, never used to choose.

Decision rule (set before any run): the family plan is adopted if its chosen option's inner MAPE is lower than the
generic plan's in at least 14 of the 16 cells at 32 and 128 shots (two seeds x four held-out generations), by more
than 0.2 points on average at 32 shots in each seed.

A second rule, set after seeds 0 and 1 showed the family plan lower at 8 shots on every fold, before seeds 2 and 3
ran: on plan seeds 2 and 3 alone, the family plan is confirmed for 8 launches if it is lower in at least 7 of the 8
cells at 8 shots (two seeds x four held-out generations), by more than 0.5 points on average in each seed; then
``calibrate plan`` offers it as an option for a handful of launches (the default stays generic).

A third question (session 34, written before its runs): where between 8 and 32 launches does the family plan stop
helping? Runs at 12, 16 and 24 shots (``--shots 0 12 16 24``), plan seeds 0-3, both plans. Rule: at each of these
counts the family plan helps if its chosen option's inner MAPE is lower than the generic plan's in at least 14 of the
16 cells (four seeds x four held-out generations) and lower by more than 0.5 points on their mean. If it helps at 12
and 16 shots, ``calibrate plan`` gets ``--regime auto`` as its default: the family coordinates up to the largest
helping count (8 when only 8 helps, which keeps the generic default), the generic ones above it.
Outcome: lower in 6, 1 and 13 of the 16 cells at 12, 16 and 24 shots (mean +0.42, +0.93 and -0.51 points): the rule
holds at none of them, so the default stays generic and ``--regime family`` is for about 8 launches.

    python experiments/few_shot/plan_screen.py --plan family --seed 0 --cache-dir /tmp/fs_cache --out /tmp/fs_plan_f0
    python experiments/few_shot/plan_screen.py --render   # plan_screen.md from the records written so far

The generic plan with seed 0 is the committed report (``--plan generic --seed 0 --from-committed`` records it).
"""

from __future__ import annotations

import argparse
import json
import re
import time

import numpy as np
from screens import HERE, render_records, write_records

import pipeweave.calibrate as pw_calibrate
from pipeweave.evaluation import DEFAULT_SHOTS, run_few_shot

FAMILY = "fused_moe_bf16"


def summarize(report: dict) -> list[dict]:
    """Per held-out generation and shot count: the inner MAPE of the chosen option and the held-out MAPE."""
    rows = []
    for gen, per_shots in report["inner"][FAMILY].items():
        for s, scores in per_shots["mape_per_option"].items():
            if s == "0":
                continue
            rows.append(
                {
                    "generation": gen,
                    "shots": int(s),
                    "inner_chosen": round(float(np.min(scores)), 2),
                    "held_out": round(float(report["results"][FAMILY][s][gen]["mape"]), 1),
                }
            )
    return rows


def _merged(summaries: dict[str, list[dict]], commands: dict[str, str]) -> tuple[dict, dict]:
    """Records of one (plan, seed) merged: ``family.seed0`` (the protocol's shots) and ``family.seed0.s12-16-24``
    (a ``--shots`` run) become one column, rows ordered by held-out generation and shot count."""
    rows: dict[str, list[dict]] = {}
    cmds: dict[str, list[str]] = {}
    for key in sorted(summaries):
        base = re.sub(r"\.s[0-9-]+$", "", key)
        rows.setdefault(base, []).extend(summaries[key])
        cmds.setdefault(base, []).append(commands[key])
    gens = {g: i for i, g in enumerate(dict.fromkeys(r["generation"] for v in rows.values() for r in v))}
    for v in rows.values():
        v.sort(key=lambda r: (gens[r["generation"]], r["shots"]))
    return rows, {k: "`; `".join(v) for k, v in cmds.items()}


def render(summaries: dict[str, list[dict]], commands: dict[str, str]) -> str:
    summaries, commands = _merged(summaries, commands)
    lines = [
        "# Few-shot: the shot plan over fused MoE's own coordinates",
        "",
        "Written by `python experiments/few_shot/plan_screen.py` (see its docstring). Inner = the inner folds' MAPE",
        "(%) of the option the protocol chooses (each training generation playing the new GPU); held-out = the",
        "protocol's MAPE on the held-out generation, reported, not used. One column per (plan, seed).",
        "Decision (rule in the docstring, set before any run; seeds 0 and 1): the family plan is lower in 5 of the 16",
        "cells at 32 and 128 shots: **not the default**; `calibrate plan` keeps the generic coordinates. At 8 shots it",
        "was lower in 8 of 8; the second rule (written after that, before seeds 2 and 3 ran, judged on them alone)",
        "confirmed it: 8 of 8 lower, by 1.71 and 1.00 points on average. So `calibrate plan --regime family`",
        "(`plan_launches(regime='family')`) is offered for a handful of launches; the default stays generic.",
        "Between 8 and 32 (session 34; a third rule, written before its runs, in the docstring): at 12, 16 and 24 shots",
        "the family plan is lower in 6, 1 and 13 of the 16 inner cells (four seeds; mean +0.42, +0.93, -0.51 points),",
        "short of the 14 the rule asks at each: it helps at 8 launches only, so no `--regime auto`.",
        "",
    ]
    keys = sorted(summaries)
    cells = {k: {(r["generation"], r["shots"]): r for r in summaries[k]} for k in keys}
    order = list(dict.fromkeys((r["generation"], r["shots"]) for k in keys for r in summaries[k]))
    lines += [
        "| held-out | shots | "
        + " | ".join(f"inner {k}" for k in keys)
        + " | "
        + " | ".join(f"held-out {k}" for k in keys)
        + " |",
        "|---|---:|" + "---:|" * (2 * len(keys)),
    ]
    for gen, s in order:
        inner = " | ".join(f"{cells[k][(gen, s)]['inner_chosen']:.2f}" if (gen, s) in cells[k] else "" for k in keys)
        held = " | ".join(f"{cells[k][(gen, s)]['held_out']:.1f}" if (gen, s) in cells[k] else "" for k in keys)
        lines.append(f"| {gen} | {s} | {inner} | {held} |")
    lines.append("")
    for seed in sorted({k.split(".seed")[1] for k in keys}):
        fam, gen = cells.get(f"family.seed{seed}"), cells.get(f"generic.seed{seed}")
        if fam is None or gen is None:
            continue
        for shots in sorted({c[1] for c in order}):
            both = [c for c in order if c[1] == shots and c in fam and c in gen]
            if not both:
                continue
            d = [fam[c]["inner_chosen"] - gen[c]["inner_chosen"] for c in both]
            lines.append(
                f"- seed {seed}, {shots} shots: the family plan's inner MAPE is lower in {sum(x < 0 for x in d)} of "
                f"{len(d)} held-out generations (mean difference {np.mean(d):+.2f} points)"
            )
    lines += ["", "Commands: " + "; ".join(f"`{commands[k]}`" for k in keys), ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plan", choices=["family", "generic"], default="family")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", default=None, help="zero-shot prediction cache (as evaluate --cache-dir)")
    ap.add_argument("--out", default=None, help="folder for the protocol's own report of this run (not committed)")
    ap.add_argument("--from-committed", action="store_true", help="record the committed report (generic plan, seed 0)")
    ap.add_argument("--render", action="store_true", help="only render plan_screen.md from the records")
    ap.add_argument(
        "--shots",
        nargs="+",
        type=int,
        default=list(DEFAULT_SHOTS),
        help="shot counts of the run (default: the protocol's); other counts are recorded as their own file",
    )
    args = ap.parse_args()
    if not args.render:
        t0 = time.perf_counter()
        cmd = f"python experiments/few_shot/plan_screen.py --plan {args.plan} --seed {args.seed}"
        own = tuple(args.shots) != tuple(DEFAULT_SHOTS)
        key = f"{args.plan}.seed{args.seed}" + (".s" + "-".join(str(s) for s in args.shots if s) if own else "")
        if own:
            cmd += " --shots " + " ".join(str(s) for s in args.shots)
        if args.from_committed:
            report = json.loads((HERE / "results.json").read_text())
            cmd += " --from-committed"
        else:
            if args.plan == "family":
                generic_plan = pw_calibrate.plan_positions

                def family_plan(frame, n, *, seed=0):  # noqa: ANN001, ANN202
                    feats = pw_calibrate.regime_features(str(frame["family"].iloc[0])) if len(frame) else None
                    return generic_plan(frame, n, seed=seed, features=feats)

                pw_calibrate.plan_positions = family_plan  # what the protocol's shot plans call
            report = run_few_shot(
                families=[FAMILY],
                out=args.out,
                cache_dir=args.cache_dir,
                seed=args.seed,
                plots=False,
                shots=tuple(args.shots),
            )
        write_records("plan_screen", {key: summarize(report)}, cmd, (time.perf_counter() - t0) / 60)
    print(render_records("plan_screen", render))


if __name__ == "__main__":
    main()
