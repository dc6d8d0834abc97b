"""The project's evaluation suite (methods wired to the harness) on a few thousand real rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

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


def test_seen_gpu_boosters_are_off_where_no_test_row_is_of_a_training_gpu():
    """Leave-one-generation-out fits the pipeweave methods without seen-GPU boosters (they could not act)."""
    names = ["pipeweave", "pipeweave_no_l2_sched", "kernelsight"]
    off = make_methods(names, label="gemm_bf16", has_sass=False, max_rows_per_gpu=10, seen_gpu=False)
    on = make_methods(names, label="gemm_bf16", has_sass=False, max_rows_per_gpu=10)
    for name in ("pipeweave", "pipeweave_no_l2_sched"):
        assert off[name].estimator.seen_gpu == {} and off[name].estimator.seen_gpu_weights() == {}
        assert on[name].estimator.seen_gpu is None and on[name].estimator.seen_gpu_weights()  # the recipe


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


class _WeightRecorder(_Recorder):
    """Hand-made stand-in estimator that also takes sample weights."""

    def fit(self, df, y=None, sample_weight=None):
        self.rows_, self.weight_ = df, sample_weight
        return self


def test_group_training_adds_other_families_rows_but_never_a_held_out_generation(small_frame):
    from pipeweave.evaluation._suite import GroupTraining, SharedRows

    frame = small_frame.assign(eval_family=small_frame["family"].astype(str))
    own = frame[frame["family"] == "gemm"]
    extra = SharedRows(frame[frame["family"] == "moe_w13"])
    gens = tuple(sorted(set(own["generation"].astype(str))))
    held = gens[0]
    train = own[own["generation"].astype(str) != held]
    est = GroupTraining(_WeightRecorder(), extra, gens, max_rows_per_gpu=40).fit(train)
    seen = est.estimator_.rows_
    added = seen[seen["family"] == "moe_w13"]
    assert len(added) == est.n_extra_rows_ > 0
    assert held not in set(added["generation"].astype(str))  # no GPU of the held-out generation
    assert (added["gpu"].astype(str).value_counts() <= 40).all()  # capped per (GPU, family)
    assert len(seen) == len(train) + len(added)
    # the few-shot refit: the held-out generation's shots are in the rows, its extra rows still are not
    shots = own[own["generation"].astype(str) == held].head(3)
    rows = pd.concat([train, shots])
    refit = GroupTraining(_WeightRecorder(), extra, gens, max_rows_per_gpu=40).fit(
        rows, sample_weight=np.full(len(rows), 2.0), held_out=[held]
    )
    added = refit.estimator_.rows_[refit.estimator_.rows_["family"] == "moe_w13"]
    assert held not in set(added["generation"].astype(str))
    w = refit.estimator_.weight_
    assert len(w) == len(rows) + len(added) and (w[: len(rows)] == 2.0).all() and (w[len(rows) :] == 1.0).all()


def test_group_training_never_adds_a_held_out_gpus_rows_of_another_family(small_frame):
    """unseen-gpu: the fold lacks one GPU, not a generation; the other family's rows of that GPU stay out,
    those of its generation's other GPUs come in."""
    from pipeweave.evaluation._suite import GroupTraining, SharedRows

    frame = small_frame.assign(eval_family=small_frame["family"].astype(str))
    own = frame[frame["family"] == "gemm"]
    extra = SharedRows(frame[frame["family"] == "moe_w13"])
    moe_gpus = set(extra.frame["gpu"].astype(str))
    held = "A100-SXM"
    assert held in moe_gpus and "RTX-A6000" in moe_gpus  # an Ampere sibling in the other family
    # hand-made label (not a measurement): L40S's GEMM rows relabelled as a second Ampere GPU, so the fold
    # without A100-SXM still has an Ampere GPU and only the GPU rule can keep A100-SXM's other rows out
    sibling = own[own["gpu"].astype(str) == "L40S"].assign(gpu="A40", generation="ampere")
    own = pd.concat([own, sibling], ignore_index=True)
    gens = tuple(sorted(set(own["generation"].astype(str))))
    gpus = tuple(sorted(set(own["gpu"].astype(str))))
    train = own[own["gpu"].astype(str) != held]
    assert "ampere" in set(train["generation"].astype(str))
    est = GroupTraining(_WeightRecorder(), extra, gens, max_rows_per_gpu=None, gpus=gpus).fit(train)
    added = est.estimator_.rows_[est.estimator_.rows_["family"] == "moe_w13"]
    assert held not in set(added["gpu"].astype(str))
    assert set(added["gpu"].astype(str)) == moe_gpus - {held}  # every other GPU's rows, uncapped here
    # without the GPU list (the logo wrapping before unseen-gpu existed) the held-out GPU's rows would come in
    legacy = GroupTraining(_WeightRecorder(), extra, gens, max_rows_per_gpu=None).fit(train)
    assert held in set(legacy.estimator_.rows_["gpu"].astype(str)[legacy.estimator_.rows_["family"] == "moe_w13"])


