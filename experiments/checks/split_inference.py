"""What a blank ``split_k`` costs, and what inferring it buys: NeuSight's FP32 GEMM launches on the GPUs the shipped
model trained on, predicted three ways through ``pipeweave.predict_frame``.

* ``recorded``: the split the launch's grid records (a legacy cuBLAS SGEMM's grid z / batch; 1 when unsplit);
* ``none``: ``split_k = 1`` on every row (what a blank meant before ``pipeweave.frontend.infer_split_k``);
* ``blank``: ``split_k`` left blank, so ``pipeweave.predict`` fills it with the split of the smallest envelope
  (the product's default since session 37).

Only launches whose kernel records the split (the arch-prefixed legacy SGEMM names) are used. These GPUs are in
the model's training rows, so this is the in-distribution view of the choice; the inference rule (candidates
1-128, slices of >= 128 of k) was fixed before this comparison ran. A second table is the held-out view: per
generation, the recipe (``PipeweaveRegressor`` defaults) trained on NeuSight's four families on the other
generations (4,000 rows per family and GPU, as the leave-one-generation-out report caps them; seed 0) and scored
on the held-out generation's FP32 GEMM launches the same three ways ("recorded" is 1 where the kernel does not
record a split, as in training), and a fourth (session 38): ``shape only``, the launch as a user asks about a GPU
nobody ran it on, without the cuBLAS tile its kernel name records either (since session 39 the model predicts it
under every SIMT tile, each with its inferred split, and averages the 3 fastest: ``PipeweaveRegressor.library_tiles``;
the front-end's smallest-envelope tile before). The leave-one-generation-out report predicts the held-out rows with their
recorded tile and split; this column says how much its FP32 GEMM numbers lean on them. Writes
``split_inference.md`` (MAPE only; no measurement is copied).

    python experiments/checks/split_inference.py [--model models/pipeweave_default.ubj]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import pipeweave as pw
from pipeweave.frontend import infer_split_k
from pipeweave.vocab import TILE_COLUMNS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def scores(prof: pd.DataFrame, model: object) -> pd.DataFrame:
    """MAPE (%) per GPU and row kind (split / unsplit as recorded) for the three ways of giving the split."""
    rec = pd.to_numeric(prof["split_k"], errors="coerce").to_numpy(dtype=float)
    lat = prof["latency_us"].to_numpy(dtype=float)
    cols = {}
    for name, split in (("recorded", rec), ("none", np.ones(len(prof))), ("blank", np.full(len(prof), np.nan))):
        pred, why = pw.predict_frame(prof.assign(split_k=split), model)
        if (why != "").any():
            raise SystemExit(f"{int((why != '').sum())} rows not predicted: {why[why != ''].iloc[0]}")
        cols[name] = np.abs(pred.to_numpy(dtype=float) / lat - 1.0) * 100.0
    t = pd.DataFrame(cols)
    t["gpu"] = prof["gpu"].astype(str).to_numpy()
    t["rows"] = np.where(rec > 1, "split", "unsplit")
    every = pd.concat([t, t.assign(rows="all")])
    every = pd.concat([every, every.assign(gpu="every GPU")])
    table = every.groupby(["gpu", "rows"])[["recorded", "none", "blank"]].mean()
    table["n"] = every.groupby(["gpu", "rows"]).size()
    return table.reset_index()


def held_out(data: str | None) -> pd.DataFrame:
    """Leave-one-generation-out MAPE (%) of FP32 GEMM with the split recorded, 1 (none) or blank-and-inferred."""
    from pipeweave.evaluation import load_eval_frame, order_generations
    from pipeweave.sources import PROFILE_COLUMNS

    frame = load_eval_frame(data, ["gemm_fp32", "elementwise_fp32", "softmax_fp32", "layernorm_fp32"])[0]
    gemm = frame[frame["eval_family"] == "gemm_fp32"].reset_index(drop=True)
    cols = [c for c in PROFILE_COLUMNS if c in frame.columns and c != "latency_us"]
    rows = []
    for gen in order_generations(gemm["generation"].astype(str)):
        train = frame[frame["generation"].astype(str) != gen].sample(frac=1.0, random_state=0)
        train = train.groupby(["eval_family", "gpu"], observed=True).head(4000)
        model = pw.PipeweaveRegressor(n_jobs=2, progress=False).fit(train)
        test = gemm[gemm["generation"].astype(str) == gen].reset_index(drop=True)
        rec = pd.to_numeric(test["split_k"], errors="coerce").to_numpy(dtype=float)
        launches, lat = test[cols], test["latency_us"].to_numpy(dtype=float)
        row: dict = {"generation": gen, "n": len(test), "n_split": int((rec > 1).sum())}
        inferred = infer_split_k(launches.assign(split_k=np.nan))
        bare = launches.assign(**{c: np.nan for c in TILE_COLUMNS if c in launches.columns})  # no recorded tile
        ways = (("recorded", launches, rec), ("none", launches, np.ones(len(test))), ("blank", launches, inferred))
        # shape only: tile and split blank, as pipeweave.predict passes them (the model tries every SIMT tile, each
        # with its inferred split: PipeweaveRegressor.library_tiles)
        for name, rows_in, split in (*ways, ("shape", bare, np.full(len(test), np.nan))):
            pred = np.asarray(model.predict(rows_in.assign(split_k=split)), dtype=float)
            ape = np.abs(pred / lat - 1.0) * 100.0
            row[f"{name}_all"] = ape.mean()
            row[f"{name}_split"] = ape[rec > 1].mean() if (rec > 1).any() else np.nan
        rows.append(row)
        print(f"held out {gen}: done", flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "pipeweave_default.ubj"))
    ap.add_argument("--data", default=None, help="data directory (default: PIPEWEAVE_DATA or ../shared/datasets)")
    ap.add_argument("--out", default=str(HERE / "split_inference.md"))
    args = ap.parse_args()
    prof = pw.load_profiles(args.data, families="gemm_fp32")
    prof = prof[np.isfinite(pd.to_numeric(prof["split_k"], errors="coerce"))].reset_index(drop=True)
    model = pw.load_model(args.model)
    table = scores(prof, model)
    split_rows = prof[pd.to_numeric(prof["split_k"], errors="coerce") > 1]
    inferred = infer_split_k(split_rows.assign(split_k=np.nan))
    agree = float(np.mean(inferred == pd.to_numeric(split_rows["split_k"]).to_numpy(dtype=float)) * 100.0)
    ratio = np.median(inferred / pd.to_numeric(split_rows["split_k"]).to_numpy(dtype=float))
    lines = [
        "# FP32 GEMM: a blank split_k, recorded, none, or inferred",
        "",
        f"Written by `python experiments/checks/split_inference.py` with "
        f"`{Path(args.model).name}`. MAPE (%) of the shipped model on NeuSight's FP32 GEMM launches whose kernel "
        "records the split (GPUs the model trained on: in distribution, not a held-out score), with `split_k` "
        "as recorded, 1 everywhere (`none`), or blank (`blank`: `pipeweave.predict` fills the split of the "
        "smallest envelope, `pipeweave.frontend.infer_split_k`). `rows`: the launches cuBLAS split (`split`), the "
        "others (`unsplit`), both (`all`).",
        "",
        f"On the {len(split_rows):,} split launches the inferred split equals the recorded one on {agree:.0f}% "
        f"(median inferred / recorded {ratio:.2f}).",
        "",
        "| gpu | rows | n | recorded | none | blank (inferred) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in table.itertuples(index=False):
        lines.append(f"| {r.gpu} | {r.rows} | {r.n:,} | {r.recorded:.1f} | {r.none:.1f} | {r.blank:.1f} |")
    ho = held_out(args.data)
    lines += [
        "",
        "Held out (each generation predicted by the recipe trained on the others; all its FP32 GEMM launches, and "
        "the ones cuBLAS split). `shape only`: neither the recorded tile nor the recorded split (the model's 3 fastest "
        "SIMT tiles, each with its inferred split, as `pipeweave.predict` does with both blank), what a user knows "
        "of a launch on a GPU nobody ran it on:",
        "",
        "| generation | n | n split | recorded | none | blank (inferred) | shape only | split: recorded | none | blank "
        "| shape only |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in ho.itertuples(index=False):
        lines.append(
            f"| {r.generation} | {r.n:,} | {r.n_split:,} | {r.recorded_all:.1f} | {r.none_all:.1f} | "
            f"{r.blank_all:.1f} | {r.shape_all:.1f} | {r.recorded_split:.1f} | {r.none_split:.1f} | "
            f"{r.blank_split:.1f} | {r.shape_split:.1f} |"
        )
    means = ho[["recorded_all", "none_all", "blank_all", "shape_all"]].mean()
    lines.append(
        f"| mean of generations | | | {means.recorded_all:.1f} | {means.none_all:.1f} | {means.blank_all:.1f} | "
        f"{means.shape_all:.1f} | | | | |"
    )
    out = Path(args.out)
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(tmp, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
