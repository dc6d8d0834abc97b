"""Check: the kernel cuBLAS ran for an FP32 GEMM launch, read off the nearest measured launches of the same GPU.

Two tables, written to ``library_tiles.md`` beside this script (data only; the choices they record are in
``pipeweave/model/_recipe.py``, ``LIBRARY_TILE_NEIGHBORS`` and ``LIBRARY_TILE_TABLE_ROWS``):

1. **The choice, inside training rows.** The unseen-shape protocol's training rows (its 80 / 20 shape split, seed 0)
   are split again by shape (seed 1); each GPU's launches of the inner 80% vote, by their ``k`` nearest launches
   over log2 m, n, k, batch and the operand layout (optionally also the alignment of m, n and k to 4, what cuBLAS's
   vectorized kernels need), for the kernel (tile and split-K) of each held-back launch; the share voted the
   recorded kernel, per GPU and averaged. Nothing of the protocol's test shapes is read.
2. **The shipped model on its own training GPUs' launches.** Up to 3,000 launches per GPU, each predicted with the
   kernel it recorded, without it by the model's nearest-launch vote (``PipeweaveRegressor.library_tiles``), and
   without it by the fastest SIMT tiles (the same model with its tables set aside): MAPE (%) per GPU, operator and
   length (measured over 10 ms or not). These launches trained the model, so this is a fit check of the kernel
   choice, not a held-out score (held out: ``experiments/neusight_split/unseen_shape``, ``experiments/unseen_gpu``).
3. **The split: voted with the tile, or inferred for it.** On the split of table 1, a model of the LOGO suite's
   ``pipeweave`` method (4,000 rows per GPU) trained on the inner 80% predicts the held-back launches without their
   kernel: with the voted tile and split (what ``library_tiles`` does), with the voted tile and the split
   ``infer_split_k`` finds for it, and with the recorded kernel; MAPE (%) per GPU.
4. **Another compute capability's tiles, one architecture** (session 41, ``LIBRARY_TILE_BORROW``; data only). Each
   GPU's launches are asked without their kernel and given the tile (block m, n, k and warps) voted by the launches
   of the measured GPUs of its major compute capability but not its own (the T4 the V100's, the A100s the L4's ...;
   every launch, at most ``LIBRARY_TILE_TABLE_ROWS`` per GPU, 5 neighbours): the share given their recorded tile,
   beside the share the front-end's smallest-envelope tile gets right. How far cuBLAS's choices carry across an
   architecture; the decision itself was made on the leave-one-generation-out inner folds
   (``experiments/accuracy_log``).

    python experiments/checks/library_tiles.py            # ~1 min on 2 cores
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.neighbors import KNeighborsClassifier

import pipeweave as pw
from pipeweave.evaluation import as_asked, iter_folds, load_eval_frame
from pipeweave.model import (
    LIBRARY_TILE_MIN_LAUNCHES,
    LIBRARY_TILE_NEIGHBORS,
    LIBRARY_TILE_TABLE_ROWS,
    TABLE_TILE_COLUMNS,
    choose_tiles,
    fit_tile_tables,
    tile_coordinates,
)

HERE = Path(__file__).resolve().parent


def _markdown(t: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (blank cells for NaN)."""
    cells = [[("" if pd.isna(v) else str(v)) for v in row] for row in t.itertuples(index=False)]
    head = "| " + " | ".join(map(str, t.columns)) + " |"
    rule = "|" + "|".join("---:" if pd.api.types.is_numeric_dtype(t[c]) else "---" for c in t.columns) + "|"
    return "\n".join([head, rule, *("| " + " | ".join(r) + " |" for r in cells)])


def _labels(d: pd.DataFrame) -> np.ndarray:
    return d[list(TABLE_TILE_COLUMNS)].fillna(-1).astype(str).agg("|".join, axis=1).to_numpy()


def _coords(d: pd.DataFrame, align: bool) -> np.ndarray:
    x = tile_coordinates(d)
    if not align:
        return x
    return np.column_stack([x, *(2.0 * (d[c].to_numpy(dtype=float) % 4 == 0) for c in ("m", "n", "k"))])


