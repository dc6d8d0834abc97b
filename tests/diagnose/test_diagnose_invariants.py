"""Property tests: a diagnosis never contradicts itself, for random launches of every builtin family,
random given configs and random measurements (hypothesis), with the shipped models and with stub models
whose predictions are arbitrary (the invariants must not depend on the models agreeing)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeweave.diagnose import CONFIG_VALUES, DiagnoseModels, check_invariants, diagnose

GPUS = ["A100-SXM", "H100-SXM", "L40S", "B200", "RTX-PRO-6000-S", "H20"]
_SETTINGS = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@st.composite
def launches(draw, family):
    row = {"gpu": draw(st.sampled_from(GPUS)), "family": family, "dtype": "bfloat16"}
    if family == "gemm":
        row.update(
            m=draw(st.sampled_from([1, 16, 128, 1000, 4096, 16384])),
            n=draw(st.sampled_from([128, 1024, 4096, 14336])),
            k=draw(st.sampled_from([256, 4096, 8192])),
        )
    else:
        row.update(
            num_tokens=draw(st.sampled_from([1, 8, 64, 512, 4096])),
            num_experts=draw(st.sampled_from([8, 64, 128])),
            topk=draw(st.sampled_from([1, 2, 8])),
            hidden_size=draw(st.sampled_from([2048, 4096, 7168])),
            inter_size=draw(st.sampled_from([256, 1344, 1536, 2048])),
            moe_tp_size=1,
            moe_ep_size=1,
        )
        if family == "moe_w13":
            row["source"] = "pipeweave"
    if draw(st.booleans()):  # a given config, feasible or not
        for c, vals in CONFIG_VALUES.items():
            row[c] = draw(st.sampled_from(vals))
    return row


class _NoisyRanker:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def decision_function(self, X):
        return self.rng.normal(size=len(X))


class _NoisyLatency:
    """Arbitrary positive predictions (the envelope times a random factor in [0.01, 10])."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed + 1)

    def predict(self, x):
        return x["t_env_us"].to_numpy(dtype=float) * 10.0 ** self.rng.uniform(-2, 1, len(x))


class _NoisyCeiling(_NoisyLatency):
    pass


def _measured(draw_val, res_lower):
    return None if draw_val is None else float(res_lower * draw_val)


@pytest.fixture(scope="module")
def models(shipped_models):
    return DiagnoseModels.load()  # with the main model for gemm / fused_moe


@pytest.mark.parametrize("family", ["moe_w13", "fused_moe", "gemm"])
@_SETTINGS
@given(data=st.data())
def test_invariants_shipped_models(models, family, data):
    row = data.draw(launches(family))
    top = data.draw(st.integers(1, 6))
    res = diagnose(row, top=top, models=models)
    check_invariants(res)
    # a measurement anywhere from 1e-3x to 100x the lower bound
    factor = data.draw(st.floats(1e-3, 100.0))
    m = diagnose(row, measured_us=factor * res["lower_bound_us"], top=top, models=models)
    check_invariants(m)
    below = factor < 0.98
    assert m["measurement_below_bound"] == below
    if below:
        assert m["pipe_utilization"] is None and m["headroom_verdict"] == "below_physical_bound"
        assert any("below the analytical lower bound" in n for n in m["notes"])
    else:
        assert m["measured_over_ceiling"] == pytest.approx(factor * res["lower_bound_us"] / m["ceiling_us"])


@pytest.mark.parametrize("family", ["moe_w13", "gemm"])
@_SETTINGS
@given(data=st.data())
def test_invariants_any_model_output(family, data):
    seed = data.draw(st.integers(0, 10_000))
    stub = DiagnoseModels(ranker=_NoisyRanker(seed), ceiling=_NoisyCeiling(seed + 7), latency=_NoisyLatency(seed))
    row = data.draw(launches(family))
    res = diagnose(
        row,
        measured_us=data.draw(st.one_of(st.none(), st.floats(0.01, 1e5))),
        top=data.draw(st.integers(1, 8)),
        models=stub,
    )
    check_invariants(res)
    g = [r for r in res["recommendations"] if r["is_given"]]
    assert len(g) == 1 and g[0]["speedup"] == pytest.approx(1.0)
