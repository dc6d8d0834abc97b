"""Screen (issue 17's unseen-shape goal, session 18): the seen-GPU booster boosted from the hybrid's prediction.

Same inner split as ``seen_gpu_screen.py`` / ``seen_capacity_screen.py``. The hybrid (seen-GPU boosters off) is
fitted on the inner training shapes; a booster with the shipped seen-GPU settings on the model's features plus a
GPU one-hot is trained from scratch (the shipped form; it reproduces the shipped inner MAPE) and from the hybrid's
prediction as XGBoost ``base_margin`` (it learns the hybrid's residual). Prints the inner MAPE (%). Not landed.

    python experiments/accuracy_log/seen_margin_screen.py gemm_bf16
"""

import sys
import time

import numpy as np
import pandas as pd
import xgboost as xgb

from pipeweave.evaluation import EVAL_FAMILIES, load_eval_frame
from pipeweave.evaluation._protocols import iter_folds
from pipeweave.model import SEEN_GPU_PARAMS, PipeweaveRegressor

label = sys.argv[1]
family = EVAL_FAMILIES[label][0]
frame, _d, _ = load_eval_frame(None, [label])
d = frame[frame["eval_family"] == label].reset_index(drop=True)
((_, tr, te),) = list(iter_folds(d, "unseen-shape"))
train = d.iloc[tr].reset_index(drop=True)
((_, itr, ite),) = list(iter_folds(train, "unseen-shape", seed=1))
itrain, itest = train.iloc[itr].reset_index(drop=True), train.iloc[ite].reset_index(drop=True)
t0 = time.time()
hyb = PipeweaveRegressor(seen_gpu={}, n_jobs=2).fit(itrain)
print("hybrid fit", round(time.time() - t0), "s", flush=True)
gpus = sorted(set(itrain["gpu"].astype(str)))


def mats(rows):
    prep = hyb._prepare(rows)
    X = hyb.feature_matrix(prep, hyb.feature_names_)
    oh = np.column_stack([(prep["gpu"].astype(str).to_numpy() == g).astype(float) for g in gpus])
    ref = hyb._reference_us(prep)
    p_h = hyb.predict(rows)
    return np.column_stack([X, oh]), ref, p_h


Xtr, rtr, ph_tr = mats(itrain)
Xte, rte, ph_te = mats(itest)
ytr = np.log(itrain["latency_us"].to_numpy(float) / rtr)
lat = itest["latency_us"].to_numpy(float)
params = {k: v for k, v in SEEN_GPU_PARAMS.items() if k != "n_estimators"} | {
    "objective": "reg:squarederror",
    "nthread": 2,
    "seed": 0,
    "tree_method": "hist",
}


def run(margin, rounds=SEEN_GPU_PARAMS["n_estimators"], extra=None):
    p = params | (extra or {})
    dtr = xgb.DMatrix(Xtr, label=ytr, base_margin=np.log(ph_tr / rtr) if margin else None)
    b = xgb.train(p, dtr, rounds)
    dte = xgb.DMatrix(Xte, base_margin=np.log(ph_te / rte) if margin else None)
    pred = rte * np.exp(b.predict(dte))
    ape = np.abs(pred / lat - 1) * 100
    return ape.mean(), pd.Series(ape).groupby(itest["gpu"].astype(str).to_numpy()).mean().round(2).to_dict()


print(label, "hybrid alone", round(float(np.mean(np.abs(ph_te / lat - 1)) * 100), 2), flush=True)
for name, kw in [
    ("from scratch (shipped form)", dict(margin=False)),
    ("from the hybrid (base_margin)", dict(margin=True)),
    ("from the hybrid, lr 0.05", dict(margin=True, extra={"learning_rate": 0.05})),
]:
    m, per = run(**kw)
    print(f"{label} {name}: inner MAPE {m:.2f} {per}", flush=True)
