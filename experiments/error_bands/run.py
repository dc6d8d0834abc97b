"""Error bands of a model file: the table and figure quoted in the README (what `predict --interval` prints).

    python experiments/error_bands/run.py [--model models/pipeweave_default.ubj] [--out experiments/error_bands]

Reads the bands stored in the model's stamp by `pipeweave train --error-bands` (no refit, no data needed) and
writes ``summary.csv`` (:func:`pipeweave.model.band_summary` at 50 / 80 / 90 % coverage), ``results.md``,
``report_check.csv`` (the bands' MAPE next to the committed LOGO and unseen-gpu reports') and ``bands.png``
(:func:`pipeweave.evaluation.plot_error_bands`, 80 %). Writing into the committed folder needs
``--force``; any other --out is written freely.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from pipeweave.evaluation import plot_error_bands
from pipeweave.model import BAND_COVERAGES, band_summary, read_stamp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def summary_frame(bands: dict) -> pd.DataFrame:
    """band_summary at every coverage, one block of rows per coverage (column ``band_coverage``)."""
    return pd.concat([band_summary(bands, c).assign(band_coverage=c) for c in BAND_COVERAGES], ignore_index=True)


def _cell(lo: float, hi: float) -> str:
    return "-" if pd.isna(lo) else f"{lo:.2f} - {hi:.2f}"


def _pct(x: float) -> str:
    return "-" if pd.isna(x) else f"{100 * x:.0f}%"


def write_md(path: Path, stamp: dict, summary: pd.DataFrame, model: str, check: pd.DataFrame) -> None:
    bands = stamp["error_bands"]
    s80 = summary[summary["band_coverage"] == 0.8]
    lines = [
        f"# Error bands of `{model}`",
        "",
        f"Written by `python experiments/error_bands/run.py --model {model}` from the bands in the model's stamp "
        f"(`{stamp.get('command', 'pipeweave train --error-bands')}`). A band is the range of measured / predicted "
        "that held the middle 80% of the model recipe's held-out rows; `pipeweave predict` prints a launch's "
        "latency times these two ratios (`--interval 50|80|90`, `pw.predict(..., interval=0.8)`).",
        "",
        f"- **new generation** (`unseen`, a GPU of a generation never measured for the family): "
        f"{bands['unseen']['protocol']}.",
        f"- **new GPU of a measured generation** (`sibling`, e.g. B300 after B200): "
        f"{bands['sibling']['protocol'] if 'sibling' in bands else 'not estimated in this file'}.",
        f"- **trained GPU, new shape** (`seen`): {bands['seen']['protocol']}.",
        "- **carries**: the share of a held-out generation's (or GPU's) rows inside the 80% band built from the "
        "other generations (GPUs) alone, averaged over them: 80% means the band transfers to a generation it "
        "was not made from; less means the next one may fall outside it.",
        "",
        "80% bands of measured / predicted, the held-out MAPE (%) and whether the band carries:",
        "",
        "| family (dtype) | new generation | MAPE | carries | new GPU, measured generation | MAPE | carries "
        "| trained GPU, new shape | MAPE | carries | held-out rows (new gen. / new GPU / new shape) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def cells(r: dict, s: str) -> str:
        lo, hi = r.get(f"{s}_lo", float("nan")), r.get(f"{s}_hi", float("nan"))
        mape = r.get(f"{s}_mape", float("nan"))
        return f"{_cell(lo, hi)} | {'-' if pd.isna(mape) else f'{mape:.1f}'} | {_pct(r.get(f'{s}_coverage', float('nan')))}"

    def n(r: dict, s: str) -> str:
        x = r.get(f"{s}_n", float("nan"))
        return "-" if pd.isna(x) else f"{int(x):,}"

    for r in s80.to_dict("records"):
        lines.append(
            f"| {r['key']} | {cells(r, 'unseen')} | {cells(r, 'sibling')} | {cells(r, 'seen')} "
            f"| {n(r, 'unseen')} / {n(r, 'sibling')} / {n(r, 'seen')} |"
        )
    lines += [
        "",
        "`summary.csv` has the 50% and 90% bands too; `bands.png` draws the 80% bands (tick: the median ratio).",
        "A band is the spread of past errors on held-out rows, not a guarantee: a generation unlike any measured "
        "one can fall outside it (the `carries` column says how often that happened between the measured ones).",
        "",
    ]
    path.write_text("\n".join(lines + check_lines(check)) + "\n")


#: band key -> the report family it describes (experiments/logo and experiments/unseen_gpu)
REPORT_FAMILY = {
    "gemm:bfloat16": "gemm_bf16",
    "fused_moe:bfloat16": "fused_moe_bf16",
    "moe_w13": "moe_w13",
    "attention_context": "attention_context",
    "attention_generation": "attention_generation",
    "attention_flashinfer": "attention_flashinfer",
    "rmsnorm:bfloat16": "rmsnorm",
    "silu_mul:bfloat16": "silu_mul",
    "gemm_fp32": "gemm_fp32",
    "elementwise_fp32": "elementwise_fp32",
    "softmax_fp32": "softmax_fp32",
    "layernorm_fp32": "layernorm_fp32",
}


def report_check(bands: dict) -> pd.DataFrame:
    """The bands' held-out MAPE next to the committed reports' pipeweave MAPE on the same situation: the
    new-generation band against the LOGO report's mean over its held-out generations, the new-GPU band against
    the unseen-gpu report's mean over the band's held-out GPUs (its ``groups``). Both are means with each
    generation / GPU weighing the same; the reports train one model per family (the harness), the bands refit
    the whole shipped recipe, so they agree only roughly."""
    import json

    logo = json.loads((ROOT / "experiments/logo/results.json").read_text())["results"]
    ugpu = json.loads((ROOT / "experiments/unseen_gpu/results.json").read_text())["by_gpu"]
    rows = []
    for key, fam in REPORT_FAMILY.items():
        u, s = bands["unseen"]["bands"].get(key), bands.get("sibling", {}).get("bands", {}).get(key)
        gens = {g: v for g, v in logo.get(fam, {}).get("pipeweave", {}).items() if g != "all"}  # generations only
        per_gpu = ugpu.get(fam, {}).get("pipeweave", {})
        sib = [per_gpu[g]["mape"] for g in (s["groups"] if s else []) if g in per_gpu]
        rows.append(
            {
                "key": key,
                "report_family": fam,
                "band_new_generation_mape": u["mape"] if u else float("nan"),
                "logo_report_mape": sum(v["mape"] for v in gens.values()) / len(gens) if gens else float("nan"),
                "band_new_gpu_mape": s["mape"] if s else float("nan"),
                "unseen_gpu_report_mape": sum(sib) / len(sib) if sib else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def _f(x: float) -> str:
    return "-" if pd.isna(x) else f"{x:.1f}"


def check_lines(check: pd.DataFrame) -> list[str]:
    """Markdown of :func:`report_check`'s table (the results.md section "Cross-check against the reports")."""
    lines = [
        "## Cross-check against the reports",
        "",
        "Held-out MAPE (%) of the bands next to the committed reports' `pipeweave` MAPE in the same situation "
        "(`report_check.csv`): the new-generation band against the mean over the held-out generations of "
        "`experiments/logo`, the new-GPU band against the mean over the band's held-out GPUs of "
        "`experiments/unseen_gpu`. The reports fit one model per family in the evaluation harness (and read the "
        "SASS columns on the Triton families) on the evaluated dtype's rows; the bands refit the whole shipped "
        "recipe on every dtype of a family (e.g. silu_mul's float16 vidur rows, GEMM's fp8_block rows), so they "
        "agree roughly, not exactly.",
        "",
        "| band | report family | band, new generation | LOGO report | band, new GPU | unseen-gpu report |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in check.to_dict("records"):
        lines.append(
            f"| {r['key']} | {r['report_family']} | {_f(r['band_new_generation_mape'])} | {_f(r['logo_report_mape'])} "
            f"| {_f(r['band_new_gpu_mape'])} | {_f(r['unseen_gpu_report_mape'])} |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="models/pipeweave_default.ubj", help="model file with error bands")
    ap.add_argument("--out", default=str(HERE), help="output folder (default: this folder, needs --force)")
    ap.add_argument("--force", action="store_true", help="overwrite the committed results in this folder")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    if out == HERE and not args.force:
        raise SystemExit(f"refusing to overwrite the committed results in {out}; pass --force or --out /tmp/bands")
    stamp = read_stamp(ROOT / args.model if not Path(args.model).is_absolute() else args.model)
    if not stamp.get("error_bands"):
        raise SystemExit(f"{args.model} has no error bands; train it with `pipeweave train --error-bands`")
    out.mkdir(parents=True, exist_ok=True)
    summary = summary_frame(stamp["error_bands"])
    summary.to_csv(out / "summary.csv", index=False, float_format="%.4g")
    check = report_check(stamp["error_bands"])
    check.to_csv(out / "report_check.csv", index=False, float_format="%.2f")
    write_md(out / "results.md", stamp, summary, args.model, check)
    ax = plot_error_bands(summary[summary["band_coverage"] == 0.8].reset_index(drop=True))
    ax.set_title(f"80% error bands of {Path(args.model).name} (held-out rows)")
    ax.figure.savefig(out / "bands.png", dpi=120, bbox_inches="tight")
    print(f"wrote {out}/summary.csv, results.md, report_check.csv, bands.png")


if __name__ == "__main__":
    main()
