"""Screening frame: NeuSight's FP32 GEMM launches with the split-K that their recorded grids show.

NeuSight records each launch's grid. A legacy cuBLAS SGEMM (``volta_sgemm_128x64_tn`` ...) splits the reduction
over ``gridDim.z``: where grid z exceeds the batch (``B``), each output tile is computed by z / B CTAs, each over
k / split of the reduction, and the fp32 partials are summed afterwards. A third of the ``linear``
launches do (K up to 65,536 with few output tiles); the front-end models every FP32 GEMM as one CTA per output
tile (``split_k`` 1), so their envelope, waves and k-loop are those of a launch cuBLAS did not run.

This script rebuilds a cached evaluation frame of NeuSight's four families made before the loader read the split
(session 35's, /tmp/neusight4_fixed.pkl) with the recorded split on every FP32 GEMM row whose legacy-SGEMM grid
has z > B: ``split_k`` = z / B (``pipeweave.sources.recorded_split_k``) goes through the front-end's FP32 GEMM
builder, and the row's features are recomputed; ``run.py --cache`` then scores the recipe on the frame it writes.
Since session 37 the product's loader reads the split itself (``datasets/sources/neusight.toml``), so
``load_eval_frame`` gives this frame directly; the script stays to reproduce the screen that decided it.

    python experiments/accuracy_log/splitk_screen.py --cache /tmp/neusight4_fixed.pkl --out /tmp/neusight4_splitk.pkl
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import pipeweave as pw
from pipeweave.evaluation import load_eval_frame
from pipeweave.frontend import featurize

NEUSIGHT_FAMILIES = ["gemm_fp32", "elementwise_fp32", "softmax_fp32", "layernorm_fp32"]


def recorded_split(data: str | None) -> pd.DataFrame:
    """One row per (gpu, op, m, n, k) of NeuSight's FP32 GEMM launches: the split the product loader reads off the
    grid (``pipeweave.sources.recorded_split_k``; 1 where the kernel records none), canonical shape."""
    prof = pw.load_profiles(data, sources="neusight", families="gemm_fp32")
    rec = prof[["gpu", "op", "m", "n", "k"]].astype({"gpu": str, "op": str})
    rec = rec.astype({c: float for c in ("m", "n", "k")})
    rec["split_rec"] = pd.to_numeric(prof["split_k"], errors="coerce").fillna(1.0).to_numpy()
    return rec.groupby(["gpu", "op", "m", "n", "k"], as_index=False)["split_rec"].median()


def cached_frame(cache: str | None) -> pd.DataFrame:
    """The featurized evaluation frame of NeuSight's four families: the pickle ``cache`` when it exists, else
    loaded (``load_eval_frame``)."""
    if cache and Path(cache).exists():
        return pd.read_pickle(cache)
    return load_eval_frame(None, NEUSIGHT_FAMILIES)[0]


def refeaturized(frame: pd.DataFrame, launches: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A copy of ``frame`` whose ``launches.index`` rows carry the front-end features of ``launches`` (the same rows,
    some launch column changed), and the names of the columns recomputed."""
    feats = featurize(launches)
    common = [c for c in feats.columns if c in frame.columns]
    out = frame.copy()
    for c in common:
        cat = isinstance(out[c].dtype, pd.CategoricalDtype)
        if cat:
            out[c] = out[c].astype(object)
        out.loc[launches.index, c] = np.asarray(feats[c].astype(object) if cat else feats[c])
        if cat:
            out[c] = out[c].astype("category")
    return out, common


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=None, help="pickle of load_eval_frame's frame of NeuSight's four families")
    ap.add_argument("--data", default=None, help="data directory (default: PIPEWEAVE_DATA or ../shared/datasets)")
    ap.add_argument("--out", required=True, help="pickle to write (the screening frame)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    frame = cached_frame(args.cache)
    rec = recorded_split(args.data)
    g = (frame["family"].astype(str) == "gemm_fp32").to_numpy()
    sub = frame.loc[g, ["gpu", "op", "m", "n", "k"]].copy()
    for c in ("gpu", "op"):
        sub[c] = sub[c].astype(str)
    for c in ("m", "n", "k"):
        sub[c] = pd.to_numeric(sub[c], errors="coerce").astype(float)
    split = sub.merge(rec, on=["gpu", "op", "m", "n", "k"], how="left")["split_rec"].to_numpy()
    print(f"FP32 GEMM rows: {int(g.sum())}, matched {np.isfinite(split).mean():.1%}, split > 1: {(split > 1).sum()}")
    rows = frame.index[g][split > 1]
    launches = frame.loc[rows].copy()
    launches["split_k"] = split[split > 1]
    out, common = refeaturized(frame, launches)
    before = np.log(frame.loc[rows, "latency_us"] / frame.loc[rows, "t_env_us"])
    after = np.log(out.loc[rows, "latency_us"] / out.loc[rows, "t_env_us"].astype(float))
    by_gpu = pd.DataFrame({"before": before, "after": after, "gpu": frame.loc[rows, "gpu"].astype(str)})
    print("median measured / envelope of the split rows, before -> after:")
    print(np.exp(by_gpu.groupby("gpu")[["before", "after"]].median()).round(2).to_string())
    out.to_pickle(args.out)
    print(
        f"wrote {args.out} ({len(common)} feature columns recomputed on {len(rows)} rows) in {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
