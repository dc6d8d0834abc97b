"""`pipeweave compare` (hand-made workloads; predictions of the shipped model)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import pipeweave as pw
from pipeweave.cli.main import main

ROWS = "family,dtype,m,n,k,block_m,block_n,block_k,group_m,num_warps,num_stages,count\n" + (
    "gemm,bfloat16,16,4096,4096,,,,,,,32\n"
    "gemm,bfloat16,4096,4096,4096,128,256,64,8,8,4,2\n"  # 192 KiB of shared memory: not on an L40S
    "gemm,bfloat16,512,14336,4096,,,,,,,1\n"
)


def test_table_output_plot_and_partial_exit(tmp_path, capsys):
    wl = tmp_path / "workload.csv"
    wl.write_text(ROWS)
    before = wl.read_bytes()
    out, png = tmp_path / "per.csv", tmp_path / "cmp.png"
    rc = main(
        ["compare", "--gpus", "H100", "B300", "L40S", "--input", str(wl), "--output", str(out), "--plot", str(png)]
    )
    res = capsys.readouterr()
    assert rc == 1  # one launch is not predicted on the L40S
    assert "row 2 on L40S: not predicted:" in res.err and "shared memory" in res.err
    assert "totals over the 2 launches predicted on every GPU; 80% error bands" in res.out
    lines = res.out.splitlines()
    assert lines[1].split()[:3] == ["gpu", "generation", "total"]
    assert [ln.split()[0] for ln in lines[2:5]] == ["B300", "H100-SXM", "L40S"]  # fastest first
    assert wl.read_bytes() == before
    per = pd.read_csv(out, keep_default_na=False)
    assert len(per) == 9 and set(per["gpu"]) == {"H100-SXM", "B300", "L40S"}
    assert per.loc[(per["row"] == 2) & (per["gpu"] == "L40S"), "latency_us_pred"].tolist() == [""]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the printed total is the API's
    with pytest.warns(UserWarning, match="left out of every GPU's total"):
        api = pw.compare(pd.read_csv(wl), ["H100", "B300", "L40S"]).summary.set_index("gpu")
    b300 = float(lines[2].split()[2].replace(",", ""))
    assert abs(b300 - api.at["B300", "total_us"]) < 0.05


def test_single_launch_json_and_no_bands(capsys):
    launch = ["--family", "gemm", "--m", "16", "--n", "4096", "--k", "4096"]
    assert main(["compare", "--gpus", "H100", "B200", "--baseline", "B200", "--json", *launch]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["baseline"] == "B200" and doc["coverage"] == 0.8 and doc["launches_in_totals"] == 1
    g = {r["gpu"]: r for r in doc["gpus"]}
    assert g["B200"]["speedup_vs_baseline"] == 1.0 and g["H100-SXM"]["total_lo_us"] < g["H100-SXM"]["total_us"]
    assert main(["compare", "--gpus", "H100", "B200", "--interval", "0", *launch]) == 0
    text = capsys.readouterr().out
    assert "error bands" not in text and "band us" not in text
    assert main(["compare", "--gpus", "H100", "B200", "--by-family", *launch]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.strip().startswith("by family (us, share)"))
    assert lines[head].split()[-2:] == ["B200", "H100-SXM"] and lines[head + 1].split()[0] == "gemm"
    assert lines[head + 1].endswith("(100%)")


def test_a_flag_launch_is_checked_on_every_gpu(capsys):
    # 128x256x64, 4 stages: fits an H100's shared memory, not an L40S's; the first GPU named is the L40S
    launch = ["--family", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--config", "128,256,64,8,8,4"]
    assert main(["compare", "--gpus", "L40S", "H100", *launch]) == 2  # no GPU can be compared on it
    assert "row 1 on L40S: " in capsys.readouterr().err
    assert main(["compare", "--gpus", "H100", "H200", *launch]) == 0
    assert "H200-SXM" in capsys.readouterr().out


def test_usage_errors_name_the_value(tmp_path, capsys):
    launch = ["--family", "gemm", "--m", "16", "--n", "16", "--k", "16"]
    cases = [
        (["--gpus", "H100", "X999", *launch], "unknown GPU 'X999'"),
        (["--gpus", "H100", "H100-SXM", *launch], "more than once"),
        (["--gpus", "H100", "B200", "--baseline", "A100", *launch], "not among the compared GPUs"),
        (["--gpus", "H100", "B200", "--interval", "70", *launch], "--interval must be 50, 80 or 90"),
        (["--gpus", "H100", "B200"], "give --input CSV"),
        (["--gpus", "H100", "B200", *launch, "--plot", str(tmp_path / "x.svg")], "must end in .png"),
    ]
    for argv, msg in cases:
        assert main(["compare", *argv]) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err
    wl = tmp_path / "w.csv"
    wl.write_text("family,dtype,m,n,k,count\ngemm,bfloat16,16,16,16,abc\n")
    assert main(["compare", "--gpus", "H100", "B200", "--input", str(wl)]) == 2
    assert "row 1 ('abc')" in capsys.readouterr().err
    assert main(["compare", "--gpus", "H100", "B200", "--input", str(wl), "--output", str(wl)]) == 2
    assert "never overwrites its input" in capsys.readouterr().err


def test_readme_example_prints_as_shown(tmp_path, capsys, monkeypatch):
    """The README's `compare` example (its CSV and its output) against the shipped model."""
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Picking hardware: one workload on several GPUs", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 1)[1].split("```", 1)[0].splitlines()
    cat, cmd = (
        block.index("$ cat decode_step.csv"),
        next(i for i, ln in enumerate(block) if ln.startswith("$ pipeweave ")),
    )
    (tmp_path / "decode_step.csv").write_text("\n".join(block[cat + 1 : cmd]) + "\n")
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(block[cmd][len("$ pipeweave ") :])) == 0
    assert capsys.readouterr().out.splitlines() == block[cmd + 1 :]