def test_group_training_fits_on_the_evaluated_familys_reference(small_frame):
    from pipeweave.evaluation._suite import GroupTraining, SharedRows
    from pipeweave.model import PipeweaveRegressor

    frame = small_frame.assign(eval_family=small_frame["family"].astype(str))
    own = frame[frame["family"] == "moe_w13"]
    extra = SharedRows(frame[frame["family"] == "gemm"])
    gens = tuple(sorted(set(own["generation"].astype(str))))
    base = PipeweaveRegressor(n_estimators=2, n_jobs=1, family_reference={"moe_w13": "roofline"})
    est = GroupTraining(base, extra, gens, max_rows_per_gpu=20).fit(own)
    fitted = est.estimator_
    assert fitted.per_family is False and fitted.reference == "roofline"
    assert fitted.shared_reference_ == "roofline" and fitted.reference_of("moe_w13") == "roofline"
    plain = GroupTraining(PipeweaveRegressor(n_estimators=2, n_jobs=1), extra, gens, max_rows_per_gpu=20).fit(own)
    assert plain.estimator_.reference == "envelope"


def test_group_training_fits_with_the_evaluated_familys_booster_settings(small_frame):
    """The shared booster a grouped family is scored with is trained with that family's own settings (max_depth etc.:
    ``PipeweaveRegressor.booster_settings_of``), as its booster in the shipped model is."""
    import json

    from pipeweave.evaluation._suite import GroupTraining, SharedRows
    from pipeweave.model import PipeweaveRegressor

    frame = small_frame.assign(eval_family=small_frame["family"].astype(str))
    own = frame[frame["family"] == "moe_w13"]
    extra = SharedRows(frame[frame["family"] == "gemm"])
    gens = tuple(sorted(set(own["generation"].astype(str))))
    settings = {"moe_w13": {"max_depth": 3, "reg_lambda": 7.0}}
    base = PipeweaveRegressor(n_estimators=2, n_jobs=1, family_booster_params=settings)
    fitted = GroupTraining(base, extra, gens, max_rows_per_gpu=20).fit(own).estimator_
    assert (fitted.per_family, fitted.max_depth, fitted.reg_lambda, fitted.min_child_weight) == (False, 3, 7.0, 20.0)
    train = json.loads(fitted.booster_.save_config())["learner"]["gradient_booster"]["tree_train_param"]
    assert (float(train["max_depth"]), float(train["lambda"])) == (3.0, 7.0)
    plain = GroupTraining(PipeweaveRegressor(n_estimators=2, n_jobs=1), extra, gens, max_rows_per_gpu=20).fit(own)
    assert (plain.estimator_.max_depth, plain.estimator_.reg_lambda) == (6, 1.0)


