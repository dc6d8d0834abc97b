"""Screen behind ``pipeweave.model.SEEN_GPU_WEIGHT``: the blend weight of a family's seen-GPU booster.

The unseen-shape protocol (``pipeweave evaluate --protocol unseen-shape``: 20% of the shapes held out on every
GPU, every GPU seen) scores predictions for GPUs the model was trained on, which is where a seen-GPU booster
acts. The weight is chosen without the held-out shapes: the protocol's training rows are split again by shape
(20% of them, seed 1), the shipped recipe with a seen-GPU booster is fitted on the rest, and each weight w of
``W`` is scored on the inner held-out shapes by predicting with ``seen_weights_ = {family: w}`` (w = 0: the
model alone). Then the recipe is fitted on all training rows and the chosen weight (and w = 0) is scored on
the protocol's held-out shapes, per GPU. Writes ``seen_gpu_screen.md`` (and prints it).

    python experiments/accuracy_log/seen_gpu_screen.py --families gemm_bf16 fused_moe_bf16
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pipeweave.evaluation import EVAL_FAMILIES, load_eval_frame
from pipeweave.evaluation._protocols import iter_folds
from pipeweave.model import PipeweaveRegressor

W = (0.0, 0.35, 0.5, 0.65, 0.8, 1.0)
HERE = Path(__file__).resolve().parent


def _mape(pred: np.ndarray, lat: np.ndarray) -> float:
    return float(np.mean(np.abs(pred / lat - 1.0)) * 100.0)


def _scores(model: PipeweaveRegressor, family: str, test: pd.DataFrame, weights: tuple[float, ...]) -> dict:
    """MAPE (%) of ``model`` on ``test`` for each seen-GPU weight (0 = the model alone), and the predictions."""
    out, preds = {}, {}
    for w in weights:
        model.seen_weights_ = {family: w} if w > 0 else {}
        preds[w] = model.predict(test)
        out[w] = _mape(preds[w], test["latency_us"].to_numpy(dtype=float))
    return {"mape": out, "pred": preds}


def screen(label: str, frame: pd.DataFrame) -> tuple[list[str], dict]:
    family = EVAL_FAMILIES[label][0]
    d = frame[frame["eval_family"] == label].reset_index(drop=True)
    ((_, tr, te),) = list(iter_folds(d, "unseen-shape"))
    train, test = d.iloc[tr].reset_index(drop=True), d.iloc[te].reset_index(drop=True)
    ((_, itr, ite),) = list(iter_folds(train, "unseen-shape", seed=1))
    inner_model = PipeweaveRegressor(seen_gpu={family: 1.0}).fit(train.iloc[itr])
    if family not in inner_model.seen_boosters_:
        per_gpu = train.iloc[itr]["gpu"].astype(str).value_counts()
        note = (
            f"No seen-GPU booster: no GPU has {inner_model.seen_gpu_min_rows} inner training rows of the family "
            f"(most: {per_gpu.iloc[0]:,} on {per_gpu.index[0]})."
        )
        return [f"## {label}", "", note, ""], {"inner": {}, "chosen": None, "outer": {}}
    inner_test = train.iloc[ite].reset_index(drop=True)
    inner_all = _scores(inner_model, family, inner_test, W)
    inner = inner_all["mape"]
    chosen = min(inner, key=inner.__getitem__)
    model = PipeweaveRegressor(seen_gpu={family: 1.0}).fit(train)
    outer = _scores(model, family, test, tuple(dict.fromkeys((0.0, chosen))))
    lines = [
        f"## {label}",
        "",
        f"{len(train):,} training rows (inner: {len(itr):,} fitted, {len(ite):,} scored), {len(test):,} held-out "
        f"rows; seen GPUs: {', '.join(model.seen_keys_.get(family, []))}.",
        "",
        "| seen-GPU weight | " + " | ".join(f"{w:g}" for w in W) + " |",
        "|---|" + "---:|" * len(W),
        "| inner MAPE (training shapes) | " + " | ".join(f"{inner[w]:.2f}" for w in W) + " |",
        "",
        f"Chosen on the inner split: w = {chosen:g}. MAPE % per GPU, inner split (training shapes) and held-out "
        "shapes:",
        "",
        f"| GPU | inner n | inner w = 0 | inner w = {chosen:g} | held-out n | model alone (w = 0) | w = {chosen:g} |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lat = test["latency_us"].to_numpy(dtype=float)
    gpu = test["gpu"].astype(str).to_numpy()
    ilat = inner_test["latency_us"].to_numpy(dtype=float)
    igpu = inner_test["gpu"].astype(str).to_numpy()
    ipred = inner_all["pred"]
    for g in sorted(set(gpu)):
        m, im = gpu == g, igpu == g
        lines.append(
            f"| {g} | {int(im.sum()):,} | {_mape(ipred[0.0][im], ilat[im]):.2f} | "
            f"{_mape(ipred[chosen][im], ilat[im]):.2f} | {int(m.sum()):,} | "
            f"{_mape(outer['pred'][0.0][m], lat[m]):.2f} | {_mape(outer['pred'][chosen][m], lat[m]):.2f} |"
        )
    lines.append(
        f"| all | {len(inner_test):,} | {inner[0.0]:.2f} | {inner[chosen]:.2f} | {len(test):,} | "
        f"{outer['mape'][0.0]:.2f} | {outer['mape'][chosen]:.2f} |"
    )
    return lines + [""], {"inner": inner, "chosen": chosen, "outer": outer["mape"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", nargs="+", default=["gemm_bf16", "fused_moe_bf16"])
    ap.add_argument("--out", default=str(HERE / "seen_gpu_screen.md"))
    args = ap.parse_args()
    t0 = time.perf_counter()
    frame = load_eval_frame(None, args.families)[0]
    body = []
    for label in args.families:
        lines, rec = screen(label, frame)
        print("\n".join(lines), flush=True)
        body += lines
    head = [
        "# Seen-GPU booster: blend weight screen (unseen-shape protocol)",
        "",
        "Written by `python experiments/accuracy_log/seen_gpu_screen.py --families "
        + " ".join(args.families)
        + f"` ({(time.perf_counter() - t0) / 60:.1f} min on the 2-core machine). The weight is chosen on an "
        "inner split of the training shapes; the held-out shapes only report the result. The committed "
        "unseen-shape report (`experiments/unseen_shape`) is the harness's own run of the chosen recipe.",
        "",
    ]
    Path(args.out).write_text("\n".join(head + body))


if __name__ == "__main__":
    main()
