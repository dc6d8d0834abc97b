"""Config space: shared-memory and register filters (hand-checked cases), coverage of the measured sweeps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError, UnknownGPUError
from pipeweave.diagnose import CONFIG_COLUMNS, CONFIG_VALUES, config_fits, config_space, format_config, smem_bytes
from pipeweave.hardware import get_gpu


def _cfg(bm, bn, bk, gm, w, st):
    return pd.DataFrame([dict(zip(CONFIG_COLUMNS, map(float, (bm, bn, bk, gm, w, st))))])


def test_smem_hand_checked_a40():
    # A40: 99 KiB per CTA; sm_86 keeps num_stages-1 operand buffers of (BM*BK + BK*BN) bf16 elements
    a40 = get_gpu("A40")
    assert a40.smem_per_cta_kib == 99
    assert smem_bytes(_cfg(32, 32, 256, 1, 4, 4), "bfloat16", a40)[0] == 3 * (32 * 256 + 256 * 32) * 2  # 96 KiB
    assert config_fits(_cfg(32, 32, 256, 1, 4, 4), a40)[0]
    assert not config_fits(_cfg(32, 32, 256, 1, 4, 5), a40)[0]  # 4 x 32 KiB = 128 KiB > 99 KiB
    assert config_fits(_cfg(32, 32, 256, 1, 4, 5), a40, dtype="fp8")[0]  # 1-byte operands: 64 KiB


def test_smem_hand_checked_hopper_wgmma():
    # H100: 227 KiB per CTA; BLOCK_M >= 64 takes the wgmma path with num_stages buffers
    h100 = get_gpu("H100")
    assert smem_bytes(_cfg(128, 128, 128, 8, 8, 3), "bfloat16", h100)[0] == 3 * 65536  # 192 KiB
    assert config_fits(_cfg(128, 128, 128, 8, 8, 3), h100)[0]
    assert not config_fits(_cfg(128, 128, 128, 8, 8, 4), h100)[0]  # 256 KiB
    # BLOCK_M = 32: mma.sync path, num_stages - 1 buffers: 4 x 40 KiB = 160 KiB fits
    assert smem_bytes(_cfg(32, 128, 128, 8, 4, 5), "bfloat16", h100)[0] == 4 * (32 * 128 + 128 * 128) * 2
    assert config_fits(_cfg(32, 128, 128, 8, 4, 5), h100)[0]


def test_register_filter():
    a100 = get_gpu("A100")
    # 256 x 256 fp32 accumulators over 128 threads = 512 registers per thread > 255
    assert not config_fits(_cfg(256, 256, 32, 1, 4, 2), a100)[0]
    # over 256 threads: 256 + 40 > 255 still too many; 128 x 256 over 256 threads: 128 + 40 fits
    assert not config_fits(_cfg(256, 256, 32, 1, 8, 2), a100)[0]
    assert config_fits(_cfg(128, 256, 32, 1, 8, 2), a100)[0]


def test_config_space_contents():
    sp = config_space("A40", tuned=False)
    assert list(sp.columns[:6]) == list(CONFIG_COLUMNS)
    assert not sp.duplicated(list(CONFIG_COLUMNS)).any()
    assert (sp["smem_kib"] <= 99).all() and (sp["regs_per_thread"] <= 255).all()
    for c in CONFIG_COLUMNS:
        assert set(sp[c].astype(int)) <= set(CONFIG_VALUES[c])
    # more shared memory -> a superset of configs
    assert len(config_space("H100", tuned=False)) > len(sp)
    assert format_config(sp.iloc[0]) == ",".join(str(int(v)) for v in sp.iloc[0][list(CONFIG_COLUMNS)])


def test_config_space_errors():
    with pytest.raises(UnknownGPUError):
        config_space("NoSuchGPU 9000")
    with pytest.raises(DataError, match="no Triton tile-config space"):
        config_space("H100", family="attention_context")


def test_measured_sweep_configs_fit_and_are_covered(dse_frames):
    sweeps, _ = dse_frames
    for g, s in sweeps.groupby("gpu"):
        assert config_fits(s, get_gpu(g)).all(), g  # the filter never rejects a config that ran
    in_space = np.ones(len(sweeps), dtype=bool)
    for c in CONFIG_COLUMNS:
        in_space &= sweeps[c].isin(CONFIG_VALUES[c]).to_numpy()
    assert in_space.mean() > 0.998  # only GROUP_M 2 and 128 (100 of 66,810 rows) are left out


def test_config_values_and_tables_are_checked_by_name():
    """Hand-made knob values and tile tables: a partial or misspelled ``values`` and a table missing a column
    raised a bare KeyError ('block_m'); a knob not given now keeps CONFIG_VALUES."""
    h100 = get_gpu("H100")
    space = config_space(h100, values={"block_m": [64]})
    assert set(space["block_m"]) == {64.0} and set(space["num_stages"]) <= set(CONFIG_VALUES["num_stages"])
    assert len(space) == len(config_space(h100, values={**CONFIG_VALUES, "block_m": (64,)}))
    with pytest.raises(
        DataError, match=r"unknown tile knobs \['block_mm'\] \(did you mean 'block_m' for 'block_mm'\?\)"
    ):
        config_space(h100, values={"block_mm": [64]})
    for bad in ([-64], [], [64.5], ["64"]):
        with pytest.raises(DataError, match=r"values\['block_m'\] must be a non-empty list of positive whole numbers"):
            config_space(h100, values={"block_m": bad})
    with pytest.raises(DataError, match="values must map tile knobs to lists of values, got list"):
        config_space(h100, values=[64])
    with pytest.raises(DataError, match=r"the tile config lacks \['block_n', 'block_k', 'num_warps', 'num_stages'\]"):
        config_fits({"block_m": 64}, h100)
    with pytest.raises(DataError, match=r"the tile config lacks \['block_n', 'block_k', 'num_stages'\]"):
        smem_bytes(pd.DataFrame({"block_m": [64.0]}))
    with pytest.raises(DataError, match="a tile config must be a DataFrame or a mapping"):
        config_fits([64, 64, 64, 8, 4, 3], h100)
    full = dict(zip(CONFIG_COLUMNS, (64, 64, 64, 8, 4, 3)))
    assert bool(config_fits(full, h100))  # one mapping still fits
