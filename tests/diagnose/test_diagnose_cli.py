"""`pipeweave diagnose` end to end through pipeweave.cli.main.main (shipped models), and its errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipeweave import DataError
from pipeweave.cli.main import main

LAUNCH = [
    "--gpu",
    "H100",
    "--family",
    "moe_w13",
    "--num-tokens",
    "512",
    "--num-experts",
    "64",
    "--topk",
    "8",
    "--hidden-size",
    "4096",
    "--inter-size",
    "1536",
]


def test_cli_json_fields(capsys, shipped_models):
    rc = main(["diagnose", *LAUNCH, "--config", "64,64,32,8,4,3", "--measured-us", "1234.5", "--top", "3", "--json"])
    assert rc == 0
    obj = json.loads(capsys.readouterr().out)
    assert {
        "predicted_us",
        "ceiling_us",
        "measured_over_ceiling",
        "headroom_verdict",
        "bound_pipe",
        "recommendations",
        "pipe_utilization",
    } <= set(obj)
    assert obj["predicted_us"] > 0 and obj["ceiling_us"] > 0
    assert obj["measured_over_ceiling"] == pytest.approx(1234.5 / obj["ceiling_us"])
    assert obj["ceiling_us"] >= obj["lower_bound_us"]
    assert 3 <= len(obj["recommendations"]) <= 4
    for r in obj["recommendations"]:
        assert {"config", "predicted_us", "speedup"} <= set(r)
        assert r["speedup"] == pytest.approx(obj["predicted_us"] / r["predicted_us"])
        assert obj["ceiling_us"] <= r["predicted_us"]


def test_help_examples_are_physically_possible(capsys, shipped_models):
    """Every builtin-family example of `diagnose --help` runs, and its measurement is above the lower bound."""
    import shlex

    from pipeweave.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    DESCRIPTION = sub.choices["diagnose"].description
    from pipeweave.diagnose import check_invariants

    text = DESCRIPTION.replace("\\\n", " ")
    cmds = [
        shlex.split(line.strip(), comments=True)[1:]
        for line in text.splitlines()
        if line.strip().startswith("pipeweave diagnose --gpu") and "--kernel" not in line
    ]
    assert len(cmds) >= 2
    for argv in cmds:
        assert main([*argv, "--json"]) == 0
        obj = json.loads(capsys.readouterr().out)
        check_invariants(obj)
        if obj["measured_us"] is not None:
            assert not obj["measurement_below_bound"], argv


def test_cli_text_output(capsys, shipped_models):
    rc = main(["diagnose", *LAUNCH, "--top", "2"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "ceiling" in out and "bound pipe" in out and "ranked configs" in out and "(given)" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        ([*LAUNCH, "--config", "64,64,32"], "six positive integers"),
        ([*LAUNCH, "--config", "64,64,x,8,4,3"], "six positive integers"),
        (["--gpu", "NoSuchGPU-9000", "--family", "moe_w13", "--num-tokens", "4"], "NoSuchGPU-9000"),
        (["--family", "moe_w13"], "needs --gpu"),
        (["--gpu", "H100"], "needs --family"),
        ([*LAUNCH, "--measured-us", "0"], "positive"),
        (["--gpu", "H100", "--family", "gemm", "--m", "128"], "needs"),
    ],
)
def test_cli_errors(capsys, shipped_models, argv, needle):
    rc = main(["diagnose", *argv, "--json"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "pipeweave diagnose: error:" in err and needle in err


def test_kernel_without_triton(capsys, monkeypatch, tmp_path):
    from pipeweave import CompileError
    from pipeweave.frontend.sass import _compile

    def no_triton():
        raise CompileError(
            "the SASS front-end needs Triton, which is not importable (No module named 'triton')",
            hint="pip install 'pipeweave[sass]'",
        )

    monkeypatch.setattr(_compile, "import_triton", no_triton)
    k = tmp_path / "k.py"
    k.write_text("x = 1\n")
    rc = main(["diagnose", "--gpu", "A100", "--kernel", f"{k}:add", "--config", "1,1024,1,1,4,1"])
    assert rc == 2
    assert "needs Triton" in capsys.readouterr().err


@pytest.mark.triton
def test_kernel_compile_failure(capsys, tmp_path):
    pytest.importorskip("triton")
    k = tmp_path / "bad_kernel.py"
    k.write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef bad(x_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, undefined_name)\n"
    )
    rc = main(
        [
            "diagnose",
            "--gpu",
            "A100",
            "--kernel",
            f"{k}:bad",
            "--config",
            "1,1024,1,1,4,1",
            "--signature",
            "x_ptr=*fp32,BLOCK=1024",
            "--grid",
            "4",
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "could not compile" in err
    rc = main(["diagnose", "--gpu", "A100", "--kernel", f"{k}:missing", "--config", "1,1024,1,1,4,1"])
    assert rc == 2
    assert "defines no 'missing'" in capsys.readouterr().err


@pytest.mark.triton
def test_kernel_diagnosis(capsys, tmp_path):
    pytest.importorskip("triton")
    k = tmp_path / "scale_kernel.py"
    k.write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n"
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    m = offs < n\n"
        "    x = tl.load(x_ptr + offs, mask=m)\n    tl.store(y_ptr + offs, tl.exp(x) * 2.0, mask=m)\n"
    )
    rc = main(
        [
            "diagnose",
            "--gpu",
            "A100",
            "--kernel",
            f"{k}:scale",
            "--config",
            "1,1024,1,1,4,1",
            "--signature",
            "x_ptr=*fp32,y_ptr=*fp32,n=1048576,BLOCK=1024",
            "--grid",
            "1024",
            "--measured-us",
            "20",
            "--json",
        ]
    )
    assert rc == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["ceiling_us"] > 0 and obj["measured_over_ceiling"] == pytest.approx(20 / obj["ceiling_us"])
    assert obj["bound_pipe"] in obj["pipe_times_us"]
    assert obj["recommendations"] == []


def test_rebuild_models_refuses_the_committed_models_without_force(capsys):
    from pipeweave._paths import MODELS_DIR

    before = {p.name: p.stat().st_mtime_ns for p in MODELS_DIR.glob("diagnose_*.ubj")}
    rc = main(["diagnose", "--rebuild-models"])
    err = capsys.readouterr().err
    assert rc == 2 and "committed model file" in err and "--force" in err and "Traceback" not in err
    assert {p.name: p.stat().st_mtime_ns for p in MODELS_DIR.glob("diagnose_*.ubj")} == before


def _user_sweep_rows():
    """Hand-made moe_w13 launches with made-up latencies (not data): one shape swept over five configs,
    its default-config launch, and a row of another family."""
    cfgs = [(64, 64, 64, 8, 4, 3), (128, 128, 64, 8, 8, 3), (128, 64, 64, 16, 4, 4), (64, 128, 64, 1, 4, 3)]
    cfgs.append((32, 64, 64, 8, 4, 4))
    shape = dict(gpu="H100", family="moe_w13", dtype="bfloat16", num_tokens=512, num_experts=64, topk=8)
    shape |= dict(hidden_size=3584, inter_size=2560)
    cols = ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages")
    rows = [{**shape, **dict(zip(cols, c)), "latency_us": t} for c, t in zip(cfgs, [900.0, 903.5, 908.0, 920.0, 990.0])]
    rows.append({**shape, "latency_us": 1000.0})  # the kernel's own config
    rows.append(dict(gpu="H100", family="gemm", dtype="bfloat16", m=64, n=64, k=64, latency_us=5.0))
    return pd.DataFrame(rows)


def test_user_dse_rows_flags_near_best_configs():
    from pipeweave.diagnose import USER_SWEEP_DATASET, user_dse_rows

    sweeps, defaults, other = user_dse_rows(_user_sweep_rows())
    assert other == 1 and len(defaults) == 1 and defaults["dataset"].tolist() == ["moe_w13"]
    # 900 (fastest), 903.5 (within 0.5%) and 908 (within 1%, third fastest) are kept; 920 and 990 are outside 1%
    # and not among the 3 fastest
    assert sweeps["latency_us"].tolist() == [900.0, 903.5, 908.0]
    assert sweeps["in_dse_99_5"].tolist() == [True, True, False]
    assert sweeps["in_dse_99"].tolist() == [True, True, True]
    assert sweeps["in_dse_top3"].tolist() == [True, True, True]
    assert set(sweeps["dataset"]) == {USER_SWEEP_DATASET}
    with pytest.raises(DataError, match="latency_us"):
        user_dse_rows(_user_sweep_rows().drop(columns="latency_us"))


def test_rebuild_models_from_your_profiles(tmp_path, capsys):
    from pipeweave.model import read_stamp

    prof = tmp_path / "sweeps.csv"
    _user_sweep_rows().to_csv(prof, index=False)
    models = tmp_path / "models"
    argv = ["diagnose", "--rebuild-models", "--profiles", str(prof), "--no-shared", "--models", str(models)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "3 near-best tile-sweep rows, 1 default-config rows (1 row of other families skipped" in err
    for role in ("ranker", "ceiling", "latency"):
        stamp = read_stamp(models / f"diagnose_{role}.ubj")
        assert stamp["shared_data"] is False and stamp["profiles"][0]["rows"] == 7, role
    launch = ["--family", "moe_w13", "--num-tokens", "512", "--num-experts", "64", "--topk", "8"]
    launch += ["--hidden-size", "3584", "--inter-size", "2560"]
    assert main(["diagnose", "--models", str(models), "--gpu", "H100", *launch, "--json"]) == 0
    assert "ceiling_us" in capsys.readouterr().out
    assert main(["diagnose", "--rebuild-models", "--no-shared", "--models", str(models)]) == 2
    assert "--no-shared needs --profiles" in capsys.readouterr().err
    assert main(["diagnose", "--gpu", "H100", *launch, "--profiles", str(prof)]) == 2
    assert "need --rebuild-models" in capsys.readouterr().err


def _gemm(*extra: str) -> list[str]:
    return ["diagnose", "--gpu", "H100", "--family", "gemm", *extra]


def test_gemm_ceiling_does_not_depend_on_top_and_ties_fold(capsys):
    """The ceiling is the best over all recommendable configs, whatever --top shows; exact ties that differ
    in one parameter only take one row."""
    shape = ["--m", "1", "--n", "4096", "--k", "4096", "--json"]
    assert main(_gemm(*shape, "--top", "1")) == 0
    small = json.loads(capsys.readouterr().out)
    assert main(_gemm(*shape, "--top", "50")) == 0
    big = json.loads(capsys.readouterr().out)
    assert small["ceiling_us"] == pytest.approx(big["ceiling_us"], rel=1e-12)
    recs = big["recommendations"]
    cols = ["block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"]
    for i, a in enumerate(recs):
        for b in recs[i + 1 :]:
            one_diff = sum(a[c] != b[c] for c in cols) == 1
            close = abs(a["predicted_us"] - b["predicted_us"]) <= 0.005 * min(a["predicted_us"], b["predicted_us"])
            assert not (one_diff and close), (a["config"], b["config"])


def test_gemm_shortlist_is_the_fastest_predicted_of_every_feasible_config():
    """gemm (pipeweave.vocab.LATENCY_ORDERED_FAMILIES): the listed configs are the fastest predicted of the whole
    feasible space (not the ranker's vocabulary), each listed config's folded twins included; moe_w13: the ranker."""
    import numpy as np

    from pipeweave.api import predict_frame
    from pipeweave.diagnose import CONFIG_COLUMNS, config_space, diagnose
    from pipeweave.hardware import get_gpu
    from pipeweave.vocab import LATENCY_ORDERED_FAMILIES

    assert "gemm" in LATENCY_ORDERED_FAMILIES
    launch = {"gpu": "H100-SXM", "family": "gemm", "dtype": "bfloat16", "m": 2048, "n": 1024, "k": 8192}
    res = diagnose(
        {**launch, "block_m": 64, "block_n": 64, "block_k": 32, "group_m": 1, "num_warps": 4, "num_stages": 2}, top=4
    )
    assert res["shortlist_order"] == "predicted_latency"
    assert res["n_recommendable"] == res["n_candidates"]
    space = config_space(get_gpu("H100-SXM"), "gemm", "bfloat16")[list(CONFIG_COLUMNS)].reset_index(drop=True)
    rows = space.assign(**launch)
    pred, _ = predict_frame(rows, None)
    pred = np.maximum(np.asarray(pred, dtype=float), res["lower_bound_us"])
    listed = [r for r in res["recommendations"] if not r["is_given"]]
    shown = {r["config"] for r in listed} | {c for r in listed for c in r["same_as"]}
    keys = space.astype(int).astype(str).agg(",".join, axis=1)
    fastest = keys[np.argsort(pred, kind="stable")[:4]]
    assert listed[0]["predicted_us"] == pytest.approx(float(pred.min()), rel=1e-6)
    assert fastest.iloc[0] in shown
    # every config faster than the last listed one is listed or folded into a listed one (same_as)
    faster = set(keys[pred < listed[-1]["predicted_us"] * (1 - 1e-9)])
    assert faster <= shown, sorted(faster - shown)[:5]
    assert float(np.sort(pred)[3]) <= listed[-1]["predicted_us"] * (1 + 1e-9)
    moe = diagnose(
        {
            "gpu": "H100-SXM",
            "family": "moe_w13",
            "dtype": "bfloat16",
            "num_tokens": 512,
            "num_experts": 64,
            "topk": 8,
            "hidden_size": 4096,
            "inter_size": 1536,
        },
        top=3,
    )
    assert moe["shortlist_order"] == "ranker"


def test_gemm_notes_do_not_contradict(capsys):
    assert main(_gemm("--m", "1", "--n", "4096", "--k", "4096", "--measured-us", "20", "--json")) == 0
    notes = " ".join(json.loads(capsys.readouterr().out)["notes"])
    assert not ("a faster config likely exists" in notes and "predicted faster than the given one" in notes)


def test_gemm_bound_pipe_is_the_top_row_of_its_column(capsys):
    assert main(_gemm("--m", "1000", "--n", "3000", "--k", "777", "--num-experts", "8")) == 0
    out, err = capsys.readouterr()
    assert err.count("--num-experts") == 1  # one note for the unread flag, not two
    lines = out.splitlines()
    i = next(i for i, ln in enumerate(lines) if "busiest SM us" in ln)
    bound = next(ln.split()[2] for ln in lines if ln.strip().startswith("bound pipe"))
    assert lines[i + 1].split()[0] == bound


def test_diagnose_a_gpu_from_a_spec_file():
    """The example spec file's GPU (never in the catalog): predicted, ranked and bounded like a catalog GPU."""
    import pipeweave as pw
    from pipeweave.hardware import EXAMPLE_SPEC_PATH

    res = pw.diagnose(
        {"family": "gemm", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096}, gpu=str(EXAMPLE_SPEC_PATH)
    )
    assert res["lower_bound_us"] <= res["ceiling_us"] <= res["predicted_us"]
    assert res["recommendations"]
