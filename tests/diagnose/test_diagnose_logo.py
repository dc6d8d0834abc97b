"""Leave-one-generation-out: nothing of the held-out generation reaches any fold's training data."""

from __future__ import annotations

import numpy as np

from pipeweave.diagnose import dse_folds, fold_training_frames
from pipeweave.diagnose._dse import candidate_labels, default_configs, transfer_configs
from pipeweave.hardware import get_gpu


def test_folds_cover_every_generation_once(dse_frames):
    sweeps, _ = dse_frames
    folds = dse_folds(sweeps)
    assert [f.generation for f in folds] == ["ampere", "ada", "hopper", "blackwell"]
    tested = [g for f in folds for g in f.test_gpus]
    assert sorted(tested) == sorted(sweeps["gpu"].unique())
    for f in folds:
        assert all(get_gpu(g).generation == f.generation for g in f.test_gpus)
        assert all(get_gpu(g).generation != f.generation for g in f.train_gpus)
        assert f.generation not in f.train_generations


def test_training_frames_exclude_held_out_generation(dse_frames):
    sweeps, defaults = dse_frames
    for f in dse_folds(sweeps):
        fr = fold_training_frames(f, sweeps, defaults)
        assert len(fr["sweeps"]) and len(fr["defaults"])
        assert not fr["sweeps"]["gpu"].isin(f.test_gpus).any()
        assert f.generation not in set(fr["sweeps"]["generation"])
        assert f.generation not in set(fr["defaults"]["generation"])  # e.g. RTX A6000 leaves with ampere
        # the transfer reference draws on a training GPU only
        shapes = (
            sweeps[sweeps["gpu"] == f.test_gpus[0]]
            .drop_duplicates(["num_tokens", "num_experts", "topk", "hidden_size", "inter_size"])
            .head(5)
        )
        _, src = transfer_configs(f.test_gpus[0], shapes, fr["sweeps"])
        assert src in f.train_gpus


def test_candidate_labels_and_default(dse_frames):
    sweeps, _ = dse_frames
    s = sweeps[sweeps["gpu"] == "H20"]
    lab = candidate_labels(s, s)
    assert set(np.unique(lab)) <= {1.0, 2.0, 3.0, 4.0}
    assert (lab[s["in_dse_99"].to_numpy()] >= 2).all()
    assert (lab[s["in_dse_99_5"].to_numpy()] >= 3).all()
    keys = ["num_tokens", "num_experts", "topk", "hidden_size", "inter_size"]
    fastest = s.assign(lab=lab).groupby(keys)["lab"].apply(lambda x: int((x == 4).sum()))
    assert (fastest >= 1).all() and (fastest <= 2).mean() > 0.98  # the fastest config(s) of each shape (ties)
    d = default_configs(s.head(2).assign(num_tokens=[8.0, 512.0], num_experts=[64.0, 64.0]))
    assert d.iloc[0].tolist() == [16, 32, 64, 1, 4, 3] and d.iloc[1].tolist() == [64, 64, 64, 16, 4, 3]
