"""Screen (session 16): the two-GPU backend rule on the ``xgboost_crude`` baseline, nested leave-one-GPU-out.

``XGBoostCrude(min_backend_gpus=k)`` for k = 1 (the baseline as it was) and 2 (the rule of the pipeweave
model, ``pipeweave.model.MIN_BACKEND_GPUS``), trained as the unseen-gpu protocol trains it (the family's own
rows, at most 4,000 seeded rows per GPU). Outer folds hold out one GPU; for each, ``inner`` is the mean MAPE of
the inner folds that hold out one more of its training GPUs (10,000 seeded test rows each). Decisions use
``inner``; ``outer`` is printed, not used.

    python experiments/accuracy_log/crude_backend_screen.py --cache aic.pkl
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from pipeweave.baselines import XGBoostCrude
from pipeweave.model import cap_rows


def screen(f: pd.DataFrame, k: int, rng_seed: int = 0) -> tuple[list[str], dict[str, float], dict[str, float]]:
    """(GPUs, outer MAPE per held-out GPU, mean inner MAPE per outer fold) of ``XGBoostCrude(min_backend_gpus=k)``."""
    gpu = f["gpu"].astype(str).to_numpy()
    lat = f["latency_us"].to_numpy(dtype=float)
    gpus = sorted(set(gpu))
    rng = np.random.default_rng(rng_seed)
    test = {}
    for g in gpus:
        ti = np.flatnonzero(gpu == g)
        test[g] = np.sort(rng.choice(ti, 10000, replace=False)) if len(ti) > 10000 else ti

    def fit_predict(out: set[str], rows: np.ndarray) -> np.ndarray:
        train = cap_rows(f[~np.isin(gpu, list(out))], 4000, by=("gpu",), seed=0)
        return XGBoostCrude(n_jobs=1, min_backend_gpus=k).fit(train).predict(f.iloc[rows])

    def mape(p: np.ndarray, rows: np.ndarray) -> float:
        return float(np.mean(np.abs(p / lat[rows] - 1.0)) * 100.0)

    outer = {}
    for g in gpus:
        rows = np.flatnonzero(gpu == g)
        outer[g] = mape(fit_predict({g}, rows), rows)
    pair = {}
    for i, a in enumerate(gpus):
        for b in gpus[i + 1 :]:
            p = fit_predict({a, b}, np.concatenate([test[a], test[b]]))
            pair[(b, a)] = mape(p[: len(test[a])], test[a])  # outer b, inner held-out a
            pair[(a, b)] = mape(p[len(test[a]) :], test[b])
    inner = {g: float(np.mean([pair[(g, h)] for h in gpus if h != g])) for g in gpus}
    return gpus, outer, inner


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", required=True, help="pickle of the featurized evaluation frame (run.py --cache)")
    ap.add_argument("--families", nargs="+", default=["attention_context", "attention_generation"])
    args = ap.parse_args()
    frame = pd.read_pickle(args.cache)
    for fam in args.families:
        f = frame[frame["eval_family"] == fam].reset_index(drop=True)
        for k in (1, 2):
            gpus, outer, inner = screen(f, k)
            print(
                f"{fam} min_backend_gpus={k}: outer {' / '.join(f'{outer[g]:.1f}' for g in gpus)}; inner "
                f"{' / '.join(f'{inner[g]:.1f}' for g in gpus)} (mean {np.mean(list(inner.values())):.2f}); "
                f"GPUs {', '.join(gpus)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
