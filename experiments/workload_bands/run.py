"""Does the error band of a workload's total (`pipeweave compare`) hold on a generation never measured?

    python experiments/workload_bands/run.py [--families gemm_bf16 ...] [--cache-dir DIR]
        [--out experiments/workload_bands] [--force]

:func:`pipeweave.evaluation.workload_band_coverage`: on every leave-one-generation-out fold, random workloads
of 1 / 5 / 20 / 100 measured launches of each held-out GPU (counts 1-64) are predicted by the zero-shot model
and their measured total compared with the band `compare` prints (the launches' 80% bands, from the other
generations' held-out errors, added end to end). Writes ``per_gpu.csv``, ``results.md`` and
``inside.png``. Writing into the committed folder needs ``--force``; any other --out is written freely.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from pipeweave._io import atomic_write_text, save_figure_png
from pipeweave.evaluation import WORKLOAD_SIZES, new_axes, order_generations, workload_band_coverage

HERE = Path(__file__).resolve().parent
FAMILIES = ("gemm_bf16", "fused_moe_bf16", "attention_generation")


def plot_inside(per_gpu: pd.DataFrame, *, ax=None):  # noqa: ANN001, ANN201
    """Share (%) of workloads inside the 80% band against launches per workload, one line per GPU and family."""
    fams = list(dict.fromkeys(per_gpu["family"]))
    if ax is None:
        axes = new_axes(1, len(fams), figsize=(4.2 * len(fams), 3.8))[0]
    else:
        axes = [ax] * len(fams)
    for a, fam in zip(axes, fams):
        d = per_gpu[per_gpu["family"] == fam]
        for gpu, e in d.groupby("gpu", sort=False):
            a.plot(e["launches"], e["inside"], marker="o", label=f"{gpu} ({e['generation'].iloc[0]})")
        a.axhline(80, color="grey", lw=0.8, ls="--")
        a.set_xscale("log")
        a.set_xticks(sorted(d["launches"].unique()))
        a.set_xticklabels([str(k) for k in sorted(d["launches"].unique())])
        a.set_ylim(0, 100)
        a.set_xlabel("launches per workload")
        a.set_ylabel("measured total inside the 80% band (%)")
        a.set_title(fam)
        a.legend(fontsize=6)
    return axes[0]


def render_md(per_gpu: pd.DataFrame, command: str) -> str:
    lines = [
        "# Error band of a workload's total on a generation never measured",
        "",
        f"Written by `{command}`. On every leave-one-generation-out fold the zero-shot model (the `pipeweave` "
        "method of the LOGO suite, as in `experiments/few_shot`) predicts each held-out GPU's measured launches. "
        "Random workloads of k of them (each with a random count 1-64) are totalled as `pipeweave compare` does, "
        "and the band of the total is the launches' 80% bands added end to end, the band taken from the *other* "
        "generations' held-out errors (each generation weighing the same; the held-out one is not used). Cells: "
        "share (%) of 2,000 workloads whose measured total lies inside that band; in brackets the MAPE (%) of "
        "the predicted total. k = 1 is a single launch.",
        "",
    ]
    sizes = sorted(per_gpu["launches"].unique())
    for fam, d in per_gpu.groupby("family", sort=False):
        lines += [
            f"## {fam}",
            "",
            "| held out | GPU | 80% band | " + " | ".join(f"k = {k}" for k in sizes) + " |",
            "|---|---|---|" + "---:|" * len(sizes),
        ]
        order = {g: i for i, g in enumerate(order_generations(d["generation"].unique()))}
        d = d.sort_values(["generation", "gpu"], key=lambda c: c.map(order) if c.name == "generation" else c)
        for (g, gpu), e in d.groupby(["generation", "gpu"], sort=False):
            by = e.set_index("launches")
            cells = [f"{by.at[k, 'inside']:.0f} ({by.at[k, 'mape']:.1f})" for k in sizes]
            lines.append(
                f"| {g} | {gpu} | {by['band_lo'].iloc[0]:.2f} - {by['band_hi'].iloc[0]:.2f} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="+", default=list(FAMILIES))
    ap.add_argument("--sizes", nargs="+", type=int, default=list(WORKLOAD_SIZES))
    ap.add_argument("--data", default=None)
    ap.add_argument("--cache-dir", default=None, help="cache of the zero-shot predictions (as evaluate --cache-dir)")
    ap.add_argument("--from-csv", nargs="+", default=None, help="render per_gpu.csv files of earlier runs instead")
    ap.add_argument("--per-gpu-only", action="store_true", help="write per_gpu.csv only (a part of a parallel run)")
    ap.add_argument("--out", default=str(HERE))
    ap.add_argument("--force", action="store_true", help="allow writing into the committed folder")
    args = ap.parse_args(argv)
    out = Path(args.out).resolve()
    if out == HERE and not args.force:
        print(f"error: {out} holds committed results; pass --force to regenerate them, or --out DIR", file=sys.stderr)
        return 2
    if args.from_csv:
        per_gpu = pd.concat([pd.read_csv(f) for f in args.from_csv], ignore_index=True)
    else:
        per_gpu = workload_band_coverage(
            families=args.families, sizes=args.sizes, data=args.data, cache_dir=args.cache_dir
        )
    fams = list(dict.fromkeys(per_gpu["family"]))
    command = "python experiments/workload_bands/run.py --families " + " ".join(fams)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "per_gpu.csv", per_gpu.round(4).to_csv(index=False))
    if args.per_gpu_only:
        return 0
    atomic_write_text(out / "results.md", render_md(per_gpu, command))
    save_figure_png(plot_inside(per_gpu).figure, out / "inside.png", dpi=110)
    print(f"wrote {out}/results.md, per_gpu.csv, inside.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
