"""Defects of a UX audit of the command line, one test each: bad input is a one-paragraph error naming the value
and the fix (no traceback), flags behave as the same CSV cells, and every --json output is strict JSON.

Launch rows and flags are hand-made (labelled as such); predictions use the shipped model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeweave.cli.main import main

ATT = ["--family", "attention_context", "--batch-size", "1", "--isl", "4096", "--num-heads", "32"]
ATT += ["--num-kv-heads", "8", "--head-dim", "128"]
GEMM64 = ["--family", "gemm", "--m", "64", "--n", "64", "--k", "64"]
PLAN = ["calibrate", "plan", "--gpu", "H100"]


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        rc = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


def _strict(text: str):
    """``text`` parsed as RFC 8259 JSON: NaN / Infinity are refused."""

    def refuse(token: str):
        raise ValueError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


# 1. attention_context's step is validated (flags and CSV)
@pytest.mark.parametrize("command", ["predict", "explain"])
def test_negative_step_is_refused(capsys, command):
    rc, _, err = _run(capsys, command, "--gpu", "H100", *ATT, "--step", "-100000")
    assert rc == 2 and "step=-100000" in err and "[0, 2097152]" in err and "--step" in err


def test_bad_step_cells_are_reported_by_row(tmp_path, capsys):
    head = "family,gpu,dtype,batch_size,isl,num_heads,num_key_value_heads,head_dim,step\n"
    cells = ["-100000", "0.5", "99999999", "abc", "inf", "", "4096"]
    rows = "".join(f"attention_context,H100,bfloat16,1,4096,32,8,128,{c}\n" for c in cells)
    (tmp_path / "rows.csv").write_text(head + rows)
    rc, _, err = _run(capsys, "predict", "--input", str(tmp_path / "rows.csv"), "--output", str(tmp_path / "o.csv"))
    assert rc == 1
    for i, c in enumerate(cells[:5], start=1):
        assert f"row {i}: not predicted: step={c}" in err, err
    assert "row 6" not in err and "row 7" not in err  # blank = 0, and a valid step


# 3. --json is strict JSON (NaN tile fields of row kernels are null)
@pytest.mark.parametrize(
    "launch",
    [
        ["--family", "rmsnorm", "--num-tokens", "64", "--hidden-size", "64"],
        ["--family", "silu_mul", "--num-tokens", "64", "--inter-size", "64"],
        ["--family", "elementwise_fp32", "--num-tokens", "64", "--hidden-size", "64", "--op", "add"],
    ],
)
def test_explain_json_is_strict(capsys, launch):
    rc, out, _ = _run(capsys, "explain", "--gpu", "H100", *launch, "--json")
    assert rc == 0 and "NaN" not in out
    assert _strict(out)["tile_plan"]["block_k"] is None


def test_print_json_writes_null_for_non_finite_numbers(capsys):
    import numpy as np

    from pipeweave.cli._common import print_json

    print_json({"a": float("nan"), "b": [np.float32("inf"), np.float64(-np.inf), 1.5], "c": (np.nan, 2)})
    assert _strict(capsys.readouterr().out) == {"a": None, "b": [None, None, 1.5], "c": [None, 2]}


# 4. flags the family never takes: refused as the same CSV cell is
def test_backend_flag_on_gemm_is_refused_like_the_csv_cell(tmp_path, capsys):
    gemm = ["--family", "gemm", "--m", "16", "--n", "16", "--k", "16"]
    rc, _, err = _run(capsys, "predict", "--gpu", "H100", *gemm, "--backend", "fa3_paged")
    assert rc == 2 and "backend='fa3_paged' is an attention kernel" in err and "drop --backend" in err
    (tmp_path / "rows.csv").write_text("family,gpu,dtype,m,n,k,backend\ngemm,H100,bfloat16,16,16,16,fa3_paged\n")
    rc, _, err = _run(capsys, "predict", "--input", str(tmp_path / "rows.csv"))
    assert rc == 2 and "backend='fa3_paged' is an attention kernel" in err
    rc, _, err = _run(capsys, "compare", "--gpus", "H100", "B200", *gemm, "--backend", "fa3_paged")
    assert rc == 2 and "drop --backend" in err


def test_config_on_a_family_without_tile_plans_is_refused_on_both_paths(tmp_path, capsys):
    norm = ["--family", "rmsnorm", "--num-tokens", "64", "--hidden-size", "64"]
    rc, _, err = _run(capsys, "predict", "--gpu", "H100", *norm, "--config", "128,128,64,8,4,3")
    assert rc == 2 and "not used by rmsnorm" in err and "fix: drop --config" in err
    head = "family,gpu,dtype,num_tokens,hidden_size,block_m,block_n,block_k,group_m,num_warps,num_stages\n"
    (tmp_path / "rows.csv").write_text(head + "rmsnorm,H100,bfloat16,64,64,128,128,64,8,4,3\n")
    rc, _, err = _run(capsys, "predict", "--input", str(tmp_path / "rows.csv"))
    assert rc == 2 and "not used by rmsnorm" in err


# 8a. the fix line of a refused --config says to drop it
def test_attention_config_fix_says_drop_config(capsys):
    rc, _, err = _run(capsys, "predict", "--gpu", "H100", *ATT, "--config", "128,128,64,8,4,3")
    assert rc == 2 and "not used by attention_context" in err
    assert "fix: drop --config" in err and "give a value the message allows" not in err


# 5 / 10. diagnose: the user's models folder in the fix, and --force only with --rebuild-models
def test_diagnose_missing_models_folder_is_rebuilt_there(tmp_path, capsys):
    folder = tmp_path / "nowhere"
    rc, _, err = _run(capsys, "diagnose", "--gpu", "H100", *GEMM64, "--models", str(folder))
    assert rc == 2 and f"--rebuild-models --models {folder}" in err and "--force" not in err


def test_diagnose_force_needs_rebuild_models(capsys):
    rc, _, err = _run(capsys, "diagnose", "--gpu", "H100", *GEMM64, "--force")
    assert rc == 2 and "--force without --rebuild-models" in err and "drop --force" in err


# 6. a literal nan is named, a blank cell is blank
def test_nan_cell_is_not_reported_as_blank(tmp_path, capsys):
    rows = "family,gpu,dtype,m,n,k\ngemm,H100,bfloat16,nan,64,64\ngemm,H100,bfloat16,,64,64\n"
    rows += "gemm,H100,bfloat16,NaN,64,64\ngemm,H100,bfloat16,64,64,64\n"
    (tmp_path / "rows.csv").write_text(rows)
    rc, out, err = _run(capsys, "predict", "--input", str(tmp_path / "rows.csv"))
    assert rc == 1
    assert "row 1: not predicted: m=nan is not a finite number" in err
    assert "row 2: not predicted: m is blank" in err
    assert "row 3: not predicted: m=NaN is not a finite number" in err
    assert out.splitlines()[1] == "gemm,H100,bfloat16,nan,64,64,"  # the cell written back as the user wrote it


# 8b / 8c. tensor-core paths: the fix points where a value exists
def test_gemm_on_a_gpu_without_tensor_cores_points_to_gemm_fp32(capsys):
    rc, _, err = _run(capsys, "predict", "--gpu", "P100", *GEMM64)
    assert rc == 2 and "[]" not in err and "fix: use --family gemm_fp32 --dtype float32" in err
    rc, _, err = _run(capsys, "predict", "--gpu", "A100", *GEMM64, "--dtype", "fp8")
    assert rc == 2 and "['bfloat16', 'float16']" in err and "float32" not in err


# 9. --interval 0 is no band, as in compare; a bad value's fix is a percentage
def test_predict_interval_zero_is_no_band(capsys):
    gemm = ["--gpu", "H100", "--family", "gemm", "--m", "64", "--n", "64", "--k", "64"]
    rc, out, _ = _run(capsys, "predict", *gemm, "--interval", "0", "--json")
    assert rc == 0 and "interval" not in _strict(out)
    rc, out, _ = _run(capsys, "predict", *gemm, "--interval", "0")
    assert rc == 0 and "band" not in out
    rc, _, err = _run(capsys, "predict", *gemm, "--interval", "0.7")
    assert rc == 2 and "or 0 for no band" in err and "e.g. --interval 80" in err and "0.8" not in err


# 11. calibrate plan: flag wording for a dtype the families lack, and a true note on the plan's size
def test_calibrate_plan_dtype_in_flag_words(tmp_path, capsys):
    out = str(tmp_path / "plan.csv")
    rc, _, err = _run(capsys, *PLAN, "--families", "gemm", "--dtype", "float32", "--out", out)
    assert rc == 2 and "--families gemm_fp32" in err and "candidates table" not in err
    rc, _, err = _run(capsys, *PLAN, "--families", "gemm", "--dtype", "fp4", "--out", out)
    assert rc == 2 and "'fp4'" in err and "--dtype bfloat16" in err and "dtypes=None" not in err


def test_calibrate_plan_note_says_what_the_plan_takes(tmp_path, capsys):
    out = tmp_path / "plan.csv"
    rc, stdout, err = _run(capsys, *PLAN, "--families", "gemm", "--n", "100000000", "--out", str(out))
    assert rc == 0
    planned = int(stdout.split("wrote ")[1].split(" launch")[0].replace(",", ""))
    candidates = int(stdout.split("(from ")[1].split(" candidates")[0].replace(",", ""))
    if planned == candidates:
        assert "takes every one of them" in err
    else:  # launches with the same regime coordinates count once: the note says so, with the numbers
        assert "takes every one of them" not in err
        assert f"all {planned:,} launches with distinct regime coordinates" in err
        assert f"the other {candidates - planned:,} of the {candidates:,} candidates" in err


def test_calibrate_plan_suggests_the_family_plan_for_a_handful_of_fused_moe_launches(tmp_path, capsys):
    """At most FAMILY_PLAN_MAX_LAUNCHES fused-MoE launches planned over the generic coordinates: a note names
    --regime family (measured better there); more launches, the family plan, or GEMM alone: no note."""
    from pipeweave.calibrate import FAMILY_PLAN_MAX_LAUNCHES

    out = str(tmp_path / "plan.csv")
    small = str(FAMILY_PLAN_MAX_LAUNCHES)
    rc, _, err = _run(capsys, *PLAN, "--families", "fused_moe", "--n", small, "--out", out)
    assert rc == 0 and f"for {small} or fewer launches of fused_moe, --regime family" in err
    for extra in (
        ["--families", "fused_moe", "--n", str(FAMILY_PLAN_MAX_LAUNCHES + 4)],
        ["--families", "fused_moe", "--n", small, "--regime", "family"],
        ["--families", "gemm", "--n", small],
    ):
        rc, _, err = _run(capsys, *PLAN, *extra, "--out", out)
        assert rc == 0 and "--regime family" not in err, extra


def test_calibrate_plan_says_when_fused_moe_launches_are_too_few_for_the_analog_term(tmp_path, capsys):
    """Fewer than ANALOG_MIN_LAUNCHES fused-MoE launches: a note says that many enable the analog-GPU term of
    `calibrate fit`; that many, or GEMM alone (no analog term by default): no note."""
    from pipeweave.calibrate import ANALOG_MIN_LAUNCHES

    out = str(tmp_path / "plan.csv")
    rc, _, err = _run(capsys, *PLAN, "--families", "fused_moe", "--n", "8", "--out", out)
    assert rc == 0 and f"with {ANALOG_MIN_LAUNCHES} or more launches of fused_moe" in err and "analog GPUs" in err
    for extra in (["--families", "fused_moe", "--n", str(ANALOG_MIN_LAUNCHES)], ["--families", "gemm", "--n", "8"]):
        rc, _, err = _run(capsys, *PLAN, *extra, "--out", out)
        assert rc == 0 and "analog GPUs" not in err, extra


# 12. fixes name the command line, and a missing kernel file comes before a missing --config
def test_spec_file_fix_names_the_gpus_command(tmp_path, capsys):
    spec = tmp_path / "mine.toml"
    spec.write_text('name = "mine"\nsm_count = 10\n')  # hand-made, incomplete on purpose
    rc, _, err = _run(capsys, "gpus", "--gpu", str(spec))
    assert rc == 2 and "pipeweave gpus --gpu H100 --spec-file" in err and "spec_to_toml" not in err


def test_kernel_file_is_checked_before_config(tmp_path, capsys):
    rc, _, err = _run(capsys, "explain", "--gpu", "H100", "--kernel", str(tmp_path / "nonexist.py") + ":foo")
    assert rc == 2 and "does not exist" in err and "config" not in err
    kernel = Path(__file__).resolve().parents[2] / "examples" / "triton_kernels.py"
    rc, _, err = _run(capsys, "explain", "--gpu", "H100", "--kernel", f"{kernel}:add_relu")
    assert rc == 2 and "needs --config" in err and "config=" not in err


# 13. an absurdly long value is echoed cut
def test_long_gpu_value_is_echoed_cut(capsys):
    rc, _, err = _run(capsys, "predict", "--gpu", "X" * 5000, "--family", "gemm", "--m", "1", "--n", "1", "--k", "1")
    assert rc == 2 and "X" * 78 not in err and "X" * 77 + "..." in err
    rc, _, err = _run(capsys, "predict", "--gpu", "H100", "--family", "Y" * 5000)
    assert rc == 2 and "Y" * 78 not in err and "..." in err


# a --data folder that does not exist is named before any work, on every command that takes --data
@pytest.mark.parametrize("cmd", [["predict", "--gpu", "H100", *GEMM64], ["data"]])
def test_missing_data_folder_is_named(capsys, tmp_path, cmd):
    missing = str(tmp_path / "no_such_folder")
    rc, out, err = _run(capsys, *cmd, "--data", missing)
    assert rc == 2 and "no_such_folder" in err and "--data" in err and "not a directory" in err
    assert "latency" not in out
