"""Screen (session 18): would one band per regime carry better than one band per family? Not landed.

Regimes known at predict time: ``small`` (predicted < 10 us), else ``compute`` / ``memory`` by the front-end's
``log2_ai_over_ridge``. On each leave-one-generation-out fold the zero-shot model (the few-shot protocol's) predicts
the held-out generation; the 80% band of the held-out generation is built from the other generations' ratios only
(each generation weighing the same), once per family and once per regime (a regime with < 100 rows takes the family
band). Prints the share (%) of each held-out GPU's launches inside each band and the mean |share - 80|.

    python experiments/error_bands/regime_screen.py gemm_bf16      # also fused_moe_bf16, attention_generation
"""

import sys

import numpy as np
import pandas as pd

from pipeweave.evaluation._few_shot import _BaseModels, _cache_path, _GPUCase, _zero_shot_estimator
from pipeweave.evaluation._plots import order_generations
from pipeweave.evaluation._suite import labels_to_load, load_eval_frame
from pipeweave.model import weighted_quantiles

label = sys.argv[1]
frame, _d, _ = load_eval_frame(None, labels_to_load([label]))
sub = frame[frame["eval_family"] == label].reset_index(drop=True)
has_sass = any(c.startswith("sass_") for c in frame.columns)
est = _zero_shot_estimator(label, frame, has_sass, 4000, 200)
models = _BaseModels(sub, est, None, _cache_path(None, sub, label, 4000, 200, est))
gens = order_generations(sub["generation"].astype(str))
recs = []
for g in gens:
    for gpu in sorted(set(sub.loc[sub["generation"] == g, "gpu"].astype(str))):
        case = _GPUCase(sub[sub["gpu"].astype(str) == gpu], (), 0)
        pred = models.predict(frozenset({g}), case, gpu)
        ai = (
            case.rows["log2_ai_over_ridge"].to_numpy(float)
            if "log2_ai_over_ridge" in case.rows
            else np.zeros(len(pred))
        )
        reg = np.where(pred < 10, "small", np.where(np.nan_to_num(ai) >= 0, "compute", "memory"))
        recs.append(pd.DataFrame({"gen": g, "gpu": gpu, "r": np.log(case.lat / pred), "regime": reg}))
d = pd.concat(recs, ignore_index=True)
print(label, d.groupby(["gpu", "regime"]).size().unstack(fill_value=0).to_string())


def band(rows):
    n = rows.groupby("gen")["r"].transform("size")
    return np.exp(weighted_quantiles(rows["r"].to_numpy(), 1.0 / n.to_numpy(), [0.1, 0.9]))


out = []
for g in gens:
    tr, te = d[d.gen != g], d[d.gen == g]
    lo, hi = band(tr)
    regb = {r: band(tr[tr.regime == r]) for r in tr.regime.unique() if (tr.regime == r).sum() >= 100}
    for gpu, e in te.groupby("gpu"):
        x = np.exp(e["r"].to_numpy())
        fam_in = np.mean((x >= lo) & (x <= hi)) * 100
        rl = np.array([regb.get(r, (lo, hi))[0] for r in e["regime"]])
        rh = np.array([regb.get(r, (lo, hi))[1] for r in e["regime"]])
        reg_in = np.mean((x >= rl) & (x <= rh)) * 100
        out.append(
            (
                g,
                gpu,
                round(fam_in),
                round(reg_in),
                round(float(np.median(np.log(hi / lo))), 2),
                round(float(np.median(np.log(rh / rl))), 2),
            )
        )
res = pd.DataFrame(out, columns=["gen", "gpu", "family_band_in", "regime_band_in", "fam_width", "reg_width"])
print(res.to_string())
print(
    "mean |cov-80|:", (res.family_band_in - 80).abs().mean().round(1), (res.regime_band_in - 80).abs().mean().round(1)
)
print({r: np.round(b, 2) for r, b in regb.items()})
