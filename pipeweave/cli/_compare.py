"""`pipeweave compare`: one workload predicted on several GPUs, totals side by side (picking hardware)."""

from __future__ import annotations

import argparse
import sys

from ._common import (
    add_data_argument,
    add_launch_arguments,
    check_output_path,
    check_plot_path,
    flag_refused,
    interval_coverage,
    launch_error,
    plural,
    print_json,
    save_plot,
)

COMMAND = "compare"
HELP = "predict a workload (launches x counts) on several GPUs and compare the totals, with error bands"
DESCRIPTION = (
    HELP
    + """

The workload is --input, a CSV of launch rows as `pipeweave predict --input` takes them (no gpu
column needed; one is replaced by each GPU) with an optional `count` column: how many times the
launch runs per step (a decode step, a layer; default 1). Or one launch from the launch flags.
Every launch is predicted on every GPU; a GPU's total is sum(count x latency) over the launches
predicted on every GPU, so the totals compare the same work. A launch that cannot be predicted on
some GPU (outside the valid domain there) is reported as `row N on GPU: reason` and left out of all
totals.

Error band of a total: the launches' bands (`predict --interval`) added end to end. On generations
held out of training it holds for a GPU whose launches the model gets right on average (96-100% of
random 20-launch GEMM workloads inside the 80% band on five of seven GPUs), and misses more often than
a single launch's band where the GPU's launches share a bias the model lacks (L40S GEMM: 9% of
20-launch workloads; experiments/workload_bands). `~best` marks a GPU whose band overlaps the
fastest GPU's: the model cannot tell them apart at that coverage. The `band` column says where each
GPU's bands come from: `seen` (a GPU the model was trained on), `sibling` (a new GPU of a measured
generation), `unseen` (a new generation), `calibrated` (a GPU calibrated with measured launches).

exit status:
  0  every launch predicted on every GPU
  1  some launches not predicted on some GPU (reported on stderr); the totals leave them out
  2  no launch predicted on every GPU, or a usage / input error

examples:
  pipeweave compare --gpus H100 H200 B200 B300 --input decode_step.csv --by-family
  pipeweave compare --gpus H100 B300 L40S --family gemm --m 16 --n 4096 --k 4096
  pipeweave compare --gpus A100 H100 my_gpu.toml --input layer.csv --baseline A100 --plot cmp.png --output per_launch.csv
"""
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--gpus",
        nargs="+",
        required=True,
        metavar="NAME_OR_SPEC",
        help="GPUs to compare: catalog names or aliases (see `pipeweave gpus`) or spec files (.toml/.json)",
    )
    p.add_argument("--input", metavar="CSV", help="the workload: launch rows, optional `count` column")
    p.add_argument("--baseline", metavar="NAME", help="GPU the speedups are relative to (default: the first of --gpus)")
    p.add_argument(
        "--interval",
        type=float,
        default=80.0,
        metavar="P",
        help="coverage of the error bands: 50, 80 (default) or 90 (%%); 0 = no bands (a model without bands)",
    )
    p.add_argument("--model", metavar="PATH", help="model file (default: models/pipeweave_default.ubj)")
    p.add_argument("--output", metavar="CSV", help="also write the per-launch predictions (one row per launch and GPU)")
    p.add_argument("--plot", metavar="PNG", help="also draw the totals with their bands")
    p.add_argument("--json", action="store_true", help="print the summary and the per-family split as JSON")
    p.add_argument(
        "--by-family", action="store_true", help="also print each GPU's total split by kernel family (us and share)"
    )
    add_launch_arguments(p)
    add_data_argument(p)


def _workload(args: argparse.Namespace):  # noqa: ANN202
    """The workload rows: --input, or one launch from the launch flags (validated per GPU later)."""
    import pandas as pd

    from .._errors import DataError
    from ._common import launch_frame
    from ._predict import _launch_flags

    given = [f for f, (c, _, _) in _launch_flags().items() if getattr(args, c, None) is not None]
    if args.input:
        if given:
            raise DataError(
                f"launch flags {given} cannot be combined with --input {args.input!r}",
                hint="put the launch in the CSV, or drop --input to compare one launch from flags",
            )
        from .._io import read_csv_checked

        return read_csv_checked(args.input, "--input")
    if not args.family:
        raise DataError(
            "give --input CSV (a workload) or one launch's flags", hint="e.g. --family gemm --m 16 --n 4096 --k 4096"
        )
    from ..hardware import get_gpu

    # the flags' row (defaults filled like predict's); the valid domain is checked on every GPU by compare
    first = get_gpu(args.gpus[0])
    row = launch_frame(args, first, check=False)
    from ..frontend import row_problems

    problem = str(row_problems(row, {first.name: first}).iloc[0])
    if problem and flag_refused(problem):  # a flag the family never takes: refused once, as by predict
        raise launch_error(problem)
    return pd.DataFrame(row.drop(columns=["gpu", "generation"]))


def _fmt(x: float, ref: float | None = None) -> str:
    """Microseconds with 3 decimals below 100 us, else 1 (``ref``: the magnitude that decides, e.g. a band's total)."""
    return f"{x:,.3f}" if (x if ref is None else ref) < 100 else f"{x:,.1f}"


