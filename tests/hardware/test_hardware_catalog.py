"""GPU catalog, name resolution and spec files (pipeweave.hardware)."""

from __future__ import annotations

import dataclasses
import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError, UnknownGPUError
from pipeweave._paths import DATASETS_DIR
from pipeweave.cli.main import main
from pipeweave.hardware import (
    GENERATIONS,
    REQUIRED_SPEC_FIELDS,
    TENSOR_DTYPES,
    GPUSpec,
    generation_of,
    get_gpu,
    gpu_frame,
    list_gpus,
    load_spec_file,
    resolve_gpu_name,
    resolve_gpu_names,
)

CANONICAL = [
    "A100-SXM",
    "A40",
    "RTX-A6000",
    "L40",
    "L40S",
    "L20",
    "RTX-6000-Ada",
    "H100-SXM",
    "H200-SXM",
    "H20",
    "H800",
    "B200",
    "GB200",
    "B300",
    "GB300",
    "RTX-PRO-6000-S",
    # older generations and PCIe/inference parts measured by NeuSight (issue 13)
    "P100-PCIe",
    "P4",
    "V100-PCIe",
    "T4",
    "A100-PCIe-40GB",
    "A100-PCIe-80GB",
    "L4",
]

# Names the data sources use (aiconfigurator device strings and folders, PipeWeave hardware
# strings and file stems, sglang config device names) and short names people type.
ALIASES = {
    # aiconfigurator `device` column and folder names
    "NVIDIA H100 80GB HBM3": "H100-SXM",
    "NVIDIA H200": "H200-SXM",
    "NVIDIA B200": "B200",
    "NVIDIA GB200": "GB200",
    "NVIDIA A100-SXM4-80GB": "A100-SXM",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "RTX-PRO-6000-S",
    "NVIDIA L40S": "L40S",
    "NVIDIA B300 SXM6 AC": "B300",
    "NVIDIA GB300": "GB300",
    "a100_sxm": "A100-SXM",
    "h100_sxm": "H100-SXM",
    "h200_sxm": "H200-SXM",
    "b200_sxm": "B200",
    "gb200": "GB200",
    "l40s": "L40S",
    "rtx_pro_6000_server": "RTX-PRO-6000-S",
    "b300_sxm": "B300",
    "gb300": "GB300",
    # PipeWeave `hardware` strings
    "NVIDIA H100": "H100-SXM",
    "NVIDIA RTX 6000 Ada Generation": "RTX-6000-Ada",
    "NVIDIA RTX A6000": "RTX-A6000",
    "NVIDIA L40": "L40",
    "NVIDIA L20": "L20",
    "NVIDIA H20": "H20",
    "NVIDIA H800": "H800",
    "NVIDIA A40": "A40",
    # PipeWeave file stems
    "A100-SXM4-80GB": "A100-SXM",
    "RTX_PRO_6000_Blackwell_Server_Edition": "RTX-PRO-6000-S",
    "RTX_6000_Ada_Generation": "RTX-6000-Ada",
    "RTX_A6000": "RTX-A6000",
    "PRO6000S": "RTX-PRO-6000-S",
    "RTX_PRO_6000_S": "RTX-PRO-6000-S",
    "RTX_6000_Ada": "RTX-6000-Ada",
    "A100": "A100-SXM",
    "A40": "A40",
    "H100": "H100-SXM",
    "H20": "H20",
    "H200": "H200-SXM",
    "H800": "H800",
    "L20": "L20",
    "L40": "L40",
    # sglang fused_moe config device names
    "NVIDIA_H100_80GB_HBM3": "H100-SXM",
    "NVIDIA_A100-SXM4-80GB": "A100-SXM",
    "NVIDIA_RTX_6000_Ada_Generation": "RTX-6000-Ada",
    # short names
    "B300": "B300",
    "GB300": "GB300",
    "B200": "B200",
    "RTX PRO 6000": "RTX-PRO-6000-S",
    "A6000": "RTX-A6000",
}


def test_catalog_has_the_16_gpus_in_order() -> None:
    assert [g.name for g in list_gpus()] == CANONICAL


@pytest.mark.parametrize("alias,canonical", sorted(ALIASES.items()))
def test_alias_resolves(alias: str, canonical: str) -> None:
    assert resolve_gpu_name(alias) == canonical
    assert get_gpu(alias).name == canonical


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_names_resolve_to_themselves(name: str) -> None:
    assert resolve_gpu_name(name) == name
    assert resolve_gpu_name(name.lower()) == name
    assert resolve_gpu_name(name.upper().replace("-", "_")) == name