def choice_table(sub: pd.DataFrame) -> pd.DataFrame:
    """Share (%) of held-back training launches voted their recorded kernel, per setting and GPU."""
    _, tr, _ = next(iter_folds(sub, "unseen-shape"))
    train = sub.iloc[tr].reset_index(drop=True)
    _, a_pos, b_pos = next(iter_folds(train, "unseen-shape", seed=1))
    a, b = train.iloc[a_pos], train.iloc[b_pos]
    rows = []
    for cap in (None, 2000, 1000):
        for align in (False, True):
            for k in (1, 3, 5, 9):
                rec = {"launches per GPU": "all" if cap is None else cap, "alignment": align, "neighbours": k}
                for g in sorted(set(b["gpu"].astype(str))):
                    ag, bg = a[a["gpu"].astype(str) == g], b[b["gpu"].astype(str) == g]
                    if cap and len(ag) > cap:
                        ag = ag.sample(cap, random_state=0)
                    clf = KNeighborsClassifier(n_neighbors=k).fit(_coords(ag, align), _labels(ag))
                    rec[g] = round(float((clf.predict(_coords(bg, align)) == _labels(bg)).mean() * 100), 1)
                rec["mean"] = round(float(np.mean([rec[g] for g in sorted(set(b["gpu"].astype(str)))])), 2)
                rows.append(rec)
    return pd.DataFrame(rows)


def fit_table(sub: pd.DataFrame, model: pw.PipeweaveRegressor) -> pd.DataFrame:
    """MAPE (%) of the model on its training GPUs' launches: recorded kernel, nearest-launch vote, fastest tiles."""
    rows = sub[sub["gpu"].astype(str).isin(model.library_tile_tables_)]
    rows = rows.sample(frac=1.0, random_state=0).groupby("gpu", observed=True).head(3000)
    lat = rows["latency_us"].to_numpy(dtype=float)
    asked = as_asked(rows)
    pred = {"recorded": model.predict(rows), "vote": model.predict(asked)}
    tables, model.library_tile_tables_ = model.library_tile_tables_, {}
    try:
        pred["fastest"] = model.predict(asked)
    finally:
        model.library_tile_tables_ = tables
    out = pd.DataFrame(
        {
            "gpu": rows["gpu"].astype(str).to_numpy(),
            "operator": rows["dataset"].astype(str).to_numpy(),
            "over 10 ms": lat > 1e4,
            **{k: np.abs(np.asarray(v) / lat - 1) * 100 for k, v in pred.items()},
        }
    )
    agg = {"n": ("recorded", "size"), **{k: (k, "mean") for k in pred}}
    table = out.groupby(["gpu", "operator", "over 10 ms"]).agg(**agg).round(1).reset_index()
    total = out[list(pred)].mean().round(1)
    return pd.concat([table, pd.DataFrame([{"gpu": "all", "n": len(out), **total.to_dict()}])], ignore_index=True)


def split_table(sub: pd.DataFrame) -> pd.DataFrame:
    """MAPE (%) of held-back training launches: voted tile and split, voted tile with the inferred split, recorded."""
    from sklearn.base import clone

    from pipeweave.evaluation import make_methods, with_group_training
    from pipeweave.frontend import tiled_launches
    from pipeweave.model import PipeweaveRegressor

    _, tr, _ = next(iter_folds(sub, "unseen-shape"))
    train = sub.iloc[tr].reset_index(drop=True)
    _, a, b = next(iter_folds(train, "unseen-shape", seed=1))
    methods = make_methods(["pipeweave"], label="gemm_fp32", has_sass=False, max_rows_per_gpu=4000, n_jobs=2)
    est = clone(with_group_training(methods, "gemm_fp32", sub, 4000)["pipeweave"]).fit(train.iloc[a])
    reg = est
    while not isinstance(reg, PipeweaveRegressor):  # the capped / grouped wrappers keep the fitted model in estimator_
        reg = reg.estimator_
    test = train.iloc[b]
    asked = as_asked(test)
    kernels, _ = choose_tiles(reg.library_tile_tables_, asked, int(reg.library_tile_neighbors))
    names = ("block_m", "block_n", "block_k", "num_warps", "num_stages")
    inferred = tiled_launches(asked, {c: kernels[:, j] for j, c in enumerate(names)})
    lat = test["latency_us"].to_numpy(dtype=float)
    pred = {"voted tile and split": est.predict(asked), "voted tile, inferred split": est.predict(inferred)}
    pred["recorded kernel"] = est.predict(test)
    out = pd.DataFrame(
        {
            "gpu": test["gpu"].astype(str).to_numpy(),
            **{k: np.abs(np.asarray(v) / lat - 1) * 100 for k, v in pred.items()},
        }
    )
    table = out.groupby("gpu").mean().round(2).reset_index()
    return pd.concat([table, pd.DataFrame([{"gpu": "all", **out[list(pred)].mean().round(2)}])], ignore_index=True)


