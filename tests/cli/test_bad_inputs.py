"""Every bad input gets a clear answer (issue 11): a table of bad-input cases over every subcommand.

Each case runs the CLI in-process (``pipeweave.cli.main.main``) and asserts the exit status, that no
traceback is printed, that stderr names the bad value and (where one exists) the fix, and that every
input file in the case's folder is byte-identical afterwards. The launch rows and spec files are
hand-made (labelled as such); the model is a tiny one trained on a few hundred real rows.
Subprocesses only where needed: the segfault of a truncated model and ``kill -9`` during a write.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pipeweave.cli.main import main

# ------------------------------------------------------------------------------------- fixtures
GOOD_GEMM = "gemm,H100,bfloat16,4096,4096,4096"
HEAD_GEMM = "family,gpu,dtype,m,n,k"


@pytest.fixture(scope="module")
def model(tmp_path_factory, data_dir):
    """A tiny real model (gemm, fused_moe, moe_w13, attention on a few hundred real rows, 3 trees)."""
    path = tmp_path_factory.mktemp("model") / "tiny.ubj"
    rc = main(
        [
            "train",
            "--data",
            str(data_dir),
            "--families",
            "gemm",
            "fused_moe",
            "moe_w13",
            "attention_context",
            "attention_generation",
            "--sources",
            "aiconfigurator",
            "pipeweave",
            "--max-rows-per-group",
            "100",
            "--n-estimators",
            "3",
            "--no-progress",
            "--out",
            str(path),
        ]
    )
    assert rc == 0
    return path


def _spec_text(**changes: str) -> str:
    """The example RTX 4090 spec file with some lines replaced (hand-made variants)."""
    from pipeweave._paths import DATASETS_DIR

    text = (DATASETS_DIR / "example_gpu_spec.toml").read_text(encoding="utf-8")
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    return text


def _csv(*rows: str, head: str = HEAD_GEMM) -> str:
    return "\n".join([head, *rows]) + "\n"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse usage errors
        rc = int(exc.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


# --------------------------------------------------------------------------------------- cases
_REPO = Path(__file__).resolve().parents[2]
#: a valid diagnose launch (flags), with --gpu first so that a case can replace it
_DIAG = [
    "--gpu",
    "H100",
    "--family",
    "moe_w13",
    "--num-tokens",
    "64",
    "--num-experts",
    "8",
    "--topk",
    "2",
    "--hidden-size",
    "4096",
    "--inter-size",
    "1536",
]
# (id, files {name: text|bytes}, argv (with {model} {tmp} placeholders), expected rc, needles in stderr)
_ROW = "{tmp}/rows.csv"
P = ["predict", "--model", "{model}"]
PI = [*P, "--input", _ROW]
PO = [*PI, "--output", "{tmp}/out.csv"]


def _row_case(cid: str, row: str, needles: list[str], head: str = HEAD_GEMM) -> tuple:
    """A CSV with one good row and one bad row: partial success (exit 1), the bad row reported as row 2."""
    return (cid, {"rows.csv": _csv(GOOD[head], row, head=head)}, PO, 1, ["row 2", *needles])


MOE = "family,gpu,dtype,num_tokens,hidden_size,inter_size,topk,num_experts"
FMOE = "family,gpu,dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution"
ATT = "family,gpu,dtype,batch_size,isl,num_heads,num_key_value_heads,head_dim"
GEN = "family,gpu,dtype,batch_size,step,num_heads,num_key_value_heads,head_dim"
# a GEMM row (the test model knows GEMM) beside a row kernel's columns
ROW = "family,gpu,dtype,m,n,k,num_tokens,hidden_size,inter_size"
TILE = "family,gpu,dtype,m,n,k,block_m,block_n,block_k,group_m,num_warps,num_stages"
GOOD = {  # one valid row per header (hand-made launches)
    HEAD_GEMM: GOOD_GEMM,
    HEAD_GEMM + ",source": GOOD_GEMM + ",aiconfigurator",
    "family,gpu,dtype,m,n,k,block_m": GOOD_GEMM + ",",
    TILE: GOOD_GEMM + ",64,64,64,8,4,3",
    MOE: "moe_w13,H100,bfloat16,64,4096,1536,8,64",
    MOE + ",distribution": "moe_w13,H100,bfloat16,64,4096,1536,8,64,power_law_1.2",
    FMOE: "fused_moe,H100,bfloat16,64,4096,1536,8,64,1,1,balanced",
    ATT: "attention_context,H100,bfloat16,1,128,32,8,128",
    ATT + ",backend": "attention_context,H100,bfloat16,1,128,32,8,128,trtllm_mha",
    ATT + ",kv_cache_dtype": "attention_context,H100,bfloat16,1,128,32,8,128,fp8",
    ATT + ",block_m": "attention_context,H100,bfloat16,1,128,32,8,128,",
    GEN: "attention_generation,H100,bfloat16,1,128,32,8,128",
    ROW: GOOD_GEMM + ",,,",
    GEN + ",isl": "attention_generation,H100,bfloat16,1,128,32,8,128,1",
    HEAD_GEMM + ",backend": GOOD_GEMM + ",",
}

CASES: list[tuple] = [
    # ---- CSV rows: bad cells are reported by row number, the good row is still predicted (exit 1)
    _row_case("m-fraction", "gemm,H100,bfloat16,4096.5,64,64", ["m=4096.5", "whole number"]),
    _row_case("m-tiny", "gemm,H100,bfloat16,1e-9,64,64", ["m=1e-09"]),
    _row_case("m-huge", "gemm,H100,bfloat16,1e300,64,64", ["m=1e+300", "16777216"]),
    _row_case("m-text", "gemm,H100,bfloat16,abc,64,64", ["m=abc", "not a finite number"]),
    _row_case("m-blank", "gemm,H100,bfloat16,,64,64", ["m is blank"]),
    _row_case("m-negative", "gemm,H100,bfloat16,-5,64,64", ["m=-5"]),
    _row_case("m-inf", "gemm,H100,bfloat16,inf,64,64", ["m=inf"]),
    _row_case("m-unicode", "gemm,H100,bfloat16,４０９６,64,64", ["m=４０９６"]),
    _row_case("m-boolean", "gemm,H100,bfloat16,True,64,64", ["m=True", "not a finite number"]),
    _row_case("k-zero", "gemm,H100,bfloat16,64,64,0", ["k=0"]),
    _row_case("memory", "gemm,H100,bfloat16,16777216,16777216,1048576", ["GiB", "H100"]),
    # a shape column spelled another way (the flag's short form, upper case) is named with its canonical name
    (
        "column-kv-alias",
        {
            "rows.csv": "family,gpu,dtype,batch_size,isl,num_heads,num_kv_heads,head_dim\n"
            "attention_context,H100,bfloat16,1,128,32,8,128\n"
        },
        PO,
        2,
        ["row 1", "missing column 'num_key_value_heads'", "the table has 'num_kv_heads': rename it to"],
    ),
    (
        "column-upper",
        {"rows.csv": "family,gpu,dtype,M,N,K\ngemm,H100,bfloat16,64,64,64\n"},
        PO,
        2,
        ["the table has 'M'"],
    ),
    # the row kernels and FP32 GEMM are checked against the GPU's memory too (32 TiB of bf16 activations)
    _row_case(
        "memory-rmsnorm", "rmsnorm,H100,bfloat16,,,,16777216,1048576,", ["rmsnorm launch needs 65,536.0 GiB"], head=ROW
    ),
    _row_case("memory-softmax", "softmax_fp32,H100,float32,,,,16777216,1048576,", ["softmax_fp32", "GiB"], head=ROW),
    _row_case(
        "memory-silu", "silu_mul,H100,bfloat16,,,,16777216,,1048576", ["silu_mul launch needs 98,304.0"], head=ROW
    ),
    _row_case("memory-fp32-gemm", "gemm_fp32,H100,float32,16777216,16777216,16", ["gemm_fp32 launch needs"]),
    _row_case("dtype-typo", "gemm,H100,bfloat61,64,64,64", ["'bfloat61'", "did you mean 'bfloat16'"]),
    _row_case("dtype-not-of-family", "gemm_fp32,H100,bfloat16,64,64,64", ["supports dtypes ['float32']"]),
    _row_case("fp8-on-a100", "gemm,A100,fp8,64,64,64", ["'A100'", "no fp8 tensor-core path"]),
    _row_case("family-typo", "gemx,H100,bfloat16,64,64,64", ["'gemx'", "did you mean 'gemm'"]),
    _row_case("family-blank", ",H100,bfloat16,64,64,64", ["family is blank", "gemm"]),
    _row_case("gpu-blank", "gemm,,bfloat16,64,64,64", ["gpu is blank", "--gpu"]),
    _row_case("gpu-unknown", "gemm,H1000,bfloat16,64,64,64", ["H1000"]),
    _row_case(
        "block-negative",
        "gemm,H100,bfloat16,4096,4096,4096,-128,64,64,8,4,3",
        ["block_m=-128", "power of two"],
        head=TILE,
    ),
    _row_case("block-zero", "gemm,H100,bfloat16,4096,4096,4096,0,64,64,8,4,3", ["block_m=0"], head=TILE),
    _row_case("block-63", "gemm,H100,bfloat16,4096,4096,4096,63,64,64,8,4,3", ["block_m=63"], head=TILE),
    _row_case("tile-4096", "gemm,H100,bfloat16,4096,4096,4096,4096,4096,4096,8,4,3", ["block_m=4096"], head=TILE),
    _row_case(
        "tile-smem",
        "gemm,H100,bfloat16,4096,4096,4096,256,256,256,1,8,4",
        ["256,256,256,1,8,4", "shared memory", "Triton would refuse"],
        head=TILE,
    ),
    _row_case(
        "tile-regs", "gemm,H100,bfloat16,4096,4096,4096,256,256,32,1,4,2", ["registers", "more warps"], head=TILE
    ),
    _row_case("tile-warps-3", "gemm,H100,bfloat16,4096,4096,4096,64,64,64,8,3,3", ["num_warps=3"], head=TILE),
    _row_case("tile-stages-0", "gemm,H100,bfloat16,4096,4096,4096,64,64,64,8,4,0", ["num_stages=0"], head=TILE),
    _row_case(
        "tile-lone-block_m",
        "gemm,H100,bfloat16,4096,4096,4096,128",
        ["block_m=128", "block_n, block_k"],
        head="family,gpu,dtype,m,n,k,block_m",
    ),
    _row_case("topk-gt-experts", "moe_w13,H100,bfloat16,64,4096,1536,80,64", ["topk=80", "num_experts=64"], head=MOE),
    _row_case("topk-zero", "moe_w13,H100,bfloat16,64,4096,1536,0,64", ["topk=0"], head=MOE),
    _row_case(
        "ep-gt-experts",
        "fused_moe,H100,bfloat16,64,4096,1536,8,64,1,128,balanced",
        ["moe_ep_size=128", "num_experts=64"],
        head=FMOE,
    ),
    _row_case(
        "tp-not-dividing", "fused_moe,H100,bfloat16,64,4096,1536,8,64,7,1,balanced", ["moe_tp_size=7"], head=FMOE
    ),
    _row_case(
        "moe-w13-distribution-negative",
        "moe_w13,H100,bfloat16,64,4096,1536,8,64,power_law_-1",
        ["distribution=power_law_-1", "alpha >= 0"],
        head=MOE + ",distribution",
    ),
    _row_case(
        "distribution-garbage",
        "fused_moe,H100,bfloat16,64,4096,1536,8,64,1,1,garbage",
        ["distribution=garbage", "power_law_"],
        head=FMOE,
    ),
    _row_case(
        "kv-gt-heads",
        "attention_context,H100,bfloat16,1,128,8,12,128",
        ["num_key_value_heads=12", "must divide"],
        head=ATT,
    ),
    _row_case("kv-not-dividing", "attention_context,H100,bfloat16,1,128,32,12,128", ["num_heads=32"], head=ATT),
    _row_case("head-dim-7", "attention_context,H100,bfloat16,1,128,32,8,7", ["head_dim=7", "multiple of 8"], head=ATT),
    _row_case("isl-zero", "attention_context,H100,bfloat16,1,0,32,8,128", ["isl=0"], head=ATT),
    _row_case("batch-fraction", "attention_context,H100,bfloat16,1.5,128,32,8,128", ["batch_size=1.5"], head=ATT),
    _row_case("decode-step-zero", "attention_generation,H100,bfloat16,1,0,32,8,128", ["step=0"], head=GEN),
    _row_case(
        "decode-context-in-isl",
        "attention_generation,H100,bfloat16,16,1,32,8,128,4096",
        ["isl=4096", "KV-cache length is step"],
        head=GEN + ",isl",
    ),
    _row_case(
        "gemm-with-backend",
        "gemm,H100,bfloat16,64,64,64,flash_attention",
        ["backend='flash_attention'", "has no backend"],
        head=HEAD_GEMM + ",backend",
    ),
    _row_case(
        "backend-unknown",
        "attention_context,H100,bfloat16,1,128,32,8,128,cudnn",
        ["'cudnn'", "flash_attention"],
        head=ATT + ",backend",
    ),
    _row_case(
        "kv-dtype-int2",
        "attention_context,H100,bfloat16,1,128,32,8,128,int2",
        ["'int2'", "fp8"],
        head=ATT + ",kv_cache_dtype",
    ),
    _row_case(
        "tiles-on-attention",
        "attention_context,H100,bfloat16,1,128,32,8,128,64",
        ["not used by attention_context", "leave them blank"],
        head=ATT + ",block_m",
    ),
    _row_case(
        "source-unknown",
        "gemm,H100,bfloat16,64,64,64,xx",
        ["unknown source 'xx'", "aiconfigurator"],
        head=HEAD_GEMM + ",source",
    ),
    (
        "gpu-conflicts-flag",
        {"rows.csv": _csv("gemm,A100,bfloat16,64,64,64", "gemm,H100,bfloat16,64,64,64")},
        [*PO, "--gpu", "H100"],
        1,
        ["row 1", "'A100'", "--gpu is 'H100-SXM'"],
    ),
    (
        "all-rows-bad",
        {"rows.csv": _csv("gemm,H100,bfloat16,abc,64,64")},
        PO,
        2,
        ["row 1", "m=abc", "no row predicted", "nothing written to"],
    ),
    # ---- CSV files
    ("csv-empty", {"rows.csv": ""}, PO, 2, ["rows.csv", "is empty"]),
    ("csv-header-only", {"rows.csv": HEAD_GEMM + "\n"}, PO, 2, ["header but no rows"]),
    ("csv-utf16", {"rows.csv": _csv(GOOD_GEMM).encode("utf-16")}, PO, 2, ["UTF-16", "UTF-8"]),
    ("csv-binary", {"rows.csv": bytes(range(256)) * 8}, PO, 2, ["binary", "UTF-8 CSV"]),
    ("csv-is-parquet", {"rows.csv": b"PAR1\x15\x04" + bytes(64)}, PO, 2, ["is a parquet file", "read_parquet"]),
    ("csv-tab-separated", {"rows.csv": _csv(GOOD_GEMM).replace(",", "\t")}, PO, 2, ["is tab-separated", "comma"]),
    ("input-parquet-suffix", {"rows.parquet": b"PAR1"}, [*P, "--input", "{tmp}/rows.parquet"], 2, ["--dask"]),
    (
        "output-parquet-suffix",
        {"rows.csv": _csv(GOOD_GEMM)},
        [*PI, "--output", "{tmp}/out.parquet"],
        2,
        ["would hold CSV text", ".csv"],
    ),
    ("csv-ragged-long", {"rows.csv": _csv(GOOD_GEMM + ",7")}, PO, 2, ["more fields than its header"]),
    ("csv-ragged-mixed", {"rows.csv": _csv(GOOD_GEMM, GOOD_GEMM + ",7")}, PO, 2, ["line 3", "as many fields"]),
    (
        "csv-duplicate-columns",
        {"rows.csv": _csv(GOOD_GEMM + ",8", head=HEAD_GEMM + ",m")},
        PO,
        2,
        ["['m']", "more than once"],
    ),
    (
        "csv-not-utf8",
        {"rows.csv": _csv("gemm,H100,bfloat16,64,64,64").encode() + b"\xff\xfe\xfa,1\n" + b"x" * 64},
        PO,
        2,
        ["not UTF-8"],
    ),
    ("csv-missing", {}, PO, 2, ["rows.csv", "not found"]),
    ("csv-is-directory", {"rows.csv/keep": "x"}, PO, 2, ["is a directory"]),
    (
        "csv-no-gpu-column",
        {"rows.csv": _csv("gemm,bfloat16,64,64,64", head="family,dtype,m,n,k")},
        PO,
        2,
        ["no `gpu` column", "--gpu"],
    ),
    (
        "csv-no-family-column",
        {"rows.csv": _csv("H100,bfloat16,64,64,64", head="gpu,dtype,m,n,k")},
        PO,
        2,
        ["missing column 'family'"],
    ),
    (
        "csv-missing-shape-column",
        {"rows.csv": _csv("gemm,H100,bfloat16,64,64", head="family,gpu,dtype,m,n")},
        PO,
        2,
        ["missing column 'k'"],
    ),
    # a column the whole file lacks is named once for every row it fails, not once per row
    (
        "csv-missing-shape-column-many-rows",
        {
            "rows.csv": _csv(
                "gemm,H100,bfloat16,64,64",
                "gemm,H100,bfloat16,128,64",
                "gemm,H100,bfloat16,256,64",
                head="family,gpu,dtype,m,n",
            )
        },
        PO,
        2,
        ["rows 1-3: not predicted: missing column 'k' for family 'gemm'"],
    ),
    # ---- output paths
    ("output-is-input", {"rows.csv": _csv(GOOD_GEMM)}, [*PI, "--output", _ROW], 2, ["never overwrites its input"]),
    (
        "output-symlink-to-input",
        {"rows.csv": _csv(GOOD_GEMM), "@link.csv": "rows.csv"},
        [*PI, "--output", "{tmp}/link.csv"],
        2,
        ["is the input file"],
    ),
    (
        "output-hardlink-to-input",
        {"rows.csv": _csv(GOOD_GEMM), "#hard.csv": "rows.csv"},
        [*PI, "--output", "{tmp}/hard.csv"],
        2,
        ["is the input file"],
    ),
    (
        "output-directory",
        {"rows.csv": _csv(GOOD_GEMM), "outdir/keep": "x"},
        [*PI, "--output", "{tmp}/outdir"],
        2,
        ["outdir", "is a directory"],
    ),
    (
        "output-under-a-file",
        {"rows.csv": _csv(GOOD_GEMM)},
        [*PI, "--output", "{tmp}/rows.csv/out.csv"],
        2,
        ["which is a file"],
    ),
    (
        "output-unwritable",
        {"rows.csv": _csv(GOOD_GEMM)},
        [*PI, "--output", "/proc/pipeweave_out.csv"],
        2,
        ["/proc", "cannot create files"],
    ),
    (
        "output-without-input",
        {},
        [*P, "--gpu", "H100", "--family", "gemm", "--m", "8", "--n", "8", "--k", "8", "--output", "{tmp}/o.csv"],
        2,
        ["needs --input"],
    ),
    ("json-with-input", {"rows.csv": _csv(GOOD_GEMM)}, [*PI, "--json"], 2, ["--json", "drop"]),
    ("flags-with-input", {"rows.csv": _csv(GOOD_GEMM)}, [*PI, "--family", "gemm"], 2, ["'--family'", "--input"]),
    # ---- launch flags (the same domain as CSV rows)
    (
        "flag-m-fraction",
        {},
        [*P, "--gpu", "H100", "--family", "gemm", "--m", "4096.5", "--n", "8", "--k", "8"],
        2,
        ["--m", "'4096.5'"],
    ),
    (
        "flag-m-negative",
        {},
        [*P, "--gpu", "H100", "--family", "gemm", "--m", "-5", "--n", "8", "--k", "8"],
        2,
        ["m=-5", "--m"],
    ),
    (
        "flag-config-63",
        {},
        [*P, "--gpu", "H100", "--family", "gemm", "--m", "64", "--n", "64", "--k", "64", "--config", "63,64,64,8,4,3"],
        2,
        ["block_m=63", "--config"],
    ),
    (
        "flag-config-4096",
        {},
        [
            *P,
            "--gpu",
            "H100",
            "--family",
            "gemm",
            "--m",
            "64",
            "--n",
            "64",
            "--k",
            "64",
            "--config",
            "4096,4096,4096,8,4,3",
        ],
        2,
        ["block_m=4096"],
    ),
    (
        "flag-config-smem",
        {},
        [
            *P,
            "--gpu",
            "A100",
            "--family",
            "gemm",
            "--m",
            "64",
            "--n",
            "64",
            "--k",
            "64",
            "--config",
            "128,256,128,8,8,5",
        ],
        2,
        ["shared memory", "A100", "Triton would refuse"],
    ),
    (
        "flag-config-zero",
        {},
        [*P, "--gpu", "H100", "--family", "gemm", "--m", "64", "--n", "64", "--k", "64", "--config", "0,64,64,8,4,3"],
        2,
        ["'0,64,64,8,4,3'", "64,64,32,8,4,3"],
    ),
    (
        "flag-config-text",
        {},
        [*P, "--gpu", "H100", "--family", "gemm", "--m", "64", "--n", "64", "--k", "64", "--config", "big"],
        2,
        ["'big'"],
    ),
    (
        "flag-dtype-typo",
        {},
        [*P, "--gpu", "H100", "--family", "gemm", "--dtype", "bfloat61", "--m", "8", "--n", "8", "--k", "8"],
        2,
        ["'bfloat61'", "did you mean 'bfloat16'"],
    ),
    (
        "flag-topk",
        {},
        [
            *P,
            "--gpu",
            "H100",
            "--family",
            "moe_w13",
            "--num-tokens",
            "64",
            "--hidden-size",
            "4096",
            "--inter-size",
            "1536",
            "--topk",
            "80",
            "--num-experts",
            "64",
        ],
        2,
        ["topk=80", "--topk"],
    ),
    (
        "flag-kv-heads",
        {},
        [
            *P,
            "--gpu",
            "H100",
            "--family",
            "attention_context",
            "--batch-size",
            "1",
            "--isl",
            "128",
            "--num-heads",
            "8",
            "--num-kv-heads",
            "12",
            "--head-dim",
            "128",
        ],
        2,
        ["num_key_value_heads=12", "--num-kv-heads"],
    ),
    (
        "flag-head-dim",
        {},
        [
            *P,
            "--gpu",
            "H100",
            "--family",
            "attention_generation",
            "--batch-size",
            "1",
            "--step",
            "128",
            "--num-heads",
            "8",
            "--num-kv-heads",
            "8",
            "--head-dim",
            "7",
        ],
        2,
        ["head_dim=7"],
    ),
    (
        "flag-gpu-unknown",
        {},
        [*P, "--gpu", "H1000", "--family", "gemm", "--m", "8", "--n", "8", "--k", "8"],
        2,
        ["'H1000'"],
    ),
    (
        "flag-backend",
        {},
        [*P, "--gpu", "H100", "--family", "attention_context", "--backend", "cudnn"],
        2,
        ["'cudnn'", "flash_attention"],
    ),
    ("flag-family-missing", {}, [*P, "--gpu", "H100", "--m", "8"], 2, ["--family is required"]),
    ("flag-shape-missing", {}, [*P, "--gpu", "H100", "--family", "gemm", "--m", "8"], 2, ["--n", "--k"]),
    (
        "explain-m-negative",
        {},
        ["explain", "--gpu", "H100", "--family", "gemm", "--m", "-5", "--n", "8", "--k", "8"],
        2,
        ["m=-5"],
    ),
    (
        "explain-config",
        {},
        [
            "explain",
            "--gpu",
            "H100",
            "--family",
            "gemm",
            "--m",
            "64",
            "--n",
            "64",
            "--k",
            "64",
            "--config",
            "4096,4096,4096,8,4,3",
        ],
        2,
        ["block_m=4096"],
    ),
    # ---- spec files (unit slips, generation/compute-capability, shadowing a catalog GPU)
    (
        "spec-bw-tbps",
        {"g.toml": _spec_text(**{"dram_bw_gbps = 1008": "dram_bw_gbps = 1.008"})},
        ["gpus", "--gpu", "{tmp}/g.toml"],
        2,
        ["dram_bw_gbps", "1.008", "GB/s"],
    ),
    (
        "spec-clock-ghz",
        {"g.toml": _spec_text(**{"sm_clock_mhz = 2520": "sm_clock_mhz = 2.52"})},
        ["gpus", "--gpu", "{tmp}/g.toml"],
        2,
        ["sm_clock_mhz", "2.52", "MHz"],
    ),
    (
        "spec-tensor-tflops",
        {"g.toml": _spec_text(**{"bf16 = 512,": "bf16 = 0.165,"})},
        [*P, "--gpu", "{tmp}/g.toml", "--family", "gemm", "--m", "8", "--n", "8", "--k", "8"],
        2,
        ["tensor_flop_per_clk_per_sm.bf16", "0.165", "not TFLOPS"],
    ),
    (
        "spec-cc-vs-generation",
        {"g.toml": _spec_text(**{'compute_capability = "8.9"': 'compute_capability = "9.0"'})},
        ["gpus", "--gpu", "{tmp}/g.toml"],
        2,
        ["'9.0'", "'ada'", "8.9"],
    ),
    (
        "spec-shadows-catalog",
        {"g.toml": _spec_text(**{'name = "RTX-4090"': 'name = "H100-SXM"'})},
        [*P, "--gpu", "{tmp}/g.toml", "--family", "gemm", "--m", "8", "--n", "8", "--k", "8"],
        2,
        ["'H100-SXM'", "catalog GPU", "rename"],
    ),
    (
        "spec-alias-shadows",
        {"g.toml": _spec_text(**{'aliases = ["NVIDIA GeForce RTX 4090", "RTX 4090"]': 'aliases = ["A100"]'})},
        ["gpus", "--gpu", "{tmp}/g.toml"],
        2,
        ["'A100'", "catalog GPU"],
    ),
    ("spec-unparsable", {"g.toml": "name = [\n"}, ["gpus", "--gpu", "{tmp}/g.toml"], 2, ["could not be parsed"]),
    ("spec-missing-file", {}, ["gpus", "--gpu", "{tmp}/nope.toml"], 2, ["nope.toml", "not found"]),
    # ---- model files
    (
        "model-missing",
        {},
        [
            "predict",
            "--model",
            "{tmp}/none.ubj",
            "--gpu",
            "H100",
            "--family",
            "gemm",
            "--m",
            "8",
            "--n",
            "8",
            "--k",
            "8",
        ],
        2,
        ["none.ubj", "not found", "pipeweave train"],
    ),
    (
        "model-directory",
        {"m.ubj/keep": "x"},
        ["predict", "--model", "{tmp}/m.ubj", "--gpu", "H100", "--family", "gemm", "--m", "8", "--n", "8", "--k", "8"],
        2,
        ["is not a file"],
    ),
    (
        "model-garbage",
        {"m.ubj": b"\x00garbage"},
        ["predict", "--model", "{tmp}/m.ubj", "--gpu", "H100", "--family", "gemm", "--m", "8", "--n", "8", "--k", "8"],
        2,
        ["not an XGBoost model file", "pipeweave train"],
    ),
    # ---- train
    (
        "train-n-estimators-negative",
        {},
        ["train", "--n-estimators", "-5", "--out", "{tmp}/m.ubj"],
        2,
        ["--n-estimators", "-5", ">= 1"],
    ),
    (
        "train-n-estimators-zero",
        {},
        ["train", "--n-estimators", "0", "--out", "{tmp}/m.ubj"],
        2,
        ["--n-estimators", "0 is not allowed"],
    ),
    ("train-n-estimators-text", {}, ["train", "--n-estimators", "many", "--out", "{tmp}/m.ubj"], 2, ["'many'"]),
    (
        "train-max-rows-negative",
        {},
        ["train", "--max-rows-per-group", "-1", "--out", "{tmp}/m.ubj"],
        2,
        ["--max-rows-per-group", "-1"],
    ),
    (
        "train-params-bad-json",
        {},
        ["train", "--params", "{bad", "--out", "{tmp}/m.ubj"],
        2,
        ["'{bad'", "not JSON", "JSON object"],
    ),
    ("train-params-list", {}, ["train", "--params", "[1, 2]", "--out", "{tmp}/m.ubj"], 2, ["JSON list", "object"]),
    (
        "train-params-unknown-key",
        {},
        ["train", "--params", '{"max_dept": 4}', "--out", "{tmp}/m.ubj"],
        2,
        ["'max_dept'", "did you mean 'max_depth'"],
    ),
    (
        "train-params-bad-value",
        {},
        ["train", "--params", '{"learning_rate": -1}', "--out", "{tmp}/m.ubj"],
        2,
        ["learning_rate=-1", "(0, 1]"],
    ),
    (
        "train-params-family-booster-params-list",
        {},
        ["train", "--params", '{"family_booster_params": [4]}', "--out", "{tmp}/m.ubj"],
        2,
        ["family_booster_params=[4]", "{family: {setting: value}}"],
    ),
    (
        "train-params-family-booster-params-negative",
        {},
        [
            "train",
            "--params",
            '{"family_booster_params": {"layernorm_fp32": {"reg_lambda": -2}}}',
            "--out",
            "{tmp}/m.ubj",
        ],
        2,
        ["family_booster_params['layernorm_fp32']['reg_lambda']", "-2", ">= 0"],
    ),
    (
        "train-params-family-booster-params-family",
        {},
        ["train", "--params", '{"family_booster_params": {"layernorm": {"max_depth": 4}}}', "--out", "{tmp}/m.ubj"],
        2,
        ["family_booster_params", "layernorm"],
    ),
    ("train-out-extension", {}, ["train", "--out", "{tmp}/model.pkl"], 2, ["model.pkl", ".ubj or .json"]),
    ("train-out-directory", {"m.ubj/keep": "x"}, ["train", "--out", "{tmp}/m.ubj"], 2, ["is a directory"]),
    ("train-out-under-file", {"f": "x"}, ["train", "--out", "{tmp}/f/m.ubj"], 2, ["which is a file"]),
    (
        "train-data-missing",
        {},
        ["train", "--data", "{tmp}/nodata", "--out", "{tmp}/m.ubj"],
        2,
        ["nodata", "not a directory"],
    ),
    (
        "train-data-empty",
        {"d/keep": "x"},
        ["train", "--data", "{tmp}/d", "--out", "{tmp}/m.ubj"],
        2,
        ["no measurements found"],
    ),
    ("data-is-a-file", {"f.csv": "x"}, ["data", "--data", "{tmp}/f.csv"], 2, ["f.csv", "not a directory"]),
    # ---- tune
    ("tune-storage-not-url", {}, ["tune", "--storage", "notaurl"], 2, ["'notaurl'", "sqlite:///"]),
    ("tune-storage-unknown-kind", {}, ["tune", "--storage", "foo://x"], 2, ["'foo'"]),
    (
        "tune-storage-driver-missing",
        {},
        ["tune", "--storage", "mysql://user@host/db"],
        2,
        ["driver is not installed", "pip install"],
    ),
    (
        "tune-storage-unwritable",
        {},
        ["tune", "--storage", "sqlite:////proc/pipeweave_tune.db"],
        2,
        ["/proc", "cannot create files"],
    ),
    ("tune-storage-no-folder", {}, ["tune", "--storage", "sqlite:///{tmp}/no/such/dir/t.db"], 2, ["does not exist"]),
    ("tune-storage-directory", {"db/keep": "x"}, ["tune", "--storage", "sqlite:///{tmp}/db"], 2, ["is a directory"]),
    ("tune-n-trials-zero", {}, ["tune", "--n-trials", "0"], 2, ["--n-trials", "0 is not allowed"]),
    ("tune-seed-negative", {}, ["tune", "--seed", "-1"], 2, ["--seed", "-1"]),
    # ---- evaluate, diagnose, sass, profiles, calibrate, bench
    (
        "evaluate-family-unknown",
        {},
        ["evaluate", "--protocol", "logo", "--families", "gemmx", "--out", "{tmp}/o"],
        2,
        ["'gemmx'", "gemm_bf16"],
    ),
    (
        "evaluate-committed-out",
        {},
        ["evaluate", "--protocol", "logo", "--out", str(_REPO / "experiments" / "logo")],
        2,
        ["committed report", "--force"],
    ),
    (
        "evaluate-out-is-a-file",  # refused before loading or training anything
        {"report.txt": "x"},
        ["evaluate", "--protocol", "anatomy", "--out", "{tmp}/report.txt"],
        2,
        ["report.txt", "is a file, not a folder", "fix:"],
    ),
    (
        "evaluate-no-shared-alone",
        {},
        ["evaluate", "--protocol", "logo", "--no-shared", "--out", "{tmp}/o"],
        2,
        ["--no-shared needs --profiles"],
    ),
    (
        "evaluate-refresh-without-families",
        {},
        ["evaluate", "--protocol", "logo", "--refresh", "--out", "{tmp}/o"],
        2,
        ["--refresh re-runs some families", "--families gemm_fp32 --refresh"],
    ),
    (
        "evaluate-refresh-on-anatomy",
        {},
        ["evaluate", "--protocol", "anatomy", "--families", "gemm_fp32", "--refresh", "--out", "{tmp}/o"],
        2,
        ["--refresh applies to --protocol logo", "few-shot", "'anatomy'"],
    ),
    (
        "evaluate-refresh-nothing-there",  # refused after loading nothing: no report in --out
        {},
        ["evaluate", "--protocol", "logo", "--families", "rmsnorm", "--refresh", "--out", "{tmp}/o"],
        2,
        ["nothing to refresh: no report at", "results.json"],
    ),
    (
        "evaluate-gpu-split-without-train-gpus",
        {},
        ["evaluate", "--protocol", "gpu-split", "--out", "{tmp}/o"],
        2,
        ["needs --train-gpus", "P100-PCIe"],
    ),
    (
        "evaluate-train-gpus-on-logo",
        {},
        ["evaluate", "--protocol", "logo", "--train-gpus", "T4", "--out", "{tmp}/o"],
        2,
        ["--train-gpus applies to --protocol gpu-split", "'logo'"],
    ),
    (
        "evaluate-train-dtypes-on-unseen-shape",  # another dtype's row of a held-out shape would train
        {},
        ["evaluate", "--protocol", "unseen-shape", "--train-dtypes", "all", "--out", "{tmp}/o"],
        2,
        ["--train-dtypes all applies to --protocol logo", "'unseen-shape'", "held-out shape"],
    ),
    (
        "evaluate-train-dtypes-unknown",
        {},
        ["evaluate", "--protocol", "logo", "--train-dtypes", "every", "--out", "{tmp}/o"],
        2,
        ["--train-dtypes", "'every'"],
    ),
    (
        "evaluate-train-gpu-unknown",  # named before loading any data
        {},
        ["evaluate", "--protocol", "gpu-split", "--train-gpus", "T5", "--out", "{tmp}/o"],
        2,
        ["'T5'", "did you mean ['T4']"],
    ),
    (
        "evaluate-train-gpu-spec-file",  # a spec file names no GPU of the evaluation data: the fix offers none
        {"g.toml": (_REPO / "datasets" / "example_gpu_spec.toml").read_text()},
        ["evaluate", "--protocol", "gpu-split", "--train-gpus", "{tmp}/g.toml", "--out", "{tmp}/o"],
        2,
        ["g.toml'", "spec file cannot be a training GPU"],
    ),
    (
        "evaluate-profiles-missing",
        {},
        ["evaluate", "--protocol", "logo", "--profiles", "{tmp}/mine.csv", "--no-shared", "--out", "{tmp}/o"],
        2,
        ["{tmp}/mine.csv"],
    ),
    ("diagnose-measured-negative", {}, ["diagnose", *_DIAG, "--measured-us", "-5"], 2, ["--measured-us", "-5"]),
    ("diagnose-gpu-unknown", {}, ["diagnose", *_DIAG[2:], "--gpu", "H1000"], 2, ["'H1000'", "H100-SXM"]),
    ("diagnose-config-short", {}, ["diagnose", *_DIAG, "--config", "64,64"], 2, ["'64,64'", "BLOCK_M"]),
    ("sass-arch-turing", {}, ["sass", "--builtin", "gemm", "--arch", "sm_75"], 2, ["'sm_75'", "sm_80"]),
    ("sass-config-short", {}, ["sass", "--builtin", "gemm", "--arch", "sm_90", "--config", "64,64"], 2, ["'64,64'"]),
    (
        "train-params-and-flag",
        {},
        ["train", "--n-estimators", "5", "--params", '{"n_estimators": 50}', "--out", "{tmp}/m.ubj"],
        2,
        ["--params sets n_estimators (also --n-estimators)", "each setting once"],
    ),
    ("data-empty", {}, ["data", "--data", ""], 2, ["--data is empty"]),
    ("gpus-empty", {}, ["gpus", "--gpu", ""], 2, ["--gpu is empty"]),
    (
        "bench-rows-zero",
        {},
        ["bench", "--what", "memory", "--memory-rows", "0", "--out", "{tmp}/bench"],
        2,
        ["--memory-rows: 0 is not allowed", "whole number >= 1"],
    ),
    (
        "sass-cached-not-in-cache",
        {},
        ["sass", "--builtin", "rmsnorm", "--arch", "sm_90", "--cached"],
        2,
        ["holds ['gemm', 'fused_moe'] mixes only", "drop --cached"],
    ),
    (
        "sass-config-fits-no-gpu",  # refused before compiling (that took minutes)
        {},
        ["sass", "--builtin", "gemm", "--arch", "sm_90", "--config", "512,512,512,8,4,3", "--m", "128"],
        2,
        ["fits no sm_90a GPU", "KiB of shared memory", "smaller"],
    ),
    (
        "profiles-kineto-not-json",
        {"t.json": "not json"},
        ["profiles", "import", "--from", "kineto", "{tmp}/t.json", "--out", "{tmp}/o.csv"],
        2,
        ["t.json", "not a JSON trace", "export_chrome_trace"],
    ),
    (
        "calibrate-plan-n-zero",
        {},
        ["calibrate", "plan", "--gpu", "H100", "--families", "gemm", "--n", "0", "--out", "{tmp}/p.csv"],
        2,
        ["--n must be > 0, got 0", "--n 32"],
    ),
    (
        "calibrate-plan-out-is-candidates",  # hand-made candidate rows
        {"c.csv": "family,dtype,m,n,k\ngemm,bfloat16,64,4096,4096\ngemm,bfloat16,128,4096,4096\n"},
        ["calibrate", "plan", "--gpu", "H100", "--n", "1", "--candidates", "{tmp}/c.csv", "--out", "{tmp}/c.csv"],
        2,
        ["is the input file", "never overwrites its input"],
    ),
    (
        "calibrate-plan-out-not-csv",
        {},
        ["calibrate", "plan", "--gpu", "H100", "--families", "gemm", "--out", "{tmp}/p.txt"],
        2,
        ["p.txt", "a plan is a CSV file", "plan.csv"],
    ),
    (
        "calibrate-plan-empty-candidates",
        {"c.csv": ""},
        ["calibrate", "plan", "--gpu", "H100", "--candidates", "{tmp}/c.csv", "--out", "{tmp}/p.csv"],
        2,
        ["c.csv' is empty", "canonical launch rows"],
    ),
    (
        "calibrate-plan-families-not-in-candidates",
        {"c.csv": "family,dtype,m,n,k\ngemm,bfloat16,64,4096,4096\n"},
        [
            "calibrate",
            "plan",
            "--gpu",
            "H100",
            "--families",
            "fused_moe",
            "--candidates",
            "{tmp}/c.csv",
            "--out",
            "{tmp}/p.csv",
        ],
        2,
        ["no rows of --families ['fused_moe']", "its families: ['gemm']"],
    ),
    (
        "calibrate-fit-out-is-base-model",
        {"m.csv": "family,dtype,m,n,k,latency_us\ngemm,bfloat16,64,4096,4096,20\n", "#base.ubj": "m.csv"},
        [
            "calibrate",
            "fit",
            "--gpu",
            "H100",
            "--profiles",
            "{tmp}/m.csv",
            "--model",
            "{tmp}/base.ubj",
            "--out",
            "{tmp}/base.ubj",
        ],
        2,
        ["is the input file", "--out"],
    ),
    (
        "train-profiles-in-milliseconds",  # hand-made rows: GEMM latencies written in ms (1000x too small)
        {
            "p.csv": "gpu,family,dtype,m,n,k,latency_us\n"
            "H100,gemm,bfloat16,4096,4096,4096,0.19\nH100,gemm,bfloat16,8192,8192,8192,1.5\n"
            "H100,gemm,bfloat16,2048,2048,2048,0.03\n"
        },
        ["train", "--profiles", "{tmp}/p.csv", "--no-shared", "--n-estimators", "2", "--out", "{tmp}/m.ubj"],
        2,
        ["3 of 3 --profiles rows are faster than the physical lower bound", "a file in ms needs x1000"],
    ),
    (
        "profiles-check-milliseconds",  # hand-made rows: the first GEMM's latency written in ms
        {
            "p.csv": "gpu,family,dtype,m,n,k,latency_us\n"
            "H100,gemm,bfloat16,4096,4096,4096,0.19\nH100,gemm,bfloat16,64,64,64,5.0\n"
        },
        ["profiles", "check", "{tmp}/p.csv"],
        1,
        ["1 of 2 rows are faster than the physical lower bound", "(rows 1;", "looks like milliseconds"],
    ),
    (
        "calibrate-fit-onto-the-shipped-model",  # hand-made measured row
        {"m.csv": "family,dtype,m,n,k,latency_us\ngemm,bfloat16,64,4096,4096,20\n"},
        [
            "calibrate",
            "fit",
            "--gpu",
            "B300",
            "--profiles",
            "{tmp}/m.csv",
            "--out",
            str(_REPO / "models" / "pipeweave_default.ubj"),
        ],
        2,
        ["committed repository file", "write to a file of your own with --out"],
    ),
    (
        "predict-output-onto-the-spec-file",
        {
            "rows.csv": "family,m,n,k\ngemm,64,64,64\n",
            "g.toml": (_REPO / "datasets" / "example_gpu_spec.toml").read_text(),
        },
        ["predict", "--gpu", "{tmp}/g.toml", "--input", "{tmp}/rows.csv", "--output", "{tmp}/g.toml"],
        2,
        ["would hold CSV text"],
    ),
    (
        "compare-count-huge",  # hand-made workload: a count that would overflow the totals
        {"w.csv": "family,dtype,m,n,k,count\ngemm,bfloat16,64,64,64,1e308\n"},
        ["compare", "--gpus", "H100", "B200", "--input", "{tmp}/w.csv"],
        2,
        ["row 1 (1e+308)", "numbers in [0, 1e+12]"],
    ),
    (
        "kineto-malformed-device-properties",  # hand-made trace with a wrong field type
        {"t.json": '{"deviceProperties": "H100", "traceEvents": []}'},
        ["profiles", "import", "--from", "kineto", "{tmp}/t.json", "--out", "{tmp}/o.csv"],
        2,
        ["t.json: a malformed trace entry", "export_chrome_trace"],
    ),
    (
        "calibrate-plan-seed-huge",
        {},
        [
            "calibrate",
            "plan",
            "--gpu",
            "B300",
            "--families",
            "gemm",
            "--n",
            "4",
            "--seed",
            "-1",
            "--out",
            "{tmp}/p.csv",
        ],
        2,
        ["--seed"],
    ),
    (
        "train-out-empty",
        {},
        ["train", "--out", ""],
        2,
        ["the model path is empty"],
    ),
    (
        "kernel-file-calls-sys-exit",  # a hand-made kernel file that exits at import
        {"k.py": "import sys\nsys.exit(3)\n"},
        ["diagnose", "--gpu", "H100", "--config", "1,1024,1,1,4,1", "--kernel", "{tmp}/k.py:f"],
        2,
        ["importing", "failed: SystemExit: 3"],
    ),
    (
        "evaluate-zero-trees",
        {},
        ["evaluate", "--n-estimators", "0", "--out", "{tmp}/ev"],
        2,
        ["--n-estimators: 0 is not allowed"],
    ),
    (
        "train-infinite-profile-weight",  # hand-made measured row
        {"p.csv": "gpu,family,dtype,m,n,k,latency_us\nH100,gemm,bfloat16,64,64,64,5.0\n"},
        ["train", "--profiles", "{tmp}/p.csv", "--profiles-weight", "inf", "--out", "{tmp}/m.ubj"],
        2,
        ["--profiles-weight must be in (0, 1e6], got inf"],
    ),
    (
        "tune-blank-study-name",
        {},
        ["tune", "--study-name", " "],
        2,
        ["--study-name: the study name is blank"],
    ),
    (
        "diagnose-top-zero",
        {},
        ["diagnose", "--gpu", "H100", "--family", "gemm", "--m", "64", "--n", "64", "--k", "64", "--top", "0"],
        2,
        ["--top must be >= 1, got 0", "fix: e.g. --top 5"],
    ),
    (
        "bench-committed-out",
        {},
        ["bench", "--what", "rank", "--out", str(_REPO / "experiments" / "bench")],
        2,
        ["committed benchmark", "--force"],
    ),
]


def _materialize(tmp: Path, files: dict) -> None:
    for name, content in files.items():
        if name.startswith("@"):  # symlink -> target
            (tmp / name[1:]).symlink_to(tmp / content)
            continue
        if name.startswith("#"):  # hard link -> target
            os.link(tmp / content, tmp / name[1:])
            continue
        p = tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def test_at_least_80_cases_over_every_subcommand():
    assert len(CASES) >= 80
    assert len({c[0] for c in CASES}) == len(CASES)
    commands = {c[2][0] for c in CASES}
    assert {"predict", "explain", "gpus", "train", "tune", "data"} <= commands


@pytest.mark.parametrize("cid, files, argv, rc, needles", CASES, ids=[c[0] for c in CASES])
def test_bad_input(cid, files, argv, rc, needles, model, tmp_path, capsys):
    _materialize(tmp_path, files)
    before = _snapshot(tmp_path)
    args = [a.replace("{model}", str(model)).replace("{tmp}", str(tmp_path)) for a in argv]
    got, out, err = _run(args, capsys)
    assert "Traceback" not in err and "Traceback" not in out
    assert got == rc, err
    for needle in needles:
        assert needle.replace("{tmp}", str(tmp_path)) in err, f"{needle!r} not in:\n{err}"
    after = _snapshot(tmp_path)
    for name, content in before.items():  # every input file is byte-identical afterwards
        assert after.get(name) == content, name
    if rc == 2 and "out.csv" not in files:
        assert not (tmp_path / "out.csv").exists()  # nothing written on a usage/input error or when nothing predicted


def test_nothing_predicted_leaves_an_existing_output_alone(model, tmp_path, capsys):
    src, dst = tmp_path / "rows.csv", tmp_path / "out.csv"
    src.write_text(_csv("gemm,H100,bfloat16,abc,64,64"))
    dst.write_text("an earlier run's predictions\n")
    rc, _, err = _run(
        [*[a.replace("{model}", str(model)) for a in P], "--input", str(src), "--output", str(dst)], capsys
    )
    assert rc == 2 and "nothing written to" in err
    assert dst.read_text() == "an earlier run's predictions\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_partial_output_keeps_good_rows(model, tmp_path, capsys):
    src = tmp_path / "rows.csv"
    src.write_text(_csv(GOOD_GEMM, "gemm,H100,bfloat16,abc,64,64", "gemm,H100,bfloat16,64,64,64"))
    rc, _, err = _run(
        [*[a.replace("{model}", str(model)) for a in P], "--input", str(src), "--output", str(tmp_path / "out.csv")],
        capsys,
    )
    assert rc == 1 and "row 2: not predicted: m=abc" in err and "1 of 3 rows not predicted" in err
    import pandas as pd

    out = pd.read_csv(tmp_path / "out.csv")
    assert out["latency_us_pred"].notna().tolist() == [True, False, True]
    assert (out["latency_us_pred"].dropna() > 0).all()


def test_defaults_and_derived_columns_are_not_errors(model, tmp_path, capsys):
    # attention_context without `step` (the flags default it to 0; so does the CSV path) and a CSV that holds
    # a column pipeweave computes itself (t_env_us: ignored for featurization, kept in the output)
    src = tmp_path / "rows.csv"
    src.write_text(_csv("attention_context,H100,bfloat16,1,128,32,8,128,5.0", head=ATT + ",t_env_us"))
    rc, out, err = _run([*[a.replace("{model}", str(model)) for a in P], "--input", str(src)], capsys)
    assert rc == 0, err
    assert "t_env_us" in out.splitlines()[0] and "latency_us_pred" in out.splitlines()[0]
    flags = [
        "--gpu",
        "H100",
        "--family",
        "attention_context",
        "--batch-size",
        "1",
        "--isl",
        "128",
        "--num-heads",
        "32",
        "--num-kv-heads",
        "8",
        "--head-dim",
        "128",
        "--json",
    ]
    rc, out_flags, _ = _run([*[a.replace("{model}", str(model)) for a in P], *flags], capsys)
    assert rc == 0
    import json

    import pandas as pd

    from_csv = pd.read_csv(__import__("io").StringIO(out))["latency_us_pred"].iloc[0]
    assert json.loads(out_flags)["latency_us_pred"] == pytest.approx(from_csv, rel=1e-9)


def test_output_symlink_keeps_the_link(model, tmp_path, capsys):
    src = tmp_path / "rows.csv"
    src.write_text(_csv(GOOD_GEMM))
    target = tmp_path / "real.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    rc, _, err = _run(
        [*[a.replace("{model}", str(model)) for a in P], "--input", str(src), "--output", str(link)], capsys
    )
    assert rc == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "latency_us_pred" in target.read_text()


# ---------------------------------------------------------------------------- model-file damage
def _tampered(model: Path, tmp: Path, how: str) -> Path:
    """A copy of ``model`` altered the way a user or a broken copy would (hand-made damage)."""
    import json

    import xgboost as xgb

    data = model.read_bytes()
    out = tmp / f"{how}.ubj"
    if how.startswith("truncated"):
        out.write_bytes(data[: int(how.split("_")[1])])
    elif how == "bitflip":
        b = bytearray(data)
        b[len(b) // 3] ^= 0x10
        out.write_bytes(bytes(b))
    elif how == "appended":
        out.write_bytes(data + b"\x00" * 16)
    else:  # stamp edits through xgboost itself (no integrity record left: an "older" file)
        booster = xgb.Booster(model_file=bytearray(data))
        stamp = json.loads(booster.attr("pipeweave_stamp"))
        stamp.pop("file_integrity")
        if how == "stamp_not_json":
            booster.set_attr(pipeweave_stamp="{not json")
        elif how == "stamp_list":
            booster.set_attr(pipeweave_stamp=json.dumps([1, 2]))
        elif how == "stamp_features_text":
            booster.set_attr(pipeweave_stamp=json.dumps({**stamp, "features": "m,n,k"}))
        elif how == "booster_not_base64":
            fam = stamp["family_boosters"][0]
            booster.set_attr(pipeweave_stamp=json.dumps(stamp), **{f"pipeweave_family_{fam}": "!!not base64!!"})
        elif how == "booster_blob_swapped":
            # two families whose blobs differ (boosters trained on the same rows are identical, e.g. the
            # two attention families of pipeweave.model.FAMILY_BOOSTER_ROWS)
            blob = {f: booster.attr(f"pipeweave_family_{f}") for f in stamp["family_boosters"]}
            f0, f1 = next((x, y) for x in blob for y in blob if blob[x] != blob[y])
            booster.set_attr(
                pipeweave_stamp=json.dumps(stamp),
                **{f"pipeweave_family_{f0}": blob[f1], f"pipeweave_family_{f1}": blob[f0]},
            )
        elif how == "no_stamp":
            booster.set_attr(pipeweave_stamp=None)
        booster.save_model(str(out))
    return out


@pytest.mark.parametrize(
    "how, needles",
    [
        ("truncated_10", ["truncated", "pipeweave train"]),
        ("truncated_1000", ["truncated"]),
        ("truncated_20000", ["truncated"]),
        ("bitflip", ["SHA-256", "altered"]),
        ("appended", ["bytes but was written with"]),
        ("stamp_not_json", ["not JSON"]),
        ("stamp_list", ["JSON list"]),
        ("stamp_features_text", ["'features'", "expected a list"]),
        ("booster_not_base64", ["not base64"]),
        ("booster_blob_swapped", ["recorded length/SHA-256"]),
        ("no_stamp", ["no pipeweave stamp"]),
    ],
)
def test_damaged_model_file(how, needles, model, tmp_path, capsys):
    bad = _tampered(model, tmp_path, how)
    before = bad.read_bytes()
    rc, _, err = _run(
        ["predict", "--model", str(bad), "--gpu", "H100", "--family", "gemm", "--m", "8", "--n", "8", "--k", "8"],
        capsys,
    )
    assert rc == 2 and "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    assert "pipeweave_default.ubj" not in err  # a user's file: never the command that rewrites the shipped model
    assert bad.read_bytes() == before


def test_truncated_model_never_crashes_natively(model, tmp_path):
    # the original failure: XGBoost segfaulted (exit 139) on a truncated file; one subprocess sees any crash
    data = model.read_bytes()
    paths = []
    for size in (1000, 50_000, len(data) // 2, len(data) - 1):
        paths.append(tmp_path / f"t{size}.ubj")
        paths[-1].write_bytes(data[:size])
    code = textwrap.dedent(f"""
        from pipeweave.model import load_model
        for p in {[str(p) for p in paths]!r}:
            try:
                load_model(p)
                print("loaded")
            except Exception as e:
                print(type(e).__name__)
    """)
    res = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, (res.returncode, res.stderr[-500:])  # -11 = segfault
    assert res.stdout.split() == ["DataError"] * len(paths), (res.stdout, res.stderr[-500:])


# ------------------------------------------------------------------------ atomic writes, kill -9
def test_kill_9_during_a_write_leaves_only_a_recognisable_temp_that_the_next_write_removes(tmp_path):
    from pipeweave._io import TEMP_MARK, atomic_write_text, stale_temp_files

    target = tmp_path / "model.ubj"
    script = textwrap.dedent(f"""
        import sys, time
        from pipeweave._io import atomic_write
        def slow(p):
            with open(p, "wb") as fh:
                fh.write(b"x" * 1_000_000)
                fh.flush()
                print("writing", flush=True)
                time.sleep(60)
        atomic_write({str(target)!r}, slow)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    left = [p for p in tmp_path.iterdir() if p.name != "model.ubj"]
    assert len(left) == 1 and TEMP_MARK in left[0].name and not target.exists()  # partial, but recognisable
    assert stale_temp_files(target) == left  # its writer is gone
    atomic_write_text(target, "complete\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.ubj"]
    assert target.read_text() == "complete\n"