def test_case_space_dash_insensitive() -> None:
    assert resolve_gpu_name("nvidia h100 80gb hbm3") == "H100-SXM"
    assert resolve_gpu_name("  H100_SXM ") == "H100-SXM"
    assert resolve_gpu_name("rtx-pro-6000-blackwell-server-edition") == "RTX-PRO-6000-S"
    assert resolve_gpu_name("NVIDIA l40s") == "L40S"


def test_similar_names_stay_distinct() -> None:
    assert resolve_gpu_name("L40") != resolve_gpu_name("L40S")
    assert resolve_gpu_name("B200") != resolve_gpu_name("GB200")
    assert resolve_gpu_name("B300") != resolve_gpu_name("GB300")
    assert resolve_gpu_name("RTX 6000 Ada") != resolve_gpu_name("RTX PRO 6000")
    assert resolve_gpu_name("H20") != resolve_gpu_name("H200")


def test_unknown_name_lists_valid_names_and_suggests() -> None:
    with pytest.raises(UnknownGPUError) as info:
        resolve_gpu_name("H1000")
    msg = str(info.value)
    assert "'H1000'" in msg
    for name in CANONICAL:
        assert name in msg
    assert "did you mean" in msg and "H100-SXM" in msg
    with pytest.raises(KeyError):  # UnknownGPUError is a KeyError too
        get_gpu("not-a-gpu")


def test_non_string_name_is_rejected() -> None:
    with pytest.raises(UnknownGPUError, match="string"):
        resolve_gpu_name(100)  # type: ignore[arg-type]


def test_generations_and_compute_capability() -> None:
    gens = {g.name: g.generation for g in list_gpus()}
    assert {n for n, g in gens.items() if g == "ampere"} == {
        "A100-SXM",
        "A40",
        "RTX-A6000",
        "A100-PCIe-40GB",
        "A100-PCIe-80GB",
    }
    assert {n for n, g in gens.items() if g == "ada"} == {"L40", "L40S", "L20", "RTX-6000-Ada", "L4"}
    assert {n for n, g in gens.items() if g == "pascal"} == {"P100-PCIe", "P4"}
    assert {n for n, g in gens.items() if g == "volta"} == {"V100-PCIe"}
    assert {n for n, g in gens.items() if g == "turing"} == {"T4"}
    assert {n for n, g in gens.items() if g == "hopper"} == {"H100-SXM", "H200-SXM", "H20", "H800"}
    assert {n for n, g in gens.items() if g == "blackwell"} == {"B200", "GB200", "B300", "GB300", "RTX-PRO-6000-S"}
    assert GENERATIONS == ("pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")
    assert get_gpu("P100").sm_arch == 60 and get_gpu("Tesla P4").sm_arch == 61
    assert get_gpu("V100").sm_arch == 70 and get_gpu("Tesla T4").sm_arch == 75
    assert generation_of("NVIDIA H20") == "hopper"
    assert get_gpu("B300").sm_arch == 103 and get_gpu("GB300").compute_capability == "10.3"
    assert get_gpu("B200").sm_arch == 100 and get_gpu("GB200").sm_arch == 100
    assert get_gpu("RTX PRO 6000").sm_arch == 120
    assert get_gpu("L20").sm_arch == 89 and get_gpu("A40").sm_arch == 86 and get_gpu("A100").sm_arch == 80


def test_architecture_invariants() -> None:
    for g in list_gpus():
        assert g.fp32_lanes_per_sm == (64 if g.sm_arch in (60, 70, 75, 80) else 128), g.name
        if g.sm_arch < 80:  # Pascal/Volta/Turing: checked one by one in test_older_generations
            continue
        if g.sm_arch in (86, 89, 120):
            assert g.max_warps_per_sm == 48 and g.smem_per_sm_kib == 100, g.name
        elif g.sm_arch == 80:
            assert g.smem_per_sm_kib == 164
        else:
            assert g.smem_per_sm_kib == 228 and g.max_warps_per_sm == 64, g.name
        assert g.smem_per_cta_kib < g.smem_per_sm_kib
        assert ("fp8" in g.tensor_flop_per_clk_per_sm) == (g.generation != "ampere"), g.name
        assert g.sources and g.notes, g.name
        assert g.aliases, g.name
    assert get_gpu("B200").sm_count == 148


