"""Screen (issue 17, session 16): does what the model misses on one GPU's launch carry to the same launch on another?

Every bf16 GEMM shape of the data is measured on all seven GPUs, so a held-out GPU's launch has measured
twins on the training GPUs. The screened prediction is

    pred'(x) = pred(x) * exp(w * c(x)),   c(x) = mean over donor GPUs d of (r_d(x) - median r_d)

with r_d(x) = log(measured / predicted) of the same launch (``--key`` columns) on donor d, predicted by a
fit that left d's group out as well (so r_d is out of fold), and w chosen per outer fold by the inner folds.

    --group generation   LOGO: donors = the other training generations (needs fits leaving 1, 2, 3 out)
    --group gpu          leave-one-GPU-out: donors = the held-out GPU's same-generation training GPUs

Prints per outer fold the inner MAPE for each w, the chosen w and (not used to decide) the outer MAPE.
Each fit is ``run._fit_predict`` (the LOGO harness's pipeweave method, 4,000 rows per GPU; seen-GPU boosters
off: they never predict a held-out GPU). Needs the featurized frame pickle of ``run.py --cache``.

    python experiments/accuracy_log/residual_transfer_screen.py --cache aic.pkl --family gemm_bf16 --group gpu
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", required=True, help="pickle of the featurized evaluation frame (run.py --cache)")
    ap.add_argument("--family", default="gemm_bf16")
    ap.add_argument("--key", default="m,n,k,dtype", help="columns that identify the same launch on two GPUs")
    ap.add_argument("--group", choices=("generation", "gpu"), default="generation")
    args = ap.parse_args()
    frame = pd.read_pickle(args.cache)
    f = frame[frame["eval_family"] == args.family].reset_index(drop=True)
    grp = f[args.group].astype(str).to_numpy()
    groups = [g for g in run.GENERATIONS if g in set(grp)] if args.group == "generation" else sorted(set(grp))
    gen_of = f.groupby(grp)["generation"].first().astype(str).to_dict()
    lat = f["latency_us"].to_numpy(dtype=float)
    key = pd.util.hash_pandas_object(f[args.key.split(",")].astype(str), index=False).to_numpy()
    fits: dict[frozenset[str], np.ndarray] = {}

    def pred(out: set[str]) -> np.ndarray:
        """Predictions of the rows of the groups in ``out`` by a fit on the other groups (NaN elsewhere)."""
        k = frozenset(out)
        if k not in fits:
            te = np.isin(grp, list(k))
            p = np.full(len(f), np.nan)
            p[te] = run._fit_predict(f[~te], f[te], {"seen_gpu": {}}, 4000)
            fits[k] = p
        return fits[k]

    def correction(target: str, out: set[str]) -> np.ndarray | None:
        """c(x) on the rows of ``target`` from the donors outside ``out``; None without a donor."""
        donors = [d for d in groups if d != target and d not in out]
        if args.group == "gpu":
            donors = [d for d in donors if gen_of[d] == gen_of[target]]
        if not donors:
            return None
        tm = grp == target
        per_donor = []
        for d in donors:
            p, dm = pred(out | {target, d}), grp == d
            r = np.log(lat[dm] / p[dm])
            r -= pd.Series(r).groupby(f["gpu"].astype(str).to_numpy()[dm]).transform("median").to_numpy()
            per_donor.append(pd.Series(key[tm]).map(pd.Series(r).groupby(key[dm]).mean()).to_numpy())
        c = np.zeros(len(f))
        c[tm] = np.nan_to_num(np.nanmean(np.vstack(per_donor), axis=0))
        return c

    def mape(p: np.ndarray, m: np.ndarray) -> float:
        return float(np.mean(np.abs(p[m] / lat[m] - 1.0)) * 100.0)

    for g in groups:
        inner: dict[float, list[float]] = {w: [] for w in WEIGHTS}
        for h in groups:
            c = None if h == g else correction(h, {g})
            if c is None:
                continue
            p = pred({g, h})
            for w in WEIGHTS:
                inner[w].append(mape(p * np.exp(w * c), grp == h))
        means = {w: float(np.mean(v)) for w, v in inner.items() if v}
        chosen = min(means, key=means.__getitem__) if means else 0.0
        c = correction(g, set())
        p = pred({g})
        outer = {w: mape(p * np.exp(w * (0.0 if c is None else c)), grp == g) for w in WEIGHTS}
        print(
            f"{g}: inner {' / '.join(f'{means[w]:.2f}' for w in means) or '-'} (w {', '.join(map(str, means))}; "
            f"{len(inner[0.0])} inner folds with a donor), chosen w {chosen}; outer {outer[chosen]:.2f} "
            f"(w 0: {outer[0.0]:.2f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
