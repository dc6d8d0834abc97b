"""Importer input errors, flags that do not apply, repeated launches and unknown GPUs.

Inputs are the hand-written files of tests/profiles/data (see its README.md) and small variants of them
written here by hand (empty files, a byte-order mark, a semicolon re-save, another GPU name); none of their
numbers are measurements.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeweave import DataError
from pipeweave.cli.main import main
from pipeweave.profiles import (
    FIXED_COLUMNS,
    import_kineto,
    import_ncu,
    import_profiles,
    import_triton_autotune,
    read_ncu_csv,
    read_profiles,
)
from pipeweave.profiles._files import suggest_gpus

DATA = Path(__file__).parent / "data"
KINETO = DATA / "kineto_h100_gemm.json"
AUTOTUNE = DATA / "matmul_kernel.autotune.json"
NCU = DATA / "ncu_raw.csv"
SHAPES = DATA / "ncu_shapes.csv"
TRITON = ["--gpu", "H100", "--family", "gemm", "--key", "m,n,k"]


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["profiles", "import", *argv])
    res = capsys.readouterr()
    assert "Traceback" not in res.err
    return rc, res.out, res.err


# --- 1. empty files and directories: an error naming the file, no traceback -----------------------
def test_empty_files_and_directories_name_the_file(tmp_path, capsys):
    empty_csv, empty_json = tmp_path / "empty.csv", tmp_path / "empty.autotune.json"
    empty_csv.write_text("")
    empty_json.write_text("")
    with pytest.raises(DataError, match=r"shapes file '.*empty\.csv' is empty"):
        import_ncu(NCU, shapes=empty_csv)
    with pytest.raises(DataError, match=r"shapes file '.*' is a directory"):
        import_ncu(NCU, shapes=tmp_path)
    with pytest.raises(DataError, match=r"ncu CSV '.*' is a directory"):
        read_ncu_csv(tmp_path)
    with pytest.raises(DataError, match=r"ncu CSV '.*empty\.csv' is empty"):
        read_ncu_csv(empty_csv)
    with pytest.raises(DataError, match=r"trace file '.*empty\.autotune\.json' is empty"):
        import_kineto(empty_json)
    with pytest.raises(DataError, match=r"autotune file '.*empty\.autotune\.json' is empty"):
        import_triton_autotune(empty_json, gpu="H100", family="gemm", key=["m", "n", "k"])
    with pytest.raises(DataError, match=r"profile file '.*empty\.csv' is empty"):
        read_profiles(empty_csv)
    # a header and no rows in the shapes table
    header_only = tmp_path / "shapes.csv"
    header_only.write_text("kernel,family,dtype,m,n,k\n")
    with pytest.raises(DataError, match="has a header but no rows"):
        import_ncu(NCU, shapes=header_only)
    # the CLI: one error line naming the file
    out = str(tmp_path / "o.csv")
    rc, _, err = _cli(capsys, "--from", "ncu", str(NCU), "--shapes", str(empty_csv), "--out", out)
    assert rc == 2 and "empty.csv' is empty" in err
    rc, _, err = _cli(capsys, "--from", "ncu", str(NCU), "--shapes", str(tmp_path), "--out", out)
    assert rc == 2 and "is a directory" in err
    rc, _, err = _cli(capsys, "--from", "ncu", str(tmp_path), "--shapes", str(SHAPES), "--out", out)
    assert rc == 2 and "is a directory" in err


def test_triton_cache_directory_is_searched(tmp_path, capsys):
    cache = tmp_path / "cache"
    (cache / "3f2a").mkdir(parents=True)
    shutil.copy(AUTOTUNE, cache / "3f2a" / AUTOTUNE.name)
    (cache / "3f2a" / "matmul_kernel.cubin").write_bytes(b"\x7fELF")  # other cache files are not read
    rows, _ = import_profiles("triton-autotune", cache / "3f2a", gpu="H100", family="gemm", key="m,n,k")
    assert len(rows) == 3 and set(rows["dataset"]) == {AUTOTUNE.name}
    rows, _ = import_profiles("triton-autotune", cache, gpu="H100", family="gemm", key="m,n,k")  # ~/.triton/cache
    assert len(rows) == 3
    (tmp_path / "nothing").mkdir()
    with pytest.raises(DataError, match=r"holds no \*\.autotune\.json file"):
        import_profiles("triton-autotune", tmp_path / "nothing", gpu="H100", family="gemm", key="m,n,k")
    with pytest.raises(DataError, match="is a directory"):  # the one-file function says which file to pass
        import_triton_autotune(cache, gpu="H100", family="gemm", key=["m", "n", "k"])
    rc, out, _ = _cli(
        capsys, "--from", "triton-autotune", str(cache / "3f2a"), *TRITON, "--out", str(tmp_path / "o.csv")
    )
    assert rc == 0 and "wrote 3 rows" in out


# --- 2. flags that do not apply, --set over the file's columns, unknown --set columns -------------------
def test_options_that_do_not_apply_are_refused(tmp_path, capsys):
    with pytest.raises(
        DataError,
        match=r"the family argument, the dtype argument, the key argument, the fixed "
        r"argument do not apply to 'kineto' files",
    ):
        import_profiles("kineto", KINETO, family="fused_moe", dtype="float16", key="m,n,k", fixed={"topk": 8})
    with pytest.raises(DataError, match=r"the key argument does not apply to 'ncu' files"):
        import_profiles("ncu", NCU, shapes=SHAPES, key=["m"])
    out = str(tmp_path / "o.csv")
    argv = ["--from", "kineto", str(KINETO), "--family", "fused_moe", "--dtype", "float16", "--key", "m,n,k"]
    rc, _, err = _cli(capsys, *argv, "--set", "m=1", "topk=8", "--out", out)
    assert rc == 2 and "--family, --dtype, --key, --set do not apply to 'kineto' files" in err
    assert not Path(out).exists()


def test_set_never_overrides_the_file(tmp_path, capsys):
    with pytest.raises(
        DataError,
        match=r"would override what matmul_kernel\.autotune\.json already gives: "
        r"k=8192 \(the file has 2048\)",
    ):
        import_profiles("triton-autotune", AUTOTUNE, gpu="H100", family="gemm", key="m,n,k", fixed={"k": 8192})
    with pytest.raises(DataError, match=r"already provides"):  # the one-file function too
        import_triton_autotune(AUTOTUNE, gpu="H100", family="gemm", key=["m", "n", "k"], fixed={"k": 8192.0})
    with pytest.raises(DataError, match=r"the family argument would override .* family=gemm"):
        import_profiles("ncu", NCU, shapes=SHAPES, family="gemm")  # the shapes table has a family column
    rc, _, err = _cli(
        capsys, "--from", "triton-autotune", str(AUTOTUNE), *TRITON, "--set", "k=8192", "--out", str(tmp_path / "o.csv")
    )
    assert rc == 2 and "--set would override" in err and "k=8192 (the file has 2048)" in err


def test_unknown_set_column_is_refused_with_the_valid_names(tmp_path, capsys):
    with pytest.raises(DataError, match=r"names 'topkk', not a canonical profile column .*did you mean 'topk'") as exc:
        import_profiles("triton-autotune", AUTOTUNE, gpu="H100", family="gemm", key="m,n,k", fixed={"topkk": 8})
    assert "num_experts" in str(exc.value)
    with pytest.raises(DataError, match="'gpu', which has its own argument"):
        import_profiles("triton-autotune", AUTOTUNE, gpu="H100", family="gemm", key="m,n,k", fixed={"gpu": "A100"})
    assert "topk" in FIXED_COLUMNS and "latency_us" not in FIXED_COLUMNS and "gpu" not in FIXED_COLUMNS
    rc, _, err = _cli(
        capsys, "--from", "triton-autotune", str(AUTOTUNE), *TRITON, "--set", "foo=1", "--out", str(tmp_path / "o.csv")
    )
    assert rc == 2 and "--set names 'foo'" in err and "topk" in err


def test_set_column_the_family_does_not_read_is_refused(tmp_path, capsys):
    # topk is a canonical column, but GEMM rows never read it: it would vanish from the output
    with pytest.raises(DataError, match=r"sets \['topk'\], which no imported row's family reads .*gemm: m, n, k"):
        import_profiles("triton-autotune", AUTOTUNE, gpu="H100", family="gemm", key="m,n,k", fixed={"topk": 8})
    rc, _, err = _cli(
        capsys, "--from", "triton-autotune", str(AUTOTUNE), *TRITON, "--set", "topk=8", "--out", str(tmp_path / "o.csv")
    )
    assert rc == 2 and "--set sets ['topk']" in err and not (tmp_path / "o.csv").exists()
    # a column the rows' family reads goes through (hand-made one-row canonical file)
    one = tmp_path / "one.csv"
    one.write_text("gpu,family,dtype,m,n,k,latency_us\nH100,gemm,bfloat16,4096,4096,4096,300\n")
    rows, _ = import_profiles(
        "canonical", [one], fixed={"timing": "cuda_event", "block_m": 128, "block_n": 128, "block_k": 64}
    )
    assert set(rows["timing"]) == {"cuda_event"} and set(rows["block_m"]) == {128}


# --- 3. the same launch in several files: one row, the median --------------------------------------------
def test_repeated_launches_across_files_are_merged(tmp_path, capsys):
    copy = tmp_path / "trace2.json"
    trace = json.loads(KINETO.read_text())
    for ev in trace["traceEvents"]:  # the second run's kernels took 10 us longer (hand-made)
        if ev.get("cat") == "kernel":
            ev["dur"] = ev["dur"] + 10
    copy.write_text(json.dumps(trace))
    with pytest.warns(UserWarning, match=r"merged 10 launches measured in more than one file into 4 rows"):
        rows, _ = import_profiles("kineto", [KINETO, copy])
    assert len(rows) == 4
    mm = rows[(rows["family"] == "gemm") & (rows["m"] == 4096)].iloc[0]
    # 412.5 and 410.0 in the first trace, 422.5 and 420.0 in the second: the median of the four
    assert mm["latency_us"] == pytest.approx(416.25) and mm["n_raw_rows"] == 4
    assert mm["dataset"] == "kineto_h100_gemm.json+trace2.json"
    # the same for the other importers (two files of the same name in different directories count as two)
    (tmp_path / "a").mkdir()
    shutil.copy(AUTOTUNE, tmp_path / "a" / AUTOTUNE.name)
    with pytest.warns(UserWarning, match="merged 6 launches"):
        rows, _ = import_profiles(
            "triton-autotune", [AUTOTUNE, tmp_path / "a" / AUTOTUNE.name], gpu="H100", family="gemm", key="m,n,k"
        )
    assert len(rows) == 3 and set(rows["n_raw_rows"]) == {2.0}
    with pytest.warns(UserWarning, match="merged 4 launches"):
        rows, _ = import_profiles("ncu", [NCU, NCU], shapes=SHAPES)
    assert len(rows) == 2
    rc, out, err = _cli(capsys, "--from", "kineto", str(KINETO), str(KINETO), "--out", str(tmp_path / "o.csv"))
    assert rc == 0 and "wrote 4 rows" in out and "note: merged 10 launches" in err


# --- 4. unknown GPUs ------------------------------------------------------------------------------------
def _trace_on(tmp_path: Path, name: str) -> Path:
    trace = json.loads(KINETO.read_text())
    trace["deviceProperties"][0]["name"] = name
    p = tmp_path / "pcie.json"
    p.write_text(json.dumps(trace))
    return p


def test_unknown_gpu_is_one_error_with_a_product_match_and_the_spec_file(tmp_path, capsys):
    p = _trace_on(tmp_path, "NVIDIA H100 PCIe")
    with pytest.raises(
        DataError,
        match=r"unknown GPU 'NVIDIA H100 PCIe' \(5 rows from pcie\.json\); "
        r"did you mean \['H100-SXM'\]",
    ) as exc:
        import_profiles("kineto", p)
    msg = str(exc.value)
    assert msg.count("unknown GPU") == 1 and msg.count("'V100-PCIe'") == 1  # the catalog once
    assert "spec file" in msg and "pass gpu=" in msg
    rc, _, err = _cli(capsys, "--from", "kineto", str(p), "--out", str(tmp_path / "o.csv"))
    assert rc == 2 and "pass --gpu" in err and "gpu=" not in err and err.count("unknown GPU") == 1
    assert suggest_gpus("NVIDIA H100 PCIe")[0] == "H100-SXM"
    assert suggest_gpus("NVIDIA L40G")[:2] == ["L40", "L40S"]


def test_kernel_on_a_device_missing_from_device_properties(tmp_path, capsys):
    trace = json.loads(KINETO.read_text())
    trace["deviceProperties"][0]["id"] = 1  # the kernels ran on device 0
    p = tmp_path / "t.json"
    p.write_text(json.dumps(trace))
    with pytest.raises(
        DataError, match=r"has kernels on device 0, but its deviceProperties only describe device \[1\]"
    ):
        import_kineto(p)
    rc, _, err = _cli(capsys, "--from", "kineto", str(p), "--out", str(tmp_path / "o.csv"))
    assert rc == 2 and "pass --gpu NAME_OR_SPEC" in err and "no deviceProperties" not in err


# --- 5. the Python API: one path, a key string, a spec-file GPU ----------------------------------------
def test_python_api_takes_one_path_a_key_string_and_a_spec_file():
    rows, _ = import_profiles("kineto", str(KINETO))
    assert len(rows) == 4
    rows, _ = import_profiles("triton-autotune", str(AUTOTUNE), gpu="H100", family="gemm", key="m,n,k")
    assert (rows[["m", "n", "k"]] == [512, 1024, 2048]).all().all()
    spec = Path(__file__).resolve().parents[2] / "datasets" / "example_gpu_spec.toml"  # defines RTX-4090
    with pytest.warns(UserWarning, match="profiled on 'NVIDIA H100 80GB HBM3'; its rows are labelled 'RTX-4090'"):
        rows, _ = import_profiles("kineto", KINETO, gpu=str(spec))
    assert set(rows["gpu"]) == {"RTX-4090"}
    with pytest.raises(DataError, match=r"unknown GPU 'H100 PCIe' \(the gpu argument\); did you mean \['H100-SXM'\]"):
        import_profiles("kineto", KINETO, gpu="H100 PCIe")
    with pytest.raises(DataError, match="a path or a list of paths"):
        import_profiles("kineto", 3)  # type: ignore[arg-type]


# --- 6. ncu CSVs with a byte-order mark or another delimiter ----------------------------------------------
def test_ncu_bom_and_semicolons(tmp_path):
    text = NCU.read_text()
    header_on = text[text.index('"ID"') :]
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + header_on.encode())  # Excel / PowerShell write a UTF-8 BOM
    launches, units = read_ncu_csv(bom)
    assert len(launches) == 3 and units["gpu__time_duration.sum"] == "nsecond"
    semi = tmp_path / "semi.csv"
    semi.write_text(text.replace('","', '";"'))
    rows, _ = import_ncu(semi, shapes=SHAPES)
    assert sorted(rows["latency_us"]) == pytest.approx([612.352, 1234.88])
    shapes = tmp_path / "shapes.csv"
    shapes.write_text(SHAPES.read_text().replace(",", ";"))
    rows, _ = import_ncu(NCU, shapes=shapes)
    assert sorted(rows["m"]) == [4096, 8192]
    comma = tmp_path / "comma.csv"  # a spreadsheet re-save with decimal commas: refused, never guessed
    comma.write_text(text.replace('","', '";"').replace('"73.73"', '"73,73"'))
    with pytest.raises(DataError, match=r"semicolon-separated .* decimal comma \('73,73'"):
        read_ncu_csv(comma)
    # a comma that is no thousands separator: a first group of four digits, grouping by points (any delimiter)
    for cell in ("1237,284", "1.237,284"):
        bad = tmp_path / "bad.csv"
        bad.write_text(text.replace('"73.73"', f'"{cell}"'))
        with pytest.raises(DataError, match=rf"comma-separated and writes numbers with a decimal comma \('{cell}'"):
            read_ncu_csv(bad)
    # a file cut in the middle of its last row: refused with the line, not a launch silently dropped
    cut = tmp_path / "cut.csv"
    cut.write_text(text.rstrip("\n").rsplit(",", 3)[0] + "\n")
    with pytest.raises(DataError, match=r"line \d+ has another number of cells than the header .* truncated"):
        read_ncu_csv(cut)


def test_ncu_gpu_that_disagrees_with_the_profiled_device_is_noted():
    """The hand-written ncu report was profiled on an A100: labelling it L40S is allowed, and said."""
    import warnings

    with pytest.warns(UserWarning, match=r"was profiled on 'NVIDIA A100-SXM4-80GB'; its rows are labelled 'L40S'"):
        rows, _ = import_ncu(NCU, shapes=SHAPES, gpu="L40S")
    assert set(rows["gpu"]) == {"L40S"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import_ncu(NCU, shapes=SHAPES, gpu="A100")  # the same GPU by its catalog name: nothing to say


# --- UX audit: bad kernel patterns, only the missing flags asked for, one row said as one -----------
def test_ncu_bad_kernel_pattern_names_its_row_without_a_traceback(tmp_path, capsys):
    """A shapes `kernel` cell that is no regular expression (hand-made: '[unclosed') is an error naming the
    file, the row and the pattern: pandas' pyarrow strings would hand it to RE2 and end in ArrowInvalid."""
    shapes = tmp_path / "shapes.csv"
    shapes.write_text(
        "kernel,family,dtype,m,n,k\ns16816gemm,gemm,bfloat16,8192,4096,4096\n[unclosed,gemm,bfloat16,1,2,3\n"
    )
    with pytest.raises(DataError, match=r"row 2: kernel pattern '\[unclosed' is not a regular expression") as exc:
        import_ncu(NCU, shapes=shapes)
    assert "shapes.csv" in exc.value.message and exc.value.hint
    rc, _, err = _cli(capsys, "--from", "ncu", str(NCU), "--shapes", str(shapes), "--out", str(tmp_path / "x.csv"))
    assert rc == 2 and "'[unclosed'" in err and "ArrowInvalid" not in err and not (tmp_path / "x.csv").exists()
    # Python's re decides what matches (RE2 lacks look-arounds): a lookahead pattern works
    shapes.write_text("kernel,family,dtype,m,n,k\ns16816gemm(?=_bf16),gemm,bfloat16,8192,4096,4096\n")
    rows, _ = import_ncu(NCU, shapes=shapes)
    assert len(rows) >= 1 and set(rows["m"]) == {8192}


