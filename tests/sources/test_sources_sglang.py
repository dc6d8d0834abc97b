"""SGLang 0.5.10 fused-MoE config lookup and PipeWeave's default tile heuristic.

Expected tile plans below were read by hand from the JSON files of the sglang==0.5.10 wheel
(``sglang_moe_configs/*.tar.gz``), e.g. triton_3_3_1/E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json
has keys 64 -> 64/128/128/1/4/4, 96 -> 64/128/64/1/4/5, 1536 -> 128/256/64/32/8/4, 2048 -> 128/256/64/64/8/3.
"""

from __future__ import annotations

import json
import tarfile

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError
from pipeweave.sources import (
    CONFIG_COLUMNS,
    pipeweave_moe_default_config,
    resolve_sglang_moe_configs,
    sglang_moe_config_table,
)

TILE = ["block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"]
MIXTRAL_H100 = "E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json"


def _rows(**cols) -> pd.DataFrame:
    base = {
        "gpu": "H100-SXM",
        "dtype": "bfloat16",
        "num_tokens": 80,
        "num_experts": 8,
        "inter_size": 14336,
        "moe_tp_size": 2,
        "moe_ep_size": 1,
    }
    base.update(cols)
    n = max(len(v) if isinstance(v, list) else 1 for v in base.values())
    return pd.DataFrame({k: v if isinstance(v, list) else [v] * n for k, v in base.items()})


def _tiles(out: pd.DataFrame) -> list[list[int]]:
    return out[TILE].astype(int).values.tolist()


@pytest.fixture(scope="module")
def table(real_data_dir):
    return sglang_moe_config_table(real_data_dir)


def test_config_table(table, real_data_dir):
    assert len(table) == 5212
    assert {
        "triton_version",
        "config_file",
        "num_experts_local",
        "n_local",
        "device_name",
        "config_dtype",
        "block_shape",
        "m_key",
        "key_order",
        *TILE,
    } <= set(table.columns)
    assert set(table["triton_version"]) == {"3.1.0", "3.2.0", "3.3.0", "3.3.1", "3.4.0", "3.5.1"}
    # key_order is the key order inside the JSON file (SGLang's tie-break)
    with tarfile.open(real_data_dir / "sglang_moe_configs/sglang-0.5.10_fused_moe_triton_configs.tar.gz") as tf:
        member = next(m for m in tf.getmembers() if m.name.endswith(f"triton_3_3_1/{MIXTRAL_H100}"))
        keys = [int(k) for k in json.load(tf.extractfile(member))]
    sub = table[table["config_file"] == f"triton_3_3_1/{MIXTRAL_H100}"].sort_values("key_order")
    assert sub["m_key"].astype(int).tolist() == keys


def test_repeated_launches_resolve_once_to_the_same_plan(real_data_dir):
    # real lookup inputs, repeated and interleaved, on a shuffled non-default index
    rows = _rows(num_tokens=[3000, 1, 3000, 1, 3000]).set_axis([40, 7, 13, 2, 99])
    out = resolve_sglang_moe_configs(rows, real_data_dir)
    assert out.index.tolist() == [40, 7, 13, 2, 99]
    single = resolve_sglang_moe_configs(_rows(num_tokens=[3000, 1]), real_data_dir)
    assert _tiles(out) == [_tiles(single)[i] for i in (0, 1, 0, 1, 0)]
    assert out["config_file"].tolist() == [single["config_file"].iloc[i] for i in (0, 1, 0, 1, 0)]


def test_tuned_file_hit_with_version_fallback(real_data_dir):
    # Mixtral (E=8, inter 14336) at TP2 on H100: N = 14336/2 = 7168 -> no 3.5.1/3.4.0 file, 3.3.1 is next
    out = resolve_sglang_moe_configs(_rows(num_tokens=[3000, 1]), real_data_dir)
    assert list(out.columns) == CONFIG_COLUMNS
    assert (out["config_origin"] == "tuned_file").all()
    assert set(out["config_file"]) == {f"triton_3_3_1/{MIXTRAL_H100}"}
    assert _tiles(out) == [[128, 256, 64, 32, 8, 4], [16, 64, 256, 1, 4, 4]]  # keys 3072 and 1
    # N is inter/tp (not 2*inter/tp): TP1 with inter 7168 hits the same file
    same = resolve_sglang_moe_configs(_rows(num_tokens=3000, inter_size=7168, moe_tp_size=1), real_data_dir)
    assert same["config_file"].iloc[0] == f"triton_3_3_1/{MIXTRAL_H100}"
    # preferred version is a parameter
    old = resolve_sglang_moe_configs(_rows(num_tokens=64), real_data_dir, triton_version="3.1.0")
    assert old["config_file"].iloc[0] == f"triton_3_1_0/{MIXTRAL_H100}"
    assert _tiles(old) == [[32, 128, 128, 1, 4, 4]]


