"""Tests of pipeweave._frame (string-column helpers); tiny hand-made inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave._frame import distinct_rows, str_codes, str_map, str_startswith, str_values


@pytest.mark.parametrize("dtype", [object, "category", "string"])
def test_helpers_agree_with_per_element_python(dtype):
    s = pd.Series(["bfloat16", "fp8", "bfloat16", "fp8_block", "float16"], dtype=dtype)
    plain = [str(v) for v in s.tolist()]
    assert str_values(s).tolist() == plain
    codes, names = str_codes(s)
    assert [names[c] for c in codes] == plain
    mapping = {"bfloat16": 2, "fp8": 1}
    got = str_map(s, mapping, default=-1)
    assert got.tolist() == [mapping.get(v, -1) for v in plain]
    assert str_startswith(s, "fp8").tolist() == [v.startswith("fp8") for v in plain]


def test_missing_values_become_the_string_nan():
    s = pd.Series(["a", None, "a"], dtype=object)
    assert str_values(s).tolist() == ["a", "nan", "a"]
    assert np.isnan(str_map(s, {"a": 1.0}).astype(float)[1])


def test_empty_input():
    s = pd.Series([], dtype=object)
    assert len(str_values(s)) == 0 and len(str_map(s, {})) == 0 and len(str_startswith(s, "x")) == 0


def test_distinct_rows_groups_like_drop_duplicates():
    frame = pd.DataFrame(
        {
            "g": ["a", "b", "a", "a", None, None],
            "x": [1.0, 1.0, 1.0, 2.0, np.nan, np.nan],
            "y": pd.Categorical(["p", "p", "p", "p", "q", "q"]),
        }
    )
    codes, first = distinct_rows(frame)
    assert codes.tolist() == [0, 1, 0, 2, 3, 3]
    assert first.tolist() == [0, 1, 3, 4]
    expected = frame.drop_duplicates()
    pd.testing.assert_frame_equal(frame.iloc[first], expected)


def test_distinct_rows_with_more_value_combinations_than_int64_holds():
    # hand-made input: 9 columns of ~1,000 distinct values each (1e27 combinations > 2**63), so the
    # mixed-radix key must be compacted on the way; the grouping must still equal drop_duplicates
    rng = np.random.default_rng(0)
    base = pd.DataFrame({f"c{i}": rng.integers(0, 1000, 3000) for i in range(9)})
    frame = pd.concat([base, base.iloc[::7], base.iloc[::3]], ignore_index=True)  # known duplicates
    codes, first = distinct_rows(frame)
    pd.testing.assert_frame_equal(frame.iloc[first], frame.drop_duplicates())
    # rows share a code exactly when they are equal
    again = frame.iloc[first].reset_index(drop=True).iloc[codes].reset_index(drop=True)
    pd.testing.assert_frame_equal(again, frame)


def test_whole_numbers_as_int_only_converts_whole_float_columns():
    """Hand-made columns: whole floats (with a blank) become Int64; fractions, inf and text stay as they are."""
    import numpy as np
    import pandas as pd

    from pipeweave._frame import whole_numbers_as_int

    df = pd.DataFrame(
        {"m": [4096.0, np.nan, 16.0], "lat": [1.5, 2.0, 3.0], "big": [np.inf, 1.0, 2.0], "name": ["a", "b", "c"]}
    )
    out = whole_numbers_as_int(df)
    assert str(out["m"].dtype) == "Int64" and out["m"].isna().tolist() == [False, True, False]
    assert out["lat"].dtype == float and out["big"].dtype == float and out["name"].tolist() == ["a", "b", "c"]
    assert df["m"].dtype == float  # the input is not changed
    assert out.to_csv(index=False).splitlines()[1].startswith("4096,")