def test_with_group_training_wraps_only_the_pipeweave_methods_of_a_grouped_family(small_frame):
    from pipeweave.evaluation._suite import GroupTraining, group_labels, with_group_training

    assert set(group_labels("attention_generation")) >= {"gemm_bf16", "attention_context", "moe_w13"}
    assert group_labels("gemm_bf16") == []
    frame = small_frame.assign(
        eval_family=np.where(small_frame["family"].astype(str) == "gemm", "gemm_bf16", "attention_generation")
    )
    names = ["pipeweave", "roofline", "xgboost_raw"]
    ms = make_methods(names, label="attention_generation", has_sass=False, max_rows_per_gpu=10)
    wrapped = with_group_training(ms, "attention_generation", frame, 10)
    assert isinstance(wrapped["pipeweave"].estimator, GroupTraining)
    assert wrapped["pipeweave"].estimator.gpus == tuple(
        sorted(set(frame.loc[frame["eval_family"] == "attention_generation", "gpu"].astype(str)))
    )
    assert len(wrapped["pipeweave"].estimator.extra.frame) == int((frame["eval_family"] == "gemm_bf16").sum())
    assert wrapped["roofline"] is ms["roofline"] and wrapped["xgboost_raw"] is ms["xgboost_raw"]
    gemm = make_methods(names, label="gemm_bf16", has_sass=False, max_rows_per_gpu=10)
    assert with_group_training(gemm, "gemm_bf16", frame, 10) == gemm


def test_an_unknown_family_is_a_clear_error_before_any_group_rows_are_looked_up():
    import pytest

    from pipeweave._errors import DataError
    from pipeweave.evaluation._suite import labels_to_load, load_eval_frame

    assert labels_to_load(["bogus", "attention_generation"])[:2] == ["bogus", "attention_generation"]
    with pytest.raises(DataError, match="unknown evaluation family.*bogus"):
        load_eval_frame(None, labels_to_load(["bogus"]))


def test_gpu_split_with_nothing_to_hold_out_is_an_error_not_an_empty_report(tmp_path, data_dir) -> None:
    """Training GPUs that no evaluated family measures leave every family without a fold: refused, naming
    each family's GPUs (no report written). Reads the shared data (rmsnorm, 2,491 rows)."""
    import pytest

    from pipeweave import DataError
    from pipeweave.evaluation import run_evaluation

    out = tmp_path / "split"
    with (
        pytest.warns(RuntimeWarning, match="nothing to hold out"),
        pytest.warns(RuntimeWarning, match="have no rows in the evaluated families"),
        pytest.raises(DataError, match="rmsnorm: A100-SXM"),
    ):
        run_evaluation(
            "gpu-split",
            families=["rmsnorm"],
            methods=["roofline"],
            out=out,
            data=data_dir,
            train_gpus=["P100"],
            progress=False,
        )
    assert not out.exists()


def test_checked_train_gpus_takes_one_name_as_a_string_and_refuses_what_is_not_names() -> None:
    """A plain string is one GPU (also when refused under another protocol: not listed letter by letter); a
    catalog GPUSpec stands for its name; a number or None is refused as a DataError, not a TypeError; an
    unknown name's fix does not offer a spec file (the split names GPUs of the evaluation data)."""
    import pytest

    from pipeweave import DataError, get_gpu
    from pipeweave.evaluation import checked_train_gpus

    assert checked_train_gpus("gpu-split", "V100") == ["V100-PCIe"]
    assert checked_train_gpus("gpu-split", ["V100", "Tesla T4", "V100-PCIe"]) == ["V100-PCIe", "T4"]
    assert checked_train_gpus("gpu-split", get_gpu("T4")) == ["T4"]
    with pytest.raises(DataError, match=r"training GPUs \['V100'\] apply to the gpu-split protocol") as exc:
        checked_train_gpus("logo", "V100")
    assert exc.value.hint
    for bad in (123, [None], ["T4", 7]):
        with pytest.raises(DataError, match="must be a list of GPU names") as exc:
            checked_train_gpus("gpu-split", bad)  # type: ignore[arg-type]
        assert exc.value.hint
    with pytest.raises(DataError, match="unknown GPU 'H1000'") as exc:
        checked_train_gpus("gpu-split", ["H1000"])
    assert "spec file cannot be" in str(exc.value.hint)
    with pytest.raises(DataError) as exc:
        checked_train_gpus("unseen-gpu", ["x" * 500])
    assert len(str(exc.value)) < 300  # the echoed name is cut (shown)


