"""Screening frame: NeuSight's FP32 GEMM launches with the split-K that their recorded grids show.

NeuSight records each launch's grid. A legacy cuBLAS SGEMM (``volta_sgemm_128x64_tn`` ...) splits the reduction
over ``gridDim.z``: where grid z exceeds the batch (``B``), each output tile is computed by z / B CTAs, each over
k / split of the reduction, and the fp32 partials are summed afterwards. A third of the ``linear``
launches do (K up to 65,536 with few output tiles); the front-end models every FP32 GEMM as one CTA per output
tile (``split_k`` 1), so their envelope, waves and k-loop are those of a launch cuBLAS did not run.

This script rebuilds the cached evaluation frame of NeuSight's four families with the recorded split on every
FP32 GEMM row whose legacy-SGEMM grid has z > B: ``split_k`` = z / B is passed to the front-end's tiled matmul
(``pipeweave.frontend`` already models split-K for the tensor-core GEMM: k per slice, CTAs x split, fp32 partials
written and read), and the row's features are recomputed. The product's loader and front-end are untouched (the
builder is patched in this process only); ``run.py --cache`` then scores the recipe on the frame it writes.

    python experiments/accuracy_log/splitk_screen.py --cache /tmp/neusight4_fixed.pkl --out /tmp/neusight4_splitk.pkl
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd

import pipeweave as pw
from pipeweave.evaluation import load_eval_frame
from pipeweave.frontend import featurize

NEUSIGHT_FAMILIES = ["gemm_fp32", "elementwise_fp32", "softmax_fp32", "layernorm_fp32"]


def recorded_split(data: Path) -> pd.DataFrame:
    """One row per (gpu, op, m, n, k) of NeuSight's bmm / linear files: the recorded split (grid z / B) of the
    launch, for legacy-SGEMM kernels (1 elsewhere); canonical shape (m = M, n = K, k = N, as the manifest)."""
    parts = []
    for op in ("bmm", "linear"):
        files = sorted((data / "neusight/dataset/train/collect" / op / "p2.1.0").glob("*.csv.gz"))
        files.append(data / "neusight/dataset/test" / f"{op}.csv.gz")
        raw = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
        # the column-major legacy names (maxwell_ / volta_ / turing_ / ampere_sgemm_AxB_*), whose grid x * y is one
        # CTA per output tile (experiments/checks/neusight_grids.md); P4's sgemm_128x128x8_NT_vec tiles M over z
        legacy = raw["Kernel Name"].astype(str).str.contains(r"^(?:maxwell|volta|turing|ampere)_sgemm_", regex=True)
        split = np.where(legacy, raw["Grid z"].to_numpy(dtype=float) / raw["B"].to_numpy(dtype=float), 1.0)
        names = {d: pw.get_gpu(d).name for d in raw["Device"].unique()}
        parts.append(
            pd.DataFrame(
                {
                    "gpu": raw["Device"].map(names),
                    "op": op,
                    "m": raw["M"].astype(float),
                    "n": raw["K"].astype(float),
                    "k": raw["N"].astype(float),
                    "split_rec": np.maximum(np.round(split), 1.0),
                }
            )
        )
    rec = pd.concat(parts, ignore_index=True)
    key = ["gpu", "op", "m", "n", "k"]
    spread = rec.groupby(key)["split_rec"].nunique()
    print(f"recorded split: {int((spread > 1).sum())} of {len(spread)} launches timed twice disagree (median kept)")
    return rec.groupby(key, as_index=False)["split_rec"].median()


def _patched_build(plain):  # noqa: ANN001, ANN202
    """The FP32 GEMM builder with ``_split_k`` rows split: same tiles, ``simt_gemm(split_k=...)``."""
    from pipeweave.frontend import _fp32ops as f32

    def build(df, spec, ctx):  # noqa: ANN001, ANN202
        kds, tiles = plain(df, spec, ctx)
        if "_split_k" not in df.columns:
            return kds, tiles
        split = np.nan_to_num(pd.to_numeric(df["_split_k"], errors="coerce").to_numpy(dtype=float), nan=1.0)
        batch = np.maximum(np.nan_to_num(pd.to_numeric(df["batch_size"], errors="coerce").to_numpy(float), nan=1.0), 1)
        m, n, k = (pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) for c in ("m", "n", "k"))
        bm, bn, bk = (tiles[c].to_numpy(dtype=float) for c in ("block_m", "block_n", "block_k"))
        warps, stages = tiles["num_warps"].to_numpy(dtype=float), tiles["num_stages"].to_numpy(dtype=float)
        kd = f32.simt_gemm(
            "gemm_fp32",
            batch=batch,
            m=m,
            n=n,
            k=k,
            bm=bm,
            bn=bn,
            bk=bk,
            warps=warps,
            stages=stages,
            spec=spec,
            split_k=split,
        )
        return [kd], tiles

    return build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=None, help="pickle of load_eval_frame's frame of NeuSight's four families")
    ap.add_argument("--data", default="../shared/datasets")
    ap.add_argument("--out", required=True, help="pickle to write (the screening frame)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.cache and Path(args.cache).exists():
        frame = pd.read_pickle(args.cache)
    else:
        frame = load_eval_frame(None, NEUSIGHT_FAMILIES)[0]
    rec = recorded_split(Path(args.data))
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
    launches["_split_k"] = split[split > 1]
    from pipeweave.frontend import _families as fam

    plain = fam.FAMILIES["gemm_fp32"]
    fam.FAMILIES["gemm_fp32"] = dataclasses.replace(plain, build=_patched_build(plain.build))
    try:
        feats = featurize(launches)
    finally:
        fam.FAMILIES["gemm_fp32"] = plain
    common = [c for c in feats.columns if c in frame.columns]
    out = frame.copy()
    for c in common:
        cat = isinstance(out[c].dtype, pd.CategoricalDtype)
        if cat:
            out[c] = out[c].astype(object)
        out.loc[rows, c] = np.asarray(feats[c].astype(object) if cat else feats[c])
        if cat:
            out[c] = out[c].astype("category")
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
