"""`pipeweave bench`: speed benchmarks written to experiments/bench (not timed tests)."""

from __future__ import annotations

import argparse

from ._common import add_data_argument

COMMAND = "bench"
HELP = "measure featurization, training and prediction speed; writes experiments/bench/results.{json,md}"
DESCRIPTION = HELP + """

what: featurize (every row of the shared data), train (the default model), predict (batch rows/s
including featurization, on B300 from its spec sheet), cli (one single-launch `pipeweave predict`
process, wall time). Numbers depend on the machine; the report records its CPU count.

example:
  pipeweave bench --what featurize predict cli
"""

_WHAT = ("featurize", "train", "predict", "cli")
_PREDICT_GPUS = ("B300", "H200-SXM", "L40S")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_data_argument(p)
    p.add_argument("--what", nargs="+", choices=_WHAT, default=list(_WHAT))
    p.add_argument("--out", default="experiments/bench", metavar="DIR")
    p.add_argument("--predict-gpus", nargs="+", default=list(_PREDICT_GPUS), metavar="GPU",
                   help="GPUs of the batch prediction benchmark: every bf16 gemm and fused_moe shape of the shared "
                        f"data on each (default {' '.join(_PREDICT_GPUS)}: distinct rows, three architecture classes)")
    p.add_argument("--repeats", type=int, default=5, help="timed repetitions; the median is reported")


