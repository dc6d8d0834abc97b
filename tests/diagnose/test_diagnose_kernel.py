"""User kernels (--kernel): DRAM traffic from the pointer shapes in --signature, block-size search with a
grid expression, one order for the given config and the variants, a measurement below the physical bound
flagged; `sass --kernel` fills block constexprs from --config like `diagnose`; explain/predict --kernel."""

from __future__ import annotations

import json

import pytest

from pipeweave import DataError
from pipeweave.cli.main import main
from pipeweave.diagnose import (
    check_invariants,
    eval_launch_expr,
    split_signature_shapes,
)

ADD_RELU = """import triton
import triton.language as tl


@triton.jit
def add_relu(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=m)
"""
N = 16_777_216
SIG = f"x_ptr=*fp32[{N}],y_ptr=*fp32[{N}],out_ptr=*fp32[{N}],n={N},BLOCK=1024"


def test_signature_shapes_and_grid_expressions():
    text, shapes = split_signature_shapes("a=*bf16[4096x4096],b=*fp32[16, 8],n=5,c=*fp16")
    assert text == "a=*bf16,b=*fp32,n=5,c=*fp16"
    assert shapes == {"a": ("bf16", 4096 * 4096, 2 * 4096 * 4096), "b": ("fp32", 128, 512)}
    assert eval_launch_expr("cdiv(n, BLOCK)", {"n": 1000, "BLOCK": 256}) == 4
    assert eval_launch_expr("M // 64 * 2", {"M": 4096}) == 128
    assert eval_launch_expr(7, {}) == 7
    with pytest.raises(DataError, match="not an integer launch argument"):
        eval_launch_expr("cdiv(q, 4)", {"n": 1})
    with pytest.raises(DataError, match="not an integer expression"):
        eval_launch_expr("__import__('os')", {})
    with pytest.raises(DataError, match="unknown element type"):
        split_signature_shapes("x=*fp33[4]")


@pytest.fixture()
def kernel_file(tmp_path):
    pytest.importorskip("triton")
    k = tmp_path / "add_relu.py"
    k.write_text(ADD_RELU)
    return f"{k}:add_relu"


@pytest.mark.triton
def test_user_kernel_dram_from_signature(capsys, kernel_file):
    argv = [
        "diagnose",
        "--gpu",
        "H100",
        "--kernel",
        kernel_file,
        "--config",
        "1,1024,1,1,4,1",
        "--signature",
        SIG,
        "--grid",
        "cdiv(n, BLOCK)",
        "--json",
    ]
    assert main([*argv, "--measured-us", "70"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["dram_bytes"] == 3 * 4 * N and obj["dram_bytes_source"] == "pointer shapes in --signature"
    assert obj["bound_pipe"] == "dram" and obj["grid"] == N // 1024
    # 201 MB at the H100's 3.35 TB/s: about 60 us, not the 5 us the instruction mix alone gives
    assert 50 < obj["ceiling_us"] < 70 and obj["lower_bound_us"] <= obj["ceiling_us"]
    assert all(0 <= u <= 1 for u in obj["pipe_utilization"].values())
    assert not obj["measurement_below_bound"]
    # a measurement 10x under the DRAM bound is flagged, not turned into utilizations
    assert main([*argv, "--measured-us", "6"]) == 0
    low = json.loads(capsys.readouterr().out)
    assert low["measurement_below_bound"] and low["pipe_utilization"] is None
    assert any("check the units" in n for n in low["notes"])


@pytest.mark.triton
def test_user_kernel_search_varies_block_sizes(capsys, kernel_file):
    assert (
        main(
            [
                "diagnose",
                "--gpu",
                "H100",
                "--kernel",
                kernel_file,
                "--config",
                "1,1024,1,1,4,1",
                "--signature",
                SIG,
                "--grid",
                "cdiv(n, BLOCK)",
                "--search",
                "--top",
                "20",
                "--json",
            ]
        )
        == 0
    )
    obj = json.loads(capsys.readouterr().out)
    recs = obj["recommendations"]
    check_invariants(obj)
    blocks = {r["blocks"].get("BLOCK") for r in recs if r["blocks"]}
    assert {512, 2048, 4096} <= blocks  # block sizes searched, not only warps/stages
    assert {r["grid"] for r in recs} >= {N // 512, N // 4096}  # the grid follows the block size
    assert obj["ceiling_us"] == min(r["predicted_us"] for r in recs)
    assert sum(r["is_given"] for r in recs) == 1
    # every variant is DRAM-bound at the same time: a tie, said so, with the given config first among them
    assert recs[0]["is_given"] and any("tie at the dram bound" in n for n in obj["notes"])


@pytest.mark.triton
def test_sass_kernel_fills_block_constants_from_config(capsys, tmp_path):
    pytest.importorskip("triton")
    k = tmp_path / "tile.py"
    k.write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def tile(x_ptr, n, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK_SIZE_M * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_M * BLOCK_SIZE_N)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)\n"
    )
    assert (
        main(
            [
                "sass",
                "--kernel",
                f"{k}:tile",
                "--arch",
                "sm_90",
                "--config",
                "16,32,16,1,4,1",
                "--signature",
                "x_ptr=*fp32[1048576],n=1048576",
                "--grid",
                "cdiv(n, BLOCK_SIZE_M * BLOCK_SIZE_N)",
                "--json",
            ]
        )
        == 0
    )
    obj = json.loads(capsys.readouterr().out)
    assert obj["grid"] == 1048576 // 512 and obj["config"]["block_m"] == 16


@pytest.mark.triton
def test_explain_and_predict_kernel(capsys, kernel_file):
    base = [
        "--gpu",
        "H100",
        "--kernel",
        kernel_file,
        "--config",
        "1,1024,1,1,4,1",
        "--signature",
        SIG,
        "--grid",
        "cdiv(n, BLOCK)",
        "--json",
    ]
    assert main(["predict", *base]) == 0
    p = json.loads(capsys.readouterr().out)
    assert p["predicted_us"] > 50 and "analytical SASS bound" in p["method"]
    assert main(["explain", *base]) == 0
    e = json.loads(capsys.readouterr().out)
    assert e["predicted_us"] == pytest.approx(p["predicted_us"]) and e["bound_pipe"] == "dram"
    assert "--grid not given" not in capsys.readouterr().err
    one_cta = [a for i, a in enumerate(base) if a != "--grid" and (i == 0 or base[i - 1] != "--grid")]
    assert main(["explain", *one_cta]) == 0
    res = capsys.readouterr()
    assert "note: --grid not given: the launch is taken as 1 CTA" in res.err
    one = json.loads(res.out)
    # the DRAM bytes come from the signature; the instruction work is one CTA's, far below the whole grid's
    assert one["pipe_times_us"]["alu"] < e["pipe_times_us"]["alu"] / 100
