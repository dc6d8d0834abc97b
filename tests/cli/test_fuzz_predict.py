"""Property-based fuzzing of the predict path (issue 11): random CSV rows never crash it or turn into nonsense.

Random rows (types, magnitudes, blanks, unicode, partial tile plans, unknown labels) are written as CSV
text, parsed as ``pipeweave predict --input`` parses them and passed to the library's predict path
(:func:`pipeweave.api.predict_frame`) in-process. Every row must either be predicted with a finite,
positive latency at or above its analytical lower bound ``t_lower_us``, or be reported with a reason
(the CLI prints it as ``row N``). The model is a tiny real one (3 trees on ~3,000 real rows).
500 examples of 1-24 rows each: about 6,000 random rows per run.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FAMILIES = ["gemm", "moe_w13", "fused_moe", "attention_context", "attention_generation"]
GPUS = ["H100", "H100-SXM", "A100", "B200", "L40S", "RTX-PRO-6000-S", "H20", "T4", "V100-PCIe"]
COLUMNS = [
    "m",
    "n",
    "k",
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "moe_tp_size",
    "moe_ep_size",
    "batch_size",
    "isl",
    "step",
    "num_heads",
    "num_key_value_heads",
    "head_dim",
]
TILES = ["block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"]

_weird = st.sampled_from(
    [
        "",
        " ",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "1e300",
        "1e-9",
        "-0",
        "0",
        "abc",
        "４０９６",
        "1,5",
        "0x10",
        "None",
        "1e6",
        "2**10",
        "∞",
        "🙂",
    ]
)
_plausible = st.sampled_from([1, 2, 4, 7, 8, 16, 32, 64, 96, 128, 256, 512, 1024, 1536, 4096, 8192, 65536])
_number = st.one_of(
    _plausible,
    _plausible,
    _plausible,
    st.integers(-10, 10),
    st.integers(1, 2**26),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    _weird,
    st.text(max_size=4),
)
_tile = st.one_of(st.sampled_from([16, 32, 64, 128, 256]), st.sampled_from([1, 2, 4, 8, 3, 5]), _number)
_label = st.one_of(st.sampled_from(FAMILIES), st.sampled_from(FAMILIES), st.sampled_from(["gemx", "", "GEMM", "é"]))


@st.composite
def launch_rows(draw):
    n = draw(st.integers(1, 24))
    with_tiles = draw(st.booleans())
    extra = draw(st.sets(st.sampled_from(["backend", "kv_cache_dtype", "source", "distribution", "window_size"])))
    rows = []
    for _ in range(n):
        row = {
            "family": draw(_label),
            "gpu": draw(st.one_of(st.sampled_from(GPUS), st.sampled_from(["", "H1000", "ｈ100"]))),
            "dtype": draw(
                st.sampled_from(["bfloat16", "bfloat16", "fp8", "fp8_block", "float16", "bf16", "", "float32", "int8"])
            ),
        }
        for c in COLUMNS:
            row[c] = draw(_number)
        if with_tiles:
            for c in TILES:
                row[c] = draw(st.one_of(_tile, st.just("")))
        for c in extra:
            row[c] = draw(
                {
                    "backend": st.sampled_from(["", "flash_attention", "trtllm_mha", "triton", "cudnn"]),
                    "kv_cache_dtype": st.sampled_from(["", "bfloat16", "fp8", "int2"]),
                    "source": st.sampled_from(["", "aiconfigurator", "pipeweave", "xx"]),
                    "distribution": st.sampled_from(["", "balanced", "power_law_1.2", "power_law_-1", "zipf"]),
                    "window_size": _number,
                }[c]
            )
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def tiny(small_frame):
    from pipeweave.model import PipeweaveRegressor

    return PipeweaveRegressor(n_estimators=3, per_family=False, n_jobs=1).fit(small_frame)


@settings(
    max_examples=500,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(rows=launch_rows())
def test_every_row_is_predicted_sensibly_or_reported(tiny, rows):
    from pipeweave.api import predict_frame
    from pipeweave.frontend import featurize

    text = pd.DataFrame(rows).to_csv(index=False)
    df = pd.read_csv(io.StringIO(text), skipinitialspace=True, index_col=False)  # as `predict --input` parses
    pred, problems = predict_frame(df, tiny)
    assert len(pred) == len(df) == len(problems)
    reported = (problems != "").to_numpy()
    assert pred[reported].isna().all()
    ok = ~reported
    vals = pred[ok].to_numpy(dtype=float)
    assert np.isfinite(vals).all() and (vals > 0).all(), (df[ok], vals)
    if ok.any():
        from pipeweave.frontend import fill_launch_defaults
        from pipeweave.vocab import default_source

        sub = fill_launch_defaults(df[ok])
        src = sub["source"] if "source" in sub else pd.Series("", index=sub.index)
        sub = sub.assign(
            source=src.where(src.notna() & (src.astype(str).str.strip() != ""), sub["family"].map(default_source))
        )
        lower = featurize(sub, baselines=False)["t_lower_us"].to_numpy(dtype=float)
        assert (vals >= lower * (1 - 1e-9)).all()
    for reason in problems[reported]:
        assert isinstance(reason, str) and len(reason) > 10
