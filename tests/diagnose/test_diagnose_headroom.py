"""diagnose(): headroom, speedup and utilization arithmetic (stub models with known outputs)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave import DataError
from pipeweave.diagnose import DiagnoseModels, diagnose
from pipeweave.frontend import featurize

ROW = {
    "gpu": "H100",
    "family": "moe_w13",
    "dtype": "bfloat16",
    "source": "pipeweave",
    "num_tokens": 512,
    "num_experts": 64,
    "topk": 8,
    "hidden_size": 4096,
    "inter_size": 1536,
    "moe_tp_size": 1,
    "moe_ep_size": 1,
    "distribution": "balanced",
    "block_m": 64,
    "block_n": 64,
    "block_k": 32,
    "group_m": 8,
    "num_warps": 4,
    "num_stages": 3,
}


class _Ranker:
    def decision_function(self, X):  # prefer the smallest analytical envelope
        return -X["q_log_env_rel"].to_numpy(dtype=float)


class _Ceiling:
    def __init__(self, value):
        self.value = value

    def predict(self, rows):
        return np.full(len(rows), self.value)


class _Latency:
    def predict(self, x):
        return 2.0 * x["t_env_us"].to_numpy(dtype=float)


def _models(ceiling=40.0):
    return DiagnoseModels(ranker=_Ranker(), ceiling=_Ceiling(ceiling), latency=_Latency())


def test_headroom_speedup_utilization():
    import pandas as pd

    res = diagnose(ROW, measured_us=1234.5, top=3, models=_models())
    f = featurize(pd.DataFrame([{**ROW, "gpu": "H100-SXM"}])).iloc[0]
    assert res["predicted_us"] == pytest.approx(max(2.0 * f["t_env_us"], f["t_lower_us"]))
    fastest = min(r["predicted_us"] for r in res["recommendations"])
    ceiling = max(min(40.0, fastest), f["t_lower_us"])  # the learned ceiling, capped at the fastest ranked config
    assert res["ceiling_us"] == pytest.approx(ceiling)
    assert res["measured_over_ceiling"] == pytest.approx(1234.5 / ceiling)
    assert "headroom_pct" not in res  # no headroom percentage (see the dse report)
    assert res["bound_pipe"] == f["bound_pipe"]
    for p, u in res["pipe_utilization"].items():
        assert u == pytest.approx(min(f[f"t_chip_{p}_us"] / 1234.5, 1.0))
    recs = res["recommendations"]
    assert len(recs) in (3, 4) and [r["rank"] for r in recs] == list(range(1, len(recs) + 1))
    assert sum(r["is_given"] for r in recs) == 1
    for r in recs:
        assert r["speedup"] == pytest.approx(res["predicted_us"] / r["predicted_us"])
        assert r["speedup_vs_measured"] == pytest.approx(1234.5 / r["predicted_us"])
        assert len(r["config"].split(",")) == 6
    assert res["config"] == "64,64,32,8,4,3" and res["config_origin"] == "given"
    assert res["gpu"] == "H100-SXM"


def test_measurement_below_the_physical_bound_is_flagged():
    res = diagnose(ROW, measured_us=123.4, top=3, models=_models())  # the old README value: 4x below the bound
    assert res["lower_bound_us"] > 123.4
    assert res["measurement_below_bound"] and res["headroom_verdict"] == "below_physical_bound"
    assert res["pipe_utilization"] is None and res["measured_over_ceiling"] is None
    assert any("check the units" in n for n in res["notes"])
    assert all("speedup_vs_measured" not in r for r in res["recommendations"])


def test_without_measurement_and_floor():
    res = diagnose(ROW, top=1, models=_models(ceiling=1e-6))
    assert res["measured_over_ceiling"] is None and res["measured_us"] is None
    assert res["utilization_basis"] == "predicted"
    assert res["ceiling_us"] == pytest.approx(res["lower_bound_us"])  # floored at the analytical minimum


def test_headroom_verdicts():
    from pipeweave.diagnose import headroom_verdict

    assert headroom_verdict(None, 10.0, 5.0, 0.1) == (None, None)
    assert headroom_verdict(4.0, 10.0, 5.0, 0.1)[0] == "below_physical_bound"
    assert headroom_verdict(9.0, 10.0, 5.0, 0.1)[0] == "at_or_below_ceiling"
    assert headroom_verdict(10.5, 10.0, 5.0, 0.1)[0] == "within_error_band"
    assert headroom_verdict(12.0, 10.0, 5.0, 0.1)[0] == "likely_headroom"
    assert headroom_verdict(12.0, 10.0, 5.0, None)[0] == "no_error_band"
    # a hundred times the ceiling is more than a config explains: the sentence asks to check units / shape / GPU
    assert "check the units" not in headroom_verdict(12.0, 10.0, 5.0, 0.1)[1]
    verdict, text = headroom_verdict(5000.0, 10.0, 5.0, 0.1)
    assert verdict == "likely_headroom" and "500x is more than a tile config explains" in text


def test_measured_us_beyond_any_launch_is_a_unit_slip():
    with pytest.raises(DataError, match="unit slip"):
        diagnose(ROW, measured_us=4.0e11, models=_models())  # nanoseconds of a 400 s launch


def test_default_config_when_none_given():
    row = {
        k: v for k, v in ROW.items() if k not in ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages")
    }
    res = diagnose(row, top=1, models=_models())
    assert res["config"] == "64,64,64,16,4,3" and res["config_origin"] == "default"  # M=512 > E=64


def test_bad_inputs():
    with pytest.raises(DataError, match="measured"):
        diagnose(ROW, measured_us=-1.0, models=_models())
    with pytest.raises(DataError, match="top"):
        diagnose(ROW, top=0, models=_models())
    with pytest.raises(DataError, match="tile-config space"):
        diagnose({**ROW, "family": "attention_context"}, models=_models())


def test_check_measured_us_accepts_numbers_as_text_and_names_bad_values():
    from pipeweave.diagnose._diagnose import check_measured_us

    assert check_measured_us(None) is None
    assert check_measured_us("805.6") == 805.6 and check_measured_us(12) == 12.0
    for bad in ("abc", 0, -3.0, float("nan"), [1]):
        with pytest.raises(DataError, match="measured_us must be a positive number"):
            check_measured_us(bad)


def test_models_built_elsewhere_claim_no_validated_error_band(tmp_path):
    """The dse report validates the shipped diagnose models only: the same stub models said to come from another
    folder (e.g. rebuilt from a user's rows) give no headroom verdict, and say why."""
    shipped = diagnose(ROW, measured_us=1234.5, top=3, models=_models())
    elsewhere = _models()
    elsewhere.paths = {"ceiling": str(tmp_path / "diagnose_ceiling.ubj")}
    res = diagnose(ROW, measured_us=1234.5, top=3, models=elsewhere)
    assert res["measured_over_ceiling"] == pytest.approx(shipped["measured_over_ceiling"])
    text = " ".join(res["notes"])
    assert "no validated error band" in text and str(tmp_path) in text and "likely exists" not in text
    assert res["headroom_verdict"] == "no_error_band" and shipped["headroom_verdict"] == "likely_headroom"
