"""`plot_error_bands`: draws `band_summary`'s table (hand-made bands, labelled), honouring the ``ax`` contract."""

from __future__ import annotations

import numpy as np

from pipeweave.evaluation import plot_error_bands
from pipeweave.evaluation._plots import new_axes
from pipeweave.model import BAND_LEVELS, band_summary, check_error_bands


def _summary():
    band = {"q": [0.5, 0.6, 0.8, 1.0, 1.2, 1.5, 1.8], "mape": 20.0, "n": 500, "groups": ["ada", "hopper"]}
    bands = {
        "levels": list(BAND_LEVELS),
        "unseen": {"protocol": "hand-made", "bands": {"gemm": band, "moe_w13": band}},
        "seen": {"protocol": "hand-made", "bands": {"gemm": band}},
        "seen_gpus": {"gemm": ["H100-SXM"]},
    }
    return band_summary(check_error_bands(bands), 0.8)


def test_plot_error_bands_draws_one_bar_per_band_on_the_given_axes():
    ax = new_axes()[0, 0]
    assert plot_error_bands(_summary(), ax=ax) is ax
    bars = [p for p in ax.patches]
    assert len(bars) == 3  # gemm unseen + seen, moe_w13 unseen (no seen band)
    lefts = sorted(round(b.get_x(), 6) for b in bars)
    assert lefts == [0.6, 0.6, 0.6] and np.allclose([b.get_width() for b in bars], 0.9)
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_yticklabels()] == ["gemm", "moe_w13"]


def test_plot_error_bands_makes_its_own_axes_and_takes_an_empty_table():
    ax = plot_error_bands(_summary().iloc[:0])
    assert ax.figure is not None and not ax.patches
