"""The vectorized shortcuts of the front-end give the same answers as the plain formulas.

Inputs are tiny hand-made launches (labelled as such), not measurements.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeweave.frontend._demand import envelope_us, schedule
from pipeweave.frontend._families import _async_mma, _cublas_multicast, _gemm_heuristic, _slice_spec, _tensor_rate
from pipeweave.frontend._featurize import spec_arrays
from pipeweave.frontend._kernels import tiled_matmul
from pipeweave.frontend._routing import routing_stats
from pipeweave.frontend._tileplan import gemm_candidates

# hand-made GEMM shapes: decode-like skinny, square, deep-K, odd sizes, on four architectures
_SHAPES = [
    (1, 4096, 4096),
    (16, 7168, 2048),
    (128, 128, 65536),
    (4096, 4096, 4096),
    (8192, 1024, 28672),
    (333, 777, 999),
    (64, 256, 128),
]
_GPUS = ["A100-SXM", "H100-SXM", "L40S", "B200"]


def _rows(dtype: str = "bfloat16") -> pd.DataFrame:
    gpus = _GPUS if dtype == "bfloat16" else _GPUS[1:]  # A100 has no fp8 tensor cores
    rows = [dict(gpu=g, family="gemm", dtype=dtype, m=m, n=n, k=k) for g in gpus for (m, n, k) in _SHAPES]
    return pd.DataFrame(rows)


def _brute_force_choice(df: pd.DataFrame) -> np.ndarray:
    """Evaluate all 28 candidates on every row with the full schedule; mask disallowed split-K."""
    spec = spec_arrays(df["gpu"])
    m, n, k = (df[c].to_numpy(float) for c in ("m", "n", "k"))
    ab = np.where(df["dtype"].str.startswith("fp8"), 1.0, 2.0)
    rate = _tensor_rate(df, spec)
    hc = _async_mma(spec)
    out = np.zeros((len(df), 7))
    for i in range(len(df)):
        cand = gemm_candidates(bool(hc[i]), bool(ab[i] < 2)).to_numpy()
        idx = np.full(len(cand), i)
        sp = _slice_spec(spec, idx)
        kd = tiled_matmul(
            "gemm",
            rows=m[idx],
            n=n[idx],
            k=k[idx],
            bm=cand[:, 0],
            bn=cand[:, 1],
            bk=cand[:, 2],
            group_m=cand[:, 3],
            warps=cand[:, 4],
            stages=cand[:, 5],
            a_bytes=ab[idx],
            b_bytes=ab[idx],
            out_bytes=2.0,
            tensor_rate=rate[idx],
            spec=sp,
            split_k=cand[:, 6],
            multicast=_cublas_multicast(m[idx], cand[:, 0], hc[idx]),
        )
        env = schedule(kd, sp)["t_env_us"]
        tiles_mn = np.ceil(m[i] / cand[:, 0]) * np.ceil(n[i] / cand[:, 1])
        ok = (cand[:, 6] == 1) | ((tiles_mn < sp["sm_count"]) & (k[i] / (cand[:, 2] * cand[:, 6]) >= 4))
        out[i] = cand[np.argmin(np.where(ok, env, np.inf))]
    return out


def test_envelope_only_schedule_matches_the_full_schedule():
    df = _rows()
    spec = spec_arrays(df["gpu"])
    n = len(df)
    kd = tiled_matmul(
        "gemm",
        rows=df["m"].to_numpy(float),
        n=df["n"].to_numpy(float),
        k=df["k"].to_numpy(float),
        bm=np.full(n, 128.0),
        bn=np.full(n, 128.0),
        bk=np.full(n, 64.0),
        group_m=np.full(n, 8.0),
        warps=np.full(n, 4.0),
        stages=np.full(n, 4.0),
        a_bytes=np.full(n, 2.0),
        b_bytes=np.full(n, 2.0),
        out_bytes=2.0,
        tensor_rate=_tensor_rate(df, spec),
        spec=spec,
    )
    np.testing.assert_array_equal(envelope_us(kd, spec), schedule(kd, spec)["t_env_us"])


def test_pruned_gemm_heuristic_picks_the_brute_force_tile():
    for dtype in ("bfloat16", "fp8"):
        df = _rows(dtype)
        spec = spec_arrays(df["gpu"])
        m, n, k = (df[c].to_numpy(float) for c in ("m", "n", "k"))
        ab = np.full(len(df), 2.0 if dtype == "bfloat16" else 1.0)
        # a chunk smaller than the row count exercises the chunk loop
        tiles, split = _gemm_heuristic(m, n, k, ab, _tensor_rate(df, spec), spec, chunk=5)
        got = np.column_stack([tiles.to_numpy(), split])
        np.testing.assert_array_equal(got, _brute_force_choice(df))


def test_routing_stats_of_repeated_cases_equal_the_single_case():
    # hand-made cases, each repeated in a shuffled order
    t = np.array([1.0, 7.0, 300.0, 4096.0, 7.0, 1.0, 300.0])
    k = np.array([8.0, 8.0, 2.0, 8.0, 8.0, 8.0, 2.0])
    e = np.array([256.0, 32.0, 8.0, 128.0, 32.0, 256.0, 8.0])
    a = np.array([0.0, 1.2, 0.0, 1.2, 1.2, 0.0, 0.0])
    bm = np.array([16.0, 64.0, 64.0, 128.0, 64.0, 16.0, 64.0])
    both = routing_stats(t, k, e, a, bm)
    for i in range(len(t)):
        one = routing_stats(t[i : i + 1], k[i : i + 1], e[i : i + 1], a[i : i + 1], bm[i : i + 1])
        np.testing.assert_array_equal(both.iloc[i].to_numpy(), one.iloc[0].to_numpy())
