"""Shared fixtures: the real measurement directory (skips with a reason when it is absent)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def data_dir():
    from pipeweave import DataError
    from pipeweave._paths import resolve_data_dir

    try:
        return resolve_data_dir()
    except DataError as exc:  # pragma: no cover - CI always has ../shared/datasets
        pytest.skip(f"shared measurements not available: {exc}")


@pytest.fixture(scope="session")
def small_frame(data_dir):
    """~3,000 real rows (gemm bf16 and moe_w13 on a few GPUs), featurized."""
    from pipeweave.model import ensure_features
    from pipeweave.sources import load_profiles

    df = load_profiles(data_dir, families=["gemm", "moe_w13"], dtypes=["bfloat16"])
    df = df[df["gpu"].isin(["A100-SXM", "H100-SXM", "L40S", "RTX-A6000", "H20"])]
    df = df.groupby(["gpu", "family"], observed=True).sample(n=300, random_state=0).reset_index(drop=True)
    return ensure_features(df)