def run(args: argparse.Namespace) -> int:
    import math
    import os

    from .._errors import DataError
    from ..api import compare, plot_comparison
    from ._predict import _NOT_CSV

    inputs = [args.input or "", *(args.gpus or [])]  # --gpus may name spec files
    if args.output:
        check_output_path(args.output, "--output", inputs)
        if os.path.splitext(args.output)[1].lower() in _NOT_CSV:
            raise DataError(f"--output {args.output!r} would hold CSV text: compare writes CSV", hint="name it .csv")
    if args.plot:
        check_plot_path(args.plot, inputs, "compare.png")
    coverage = interval_coverage(args.interval)  # 50 / 80 / 90, or 0.5 / 0.8 / 0.9 as predict takes it; 0: none
    if coverage is not None:
        from ..model import has_error_bands

        if not has_error_bands(args.model):
            raise DataError(
                f"--interval {args.interval:g}: the model {args.model or 'models/pipeweave_default.ubj'!r} has no "
                "error bands",
                hint="pass --interval 0 to compare without bands, or retrain with `pipeweave train --error-bands`",
            )
    import warnings

    with warnings.catch_warnings():  # the left-out launches are listed row by row below
        warnings.filterwarnings("ignore", message=r".* launches could not be predicted on ", category=UserWarning)
        res = compare(
            _workload(args), args.gpus, model=args.model, data=args.data, interval=coverage, baseline=args.baseline
        )
    per = res.per_launch
    bad = per[per["problem"] != ""]
    for row, gpu, problem in zip(bad["row"], bad["gpu"], bad["problem"]):
        print(f"row {row} on {gpu}: not predicted: {problem}", file=sys.stderr)
    if args.output:
        from .._io import atomic_write

        atomic_write(args.output, lambda p: per.to_csv(p, index=False, float_format="%.6g", lineterminator="\n"))
    if args.plot:
        save_plot(plot_comparison(res.summary, baseline=res.baseline).figure, args.plot)
    s = res.summary
    if args.json:
        print_json(
            {
                "baseline": res.baseline,
                "coverage": res.coverage,
                "launches": res.launches,
                "launches_in_totals": res.common_launches,
                "gpus": [
                    {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
                    for rec in s.astype(object).where(s.notna(), None).to_dict("records")
                ],
                "by_family": res.by_family.to_dict("records"),
            }
        )
    else:
        counted = bool((per["count"] != 1).any())
        runs = float(per.loc[per["gpu"] == res.baseline, "count"].sum())
        what = f"{res.launches} launch{'es' if res.launches != 1 else ''}" + (
            f", {runs:,.6g} runs per step (count column)" if counted else ""
        )
        band_txt = f"; {res.coverage:.0%} error bands" if res.coverage else ""
        print(
            f"workload: {what}; totals over the {res.common_launches} launch"
            f"{'es' if res.common_launches != 1 else ''} predicted on every GPU{band_txt}"
        )
        head = f"  {'gpu':<16}{'generation':<11}{'total us':>12}"
        if res.coverage:
            head += f"  {'band us':>23}"
        head += f"  {'vs ' + res.baseline:>14}  {'band':<16}top family"
        print(head)
        overlaps = s["overlaps_best"].fillna(False).astype(bool).tolist()
        for i, (rec, ov) in enumerate(zip(s.to_dict("records"), overlaps)):
            line = f"  {rec['gpu']:<16}{rec['generation']:<11}{_fmt(rec['total_us']):>12}"
            if res.coverage:
                lo, hi = float(rec["total_lo_us"]), float(rec["total_hi_us"])
                cell = "-" if math.isnan(lo) else f"{_fmt(lo, rec['total_us'])} - {_fmt(hi, rec['total_us'])}"
                line += f"  {cell:>23}"
            where = (str(rec["bands"]) or "-") + (" ~best" if ov and i > 0 else "")
            line += f"  {float(rec['speedup_vs_baseline']):>13.2f}x  {where:<15} {rec['top_family']} {rec['top_family_share']:.0%}"
            print(line)
        if args.by_family:
            gpus = list(s["gpu"])
            fam = res.by_family.pivot(index="family", columns="gpu", values="total_us")[gpus]
            fam = fam.loc[fam.sum(axis=1).sort_values(ascending=False).index]
            share = res.by_family.pivot(index="family", columns="gpu", values="share")[gpus].loc[fam.index]
            names = [str(f) for f in fam.index]
            width = max(len("by family (us, share)"), *(len(f) for f in names)) + 2
            print(f"  {'by family (us, share)':<{width}}" + "".join(f"{g:>20}" for g in gpus))
            for name, tot, sh in zip(names, fam.to_numpy(dtype=float), share.to_numpy(dtype=float)):
                print(f"  {name:<{width}}" + "".join(f"{_fmt(t) + f' ({x:.0%})':>20}" for t, x in zip(tot, sh)))
        close = [g for i, (g, o) in enumerate(zip(s["gpu"], overlaps)) if i > 0 and o]
        if close:
            print(
                f"note: the bands of {', '.join(close)} overlap the fastest GPU's ({s['gpu'].iloc[0]}): within the "
                "model's error of it at this coverage"
            )
    if len(bad):
        print(
            f"{plural(len(bad), 'prediction')} not made ({bad['row'].nunique()} of {plural(res.launches, 'launch')}); "
            "the totals "
            "leave those launches out on every GPU",
            file=sys.stderr,
        )
        return 1
    return 0
