"""Fixtures of the sources tests: the real data directory (loaded once) and hand-made data dirs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from pipeweave import DataError
from pipeweave._paths import resolve_data_dir


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The shared measurement directory; the test is skipped when it is not on this machine."""
    try:
        return resolve_data_dir()
    except DataError as exc:
        pytest.skip(f"real measurements not available ({exc}); set PIPEWEAVE_DATA to run these tests")


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private parse cache for the whole session ($PIPEWEAVE_CACHE), so tests never touch ~/.cache."""
    path = tmp_path_factory.mktemp("pipeweave_cache")
    old = os.environ.get("PIPEWEAVE_CACHE")
    os.environ["PIPEWEAVE_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("PIPEWEAVE_CACHE", None)
    else:
        os.environ["PIPEWEAVE_CACHE"] = old


@pytest.fixture(scope="session")
def real_profiles(real_data_dir: Path, session_cache: Path):
    """(table, report, seconds) of one cold load of all real measurements (writes the session cache)."""
    import time

    from pipeweave.sources import load_profiles

    t0 = time.perf_counter()
    df, rep = load_profiles(real_data_dir, report=True)
    return df, rep, time.perf_counter() - t0


# ----------------------------------------------------------------------------- hand-made data
@pytest.fixture
def make_data(tmp_path: Path) -> Callable[[dict[str, pd.DataFrame]], Path]:
    """Write HAND-MADE tables (relative path -> DataFrame; .parquet or .csv) into a fresh data dir."""

    def make(files: dict[str, pd.DataFrame]) -> Path:
        root = tmp_path / "data"
        root.mkdir(exist_ok=True)
        for rel, df in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if rel.endswith(".parquet"):
                df.to_parquet(path, index=False)
            else:
                df.to_csv(path, index=False)
        return root

    return make
