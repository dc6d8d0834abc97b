"""Screen: does ``calibrate fit --method auto`` (settings chosen per GPU by leave-one-out MAPE on its own shots)
beat the fixed settings the few-shot protocol chooses inside the training generations?

Runs the few-shot protocol (:func:`pipeweave.evaluation.run_few_shot`) with ``{"method": "auto"}`` added to its
options, so the inner folds (each training generation playing the new GPU) score auto beside every fixed
setting; the protocol then chooses per shot count and held-out generation as always. Writes
``auto_screen.<family>.json`` (per held-out generation and shot count: the chosen option, the inner MAPE of the
best option, of auto and of no calibration, auto's rank, and the held-out MAPE beside the committed report's)
and renders every such file into ``auto_screen.md``. The held-out numbers are reported, never used to choose.
The protocol's own report of this run goes to ``--out`` (not the committed ``experiments/few_shot``).

    python experiments/few_shot/auto_screen.py --families gemm_bf16 --cache-dir /tmp/fs_cache --out /tmp/fs_auto_gemm
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from screens import GENERIC_OPTIONS, HERE, cells, held_out_cells, label, render_records, screen_arguments, write_records

from pipeweave.evaluation import run_few_shot

AUTO = {"method": "auto"}


def summarize(report: dict, committed: dict) -> dict:
    """Per family, held-out generation and shot count: what the inner folds said about auto (pure function)."""
    options = report["options"]
    ia = options.index(AUTO)
    out: dict = {}
    for fam, opt, inner, head, tail in cells(report, committed):
        rank = int((inner < inner[ia]).sum()) + 1
        none_rank = int((inner < inner[0]).sum()) + 1
        best, auto, none = (round(float(x), 2) for x in (inner.min(), inner[ia], inner[0]))
        out.setdefault(fam, []).append(
            {**head, "chosen": label(opt), "inner_best": best, "inner_auto": auto, "inner_none": none}
            | {"auto_rank": rank, "none_rank": none_rank, "n_options": len(inner), **tail}
        )
    return out


def render(summaries: dict[str, list[dict]], commands: dict[str, str]) -> str:
    lines = [
        "# Few-shot: settings chosen per GPU by leave-one-out MAPE on its own shots (`--method auto`)",
        "",
        "Written by `python experiments/few_shot/auto_screen.py` (see its docstring): the few-shot protocol with",
        "`{'method': 'auto'}` added to its options. Inner = mean MAPE (%) over the inner folds (each training",
        "generation playing the new GPU), which is what the protocol chooses on; rank = auto's place among all",
        "options there (1 = best). Held-out = the protocol's MAPE on the held-out generation with the option it",
        "chose, beside the committed report (`results.json`, whose options have no auto); reported, not used.",
        "",
    ]
    for fam, rows in summaries.items():
        ranks = [r["auto_rank"] for r in rows]
        none = [r["none_rank"] for r in rows]
        lines += [
            f"## {fam}",
            "",
            f"Command: `{commands.get(fam, '')}`. Auto ranks first in {sum(r == 1 for r in ranks)} of {len(ranks)} "
            f"cells (median rank {int(np.median(ranks))} of {rows[0]['n_options']}); no calibration ranks "
            + (f"{min(none)} in every cell." if min(none) == max(none) else f"{min(none)}-{max(none)}."),
            "",
            "| held-out | shots | chosen | inner best | inner auto | auto rank | inner none | held-out | committed |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows:
            lines.append(
                f"| {r['generation']} | {r['shots']} | {r['chosen']} | {r['inner_best']:.2f} | {r['inner_auto']:.2f} "
                f"| {r['auto_rank']} | {r['inner_none']:.2f} | " + held_out_cells(r)
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = screen_arguments(__doc__.split("\n")[0])
    ap.add_argument(
        "--from-report",
        action="store_true",
        help="summarize the report an earlier run of this script wrote to --out instead of running again",
    )
    args = ap.parse_args()
    committed = json.loads((HERE / "results.json").read_text())
    t0 = time.perf_counter()
    if args.from_report:
        report = json.loads((Path(args.out) / "results.json").read_text())
        prev = {f: json.loads((HERE / f"auto_screen.{f}.json").read_text()) for f in report["chosen"]}
        t0 -= 60 * max(p.get("elapsed_min", 0.0) for p in prev.values())  # keep the run's own time
    else:
        report = run_few_shot(
            families=args.families,
            out=args.out,
            cache_dir=args.cache_dir,
            options=(*GENERIC_OPTIONS, AUTO),
            plots=False,
        )
    cmd = "python experiments/few_shot/auto_screen.py --families " + " ".join(args.families)
    write_records("auto_screen", summarize(report, committed), cmd, (time.perf_counter() - t0) / 60)
    print(render_records("auto_screen", render))


if __name__ == "__main__":
    main()
