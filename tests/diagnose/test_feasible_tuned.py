"""The feasible-config space contains every config real tuners launched (SGLang 0.5.10's tuned tables),
and the one shared-memory rule (pipeweave.frontend.triton_smem_bytes) is the one diagnose uses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave.diagnose import CONFIG_COLUMNS, config_fits, config_space, smem_bytes
from pipeweave.diagnose._space import config_key
from pipeweave.frontend import triton_smem_buffers, triton_smem_bytes
from pipeweave.hardware import get_gpu

_DTYPE = {"": "bfloat16", "fp8_w8a8": "fp8"}


def test_triton_smem_rule_hand_checked():
    # hand-made: sm_80 keeps stages-1 buffers, sm_90 / sm_100 with BM >= 64 keep `stages`, sm_120 stages-1
    one = (64 * 32 + 32 * 128) * 2.0
    assert triton_smem_bytes(64, 128, 32, 4, 2.0, 2.0, 80) == 3 * one
    assert triton_smem_bytes(64, 128, 32, 4, 2.0, 2.0, 90) == 4 * one
    assert triton_smem_bytes(64, 128, 32, 4, 2.0, 2.0, 100) == 4 * one
    assert triton_smem_bytes(64, 128, 32, 4, 2.0, 2.0, 120) == 3 * one
    assert triton_smem_bytes(32, 128, 32, 4, 2.0, 2.0, 90) == 3 * (32 * 32 + 32 * 128) * 2.0  # BM < 64: mma.sync
    assert triton_smem_buffers(1, 64, 80) == 1  # one stage still needs one buffer
    assert triton_smem_bytes(64, 128, 32, 4, 2.0, 2.0) == 3 * one  # unknown arch -> the mma.sync rule
    arch = np.array([80.0, 90.0])
    assert np.array_equal(triton_smem_bytes(64, 128, 32, 4, 2.0, 2.0, arch), [3 * one, 4 * one])


def test_diagnose_uses_the_frontend_rule():
    rng = np.random.default_rng(0)
    cfg = pd.DataFrame(
        {
            c: rng.choice(v, 200)
            for c, v in {
                "block_m": [16, 64, 128],
                "block_n": [32, 128],
                "block_k": [32, 64],
                "group_m": [1],
                "num_warps": [4, 8],
                "num_stages": [2, 3, 5],
            }.items()
        }
    ).astype(float)
    for g in ("A100-SXM", "H100-SXM", "B200", "RTX-PRO-6000-S"):
        spec = get_gpu(g)
        want = triton_smem_bytes(cfg.block_m, cfg.block_n, cfg.block_k, cfg.num_stages, 2.0, 2.0, spec.sm_arch)
        assert np.array_equal(smem_bytes(cfg, "bfloat16", spec), want)


def test_sglang_b200_winner_is_a_candidate():
    # SGLang's measured winner for E=128, N=1344 on B200 (M=1024 and 4096): 256x256 tiles, accumulator in TMEM
    b200 = get_gpu("B200")
    cfg = pd.DataFrame([dict(zip(CONFIG_COLUMNS, (256.0, 256.0, 64.0, 1.0, 8.0, 3.0)))])
    assert config_fits(cfg, b200)[0]
    assert np.isin(config_key(cfg), config_key(config_space(b200))).all()
    # the same tile does not fit on H100 registers (wgmma keeps the accumulator in registers: 256 + 40 > 255)
    assert not config_fits(cfg, get_gpu("H100-SXM"))[0]


def test_every_sglang_tuned_config_is_feasible(data_dir):
    from pipeweave.sources import sglang_device_names as _device_names
    from pipeweave.sources import sglang_moe_config_table

    table = sglang_moe_config_table(data_dir)
    names = {v: k for k, v in _device_names().items()}
    table = table[table["device_name"].isin(names) & table["config_dtype"].isin(_DTYPE)]
    assert len(table) > 3000  # A100, H100, H200, H20, H800, B200, L40S, RTX 6000 Ada
    checked = 0
    for (dev, dt), rows in table.groupby(["device_name", "config_dtype"]):
        spec = get_gpu(names[dev])
        fits = config_fits(rows, spec, _DTYPE[dt])
        assert fits.all(), f"{dev} {dt}: {rows[~fits][list(CONFIG_COLUMNS)].drop_duplicates().values.tolist()[:3]}"
        space = config_space(spec, "moe_w13", _DTYPE[dt], data=data_dir)
        inside = np.isin(config_key(rows), config_key(space))
        assert inside.all(), f"{dev} {dt}: not candidates {rows[~inside][list(CONFIG_COLUMNS)].values.tolist()[:3]}"
        checked += len(rows)
    assert checked == len(table)


def test_measured_sweep_configs_are_feasible(dse_frames):
    sweeps, _ = dse_frames
    for g, rows in sweeps.groupby("gpu"):
        assert config_fits(rows, get_gpu(g)).all(), g


@pytest.mark.parametrize("gpu", ["A40", "H100-SXM"])
def test_space_without_tuned_is_the_grid(gpu):
    assert len(config_space(gpu, tuned=False)) < len(config_space(gpu))
