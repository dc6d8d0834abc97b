"""Screen (issue 17, session 18): a generation-jackknife ensemble on the crude view.

The crude booster (``pipeweave.frontend.crude_matrix``, log(latency / wave-quantized roofline), depth 6, 400
trees, 4,000 rows per GPU) as is (``base``), as the mean log-ratio of the models that each leave one training
generation out (``jack``), and as the 50/50 mean of ``jack`` and ``base`` (``jack+full``). Prints, per held-out
generation, the nested inner MAPE (the decision) and the outer MAPE (reported only). Result:
experiments/accuracy_log/results.md, "Generation-jackknife ensemble".

    python experiments/accuracy_log/jackknife_screen.py gemm_bf16
"""

import sys

import numpy as np
import xgboost as xgb

from pipeweave.evaluation._suite import labels_to_load, load_eval_frame
from pipeweave.frontend import crude_matrix
from pipeweave.model import cap_rows

label = sys.argv[1]
frame, _d, _fp = load_eval_frame(None, labels_to_load([label]))
df = frame[frame["eval_family"] == label].reset_index(drop=True)
X0, t_wq = crude_matrix(df)
lat = df["latency_us"].to_numpy(float)
y = np.log(lat / t_wq)
gen = df["generation"].astype(str).to_numpy()
capped = {}


def fit(train_gens):
    key = tuple(sorted(train_gens))
    if key not in capped:
        tr = np.flatnonzero(np.isin(gen, list(train_gens)))
        tr = cap_rows(df.iloc[tr].assign(_pos=tr), 4000, by=("gpu",), seed=0)["_pos"].to_numpy()
        m = xgb.XGBRegressor(max_depth=6, n_estimators=400, learning_rate=0.05, n_jobs=1, random_state=0)
        capped[key] = m.fit(X0[tr], y[tr])
    return capped[key]


def score(train_gens, test_gen, mode):
    te = np.flatnonzero(gen == test_gen)
    if mode == "base":
        logr = fit(train_gens).predict(X0[te])
    else:
        subs = [[g for g in train_gens if g != h] for h in train_gens] if len(train_gens) > 1 else [train_gens]
        preds = [fit(s).predict(X0[te]) for s in subs]
        logr = np.mean(preds, 0)
        if mode == "jack+full":
            logr = 0.5 * logr + 0.5 * fit(train_gens).predict(X0[te])
    pred = t_wq[te] * np.exp(logr)
    return np.mean(np.abs(pred - lat[te]) / lat[te]) * 100


gens = sorted(set(gen))
for H in gens:
    T = [g for g in gens if g != H]
    line = []
    for mode in ("base", "jack", "jack+full"):
        inner = np.mean([score([g for g in T if g != t], t, mode) for t in T])
        outer = score(T, H, mode)
        line.append(f"{mode} inner {inner:.2f} outer {outer:.1f}")
    print(f"{label} held-out {H}: " + " | ".join(line), flush=True)
