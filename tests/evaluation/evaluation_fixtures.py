"""Helpers of the evaluation tests: a small synthetic profile table (hand-made, not measured data)
and dummy methods. A module of its own (not conftest.py): the dummy methods are pickled into joblib
worker processes by reference, and ``conftest`` names a different module there when several test
folders are collected (every folder has a conftest.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

GPUS = {"A100": "ampere", "L40S": "ada", "H100": "hopper", "H200": "hopper", "B200": "blackwell"}


def make_profiles(n_shapes: int = 20, seed: int = 0) -> pd.DataFrame:
    """Synthetic table: two families (one with two sources), every shape measured on every GPU."""
    rng = np.random.default_rng(seed)
    rows = []
    for family, source in [("gemm_bf16", "aic"), ("moe_bf16", "aic"), ("moe_bf16", "pw")]:
        for s in range(n_shapes):
            m, n = 2.0 ** rng.integers(4, 12, 2)
            k = 2.0 ** (9 + s % 6)  # 512 .. 16384: some deep-k rows
            for gpu, gen in GPUS.items():
                lat = m * n * k / 2e8 * rng.uniform(0.8, 1.25) + 2.0
                rows.append(
                    {
                        "family": family,
                        "source": source,
                        "gpu": gpu,
                        "generation": gen,
                        "m": m,
                        "n": n,
                        "k": k if family.startswith("gemm") else np.nan,
                        "num_tokens": np.nan if family.startswith("gemm") else m,
                        "hidden_size": np.nan if family.startswith("gemm") else n,
                        "latency_us": lat,
                    }
                )
    return pd.DataFrame(rows)


class ConstMethod:
    """Predicts the training median for every row."""

    def fit(self, df: pd.DataFrame) -> ConstMethod:
        self.value_ = float(df["latency_us"].median())
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        return np.full(len(df), self.value_)


class FlopMethod:
    """Analytical stand-in: no-op fit, prediction from the shape."""

    def fit(self, df: pd.DataFrame) -> FlopMethod:
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        k = df["k"].fillna(1024.0)
        return (df["m"] * df["n"] * k / 2e8 + 2.0).to_numpy()
