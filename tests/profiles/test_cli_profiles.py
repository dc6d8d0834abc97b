"""CLI: `profiles import/check`, `train --profiles`, `calibrate plan/fit`, `python -m pipeweave.measure --dry-run`.

Inputs are the hand-written files of tests/profiles/data (see its README.md) and hand-made
launch rows; none of their numbers are measurements.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from pipeweave.cli.main import main

DATA = Path(__file__).parent / "data"


def _gemm_rows(gpu: str = "H100") -> pd.DataFrame:  # hand-made launches + made-up latencies
    s = [256, 512, 1024, 2048, 4096, 8192]
    return pd.DataFrame(
        {
            "gpu": gpu,
            "family": "gemm",
            "dtype": "bfloat16",
            "m": s,
            "n": s,
            "k": s,
            "latency_us": [7.0, 10.0, 22.0, 110.0, 800.0, 6000.0],
        }
    )


def test_profiles_import_kineto_then_train_no_shared(tmp_path, capsys):
    prof = tmp_path / "mine.csv"
    assert (
        main(["profiles", "import", "--from", "kineto", str(DATA / "kineto_h100_gemm.json"), "--out", str(prof)]) == 0
    )
    out = capsys.readouterr()
    assert "wrote 4 rows" in out.out and "skipped 3 kernels" in out.err  # 2 bf16 GEMMs, 2 FP32 GEMMs
    extra = tmp_path / "more.csv"
    _gemm_rows().to_csv(extra, index=False)
    model = tmp_path / "m.ubj"
    assert (
        main(
            [
                "train",
                "--profiles",
                str(prof),
                str(extra),
                "--no-shared",
                "--profiles-weight",
                "5",
                "--n-estimators",
                "3",
                "--out",
                str(model),
                "--no-progress",
            ]
        )
        == 0
    )
    from pipeweave.model import read_stamp

    stamp = read_stamp(model)
    files = {f["file"]: f for f in stamp["profiles"]}
    assert files["mine.csv"]["rows"] == 4 and files["more.csv"]["rows"] == 6
    assert files["mine.csv"]["sha256"] == hashlib.sha256(prof.read_bytes()).hexdigest()
    assert "--profiles" in stamp["command"] and "--no-shared" in stamp["command"]
    assert stamp["profiles_weight"] == 5 and stamp["shared_data"] is False and stamp["n_train_rows"] == 10
    assert main(["profiles", "check", str(prof)]) == 0


def test_train_no_shared_needs_profiles(tmp_path, capsys):
    assert main(["train", "--no-shared", "--out", str(tmp_path / "m.ubj")]) == 2
    assert "--no-shared needs --profiles" in capsys.readouterr().err


def test_profiles_import_bad_input_one_line(tmp_path, capsys):
    rc = main(
        [
            "profiles",
            "import",
            "--from",
            "triton-autotune",
            str(DATA / "matmul_kernel.autotune.json"),
            "--gpu",
            "H100",
            "--out",
            str(tmp_path / "x.csv"),
        ]
    )
    assert rc == 2 and "--family" in capsys.readouterr().err
    rc = main(
        [
            "profiles",
            "import",
            "--from",
            "triton-autotune",
            str(DATA / "matmul_kernel.autotune.json"),
            "--gpu",
            "H100",
            "--family",
            "gemm",
            "--key",
            "m,n,k",
            "--out",
            str(tmp_path / "x.txt"),
        ]
    )
    assert rc == 2 and ".csv or .parquet" in capsys.readouterr().err
    assert not (tmp_path / "x.txt").exists()


def test_calibrate_plan_and_fit_then_predict(tmp_path, capsys):
    base_rows = pd.concat([_gemm_rows("A100"), _gemm_rows("H100")], ignore_index=True)
    base_csv = tmp_path / "base.csv"
    base_rows.to_csv(base_csv, index=False)
    base = tmp_path / "base.ubj"
    assert (
        main(
            [
                "train",
                "--profiles",
                str(base_csv),
                "--no-shared",
                "--n-estimators",
                "3",
                "--out",
                str(base),
                "--no-progress",
            ]
        )
        == 0
    )
    cand = tmp_path / "cand.csv"
    sizes = [128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192]
    pd.DataFrame({"family": "gemm", "dtype": "bfloat16", "m": sizes, "n": sizes, "k": sizes}).to_csv(cand, index=False)
    plan = tmp_path / "plan.csv"
    assert main(["calibrate", "plan", "--gpu", "B200", "--n", "4", "--candidates", str(cand), "--out", str(plan)]) == 0
    p = pd.read_csv(plan)
    # the candidates' own columns (+ gpu, which the measurement helper needs)
    assert len(p) == 4 and list(p.columns) == ["family", "dtype", "m", "n", "k", "gpu"] and set(p["m"]) <= set(sizes)
    assert "python -m pipeweave.measure` times" not in capsys.readouterr().err  # GEMM rows: the helper times them
    rms = (
        tmp_path / "rms.csv"
    )  # hand-made row-kernel candidates: planned, with the note that the helper cannot time them
    pd.DataFrame({"family": "rmsnorm", "dtype": "bfloat16", "num_tokens": sizes, "hidden_size": 4096}).to_csv(
        rms, index=False
    )
    rplan = tmp_path / "rplan.csv"
    assert main(["calibrate", "plan", "--gpu", "B200", "--n", "3", "--candidates", str(rms), "--out", str(rplan)]) == 0
    assert "measure the rmsnorm rows with your own harness" in capsys.readouterr().err
    measured = tmp_path / "measured.csv"
    p.assign(latency_us=[5.0, 30.0, 200.0, 1500.0][: len(p)]).to_csv(measured, index=False)
    cal = tmp_path / "b200.ubj"
    assert (
        main(
            ["calibrate", "fit", "--gpu", "B200", "--profiles", str(measured), "--model", str(base), "--out", str(cal)]
        )
        == 0
    )
    assert "no calibrated error band (fewer than 16 launches)" in capsys.readouterr().out
    from pipeweave.model import read_stamp

    stamp = read_stamp(cal)
    assert stamp["calibration"]["gpu"] == "B200" and stamp["calibration"]["n_shots"] == {"gemm": 4}
    assert stamp["calibration_profiles"][0]["rows"] == 4
    rows = tmp_path / "rows.csv"
    p.to_csv(rows, index=False)
    outs = {}
    for name, model in (("base", base), ("cal", cal)):
        out = tmp_path / f"pred_{name}.csv"
        assert (
            main(["predict", "--model", str(model), "--gpu", "B200", "--input", str(rows), "--output", str(out)]) == 0
        )
        outs[name] = pd.read_csv(out)["latency_us_pred"]
    # the calibrated model predicts its own measured launches closer than the base model
    meas = pd.Series([5.0, 30.0, 200.0, 1500.0][: len(p)])
    err = {k: ((v / meas - 1).abs()).mean() for k, v in outs.items()}
    assert err["cal"] < err["base"]
    # 16 measured launches (made-up latencies ~ 1.4 x the base model): a calibrated error band
    many = pd.read_csv(cand).assign(gpu="B200")
    many = pd.concat([many, many.assign(k=many["k"] * 2)], ignore_index=True).iloc[:16]
    many["latency_us"] = 1.4 * outs["base"].mean() * (many["m"] * many["n"] * many["k"] / 4096**3) + 5.0
    many.to_csv(measured, index=False)
    assert (
        main(
            ["calibrate", "fit", "--gpu", "B200", "--profiles", str(measured), "--model", str(base), "--out", str(cal)]
        )
        == 0
    )
    assert "left-out MAPE" in capsys.readouterr().out
    auto = tmp_path / "b200_auto.ubj"
    argv = ["calibrate", "fit", "--gpu", "B200", "--profiles", str(measured), "--model", str(base), "--out", str(auto)]
    assert main([*argv, "--method", "auto"]) == 0
    assert "auto chose " in capsys.readouterr().out  # names the setting and the left-out MAPEs that chose it
    assert len(read_stamp(auto)["calibration"]["corrections"]["gemm"]["auto_loo"]) > 2
    launch = ["--family", "gemm", "--dtype", "bfloat16", "--m", "1000", "--n", "1000", "--k", "1000"]
    assert main(["predict", "--model", str(cal), "--gpu", "B200", *launch]) == 0
    text = capsys.readouterr().out
    assert "80% band" in text and "calibrated on" in text
    assert main(["predict", "--model", str(cal), "--gpu", "B200", "--interval", "90", "--json", *launch]) == 0
    band = json.loads(capsys.readouterr().out)["interval"]
    assert band["band"] == "calibrated" and band["held_out_rows"] == 16
    assert band["lo_us"] < band["hi_us"]
    # other GPUs have no band: the base model has none
    assert main(["predict", "--model", str(cal), "--gpu", "H100", "--interval", "80", *launch]) == 0
    res = capsys.readouterr()
    assert "band" not in res.out and "no error band for this launch" in res.err
    # the refit recipe: a model retrained with the measured launches has no band of its own; --band-model
    # lends the base model's left-out band
    refit = tmp_path / "refit.ubj"
    argv = ["train", "--profiles", str(base_csv), str(measured), "--no-shared", "--n-estimators", "3"]
    assert main([*argv, "--out", str(refit), "--no-progress"]) == 0
    capsys.readouterr()
    fit = ["calibrate", "fit", "--gpu", "B200", "--profiles", str(measured), "--model", str(refit), "--out", str(cal)]
    assert main(fit) == 0
    assert "no calibrated error band (the base model trained on B200's gemm rows" in capsys.readouterr().out
    assert main([*fit, "--band-model", str(base)]) == 0
    assert "from the --band-model's left-out errors" in capsys.readouterr().out
    assert "--band-model" in read_stamp(cal)["command"]
    assert main(["predict", "--model", str(cal), "--gpu", "B200", "--interval", "80", "--json", *launch]) == 0
    assert json.loads(capsys.readouterr().out)["interval"]["band"] == "calibrated"


def test_import_never_overwrites_its_input_and_plans_drop_old_measurements(tmp_path, capsys):
    src = tmp_path / "mine.csv"
    _gemm_rows().assign(gpu="H100").to_csv(src, index=False)
    before = src.read_bytes()
    assert main(["profiles", "import", "--from", "canonical", str(src), "--out", str(src)]) == 2
    assert "is the input file" in capsys.readouterr().err and src.read_bytes() == before
    # candidates that are measured rows of another GPU: the plan keeps the launches, not their old latencies
    imported = tmp_path / "imported.csv"
    assert main(["profiles", "import", "--from", "canonical", str(src), "--out", str(imported)]) == 0
    plan = tmp_path / "plan.csv"
    argv = ["calibrate", "plan", "--gpu", "B300", "--n", "3", "--candidates", str(imported), "--out", str(plan)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "describe earlier measurements; left out of the plan" in out and "latency_us" in out
    p = pd.read_csv(plan)
    assert len(p) == 3 and (p["gpu"] == "B300").all()
    assert not {"latency_us", "generation", "source", "dataset"} & set(p.columns)
    # so a plan cannot be fitted as if it had been measured
    assert main(["calibrate", "fit", "--gpu", "B300", "--profiles", str(plan), "--out", str(tmp_path / "x.ubj")]) == 2
    assert "latency_us" in capsys.readouterr().err


def test_measure_dry_run_and_plan_errors(tmp_path, capsys):
    from pipeweave.measure import main as measure_main

    plan = tmp_path / "plan.csv"
    pd.DataFrame(
        {
            "gpu": ["B200", "B200", "B200"],
            "family": ["gemm", "attention_generation", "gemm"],
            "dtype": ["bfloat16", "bfloat16", "fp8_block"],
            "m": [4096, None, 1024],
            "n": [4096, None, 1024],
            "k": [4096, None, 1024],
            "batch_size": [None, 8, None],
            "num_heads": [None, 32, None],
            "num_key_value_heads": [None, 8, None],
            "head_dim": [None, 128, None],
            "step": [None, 1024, None],
        }
    ).to_csv(plan, index=False)
    assert measure_main([str(plan), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "row 1: B200 gemm bfloat16 m=4096 n=4096 k=4096 -> cuda_graph_torch_matmul" in out
    assert "row 2:" in out and "skip: family attention_generation" in out
    assert "row 3:" in out and "skip: dtype fp8_block of gemm is not measured here (bfloat16, float16, fp8)" in out
    assert "1 of 3 rows would be measured" in out
    # a plan of rows the helper cannot time: its dry run says so with the real run's exit status
    only_skips = tmp_path / "skips.csv"
    pd.read_csv(plan).iloc[[1, 2]].to_csv(only_skips, index=False)
    assert measure_main([str(only_skips), "--dry-run"]) == 2
    assert "0 of 2 rows would be measured" in capsys.readouterr().out
    assert measure_main([str(plan)]) == 2 and "--out is required" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"gpu": ["B200"], "family": ["gemm"], "dtype": ["bfloat16"], "m": [0], "n": [1], "k": [1]}).to_csv(
        bad, index=False
    )
    assert measure_main([str(bad), "--dry-run"]) == 2 and "row 1" in capsys.readouterr().err
    import importlib.util

    if importlib.util.find_spec("torch") is None:  # this machine: measuring is refused with the fix, no traceback
        assert measure_main([str(plan), "--out", str(tmp_path / "m.csv")]) == 2
        err = capsys.readouterr().err
        assert "needs torch and triton" in err and "--dry-run" in err and "Traceback" not in err


def test_train_says_which_backend_one_hots_it_holds(tmp_path, capsys):
    # hand-made prefill launches + made-up latencies: FlashAttention on two GPUs, Triton on one
    isl = [512, 1024, 2048, 4096]
    rows = pd.concat(
        [
            pd.DataFrame(
                {
                    "gpu": gpu,
                    "family": "attention_context",
                    "dtype": "bfloat16",
                    "batch_size": 1,
                    "isl": isl,
                    "num_heads": 32,
                    "num_key_value_heads": 8,
                    "head_dim": 128,
                    "backend": backend,
                    "latency_us": [30.0, 80.0, 260.0, 900.0],
                }
            )
            for gpu, backend in [("H100-SXM", "flash_attention"), ("A100-SXM", "flash_attention"), ("L40S", "triton")]
        ]
    )
    prof = tmp_path / "attn.csv"
    rows.to_csv(prof, index=False)
    model = tmp_path / "m.ubj"
    argv = ["train", "--profiles", str(prof), "--no-shared", "--n-estimators", "3", "--out", str(model)]
    assert main([*argv, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "attention backends measured on fewer than 2 GPUs: ['triton']" in out
    from pipeweave.model import read_stamp

    assert read_stamp(model)["unsupported_backends"] == ["triton"]


def test_autotune_import_skips_a_config_outside_the_valid_domain(tmp_path, capsys):
    """A hand-written autotune cache (not data) with one config whose tiles cannot fit the GPU's shared memory:
    that config is listed as skipped with the reason; the others are imported."""
    import json as _json

    def cfg(bm, bn, bk, gm, warps, stages, ms):
        kw = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": gm}
        return [{"kwargs": kw, "num_warps": warps, "num_ctas": 1, "num_stages": stages}, [ms, ms, ms]]

    timings = [cfg(64, 64, 64, 8, 4, 3, 0.8), cfg(256, 256, 128, 8, 4, 5, 0.7), cfg(128, 64, 64, 16, 4, 4, 0.9)]
    src = tmp_path / "w13.autotune.json"
    src.write_text(_json.dumps({"key": [512, 64, 8, 3584, 2560, "torch.bfloat16"], "configs_timings": timings}))
    out = tmp_path / "w13.csv"
    argv = ["profiles", "import", "--from", "triton-autotune", str(src), "--gpu", "H100", "--family", "moe_w13"]
    argv += ["--key", "num_tokens,num_experts,topk,hidden_size,inter_size", "--out", str(out)]
    assert main(argv) == 0
    res = capsys.readouterr()
    assert "wrote 2 rows" in res.out and "skipped 1 kernel:" in res.err and "shared memory" in res.err
    assert sorted(pd.read_csv(out)["block_m"].tolist()) == [64.0, 128.0]


def test_train_excludes_a_spec_file_gpu_by_its_name(tmp_path, capsys):
    """Hand-made rows (made-up latencies): --exclude-gpu knows the GPUs of --gpu-spec files."""
    from pathlib import Path

    spec = Path(__file__).resolve().parents[2] / "datasets" / "example_gpu_spec.toml"  # defines RTX-4090
    rows = tmp_path / "mine.csv"
    rows.write_text(
        "gpu,family,dtype,m,n,k,latency_us\n"
        "RTX-4090,gemm,bfloat16,1024,1024,1024,30\n"
        "H100,gemm,bfloat16,1024,1024,1024,20\n"
        "H100,gemm,bfloat16,2048,2048,2048,60\n"
        "A100,gemm,bfloat16,1024,1024,1024,40\n"
    )
    argv = ["train", "--profiles", str(rows), "--gpu-spec", str(spec), "--no-shared", "--n-estimators", "3"]
    assert main([*argv, "--exclude-gpu", "RTX-4090", "--out", str(tmp_path / "m.ubj"), "--no-progress"]) == 0
    assert "trained on 3 rows (2 GPUs" in capsys.readouterr().out


def test_import_notes_rows_under_the_physical_lower_bound(tmp_path, capsys):
    """Hand-made canonical rows: a 4096^3 bf16 GEMM timed 0.16 (ms written as us) beside 160 us. The import writes
    both as given (exit 0) and notes the impossible one, as `profiles check` would."""
    src = tmp_path / "ms.csv"
    src.write_text(
        "family,gpu,dtype,m,n,k,latency_us\ngemm,H100,bfloat16,4096,4096,4096,0.16\ngemm,H100,bfloat16,4096,4096,4096,160\n"
    )
    out = tmp_path / "out.csv"
    assert main(["profiles", "import", "--from", "canonical", str(src), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 of 2 rows are faster than the physical lower bound" in err and "looks like milliseconds" in err
    assert len(pd.read_csv(out)) == 2
