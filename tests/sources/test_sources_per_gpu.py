"""Per-GPU manifest columns ([dataset.per_gpu.<col>]): the fused-MoE expert-parallel semantics flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeweave import DataError
from pipeweave.sources._manifest import _parse, get_manifest


def _manifest(tmp_path: Path, per_gpu: str) -> Path:
    p = tmp_path / "m.toml"
    p.write_text(f"""
[source]
name = "x"
latency_unit = "us"

[[dataset]]
name = "moe"
family = "fused_moe"
files = ["x/*.csv"]
latency_column = "lat"
gpu_column = "gpu"

[dataset.columns]
dtype = "dtype"

{per_gpu}
""")
    return p


def test_per_gpu_table_is_parsed(tmp_path):
    spec = _parse(_manifest(tmp_path, '[dataset.per_gpu.moe_ep_semantics]\ndefault = "a"\nB200 = "b"\n')).datasets[0]
    assert spec.per_gpu == {"moe_ep_semantics": {"default": "a", "B200": "b"}}


def test_per_gpu_needs_a_canonical_column(tmp_path):
    with pytest.raises(DataError, match="not_a_column"):
        _parse(_manifest(tmp_path, '[dataset.per_gpu.not_a_column]\ndefault = "a"\n'))


def test_aiconfigurator_flags_the_per_rank_gpus():
    moe = [d for d in get_manifest("aiconfigurator").datasets if d.family == "fused_moe"][0]
    flag = moe.per_gpu["moe_ep_semantics"]
    assert flag["default"] == "rank_all_tokens"
    assert {g for g, v in flag.items() if v == "rank_local_tokens"} == {"B200", "RTX-PRO-6000-S"}


def test_flag_is_a_column_of_the_loaded_rows(real_data_dir, session_cache):
    from pipeweave.sources import load_profiles

    df = load_profiles(real_data_dir, families=["fused_moe"], gpus=["B200", "H100-SXM"])
    by_gpu = df.groupby("gpu", observed=True)["moe_ep_semantics"].agg(lambda s: set(s.astype(str)))
    assert by_gpu["B200"] == {"rank_local_tokens"} and by_gpu["H100-SXM"] == {"rank_all_tokens"}


def test_aiconfigurator_flags_b200_window0_prefill():
    ctx = [d for d in get_manifest("aiconfigurator").datasets if d.family == "attention_context"][0]
    flag = ctx.per_gpu["window0_semantics"]
    assert flag["default"] == "full_attention"
    assert {g for g, v in flag.items() if g != "default" and v != "full_attention"} == {"B200"}


def test_window0_flag_on_loaded_prefill_rows(real_data_dir, session_cache):
    """Real B200 / GB200 prefill rows: only B200's window-0 rows are flagged."""
    from pipeweave.evaluation import semantics_flags
    from pipeweave.sources import load_profiles

    df = load_profiles(real_data_dir, families=["attention_context"], gpus=["B200", "GB200"])
    flag = semantics_flags(df)
    win = df["window_size"].fillna(0).to_numpy()
    is_b200 = (df["gpu"].astype(str) == "B200").to_numpy()
    assert flag.any() and (flag == (is_b200 & (win == 0))).all()