def test_older_generations() -> None:
    """Pascal has no tensor cores; Volta/Turing fp16 tensor cores only; data-sheet FP32 peaks."""
    for name in ("P100", "P4"):
        assert dict(get_gpu(name).tensor_flop_per_clk_per_sm) == {}, name
    for name in ("V100", "T4"):
        keys = set(get_gpu(name).tensor_flop_per_clk_per_sm)
        assert "fp16" in keys and not keys & {"bf16", "tf32", "fp8"}, name
    for name, tflops in (("P100", 9.3), ("P4", 5.5), ("V100", 14.0), ("T4", 8.1), ("L4", 30.3)):
        assert get_gpu(name).peak_fp32_tflops == pytest.approx(tflops, rel=0.02), name
    assert get_gpu("V100").peak_tensor_tflops("float16") == pytest.approx(112.0, rel=0.02)
    assert get_gpu("T4").peak_tensor_tflops("float16") == pytest.approx(65.0, rel=0.02)
    with pytest.raises(DataError):
        get_gpu("T4").peak_tensor_tflops("bfloat16")
    for g in list_gpus():
        if g.sm_arch < 80:
            assert g.smem_per_cta_kib <= g.smem_per_sm_kib and g.sources and g.notes and g.aliases, g.name


@pytest.mark.parametrize(
    "gpu,dtype,tflops",
    [
        ("H100-SXM", "bfloat16", 989.0),
        ("H100-SXM", "fp8", 1979.0),
        ("A100", "bfloat16", 312.0),
        ("A100", "float16", 312.0),
        ("B200", "bf16", 2250.0),
        ("B200", "fp8_block", 4500.0),
        ("GB200", "bfloat16", 2500.0),
        ("GB300", "bfloat16", 2500.0),
        ("B300", "bfloat16", 2250.0),
        ("L40", "bfloat16", 181.05),
        ("L40S", "bfloat16", 362.05),
        ("RTX-6000-Ada", "bfloat16", 364.2),
        ("A40", "bfloat16", 149.7),
        ("RTX-A6000", "bfloat16", 154.8),
        ("H20", "bfloat16", 148.0),
        ("L20", "bfloat16", 119.5),
        ("RTX-PRO-6000-S", "bfloat16", 467.8),
        ("H100-SXM", "float32", 494.7),
    ],
)
def test_peak_tensor_tflops_match_data_sheets(gpu: str, dtype: str, tflops: float) -> None:
    assert get_gpu(gpu).peak_tensor_tflops(dtype) == pytest.approx(tflops, rel=0.02)


def test_dtype_spellings_agree() -> None:
    h = get_gpu("H100")
    assert h.tensor_flop_per_clk_per_sm_for("bfloat16") == h.tensor_flop_per_clk_per_sm_for("bf16") == 4096
    assert h.tensor_flop_per_clk_per_sm_for("fp8_block") == h.tensor_flop_per_clk_per_sm_for("fp8") == 8192
    assert h.tensor_flop_per_clk_per_sm_for("float32") == h.tensor_flop_per_clk_per_sm_for("tf32") == 2048


def test_unsupported_dtype_raises_data_error() -> None:
    with pytest.raises(DataError) as info:
        get_gpu("A100").peak_tensor_tflops("fp8")
    msg = str(info.value)
    assert "fp8" in msg and "A100-SXM" in msg and "bf16" in msg
    with pytest.raises(DataError, match="unknown tensor dtype 'int3'"):
        get_gpu("H100").peak_tensor_tflops("int3")


def test_peak_fp32_and_per_clock_helpers() -> None:
    a = get_gpu("A100")
    assert a.peak_fp32_tflops == pytest.approx(19.5, rel=0.01)
    assert get_gpu("RTX-6000-Ada").peak_fp32_tflops == pytest.approx(91.1, rel=0.01)
    assert a.dram_bw_bytes_per_clk == pytest.approx(2039e9 / 1410e6)


