"""Screen (issue 17, session 18): the same launch's measured efficiency on other generations' GPUs as a feature.

The crude booster (``pipeweave.frontend.crude_matrix``, target log(latency / wave-quantized roofline), depth 6,
400 trees, 4,000 rows per GPU) with and without three "twin" columns: the mean, the range (min - max) and the
count of log(measured / roofline) of the same launch (dtype, backend and shape columns) on the GPUs of the
training generations other than the row's own (a training row never sees its own generation's twins, as the
held-out generation cannot). Prints, per held-out generation, the nested inner MAPE (the decision) and the
outer MAPE (reported only). Result: experiments/accuracy_log/results.md, "The twins' efficiency as a feature".

    python experiments/accuracy_log/twin_feature_screen.py gemm_bf16
"""

import sys
import warnings

import numpy as np
import pandas as pd
import xgboost as xgb

from pipeweave.evaluation._protocols import SHAPE_COLUMNS
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
gpu = df["gpu"].astype(str).to_numpy()
keycols = [c for c in ["dtype", "backend", *SHAPE_COLUMNS] if c in df.columns]
key = pd.util.hash_pandas_object(df[keycols].astype(str), index=False).to_numpy()
kcode, kuniq = pd.factorize(key)
gcode, guniq = pd.factorize(gpu)
# per (shape, gpu): mean y (a shape may be measured more than once on a GPU)
piv = np.full((len(kuniq), len(guniq)), np.nan)
s = pd.DataFrame({"k": kcode, "g": gcode, "y": y}).groupby(["k", "g"])["y"].mean()
piv[s.index.get_level_values(0), s.index.get_level_values(1)] = s.to_numpy()
gpu_gen = {g: gen[gpu == g][0] for g in guniq}
print(
    label,
    len(df),
    "rows",
    len(kuniq),
    "shapes; shapes per gpu measured:",
    {g: int(np.isfinite(piv[:, i]).sum()) for i, g in enumerate(guniq)},
    flush=True,
)


def anchor_cols(rows, avail_gens):
    """anchor features of rows: mean / min / max / count of y of the same shape on GPUs of avail_gens
    other than the row's own generation"""
    out = np.full((len(rows), 3), np.nan)
    for g in np.unique(gen[rows]):
        cols = [i for i, G in enumerate(guniq) if gpu_gen[G] in avail_gens and gpu_gen[G] != g]
        r = rows[gen[rows] == g]
        if not cols:
            continue
        sub = piv[kcode[r]][:, cols]
        with np.errstate(all="ignore"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[gen[rows] == g, 0] = np.nanmean(sub, 1)
                out[gen[rows] == g, 1] = np.nanmin(sub, 1) - np.nanmax(sub, 1)
                out[gen[rows] == g, 2] = np.isfinite(sub).sum(1)
    return out


def fit_predict(train_gens, test_gen, with_anchor):
    tr = np.flatnonzero(np.isin(gen, list(train_gens)))
    tr = cap_rows(df.iloc[tr].assign(_pos=tr), 4000, by=("gpu",), seed=0)["_pos"].to_numpy()
    te = np.flatnonzero(gen == test_gen)
    Xtr, Xte = X0[tr], X0[te]
    if with_anchor:
        Xtr = np.column_stack([Xtr, anchor_cols(tr, set(train_gens))])
        Xte = np.column_stack([Xte, anchor_cols(te, set(train_gens))])
    m = xgb.XGBRegressor(max_depth=6, n_estimators=400, learning_rate=0.05, n_jobs=1, random_state=0)
    m.fit(Xtr, y[tr])
    pred = t_wq[te] * np.exp(m.predict(Xte))
    return np.mean(np.abs(pred - lat[te]) / lat[te]) * 100, (np.isfinite(Xte[:, -3]).mean() if with_anchor else 1)


gens = sorted(set(gen))
for H in gens:
    T = [g for g in gens if g != H]
    res = {}
    for wa in (False, True):
        inner = [fit_predict([g for g in T if g != t], t, wa)[0] for t in T]
        outer, cov = fit_predict(T, H, wa)
        res[wa] = (np.mean(inner), outer, cov)
    print(
        f"{label} held-out {H}: inner {res[False][0]:.2f} -> {res[True][0]:.2f} | outer {res[False][1]:.1f} -> {res[True][1]:.1f} (anchor coverage {res[True][2]:.2f})",
        flush=True,
    )
