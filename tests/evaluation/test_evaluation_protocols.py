"""Protocols on a small synthetic table (see conftest.make_profiles; hand-made, not measured)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from evaluation_fixtures import ConstMethod, FlopMethod, make_profiles
from sklearn.base import BaseEstimator

from pipeweave import DataError
from pipeweave.evaluation import PRED_COLUMNS, fold_errors, iter_folds, run_protocol, shape_groups


class Recorder:
    """Dummy method that logs what it was fitted on and asked to predict."""

    def __init__(self, log: list[dict]) -> None:
        self.log = log

    def fit(self, df: pd.DataFrame) -> Recorder:
        self.entry = {
            "train_gens": set(df["generation"]),
            "train_shapes": set(shape_groups(df)),
            "families": set(df["family"]),
            "sources": set(df["source"]),
            "train_index": set(df.index),
        }
        self.log.append(self.entry)
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        self.entry.update(
            test_gens=set(df["generation"]),
            test_shapes=set(shape_groups(df)),
            test_has_target="latency_us" in df.columns,
            test_index=set(df.index),
        )
        return np.ones(len(df))


def _quiet(*args, **kwargs) -> pd.DataFrame:
    return run_protocol(*args, progress=False, **kwargs)


def test_logo_never_leaks_held_out_generation(profiles: pd.DataFrame) -> None:
    log: list[dict] = []
    pred = _quiet(profiles, {"rec": lambda: Recorder(log)}, "logo")
    assert len(log) == 3 * 4  # 3 (family, source) pairs x 4 generations
    for e in log:
        (held_out,) = e["test_gens"]
        assert held_out not in e["train_gens"]
        assert e["train_gens"] | {held_out} == {"ampere", "ada", "hopper", "blackwell"}
        assert len(e["families"]) == 1 and len(e["sources"]) == 1  # never pooled
        assert not e["test_has_target"]
        assert not (e["train_index"] & e["test_index"])
    assert set(pred["fold"]) == {"ampere", "ada", "hopper", "blackwell"}
    assert (pred["fold"] == pred["generation"]).all()
    # every row of the table is predicted exactly once per method under LOGO
    assert sorted(pred["row_id"]) == sorted(profiles.index)


def test_iter_folds_logo_matches_groups(profiles: pd.DataFrame) -> None:
    sub = profiles[profiles["family"] == "gemm_bf16"]
    folds = list(iter_folds(sub, "logo"))
    assert [f for f, _, _ in folds] == ["ada", "ampere", "blackwell", "hopper"]
    for name, train, test in folds:
        assert set(sub["generation"].iloc[test]) == {name}
        assert name not in set(sub["generation"].iloc[train])
        assert len(train) + len(test) == len(sub)


def test_unseen_shape_holds_out_whole_shapes(profiles: pd.DataFrame) -> None:
    log: list[dict] = []
    pred = _quiet(profiles, {"rec": lambda: Recorder(log)}, "unseen-shape")
    assert len(log) == 3 and set(pred["fold"]) == {"unseen-shape"}
    for e in log:
        assert e["test_shapes"] and not (e["train_shapes"] & e["test_shapes"])
        frac = len(e["test_shapes"]) / len(e["train_shapes"] | e["test_shapes"])
        assert 0.15 <= frac <= 0.3
        # a held-out shape is held out on every GPU and generation
        assert e["test_gens"] == {"ampere", "ada", "hopper", "blackwell"}


def test_unseen_shape_is_deterministic(profiles: pd.DataFrame) -> None:
    a = _quiet(profiles, {"c": ConstMethod}, "unseen-shape")
    b = _quiet(profiles, {"c": ConstMethod}, "unseen-shape")
    pd.testing.assert_frame_equal(a, b)
    c = _quiet(profiles, {"c": ConstMethod}, "unseen-shape", seed=1)
    assert set(c["row_id"]) != set(a["row_id"])


def test_output_columns_rows_and_regimes(profiles: pd.DataFrame) -> None:
    pred = _quiet(profiles, {"const": ConstMethod, "flop": FlopMethod}, "logo", keep=["k"])
    assert list(pred.columns) == [*PRED_COLUMNS, "k"]
    assert len(pred) == 2 * len(profiles)
    back = profiles.loc[pred["row_id"]]
    np.testing.assert_array_equal(pred["latency_us"].to_numpy(), back["latency_us"].to_numpy())
    np.testing.assert_array_equal(pred["gpu"].to_numpy(), back["gpu"].to_numpy())
    # same rows for every method, fold by fold
    rows = pred.groupby(["family", "source", "fold", "method"])["row_id"].apply(tuple).unstack("method")
    assert (rows["const"] == rows["flop"]).all()
    expect_deep = back["family"].str.startswith("gemm").to_numpy() & (back["k"].fillna(0) >= 8192).to_numpy()
    np.testing.assert_array_equal(pred["deep_k"].to_numpy(), expect_deep)
    assert pred["deep_k"].any() and not pred.loc[pred["family"] == "moe_bf16", "deep_k"].any()
    np.testing.assert_array_equal(pred["tiny"].to_numpy(), (back["latency_us"] < 10).to_numpy())
    assert pred["error"].isna().all()
    flop = pred[pred["method"] == "flop"]
    np.testing.assert_allclose(flop["pred_us"], FlopMethod().predict(profiles.loc[flop["row_id"]]))


class Fragile:
    """Fails when trained without blackwell (i.e. on the blackwell fold)."""

    def fit(self, df: pd.DataFrame) -> Fragile:
        if "blackwell" not in set(df["generation"]):
            raise ValueError("no blackwell in training")
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        return np.full(len(df), 5.0)


class WrongLength(FlopMethod):
    def predict(self, df: pd.DataFrame) -> np.ndarray:
        return np.ones(len(df) + 1)


def test_failing_method_is_recorded_not_fatal(profiles: pd.DataFrame) -> None:
    with pytest.warns(RuntimeWarning, match="no blackwell in training"):
        pred = _quiet(profiles, {"flop": FlopMethod, "fragile": Fragile, "wrong": WrongLength}, "logo")
    frag = pred[pred["method"] == "fragile"]
    bad = frag["fold"] == "blackwell"
    assert frag.loc[bad, "pred_us"].isna().all() and (frag.loc[~bad, "pred_us"] == 5.0).all()
    assert frag.loc[bad, "error"].str.contains("ValueError: no blackwell").all()
    assert frag.loc[~bad, "error"].isna().all()
    wrong = pred[pred["method"] == "wrong"]
    assert wrong["pred_us"].isna().all() and wrong["error"].str.contains("shape").all()
    assert pred.loc[pred["method"] == "flop", "error"].isna().all()
    errs = fold_errors(pred)
    assert set(zip(errs["method"], errs["fold"])) >= {("fragile", "blackwell")}
    assert len(errs) == 3 + 3 * 4  # fragile: 1 fold x 3 pairs; wrong: every fold


class Est(BaseEstimator):
    """sklearn-style estimator: passed as an instance, cloned per fold."""

    def __init__(self, scale: float = 2.0) -> None:
        self.scale = scale

    def fit(self, df: pd.DataFrame) -> Est:
        self.fitted_ = True
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        return np.full(len(df), self.scale)


def test_estimator_instances_are_cloned(profiles: pd.DataFrame) -> None:
    proto = Est(scale=3.0)
    pred = _quiet(profiles, {"est": proto}, "logo")
    assert not hasattr(proto, "fitted_")
    assert (pred["pred_us"] == 3.0).all()


def test_fresh_instance_per_fold(profiles: pd.DataFrame) -> None:
    seen: list[int] = []

    class Counting(ConstMethod):
        def fit(self, df: pd.DataFrame) -> Counting:
            assert not hasattr(self, "value_"), "re-used a fitted instance"
            seen.append(id(self))
            return super().fit(df)

    _quiet(profiles, {"c": Counting}, "logo")
    assert len(seen) == 12


def test_parallel_matches_sequential() -> None:
    df = make_profiles(n_shapes=6)
    a = _quiet(df, {"const": ConstMethod, "flop": FlopMethod}, "logo", n_jobs=1)
    b = _quiet(df, {"const": ConstMethod, "flop": FlopMethod}, "logo", n_jobs=2)
    pd.testing.assert_frame_equal(a, b)


def test_input_validation(profiles: pd.DataFrame) -> None:
    with pytest.raises(DataError, match="unknown protocol"):
        _quiet(profiles, {"c": ConstMethod}, "kfold")
    with pytest.raises(DataError, match="index"):
        _quiet(pd.concat([profiles, profiles]), {"c": ConstMethod}, "logo")
    with pytest.raises(DataError, match="missing"):
        _quiet(profiles.drop(columns=["gpu"]), {"c": ConstMethod}, "logo")
    bad = profiles.copy()
    bad.loc[0, "latency_us"] = 0.0
    with pytest.raises(DataError, match="latency_us"):
        _quiet(bad, {"c": ConstMethod}, "logo")


def test_single_generation_group_is_skipped_with_warning(profiles: pd.DataFrame) -> None:
    df = profiles[(profiles["family"] == "gemm_bf16") | (profiles["generation"] == "hopper")]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        pred = _quiet(df, {"c": ConstMethod}, "logo")
    assert set(pred["family"]) == {"gemm_bf16"}
    assert any("nothing to hold out" in str(w.message) for w in rec)


def test_unseen_gpu_holds_out_each_gpu_with_its_siblings_in_training(profiles: pd.DataFrame) -> None:
    log: list[dict] = []
    pred = _quiet(profiles, {"rec": lambda: Recorder(log)}, "unseen-gpu")
    gpus = sorted(set(profiles["gpu"]))
    assert len(log) == 3 * len(gpus)  # 3 (family, source) pairs x one fold per GPU
    assert set(pred["fold"]) == set(gpus)
    assert (pred["fold"] == pred["gpu"]).all()  # a fold scores its GPU's rows only
    for fold, part in pred.groupby("fold"):
        assert set(part["generation"]) == {set(profiles.loc[profiles["gpu"] == fold, "generation"]).pop()}
    for e in log:
        assert not (e["train_index"] & e["test_index"]) and not e["test_has_target"]
    # H100 held out: H200 (its generation's other GPU) trains, so hopper is still a training generation
    sub = profiles[profiles["family"] == "gemm_bf16"]
    (train, test), *_ = [(tr, te) for name, tr, te in iter_folds(sub, "unseen-gpu") if name == "H100"]
    assert set(sub["gpu"].iloc[test]) == {"H100"} and "H100" not in set(sub["gpu"].iloc[train])
    assert "H200" in set(sub["gpu"].iloc[train]) and "hopper" in set(sub["generation"].iloc[train])
    assert sorted(pred["row_id"]) == sorted(profiles.index)  # every row predicted once per method


def test_unseen_gpu_needs_two_gpus_and_a_gpu_on_every_row(profiles: pd.DataFrame) -> None:
    one = profiles[profiles["gpu"] == "A100"]
    assert list(iter_folds(one, "unseen-gpu")) == []
    with pytest.warns(RuntimeWarning, match="only one GPU"):
        _quiet(one, {"c": ConstMethod}, "unseen-gpu")
    bad = profiles.assign(gpu=profiles["gpu"].where(profiles.index != profiles.index[0], None))
    with pytest.raises(DataError, match="column 'gpu' has missing values"):
        list(iter_folds(bad, "unseen-gpu"))


def test_gpu_split_trains_on_the_named_gpus_and_tests_every_other(profiles: pd.DataFrame) -> None:
    log: list[dict] = []
    train_gpus = ["A100", "H100"]
    pred = _quiet(profiles, {"rec": lambda: Recorder(log)}, "gpu-split", train_gpus=train_gpus)
    assert len(log) == 3  # one fold per (family, source)
    assert set(pred["fold"]) == {"gpu-split"}
    assert set(pred["gpu"]) == {"L40S", "H200", "B200"}  # every other GPU, each row once
    assert sorted(pred["row_id"]) == sorted(profiles.index[~profiles["gpu"].isin(train_gpus)])
    for e in log:
        assert not (e["train_index"] & e["test_index"]) and not e["test_has_target"]
        assert set(profiles.loc[list(e["train_index"]), "gpu"]) == set(train_gpus)
    # H100 trains, H200 is tested: a generation can sit on both sides (the split is by GPU)
    assert "hopper" in set(pred["generation"])
    with pytest.raises(DataError, match="needs the training GPUs"):
        list(iter_folds(profiles, "gpu-split"))
    with pytest.warns(RuntimeWarning, match="include no training GPU"):
        _quiet(profiles, {"c": ConstMethod}, "gpu-split", train_gpus=["GPU-that-is-not-there"])
    # the note says which side is empty: every GPU trains (nothing to test) is not "no GPU trains"
    every = sorted(set(profiles["gpu"].astype(str)))
    with pytest.warns(RuntimeWarning, match="are all training GPUs"):
        _quiet(profiles, {"c": ConstMethod}, "gpu-split", train_gpus=every)
