"""goal_status on a tiny hand-made results dict (not measurements): goal met / missed, the miss size,
the best baseline and the unflagged column."""

from __future__ import annotations

import math

from pipeweave.evaluation import ACCURACY_GOALS, goal_status
from pipeweave.evaluation._report import _goals_section


def _rec(mape, n_missing=0):
    return {"mape": mape, "n": 10, "n_missing": n_missing}


def _results(protocol="logo"):
    return {
        "protocol": protocol,
        "data_fingerprint": "x",
        "versions": {},
        "methods": ["pipeweave", "pipeweave_no_sass", "tilesight", "xgboost_raw"],
        "regimes": {},
        "families": {
            "gemm_bf16": {
                "family": "gemm",
                "source": "s",
                "folds": ["ada", "hopper"],
                "n_rows": 20,
                "generations": ["ada", "hopper"],
                "gpus": {},
            },
            "softmax_fp32": {
                "family": "softmax_fp32",
                "source": "s",
                "folds": ["volta"],
                "n_rows": 10,
                "generations": ["volta"],
                "gpus": {},
            },
        },
        "results": {
            "gemm_bf16": {
                "pipeweave": {"ada": _rec(12.5), "hopper": _rec(8.0), "all": _rec(10.2)},
                "pipeweave_no_sass": {"ada": _rec(1.0), "hopper": _rec(1.0), "all": _rec(1.0)},
                "tilesight": {"ada": _rec(11.0), "hopper": _rec(30.0), "all": _rec(20.0)},
                "xgboost_raw": {"ada": _rec(5.0, n_missing=3), "hopper": _rec(40.0), "all": _rec(22.0)},
            },
            "softmax_fp32": {"pipeweave": {"volta": _rec(3.0), "all": _rec(3.0)}},
        },
        "results_unflagged": {"gemm_bf16": {"pipeweave": {"ada": _rec(9.5)}}},
        "by_gpu": {},
        "by_regime": {},
        "errors": [],
    }


def test_goal_rows_per_held_out_generation():
    st = goal_status(_results()).set_index("generation")
    assert list(st.index) == ["ada", "hopper"]  # softmax_fp32 has no goal; 'all' is not a logo column
    ada, hopper = st.loc["ada"], st.loc["hopper"]
    assert ada["goal_mape"] == ACCURACY_GOALS["gemm_bf16"]["logo"] == 10.0
    assert not ada["met"] and math.isclose(ada["miss_by"], 2.5)
    assert hopper["met"] and hopper["miss_by"] == 0.0
    # ablations are not baselines; a baseline that failed on some rows does not compete
    assert ada["best_baseline"] == "tilesight" and not ada["below_every_baseline"]
    assert hopper["best_baseline"] == "tilesight" and hopper["below_every_baseline"]
    assert ada["mape_unflagged"] == 9.5 and math.isnan(hopper["mape_unflagged"])


def test_unseen_shape_goal_is_on_all_rows_pooled():
    st = goal_status(_results("unseen-shape"))
    assert list(st["generation"]) == ["all"] and st["goal_mape"].iloc[0] == 5.0 and not st["met"].iloc[0]


def test_custom_goals_and_report_section():
    st = goal_status(_results(), goals={"softmax_fp32": {"logo": 5.0}})
    assert list(st["family_key"]) == ["softmax_fp32"] and bool(st["met"].iloc[0])
    md = "\n".join(_goals_section(_results()))
    assert "## Goals" in md and "1 of 2 cells met" in md and "missed by 2.5" in md
    assert "tilesight 11.0 is lower" in md


def test_report_goal_columns_run_oldest_generation_first(monkeypatch):
    import pipeweave.evaluation._goals as goals_mod

    monkeypatch.setitem(goals_mod.ACCURACY_GOALS, "softmax_fp32", {"logo": 5.0})
    md = "\n".join(_goals_section(_results()))
    header = next(line for line in md.splitlines() if line.startswith("| family"))
    assert header == "| family | goal | volta | ada | hopper |"  # softmax's volta column comes first
    assert "2 of 3 cells met" in md


def test_unseen_gpu_goal_is_per_held_out_gpu_and_listed_per_family():
    res = _results("unseen-gpu")
    res["families"]["gemm_bf16"]["gpus"] = {"L40S": "ada", "H100": "hopper", "H200": "hopper"}
    res["by_gpu"] = {
        "gemm_bf16": {
            "pipeweave": {"L40S": _rec(14.0), "H100": _rec(6.0), "H200": _rec(9.0)},
            "tilesight": {"L40S": _rec(12.0), "H100": _rec(30.0), "H200": _rec(31.0)},
        }
    }
    st = goal_status(res).set_index("generation")
    assert list(st.index) == ["L40S", "H100", "H200"]  # one cell per held-out GPU, from by_gpu
    assert (st["goal_mape"] == ACCURACY_GOALS["gemm_bf16"]["unseen-gpu"]).all()
    assert not st.loc["L40S", "met"] and math.isclose(st.loc["L40S", "miss_by"], 4.0)
    assert st.loc["H100", "met"] and st.loc["H200", "met"]
    assert st["mape_unflagged"].isna().all()  # the unflagged figures are per generation, not per GPU
    md = "\n".join(_goals_section(res))
    assert "2 of 3 cells met" in md
    row = next(line for line in md.splitlines() if line.startswith("| gemm_bf16"))
    assert "| 2 of 3 |" in row
    assert (
        "L40S (ada) 14.0 **missed by 4.0** (tilesight 12.0 is lower); H100 (hopper) 6.0 met; H200 (hopper) 9.0 met"
        in row
    )


def test_a_miss_that_rounds_to_the_goal_shows_two_decimals():
    """Hand-made results: 10.04% against a 10% goal is a miss of 0.04 points, not "missed by 0.0"."""
    res = _results("unseen-gpu")
    res["families"]["gemm_bf16"]["gpus"] = {"H100": "hopper", "H200": "hopper"}
    res["by_gpu"] = {
        "gemm_bf16": {
            "pipeweave": {"H100": _rec(10.04), "H200": _rec(10.3)},
            "tilesight": {"H100": _rec(30.0), "H200": _rec(31.0)},
        }
    }
    md = "\n".join(_goals_section(res))
    row = next(line for line in md.splitlines() if line.startswith("| gemm_bf16"))
    assert "H100 (hopper) 10.04 **missed by 0.04**" in row
    assert "H200 (hopper) 10.3 **missed by 0.3**" in row
    assert "missed by 0.0*" not in row