def test_triton_autotune_asks_only_for_what_is_missing(tmp_path, capsys):
    out = str(tmp_path / "x.csv")
    rc, _, err = _cli(capsys, "--from", "triton-autotune", str(AUTOTUNE), "--gpu", "H100", "--out", out)
    assert rc == 2 and "does not name the kernel family" in err and "--family" in err
    assert "--gpu" not in err and "neither" not in err
    rc, _, err = _cli(capsys, "--from", "triton-autotune", str(AUTOTUNE), "--family", "gemm", "--out", out)
    assert rc == 2 and "does not name the GPU" in err and "--gpu" in err and "--family" not in err
    rc, _, err = _cli(capsys, "--from", "triton-autotune", str(AUTOTUNE), "--out", out)
    assert rc == 2 and "names neither the GPU nor the kernel family" in err and "--gpu" in err and "--family" in err


def test_one_row_is_said_as_one(tmp_path, capsys):
    src = tmp_path / "one.csv"  # hand-made canonical row (not a measurement)
    src.write_text("gpu,family,dtype,m,n,k,latency_us\nH100,gemm,bfloat16,4096,4096,4096,300.0\n")
    rc, out, _ = _cli(capsys, "--from", "canonical", str(src), "--out", str(tmp_path / "x.csv"))
    assert rc == 0 and "wrote 1 row to" in out and "1 rows" not in out
    assert main(["profiles", "check", str(tmp_path / "x.csv")]) == 0
    assert "1 valid row\n" in capsys.readouterr().out


