"""Error-anatomy tables (pure functions) on the synthetic table of conftest (hand-made data)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from evaluation_fixtures import ConstMethod, FlopMethod, make_profiles

from pipeweave.evaluation import run_protocol, semantics_flags
from pipeweave.evaluation._anatomy import (
    ablation_table,
    anatomy_findings,
    anatomy_tables,
    fold_table,
    goal_misses,
    miss_findings,
    oracle_table,
    plot_oracle,
    plot_regimes,
    regime_labels,
    regime_table,
    render_anatomy_markdown,
)


class ScaledFlop(FlopMethod):
    """FlopMethod x 2 on every row: a pure per-GPU scalar error."""

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        return 2.0 * super().predict(df)


@pytest.fixture(scope="module")
def pred() -> pd.DataFrame:
    df = make_profiles()
    df = df[df["family"] == "gemm_bf16"].reset_index(drop=True)
    df["log2_ai_over_ridge"] = np.where(np.arange(len(df)) % 2 == 0, 1.0, -1.0)
    return run_protocol(
        df,
        {"pipeweave": FlopMethod, "xgboost_crude": ConstMethod, "pipeweave_scaled": ScaledFlop},
        "logo",
        progress=False,
        keep=("log2_ai_over_ridge",),
    )


def test_regime_labels() -> None:
    p = pd.DataFrame(
        {
            "family": ["gemm", "gemm", "gemm", "fused_moe", "fused_moe", "attention_context"],
            "latency_us": [5.0, 50.0, 50.0, 50.0, 50.0, 50.0],
            "log2_ai_over_ridge": [3.0, 3.0, -3.0, -1.0, -1.0, 1.0],
            "moe_ep_size": [np.nan, np.nan, np.nan, 1.0, 4.0, np.nan],
            "moe_ep_semantics": [None, None, None, "rank_all_tokens", "rank_local_tokens", None],
            "backend": [None, None, None, None, None, "triton"],
        }
    )
    lab = regime_labels(p)
    assert list(lab["regime"]) == ["small", "compute", "memory", "memory", "memory", "compute"]
    assert list(lab["layout"]) == ["-", "-", "-", "ep1", "ep>1 local-tokens", "triton"]


def test_oracle_scalar_removes_a_pure_scale_error(pred: pd.DataFrame) -> None:
    o = oracle_table(pred).set_index(["method", "gpu"])
    f, s = o.loc["pipeweave"], o.loc["pipeweave_scaled"]
    # a x2 error is removed by the per-GPU scalar down to the unscaled method's shape error
    np.testing.assert_allclose(s["mape_oracle_gpu"], f["mape_oracle_gpu"], rtol=1e-3)
    assert (s["mape"] > f["mape"]).all()
    np.testing.assert_allclose(s["median_ratio"], 2 * f["median_ratio"], rtol=1e-3)  # tables are rounded


def test_regime_table_shares_sum_to_100(pred: pd.DataFrame) -> None:
    r = regime_table(pred)
    tot = r.groupby(["method", "gpu"])[["share_rows", "share_error"]].sum()
    np.testing.assert_allclose(tot["share_rows"], 100.0, atol=1e-3)
    np.testing.assert_allclose(tot["share_error"], 100.0, atol=1e-3)
    assert set(r["regime"]) <= {"small", "compute", "memory"}


def test_fold_and_ablation_tables(pred: pd.DataFrame) -> None:
    folds = fold_table(pred)
    sub = pred[(pred["method"] == "pipeweave") & (pred["fold"] == "ada")]
    row = folds[(folds["method"] == "pipeweave") & (folds["fold"] == "ada")].iloc[0]
    ape = np.abs(sub["pred_us"] / sub["latency_us"] - 1) * 100
    assert row["mape"] == pytest.approx(ape.mean(), rel=1e-4)
    assert row["mape_ge10us"] == pytest.approx(ape[sub["latency_us"] >= 10].mean(), rel=1e-4)
    ab = ablation_table(folds)
    assert set(ab["variant"]) == {"pipeweave_scaled", "xgboost_crude"}
    x = ab[(ab["variant"] == "pipeweave_scaled") & (ab["fold"] == "ada")].iloc[0]
    assert x["delta_vs_pipeweave"] == pytest.approx(x["mape"] - row["mape"], abs=1e-3)


def test_findings_and_markdown_are_computed(pred: pd.DataFrame) -> None:
    tables = anatomy_tables(pred)
    assert anatomy_tables(pred.copy())["oracle"].equals(tables["oracle"])  # pure
    found = anatomy_findings(tables)["gemm_bf16"]
    assert any(line.startswith("pipeweave vs xgboost_crude") for line in found)
    assert any("pipeweave_scaled" in line for line in found)
    md = render_anatomy_markdown(
        tables, {"command": "test", "data_fingerprint": "x", "max_train_rows_per_gpu": 1, "n_estimators": 1}, {}
    )
    assert "## gemm_bf16" in md and "oracle per-GPU scalar" in md and "nested leave-one-generation-out" in md


def test_goal_misses_name_the_kind_of_each_miss(pred: pd.DataFrame) -> None:
    """On the hand-made table: FlopMethod's fold MAPE, a x2 scale error read as a GPU level, flagged rows."""
    folds = fold_table(pred).set_index(["method", "fold"])
    m = goal_misses(pred, goals={"gemm_bf16": {"logo": 20.0}}).set_index("fold")
    assert list(m.index) == ["ampere", "ada", "hopper", "blackwell"]  # oldest generation first
    np.testing.assert_allclose(m["mape"], folds.loc["pipeweave"].loc[m.index, "mape"], rtol=1e-4)
    np.testing.assert_allclose(m["crude_mape"], folds.loc["xgboost_crude"].loc[m.index, "mape"], rtol=1e-4)
    assert m["met"].all() and (m["kind"] == "met").all() and (m["miss_by"] == 0).all()
    assert m["mape_unflagged"].isna().all()  # no semantics_flagged column: nothing flagged

    s = goal_misses(pred, goals={"gemm_bf16": {"logo": 20.0}}, method="pipeweave_scaled").set_index("fold")
    assert (s["kind"] == "GPU level").all()  # x2 everywhere: the per-GPU scalar removes it
    np.testing.assert_allclose(s["miss_by"], s["mape"] - 20.0, rtol=1e-6)
    assert (s["top_regime_median_ratio"] > 1.9).all()
    assert (s["mape_oracle_gpu"] <= s["mape_oracle_gpu"].max()).all() and (s["mape_oracle_gpu"] < 20.0).all()
    lines = miss_findings(s.reset_index())
    assert len(lines) == 4 and all("missed by" in x and "GPU level" in x for x in lines)

    # a goal below what the per-GPU scalar leaves: still a GPU level, since it removes most of the miss
    low = goal_misses(pred, goals={"gemm_bf16": {"logo": 1.0}}, method="pipeweave_scaled")
    assert (low["mape_oracle_gpu"] > 1.0).all() and (low["kind"] == "GPU level").all()
    expect = 100 * (low["mape"] - low["mape_oracle_gpu"]) / (low["mape"] - 1.0)
    np.testing.assert_allclose(low["miss_removed_gpu"], expect, rtol=1e-3)
    # a goal no scalar reaches: shape-dependent (the FlopMethod's own shape error stays)
    tight = goal_misses(pred, goals={"gemm_bf16": {"logo": 0.01}})
    assert set(tight["kind"]) == {"shape-dependent"}
    # the x2 rows added as flagged rows of the same method: met once they are left out
    good = pred[pred["method"] == "pipeweave"].assign(semantics_flagged=False)
    bad = pred[pred["method"] == "pipeweave_scaled"].assign(method="pipeweave", semantics_flagged=True)
    f = goal_misses(pd.concat([good, bad], ignore_index=True), goals={"gemm_bf16": {"logo": 20.0}})
    assert (f["kind"] == "flagged rows").all() and (f["mape"] > 40).all()
    np.testing.assert_allclose(f["mape_unflagged"], m["mape"].to_numpy(), rtol=1e-4)
    assert goal_misses(pred, goals={}).empty  # no family with a goal: an empty table with the columns