def sibling_table(sub: pd.DataFrame) -> pd.DataFrame:
    """Share (%) of each GPU's launches given their recorded tile by the vote of the GPUs of its architecture (major
    compute capability) but another compute capability, and by the front-end's smallest-envelope tile."""
    tables = fit_tile_tables(sub, max_rows=LIBRARY_TILE_TABLE_ROWS, min_launches=LIBRARY_TILE_MIN_LAUNCHES)
    tile = list(TABLE_TILE_COLUMNS[:4])  # block m, n, k and warps (the stages are the SIMT tiles' 2)
    rows = []
    for g in sorted(tables):
        cc = tables[g].compute_capability
        others = {n: t for n, t in tables.items() if t.compute_capability != cc}
        voters = sorted(n for n, t in others.items() if t.compute_capability.split(".")[0] == cc.split(".")[0])
        if not voters:
            continue
        mine = sub[sub["gpu"].astype(str) == g]
        asked = as_asked(mine)
        kernels, _ = choose_tiles({n: others[n] for n in voters}, asked, LIBRARY_TILE_NEIGHBORS)
        recorded = mine[tile].to_numpy(dtype=float)
        heuristic = asked[tile].to_numpy(dtype=float)
        rows.append(
            {
                "gpu": g,
                "compute capability": cc,
                "voters": " + ".join(voters),
                "launches": len(mine),
                "voted tile right (%)": round(float((kernels[:, :4] == recorded).all(axis=1).mean() * 100), 1),
                "smallest-envelope tile right (%)": round(float((heuristic == recorded).all(axis=1).mean() * 100), 1),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    frame, _, _ = load_eval_frame(None, ["gemm_fp32"])
    sub = frame[frame["eval_family"] == "gemm_fp32"].reset_index(drop=True)
    choice = choice_table(sub)
    model = pw.load_model()
    fit = fit_table(sub, model)
    split = split_table(sub)
    sibling = sibling_table(sub)
    text = [
        "# The kernel cuBLAS ran, read off the nearest measured launches (FP32 GEMM)",
        "",
        "Written by `python experiments/checks/library_tiles.py` (see its docstring).",
        "",
        "## 1. The choice, inside training rows",
        "",
        "Share (%) of held-back training launches (the unseen-shape split's training shapes, split again) given their",
        "recorded kernel (tile and split-K) by the vote of their nearest launches of the same GPU.",
        "",
        _markdown(choice),
        "",
        "## 2. The shipped model on its own training GPUs' launches",
        "",
        "MAPE (%) with the recorded kernel, with the nearest-launch vote (what `predict` does for a launch without a",
        "tile on these GPUs) and with the fastest SIMT tiles (what it did before session 40, and does on a GPU of an",
        "architecture it has no launches of). A fit check: these launches trained the model.",
        "",
        _markdown(fit),
        "",
        "## 3. The split: voted with the tile, or inferred for it",
        "",
        "MAPE (%) of the held-back launches of table 1 by a model trained on the others (the LOGO suite's `pipeweave`",
        "method, 4,000 launches per GPU), asked without their kernel.",
        "",
        _markdown(split),
        "",
        "## 4. Another compute capability's tiles, one architecture",
        "",
        "Share (%) of each GPU's launches given their recorded tile (block m, n, k and warps) by the vote of the",
        "measured GPUs of its major compute capability but not its own (what `predict` gives a GPU with no trained GPU",
        "of its compute capability, `LIBRARY_TILE_BORROW`), beside the front-end's smallest-envelope tile. Data only.",
        "",
        _markdown(sibling),
        "",
    ]
    (HERE / "library_tiles.md").write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
