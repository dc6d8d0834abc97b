"""`evaluate --profiles`: the user's own canonical profile files scored as their own source.

The profile file is a few hundred real bf16 GEMM rows of the shared data (A100 and H100) written
in the canonical format under a user source name; nothing is made up."""

from __future__ import annotations

import json

import pytest

from pipeweave import DataError


@pytest.fixture(scope="module")
def user_csv(data_dir, tmp_path_factory):
    from pipeweave.profiles import write_profiles
    from pipeweave.sources import load_profiles

    df = load_profiles(data_dir, families=["gemm"], dtypes=["bfloat16"])
    df = df[df["gpu"].isin(["A100-SXM", "H100-SXM"])]
    shapes = df[["m", "n", "k"]].drop_duplicates().sample(n=120, random_state=0)
    rows = df.merge(shapes, on=["m", "n", "k"])[["gpu", "family", "dtype", "m", "n", "k", "latency_us"]]
    path = tmp_path_factory.mktemp("mine") / "my_profiles.csv"
    write_profiles(rows.assign(source="mylab", timing="cuda_graph"), path)
    return path


def test_profiles_alone_unseen_shape(user_csv, tmp_path, data_dir):
    from pipeweave.evaluation import run_evaluation

    before = user_csv.read_bytes()
    res = run_evaluation(
        "unseen-shape",
        families=["gemm_bf16"],
        methods=["pipeweave", "roofline"],
        out=tmp_path / "rep",
        data=data_dir,
        n_estimators=5,
        progress=False,
        profiles=[user_csv],
        shared=False,
    )
    assert list(res["families"]) == ["gemm_bf16"] and res["families"]["gemm_bf16"]["source"] == "mylab"
    assert set(res["families"]["gemm_bf16"]["gpus"]) == {"A100-SXM", "H100-SXM"}
    rec = res["extra"]["profiles"][0]
    assert rec["file"] == "my_profiles.csv" and rec["rows"] == 240 and len(rec["sha256"]) == 64
    assert "--profiles" in res["extra"]["command"] and "--no-shared" in res["extra"]["command"]
    assert json.loads((tmp_path / "rep" / "results.json").read_text())["protocol"] == "unseen-shape"
    timing = json.loads((tmp_path / "rep" / "timing.json").read_text())
    stages = timing["stages_s"]
    assert list(stages) == [
        "load_and_featurize",
        "fit_and_predict",
        "metrics_and_bootstrap",
        "report_files_and_figures",
    ]
    assert all(v >= 0 for v in stages.values()) and sum(stages.values()) <= timing["elapsed_s"] + 0.5
    assert timing["fits"] == 2  # one unseen-shape fold (one source, one family) x two methods
    assert user_csv.read_bytes() == before  # the user's file is never altered
    # unseen-shape trains on every training row by default (the cap is leave-one-generation-out's budget)
    assert res["extra"]["max_train_rows_per_gpu"] is None
    assert "- training rows per fold: every training row" in (tmp_path / "rep" / "results.md").read_text()


@pytest.mark.parametrize("cap", [0, -5, "all", 2.5])
def test_a_bad_training_cap_is_named(cap, data_dir, tmp_path):
    from pipeweave.evaluation import run_evaluation

    with pytest.raises(DataError, match=f"max_train_rows_per_gpu must be .*got {cap!r}"):
        run_evaluation("logo", families=["gemm_bf16"], out=tmp_path / "x", data=data_dir, max_train_rows_per_gpu=cap)


def test_the_evaluate_cli_refuses_a_negative_cap(capsys):
    from pipeweave.cli.main import main

    assert main(["evaluate", "--protocol", "logo", "--max-train-rows-per-gpu", "-1", "--out", "/tmp/pw_x"]) == 2
    assert "--max-train-rows-per-gpu must be >= 0, got -1" in capsys.readouterr().err


def test_profiles_outside_the_evaluation_families_are_named(user_csv, data_dir):
    from pipeweave.evaluation import load_eval_frame

    with pytest.raises(DataError, match=r"none of the profile rows .*\('gemm', 'bfloat16'\)"):
        load_eval_frame(data_dir, ["moe_w13"], profiles=[user_csv], shared=False)
    with pytest.raises(DataError, match="shared=False leaves no rows"):
        load_eval_frame(data_dir, ["gemm_bf16"], shared=False)


def test_cli_unseen_gpu_on_the_users_two_gpus(user_csv, tmp_path, data_dir, capsys):
    """`evaluate --protocol unseen-gpu`: one fold per GPU of the user's file, the goal listed per GPU."""
    from pipeweave.cli.main import main

    out = tmp_path / "ug"
    argv = ["evaluate", "--protocol", "unseen-gpu", "--families", "gemm_bf16", "--methods", "pipeweave", "roofline"]
    argv += ["--profiles", str(user_csv), "--no-shared", "--n-estimators", "5", "--no-progress"]
    assert main([*argv, "--data", str(data_dir), "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["protocol"] == "unseen-gpu"
    assert res["families"]["gemm_bf16"]["folds"] == ["A100-SXM", "H100-SXM"]
    assert set(res["by_gpu"]["gemm_bf16"]["pipeweave"]) == {"A100-SXM", "H100-SXM"}
    md = (out / "results.md").read_text()
    assert "each GPU is held out in turn" in md and "held-out GPU (generation): MAPE" in md
    assert "A100-SXM (ampere)" in md and "H100-SXM (hopper)" in md


@pytest.mark.parametrize(
    ("argv", "msg"),
    [
        (
            ["--protocol", "dse", "--profiles", "x.csv"],
            "apply to --protocol logo, unseen-gpu, unseen-shape and gpu-split, not 'dse'",
        ),
        (["--protocol", "logo", "--no-shared"], "--no-shared needs --profiles"),
    ],
)
def test_cli_flag_errors(argv, msg, tmp_path, capsys):
    from pipeweave.cli.main import main

    rc = main(["evaluate", *argv, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and "Traceback" not in err
