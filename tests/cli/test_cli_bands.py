"""`pipeweave train --error-bands` and `pipeweave predict --interval` (tiny models on real rows of the shared data)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipeweave.cli.main import main

LAUNCH = ["--family", "rmsnorm", "--dtype", "bfloat16", "--num-tokens", "4096", "--hidden-size", "4096"]


def _train(path, data_dir, *extra):
    argv = [
        "train",
        "--data",
        str(data_dir),
        "--families",
        "moe_w13",
        "rmsnorm",
        "--sources",
        "pipeweave",
        "pipeweave_fork_sample",
    ]
    argv += ["--n-estimators", "5", "--max-rows-per-group", "300", "--no-progress", "--out", str(path), *extra]
    assert main(argv) == 0 and path.exists()
    return path


@pytest.fixture(scope="module")
def banded_model(tmp_path_factory, data_dir):
    return _train(tmp_path_factory.mktemp("models") / "banded.ubj", data_dir, "--error-bands")


@pytest.fixture(scope="module")
def plain_model(tmp_path_factory, data_dir):
    return _train(tmp_path_factory.mktemp("models") / "plain.ubj", data_dir)


def test_train_error_bands_stores_the_bands_and_records_the_flag(banded_model):
    from pipeweave.model import read_stamp

    stamp = read_stamp(banded_model)
    assert "--error-bands" in stamp["command"]
    assert {"rmsnorm", "moe_w13"} <= set(stamp["error_bands"]["unseen"]["bands"])


def test_single_launch_prints_its_80_percent_band(banded_model, capsys):
    assert main(["predict", "--model", str(banded_model), "--gpu", "B300", *LAUNCH]) == 0
    out = capsys.readouterr().out.splitlines()
    pred = float(out[0].split()[0])
    # B300 was never measured for rmsnorm, Blackwell was (RTX PRO 6000): the leave-one-GPU-out band
    assert out[1].startswith("80% band: ") and "of a measured generation: leave-one-GPU-out errors" in out[1]
    lo, hi = (float(x) for x in out[1].split(": ", 1)[1].split(" us")[0].split(" - "))
    assert lo < hi and lo <= pred * 1.5 and hi >= pred / 1.5


def test_json_carries_the_requested_band(banded_model, capsys):
    argv = ["predict", "--model", str(banded_model), "--gpu", "H100", *LAUNCH, "--json", "--interval", "90"]
    assert main(argv) == 0
    obj = json.loads(capsys.readouterr().out)
    iv = obj["interval"]
    assert iv["coverage"] == 0.9 and iv["band"] == "seen" and iv["lo_us"] < iv["hi_us"]
    assert iv["held_out_rows"] > 0 and iv["held_out_mape"] > 0


def test_csv_interval_adds_columns_and_leaves_bad_rows_blank(banded_model, tmp_path, capsys):
    src = tmp_path / "rows.csv"
    src.write_text("family,dtype,num_tokens,hidden_size\nrmsnorm,bfloat16,4096,4096\nrmsnorm,bfloat16,4096,-1\n")
    out = tmp_path / "preds.csv"
    argv = ["predict", "--model", str(banded_model), "--gpu", "B200", "--input", str(src), "--output", str(out)]
    assert main([*argv, "--interval", "50"]) == 1  # row 2 is outside the domain
    got = pd.read_csv(out)
    assert list(got.columns[-4:]) == ["latency_us_pred", "latency_us_lo", "latency_us_hi", "band"]
    # B200 has no rmsnorm rows in the fork sample; Blackwell has (RTX PRO 6000): a sibling
    assert got.loc[0, "latency_us_lo"] < got.loc[0, "latency_us_hi"] and got.loc[0, "band"] == "sibling"
    assert got.loc[1, ["latency_us_pred", "latency_us_lo", "latency_us_hi", "band"]].isna().all()
    assert main(argv) == 1 and "latency_us_lo" not in pd.read_csv(out).columns  # no --interval: no band columns


def test_interval_errors_name_the_value_and_the_fix(banded_model, plain_model, capsys):
    assert main(["predict", "--model", str(banded_model), "--gpu", "B300", *LAUNCH, "--interval", "75"]) == 2
    err = capsys.readouterr().err
    # the value, the valid ones in --interval's own unit (percent) and a fix in it (as `compare` says)
    assert "got 75" in err and "50, 80 or 90 (or 0 for no band)" in err and "fix: e.g. --interval 80" in err
    # 0 is no band, as in `compare`: even a model without bands predicts
    assert main(["predict", "--model", str(plain_model), "--gpu", "B300", *LAUNCH, "--interval", "0"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1
    assert main(["predict", "--model", str(plain_model), "--gpu", "B300", *LAUNCH, "--interval", "80"]) == 2
    err = capsys.readouterr().err
    assert "has no error bands" in err and "--error-bands" in err and "Traceback" not in err
    # without --interval a model without bands prints the latency alone
    assert main(["predict", "--model", str(plain_model), "--gpu", "B300", *LAUNCH]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1


def test_public_predict_returns_the_band_columns(banded_model):
    import pipeweave as pw

    rows = pd.DataFrame(
        {"family": "rmsnorm", "dtype": "bfloat16", "num_tokens": 4096, "hidden_size": 4096, "gpu": ["T4", "H100"]}
    )
    got = pw.predict(rows, model=banded_model, interval=0.8)
    assert list(got.columns) == ["latency_us_pred", "latency_us_lo", "latency_us_hi", "band"]
    # Turing has no rmsnorm rows (a new generation); the H100 trained
    assert got["band"].tolist() == ["unseen", "seen"]
    assert (got["latency_us_lo"] < got["latency_us_hi"]).all()
    with pytest.raises(pw.DataError, match="one of"):
        pw.predict(
            [{"family": "rmsnorm", "dtype": "bfloat16", "num_tokens": 8, "hidden_size": 64}],
            gpu="B300",
            model=banded_model,
            interval=2,
        )


def test_train_error_bands_refuses_one_generation_before_training(tmp_path, data_dir, capsys):
    from pipeweave.sources import load_profiles

    # 50 real moe_w13 rows of one GPU as a user's profile file: one generation, nothing to hold out
    rows = load_profiles(data_dir, families=["moe_w13"], gpus=["H100-SXM"]).head(50)
    cols = ["gpu", "family", "dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "latency_us"]
    src = tmp_path / "mine.csv"
    rows[cols].to_csv(src, index=False)
    argv = ["train", "--profiles", str(src), "--no-shared", "--error-bands", "--out", str(tmp_path / "m.ubj")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "at least two GPU generations, got ['hopper']" in captured.err and "drop --error-bands" in captured.err
    assert "featurizing" not in captured.out and not (tmp_path / "m.ubj").exists()


def test_error_bands_for_one_family_carries_the_others_from_the_earlier_model(banded_model, data_dir, tmp_path, capsys):
    from pipeweave.model import read_stamp

    out = tmp_path / "refreshed.ubj"
    capsys.readouterr()
    _train(out, data_dir, "--error-bands-for", "rmsnorm", "--error-bands-from", str(banded_model))
    printed = capsys.readouterr().out
    assert "estimating the error bands of ['rmsnorm']" in printed and "carried over the bands of ['moe_w13']" in printed
    old, new = read_stamp(banded_model), read_stamp(out)
    assert new["error_bands"]["carried"]["families"] == ["moe_w13"]
    assert new["error_bands"]["carried"]["source"].startswith("banded.ubj (sha256 ")
    # same rows, same recipe: the re-estimated rmsnorm bands are the full run's, the carried ones are copies
    for s in ("unseen", "sibling", "seen"):
        assert new["error_bands"][s]["bands"] == old["error_bands"][s]["bands"]
    assert "--error-bands-for rmsnorm --error-bands-from" in new["command"]


@pytest.mark.parametrize(
    ("extra", "message", "fix"),
    [
        (["--error-bands-for", "rmsnorm"], "--error-bands-for needs --error-bands-from", "--error-bands-from models/"),
        (["--error-bands-for", "rms"], "unknown families ['rms']", "use some of"),
        (["--error-bands-for", "rmsnorm", "--error-bands-from", "PLAIN"], "has no error bands", "--error-bands"),
    ],
)
def test_a_bad_band_refresh_is_refused_before_training(plain_model, tmp_path, capsys, extra, message, fix):
    extra = [str(plain_model) if x == "PLAIN" else x for x in extra]
    if "--error-bands-from" not in extra and "rms" in extra:
        extra += ["--error-bands-from", str(plain_model)]
    out = tmp_path / "m.ubj"
    assert main(["train", "--families", "rmsnorm", *extra, "--no-progress", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and fix in captured.err
    assert "featurizing" not in captured.out and not out.exists()


def test_a_refresh_names_the_families_whose_boosters_read_the_refreshed_rows():
    from pipeweave.cli._train import _booster_readers
    from pipeweave.model import PipeweaveRegressor

    recipe = PipeweaveRegressor()  # the shipped recipe: softmax's booster trains on NeuSight's four families
    assert _booster_readers(recipe, ["gemm_fp32"]) == ["softmax_fp32"]
    assert _booster_readers(recipe, ["gemm"]) == ["attention_context", "attention_generation"]
    assert _booster_readers(recipe, ["rmsnorm"]) == []


def test_a_carry_the_data_no_longer_supports_is_refused_before_training(banded_model, data_dir, tmp_path, capsys):
    out = tmp_path / "m.ubj"
    argv = ["train", "--data", str(data_dir), "--families", "moe_w13", "rmsnorm", "--sources", "pipeweave"]
    argv += ["pipeweave_fork_sample", "--exclude-gpu", "H100-SXM", "--n-estimators", "5", "--max-rows-per-group"]
    argv += ["300", "--no-progress", "--error-bands-for", "rmsnorm", "--error-bands-from", str(banded_model)]
    assert main([*argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    # without the H100, moe_w13's bands in the earlier file describe other training GPUs (or another protocol)
    assert "estimated another way" in captured.err or "trained on other GPUs" in captured.err
    assert "trained on" not in captured.out and not out.exists()
