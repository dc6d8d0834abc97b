"""CLI commands end to end through pipeweave.cli.main.main (real data; tiny models for speed)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipeweave.cli.main import main


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert "pipeweave" in capsys.readouterr().out
    assert main([]) == 0
    out = capsys.readouterr().out
    for cmd in ("data", "gpus", "explain", "predict", "train", "evaluate", "tune", "bench"):
        assert cmd in out


def test_explain_json_fields(capsys):
    rc = main(
        [
            "explain",
            "--gpu",
            "H100",
            "--family",
            "gemm",
            "--dtype",
            "bfloat16",
            "--m",
            "4096",
            "--n",
            "4096",
            "--k",
            "4096",
            "--json",
        ]
    )
    assert rc == 0
    obj = json.loads(capsys.readouterr().out)
    assert set(obj) >= {"tile_plan", "pipes", "bound_pipe", "roofline_us", "tilesight_us"}
    assert set(obj["pipes"]) == {"tensor", "fma", "alu", "xu", "smem", "l2", "dram"}
    assert obj["pipes"]["tensor"]["work"] == 2 * 4096**3
    assert obj["roofline_us"] == pytest.approx(2 * 4096**3 / (4096 * 132 * 1830), rel=1e-6)


def test_explain_spec_file_gpu(capsys, tmp_path):
    from pipeweave._paths import DATASETS_DIR

    rc = main(
        [
            "explain",
            "--gpu",
            str(DATASETS_DIR / "example_gpu_spec.toml"),
            "--family",
            "gemm",
            "--m",
            "1024",
            "--n",
            "1024",
            "--k",
            "1024",
            "--json",
        ]
    )
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["envelope_us"] > 0


def test_explain_row_kernel_leaves_out_its_blank_tile_fields(capsys):
    assert (
        main(["explain", "--gpu", "H100", "--family", "rmsnorm", "--num-tokens", "4096", "--hidden-size", "4096"]) == 0
    )
    plan = next(ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("tile plan"))
    assert "BM=1" in plan and "BK=" not in plan and "nan" not in plan


def test_explain_errors_are_one_line(capsys):
    assert main(["explain", "--gpu", "H1000", "--family", "gemm", "--m", "1", "--n", "1", "--k", "1"]) == 2
    err = capsys.readouterr().err
    assert "unknown GPU 'H1000'" in err and "Traceback" not in err
    assert main(["explain", "--gpu", "H100", "--family", "gemm", "--m", "8"]) == 2
    assert "--n" in capsys.readouterr().err
    assert (
        main(["explain", "--gpu", "A100", "--family", "gemm", "--dtype", "fp8", "--m", "8", "--n", "8", "--k", "8"])
        == 2
    )
    assert "fp8" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["predikt"], ["invalid choice: 'predikt'", "did you mean 'predict'?", "'pipeweave --help'"]),
        (["predict", "--famly", "gemm"], ["pipeweave predict: error: unrecognized arguments", "'--family'?"]),
        (["predict", "--family", "gemmm"], ["invalid choice: 'gemmm'", "did you mean 'gemm'?"]),
        (
            ["predict", "--gpu", "H100", "--m", "x"],
            ["argument --m: invalid whole number: 'x'", "'pipeweave predict --help'"],
        ),
        (["predict", "--gpu", "H100", "--m", "4096.5"], ["argument --m: '4096.5' is not a whole number"]),
        (["profiles", "imprt"], ["pipeweave profiles: error:", "did you mean 'import'?"]),
        (
            ["calibrate", "plan", "--gpu", "B200", "--out", "p.csv", "--nn", "4"],
            ["pipeweave calibrate plan: error:", "'--n'?"],
        ),
    ],
)
def test_usage_errors_are_one_line_with_a_fix(argv, needles, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" not in err and len(err.strip().splitlines()) == 2, err  # the error and its fix, no usage block
    assert err.splitlines()[1].startswith("  fix: ")
    for needle in needles:
        assert needle in err, err


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, data_dir):
    path = tmp_path_factory.mktemp("models") / "tiny.ubj"
    rc = main(
        [
            "train",
            "--data",
            str(data_dir),
            "--families",
            "moe_w13",
            "gemm",
            "--sources",
            "pipeweave",
            "--n-estimators",
            "5",
            "--no-progress",
            "--out",
            str(path),
        ]
    )
    assert rc == 0 and path.exists()
    return path


def test_predict_single_launch(tiny_model, capsys):
    rc = main(
        [
            "predict",
            "--model",
            str(tiny_model),
            "--gpu",
            "B300",
            "--family",
            "moe_w13",
            "--num-tokens",
            "64",
            "--num-experts",
            "64",
            "--topk",
            "8",
            "--hidden-size",
            "4096",
            "--inter-size",
            "1536",
            "--json",
        ]
    )
    assert rc == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["gpu"] == "B300" and obj["latency_us_pred"] > 0
    # a shape written as a CSV cell may write it (4096.0, 4.096e3) is the same launch
    argv = ["predict", "--model", str(tiny_model), "--gpu", "B300", "--family", "moe_w13", "--num-experts", "64"]
    argv += ["--topk", "8", "--hidden-size", "4.096e3", "--inter-size", "1536.0", "--num-tokens", "64", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["latency_us_pred"] == obj["latency_us_pred"]


def test_predict_attention_names_its_backend(tiny_model, capsys):
    launch = [
        "--gpu",
        "H200",
        "--family",
        "attention_context",
        "--batch-size",
        "2",
        "--isl",
        "128",
        "--num-heads",
        "32",
        "--num-kv-heads",
        "8",
        "--head-dim",
        "128",
    ]
    # the tiny model never trained on attention: the launch is refused with the reason, not guessed
    assert main(["predict", "--model", str(tiny_model), *launch]) == 2
    assert "the model was not trained on family 'attention_context'" in capsys.readouterr().err
    args = ["predict", *launch]  # the shipped model
    assert main(args) == 0
    assert "(flash_attention)" in capsys.readouterr().out  # the documented default
    assert main(args + ["--backend", "trtllm_mha", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["backend"] == "trtllm_mha" and obj["latency_us_pred"] > 0
    # a KV cache of another dtype than the launch's is named on the result line
    assert main(args + ["--kv-cache-dtype", "fp8"]) == 0
    assert "(flash_attention), fp8 KV cache on H200-SXM" in capsys.readouterr().out


def test_predict_csv_reports_bad_rows_and_predicts_the_rest(tiny_model, tmp_path, capsys):
    rows = pd.DataFrame(
        {  # hand-made launch rows; row 2 has an unknown family, row 3 a bad shape
            "family": ["moe_w13", "conv2d", "moe_w13", "gemm"],
            "dtype": ["bfloat16", "bfloat16", "bfloat16", "fp8"],
            "num_tokens": [128, 1, -5, None],
            "num_experts": [64, 1, 64, None],
            "topk": [8, 1, 8, None],
            "hidden_size": [4096, 1, 4096, None],
            "inter_size": [1536, 1, 1536, None],
            "m": [None, None, None, 256],
            "n": [None, None, None, 512],
            "k": [None, None, None, 1024],
        }
    )
    src = tmp_path / "rows.csv"
    rows.to_csv(src, index=False)
    out = tmp_path / "preds.csv"
    rc = main(["predict", "--model", str(tiny_model), "--gpu", "H200", "--input", str(src), "--output", str(out)])
    assert rc == 1  # documented: partial success (some rows reported, the others written)
    err = capsys.readouterr().err
    assert "row 2" in err and "conv2d" in err and "row 3" in err and "num_tokens" in err
    pred = pd.read_csv(out)
    assert pred["latency_us_pred"].notna().tolist() == [True, False, False, True]


def test_predict_refuses_model_from_other_schema(tmp_path, capsys):
    bad = tmp_path / "bad.ubj"
    bad.write_bytes(b"\x00garbage")
    assert (
        main(["predict", "--model", str(bad), "--gpu", "H100", "--family", "gemm", "--m", "1", "--n", "1", "--k", "1"])
        == 2
    )
    assert "pipeweave train" in capsys.readouterr().err


def test_bench_goal_lines_state_met_and_missed():
    # hand-made results record (not measurements): one goal met, one missed, one not measured
    from pipeweave.cli._bench import _goal_lines

    res = {"predict": {"rows_per_s": 250_000, "whole_over_boosters": 0.5}, "rank100_ms": 1.2}
    text = "\n".join(_goal_lines(res))
    assert "| batch predict, whole path (rows/s) | 1e+06 | 250000 | **missed** (4.00x off) |  |" in text
    assert "| whole path / boosters alone | 0.5 | 0.5 | met |  |" in text
    assert "| rank 100 tile configs (ms) | 5 | 1.2 | met |  |" in text
    assert "| `import pipeweave` (s) | 0.3 | not measured in this record | | |" in text


def test_bench_goal_lines_say_why_a_goal_is_missed_from_the_same_record():
    # hand-made results record (not measurements): the reasons quote the record's own numbers
    from pipeweave.cli._bench import _goal_lines

    res = {
        "predict": {
            "rows": 200_000,
            "seconds": 2.0,
            "rows_per_s": 100_000,
            "boosters_rows_per_s": 250_000,
            "whole_over_boosters": 0.4,
            "model_trees": 200,
        },
        "cli_single_predict_s": {"median": 1.3, "imports_floor_s": 0.8},
        "logo_s": {"median": 420.0, "fits": 370, "stages_s": {"fit_and_predict": 300.0, "load_and_featurize": 30.0}},
    }
    text = "\n".join(_goal_lines(res))
    assert "the boosters alone run at 250,000 rows/s" in text
    # 200k / 250k = 0.80 s of boosters, 2.0 - 0.80 = 1.20 s the rest
    assert "of the whole path's 2.0 s, 0.80 s is the family boosters and 1.20 s everything else" in text
    assert "seen-GPU boosters" in text
    assert "importing pandas and xgboost alone takes 0.8 s" in text and "add 0.50 s" in text
    assert "370 fits" in text and "fit and predict (300.0 s)" in text


def _readme_cli_tour() -> list[list[str]]:
    """The README's "CLI tour" commands (continuation lines joined, comments dropped), as argv lists."""
    import shlex
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = text.split("## CLI tour", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    joined = block.replace("\\\n", " ")
    cmds = []
    for line in joined.splitlines():
        line = line.split("  #", 1)[0].strip()
        if line.startswith("pipeweave "):
            cmds.append(shlex.split(line)[1:])
    return cmds


#: tour commands that need no file of the reader's, no long run and no shared-storage side effect
_SELF_CONTAINED = ("gpus", "explain", "predict", "sass", "diagnose")


def test_readme_cli_tour_runs_as_written(capsys):
    """Every self-contained command of the README's CLI tour runs as written and exits 0."""
    from pipeweave.cli.main import main

    cmds = [c for c in _readme_cli_tour() if c[0] in _SELF_CONTAINED and "--input" not in c]
    assert len(cmds) >= 6, cmds
    for argv in cmds:
        if argv[0] == "sass":
            pytest.importorskip("triton")
        rc = main(argv)
        out, err = capsys.readouterr()
        assert rc == 0, (argv, err)
        assert out.strip() and "Traceback" not in err, argv


def _subcommand_helps() -> dict[str, str]:
    import argparse

    from pipeweave.cli.main import build_parser

    out: dict[str, str] = {}

    def walk(name: str, parser: argparse.ArgumentParser) -> None:  # the top level and every (nested) subcommand
        out[name] = parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(f"{name} {sub_name}".strip(), sub)

    walk("", build_parser())
    return out


def test_help_examples_never_overwrite_committed_results():
    """An example command in a --help text whose --out is committed to the repository (a tracked file,
    or a folder holding one) says --force, and no example was joined onto its neighbour by a stray
    line continuation (runs of spaces)."""
    import re
    from pathlib import Path

    from pipeweave._outputs import committed_files

    repo = Path(__file__).resolve().parents[2]
    if not committed_files(repo / "pyproject.toml"):
        pytest.skip("not a git source checkout")
    seen = outs = 0
    for name, text in _subcommand_helps().items():
        for line in text.splitlines():
            cmd = line.split("#")[0].strip()
            if not (cmd.startswith("pipeweave ") or cmd.startswith("python -m pipeweave")):
                continue
            seen += 1
            assert not re.search(r"\S {3,}--", cmd), (name, line)
            out = re.search(r"--out\s+(\S+)", cmd)
            if out and not out.group(1).startswith("/"):
                outs += 1
                if committed_files(repo / out.group(1)):
                    assert "--force" in cmd, (name, line)
    assert seen >= 10 and outs >= 3


def test_train_refuses_to_replace_the_committed_model(tmp_path, capsys):
    """`pipeweave train --out models/pipeweave_default.ubj` without --force stops before training and
    leaves the shipped file as it was (only where git tracks it: a source checkout)."""
    from pathlib import Path

    from pipeweave._outputs import committed_files

    shipped = Path(__file__).resolve().parents[2] / "models" / "pipeweave_default.ubj"
    if not shipped.exists() or not committed_files(shipped):
        pytest.skip("no git-tracked shipped model here (not a source checkout)")
    before = shipped.stat().st_mtime_ns, shipped.stat().st_size
    rc = main(["train", "--families", "gemm", "--n-estimators", "1", "--no-progress", "--out", str(shipped)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "committed model file" in err and "--force" in err
    assert (shipped.stat().st_mtime_ns, shipped.stat().st_size) == before


def test_shape_flags_also_accept_the_canonical_column_name():
    from pipeweave.cli.main import build_parser

    parser = build_parser()
    common = ["predict", "--gpu", "H100", "--family", "attention_generation", "--num-heads", "32"]
    a = parser.parse_args([*common, "--num-kv-heads", "8"])
    b = parser.parse_args([*common, "--num-key-value-heads", "8"])
    assert a.num_key_value_heads == b.num_key_value_heads == 8


def test_predict_notes_extrapolations_outside_the_trained_latency_range(tiny_model, tmp_path, capsys):
    from pipeweave.model import read_stamp

    lo, hi = read_stamp(tiny_model)["latency_range_us"]["moe_w13"]
    rows = pd.DataFrame(  # hand-made launches: a typical MoE layer, a far smaller and a far larger one
        {
            "family": "moe_w13",
            "dtype": "bfloat16",
            "num_tokens": [64, 1, 65536],
            "num_experts": [64, 1, 8],
            "topk": [8, 1, 2],
            "hidden_size": [4096, 64, 16384],
            "inter_size": [1536, 64, 16384],
        }
    )
    src, out = tmp_path / "rows.csv", tmp_path / "preds.csv"
    rows.to_csv(src, index=False)
    assert (
        main(["predict", "--model", str(tiny_model), "--gpu", "H200", "--input", str(src), "--output", str(out)]) == 0
    )
    err = capsys.readouterr().err
    pred = pd.read_csv(out)["latency_us_pred"].to_numpy()
    outside = [i + 1 for i, p in enumerate(pred) if not lo <= p <= hi]
    assert outside, (pred, lo, hi)  # the hand-made extremes leave the range this model was trained on
    one = len(outside) == 1  # counts agree with their nouns ("1 prediction is", "2 predictions are")
    said = f"note: {len(outside)} prediction{'' if one else 's'} {'is' if one else 'are'} outside"
    assert said in err and f"(row{'' if one else 's'} {', '.join(map(str, outside))})" in err
    # a single launch: the note on stderr, and the flag in --json
    flags = ["--family", "moe_w13", "--num-tokens", "1", "--num-experts", "1", "--topk", "1"]
    flags += ["--hidden-size", "64", "--inter-size", "64"]
    assert main(["predict", "--model", str(tiny_model), "--gpu", "H200", *flags, "--json"]) == 0
    cap = capsys.readouterr()
    obj = json.loads(cap.out)
    assert obj["extrapolated"] is (not lo <= obj["latency_us_pred"] <= hi) is True  # a 64-wide, 1-token layer
    assert "is outside the moe_w13 latencies" in cap.err


def test_train_single_booster_flag_and_its_former_name():
    from pipeweave.cli.main import build_parser

    parser = build_parser("train")
    assert parser.parse_args(["train", "--out", "m.ubj", "--single-booster"]).shared is True
    assert parser.parse_args(["train", "--out", "m.ubj", "--shared"]).shared is True  # the former name still works
    assert parser.parse_args(["train", "--out", "m.ubj"]).shared is False


def test_train_help_lists_single_booster_not_its_former_name(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert "--single-booster" in out and "--shared" not in out


def test_tune_row_cap_has_train_s_name_and_keeps_its_former_one(capsys):
    from pipeweave.cli.main import build_parser

    parser = build_parser("tune")
    assert parser.parse_args(["tune"]).max_rows_per_group == 5000
    assert parser.parse_args(["tune", "--max-rows-per-group", "9"]).max_rows_per_group == 9
    assert parser.parse_args(["tune", "--max-rows-per-gpu", "7"]).max_rows_per_group == 7  # former name
    with pytest.raises(SystemExit):
        main(["tune", "--help"])
    out = capsys.readouterr().out
    assert "--max-rows-per-group" in out and "--max-rows-per-gpu" not in out


def test_kernel_files_in_examples_exist():
    """Every `--kernel FILE:NAME` in a --help text or the README names a kernel shipped in the repository."""
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    texts = [*_subcommand_helps().values(), (repo / "README.md").read_text(encoding="utf-8")]
    refs = {
        m for t in texts for m in re.findall(r"--kernel\s+([\w./-]+\.py):(\w+)", t) if m[0].lower() != "file.py"
    }  # FILE.py: a placeholder
    assert len(refs) >= 2
    for path, name in refs:
        src = repo / path
        assert src.is_file(), path
        assert re.search(rf"^def {name}\(", src.read_text(encoding="utf-8"), re.M), (path, name)


def test_pipeweave_warnings_print_as_one_note_line(capsys):
    import pipeweave
    from pipeweave.cli.main import _show_warning

    inside = str(__import__("pathlib").Path(pipeweave.__file__).parent / "evaluation" / "_suite.py")
    _show_warning(RuntimeWarning("2 profile rows are left out"), RuntimeWarning, inside, 542)
    assert capsys.readouterr().err == "note: 2 profile rows are left out\n"  # no path, line number or source
    _show_warning(UserWarning("from elsewhere"), UserWarning, "/usr/lib/python3/site-packages/x.py", 7)
    assert "x.py:7: UserWarning: from elsewhere" in capsys.readouterr().err


def test_plural():
    from pipeweave.cli._common import plural

    assert [plural(1, "launch"), plural(3, "launch"), plural(1, "GPU"), plural(2, "GPU")] == [
        "1 launch",
        "3 launches",
        "1 GPU",
        "2 GPUs",
    ]
    assert plural(12000, "row") == "12,000 rows"


def test_sass_cached_says_when_it_ignores_the_asked_shape(capsys):
    argv = ["sass", "--builtin", "gemm", "--arch", "sm_90", "--cached", "--config", "128,128,64,8,4,3"]
    assert main(argv) == 0
    assert "reference shape" not in capsys.readouterr().err
    assert main([*argv, "--k", "8192"]) == 0
    assert "not at --k 8192" in capsys.readouterr().err


def test_bench_dask_training_sample_says_when_the_data_holds_fewer_rows(capsys):
    """Hand-made rows (not measurements): two groups of 300 rows; 400 asked for -> 2 per group, 4 rows, a note."""
    import pandas as pd

    from pipeweave.cli._bench import _dask_train_sample

    df = pd.DataFrame({"gpu": ["a"] * 300 + ["b"] * 300, "family": "gemm", "dtype": "bf16", "source": "s"})
    df["latency_us"] = range(len(df))
    train = _dask_train_sample(df, 400)
    assert len(train) == 4 and sorted(train["gpu"].value_counts().tolist()) == [2, 2]
    assert "uses 4 profile rows, not the 400 asked for" in capsys.readouterr().err
    many = pd.concat([df.assign(gpu=f"g{i}") for i in range(4)], ignore_index=True)  # 4 groups of 600 rows
    assert len(_dask_train_sample(many, 800)) == 16
    assert "asked for" in capsys.readouterr().err
    assert len(_dask_train_sample(df, 2)) == 2  # 1 per group, 2 groups: all that was asked for, no note
    assert capsys.readouterr().err == ""


def test_flags_the_family_does_not_read_are_noted(capsys):
    assert (
        main(
            [
                "predict",
                "--gpu",
                "H100",
                "--family",
                "gemm",
                "--m",
                "16",
                "--n",
                "4096",
                "--k",
                "4096",
                "--num-tokens",
                "99",
                "--head-dim",
                "64",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "note: gemm does not read --num-tokens --head-dim; ignored (its flags: --m --n --k)" in err
    assert (
        main(
            [
                "predict",
                "--gpu",
                "H100",
                "--family",
                "fused_moe",
                "--num-tokens",
                "64",
                "--hidden-size",
                "4096",
                "--inter-size",
                "1536",
                "--topk",
                "8",
                "--num-experts",
                "64",
                "--moe-ep-size",
                "2",
            ]
        )
        == 0
    )
    assert "does not read" not in capsys.readouterr().err  # an optional column the family reads


def test_a_family_name_suggests_its_evaluation_names(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--families", "gemm"])
    assert "did you mean one of 'gemm_bf16', 'gemm_fp8', 'gemm_fp32'?" in capsys.readouterr().err


def test_a_left_out_dtype_is_the_family_s(tmp_path, capsys):
    """Hand-made launches: no --dtype on an FP32 family, a blank dtype cell, rows without a dtype column."""
    import pipeweave as pw

    assert main(["predict", "--gpu", "A100", "--family", "gemm_fp32", "--m", "512", "--n", "512", "--k", "512"]) == 0
    assert "(gemm_fp32 float32 on A100-SXM)" in capsys.readouterr().out
    rows = tmp_path / "rows.csv"
    rows.write_text("family,dtype,m,n,k\ngemm,,128,4096,4096\ngemm,bfloat16,128,4096,4096\n")
    out = tmp_path / "p.csv"
    assert main(["predict", "--gpu", "H100", "--input", str(rows), "--output", str(out)]) == 0
    pred = pd.read_csv(out)["latency_us_pred"]
    assert pred.iloc[0] == pred.iloc[1]
    no_col = pw.predict(dict(family="softmax_fp32", num_tokens=64, hidden_size=4096), gpu="A100").iloc[0]
    assert (
        no_col
        == pw.predict(dict(family="softmax_fp32", dtype="float32", num_tokens=64, hidden_size=4096), gpu="A100").iloc[0]
    )


def test_plan_candidates_from_the_shared_data_are_measurable(capsys):
    """`calibrate plan` without --candidates plans only balanced MoE routing (what pipeweave.measure times)."""
    from pipeweave.cli._calibrate import _candidates_from_data

    cand = _candidates_from_data(None, ["fused_moe"], "bfloat16", "B300")
    assert len(cand) and set(cand["distribution"].astype(str)) == {"balanced"}
    assert "power-law routing left out" in capsys.readouterr().err


def test_plan_candidates_leave_a_library_tile_blank():
    """Real rows (NeuSight's FP32 GEMMs): a planned FP32 GEMM carries no cuBLAS tile of the GPU that measured it (the
    new GPU's cuBLAS may pick another), so each shape is one candidate; the Triton-tiled families keep their tiles."""
    import pipeweave as pw
    from pipeweave.cli._calibrate import _candidates_from_data
    from pipeweave.vocab import TILE_COLUMNS

    cand = _candidates_from_data(None, ["gemm_fp32"], None, "T4")
    assert len(cand) and cand[list(TILE_COLUMNS)].isna().all().all()
    assert not cand.drop(columns="gpu").duplicated().any()
    shapes = pw.load_profiles(families=["gemm_fp32"])[["op", "batch_size", "m", "n", "k"]].astype(str)
    assert len(cand) == len(shapes.drop_duplicates())
    moe = _candidates_from_data(None, ["moe_w13"], None, "H100")
    assert moe["block_m"].notna().any()  # the Triton configs the sweeps recorded stay


def test_padded_cells_and_a_blank_dtype_flag(tmp_path, capsys):
    """Hand-made launches: 'gemm ' and 'bfloat16 ' cells are gemm / bfloat16; --dtype ' ' is the family's."""
    rows = tmp_path / "rows.csv"
    rows.write_text("family,dtype,m,n,k\ngemm ,bfloat16 , 4096,4096,4096\ngemm,bfloat16,4096,4096,4096\n")
    out = tmp_path / "p.csv"
    assert main(["predict", "--gpu", "H100", "--input", str(rows), "--output", str(out)]) == 0
    pred = pd.read_csv(out)["latency_us_pred"]
    assert pred.iloc[0] == pred.iloc[1]
    assert (
        main(
            [
                "predict",
                "--gpu",
                "H100",
                "--family",
                "gemm",
                "--dtype",
                " ",
                "--m",
                "64",
                "--n",
                "64",
                "--k",
                "64",
                "--json",
            ]
        )
        == 0
    )
    assert '"dtype": "bfloat16"' in capsys.readouterr().out


def test_predict_names_the_tile_it_tried_for_an_fp32_gemm_without_one(capsys):
    """Hand-made launches (shipped model): an FP32 GEMM without a tile on a GPU whose launches the model trained on
    (the T4) prints the kernel cuBLAS ran for the nearest of them; on a GPU of an architecture with no measured FP32
    GEMM (the B200), the fastest SIMT tile the model tried and its prediction, which is at most the printed latency
    (the geometric mean of the fastest); --json carries either."""
    from pipeweave.frontend import SIMT_TILES
    from pipeweave.model import LIBRARY_TILE_FASTEST

    shape = ["--family", "gemm_fp32", "--m", "64", "--n", "1024", "--k", "8192", "--op", "linear"]
    assert main(["predict", "--gpu", "T4", *shape, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tile = out["library_tile"]
    assert tile["source"] == "T4" and "averaged" not in tile
    assert tile["latency_fastest_us"] == pytest.approx(out["latency_us_pred"], rel=1e-9)
    assert main(["predict", "--gpu", "T4", *shape]) == 0
    text = capsys.readouterr().out
    assert "what cuBLAS ran for the nearest measured launches on T4" in text
    assert f"{tile['block_m']}x{tile['block_n']}x{tile['block_k']}" in text
    assert main(["predict", "--gpu", "B200", *shape, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tile = out["library_tile"]
    assert tile["source"] == "fastest" and tile["averaged"] == LIBRARY_TILE_FASTEST
    assert (tile["block_m"], tile["block_n"], tile["block_k"]) in {t[:3] for t in SIMT_TILES}
    assert tile["split_k"] >= 1 and tile["latency_fastest_us"] <= out["latency_us_pred"] * (1 + 1e-9)
    assert main(["predict", "--gpu", "B200", *shape]) == 0
    text = capsys.readouterr().out
    assert f"the geometric mean of the {LIBRARY_TILE_FASTEST} fastest SIMT tiles" in text
    assert f"{tile['block_m']}x{tile['block_n']}x{tile['block_k']}" in text
    assert main(["predict", "--gpu", "H100", "--family", "gemm", "--m", "64", "--n", "64", "--k", "64", "--json"]) == 0
    assert "library_tile" not in json.loads(capsys.readouterr().out)  # not an FP32 GEMM: nothing tried


def test_predict_input_tiles_adds_the_kernel_of_each_fp32_gemm_without_one(tmp_path, capsys):
    """Hand-made launches (shipped model): --tiles adds the kernel each FP32 GEMM row without a tile was predicted
    with, as the single-launch --json names it (the T4's own vote, the A40's architecture's tile with its split
    inferred, the B200's fastest tile); blank on a bf16 GEMM, a row giving its tile and a row not predicted; without
    --tiles the columns are absent; --dask refuses it."""
    from pipeweave.api import LIBRARY_TILE_FRAME_COLUMNS

    rows = tmp_path / "rows.csv"
    rows.write_text(
        "family,dtype,op,m,n,k,batch_size,gpu,block_m,block_n,block_k\n"
        "gemm_fp32,float32,linear,64,1024,8192,1,T4,,,\n"
        "gemm_fp32,float32,bmm,512,512,512,8,A40,,,\n"
        "gemm_fp32,float32,linear,64,1024,8192,1,B200,,,\n"
        "gemm,bfloat16,,4096,4096,4096,,H100,,,\n"
        "gemm_fp32,float32,linear,-5,1024,8192,1,T4,,,\n"
        "gemm_fp32,float32,bmm,512,512,512,8,T4,64,64,8\n"
    )
    out = tmp_path / "preds.csv"
    assert main(["predict", "--input", str(rows), "--output", str(out), "--tiles"]) == 1  # row 5 is not predicted
    capsys.readouterr()
    got = pd.read_csv(out, keep_default_na=False)
    assert list(got.columns[-len(LIBRARY_TILE_FRAME_COLUMNS) :]) == list(LIBRARY_TILE_FRAME_COLUMNS)
    assert got["tile_source"].tolist()[:3] == ["T4", "A100-PCIe-40GB + A100-PCIe-80GB + L4", "fastest"]
    assert got["split_source"].tolist() == ["voted", "inferred", "inferred", "", "", ""]
    assert (got.loc[3:, "tile_block_m"] == "").all() and (got.loc[3:, "tile_split_k"] == "").all()
    for i, gpu in enumerate(("T4", "A40", "B200")):
        shape = ["--family", "gemm_fp32", "--op", got["op"][i], "--batch-size", str(got["batch_size"][i])]
        shape += ["--m", str(got["m"][i]), "--n", str(got["n"][i]), "--k", str(got["k"][i])]
        assert main(["predict", "--gpu", gpu, *shape, "--json"]) == 0
        one = json.loads(capsys.readouterr().out)
        tile = one["library_tile"]
        assert int(got["tile_block_m"][i]) == tile["block_m"] and int(got["tile_split_k"][i]) == tile["split_k"]
        assert float(got["latency_us_pred"][i]) == pytest.approx(one["latency_us_pred"], rel=1e-6)
    assert main(["predict", "--input", str(rows), "--output", str(tmp_path / "plain.csv")]) == 1
    capsys.readouterr()
    assert "tile_source" not in pd.read_csv(tmp_path / "plain.csv").columns
    assert main(["predict", "--dask", "local:1", "--input", str(rows), "--output", str(tmp_path / "d"), "--tiles"]) == 2
    assert "--tiles is not available with --dask" in capsys.readouterr().err


def test_explain_shows_the_tile_predict_used_for_an_fp32_gemm_without_one(capsys):
    """Hand-made launch, shipped model: explain's tile plan is the kernel predict printed (the T4's nearest measured
    launches); --model none gives the front-end's heuristic tile."""
    shape = ["--family", "gemm_fp32", "--m", "64", "--n", "1024", "--k", "8192", "--op", "linear"]
    assert main(["predict", "--gpu", "T4", *shape, "--json"]) == 0
    tile = json.loads(capsys.readouterr().out)["library_tile"]
    assert main(["explain", "--gpu", "T4", *shape, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["tile_plan"]
    assert all(plan[c] == tile[c] for c in ("block_m", "block_n", "block_k", "num_warps", "split_k"))
    assert main(["explain", "--gpu", "T4", *shape]) == 0
    assert "(the kernel cuBLAS ran for the nearest measured launches on T4)" in capsys.readouterr().out
    assert main(["explain", "--gpu", "T4", *shape, "--model", "none"]) == 0
    assert "(simt_heuristic; split_k of the smallest envelope)" in capsys.readouterr().out
    # the A40 (8.6): no trained GPU of its compute capability; the tile of those of its architecture (8.x), the
    # split inferred for the A40
    assert main(["predict", "--gpu", "A40", *shape, "--json"]) == 0
    tile = json.loads(capsys.readouterr().out)["library_tile"]
    assert "L4" in tile["source"] and "A100-PCIe-40GB" in tile["source"] and tile["split_source"] == "inferred"
    assert main(["predict", "--gpu", "A40", *shape]) == 0
    assert "(the same architecture), the split the smallest envelope on this GPU" in capsys.readouterr().out
    assert main(["explain", "--gpu", "A40", *shape, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["tile_plan"]
    assert all(plan[c] == tile[c] for c in ("block_m", "block_n", "block_k", "num_warps", "split_k"))
    assert plan["origin"].endswith("(its architecture); split_k of the smallest envelope on this GPU")