def test_check_of_a_profiler_file_points_at_the_import_command(capsys):
    """`profiles check trace.json`: the fix is the CLI's import command, not the Python function."""
    assert main(["profiles", "check", str(KINETO)]) == 2
    err = capsys.readouterr().err
    assert "pipeweave profiles import --from" in err and "pipeweave.profiles.import_profiles" not in err


def test_canonical_readers_name_a_wrong_type_or_column(tmp_path):
    """Hand-written files and values: read_profiles(5) and write_profiles([...]) raised TypeError / AttributeError
    from inside, file_record of a missing file FileNotFoundError, and a missing column pointed Python users at
    `pipeweave profiles -h`."""
    from pipeweave.profiles import file_record, write_profiles

    for bad in (5, [5], None):
        with pytest.raises(DataError, match="read_profiles takes a path or a list of paths"):
            read_profiles(bad)
    with pytest.raises(DataError, match="write_profiles writes a DataFrame of profile rows, got list"):
        write_profiles([{"family": "gemm"}], tmp_path / "out.csv")
    with pytest.raises(DataError, match=r"cannot read profile file '.*none\.csv'"):
        file_record(tmp_path / "none.csv", 3)
    ms = tmp_path / "ms.csv"
    ms.write_text("family,gpu,dtype,m,n,k,latency_ms\ngemm,H100,bfloat16,4096,4096,4096,0.2\n")  # hand-written
    with pytest.raises(DataError) as e:
        read_profiles(ms)
    msg = str(e.value)
    assert (
        "has no column ['latency_us'] (it has ['latency_ms']: the latency column is latency_us, in microseconds)" in msg
    )
    assert "pipeweave.frontend.launch_columns(family)" in msg and " -h" not in msg
    assert not (tmp_path / "out.csv").exists()
