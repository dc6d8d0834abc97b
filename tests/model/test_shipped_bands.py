"""The README's error-band section quotes the shipped model: its table and example output must match
``models/pipeweave_default.ubj`` (a retrained model without a README update fails here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from pipeweave.model import DEFAULT_MODEL_PATH, band_summary, read_stamp

README = Path(__file__).resolve().parents[2] / "README.md"
#: README row label -> band key of the shipped model
ROWS = {
    "bf16 GEMM": "gemm:bfloat16",
    "bf16 fused MoE": "fused_moe:bfloat16",
    "prefill attention": "attention_context",
    "decode attention": "attention_generation",
    "moe_w13": "moe_w13",
    "FP32 GEMM (NeuSight)": "gemm_fp32",
}


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("### How far to trust a prediction: error bands", 1)[1].split("\n## ", 1)[0]


@pytest.fixture(scope="module")
def summary():
    stamp = read_stamp(DEFAULT_MODEL_PATH)
    assert stamp.get("error_bands"), "the shipped model has no error bands"
    return band_summary(stamp["error_bands"], 0.8).set_index("key")


def test_readme_band_table_is_the_shipped_models(summary):
    rows = {}
    for line in _section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] in ROWS:
            rows[cells[0]] = cells[1:]
    assert set(rows) == set(ROWS)
    for label, cells in rows.items():
        r = summary.loc[ROWS[label]]
        for cell, s in zip(cells, ("unseen", "sibling", "seen"), strict=True):
            lo, hi, mape = (float(x) for x in re.fullmatch(r"([\d.]+) - ([\d.]+) \(([\d.]+)\)", cell).groups())
            assert (lo, hi, mape) == (round(r[f"{s}_lo"], 2), round(r[f"{s}_hi"], 2), round(r[f"{s}_mape"], 1)), label


def test_readme_band_examples_print_as_shown(capsys):
    from pipeweave.cli.main import main

    block = _section().split("```\n", 1)[1].split("```", 1)[0]
    lines = block.strip().splitlines()
    commands = [i for i, line in enumerate(lines) if line.startswith("$ pipeweave ")]
    assert len(commands) == 2
    for i in commands:
        argv = shlex.split(lines[i][len("$ pipeweave ") :])
        assert main(argv) == 0
        assert capsys.readouterr().out.strip().splitlines() == lines[i + 1 : i + 3]
