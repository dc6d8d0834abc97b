"""Cross-checks of the catalog against the shared spec files and device strings (skipped without data)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from pipeweave import DataError
from pipeweave._paths import resolve_data_dir
from pipeweave.hardware import get_gpu, resolve_gpu_name


def _data_dir() -> Path:
    try:
        return resolve_data_dir()
    except DataError:
        pytest.skip("shared measurement data not available")


def _aic_systems() -> list[Path]:
    return sorted((_data_dir() / "aiconfigurator" / "systems").glob("*.yaml"))


def test_aiconfigurator_folders_and_peaks() -> None:
    systems = _aic_systems()
    if not systems:
        pytest.skip("no aiconfigurator systems")
    for path in systems:
        gpu = get_gpu(path.stem)
        text = path.read_text(encoding="utf-8")
        bf16 = float(re.search(r"^\s*bfloat16_tc_flops:\s*([0-9.e+]+)", text, re.M).group(1)) / 1e12
        assert gpu.peak_tensor_tflops("bfloat16") == pytest.approx(bf16, rel=0.02), path.stem
        m = re.search(r"^\s*fp8_tc_flops:\s*([0-9.e+]+)", text, re.M)
        if m:
            assert gpu.peak_tensor_tflops("fp8") == pytest.approx(float(m.group(1)) / 1e12, rel=0.02), path.stem
        sm = int(re.search(r"^\s*sm_version:\s*(\d+)", text, re.M).group(1))
        assert gpu.sm_arch == sm, path.stem


def test_aiconfigurator_device_strings_resolve() -> None:
    files = sorted((_data_dir() / "aiconfigurator" / "data").glob("*/gemm/*/*/gemm_perf.parquet"))
    if not files:
        pytest.skip("no aiconfigurator gemm files")
    for f in files:
        devices = pd.read_parquet(f, columns=["device"])["device"].unique()
        folder = f.relative_to(_data_dir() / "aiconfigurator" / "data").parts[0]
        for d in devices:
            assert resolve_gpu_name(d) == resolve_gpu_name(folder), (f, d)


def test_pipeweave_hardware_json_agrees() -> None:
    files = sorted((_data_dir() / "pipeweave" / "hardware").glob("*.json"))
    if not files:
        pytest.skip("no PipeWeave hardware specs")
    for f in files:
        hw = json.loads(f.read_text(encoding="utf-8"))
        gpu = get_gpu(hw["name"])
        assert resolve_gpu_name(f.stem) == gpu.name, f.stem
        assert gpu.sm_count == hw["numSms"], f.stem
        assert gpu.sm_arch == hw["computeMajor"] * 10 + hw["computeMinor"], f.stem
        assert gpu.generation == hw["architecture"], f.stem
        assert gpu.tensor_flop_per_clk_per_sm["bf16"] == pytest.approx(hw["tcBf16"], rel=0.01), f.stem
        if "tcFp8" in hw:
            assert gpu.tensor_flop_per_clk_per_sm["fp8"] == pytest.approx(hw["tcFp8"], rel=0.01), f.stem
        assert gpu.fp32_lanes_per_sm == hw["FmaFp32"] and gpu.sfu_ops_per_clk_per_sm == hw["xuFp32"], f.stem
        assert gpu.l2_bw_gbps == pytest.approx(hw["l2CacheBandwidth"]), f.stem
        assert gpu.l2_mib == pytest.approx(hw["l2CacheSize"] / 1024), f.stem
        assert gpu.smem_per_sm_kib == hw["sharedMemorySize"], f.stem
        assert gpu.dram_bw_gbps == pytest.approx(hw["memBandwidth"], rel=0.03), f.stem


def test_pipeweave_csv_hardware_strings_resolve() -> None:
    root = _data_dir() / "pipeweave"
    files = sorted(root.glob("moe_w13/*.csv")) + sorted(root.glob("gemm_fp8/*.csv"))
    if not files:
        pytest.skip("no PipeWeave csv files")
    for f in files:
        names = pd.read_csv(f, usecols=["hardware"])["hardware"].unique()
        for n in names:
            resolve_gpu_name(n)
        if f.parent.name == "moe_w13":
            assert resolve_gpu_name(f.stem) == resolve_gpu_name(names[0]), f
    for d in sorted(p for p in root.glob("collective/*") if p.is_dir()) + sorted(root.glob("moe_dse/*.csv")):
        stem = d.name if d.is_dir() else d.stem.split("_")[2]
        resolve_gpu_name(stem)
