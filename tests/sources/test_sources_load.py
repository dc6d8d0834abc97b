"""Loaders on the real measurements (skipped when the shared data directory is absent)."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest

from pipeweave.cli.main import main
from pipeweave.sources import (
    FAMILY_KEY_COLUMNS,
    PROFILE_COLUMNS,
    data_fingerprint,
    load_profiles,
    validate_profiles,
)
from pipeweave.sources._schema import BOOL_COLUMNS, NUMERIC_COLUMNS, STRING_COLUMNS

AIC_GPUS = ["A100-SXM", "B200", "GB200", "H100-SXM", "H200-SXM", "L40S", "RTX-PRO-6000-S"]
PW_GPUS = [
    "A100-SXM",
    "A40",
    "H100-SXM",
    "H20",
    "H200-SXM",
    "H800",
    "L40",
    "RTX-6000-Ada",
    "RTX-A6000",
    "RTX-PRO-6000-S",
]


def _rows(rep, **match) -> dict[str, int]:
    k = rep.kept
    sel = np.ones(len(k), dtype=bool)
    for col, val in match.items():
        sel &= (k[col] == val).to_numpy()
    return dict(zip(k.loc[sel, "gpu"], k.loc[sel, "rows"]))


def test_schema_columns_and_dtypes(real_profiles):
    df, _, _ = real_profiles
    assert list(df.columns) == PROFILE_COLUMNS
    for c in NUMERIC_COLUMNS:
        assert df[c].dtype == np.float64, c
    for c in STRING_COLUMNS:
        assert isinstance(df[c].dtype, pd.CategoricalDtype), c
    for c in BOOL_COLUMNS:
        assert df[c].dtype == bool, c
    assert np.isfinite(df["latency_us"]).all() and (df["latency_us"] > 0).all()
    assert set(df["source"].cat.categories) == {
        "aiconfigurator",
        "pipeweave",
        "pipeweave_fork_sample",
        "neusight",
        "vidur",
    }
    assert df["timing"].notna().all()
    for fam, keys in FAMILY_KEY_COLUMNS.items():
        sub = df[df["family"] == fam]
        assert len(sub), fam
        assert sub[list(keys)].notna().all().all(), fam
        # one row per launch: no repeated (source, dataset, gpu, dtype, key, tile) after cleaning
        ident = [
            "source",
            "dataset",
            "gpu",
            "dtype",
            *keys,
            "block_m",
            "block_n",
            "block_k",
            "group_m",
            "num_warps",
            "num_stages",
        ]
        assert not sub.duplicated(ident).any(), fam


def test_acceptance_counts(real_profiles):
    """35,742 bf16 GEMM rows on each of the 7 AIConfigurator GPUs; 3,024 moe_w13 rows on each of 10 PipeWeave GPUs."""
    _, rep, _ = real_profiles
    gemm = _rows(rep, source="aiconfigurator", dataset="gemm_perf", dtype="bfloat16")
    assert gemm == {g: 35_742 for g in AIC_GPUS}
    moe = _rows(rep, source="pipeweave", dataset="moe_w13", family="moe_w13")
    assert moe == {g: 3_024 for g in PW_GPUS}


def test_other_real_counts(real_profiles):
    _, rep, _ = real_profiles
    fp8 = _rows(rep, dataset="gemm_perf", dtype="fp8")
    assert set(fp8) == set(AIC_GPUS) - {"A100-SXM"} and fp8["H100-SXM"] == 35_741
    assert _rows(rep, dataset="gemm_fp8") == {"H20": 10_512, "H800": 10_512, "H100-SXM": 2_102, "H200-SXM": 2_102}
    moe_bf16 = _rows(rep, dataset="moe_perf", dtype="bfloat16")
    assert set(moe_bf16) == set(AIC_GPUS) and min(moe_bf16.values()) == 33_452  # shared grid (survey: 33,452)
    assert set(_rows(rep, dataset="moe_dse")) == {"A100-SXM", "A40", "H20", "H800", "L40", "RTX-PRO-6000-S"}
    drops = rep.drops
    reasons = set(drops["reason"])
    assert "kernel_source=sglang_marlin_moe not loaded" in reasons
    assert "gemm_dtype=nvfp4 not loaded" in reasons
    agg = drops[(drops["dataset"] == "moe_perf") & (drops["reason"].str.startswith("duplicate key aggregated"))]
    assert int(agg["rows"].sum()) > 30_000


def test_ms_to_us_against_raw_parquet(real_profiles, real_data_dir):
    df, _, _ = real_profiles
    raw = pd.read_parquet(real_data_dir / "aiconfigurator/data/h100_sxm/gemm/sglang/0.5.10/gemm_perf.parquet")
    r = raw[raw["gemm_dtype"] == "bfloat16"].iloc[123]
    sel = df[
        (df["dataset"] == "gemm_perf")
        & (df["gpu"] == "H100-SXM")
        & (df["dtype"] == "bfloat16")
        & (df["m"] == r["m"])
        & (df["n"] == r["n"])
        & (df["k"] == r["k"])
    ]
    assert len(sel) == 1
    assert sel["latency_us"].iloc[0] == pytest.approx(r["latency"] * 1000.0, rel=1e-12)
    assert sel["timing"].iloc[0] == "cuda_graph" and sel["generation"].iloc[0] == "hopper"


def test_pipeweave_us_kept_as_is(real_profiles, real_data_dir):
    df, _, _ = real_profiles
    raw = pd.read_csv(real_data_dir / "pipeweave/moe_w13/H20.csv").iloc[7]
    sel = df[
        (df["dataset"] == "moe_w13")
        & (df["gpu"] == "H20")
        & (df["num_tokens"] == raw["M"])
        & (df["num_experts"] == raw["E"])
        & (df["topk"] == raw["topk"])
        & (df["hidden_size"] == raw["H"])
        & (df["inter_size"] == raw["N"])
    ]
    assert len(sel) == 1
    row = sel.iloc[0]
    assert row["latency_us"] == pytest.approx(raw["avg_duration"], rel=1e-12)
    assert (row["moe_tp_size"], row["moe_ep_size"], row["distribution"]) == (1.0, 1.0, "balanced")
    assert np.isnan(row["block_m"])  # tile config not recorded


def test_median_aggregation_of_repeated_keys(real_profiles, real_data_dir):
    df, _, _ = real_profiles
    raw = pd.read_parquet(real_data_dir / "aiconfigurator/data/h100_sxm/moe/sglang/0.5.10/moe_perf.parquet")
    raw = raw[raw["kernel_source"] == "sglang_fused_moe_triton"]
    key = [
        "moe_dtype",
        "num_tokens",
        "hidden_size",
        "inter_size",
        "topk",
        "num_experts",
        "moe_tp_size",
        "moe_ep_size",
        "distribution",
    ]
    sizes = raw.groupby(key).latency.agg(["size", "nunique", "median"]).reset_index()
    case = sizes[(sizes["size"] >= 2) & (sizes["nunique"] == sizes["size"])].iloc[0]
    sel = df[
        (df["dataset"] == "moe_perf")
        & (df["gpu"] == "H100-SXM")
        & (df["dtype"] == case["moe_dtype"])
        & (df["distribution"] == case["distribution"])
    ]
    for c in key[1:-1]:
        sel = sel[sel[c] == case[c]]
    assert len(sel) == 1
    assert sel["latency_us"].iloc[0] == pytest.approx(case["median"] * 1000.0, rel=1e-12)
    assert sel["n_raw_rows"].iloc[0] == case["size"]


def test_dse_overlap_deduplicated(real_profiles, real_data_dir):
    df, _, _ = real_profiles
    dse = df[df["dataset"] == "moe_dse"]
    a100 = dse[dse["gpu"] == "A100-SXM"]
    n99 = len(pd.read_csv(real_data_dir / "pipeweave/moe_dse/moe_dse_A100_99.csv"))
    n995 = len(pd.read_csv(real_data_dir / "pipeweave/moe_dse/moe_dse_A100_99_5.csv"))
    assert int(a100["in_dse_99"].sum()) == n99 and int(a100["in_dse_99_5"].sum()) == n995
    assert int(a100["in_dse_top3"].sum()) == 864
    assert not (a100["in_dse_99_5"] & ~a100["in_dse_99"]).any()  # within 0.5% implies within 1%
    assert (a100["in_dse_99"] | a100["in_dse_top3"]).all()
    assert len(a100) == n99 + int((a100["in_dse_top3"] & ~a100["in_dse_99"]).sum())
    assert dse[list(("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"))].notna().all().all()
    assert (df.loc[df["dataset"] != "moe_dse", ["in_dse_99", "in_dse_99_5", "in_dse_top3"]] == False).all().all()  # noqa: E712


def test_attention_window_and_backend(real_profiles):
    df, _, _ = real_profiles
    ctx = df[df["family"] == "attention_context"]
    assert set(ctx.loc[ctx["gpu"] == "B200", "window_size"].unique()) == {0.0, 128.0, 1024.0}
    assert set(ctx.loc[ctx["gpu"] == "B200", "backend"].unique()) == {"triton", "trtllm_mha"}
    assert (ctx.loc[ctx["gpu"] == "H100-SXM", "window_size"] == 0).all()
    assert set(ctx["kv_cache_dtype"].unique()) == {"bfloat16", "fp8"}


def test_filters(real_profiles, real_data_dir):
    sub = load_profiles(real_data_dir, families="gemm", dtypes=["fp8"], gpus=["NVIDIA H100 80GB HBM3"])
    assert set(sub["gpu"]) == {"H100-SXM"} and set(sub["dtype"]) == {"fp8"}
    assert set(sub["dataset"]) == {"gemm_perf", "gemm_fp8"}
    assert list(sub["gpu"].cat.categories) == ["H100-SXM"]
    # filters that each match rows but not together: an empty table, and a warning saying where the rows are
    with pytest.warns(UserWarning, match=r"no measured rows match .*'moe_w13'.*'B300'.*GPUs measured per family"):
        assert load_profiles(real_data_dir, families="moe_w13", gpus="B300").empty


def test_cache_second_load_fast_and_equal(real_profiles, real_data_dir, monkeypatch):
    import pipeweave.sources._load as load_mod

    df, rep, cold = real_profiles

    def no_parsing(*args, **kwargs):
        raise AssertionError("a cache hit must not parse the source files")

    monkeypatch.setattr(load_mod, "read_dataset", no_parsing)
    t0 = time.perf_counter()
    df2, rep2 = load_profiles(real_data_dir, report=True)
    warm = time.perf_counter() - t0
    assert rep.cache == "miss" and rep2.cache == "hit"
    # (pd.testing.assert_frame_equal takes minutes on 1.4M categorical rows; compare per column instead)
    assert list(df.columns) == list(df2.columns) and len(df) == len(df2)
    for c in df.columns:
        a, b = df[c], df2[c]
        assert a.dtype == b.dtype, c
        if isinstance(a.dtype, pd.CategoricalDtype):
            assert list(a.cat.categories) == list(b.cat.categories), c
            assert np.array_equal(a.cat.codes.to_numpy(), b.cat.codes.to_numpy()), c
        else:
            assert np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=a.dtype != bool), c
    pd.testing.assert_frame_equal(rep.drops, rep2.drops)
    assert warm < 2 * cold  # typically ~1 s vs ~6 s; loose because CI machines are shared
    assert data_fingerprint(df) == data_fingerprint(df2)


def test_data_fingerprint_sensitive(real_profiles):
    df, _, _ = real_profiles
    small = df[df["dataset"] == "moe_w13"].reset_index(drop=True)
    fp = data_fingerprint(small)
    assert fp == data_fingerprint(small.copy()) and len(fp) == 16
    changed = small.copy()
    changed.loc[5, "latency_us"] *= 1.0001
    assert data_fingerprint(changed) != fp
    recoded = small.copy()
    recoded["gpu"] = recoded["gpu"].cat.reorder_categories(list(reversed(recoded["gpu"].cat.categories)))
    assert data_fingerprint(recoded) == fp  # same values, other category codes


def test_validate_accepts_loaded_rows(real_profiles):
    df, _, _ = real_profiles
    sample = df.groupby(["dataset", "gpu"], observed=True).head(20)
    out = validate_profiles(sample, require_latency=True)
    assert list(out.columns) == PROFILE_COLUMNS and len(out) == len(sample)


def test_cli_data_json(real_profiles, capsys):
    assert main(["data", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert set(recs[0]) == {"source", "dataset", "family", "dtype", "gpu", "rows"}
    gemm = {r["gpu"]: r["rows"] for r in recs if r["dataset"] == "gemm_perf" and r["dtype"] == "bfloat16"}
    assert gemm == {g: 35_742 for g in AIC_GPUS}
    moe = {r["gpu"]: r["rows"] for r in recs if r["dataset"] == "moe_w13"}
    assert moe == {g: 3_024 for g in PW_GPUS}


def test_cli_data_json_drops_and_messages(real_profiles, capsys):
    _, rep, _ = real_profiles
    assert main(["data", "--json", "drops"]) == 0
    drops = json.loads(capsys.readouterr().out)
    assert drops and set(drops[0]) == {"source", "dataset", "family", "reason", "rows"}
    assert sum(r["rows"] for r in drops) == int(rep.drops["rows"].sum())
    assert main(["data", "--json", "messages"]) == 0
    msgs = json.loads(capsys.readouterr().out)
    from pipeweave.sources import load_profiles_report

    assert msgs == list(load_profiles_report(None)[1].messages)
    assert main(["data", "--json", "kept"]) == 0
    assert set(json.loads(capsys.readouterr().out)[0]) == {"source", "dataset", "family", "dtype", "gpu", "rows"}


def test_cli_data_text(real_profiles, capsys):
    assert main(["data"]) == 0
    out = capsys.readouterr().out
    assert "35,742" in out and "3,024" in out and "dropped or merged" in out and "cache: hit" in out