def test_a_live_writers_temp_file_is_not_removed(tmp_path):
    from pipeweave._io import TEMP_MARK, atomic_write_text

    target = tmp_path / "out.csv"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        live = tmp_path / f".out.csv{TEMP_MARK}{sleeper.pid}-0a0a0a0a.csv"
        live.write_text("in progress")
        atomic_write_text(target, "x")
        assert live.exists()  # another process still writing: left alone
    finally:
        sleeper.kill()
        sleeper.wait()
    time.sleep(0.1)
    atomic_write_text(target, "y")
    assert not live.exists()


# ----------------------------------------------------------------------------------- tune
def test_two_tune_processes_share_a_fresh_sqlite_study(tmp_path, small_frame):
    """Two real processes on one fresh SQLite study: both finish, and they sample different parameters."""
    import optuna

    frame_path = tmp_path / "frame.parquet"
    gens = small_frame["generation"].astype(str)
    small_frame[gens.isin(["ampere", "hopper", "ada"])].groupby("generation", observed=True).head(40).reset_index(
        drop=True
    ).to_parquet(frame_path)
    db = tmp_path / "tune.db"
    worker = textwrap.dedent(f"""
        import pandas as pd
        import pipeweave.model._tune as T
        T.SEARCH_SPACE = {{**T.SEARCH_SPACE, "n_estimators": (5, 20, True)}}  # small trials for the test
        frame = pd.read_parquet({str(frame_path)!r})
        T.tune(frame, n_trials=3, storage="sqlite:///{db}", study_name="s", seed=0, n_jobs=1, progress=False)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", worker], stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    study = optuna.load_study(study_name="s", storage=f"sqlite:///{db}")
    params = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(params) == 6 and all(t.state.name == "COMPLETE" for t in study.trials)
    assert len(set(params)) == 6  # a joining process samples with its own seed


# ------------------------------------------------------------------------- training latencies
def test_absurd_training_latency_is_refused():
    import pandas as pd

    from pipeweave import DataError
    from pipeweave.sources import validate_profiles

    row = dict(family="gemm", gpu="H100", dtype="bfloat16", m=64, n=64, k=64)  # hand-made
    validate_profiles(pd.DataFrame([{**row, "latency_us": 12.5}]))
    with pytest.raises(DataError, match=r"latency_us must be a finite number > 0 and <= 1e\+09") as info:
        validate_profiles(pd.DataFrame([{**row, "latency_us": 1e30}]))
    assert "1e+30" in str(info.value) and "microseconds" in str(info.value)


def test_an_output_that_is_a_pipe_or_device_is_refused(model, tmp_path, capsys):
    """A FIFO (a device behaves the same) would be replaced by a regular file by the atomic rename."""
    rows = tmp_path / "rows.csv"
    rows.write_text("family,dtype,m,n,k\ngemm,bfloat16,64,64,64\n")  # hand-made launch
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    assert main(["predict", "--gpu", "H100", "--input", str(rows), "--output", str(fifo)]) == 2
    assert "is not a regular file (a device, pipe or socket)" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the pipe
