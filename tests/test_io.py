"""pipeweave._io helpers on HAND-MADE inputs."""

from __future__ import annotations

import json

from pipeweave._io import read_error_text


def _raised(fn) -> BaseException:  # noqa: ANN001
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("no exception")


def test_read_error_text_says_where_json_and_text_break() -> None:
    exc = _raised(lambda: json.loads('{"a": 1,\n "b": }'))
    assert read_error_text(exc) == "line 2, column 7: Expecting value"
    exc = _raised(lambda: b"ab\xffc".decode("utf-8"))
    assert read_error_text(exc) == "byte 0xff at position 2 is not UTF-8"
    exc = _raised(lambda: open("/nonexistent/dir/file.json"))  # noqa: SIM115
    assert read_error_text(exc) == "No such file or directory"
    assert read_error_text(ValueError("first line\nsecond")) == "first line"
    assert read_error_text(ValueError()) == "ValueError"