def test_gpu_split_records_a_command_that_reproduces_it_and_names_idle_training_gpus(tmp_path, data_dir) -> None:
    """The recorded command carries the split, families and methods of the run; a training GPU that no
    evaluated family measures is named (it trains nothing). Reads the shared rmsnorm rows, roofline only."""
    import json

    import pytest

    from pipeweave.evaluation import run_evaluation

    out = tmp_path / "split"
    with pytest.warns(RuntimeWarning, match=r"training GPUs \['P100-PCIe'\] have no rows"):
        res = run_evaluation(
            "gpu-split",
            families=["rmsnorm"],
            methods=["roofline"],
            out=out,
            data=data_dir,
            train_gpus=["A100-SXM", "P100"],
            progress=False,
        )
    cmd = res["extra"]["command"]
    assert cmd == (
        "pipeweave evaluate --protocol gpu-split --train-gpus A100-SXM P100-PCIe --families rmsnorm --methods roofline"
    )
    assert "A100-SXM" not in res["families"]["rmsnorm"]["gpus"]  # trained on, never tested
    assert json.loads((out / "results.json").read_text())["extra"]["train_gpus"] == ["A100-SXM", "P100-PCIe"]


def test_gpu_split_boosters_learn_from_other_families_on_the_training_gpus_only(tmp_path, data_dir, monkeypatch):
    """Softmax's booster also trains on NeuSight's other FP32 families' rows; under gpu-split only those on the
    training GPUs join (the H100's FP32 GEMM rows, measured on no softmax GPU, did before). Shared data, a
    tiny booster."""
    from pipeweave.evaluation import _suite, run_evaluation

    seen: set[str] = set()
    fit = _suite.GroupTraining.fit

    def recording_fit(self, df, *args, **kwargs):  # noqa: ANN001, ANN202
        seen.update(self.extra_rows(df)["gpu"].astype(str))
        return fit(self, df, *args, **kwargs)

    monkeypatch.setattr(_suite.GroupTraining, "fit", recording_fit)
    train = ["P100-PCIe", "P4", "T4", "V100-PCIe", "A100-PCIe-40GB"]
    run_evaluation(
        "gpu-split",
        families=["softmax_fp32"],
        methods=["pipeweave"],
        out=tmp_path / "split",
        data=data_dir,
        train_gpus=train,
        n_estimators=5,
        max_train_rows_per_gpu=200,
        progress=False,
        plots=False,
    )
    assert seen and seen <= set(train), seen


def test_group_training_fits_the_evaluated_familys_extra_columns(load_real_rows):
    """The shared booster of a GroupTraining fit is the evaluated family's: it reads that family's extra
    columns (FP32 GEMM's operand layout); real NeuSight rows."""
    from pipeweave.evaluation._suite import GroupTraining, SharedRows
    from pipeweave.model import PipeweaveRegressor

    fp32_rows = load_real_rows(["gemm_fp32", "softmax_fp32"], ["V100-PCIe", "T4"], 100)
    KW = {"n_estimators": 10, "n_jobs": 1}

    own = fp32_rows[fp32_rows["family"] == "gemm_fp32"].assign(eval_family="gemm_fp32")
    other = fp32_rows[fp32_rows["family"] == "softmax_fp32"].assign(eval_family="softmax_fp32")
    fitted = GroupTraining(PipeweaveRegressor(**KW), SharedRows(other)).fit(own).estimator_
    assert fitted.shared_extra_features_ == ("b_transposed",)
    assert fitted.n_train_rows_ == len(own) + len(other)
    fitted = GroupTraining(PipeweaveRegressor(**KW), SharedRows(own)).fit(other).estimator_
    assert fitted.shared_extra_features_ == ()


