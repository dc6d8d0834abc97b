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


def real_rows(data_dir, families: list[str], gpus: list[str], n: int, dtypes: list[str] | None = None):
    """``n`` seeded real rows per (GPU, family) of the shared data (at most what a GPU has), featurized."""
    from pipeweave.model import ensure_features
    from pipeweave.sources import load_profiles

    df = load_profiles(data_dir, families=families, dtypes=dtypes)
    df = df[df["gpu"].isin(gpus)]
    groups = df.groupby(["gpu", "family"], observed=True)
    df = groups.sample(n=min(n, int(groups.size().min())), random_state=0).reset_index(drop=True)
    return ensure_features(df)


@pytest.fixture(scope="session")
def load_real_rows(data_dir):
    """:func:`real_rows` bound to the shared data: ``load_real_rows(families, gpus, n, dtypes=None)``."""
    return lambda families, gpus, n, dtypes=None: real_rows(data_dir, families, gpus, n, dtypes)


@pytest.fixture(scope="session")
def small_frame(data_dir):
    """~3,000 real rows (gemm bf16 and moe_w13 on a few GPUs), featurized."""
    return real_rows(
        data_dir, ["gemm", "moe_w13"], ["A100-SXM", "H100-SXM", "L40S", "RTX-A6000", "H20"], 300, ["bfloat16"]
    )
