"""build_results / write_report / plots on the synthetic table of conftest (hand-made data)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from evaluation_fixtures import ConstMethod, FlopMethod, make_profiles

from pipeweave._io import atomic_write_json
from pipeweave.evaluation import (
    STAT_KEYS,
    build_results,
    family_keys,
    mape,
    plot_data_error_cdf,
    plot_data_mape_by_generation,
    plot_data_scatter,
    plot_error_cdf,
    plot_mape_by_generation,
    plot_scatter,
    render_markdown,
    run_protocol,
    write_report,
)


class HalfBroken(FlopMethod):
    """Fails on the hopper fold only."""

    def fit(self, df: pd.DataFrame) -> HalfBroken:
        if "hopper" not in set(df["generation"]):
            raise RuntimeError("hopper missing")
        return self


@pytest.fixture(scope="module")
def pred() -> pd.DataFrame:
    with pytest.warns(RuntimeWarning, match="hopper missing"):
        return run_protocol(
            make_profiles(), {"const": ConstMethod, "flop": FlopMethod, "broken": HalfBroken}, "logo", progress=False
        )


@pytest.fixture(scope="module")
def results(pred: pd.DataFrame) -> dict:
    return build_results(
        pred,
        protocol="logo",
        data_fingerprint="sha256:test",
        extra={"note": "unit test", "x": np.float64(1.5), "bad": float("nan")},
        n_boot=200,
    )


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory, results: dict, pred: pd.DataFrame) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("report")
    files = write_report(results, pred, out, predictions=True, n_boot=200)
    return out, files


def test_family_keys_scheme(pred: pd.DataFrame) -> None:
    assert set(family_keys(pred)) == {"gemm_bf16", "moe_bf16[aic]", "moe_bf16[pw]"}


def test_build_results_structure(results: dict, pred: pd.DataFrame) -> None:
    assert list(results)[:4] == ["protocol", "data_fingerprint", "versions", "methods"]
    for k in ("families", "results", "by_gpu", "by_regime", "errors", "extra", "regimes"):
        assert k in results
    assert "created" not in results
    assert {"python", "numpy", "pandas", "sklearn", "pipeweave"} <= set(results["versions"])
    assert results["methods"] == ["const", "flop", "broken"]
    assert list(results["results"]) == ["gemm_bf16", "moe_bf16[aic]", "moe_bf16[pw]"]
    gens = ["ampere", "ada", "hopper", "blackwell", "all"]
    for key, per_method in results["results"].items():
        assert list(per_method) == ["const", "flop", "broken"]
        for _m, per_gen in per_method.items():
            assert list(per_gen) == gens
            for rec in per_gen.values():
                assert tuple(rec) == (*STAT_KEYS, "mape_ge10us")
                assert len(rec["mape_ci95"]) == 2
        assert list(results["by_gpu"][key]["flop"]) == ["A100", "L40S", "H100", "H200", "B200"]
        assert results["families"][key]["folds"] == gens[:-1]
    meta = results["families"]["moe_bf16[pw]"]
    assert (meta["family"], meta["source"], meta["gpus"]["H200"]) == ("moe_bf16", "pw", "hopper")
    # regimes: deep_k only for the gemm family
    assert "deep_k" in results["by_regime"]["gemm_bf16"]["flop"]["all"]
    assert all("deep_k" not in cell for cell in results["by_regime"]["moe_bf16[aic]"]["flop"].values())
    assert results["extra"] == {"note": "unit test", "x": 1.5, "bad": None}


def test_build_results_numbers(results: dict, pred: pd.DataFrame) -> None:
    sub = pred[(pred["family"] == "gemm_bf16") & (pred["method"] == "flop") & (pred["generation"] == "ada")]
    rec = results["results"]["gemm_bf16"]["flop"]["ada"]
    assert rec["mape"] == pytest.approx(mape(sub["pred_us"], sub["latency_us"]), abs=1e-4)
    assert rec["n"] == len(sub) and rec["n_missing"] == 0
    lo, hi = rec["mape_ci95"]
    assert lo <= rec["mape"] <= hi
    by_gpu = results["by_gpu"]["gemm_bf16"]["flop"]
    assert by_gpu["H100"]["n"] + by_gpu["H200"]["n"] == results["results"]["gemm_bf16"]["flop"]["hopper"]["n"]
    # the failed fold: no scored rows, its rows counted as missing, reported in errors
    hop = results["results"]["gemm_bf16"]["broken"]["hopper"]
    assert hop["n"] == 0 and hop["n_missing"] > 0 and hop["mape"] is None
    assert results["results"]["gemm_bf16"]["broken"]["all"]["n_missing"] == hop["n_missing"]
    assert {(e["family_key"], e["fold"], e["method"]) for e in results["errors"]} == {
        ("gemm_bf16", "hopper", "broken"),
        ("moe_bf16[aic]", "hopper", "broken"),
        ("moe_bf16[pw]", "hopper", "broken"),
    }


def test_write_report_files_and_json_round_trip(report_dir: tuple[Path, dict], results: dict) -> None:
    out, files = report_dir
    for name in ("results.json", "results.md", "predictions.csv.gz"):
        assert (out / name).is_file() and name in files
    assert json.loads((out / "results.json").read_text()) == results
    pngs = sorted(out.glob("figures/*.png"))
    assert len(pngs) == 9  # 3 family keys x 3 figures
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        # the scatter's per-row points are not written (the command regenerates them); the others are
        assert png.with_suffix(".csv").is_file() == (not png.name.endswith(".scatter.png"))
    assert not list(out.rglob(".*"))  # no temporary files left behind
    md = (out / "results.md").read_text()
    assert "## moe_bf16[pw]" in md and "**" in md and "figures/gemm_bf16.scatter.png" in md
    assert "## Errors" in md
    back = pd.read_csv(out / "predictions.csv.gz")
    assert len(back) == sum(
        r["n"] + r["n_missing"]
        for key in results["results"]
        for r in [v["all"] for v in results["results"][key].values()]
    )


def test_figure_csv_holds_plotted_data(report_dir: tuple[Path, dict], pred: pd.DataFrame) -> None:
    out, _ = report_dir
    sub = pred[family_keys(pred) == "gemm_bf16"]
    csv = pd.read_csv(out / "figures/gemm_bf16.error_cdf.csv")
    data = plot_data_error_cdf(sub)
    np.testing.assert_allclose(csv["fraction"], data["fraction"], rtol=1e-5)
    assert list(csv["method"].unique()) == ["const", "flop", "broken"]
    # a method that failed on some rows never reaches fraction 1
    assert csv.loc[csv["method"] == "broken", "fraction"].max() < 1.0
    bars = pd.read_csv(out / "figures/gemm_bf16.mape_by_generation.csv")
    assert list(bars["generation"].unique()) == ["ampere", "ada", "hopper", "blackwell", "all"]


def test_results_are_byte_reproducible(tmp_path: Path, pred: pd.DataFrame, results: dict) -> None:
    again = build_results(
        pred.copy(),
        protocol="logo",
        data_fingerprint="sha256:test",
        extra={"note": "unit test", "x": np.float64(1.5), "bad": float("nan")},
        n_boot=200,
    )
    a = atomic_write_json(tmp_path / "a.json", results).read_bytes()
    b = atomic_write_json(tmp_path / "b.json", again).read_bytes()
    assert a == b
    assert render_markdown(results) == render_markdown(again)
    s1 = plot_data_scatter(pred, max_points=50).to_csv(index=False)
    s2 = plot_data_scatter(pred.copy(), max_points=50).to_csv(index=False)
    assert s1 == s2


def test_plot_data_scatter_subsamples(pred: pd.DataFrame) -> None:
    data = plot_data_scatter(pred, max_points=30)
    counts = data.groupby("method").size()
    assert (counts <= 30).all() and counts["const"] == 30
    # the same rows are kept for methods that predicted every row
    c = data.loc[data["method"] == "const", "row_id"].to_numpy()
    f = data.loc[data["method"] == "flop", "row_id"].to_numpy()
    np.testing.assert_array_equal(c, f)
    assert (data["pred_us"] > 0).all()


def test_plot_functions_ax_contract(pred: pd.DataFrame) -> None:
    from matplotlib.axes import Axes

    sub = pred[pred["family"] == "gemm_bf16"]
    bars = plot_data_mape_by_generation(sub, n_boot=50)
    ax = plot_mape_by_generation(bars)
    assert isinstance(ax, Axes)
    assert plot_error_cdf(plot_data_error_cdf(sub), ax=ax) is ax
    axes = plot_scatter(plot_data_scatter(sub, max_points=100))
    assert len(axes) == 3 and all(isinstance(a, Axes) for a in axes)
    assert plot_scatter(plot_data_scatter(sub, max_points=100), ax=ax) is ax


def test_results_on_rows_of_at_least_10us(results: dict, pred: pd.DataFrame) -> None:
    """Every method is also scored on the anchors' population (measured >= 10 us)."""
    sub = pred[(pred["family"] == "gemm_bf16") & (pred["method"] == "flop") & (pred["generation"] == "ada")]
    big = sub[sub["latency_us"] >= 10.0]
    assert 0 < len(big) < len(sub)
    rec = results["results_ge10us"]["gemm_bf16"]["flop"]["ada"]
    assert rec["n"] == len(big)
    assert rec["mape"] == pytest.approx(mape(big["pred_us"], big["latency_us"]), abs=1e-4)
    assert results["results"]["gemm_bf16"]["flop"]["ada"]["mape_ge10us"] == rec["mape"]
    md = render_markdown(results)
    assert "rows measured >= 10 us" in md
    assert "results_unflagged" not in results  # no flag column: no unflagged section


