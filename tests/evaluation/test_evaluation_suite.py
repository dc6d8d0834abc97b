"""The project's evaluation suite (methods wired to the harness) on a few thousand real rows."""

from __future__ import annotations

import numpy as np

from pipeweave.evaluation import run_protocol
from pipeweave.evaluation._suite import CappedTraining, make_methods


class _Recorder:
    """Hand-made stand-in estimator: remembers the training rows it saw."""

    def fit(self, df, y=None):
        self.rows_ = df
        return self

    def predict(self, df):
        return np.ones(len(df))

    def get_params(self, deep=False):
        return {}

    def set_params(self, **kw):
        return self


def test_capped_training_caps_rows_per_gpu(small_frame):
    capped = CappedTraining(_Recorder(), max_rows_per_gpu=50).fit(small_frame)
    counts = capped.estimator_.rows_["gpu"].astype(str).value_counts()
    assert (counts == 50).all() and len(counts) == small_frame["gpu"].nunique()


def test_make_methods_ablations_only_on_headline_families():
    names = [
        "pipeweave",
        "pipeweave_no_sass",
        "pipeweave_no_l2_sched",
        "roofline",
        "tilesight",
        "kernelsight",
        "xgboost_raw",
    ]
    head = make_methods(names, label="gemm_bf16", has_sass=True, max_rows_per_gpu=10)
    other = make_methods(names, label="attention_context", has_sass=True, max_rows_per_gpu=10)
    assert list(head) == [n for n in names if n != "pipeweave_no_sass"]  # gemm is not a Triton kernel
    moe = make_methods(names, label="fused_moe_bf16", has_sass=True, max_rows_per_gpu=10)
    assert list(moe) == names
    assert "pipeweave_no_l2_sched" not in other and "pipeweave" in other


def test_logo_on_real_rows_all_methods_same_rows(small_frame):
    df = small_frame.assign(eval_family=small_frame["family"].astype(str))
    methods = make_methods(
        ["pipeweave", "roofline", "tilesight", "kernelsight"],
        label="x",
        has_sass=False,
        max_rows_per_gpu=100,
        n_estimators=5,
    )
    pred = run_protocol(df, methods, "logo", family_col="eval_family", progress=False)
    assert set(pred["method"]) == {"pipeweave", "roofline", "tilesight", "kernelsight"}
    per_method = pred.groupby("method")["row_id"].apply(lambda s: tuple(sorted(s)))
    assert per_method.nunique() == 1
    assert pred["pred_us"].notna().all()
    for fold, part in pred.groupby("fold"):
        assert (part["generation"] == fold).all()