def test_plots_draw_from_tables(pred: pd.DataFrame) -> None:
    from matplotlib.axes import Axes

    tables = anatomy_tables(pred)
    assert isinstance(plot_regimes(tables["regimes"]), Axes)
    ax = plot_oracle(tables["oracle"][tables["oracle"]["method"] == "pipeweave"])
    assert isinstance(ax, Axes) and plot_regimes(tables["regimes"], ax=ax) is ax


def test_semantics_flags_mark_the_minority_ep_semantics() -> None:
    """Hand-made rows: 3 GPUs timed all tokens per rank, 1 GPU per-rank tokens."""
    f = pd.DataFrame(
        {
            "source": ["s"] * 8,
            "moe_ep_size": [1.0, 4.0, 1.0, 4.0, 8.0, 2.0, 8.0, np.nan],
            "moe_ep_semantics": ["a", "a", "a", "a", "a", "l", "l", None],
        }
    )
    assert semantics_flags(f).tolist() == [False, False, False, False, False, True, True, False]
    assert not semantics_flags(f.drop(columns="moe_ep_semantics")).any()


def test_semantics_flags_mark_window0_rows_the_manifest_flags() -> None:
    """Hand-made prefill rows: only window-0 rows of a GPU whose window-0 semantics is flagged."""
    f = pd.DataFrame(
        {
            "source": ["s"] * 6,
            "window_size": [0.0, 128.0, np.nan, 0.0, 0.0, 1024.0],
            "window0_semantics": [
                "less_than_window_128",
                "less_than_window_128",
                "less_than_window_128",
                "full_attention",
                None,
                "full_attention",
            ],
        }
    )
    # a missing window_size means full attention (the manifest's default), so row 2 is flagged too
    assert semantics_flags(f).tolist() == [True, False, True, False, False, False]
    assert not semantics_flags(f.drop(columns="window0_semantics")).any()


