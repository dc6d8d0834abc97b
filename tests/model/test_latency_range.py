"""The trained latency range (``latency_range_us_``) and ``PipeweaveRegressor.extrapolated``.

Real rows: the shared ~3,000 GEMM / moe_w13 rows of ``small_frame`` (aiconfigurator and fork sample, bf16);
the latencies passed to ``extrapolated`` are hand-made values around the measured extremes.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError, SchemaMismatchError
from pipeweave.model import PipeweaveRegressor, load_model, read_stamp, save_model

KW = {"n_estimators": 5, "n_jobs": 1, "companion": {}}


@pytest.fixture(scope="module")
def fitted(small_frame):
    return PipeweaveRegressor(**KW).fit(small_frame)


def test_the_range_is_each_familys_fastest_and_slowest_training_row(small_frame, fitted):
    lat = small_frame.groupby("family")["latency_us"].agg(["min", "max"])
    assert set(fitted.latency_range_us_) == {"gemm", "moe_w13"}
    for fam, (lo, hi) in fitted.latency_range_us_.items():
        assert (lo, hi) == (lat.loc[fam, "min"], lat.loc[fam, "max"])


def test_extrapolated_marks_latencies_outside_the_familys_range(fitted):
    lo, hi = fitted.latency_range_us_["gemm"]
    fam = ["gemm", "gemm", "gemm", "gemm", "moe_w13", "gemm"]
    lat = [lo, hi, lo * 0.99, hi * 1.01, hi * 1.01, np.nan]
    got = fitted.extrapolated(fam, lat).tolist()
    moe_hi = fitted.latency_range_us_["moe_w13"][1]
    assert got == [False, False, True, True, hi * 1.01 > moe_hi, False]
    # a family the model has no range for (e.g. an older file) is never marked
    assert fitted.extrapolated(["softmax_fp32"], [1e-9]).tolist() == [False]
    with pytest.raises(DataError, match="2 families for 1 latencies"):
        fitted.extrapolated(["gemm", "gemm"], [1.0])


def test_the_range_round_trips_through_the_model_file(fitted, tmp_path):
    path = save_model(fitted, tmp_path / "m.ubj")
    assert read_stamp(path)["latency_range_us"] == fitted.latency_range_us_
    assert load_model(path).latency_range_us_ == fitted.latency_range_us_


def test_a_file_from_before_the_range_marks_nothing(fitted, tmp_path, save_with_stamp):
    def older(stamp):
        stamp.pop("latency_range_us")
        return stamp

    loaded = load_model(save_with_stamp(fitted, tmp_path / "older.ubj", older))
    assert loaded.latency_range_us_ == {}
    assert loaded.extrapolated(["gemm"], [1e-9]).tolist() == [False]


@pytest.mark.parametrize(
    "bad", [{"gemm": [5.0, 1.0]}, {"gemm": [0.0, 1.0]}, {"gemm": [1.0]}, {"gemm": ["a", 2]}, [1, 2]]
)
def test_a_damaged_range_is_refused(fitted, tmp_path, save_with_stamp, bad):
    path = save_with_stamp(fitted, tmp_path / "bad.ubj", lambda s: {**s, "latency_range_us": bad})
    with pytest.raises(SchemaMismatchError, match="malformed latency_range_us field"):
        load_model(path)
