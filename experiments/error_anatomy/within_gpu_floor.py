"""How low can the error go on one GPU? Models trained on half of a GPU's own launches, scored on the other half.

The leave-one-generation-out goals ask for a MAPE on a GPU the model never saw. This script measures the
other end: per GPU, a model trained on a random half of that GPU's own measured launches (the other GPUs'
rows unused) and scored on the other half, two seeds. Where even this in-distribution fit stays above a
goal, the goal asks for more than the data's own launch-to-launch spread lets any spec-sheet model reach
on that GPU. Two models:

* ``pipeweave booster``: ``PipeweaveRegressor`` (the front-end features; no companion, no roofline blend:
  those are built for a GPU never seen) trained on the half;
* ``plain XGBoost``: 400 trees of depth 8 on the log2 shape columns and the log of the analytical
  envelope (for FP32 GEMM also the bmm batch, the operand layout and the cuBLAS tile of the kernel name; for
  fused MoE the MoE shape with its tensor and expert parallelism and the routing distribution).

Beside them, the GPU's leave-one-generation-out MAPE (``experiments/logo/results.json``, ``by_gpu``).
Nothing here chooses anything: a diagnosis of the goals, not a method.

    python experiments/error_anatomy/within_gpu_floor.py [--families gemm_fp32 gemm_bf16 fused_moe_bf16] [--out DIR]

Writes ``within_gpu_floor.md`` (MAPE only; no measurement is copied).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from pipeweave import PipeweaveRegressor
from pipeweave.evaluation import load_eval_frame

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SEEDS = (0, 1)
#: the plain model's columns per evaluation family (log2 of the positive numeric ones; op -> 1 for linear)
PLAIN_COLUMNS = {
    "gemm_fp32": ("m", "n", "k", "batch_size", "op", "block_m", "block_n"),
    "gemm_bf16": ("m", "n", "k"),
    "fused_moe_bf16": (
        "num_tokens",
        "hidden_size",
        "inter_size",
        "num_experts",
        "topk",
        "moe_tp_size",
        "moe_ep_size",
        "distribution",
    ),
}


def _plain_matrix(d: pd.DataFrame, cols: tuple[str, ...]) -> np.ndarray:
    out = []
    for c in cols:
        if c == "op":
            out.append((d["op"].astype(str) == "linear").to_numpy(dtype=float))
            continue
        if c == "distribution":  # the routing: balanced = 0, power_law_<a> = a
            text = d["distribution"].astype(str).str.replace("power_law_", "", regex=False)
            out.append(pd.to_numeric(text.where(text != "balanced", "0"), errors="coerce").to_numpy(dtype=float))
            continue
        v = pd.to_numeric(d[c], errors="coerce").to_numpy(dtype=float)
        if c == "batch_size":
            v = np.nan_to_num(v, nan=1.0)
        out.append(np.log2(np.where(v > 0, v, np.nan)))
    out.append(np.log(d["t_env_us"].to_numpy(dtype=float)))
    return np.column_stack(out)


def _mape(pred: np.ndarray, lat: np.ndarray) -> float:
    return float(np.mean(np.abs(pred / lat - 1.0)) * 100.0)


def floor_table(frame: pd.DataFrame, family: str) -> pd.DataFrame:
    """Per GPU: rows, and the MAPE (%) of both models on the held-out half, per seed."""
    import xgboost as xgb

    rows = []
    for gpu, d in frame.groupby("gpu", observed=True):
        d = d.reset_index(drop=True)
        lat = d["latency_us"].to_numpy(dtype=float)
        X = _plain_matrix(d, PLAIN_COLUMNS[family])
        rec: dict[str, object] = {"gpu": str(gpu), "generation": str(d["generation"].iloc[0]), "rows": len(d)}
        for seed in SEEDS:
            train = np.random.default_rng(seed).random(len(d)) < 0.5
            est = PipeweaveRegressor(n_jobs=2, companion={}, roofline_blend={}, random_state=seed).fit(d[train])
            rec[f"pipeweave_{seed}"] = _mape(est.predict(d[~train].reset_index(drop=True)), lat[~train])
            plain = xgb.XGBRegressor(
                n_estimators=400, max_depth=8, learning_rate=0.05, subsample=0.8, nthread=2, random_state=seed
            ).fit(X[train], np.log(lat[train]))
            rec[f"plain_{seed}"] = _mape(np.exp(plain.predict(X[~train])), lat[~train])
        rows.append(rec)
        print(f"{family} {gpu}: done", flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=list(PLAIN_COLUMNS), choices=list(PLAIN_COLUMNS))
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args(argv)
    logo = json.loads((ROOT / "experiments" / "logo" / "results.json").read_text())["by_gpu"]
    # pipeweave.evaluation.ACCURACY_GOALS, leave-one-generation-out
    goals = {"gemm_fp32": 15.0, "gemm_bf16": 10.0, "fused_moe_bf16": 10.0}
    lines = [
        "# Within one GPU: models trained on half of its own launches, scored on the other half",
        "",
        "Written by `python experiments/error_anatomy/within_gpu_floor.py` (see its docstring). MAPE (%) on the",
        "held-out half of each GPU's launches, seeds 0 / 1 (a random half each). `pipeweave booster`: the model's",
        "front-end features, trained on the GPU's half alone (no companion, no roofline blend); `plain XGBoost`:",
        "log2 shape columns + log envelope. `LOGO`: the GPU's MAPE when its generation is held out",
        "(`experiments/logo/results.json`). Goal: the leave-one-generation-out goal of the family.",
        "",
    ]
    for fam in args.families:
        frame = load_eval_frame(None, [fam], sass=False, verbose=False)[0]
        t = floor_table(frame, fam)
        lines += [
            f"## {fam} (goal <= {goals[fam]:g})",
            "",
            "| GPU | generation | launches | pipeweave booster | plain XGBoost | LOGO |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for r in t.itertuples():
            lg = logo.get(fam, {}).get("pipeweave", {}).get(r.gpu, {}).get("mape")
            pw_ = " / ".join(f"{getattr(r, f'pipeweave_{s}'):.1f}" for s in SEEDS)
            pl = " / ".join(f"{getattr(r, f'plain_{s}'):.1f}" for s in SEEDS)
            lines.append(
                f"| {r.gpu} | {r.generation} | {r.rows:,} | {pw_} | {pl} | " + (f"{lg:.1f} |" if lg else "- |")
            )
        lines.append("")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "within_gpu_floor.md").write_text("\n".join(lines))
    print(f"wrote {out / 'within_gpu_floor.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