def run(args: argparse.Namespace) -> int:
    import json
    import os
    import platform
    import subprocess
    import sys
    import time
    from pathlib import Path

    import numpy as np
    import pandas as pd

    from .._io import atomic_write_json, atomic_write_text

    out = Path(args.out)
    path = out / "results.json"
    res = json.loads(path.read_text()) if path.exists() else {}
    res["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    if {"featurize", "predict", "train"} & set(args.what):
        from ..sources import load_profiles

        t = time.perf_counter()
        df = load_profiles(args.data)
        res["load_profiles_s"] = round(time.perf_counter() - t, 2)
    if "featurize" in args.what:
        from ..frontend import featurize

        t = time.perf_counter()
        feats = featurize(df)
        dt = time.perf_counter() - t
        res["featurize"] = {"rows": int(len(df)), "seconds": round(dt, 2), "rows_per_s": round(len(df) / dt)}
        # physical invariant: the analytical lower bound should not exceed the measured latency
        viol = (feats["t_lower_us"] > df["latency_us"] * 1.05).groupby([df["source"].astype(str),
                                                                         df["family"].astype(str)]).mean()
        res["lower_bound_violations_pct"] = {f"{s}/{f}": round(float(v) * 100, 3) for (s, f), v in viol.items()}
        print(f"featurize: {len(df):,} rows in {dt:.1f}s", flush=True)
    if "train" in args.what:
        from ..model import DEFAULT_MAX_ROWS_PER_GROUP, DEFAULT_MODEL_PARAMS, PipeweaveRegressor, cap_rows
        from ..model import prepare_training_frame

        t = time.perf_counter()
        # the rows `pipeweave train` uses by default (seeded cap per GPU, family, dtype, source)
        frame, _ = prepare_training_frame(cap_rows(df, DEFAULT_MAX_ROWS_PER_GROUP))
        t_feat = time.perf_counter() - t
        model = PipeweaveRegressor(**DEFAULT_MODEL_PARAMS)  # what `pipeweave train` builds by default
        t = time.perf_counter()
        model.fit(frame)
        dt = time.perf_counter() - t
        res["train"] = {"rows": int(len(frame)), "featurize_s": round(t_feat, 1), "fit_s": round(dt, 1),
                        "params": {k: v for k, v in model.get_params().items() if k != "progress"}}
        print(f"train: {len(frame):,} rows, fit {dt:.1f}s", flush=True)
    if "predict" in args.what:
        from ..model import load_model
        from ..sources import FAMILY_KEY_COLUMNS

        model = load_model()
        # every bf16 GEMM and bf16 fused-MoE shape of the shared data, on B300 from its spec sheet
        shapes = []
        for fam in ("gemm", "fused_moe"):
            sub = df[(df["family"] == fam) & (df["dtype"] == "bfloat16") & (df["source"] == "aiconfigurator")]
            shapes.append(sub.drop_duplicates(subset=list(FAMILY_KEY_COLUMNS[fam])))
        base = pd.concat(shapes, ignore_index=True).drop(columns=["latency_us", "generation"], errors="ignore")
        b300 = base.assign(gpu="B300")
        gpus = list(dict.fromkeys(args.predict_gpus))
        batch = pd.concat([base.assign(gpu=g) for g in gpus], ignore_index=True)  # distinct (shape, GPU) rows
        t = time.perf_counter()
        model.predict(batch)  # first call: also loads the SGLang config tables (reported, not in the median)
        cold = time.perf_counter() - t
        times = []
        for _ in range(max(1, args.repeats)):
            t = time.perf_counter()
            pred = model.predict(batch)
            times.append(time.perf_counter() - t)
        dt = float(np.median(times))
        if "B300" in gpus:  # B300 coverage: its block of the batch
            i = gpus.index("B300")
            first = pred[i * len(base):(i + 1) * len(base)]
        else:
            first = model.predict(b300)
        res["predict"] = {"rows": int(len(batch)), "seconds": round(dt, 2), "rows_per_s": round(len(batch) / dt),
                          "runs_s": [round(x, 2) for x in times], "first_call_s": round(cold, 2), "gpus": gpus,
                          "what": "featurize + XGBoost predict of every bf16 gemm and fused_moe shape of the shared "
                                  f"data on {', '.join(gpus)} (distinct rows; median of {len(times)} runs after "
                                  "one untimed first call)",
                          "model_trees": int(model.booster_.num_boosted_rounds()),
                          "family_boosters": sorted(getattr(model, "family_boosters_", None) or {})}
        res["b300_coverage"] = {
            "gemm_bf16_shapes": int((b300["family"] == "gemm").sum()),
            "fused_moe_bf16_shapes": int((b300["family"] == "fused_moe").sum()),
            "predicted_finite_positive": int(np.sum(np.isfinite(first) & (first > 0))),
            "median_pred_us": {f: round(float(np.median(first[(b300["family"] == f).to_numpy()])), 2)
                               for f in ("gemm", "fused_moe")},
        }
        print(f"predict: {len(batch) / dt:,.0f} rows/s; B300 coverage {res['b300_coverage']}", flush=True)
    if "cli" in args.what:
        cmd = [sys.executable, "-m", "pipeweave", "predict", "--gpu", "B300", "--family", "gemm",
               "--dtype", "bfloat16", "--m", "8192", "--n", "8192", "--k", "8192"]
        times = []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times.append(time.perf_counter() - t)
        res["cli_single_predict_s"] = {"median": round(float(np.median(times)), 2), "runs": [round(x, 2) for x in times],
                                       "command": " ".join(cmd[2:])}
        print(f"cli: {np.median(times):.2f}s per `pipeweave predict` process", flush=True)
    atomic_write_json(path, res)
    lines = ["# pipeweave speed benchmarks", "", f"Command: `pipeweave bench --what {' '.join(args.what)}`; "
             f"machine: {res['machine']['cpus']} CPUs.", "", "| benchmark | result |", "|---|---|"]
    if "featurize" in res:
        lines.append(f"| featurize all shared rows | {res['featurize']['rows']:,} rows in {res['featurize']['seconds']} s "
                     f"({res['featurize']['rows_per_s']:,} rows/s) |")
    if "lower_bound_violations_pct" in res:
        lines += ["", "Rows whose analytical lower bound exceeds the measured latency by > 5% (per source/family):", "",
                  "| source/family | % rows |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in res["lower_bound_violations_pct"].items()]
        lines += ["", "| benchmark | result |", "|---|---|"]
    if "train" in res:
        lines.append(f"| train default model | {res['train']['rows']:,} rows: featurize {res['train']['featurize_s']} s, "
                     f"fit {res['train']['fit_s']} s |")
    if "predict" in res:
        pr = res["predict"]
        lines.append(f"| batch predict (incl. featurization) | {pr['rows_per_s']:,} rows/s ({pr['rows']:,} distinct rows: "
                     f"bf16 gemm + fused_moe shapes on {', '.join(pr.get('gpus', ['B300']))}; "
                     f"{pr.get('model_trees', '?')}-tree boosters"
                     f"{' per family' if pr.get('family_boosters') else ''}; median of runs {pr.get('runs_s')} s; "
                     f"first call {pr.get('first_call_s')} s) |")
    if "b300_coverage" in res:
        c = res["b300_coverage"]
        lines.append(f"| B300 from its spec sheet | {c['predicted_finite_positive']:,} of "
                     f"{c['gemm_bf16_shapes'] + c['fused_moe_bf16_shapes']:,} bf16 gemm + fused_moe shapes predicted |")
    if "cli_single_predict_s" in res:
        lines.append(f"| single-launch `pipeweave predict` process | {res['cli_single_predict_s']['median']} s |")
    atomic_write_text(out / "results.md", "\n".join(lines) + "\n")
    print(f"wrote {path}")
    return 0

