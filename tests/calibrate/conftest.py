"""Fixtures shared by the calibration tests. Launch rows are hand-made and latencies made up (not data)."""

from __future__ import annotations

import pandas as pd
import pytest


@pytest.fixture(scope="module")
def base_model():
    """A small model fitted on 12 hand-made bf16 GEMMs with made-up latencies on the A100 and the H100."""
    from pipeweave.model import PipeweaveRegressor

    sizes = [256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0] * 2
    rows = pd.DataFrame({"source": "user", "family": "gemm", "dtype": "bfloat16", "m": sizes, "n": sizes, "k": sizes})
    rows["gpu"] = ["A100"] * 6 + ["H100"] * 6
    rows["latency_us"] = [9.0, 14.0, 40.0, 230.0, 1700.0, 13000.0, 7.0, 10.0, 22.0, 110.0, 800.0, 6000.0]
    return PipeweaveRegressor(n_estimators=5).fit(rows)


@pytest.fixture(scope="session")
def gemm_launches():
    """Make hand-made square bf16 GEMM launches: ``gemm_launches(sizes, gpu="H100")`` -> rows with m = n = k = size."""
    import numpy as np

    def make(sizes, gpu: str = "H100") -> pd.DataFrame:
        s = np.asarray(sizes, dtype=float)
        return pd.DataFrame(
            {"source": "user", "gpu": gpu, "family": "gemm", "dtype": "bfloat16", "m": s, "n": s, "k": s}
        )

    return make