def test_train_dtypes_all_groups_every_dtype_of_the_family_and_only_then():
    """``all_dtypes``: a family's other dtypes (evaluation families and training-only ``family:dtype`` labels) train
    its model, and those of its FAMILY_BOOSTER_ROWS families; without it, only the booster-rows evaluation families."""
    from pipeweave.evaluation import group_labels, label_family, labels_to_load

    pool = ["gemm_bf16", "gemm_fp8", "gemm:fp8_block", "fused_moe_bf16", "attention_context", "attention_context:fp8"]
    assert group_labels("gemm_bf16", pool) == []
    assert group_labels("gemm_bf16", pool, all_dtypes=True) == ["gemm_fp8", "gemm:fp8_block"]
    assert group_labels("attention_context", pool) == ["gemm_bf16", "gemm_fp8", "fused_moe_bf16"]
    assert group_labels("attention_context", pool, all_dtypes=True) == [
        "gemm_bf16",
        "gemm_fp8",
        "gemm:fp8_block",
        "fused_moe_bf16",
        "attention_context:fp8",
    ]
    assert label_family("gemm:fp8_block") == "gemm" and label_family("gemm_fp8") == "gemm"
    assert labels_to_load(["gemm_bf16"]) == ["gemm_bf16"]
    assert labels_to_load(["gemm_bf16"], all_dtypes=True) == ["gemm_bf16", "gemm_fp8"]


def test_train_dtypes_all_on_real_rows(tmp_path, data_dir) -> None:
    """silu_mul under logo with train_dtypes='all': vidur's float16 rows (A100 / A40 / H100) load as a training-only
    label and train pipeweave's model, never a held-out generation's; the report and its command say so; the
    baselines are the evaluated-dtype run's to the digit; unseen-shape is refused. Reads the shared data."""
    import json

    import pytest

    from pipeweave import DataError
    from pipeweave.evaluation import load_eval_frame, run_evaluation

    frame = load_eval_frame(data_dir, ["silu_mul"], all_dtypes=True, verbose=False)[0]
    labels = set(frame["eval_family"])
    assert labels == {"silu_mul", "silu_mul:float16"}
    assert set(frame.loc[frame["eval_family"] == "silu_mul:float16", "source"].astype(str)) == {"vidur"}
    assert set(load_eval_frame(data_dir, ["silu_mul"], verbose=False)[0]["eval_family"]) == {"silu_mul"}

    kw = dict(families=["silu_mul"], methods=["pipeweave", "roofline"], data=data_dir, progress=False, plots=False)
    run_evaluation("logo", out=tmp_path / "all", train_dtypes="all", **kw)
    run_evaluation("logo", out=tmp_path / "own", **kw)
    a, o = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("all", "own"))
    assert a["extra"]["train_dtypes"] == "all" and "train_dtypes" not in o["extra"]
    assert "--train-dtypes all" in a["extra"]["command"]
    ra, ro = a["results"]["silu_mul"], o["results"]["silu_mul"]
    assert ra["roofline"] == ro["roofline"]  # the baselines train on the evaluated rows either way
    assert ra["pipeweave"] != ro["pipeweave"]  # the float16 rows changed pipeweave's fits
    assert "as the shipped model trains" in (tmp_path / "all" / "results.md").read_text()
    with pytest.raises(DataError, match="unseen-shape"):
        run_evaluation("unseen-shape", out=tmp_path / "x", train_dtypes="all", **kw)
    with pytest.raises(DataError, match="train_dtypes must be one of"):
        run_evaluation("logo", out=tmp_path / "x", train_dtypes="every", **kw)
    with pytest.raises(DataError, match="train_dtypes"):  # a refresh keeps the report's own training rows
        run_evaluation("logo", out=tmp_path / "all", refresh=True, **kw)


