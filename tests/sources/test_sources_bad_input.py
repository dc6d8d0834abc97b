"""Bad input: every table here is HAND-MADE (a few rows in tmp_path laid out like a data dir)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError, UnknownFamilyError
from pipeweave.sources import PROFILE_COLUMNS, load_profiles, validate_profiles

pytestmark = pytest.mark.filterwarnings("ignore:.*no file under:UserWarning")


GEMM_PATH = "aiconfigurator/data/h100_sxm/gemm/sglang/0.5.10/gemm_perf.parquet"
MOE_W13_PATH = "pipeweave/moe_w13/H100.csv"


def _gemm_rows(device: str = "NVIDIA H100 80GB HBM3") -> pd.DataFrame:
    """Hand-made AIConfigurator-style gemm_perf rows (latency in ms)."""
    return pd.DataFrame(
        {
            "framework": "SGLang",
            "version": "0.5.10",
            "device": device,
            "op_name": "gemm",
            "kernel_source": "sglang",
            "gemm_dtype": ["bfloat16", "bfloat16", "fp8", "nvfp4"],
            "m": [1, 2, 1, 1],
            "n": [4096, 4096, 4096, 4096],
            "k": [4096, 4096, 4096, 4096],
            "latency": [0.010, 0.011, 0.007, 0.005],
        }
    )


def _moe_w13_rows(hardware: str = "NVIDIA H100") -> pd.DataFrame:
    """Hand-made PipeWeave-style moe_w13 rows (avg_duration in us)."""
    return pd.DataFrame(
        {
            "hardware": hardware,
            "weight_type": "w13",
            "M": [2, 4, 8],
            "E": 8,
            "topk": 2,
            "H": 4096,
            "N": 14336,
            "avg_duration": [50.0, 60.0, 70.0],
        }
    )


@pytest.fixture
def gemm_rows() -> pd.DataFrame:
    return _gemm_rows()


@pytest.fixture
def moe_w13_rows() -> pd.DataFrame:
    return _moe_w13_rows()


def _drops(rep) -> dict[str, int]:
    return dict(zip(rep.drops["reason"], rep.drops["rows"]))


def test_handmade_loads_with_units(make_data, gemm_rows, moe_w13_rows):
    data = make_data({GEMM_PATH: gemm_rows, MOE_W13_PATH: moe_w13_rows})
    df, rep = load_profiles(data, report=True, cache=False)
    assert list(df.columns) == PROFILE_COLUMNS
    g = df[df["dataset"] == "gemm_perf"].sort_values(["dtype", "m"])
    assert g["latency_us"].tolist() == pytest.approx([10.0, 11.0, 7.0])  # ms -> us
    assert set(g["gpu"]) == {"H100-SXM"}
    m = df[df["dataset"] == "moe_w13"]
    assert m["latency_us"].tolist() == pytest.approx([50.0, 60.0, 70.0])  # us kept
    assert _drops(rep) == {"gemm_dtype=nvfp4 not loaded": 1}
    assert any("no file under" in msg for msg in rep.messages)  # the other datasets are absent: noted


def test_missing_data_dir(tmp_path):
    with pytest.raises(DataError, match="not a directory") as exc:
        load_profiles(tmp_path / "nope", cache=False)
    assert "PIPEWEAVE_DATA" in str(exc.value)


def test_empty_data_dir(tmp_path):
    with pytest.raises(DataError, match="no measurements found"):
        load_profiles(tmp_path, cache=False)


def test_missing_column(make_data, moe_w13_rows):
    data = make_data({MOE_W13_PATH: moe_w13_rows.drop(columns=["avg_duration"])})
    with pytest.raises(DataError) as exc:
        load_profiles(data, cache=False)
    msg = str(exc.value)
    assert "H100.csv" in msg and "['avg_duration']" in msg and "columns found" in msg and "'hardware'" in msg


def test_renamed_column(make_data, gemm_rows):
    data = make_data({GEMM_PATH: gemm_rows.rename(columns={"latency": "latency_ms"})})
    with pytest.raises(DataError) as exc:
        load_profiles(data, cache=False)
    msg = str(exc.value)
    assert "gemm_perf.parquet" in msg and "['latency']" in msg and "latency_ms" in msg


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (np.nan, "latency missing or non-numeric"),
        ("fast", "latency missing or non-numeric"),
        (-3.0, "latency is negative"),
        (0.0, "latency is zero"),
        (np.inf, "latency not finite"),
    ],
)
def test_bad_latency_dropped_and_counted(make_data, moe_w13_rows, value, reason):
    rows = moe_w13_rows.astype({"avg_duration": object})
    rows.loc[1, "avg_duration"] = value
    data = make_data({MOE_W13_PATH: rows})
    df, rep = load_profiles(data, report=True, cache=False)
    assert len(df) == 2 and sorted(df["num_tokens"]) == [2.0, 8.0]
    assert _drops(rep) == {reason: 1}
    assert rep.drops.loc[0, "source"] == "pipeweave" and rep.drops.loc[0, "dataset"] == "moe_w13"


def test_bad_shape_dropped(make_data, moe_w13_rows):
    rows = moe_w13_rows.astype({"M": object})
    rows.loc[0, "M"] = "many"
    rows.loc[2, "M"] = 0
    data = make_data({MOE_W13_PATH: rows})
    df, rep = load_profiles(data, report=True, cache=False)
    assert df["num_tokens"].tolist() == [4.0]
    assert _drops(rep) == {"missing or non-numeric num_tokens": 1, "num_tokens <= 0": 1}


def test_duplicate_keys(make_data, moe_w13_rows):
    rows = pd.concat(
        [
            moe_w13_rows,
            moe_w13_rows.iloc[[0]],  # exact duplicate of row 0
            moe_w13_rows.iloc[[1, 1]].assign(avg_duration=[66.0, 90.0]),
        ],  # same key, other latencies
        ignore_index=True,
    )
    data = make_data({MOE_W13_PATH: rows})
    df, rep = load_profiles(data, report=True, cache=False)
    assert len(df) == 3
    by_m = df.set_index("num_tokens")
    assert by_m.loc[2.0, "latency_us"] == 50.0 and by_m.loc[2.0, "n_raw_rows"] == 1
    assert by_m.loc[4.0, "latency_us"] == 66.0  # median of 60, 66, 90
    assert by_m.loc[4.0, "n_raw_rows"] == 3
    assert _drops(rep) == {"exact duplicate row": 1, "duplicate key aggregated (median latency)": 2}


def test_unknown_gpu_rows_dropped_and_reported(make_data, moe_w13_rows):
    data = make_data(
        {MOE_W13_PATH: moe_w13_rows, "pipeweave/moe_w13/Foo.csv": _moe_w13_rows(hardware="NVIDIA Foo 9000")}
    )
    with pytest.warns(UserWarning, match="'NVIDIA Foo 9000' is not in the GPU catalog"):
        df, rep = load_profiles(data, report=True, cache=False)
    assert set(df["gpu"]) == {"H100-SXM"} and len(df) == 3
    assert _drops(rep) == {"unknown GPU 'NVIDIA Foo 9000'": 3}
    assert any("Foo.csv" in m and "datasets/gpus.toml" in m for m in rep.messages)
    assert "NVIDIA Foo 9000" in rep.to_text()


def test_unknown_filters(make_data, moe_w13_rows):
    data = make_data({MOE_W13_PATH: moe_w13_rows})
    with pytest.raises(UnknownFamilyError, match="conv2d"):
        load_profiles(data, families="conv2d", cache=False)
    with pytest.raises(DataError, match="int3"):
        load_profiles(data, dtypes="int3", cache=False)
    with pytest.raises(DataError, match="nosuchsource"):
        load_profiles(data, sources="nosuchsource", cache=False)


def test_cache_hit_and_corrupt_cache_rebuilt(make_data, gemm_rows, moe_w13_rows, tmp_path, monkeypatch):
    monkeypatch.setenv("PIPEWEAVE_CACHE", str(tmp_path / "cache"))
    data = make_data({GEMM_PATH: gemm_rows, MOE_W13_PATH: moe_w13_rows})
    df1, rep1 = load_profiles(data, report=True)
    df2, rep2 = load_profiles(data, report=True)
    assert (rep1.cache, rep2.cache) == ("miss", "hit")
    pd.testing.assert_frame_equal(df1, df2)
    pd.testing.assert_frame_equal(rep1.drops, rep2.drops)
    cache_file = tmp_path / "cache" / rep1.cache_path.split("/")[-1]
    cache_file.write_bytes(b"this is not parquet")
    df3, rep3 = load_profiles(data, report=True)
    assert rep3.cache == "miss"
    pd.testing.assert_frame_equal(df1, df3)
    assert load_profiles(data, report=True)[1].cache == "hit"
    # a changed source file changes the fingerprint: rebuilt, new content
    moe = moe_w13_rows.assign(avg_duration=[1.0, 2.0, 3.0])
    make_data({MOE_W13_PATH: moe})
    df4, rep4 = load_profiles(data, report=True)
    assert rep4.cache == "miss"
    assert sorted(df4.loc[df4["dataset"] == "moe_w13", "latency_us"]) == [1.0, 2.0, 3.0]


# ----------------------------------------------------------------------------- validate_profiles (user tables)
def _user_gemm() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "family": "gemm",
            "gpu": ["H100", "NVIDIA B200"],
            "dtype": "bfloat16",
            "m": [128, 256],
            "n": 4096,
            "k": 4096,
            "my_id": ["a", "b"],
        }
    )


def test_validate_user_table_canonicalises():
    out = validate_profiles(_user_gemm())
    assert list(out.columns) == [*PROFILE_COLUMNS, "my_id"]
    assert out["gpu"].tolist() == ["H100-SXM", "B200"]
    assert out["generation"].tolist() == ["hopper", "blackwell"]
    assert out["latency_us"].isna().all()  # optional for prediction input
    moe = pd.DataFrame(
        {
            "family": ["moe_w13"],
            "gpu": ["A100"],
            "dtype": ["bfloat16"],
            "num_tokens": [64],
            "hidden_size": [4096],
            "inter_size": [1536],
            "topk": [8],
            "num_experts": [64],
        }
    )
    out = validate_profiles(moe)
    assert (out.loc[0, "moe_tp_size"], out.loc[0, "moe_ep_size"], out.loc[0, "distribution"]) == (1.0, 1.0, "balanced")


def test_validate_errors_name_rows_and_values():
    with pytest.raises(DataError, match=r"need column\(s\) \['k'\]"):
        validate_profiles(_user_gemm().drop(columns="k"))
    bad = _user_gemm()
    bad.loc[1, "m"] = -5
    with pytest.raises(DataError, match=r"'m' must be > 0; got row\(s\) 1 \(-5\)"):
        validate_profiles(bad)
    bad = _user_gemm().assign(latency_us=[10.0, 0.0])
    with pytest.raises(DataError, match=r"latency_us must be a finite number > 0.*row\(s\) 1 \(0\.0\)"):
        validate_profiles(bad)
    with pytest.raises(DataError, match="latency_us is missing"):
        validate_profiles(_user_gemm().assign(latency_us=[1.0, np.nan]), require_latency=True)
    with pytest.raises(DataError, match="'Z100' in row"):
        validate_profiles(_user_gemm().assign(gpu=["H100", "Z100"]))
    with pytest.raises(UnknownFamilyError, match="conv"):
        validate_profiles(_user_gemm().assign(family="conv"))
    with pytest.raises(DataError, match="unknown dtype.*int4"):
        validate_profiles(_user_gemm().assign(dtype="int4"))
    with pytest.raises(DataError, match=r"lacks column\(s\) \['gpu'\]"):
        validate_profiles(_user_gemm().drop(columns="gpu"))
    with pytest.raises(DataError, match="no rows"):
        validate_profiles(_user_gemm().iloc[:0])
    with pytest.raises(DataError, match="'block_m' is not a number"):
        validate_profiles(_user_gemm().assign(block_m=["x", 64]))


@pytest.mark.parametrize("value", [3, 3.5, object()])
def test_a_filter_that_is_no_name_is_refused_by_type(value):
    """load_profiles(families=3) raised "'int' object is not iterable" from inside (no data is read)."""
    with pytest.raises(DataError, match=r"families must be a name or a list of names, got "):
        load_profiles(families=value)
    with pytest.raises(DataError, match=r"gpus must be a name or a list of names"):
        load_profiles(gpus=value)
