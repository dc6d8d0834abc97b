"""Pictures of a diagnosis (pipeweave.diagnose.plot_*) and ``diagnose --plot``."""

from __future__ import annotations

import pytest

from pipeweave import DataError
from pipeweave.cli.main import main
from pipeweave.diagnose import plot_configs, plot_diagnosis, plot_pipes


def _result(measured: float | None = 250.0, recs: int = 3) -> dict:
    """A hand-made diagnosis (not a measurement): the keys the pictures read, numbers chosen to check the drawing."""
    ranked = [
        {
            "rank": i + 1,
            "config": f"{64 * (i + 1)},64,32,8,4,3",
            "predicted_us": 100.0 + 50 * i,
            "speedup": 1.0,
            "is_given": i == recs - 1,
        }
        for i in range(recs)
    ]
    return {
        "gpu": "H100-SXM",
        "family": "gemm",
        "pipe_times_us": {"tensor": 80.0, "fma": 1.0, "l2": 120.0, "dram": 60.0},
        "pipe_times_busiest_sm_us": {"tensor": 90.0, "fma": 1.5, "l2": 130.0, "dram": 61.0},
        "bound_pipe": "l2",
        "predicted_us": 200.0,
        "measured_us": measured,
        "ceiling_us": 100.0,
        "lower_bound_us": 70.0,
        "recommendations": ranked,
    }


def test_plot_pipes_draws_one_bar_per_pipe_the_binding_one_apart():
    ax = plot_pipes(_result())
    bars = ax.patches
    assert [round(b.get_width(), 6) for b in bars] == [90.0, 1.5, 130.0, 61.0]  # the busiest SM's times
    colors = [b.get_facecolor() for b in bars]
    assert colors[2] != colors[0] and colors[0] == colors[1] == colors[3]  # l2 binds
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "l2 (binds)" in labels
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [x.split()[0] for x in legend] == ["lower", "ceiling", "predicted", "measured"]
    assert ax.get_xlim()[1] >= 250.0  # the measured line is inside the picture


def test_plot_configs_marks_the_given_config_and_skips_measured_when_absent():
    ax = plot_configs(_result(measured=None))
    bars = ax.patches
    assert [b.get_width() for b in bars] == [100.0, 150.0, 200.0]
    assert bars[-1].get_facecolor() != bars[0].get_facecolor()  # the given config
    assert any(t.get_text().endswith("(given)") for t in ax.get_yticklabels())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(legend) == 1 and legend[0].startswith("ceiling")


def test_plot_diagnosis_one_panel_without_ranked_configs():
    assert len(plot_diagnosis(_result()).axes) == 2
    assert len(plot_diagnosis(_result(recs=0)).axes) == 1
    with pytest.raises(DataError, match="ranks no config"):
        plot_configs(_result(recs=0))


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (["not", "a", "dict"], "expected the dict"),
        ({"gpu": "H100"}, "lacks"),
        ({**_result(), "pipe_times_us": {}, "pipe_times_busiest_sm_us": {}}, "no finite pipe time"),
    ],
)
def test_plot_rejects_what_is_not_a_diagnosis(bad, match):
    with pytest.raises(DataError, match=match) as exc:
        plot_pipes(bad)
    assert exc.value.hint


def test_cli_diagnose_plot_writes_a_png(tmp_path, capsys):
    out = tmp_path / "d.png"
    argv = ["diagnose", "--gpu", "H100", "--family", "gemm", "--m", "512", "--n", "512", "--k", "512"]
    assert main([*argv, "--measured-us", "30", "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {out}" in capsys.readouterr().err
    assert main([*argv, "--plot", str(tmp_path / "d.jpg")]) == 2
    assert "must end in .png" in capsys.readouterr().err
    assert main(["diagnose", "--rebuild-models", "--models", str(tmp_path), "--plot", str(out)]) == 2
    assert "diagnoses nothing" in capsys.readouterr().err


def test_plot_pipes_draws_an_explain_result():
    import pipeweave as pw

    ex = pw.explain({"gpu": "L4", "family": "rmsnorm", "num_tokens": 4096, "hidden_size": 4096})
    ax = plot_pipes(ex)
    widths = {t.get_text(): b.get_width() for t, b in zip(ax.get_yticklabels(), ax.patches)}
    assert widths["dram (binds)"] == pytest.approx(ex["pipes"]["dram"]["busiest_sm_time_us"])
    assert widths["latency"] == pytest.approx(ex["latency_bound_us"])
    assert widths["xu"] > 0 and widths["fma"] > 0  # rsqrt on the SFU, the sum of squares on the FMA pipe
    legend = [t.get_text().split()[0] for t in ax.get_legend().get_texts()]
    assert legend == ["lower", "envelope"]  # no prediction in an explanation: its envelope instead


def test_cli_explain_plot(tmp_path, capsys):
    out = tmp_path / "e.png"
    argv = ["explain", "--gpu", "H100", "--family", "silu_mul", "--num-tokens", "64", "--inter-size", "8192"]
    assert main([*argv, "--plot", str(out), "--json"]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert main([*argv, "--plot", str(tmp_path / "e.svg")]) == 2
    assert "must end in .png" in capsys.readouterr().err
    kernel = [
        "explain",
        "--gpu",
        "H100",
        "--kernel",
        "examples/triton_kernels.py:add_relu",
        "--config",
        "1,1024,1,1,4,1",
    ]
    assert main([*kernel, "--plot", str(out)]) == 2
    assert "pipeweave diagnose" in capsys.readouterr().err
