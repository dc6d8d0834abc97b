"""The row check of every launch column a family reads (UX audit): defaults validated like given cells, tile plans
and backends refused where a family takes none, tensor-core messages that name only accepted dtypes, long values
echoed cut. The launch rows are hand-made (labelled as such), not measurements."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeweave.frontend import FAMILIES, LAUNCH_DEFAULTS, OPTIONAL_LAUNCH_COLUMNS, row_problems

#: one valid hand-made launch per family that has launch defaults
VALID = {
    "fused_moe": dict(num_tokens=64, hidden_size=4096, inter_size=1536, topk=8, num_experts=64),
    "moe_w13": dict(num_tokens=64, hidden_size=4096, inter_size=1536, topk=8, num_experts=64),
    "attention_context": dict(batch_size=1, isl=4096, num_heads=32, num_key_value_heads=8, head_dim=128),
    "attention_generation": dict(batch_size=1, step=4096, num_heads=32, num_key_value_heads=8, head_dim=128),
}


def _rows(family: str, **cells) -> pd.DataFrame:
    base = {"family": family, "gpu": "H100", "dtype": "bfloat16", **VALID.get(family, {})}
    return pd.DataFrame([{**base, **cells}])


def _reason(family: str, **cells) -> str:
    return str(row_problems(_rows(family, **cells)).iloc[0])


@pytest.mark.parametrize("value", [-1, -100000, 0.5, 99999999, "abc", "inf", float("inf")])
def test_attention_context_step_is_range_checked(value):
    """step of a prefill (tokens already in the KV cache) is a whole number in [0, 2,097,152] (the README's
    domain); a bad cell is refused, never read as 0 or carried into negative DRAM work."""
    reason = _reason("attention_context", step=value)
    assert reason.startswith("step=") and "[0, 2097152]" in reason, reason


@pytest.mark.parametrize("value", [None, "", 0, 4096, 2**21])
def test_attention_context_step_valid_or_blank(value):
    assert _reason("attention_context", step=value) == ""


def test_every_numeric_launch_default_is_validated():
    """Each numeric column of LAUNCH_DEFAULTS is checked where given (a shape column, or an optional one), so no
    family reads a default column unchecked; a given -1 is refused naming the column."""
    for family, defaults in LAUNCH_DEFAULTS.items():
        for col, value in defaults.items():
            if isinstance(value, str):
                continue
            checked = col in FAMILIES[family].shape_columns or col in OPTIONAL_LAUNCH_COLUMNS.get(family, ())
            assert checked, (family, col)
            assert _reason(family, **{col: -1}).startswith(f"{col}=-1"), (family, col)


@pytest.mark.parametrize(
    "family, cells",
    [
        ("rmsnorm", dict(num_tokens=64, hidden_size=64)),
        ("silu_mul", dict(num_tokens=64, inter_size=64)),
        ("layernorm_fp32", dict(num_tokens=64, hidden_size=64, dtype="float32")),
    ],
)
def test_tile_plan_on_a_family_without_one_is_refused(family, cells):
    """A family that chooses its own launch configuration refuses tile cells (as attention rows do): a plan it
    never reads would change nothing, silently."""
    reason = _reason(family, **cells, num_warps=8)
    assert f"tile columns ['num_warps'] are not used by {family}" in reason and "leave them blank" in reason
    assert _reason(family, **cells, num_warps=None) == ""  # blank tile cells are fine


def test_recorded_tile_of_gemm_fp32_is_still_read():
    """gemm_fp32 reads the cuBLAS/CUTLASS tile a source recorded: its tile cells stay accepted."""
    row = dict(m=256, n=256, k=256, dtype="float32", block_m=128, block_n=128, block_k=8, num_warps=8, num_stages=2)
    assert _reason("gemm_fp32", **row) == ""


def test_tensor_core_message_names_only_dtypes_the_family_accepts():
    gemm = dict(m=64, n=64, k=64)
    a100 = _reason("gemm", **gemm, gpu="A100", dtype="fp8")
    assert "no fp8 tensor-core path" in a100 and "['bfloat16', 'float16']" in a100 and "float32" not in a100
    v100 = _reason("gemm", **gemm, gpu="V100", dtype="bfloat16")
    assert "['float16']" in v100
    # a GPU without a tensor-core path for any gemm dtype: no empty list, the CUDA-core family instead
    p100 = _reason("gemm", **gemm, gpu="P100", dtype="bfloat16")
    assert "[]" not in p100 and "use family 'gemm_fp32'" in p100 and "float32" in p100
    moe = _reason("moe_w13", gpu="P100")
    assert "[]" not in moe and "moe_w13 cannot run on" in moe


def test_long_values_are_echoed_cut():
    long = "x" * 5000
    for reason in (_reason(long), _reason("gemm", m=64, n=64, k=64, dtype=long)):
        assert len(reason) < 400 and "..." in reason, reason[:200]


def test_launch_columns_name_what_each_family_reads():
    from pipeweave.frontend import FAMILIES, launch_columns

    assert launch_columns("gemm")[:3] == ("m", "n", "k") and "block_m" in launch_columns("gemm")
    assert "topk" not in launch_columns("gemm") and "topk" in launch_columns("fused_moe")
    assert "step" in launch_columns("attention_context") and "backend" in launch_columns("attention_flashinfer")
    assert "block_m" not in launch_columns("rmsnorm") and launch_columns("no_such_family") == ()
    for name, fam in FAMILIES.items():  # every shape column of every family is among them
        assert set(fam.shape_columns) <= set(launch_columns(name))


def test_a_cell_holding_several_values_is_named_first():
    """Hand-made rows: a list, an array, a dict or a tuple in a launch cell (a Python caller's frame) is the row's
    reason, echoed on one line; the rows around it keep their own verdicts and nothing raises."""
    import numpy as np

    base = {"family": "gemm", "gpu": "H100", "dtype": "bfloat16", "m": 64, "n": 64, "k": 64}
    rows = pd.DataFrame(
        [
            base,
            {**base, "m": [64, 128]},
            {**base, "k": np.arange(40)},
            {**base, "family": {"gemm": 1}},
            {**base, "n": (64,)},
            {**base, "dtype": ["bf16"], "m": -1},
            {**base, "m": -1},
        ]
    )
    reasons = row_problems(rows).tolist()
    assert reasons[0] == "" and reasons[6].startswith("m=-1 is outside its domain")
    assert (
        reasons[1] == "m holds a list ([64, 128]), not one value: give one number or name per cell (one row per launch)"
    )
    assert reasons[2].startswith("k holds an array (array([ 0, 1, 2,") and "\n" not in reasons[2]
    assert reasons[2].endswith("...), not one value: give one number or name per cell (one row per launch)")
    assert reasons[3].startswith("family holds a dict") and reasons[4].startswith("n holds a tuple ((64,))")
    assert reasons[5].startswith("dtype holds a list (['bf16'])")  # named before the other bad cell of the row


def test_featurize_names_a_bad_shape_by_row_label_in_the_right_number():
    """Hand-made rows given to the frontend directly (no row check first): the label is the frame's, not a row
    number counted from 1, and one row is one row."""
    from pipeweave import DataError
    from pipeweave.frontend import featurize

    rows = pd.DataFrame([{"family": "gemm", "gpu": "H100", "dtype": "bfloat16", "m": -1, "n": 64, "k": 64}], index=[7])
    with pytest.raises(
        DataError, match=r"family 'gemm': 1 row has missing or non-positive shape values \(row label 7: m=-1\)"
    ):
        featurize(rows)
