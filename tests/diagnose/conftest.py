"""Fixtures of the diagnose tests: the real pipeweave moe_w13 profiles (sweeps + default-config rows)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def moe_profiles(data_dir):
    from pipeweave.sources import load_profiles

    return load_profiles(data_dir, sources="pipeweave", families="moe_w13")


@pytest.fixture(scope="session")
def dse_frames(moe_profiles):
    from pipeweave.diagnose import split_dse_profiles

    return split_dse_profiles(moe_profiles)


@pytest.fixture(scope="session")
def shipped_models():
    """The shipped diagnose models (skip when they have not been built)."""
    from pipeweave import PipeweaveError
    from pipeweave.diagnose import DiagnoseModels

    try:
        return DiagnoseModels.load(general=False)
    except PipeweaveError as exc:  # pragma: no cover - the repository ships them
        pytest.skip(f"diagnose models not built: {exc}")
