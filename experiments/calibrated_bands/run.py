"""Do the error bands of a few-shot calibrated GPU hold on its launches that were not measured?

    python experiments/calibrated_bands/run.py [--families gemm_bf16 ...] [--shots 16 32 64 128]
        [--refit-weight W] [--cache-dir DIR] [--out experiments/calibrated_bands] [--force]
    python experiments/calibrated_bands/run.py --from-csv a.csv b.csv ...   # render runs made in parallel

On every leave-one-generation-out fold, each held-out GPU is calibrated as `pipeweave calibrate fit` does by
default on the planned launches and scored on its other measured launches
(:func:`pipeweave.evaluation.calibrated_band_coverage`); with ``--refit-weight W`` the refit recipe instead
(model retrained with the shots at weight W, correction on its residuals, band borrowed from the correction
without the refit: ``calibrate fit --band-model``). Writes ``per_gpu.csv`` (one row per family, recipe,
held-out generation, GPU and shot count: MAPE, share inside the 50 / 80 / 90% bands, median band width; no
latencies), ``summary.csv`` (per family, recipe, shot count and generation, GPUs weighing the same), ``results.md`` and
``coverage.png``. Writing into the committed folder needs ``--force``; any other --out is written freely.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from pipeweave._io import atomic_write_text, save_figure_png
from pipeweave.evaluation import BAND_SHOTS, calibrated_band_coverage, order_generations

HERE = Path(__file__).resolve().parent
FAMILIES = ("gemm_bf16", "fused_moe_bf16", "attention_generation")


def summarize(per_gpu: pd.DataFrame) -> pd.DataFrame:
    """Per family, recipe, shot count and held-out generation: means over the generation's GPUs (each GPU weighs
    the same) of MAPE and coverage, and the 80% band as ratios exp(-w/2) .. exp(w/2) of its median width w."""
    cols = ["mape", "cover50", "cover80", "cover90", "width80"]
    keys = ["family", "recipe", "shots", "generation"]
    g = per_gpu.groupby(keys, sort=False)[cols].mean().reset_index()
    g["gpus"] = per_gpu.groupby(keys, sort=False)["gpu"].nunique().to_numpy()
    g["band80_ratio"] = np.exp(g["width80"])  # hi / lo of the median launch's 80% band
    return g


def plot_coverage(summary: pd.DataFrame, *, ax=None):  # noqa: ANN001, ANN201
    """80% band coverage (%) against shots, one line per family and recipe (mean over held-out generations; the
    refit recipe dashed); returns the Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        ax = plt.subplots(figsize=(5.5, 4.0))[1]
    colors: dict[str, str] = {}
    for (fam, recipe), d in summary.groupby(["family", "recipe"], sort=False):
        m = d.groupby("shots")["cover80"].agg(["mean", "min", "max"])
        color = colors.setdefault(str(fam), f"C{len(colors)}")
        label = str(fam) if recipe == "gp" else f"{fam} ({recipe})"
        ls = "-" if recipe == "gp" else "--"
        ax.plot(m.index, m["mean"], marker="o", color=color, ls=ls, label=label)
        if recipe == "gp":
            ax.fill_between(m.index, m["min"], m["max"], color=color, alpha=0.15)
    ax.axhline(80, color="grey", lw=0.8, ls="--", label="nominal 80%")
    ax.set_xscale("log", base=2)
    ticks = sorted(summary["shots"].unique())
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.set_ylim(0, 100)
    ax.set_xlabel("launches measured on the held-out GPU (shots)")
    ax.set_ylabel("measured inside the 80% band (%)")
    ax.set_title(
        "calibrated-GPU bands on unmeasured launches\n(mean over generations; shade: min-max of the GP recipe;\n"
        "dashed: refit recipe, band borrowed from the GP recipe)",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    return ax


def render_md(summary: pd.DataFrame, command: str) -> str:
    lines = [
        "# Error bands of a few-shot calibrated GPU",
        "",
        f"Written by `{command}`. On every leave-one-generation-out fold each held-out GPU is calibrated as "
        "`pipeweave calibrate fit` does by default (Gaussian-process residual correction, length scale 4, noise "
        "0.3; for fused MoE from 32 launches after the analog-GPU term, penalty 1, since session 43) on the "
        "launches the plan picks among its measured rows, and scored on its measured launches that "
        "no shot count picked (the rows of `experiments/few_shot`). The band is the one `pipeweave predict "
        '--interval` prints on the calibrated GPU (`band == "calibrated"`): the left-out errors of the measured '
        "launches, scaled by the correction's uncertainty at each launch. Zero-shot models: the `pipeweave` "
        "method of the LOGO suite, as in `experiments/few_shot` (there the option is chosen per fold; here it "
        "is the `calibrate fit` default, so the MAPE can differ).",
        "",
        "Cells: share of the scored launches inside the 80% band (%), mean over the generation's GPUs; in "
        "brackets the calibrated MAPE (%); `hi/lo` is the width of the median launch's 80% band as a ratio.",
        "",
    ]
    for (fam, recipe), d in summary.groupby(["family", "recipe"], sort=False):
        gens = order_generations(d["generation"].unique())
        title = f"## {fam}" if recipe == "gp" else f"## {fam}, refit recipe ({recipe})"
        lines += [title, "", "| shots | " + " | ".join(gens) + " | hi/lo |", "|---:|" + "---:|" * (len(gens) + 1)]
        for n, e in d.groupby("shots"):
            by = e.set_index("generation")
            cells = [f"{by.at[g, 'cover80']:.0f} ({by.at[g, 'mape']:.1f})" if g in by.index else "-" for g in gens]
            lines.append(f"| {n} | " + " | ".join(cells) + f" | {np.exp(e['width80'].median()):.2f} |")
        lines.append("")
    cov = summary.groupby(["recipe", "shots"], sort=False)[["cover50", "cover80", "cover90", "mape"]].mean()
    lines += [
        "## Over all families and generations",
        "",
        "| recipe | shots | inside 50% band | inside 80% band | inside 90% band | lowest 80% cell | highest 80% cell "
        "| MAPE |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (recipe, n), r in cov.iterrows():
        c = summary.loc[(summary["shots"] == n) & (summary["recipe"] == recipe), "cover80"]
        lines.append(
            f"| {recipe} | {n} | {r['cover50']:.0f} | {r['cover80']:.0f} | {r['cover90']:.0f} | {c.min():.0f} "
            f"| {c.max():.0f} | {r['mape']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="+", default=list(FAMILIES))
    ap.add_argument("--shots", nargs="+", type=int, default=list(BAND_SHOTS))
    ap.add_argument("--data", default=None)
    ap.add_argument("--refit-weight", type=float, default=None, help="score the refit recipe (shots at weight W)")
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
        parts = [pd.read_csv(f) for f in args.from_csv]
        # files written before the refit recipe was scored hold the default recipe only
        per_gpu = pd.concat([d if "recipe" in d else d.assign(recipe="gp") for d in parts], ignore_index=True)
        fams = list(dict.fromkeys(per_gpu["family"]))
    else:
        per_gpu = calibrated_band_coverage(
            families=args.families,
            shots=args.shots,
            data=args.data,
            cache_dir=args.cache_dir,
            refit_weight=args.refit_weight,
        )
        fams = args.families
    command = (
        "python experiments/calibrated_bands/run.py --families "
        + " ".join(fams)
        + " --shots "
        + " ".join(str(s) for s in sorted(per_gpu["shots"].unique()))
    )
    refits = sorted({r.removeprefix("refit").split("+")[0] for r in per_gpu["recipe"] if r != "gp"})
    if refits:
        command += "`, and again with `--refit-weight " + " / ".join(refits)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "per_gpu.csv", per_gpu.round(4).to_csv(index=False))
    if args.per_gpu_only:
        return 0
    summary = summarize(per_gpu)
    atomic_write_text(out / "summary.csv", summary.round(4).to_csv(index=False))
    atomic_write_text(out / "results.md", render_md(summary, command))
    save_figure_png(plot_coverage(summary).figure, out / "coverage.png", dpi=110)
    print(f"wrote {out}/results.md, summary.csv, per_gpu.csv, coverage.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