def test_flat_and_gpu_frame() -> None:
    flat = get_gpu("A100").flat()
    for k in TENSOR_DTYPES:
        assert f"tensor_{k}_flop_per_clk_per_sm" in flat
    assert math.isnan(flat["tensor_fp8_flop_per_clk_per_sm"])
    assert "aliases" not in flat and "sources" not in flat and "notes" not in flat
    assert flat["sm_arch"] == 80
    df = gpu_frame(["H100", "NVIDIA A100-SXM4-80GB", "h100_sxm"])
    assert list(df.index) == ["H100-SXM", "A100-SXM"] and df.index.name == "gpu"
    assert set(flat) == set(df.columns)
    assert df.loc["H100-SXM", "tensor_bf16_flop_per_clk_per_sm"] == 4096
    assert np.isnan(df.loc["A100-SXM", "tensor_fp8_flop_per_clk_per_sm"])
    df.loc["H100-SXM", "sm_count"] = -1  # a copy: the cache stays intact
    assert gpu_frame(["H100"]).loc["H100-SXM", "sm_count"] == 132
    full = gpu_frame()
    assert list(full.index) == CANONICAL
    assert (
        full.select_dtypes("number")
        .notna()
        .all()
        .drop([f"tensor_{k}_flop_per_clk_per_sm" for k in TENSOR_DTYPES])
        .all()
    )


def test_gpu_frame_accepts_spec_objects() -> None:
    spec = load_spec_file(DATASETS_DIR / "example_gpu_spec.toml")
    df = gpu_frame([spec, "H100"])
    assert list(df.index) == ["RTX-4090", "H100-SXM"]


def test_resolve_gpu_names_series() -> None:
    s = pd.Series(["NVIDIA H100", "NVIDIA H100", "a100_sxm", None])
    out = resolve_gpu_names(s)
    assert out.iloc[:3].tolist() == ["H100-SXM", "H100-SXM", "A100-SXM"] and pd.isna(out.iloc[3])
    assert resolve_gpu_names(["L40S", "l40s"]) == ["L40S", "L40S"]


def test_spec_is_frozen_and_hashable() -> None:
    g = get_gpu("H100")
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.sm_count = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        g.tensor_flop_per_clk_per_sm["bf16"] = 1  # type: ignore[index]
    assert {g, get_gpu("h100_sxm")} == {g}


# ------------------------------------------------------------------ spec files
def _example_table() -> dict:
    with (DATASETS_DIR / "example_gpu_spec.toml").open("rb") as fh:
        return tomllib.load(fh)["gpu"]