def test_results_without_flagged_rows(pred: pd.DataFrame) -> None:
    flagged = pred.assign(
        semantics_flagged=(pred["gpu"] == "B200") & (pred["family"] == "moe_bf16") & (pred["source"] == "aic")
    )
    res = build_results(flagged, protocol="logo", data_fingerprint="x", n_boot=20)
    assert list(res["results_unflagged"]) == ["moe_bf16[aic]"]
    n_b200 = int(
        (
            (flagged["gpu"] == "B200")
            & (flagged["family"] == "moe_bf16")
            & (flagged["source"] == "aic")
            & (flagged["method"] == "flop")
        ).sum()
    )
    assert res["flagged"]["moe_bf16[aic]"] == {
        "n": n_b200,
        "by_generation": {"blackwell": n_b200},
        "by_gpu": {"B200": n_b200},
    }
    uf = res["results_unflagged"]["moe_bf16[aic]"]["flop"]
    assert "blackwell" not in uf  # the only blackwell GPU is flagged
    keep = flagged[
        (flagged["family"] == "moe_bf16")
        & (flagged["source"] == "aic")
        & (flagged["method"] == "flop")
        & ~flagged["semantics_flagged"]
    ]
    assert uf["all"]["n"] == len(keep)
    assert uf["all"]["mape"] == pytest.approx(mape(keep["pred_us"], keep["latency_us"]), abs=1e-4)
    # the all-rows results are unchanged by the flag
    plain = build_results(pred, protocol="logo", data_fingerprint="x", n_boot=20)
    assert res["results"] == plain["results"]
    assert f"without the {n_b200} rows flagged" in render_markdown(res)