def test_nearest_m_ties_take_first_key(real_data_dir):
    out = resolve_sglang_moe_configs(_rows(num_tokens=[80, 1792, 100]), real_data_dir)
    # 80: |64-80| == |96-80| -> 64 (first key); 1792: 1536 vs 2048 -> 1536; 100 -> 96
    assert _tiles(out) == [[64, 128, 128, 1, 4, 4], [128, 256, 64, 32, 8, 4], [64, 128, 64, 1, 4, 5]]


def test_default_config_and_m_le_e_rule(real_data_dir):
    # GB200 has no tuned file at all -> get_default_config
    out = resolve_sglang_moe_configs(
        _rows(
            gpu="GB200",
            num_tokens=[8, 9, 8, 9, 100],
            num_experts=[8, 8, 64, 64, 8],
            moe_ep_size=[1, 1, 8, 8, 1],
            dtype=["bfloat16"] * 4 + ["fp8_block"],
        ),
        real_data_dir,
    )
    assert (out["config_origin"] == "default").all() and out["config_file"].isna().all()
    small, large, fp8_block = [16, 32, 64, 1, 4, 3], [64, 64, 32, 8, 4, 3], [64, 128, 128, 32, 4, 3]
    # M <= E uses the LOCAL expert count (num_experts / moe_ep_size): 64/8 = 8
    assert _tiles(out) == [small, large, small, large, fp8_block]


def test_recorded_tile_plan_kept(real_data_dir):
    rows = _rows(
        num_tokens=[80, 80],
        block_m=[128, np.nan],
        block_n=[64, np.nan],
        block_k=[32, np.nan],
        group_m=[1, np.nan],
        num_warps=[8, np.nan],
        num_stages=[2, np.nan],
    )
    out = resolve_sglang_moe_configs(rows, real_data_dir)
    assert out["config_origin"].tolist() == ["recorded", "tuned_file"]
    assert _tiles(out)[0] == [128, 64, 32, 1, 8, 2]


def test_on_real_fused_moe_rows(real_profiles):
    df, _, _ = real_profiles
    moe = df[df["family"] == "fused_moe"]
    out = resolve_sglang_moe_configs(moe)
    assert out.index.equals(moe.index) and out[TILE].notna().all().all()
    share = (out["config_origin"] == "tuned_file").groupby(moe["gpu"], observed=True).mean()
    assert share["GB200"] == 0 and share["RTX-PRO-6000-S"] == 0
    assert 0.05 < share["H100-SXM"] < 0.15  # survey: 11.1 % of raw H100 bf16 rows have a tuned file


def test_bad_input(real_data_dir):
    with pytest.raises(DataError, match="int4_wo"):
        resolve_sglang_moe_configs(_rows(dtype="int4_wo"), real_data_dir)
    with pytest.raises(DataError, match="num_tokens"):
        resolve_sglang_moe_configs(_rows().drop(columns="num_tokens"), real_data_dir)
    with pytest.raises(DataError, match="not found"):
        sglang_moe_config_table(real_data_dir / "pipeweave")


def test_pipeweave_default_config():
    rows = pd.DataFrame(
        {
            "gpu": ["H20", "H20", "A100-SXM", "L40"],
            "num_tokens": [8, 9, 1024, 100],
            "num_experts": [8, 8, 64, 64],
            "hidden_size": [4096, 4096, 4096, 1024],
        }
    )
    out = pipeweave_moe_default_config(rows)
    assert _tiles(out) == [
        [16, 32, 64, 1, 4, 3],
        [64, 64, 64, 16, 4, 3],
        [64, 64, 64, 16, 4, 3],
        [64, 64, 64, 16, 4, 3],
    ]
    assert (out["config_origin"] == "default").all()
    calc = pipeweave_moe_default_config(rows, rule="calculator", smem_kib=[228, 228, 164, 100])
    # get_moe_config: H20 (smem 228) M=8 H=4096 -> 16/128/128/1; A100 (164) M=1024 -> 64/128/64/32;
    # L40 (100) M=100 H=1024 -> 16/16/256/1
    assert calc[TILE[:4]].astype(int).values.tolist() == [
        [16, 128, 128, 1],
        [16, 128, 128, 1],
        [64, 128, 64, 32],
        [16, 16, 256, 1],
    ]
    assert calc[["num_warps", "num_stages"]].isna().all().all()
    with pytest.raises(DataError, match="rule"):
        pipeweave_moe_default_config(rows, rule="magic")