def test_ep_semantics_evidence_separates_flat_from_per_rank() -> None:
    """Hand-made fused-MoE rows: GPU 'F' stays flat with EP, GPU 'R' scales as 1/EP (not measured data)."""
    from pipeweave.evaluation._anatomy import ep_semantics_evidence

    rows = []
    for gpu, flag in (("F", "rank_all_tokens"), ("R", "rank_local_tokens")):
        for t in (4096.0, 8192.0):
            for ep in (1.0, 2.0, 4.0, 8.0):
                lat = 100.0 * (0.95 if ep > 1 else 1.0) if gpu == "F" else 100.0 / ep
                rows.append(
                    {
                        "source": "s",
                        "gpu": gpu,
                        "family": "fused_moe",
                        "dtype": "bfloat16",
                        "num_tokens": t,
                        "hidden_size": 4096.0,
                        "inter_size": 1024.0,
                        "topk": 8.0,
                        "num_experts": 256.0,
                        "moe_tp_size": 1.0,
                        "moe_ep_size": ep,
                        "distribution": "balanced",
                        "latency_us": lat,
                        "moe_ep_semantics": flag,
                    }
                )
    ev = ep_semantics_evidence(pd.DataFrame(rows)).set_index("gpu")
    assert ev.loc["F", "share_flat"] == 100.0 and ev.loc["F", "share_per_rank"] == 0.0
    assert ev.loc["R", "share_per_rank"] == 100.0 and ev.loc["R", "median_ep4"] == pytest.approx(0.25)
    assert ev.loc["R", "flag"] == "rank_local_tokens" and ev.loc["F", "n"] == 6


def test_write_anatomy_report_files(tmp_path, pred: pd.DataFrame) -> None:
    import json

    from pipeweave.evaluation._anatomy import write_anatomy_report

    res = write_anatomy_report(
        pred,
        pd.DataFrame(),
        tmp_path,
        {"command": "t", "data_fingerprint": "x", "max_train_rows_per_gpu": 1, "n_estimators": 1},
    )
    assert json.loads((tmp_path / "results.json").read_text())["findings"] == res["findings"]
    for name in (
        "results.md",
        "folds.csv",
        "regimes.csv",
        "oracle.csv",
        "ablations.csv",
        "figures/gemm_bf16.regimes.png",
        "figures/gemm_bf16.oracle.png",
    ):
        assert (tmp_path / name).is_file(), name
    assert not list(tmp_path.rglob(".*"))


def test_report_command_names_the_settings_that_are_not_defaults():
    from pipeweave.evaluation._anatomy import anatomy_command

    assert anatomy_command("out", 4000, 200) == "pipeweave evaluate --protocol anatomy --out out"
    assert anatomy_command("o", 1000, 100) == (
        "pipeweave evaluate --protocol anatomy --out o --max-train-rows-per-gpu 1000 --n-estimators 100"
    )
    assert anatomy_command("o", None, 200).endswith("--max-train-rows-per-gpu 0")
