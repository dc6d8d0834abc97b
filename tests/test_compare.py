"""`pipeweave.compare`: a workload on several GPUs (hand-made launches; predictions of the shipped model)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeweave as pw
from pipeweave import DataError

WORKLOAD = pd.DataFrame(
    {
        "family": ["gemm", "gemm", "gemm"],
        "dtype": ["bfloat16"] * 3,
        "m": [16, 4096, 512],
        "n": [4096, 4096, 14336],
        "k": [4096, 4096, 4096],
        "count": [32, 2, 0.5],
    }
)
GPUS = ["H100", "B200", "L40S"]


@pytest.fixture(scope="module")
def result():
    return pw.compare(WORKLOAD, GPUS)


def test_totals_are_count_weighted_predictions(result):
    before = WORKLOAD.copy()
    s = result.summary.set_index("gpu")
    for g in GPUS:
        p = pw.predict(WORKLOAD.drop(columns="count"), gpu=g, interval=0.8)
        name = pw.get_gpu(g).name
        assert s.at[name, "total_us"] == pytest.approx(float((WORKLOAD["count"] * p["latency_us_pred"]).sum()))
        # the total's band: the launches' bands added end to end
        assert s.at[name, "total_lo_us"] == pytest.approx(float((WORKLOAD["count"] * p["latency_us_lo"]).sum()))
        assert s.at[name, "total_hi_us"] == pytest.approx(float((WORKLOAD["count"] * p["latency_us_hi"]).sum()))
    pd.testing.assert_frame_equal(WORKLOAD, before)  # the caller's frame is not modified
    assert result.baseline == "H100-SXM" and result.launches == result.common_launches == 3
    assert s.at["H100-SXM", "speedup_vs_baseline"] == 1.0
    assert s.at["B200", "speedup_vs_baseline"] == pytest.approx(s.at["H100-SXM", "total_us"] / s.at["B200", "total_us"])
    assert result.summary["total_us"].is_monotonic_increasing  # fastest first
    assert len(result.per_launch) == 3 * len(GPUS) and set(result.per_launch["band"]) == {"seen"}
    shares = result.by_family.groupby("gpu")["share"].sum()
    np.testing.assert_allclose(shares.to_numpy(), 1.0)


def test_overlaps_best_follows_the_bands(result):
    s = result.summary
    lo0, hi0 = s["total_lo_us"].iloc[0], s["total_hi_us"].iloc[0]
    expect = (s["total_lo_us"] <= hi0) & (s["total_hi_us"] >= lo0)
    assert s["overlaps_best"].astype(bool).tolist() == expect.tolist()
    assert bool(s["overlaps_best"].iloc[0])


def test_a_launch_not_predicted_on_one_gpu_leaves_every_total():
    # 128x256x64, 4 stages: 192 KiB of shared memory fits an H100 (227 KiB) but not an L40S (99 KiB)
    tiled = dict(family="gemm", dtype="bfloat16", m=4096, n=4096, k=4096, block_m=128, block_n=256, block_k=64)
    tiled |= dict(group_m=8, num_warps=8, num_stages=4)
    w = pd.DataFrame([tiled, dict(family="gemm", dtype="bfloat16", m=16, n=4096, k=4096)])
    with pytest.warns(UserWarning, match=r"1 of 2 launches could not be predicted on L40S and are left out"):
        res = pw.compare(w, np.array(["H100", "L40S"]), interval=None)
    assert res.common_launches == 1
    per = res.per_launch.set_index(["row", "gpu"])
    assert "shared memory" in per.at[(1, "L40S"), "problem"] and per.at[(1, "H100-SXM"), "problem"] == ""
    assert np.isfinite(per.at[(1, "H100-SXM"), "latency_us_pred"])  # predicted there, left out of the total
    s = res.summary.set_index("gpu")
    assert s.at["H100-SXM", "total_us"] == pytest.approx(per.at[(2, "H100-SXM"), "latency_us_pred"])
    assert s["total_lo_us"].isna().all() and s["overlaps_best"].isna().all()  # no bands asked for
    with pytest.raises(DataError, match="no launch of the workload could be predicted on every GPU"):
        pw.compare(w.iloc[:1], ["H100", "L40S"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"gpus": []}, "non-empty list"),
        ({"gpus": "H100"}, "non-empty list"),
        ({"gpus": ["H100", "H100-SXM"]}, "more than once"),
        ({"gpus": ["H100", "B200"], "baseline": "A100"}, "not among the compared GPUs"),
        ({"gpus": ["H100", "B200"], "interval": 0.7}, "0.5, 0.8 or 0.9|coverage"),
    ],
)
def test_bad_arguments_name_the_value(kwargs, match):
    with pytest.raises(DataError, match=match):
        pw.compare(WORKLOAD, **kwargs)


def test_blank_counts_count_once(result):
    blank = pw.compare(WORKLOAD.assign(count=[32, None, 0.5]), GPUS).summary.set_index("gpu")["total_us"]
    ones = pw.compare(WORKLOAD.assign(count=[32, 1, 0.5]), GPUS).summary.set_index("gpu")["total_us"]
    pd.testing.assert_series_equal(blank, ones)
    assert (blank != result.summary.set_index("gpu")["total_us"]).all()  # count 2 -> 1 changed every total


def test_bad_count_cells_are_named():
    with pytest.raises(DataError, match=r"row 2 \('x'\)"):
        pw.compare(WORKLOAD.assign(count=[1, "x", 2]), GPUS)
    with pytest.raises(DataError, match=r"row 1 \(-1\)"):
        pw.compare(WORKLOAD.assign(count=[-1, 1, 1]), GPUS)
    with pytest.raises(DataError, match="runs nothing"):
        pw.compare(WORKLOAD.assign(count=0), GPUS)


def test_model_without_bands_needs_interval_none():
    from pipeweave.model import PipeweaveRegressor

    rows = WORKLOAD.drop(columns="count").assign(source="user", gpu="H100")
    model = PipeweaveRegressor(n_estimators=3).fit(rows, np.array([20.0, 150.0, 60.0]))  # made-up latencies
    with pytest.raises(DataError, match="no error bands"):
        pw.compare(WORKLOAD, GPUS, model=model)
    assert np.isfinite(pw.compare(WORKLOAD, GPUS, model=model, interval=None).summary["total_us"]).all()


def test_plot_comparison(result):
    ax = pw.plot_comparison(result.summary, baseline=result.baseline)
    assert [t.get_text() for t in ax.get_yticklabels()] == result.summary["gpu"].tolist()[::-1]
    assert len(ax.patches) == len(GPUS)


def test_baseline_names_a_gpu_from_a_spec_file():
    from pathlib import Path

    spec = Path(__file__).resolve().parents[1] / "datasets" / "example_gpu_spec.toml"  # defines RTX-4090
    for name in ("RTX-4090", "RTX 4090", "rtx-4090", str(spec)):
        res = pw.compare(WORKLOAD.iloc[:1], ["H100", spec], baseline=name, interval=None)
        assert res.baseline == "RTX-4090"
        assert res.summary.set_index("gpu").at["RTX-4090", "speedup_vs_baseline"] == 1.0


def test_plot_comparison_speedups_follow_its_baseline(result):
    import matplotlib

    matplotlib.use("Agg")
    ax = pw.plot_comparison(result, baseline="L40S")  # the Comparison itself, another baseline
    labels = [t.get_text().strip() for t in ax.texts]
    s = result.summary.set_index("gpu")
    want = [f"{s.at['L40S', 'total_us'] / s.at[g, 'total_us']:.2f}x" for g in result.summary["gpu"][::-1]]
    assert labels == want and "L40S" in ax.get_title()
    assert [t.get_text().strip() for t in pw.plot_comparison(result).texts][-1] == (
        f"{s.at['H100-SXM', 'total_us'] / result.summary['total_us'].iloc[0]:.2f}x"
    )  # default: the comparison's own baseline (H100), fastest GPU's label last
    with pytest.raises(DataError, match="not a GPU of the summary"):
        pw.plot_comparison(result.summary, baseline="X9")
    with pytest.raises(DataError, match="needs a Comparison or its non-empty summary"):
        pw.plot_comparison(result.summary.iloc[:0])


def test_gpu_arrays_and_numpy_coverages_are_accepted(result):
    res = pw.compare(WORKLOAD, pd.Series(GPUS).unique(), interval=np.float32(0.8))
    pd.testing.assert_frame_equal(res.summary, result.summary)


@pytest.mark.parametrize("name", ["counts", "Count", " cnt", "COUNTS"])
def test_a_misspelled_count_column_is_refused_not_ignored(name):
    with pytest.raises(DataError, match=rf"no 'count' column, but '{name}' looks like one"):
        pw.compare(WORKLOAD.rename(columns={"count": name}), GPUS)


@pytest.mark.parametrize("name", ["token_count", "counter", "compute"])
def test_other_words_are_not_taken_for_count(name):
    res = pw.compare(WORKLOAD.drop(columns="count").assign(**{name: 7}), GPUS, interval=None)
    assert len(res.summary) == len(GPUS)


def test_two_spec_files_with_one_name_are_told_apart():
    """Two hand-made what-if specs (the catalog's H100 under a new name, one with other DRAM bandwidth)."""
    import dataclasses

    from pipeweave.hardware import get_gpu

    a = dataclasses.replace(get_gpu("H100"), name="NX-300", aliases=())
    b = dataclasses.replace(a, dram_bw_gbps=2 * a.dram_bw_gbps)
    with pytest.raises(DataError, match=r"different GPU specs share the name \['NX-300'\]"):
        pw.compare(WORKLOAD, [a, b], interval=None)
    with pytest.raises(DataError, match="GPUs given more than once"):
        pw.compare(WORKLOAD, ["H100", "h100"])


def test_plot_comparison_takes_a_gpu_alias_as_baseline(result):
    import matplotlib

    matplotlib.use("Agg")
    ax = pw.plot_comparison(result, baseline="h100")
    assert "H100-SXM" in ax.get_title()
