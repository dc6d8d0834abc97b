"""`pipeweave predict --input` streams in chunks: same bytes for every chunk size; fast start-up path.

Inputs are real launch rows of the shared data (plus one hand-made out-of-domain row, labelled);
the model is a tiny one fitted on real rows, for speed.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pipeweave.cli.main import main

LAUNCH_COLUMNS = [
    "family",
    "dtype",
    "m",
    "n",
    "k",
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "gpu",
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, small_frame):
    from pipeweave.model import PipeweaveRegressor, save_model

    model = PipeweaveRegressor(n_estimators=10, per_family=True).fit(small_frame)
    return str(save_model(model, tmp_path_factory.mktemp("model") / "tiny.ubj"))


@pytest.fixture(scope="module")
def launch_csv(tmp_path_factory, small_frame):
    rows = small_frame[LAUNCH_COLUMNS].sample(n=40, random_state=0).reset_index(drop=True)
    rows = pd.concat([rows, rows.iloc[:10]], ignore_index=True)  # repeated launches (featurized once)
    bad = rows.iloc[[3]].assign(family="gemm", m=-5.0)  # hand-made out-of-domain row: m < 0
    rows = pd.concat([rows.iloc[:20], bad, rows.iloc[20:]], ignore_index=True)
    path = tmp_path_factory.mktemp("in") / "launches.csv"
    text = rows.to_csv(index=False)
    path.write_text(text.replace("4096.0,", "4096,"))  # integer-looking cells must come back as written
    return path


def test_chunked_output_is_byte_identical(tiny_model, launch_csv, tmp_path, capsys):
    outs = {}
    for chunk in (None, 1, 7, 1000):
        out = tmp_path / f"out_{chunk}.csv"
        argv = ["predict", "--model", tiny_model, "--input", str(launch_csv), "--output", str(out)]
        rc = main(argv + (["--chunk-rows", str(chunk)] if chunk else []) + (["--no-progress"] if chunk == 7 else []))
        assert rc == 1  # one row out of domain, the others predicted
        err = capsys.readouterr().err
        assert "row 21: not predicted" in err  # file row numbers across chunk boundaries
        outs[chunk] = out.read_bytes()
    assert len(set(outs.values())) == 1
    got = pd.read_csv(tmp_path / "out_7.csv")
    assert got["latency_us_pred"].isna().sum() == 1 and np.isnan(got["latency_us_pred"].iloc[20])
    src_text = launch_csv.read_text().splitlines()
    out_text = outs[None].decode().splitlines()
    # every input cell comes back as written, the prediction appended
    assert all(o.startswith(s + ",") for s, o in zip(src_text[1:], out_text[1:]))


def test_cli_predictions_equal_the_api(tiny_model, launch_csv, tmp_path, capsys):
    import pipeweave.api as api

    out = tmp_path / "out.csv"
    main(["predict", "--model", tiny_model, "--input", str(launch_csv), "--output", str(out), "--chunk-rows", "4"])
    capsys.readouterr()
    want = api.predict(pd.read_csv(launch_csv), model=tiny_model, bad_rows="nan")
    got = pd.read_csv(out)["latency_us_pred"]
    assert np.array_equal(got.to_numpy(), want.to_numpy(), equal_nan=True)


def test_chunk_rows_must_be_positive(tiny_model, launch_csv, capsys):
    rc = main(["predict", "--model", tiny_model, "--input", str(launch_csv), "--chunk-rows", "0"])
    assert rc == 2
    assert "--chunk-rows" in capsys.readouterr().err


def test_single_launch_process_does_not_import_scikit_learn(tiny_model):
    code = (
        "import sys\nfrom pipeweave.cli.main import main\n"
        f"rc = main(['predict', '--model', {tiny_model!r}, '--gpu', 'B300', '--family', 'gemm', "
        "'--dtype', 'bfloat16', '--m', '4096', '--n', '4096', '--k', '4096'])\n"
        "heavy = sorted(m for m in ('sklearn', 'scipy.stats') if m in sys.modules)\n"
        "print('RC', rc, 'HEAVY', heavy)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "RC 0 HEAVY []" in res.stdout, res.stdout + res.stderr
    assert " us  (gemm bfloat16 on B300)" in res.stdout