def test_method_notes_and_tuning_statement_rendered(pred: pd.DataFrame) -> None:
    res = build_results(
        pred,
        protocol="logo",
        data_fingerprint="x",
        n_boot=10,
        extra={"method_notes": {"flop": "FLOPs / 2e8 + 2 us"}, "tuning": "nothing tuned"},
    )
    md = render_markdown(res)
    assert "## Methods" in md and "- `flop`: FLOPs / 2e8 + 2 us" in md and "- tuning: nothing tuned." in md
    assert "## Methods" not in render_markdown(build_results(pred, protocol="logo", data_fingerprint="x", n_boot=10))


def test_gpu_split_report_with_a_table_per_operator() -> None:
    """A gpu-split run over rows that name their framework op (two ops on gemm, none on moe): per-op
    metrics for gemm only, equal to the MAPE of that op's rows, and the split named in the markdown."""
    prof = make_profiles()
    prof["op"] = np.where(prof["family"] == "gemm_bf16", np.where(prof.index % 2 == 0, "bmm", "linear"), None)
    pred = run_protocol(
        prof, {"flop": FlopMethod}, "gpu-split", train_gpus=["A100", "H100"], keep=("op",), progress=False
    )
    res = build_results(pred, protocol="gpu-split", data_fingerprint="x", extra={"train_gpus": ["A100", "H100"]})
    assert set(res["by_op"]) == {"gemm_bf16"}  # moe rows name no op
    for op in ("bmm", "linear"):
        rows = pred[(pred["family"] == "gemm_bf16") & (pred["op"] == op)]
        want = mape(rows["pred_us"].to_numpy(), rows["latency_us"].to_numpy())
        assert res["by_op"]["gemm_bf16"]["flop"][op]["mape"] == pytest.approx(want, abs=1e-3)
    md = render_markdown(res)
    assert "trained on every row of A100, H100 only" in md and "per generation of the tested GPUs" in md
    assert md.count("### MAPE (%) per operator") == 1