def _write_toml(path: Path, table: dict, *, section: bool = True) -> Path:
    def val(v: object) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + " }"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, str):
            return json.dumps(v)
        return repr(v)

    lines = (["[gpu]"] if section else []) + [f"{k} = {val(v)}" for k, v in table.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_example_spec_file_loads() -> None:
    spec = get_gpu(str(DATASETS_DIR / "example_gpu_spec.toml"))
    assert spec.name == "RTX-4090" and spec.generation == "ada"
    assert spec.peak_tensor_tflops("bfloat16") == pytest.approx(165.2, rel=0.01)


def test_spec_file_round_trip(tmp_path: Path) -> None:
    spec = load_spec_file(DATASETS_DIR / "example_gpu_spec.toml")
    p = _write_toml(tmp_path / "mine.toml", spec.to_dict())
    again = get_gpu(str(p))
    assert again == spec and again.flat() == spec.flat()
    # top-level keys (no [gpu] header) and JSON work too
    assert load_spec_file(_write_toml(tmp_path / "flat.toml", spec.to_dict(), section=False)) == spec
    pj = tmp_path / "mine.json"
    pj.write_text(json.dumps({"gpu": spec.to_dict()}), encoding="utf-8")
    assert get_gpu(pj) == spec
    # a catalog entry round-trips as well
    h = get_gpu("H100")
    assert load_spec_file(_write_toml(tmp_path / "h100.toml", h.to_dict())) == h


def test_spec_file_missing_key(tmp_path: Path) -> None:
    table = _example_table()
    del table["l2_bw_gbps"]
    with pytest.raises(DataError) as info:
        load_spec_file(_write_toml(tmp_path / "bad.toml", table))
    msg = str(info.value)
    assert "missing" in msg and "l2_bw_gbps" in msg and "expected keys" in msg


def test_spec_file_unknown_key(tmp_path: Path) -> None:
    table = _example_table() | {"l2_bandwidth": 5000}
    with pytest.raises(DataError, match="unknown key.*l2_bandwidth"):
        load_spec_file(_write_toml(tmp_path / "bad.toml", table))


@pytest.mark.parametrize(
    "field,value,match",
    [
        ("sm_count", -4, "sm_count"),
        ("dram_bw_gbps", 0, "dram_bw_gbps"),
        ("sm_count", 12.5, "whole number"),
        ("generation", "kepler", "unknown generation 'kepler'"),
        ("compute_capability", 9.0, "compute_capability"),
        ("tensor_flop_per_clk_per_sm", {"bf16": -1}, "tensor_flop_per_clk_per_sm.bf16"),
        ("tensor_flop_per_clk_per_sm", {"fp4": 4096}, "fp4"),
        ("smem_per_cta_kib", 200, "smem_per_cta_kib"),
    ],
)
def test_spec_file_bad_value(tmp_path: Path, field: str, value: object, match: str) -> None:
    table = _example_table() | {field: value}
    with pytest.raises(DataError, match=match):
        load_spec_file(_write_toml(tmp_path / "bad.toml", table))


def test_spec_file_not_found_and_unparsable(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        get_gpu(str(tmp_path / "nope.toml"))
    bad = tmp_path / "broken.toml"
    bad.write_text("[gpu\nname=", encoding="utf-8")
    with pytest.raises(DataError, match="could not be parsed"):
        load_spec_file(bad)


def test_direct_construction_validates() -> None:
    table = _example_table()
    assert set(REQUIRED_SPEC_FIELDS) <= set(table)
    with pytest.raises(DataError, match="regs_per_sm"):
        GPUSpec(**(table | {"regs_per_sm": float("nan")}))


# ------------------------------------------------------------------ CLI
def test_cli_gpus_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in records] == CANONICAL
    flat_keys = set(get_gpu("H100").flat())
    for r in records:
        assert flat_keys <= set(r)
        assert {"name", "generation", "sm_count", "dram_bw_gbps", "aliases"} <= set(r)
        assert r["generation"] in GENERATIONS and r["sm_count"] > 0 and r["dram_bw_gbps"] > 0
    a100 = records[0]
    assert a100["tensor_fp8_flop_per_clk_per_sm"] is None and a100["peak_fp8_tflops"] is None
    assert a100["peak_bf16_tflops"] == pytest.approx(312, rel=0.01)


def test_cli_gpus_table_and_one_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus"]) == 0
    out = capsys.readouterr().out
    for name in CANONICAL:
        assert name in out
    assert main(["gpus", "--gpu", "NVIDIA H100 80GB HBM3", "--json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["name"] == "H100-SXM" and "h100_sxm" in rec["aliases"]
    assert main(["gpus", "--gpu", str(DATASETS_DIR / "example_gpu_spec.toml")]) == 0
    assert "RTX-4090" in capsys.readouterr().out


def test_cli_gpus_unknown_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--gpu", "H1000"]) == 2
    err = capsys.readouterr().err
    assert "unknown GPU 'H1000'" in err and "Traceback" not in err


def test_spec_pickles_copies_and_stays_read_only():
    import copy
    import dataclasses
    import pickle

    import pytest

    from pipeweave.hardware import get_gpu

    spec = get_gpu("H100")
    assert pickle.loads(pickle.dumps(spec)) == spec  # joblib / multiprocessing send specs to workers
    assert copy.deepcopy(spec) == spec
    assert dataclasses.asdict(spec)["tensor_flop_per_clk_per_sm"] == dict(spec.tensor_flop_per_clk_per_sm)
    with pytest.raises(TypeError, match="read-only"):
        spec.tensor_flop_per_clk_per_sm["bf16"] = 1.0  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        spec.sources.update({"sm_count": "x"})  # type: ignore[attr-defined]


def test_a_changed_spec_under_a_catalog_name_is_refused():
    """A catalog GPU's name on other numbers would be predicted as the measured GPU (its 'seen' band)."""
    import pipeweave as pw
    from pipeweave import DataError

    half = dataclasses.replace(get_gpu("H100"), sm_count=66)
    with pytest.raises(DataError, match=r"differs from the catalog's H100-SXM in \['sm_count'\]"):
        get_gpu(half)
    with pytest.raises(DataError, match="its own name"):
        pw.predict({"family": "gemm", "dtype": "bfloat16", "m": 64, "n": 64, "k": 64}, gpu=half)
    renamed = dataclasses.replace(half, name="H100-66SM")
    assert get_gpu(renamed) is renamed
    assert get_gpu(dataclasses.replace(get_gpu("H100"), notes="my note")).sm_count == 132  # notes only: fine


def test_spec_paths_of_the_wrong_kind_are_named(tmp_path):
    from pipeweave import DataError

    yaml = tmp_path / "my_gpu.yaml"
    yaml.write_text("name: X\n")
    with pytest.raises(DataError, match=r"must be \.toml or \.json, got '\.yaml'"):
        get_gpu(str(yaml))
    with pytest.raises(DataError, match="is a directory, not a GPU spec file"):
        get_gpu(str(tmp_path))


@pytest.mark.parametrize(
    "typed, first",
    [("a100 80gb", ["A100-SXM", "A100-PCIe-80GB"]), ("H100-PCIe", ["H100-SXM"]), ("H1OO", ["H100-SXM"])],
)
def test_unknown_gpu_suggestions_follow_the_product_number(typed, first):
    from pipeweave.hardware import resolve_gpu_name

    with pytest.raises(UnknownGPUError) as info:
        resolve_gpu_name(typed)
    assert f"did you mean {first}?" in str(info.value)


def test_spec_to_toml_round_trips_and_renames(tmp_path):
    from pipeweave.hardware import get_gpu, load_spec_file, spec_to_toml

    h100 = get_gpu("H100")
    path = tmp_path / "copy.toml"
    path.write_text(spec_to_toml(h100, name="H100-what-if"))
    copy = load_spec_file(path)
    assert copy.name == "H100-what-if" and copy.aliases == ()
    assert dataclasses.replace(copy, name=h100.name, aliases=h100.aliases) == h100
    # a renamed copy says how to compare it (the model never measured the new name); the catalog entry does not
    assert "compare an edited copy with this unedited one, not with H100-SXM" in path.read_text()
    assert "What-if" not in spec_to_toml(h100)


def test_gpus_spec_file_prints_a_spec_file(tmp_path, capsys):
    from pipeweave.hardware import load_spec_file

    assert main(["gpus", "--gpu", "B200", "--spec-file", "--name", "B200-slow-hbm"]) == 0
    (tmp_path / "b.toml").write_text(capsys.readouterr().out)
    assert load_spec_file(tmp_path / "b.toml").sm_count == 148
    assert main(["gpus", "--spec-file"]) == 2
    assert "give --gpu" in capsys.readouterr().err


def _table(**change):
    """The example spec file's table (hand-made RTX 4090 numbers) with fields changed."""
    from pipeweave.hardware import EXAMPLE_SPEC_PATH

    table = dict(tomllib.loads(EXAMPLE_SPEC_PATH.read_text())["gpu"])
    table.update(change)
    return table


def test_spec_checks_name_the_fix():
    from pipeweave.hardware import spec_from_dict

    assert spec_from_dict(_table(compute_capability=8.9)).compute_capability == "8.9"  # unquoted TOML number
    with pytest.raises(DataError, match="no bf16 rate") as info:
        spec_from_dict(_table(tensor_flop_per_clk_per_sm={"fp8": 1024, "fp16": 512}))
    assert "add bf16 =" in str(info.value)
    with pytest.raises(DataError, match="unknown generation 'rubin'") as info:
        spec_from_dict(_table(generation="rubin"))
    assert "fix:" in str(info.value)
    with pytest.raises(DataError, match="exceeds smem_per_sm_kib") as info:
        spec_from_dict(_table(smem_per_cta_kib=200))
    assert "opt-in maximum" in str(info.value)


def test_gpus_spec_file_name_must_be_its_own(capsys):
    assert main(["gpus", "--gpu", "H100", "--spec-file", "--name", " "]) == 2
    assert "--name is empty" in capsys.readouterr().err
    assert main(["gpus", "--gpu", "H100", "--spec-file", "--name", "B200"]) == 2
    assert "another catalog GPU's name" in capsys.readouterr().err


def test_match_gpu_name_finds_a_spec_file_gpu_by_name_or_alias() -> None:
    """HAND-MADE spec-file GPUs (copies of catalog entries, renamed): matched like catalog names."""
    from pipeweave.hardware import get_gpu, match_gpu_name

    mine = dataclasses.replace(get_gpu("H100-SXM"), name="My-H100X", aliases=("NVIDIA H100X 96GB",))
    other = dataclasses.replace(get_gpu("B200"), name="Lab-B200", aliases=())
    assert match_gpu_name("my_h100x", [other, mine]) == "My-H100X"
    assert match_gpu_name("nvidia h100x-96gb", [other, mine]) == "My-H100X"
    assert match_gpu_name("LAB B200", [other, mine]) == "Lab-B200"
    assert match_gpu_name("H100-SXM", [other, mine]) is None  # catalog names are resolve_gpu_name's
