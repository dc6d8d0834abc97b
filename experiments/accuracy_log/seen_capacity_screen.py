"""Screen (issue 17's unseen-shape goal, session 18): the capacity of the seen-GPU booster. Not landed.

As ``seen_gpu_screen.py``: the unseen-shape protocol's training rows are split again by shape (20%, seed 1) and
the shipped recipe (seen-GPU booster at weight 1) is fitted on the rest with ``SEEN_GPU_PARAMS`` varied; each
variant is scored on the inner held-out shapes (the protocol's held-out shapes are not used). Prints the inner
MAPE (%), overall and per GPU. Result: experiments/accuracy_log/results.md, "Seen-GPU booster capacity".

    python experiments/accuracy_log/seen_capacity_screen.py gemm_bf16
"""

import sys
import time

import numpy as np
import pandas as pd

import pipeweave.model._regressor as R
from pipeweave.evaluation import EVAL_FAMILIES, load_eval_frame
from pipeweave.evaluation._protocols import iter_folds
from pipeweave.model import PipeweaveRegressor

label = sys.argv[1]
variants = {
    "base_d8_400_lr01": {},
    "d10_400": {"max_depth": 10},
    "d8_800": {"n_estimators": 800},
    "d10_800_lr005": {"max_depth": 10, "n_estimators": 800, "learning_rate": 0.05},
    "mcw1": {"min_child_weight": 1.0},
}
family = EVAL_FAMILIES[label][0]
frame, _d, _ = load_eval_frame(None, [label])
d = frame[frame["eval_family"] == label].reset_index(drop=True)
((_, tr, te),) = list(iter_folds(d, "unseen-shape"))
train = d.iloc[tr].reset_index(drop=True)
((_, itr, ite),) = list(iter_folds(train, "unseen-shape", seed=1))
inner_test = train.iloc[ite].reset_index(drop=True)
lat = inner_test["latency_us"].to_numpy(float)
base = dict(R.SEEN_GPU_PARAMS)
for name, over in variants.items():
    R.SEEN_GPU_PARAMS.clear()
    R.SEEN_GPU_PARAMS.update({**base, **over})
    t0 = time.time()
    m = PipeweaveRegressor(seen_gpu={family: 1.0}, n_jobs=2).fit(train.iloc[itr])
    p = m.predict(inner_test)
    ape = np.abs(p / lat - 1) * 100
    per = pd.Series(ape).groupby(inner_test["gpu"].astype(str).to_numpy()).mean().round(2).to_dict()
    print(f"{label} {name}: inner MAPE {ape.mean():.2f}  ({time.time() - t0:.0f} s) {per}", flush=True)
R.SEEN_GPU_PARAMS.clear()
R.SEEN_GPU_PARAMS.update(base)