def test_as_asked_scores_fp32_gemm_without_the_kernel_it_recorded(load_real_rows):
    """Real NeuSight rows: an FP32 GEMM is scored as a user asks for it on a GPU nobody ran it on (the front-end's
    heuristic tile, the split predict infers), not with the cuBLAS tile / split its kernel recorded; the other
    families' rows, the index, the columns and their dtypes are untouched."""
    from pipeweave.evaluation import as_asked
    from pipeweave.frontend import infer_split_k
    from pipeweave.model import ensure_features
    from pipeweave.vocab import TILE_COLUMNS

    rows = load_real_rows(["gemm_fp32", "softmax_fp32"], ["V100-PCIe", "T4"], 60).reset_index(drop=True)
    rows.index = rows.index * 2 + 5  # not a range: the view keeps the frame's own index
    asked = as_asked(rows)
    assert asked.index.equals(rows.index) and list(asked.columns) == list(rows.columns)
    assert [str(t) for t in asked.dtypes] == [str(t) for t in rows.dtypes]  # a category may gain a value
    gemm = (rows["family"] == "gemm_fp32").to_numpy()
    assert gemm.any() and (~gemm).any()
    # values and order unchanged (a categorical column's category list may have grown)
    pd.testing.assert_frame_equal(asked.loc[~gemm], rows.loc[~gemm], check_categorical=False)
    assert set(rows.loc[gemm, "tile_origin"].astype(str)) == {"kernel_name"}
    assert set(asked.loc[gemm, "tile_origin"].astype(str)) == {"simt_heuristic"}
    # the same rows given without the record and featurized by the front-end: what `asked` holds
    bare = rows.loc[gemm, ["gpu", "family", "dtype", "op", "batch_size", "m", "n", "k", "latency_us"]]
    bare = bare.assign(**{c: np.nan for c in TILE_COLUMNS}, split_k=np.nan)
    split = infer_split_k(bare)
    np.testing.assert_array_equal(asked.loc[gemm, "split_k"].to_numpy(dtype=float), split)
    expect = ensure_features(bare.assign(split_k=split).reset_index(drop=True))
    np.testing.assert_allclose(asked.loc[gemm, "t_env_us"].to_numpy(dtype=float), expect["t_env_us"], rtol=1e-12)
    other = rows.loc[~gemm]
    assert as_asked(other) is other  # nothing recorded to take away: the frame itself


def test_run_protocol_predicts_the_asked_rows_and_trains_on_the_recorded_ones(load_real_rows):
    """Real rows: with test_frame, every fit trains on the frame's rows and predicts test_frame's rows (same index);
    a test_frame of other rows is refused with the reason."""
    import pytest

    from pipeweave import DataError
    from pipeweave.evaluation import as_asked

    rows = load_real_rows(["gemm_fp32"], ["V100-PCIe", "T4", "A100-PCIe-40GB"], 40).reset_index(drop=True)
    seen: list[tuple[set, set]] = []

    class Probe(_Recorder):
        def fit(self, df, y=None):
            self.train_origin_ = set(df["tile_origin"].astype(str))
            return self

        def predict(self, df):
            seen.append((self.train_origin_, set(df["tile_origin"].astype(str))))
            return np.ones(len(df))

    pred = run_protocol(rows, {"probe": Probe}, "logo", progress=False, test_frame=as_asked(rows))
    assert len(seen) == 3 and all(tr == {"kernel_name"} and te == {"simt_heuristic"} for tr, te in seen)
    assert set(pred["row_id"]) == set(rows.index)
    with pytest.raises(DataError, match="same index"):
        run_protocol(rows, {"probe": Probe}, "logo", progress=False, test_frame=rows.iloc[1:])
