"""Screen behind ``pipeweave.model.FAMILY_COMPANION``: a geometric blend of the hybrid and ``xgboost_crude``.

For one evaluation family, every (outer, inner) pair of held-out generations is scored as in ``run.py``
(4,000 seeded training rows per GPU, one inner test subsample of 10,000 rows per generation): the hybrid
(``PipeweaveRegressor(companion={})``, own rows, no SASS) and the crude baseline are fitted once per set of
left-out generations, and exp((1 - w) log(hybrid) + w log(crude)) is scored for each weight w of ``W``.
Prints the inner mean MAPE per outer fold and weight, the weight the inner folds choose and the outer MAPE;
the last line is the JSON record (``companion_blend_screen.jsonl`` holds the committed ones).

    python experiments/accuracy_log/blend_screen.py --cache FRAME.pkl --family gemm_bf16
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd

from pipeweave.baselines import XGBoostCrude
from pipeweave.evaluation import load_eval_frame
from pipeweave.frontend import warm_l2_envelope_us
from pipeweave.model import PipeweaveRegressor, cap_rows

W = (0.0, 0.2, 0.35, 0.5)
GENERATIONS = ("pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", required=True)
    ap.add_argument("--cache", default=None, help="pickle of load_eval_frame's frame")
    args = ap.parse_args()
    df = pd.read_pickle(args.cache) if args.cache else load_eval_frame(None, [args.family])[0]
    d = df[df["eval_family"] == args.family].reset_index(drop=True)
    if "t_env_warm_us" not in d:  # a frame featurized before the column existed
        d["t_env_warm_us"] = warm_l2_envelope_us(d)
    gen = d["generation"].astype(str).to_numpy()
    lat = d["latency_us"].to_numpy(float)
    gens = [g for g in GENERATIONS if (gen == g).any()]

    def fit_predict(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tr = cap_rows(d[train], 4000, by=("gpu",), seed=0)
        hybrid = PipeweaveRegressor(n_jobs=2, use_sass=False, companion={}).fit(tr).predict(d[test])
        crude = XGBoostCrude(n_jobs=2).fit(tr).predict(d[test])
        return np.asarray(hybrid, float), np.asarray(crude, float)

    def mape(p: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(np.abs(p / y - 1)) * 100)

    def blend(p: np.ndarray, c: np.ndarray, w: float) -> np.ndarray:
        return np.exp((1 - w) * np.log(p) + w * np.log(np.maximum(c, 1e-3)))

    rng = np.random.default_rng(0)
    tidx = {}
    for h in gens:
        ti = np.flatnonzero(gen == h)
        if len(ti) > 10000:
            ti = np.sort(rng.choice(ti, 10000, replace=False))
        tidx[h] = ti
    pair = {}
    for i, a in enumerate(gens):
        for b in gens[i + 1 :]:
            te = np.zeros(len(d), bool)
            te[tidx[a]] = te[tidx[b]] = True
            p, c = fit_predict((gen != a) & (gen != b), te)
            pos = np.flatnonzero(te)
            for h, outer in ((a, b), (b, a)):
                sel = np.isin(pos, tidx[h])
                pair[(outer, h)] = [mape(blend(p[sel], c[sel], w), lat[pos[sel]]) for w in W]
    out: dict = {"family": args.family, "W": W, "inner": {}, "outer": {}, "chosen": {}}
    for g in gens:
        inner = np.mean([pair[(g, h)] for h in gens if h != g], axis=0)
        out["inner"][g] = [round(float(x), 2) for x in inner]
        out["chosen"][g] = W[int(np.argmin(inner))]
        te = gen == g
        p, c = fit_predict(~te, te)
        out["outer"][g] = [round(mape(blend(p, c, w), lat[te]), 2) for w in W]
        print(g, "inner", out["inner"][g], "chosen", out["chosen"][g], "outer", out["outer"][g], flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
