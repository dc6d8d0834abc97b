"""The kernel-family registry: shape columns, dtypes and the work formulas of each family.

Each family maps launch rows (canonical profile columns) and per-row GPU spec arrays to a list of
:class:`~pipeweave.frontend._demand.KernelDemand` (one per kernel the measured operation launches)
plus the resolved tile plan. A new family = one :class:`Family` entry + its builder + tests.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import DataError, PipeweaveError, UnknownFamilyError
from .._frame import num_values, str_codes, str_map, str_values
from ..vocab import DEFAULT_ATTENTION_BACKEND, async_mma, attention_backend
from . import _constants as C
from ._demand import SCHEDULE_SPEC_KEYS, KernelDemand, envelope_us
from ._kernels import elementwise, flash_attention, sglang_triton_decode_split, tiled_matmul
from ._routing import distribution_alpha, routing_stats
from ._tileplan import (
    TILE_COLUMNS,
    attention_tiles,
    fused_moe_default,
    gemm_candidates,
    moe_w13_default,
    sglang_triton_decode_tiles,
)

__all__ = ["Family", "FAMILIES", "get_family", "build_kernels"]

Spec = dict[str, np.ndarray]


@dataclass(frozen=True)
class Family:
    """One kernel family: its shape columns, the dtypes it supports and its demand builder."""

    name: str
    shape_columns: tuple[str, ...]
    dtypes: tuple[str, ...]
    build: Callable[[pd.DataFrame, Spec, dict], tuple[list[KernelDemand], pd.DataFrame]]
    description: str
    #: False for families that run on the CUDA cores only (no tensor-core rate needed; peak = FP32 FMA)
    uses_tensor_cores: bool = True
    #: True for kernels whose time is their memory traffic at every shape (one CTA per row or
    #: element, a few flops per byte): the model's boosters give their rows no per-GPU constant
    #: feature (``pipeweave.model.GPU_CONSTANT_FEATURES``), which would act only as a GPU id
    memory_bound: bool = False
    #: shape columns that are text, not positive numbers (e.g. per-request length lists)
    text_columns: tuple[str, ...] = ()


def _shown(value: object) -> str:
    """A cell as the user gave it, for messages (``-1``, ``'abc'``, ``nan``; not ``np.int64(-1)``)."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    return repr(value) if isinstance(value, str) else str(value)


def _tensor_rate(df: pd.DataFrame, spec: Spec, dtype_col: str = "dtype") -> np.ndarray:
    keys = str_map(df[dtype_col], C.DTYPE_TENSOR_KEY, default=None)
    rate = np.full(len(df), np.nan)
    for key in {k for k in keys if k is not None}:
        m = keys == key
        col = spec.get(f"tensor_{key}_flop_per_clk_per_sm")
        if col is not None:
            rate[m] = col[m]
    bad = ~np.isfinite(rate) | (rate <= 0)
    if bad.any():
        pairs = sorted(set(zip(df["gpu"].astype(str)[bad], df[dtype_col].astype(str)[bad])))[:6]
        raise DataError(
            f"no tensor-core rate for (gpu, dtype) {pairs}",
            hint="that GPU's spec sheet lists no such dtype; use a dtype it supports "
            "(its tensor_flop_per_clk_per_sm keys: `pipeweave gpus NAME`, or pipeweave.get_gpu(name) in Python) "
            "or add it to the spec file",
        )
    return rate


def _dtype_bytes(series: pd.Series) -> np.ndarray:
    b = str_map(series, C.DTYPE_BYTES).astype(float)
    if np.isnan(b).any():
        bad = sorted(set(str_values(series)[np.isnan(b)]))
        raise DataError(f"unknown dtype {bad}", hint=f"use one of {sorted(C.DTYPE_BYTES)}")
    return b


def _async_mma(spec: Spec) -> np.ndarray:
    """Rows on an asynchronous-MMA arch: sm_90 (wgmma) or datacenter Blackwell sm_100/103
    (tcgen05), both with TMA and clusters; not sm_120 (:func:`pipeweave.vocab.async_mma`)."""
    return async_mma(spec["sm_arch"])


#: the tile-plan columns whose presence on a row means the launch names its own tile plan (a Triton config)
_NAMED_TILE: tuple[str, ...] = ("block_m", "block_n", "block_k")


def named_tile_rows(df: pd.DataFrame) -> np.ndarray:
    """Bool per row of launch rows: the row names its own tile plan (``block_m``, ``block_n`` and ``block_k`` all
    given), which the front-end then uses as recorded (``tile_origin == "recorded"``) instead of resolving the
    library's own choice."""
    given = [~np.isnan(num_values(df, c)) if c in df.columns else np.zeros(len(df), dtype=bool) for c in _NAMED_TILE]
    return np.logical_and.reduce(given)


def _recorded_tiles(df: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    cols = [c for c in TILE_COLUMNS]
    tiles = pd.DataFrame({c: (num_values(df, c) if c in df.columns else np.full(len(df), np.nan)) for c in cols})
    has = named_tile_rows(df)
    tiles["group_m"] = tiles["group_m"].fillna(1.0)
    tiles["num_warps"] = tiles["num_warps"].fillna(4.0)
    tiles["num_stages"] = tiles["num_stages"].fillna(3.0)
    return tiles, has


# --------------------------------------------------------------------------------------- GEMM
def _cublas_multicast(m, bm, async_mma_arch) -> np.ndarray:
    """cuBLAS on sm_90/sm_100 runs 2-CTA clusters along M that load each B tile once (TMA multicast /
    CTA-pair MMA); elsewhere, or with a single tile row, every CTA loads its own B tile."""
    return np.where(np.asarray(async_mma_arch, dtype=bool) & (np.ceil(m / bm) >= 2), 2.0, 1.0)


def _cublas_pair_mma(m, bm, sm_arch) -> np.ndarray:
    """cuBLAS on datacenter Blackwell (sm_100/103) issues each MMA from a CTA pair (tcgen05
    ``cta_group::2``): each CTA keeps half of the B tile in its shared memory. 1 elsewhere."""
    arch = np.asarray(sm_arch, dtype=float)
    return np.where((arch >= 100) & (arch < 120) & (np.ceil(m / bm) >= 2), 2.0, 1.0)


def _gemm_kernel(m, n, k, tiles: pd.DataFrame, split, ab, ob, rate, spec, multicast=1.0, pair_mma=1.0) -> KernelDemand:
    return tiled_matmul(
        "gemm",
        rows=m,
        n=n,
        k=k,
        bm=tiles["block_m"].to_numpy(),
        bn=tiles["block_n"].to_numpy(),
        bk=tiles["block_k"].to_numpy(),
        group_m=tiles["group_m"].to_numpy(),
        warps=tiles["num_warps"].to_numpy(),
        stages=tiles["num_stages"].to_numpy(),
        a_bytes=ab,
        b_bytes=ab,
        out_bytes=ob,
        tensor_rate=rate,
        spec=spec,
        split_k=split,
        multicast=multicast,
        pair_mma=pair_mma,
    )


def _slice_spec(spec: Spec, idx: np.ndarray, keys: tuple[str, ...] | None = None) -> Spec:
    return {k: v[idx] for k, v in spec.items() if keys is None or k in keys}


def _gemm_env_lower_bound(m, n, k, c: np.ndarray, ab, rate, spec: Spec) -> np.ndarray:
    """A cheap lower bound (us) of the envelope of GEMM candidates ``c`` (the columns of
    :func:`gemm_candidates` plus the multicast factor; any leading shape, broadcast with the rows).

    Term by term below :func:`._demand.envelope_us` (see :mod:`._demand` for the formulas): the
    busiest SM runs >= 1 wave with >= 1 CTA in flight, so fill >= DRAM latency + (stages-1) loads
    and epilogue >= one CTA's stores at the SM's L2 share; steady >= the busiest SM's tensor and
    L2 times and the chip's compulsory DRAM time (DRAM bytes after reuse >= compulsory bytes).
    """
    bm, bn, bk, stages, split = (c[..., i] for i in (0, 1, 2, 5, 6))
    mc = c[..., 7]  # multicast
    f = spec["sm_clock_mhz"]
    S = spec["sm_count"]
    grid = np.maximum(np.ceil(m / bm) * np.ceil(n / bn) * split, 1.0)
    iters = np.maximum(np.ceil(k / (bk * split)), 1.0)
    busiest = np.ceil(grid / S)
    l2_share = np.minimum(spec["l2_bw_gbps"] * 1e3 / np.minimum(grid, S), C.SM_L2_BYTES_PER_CLK * f)
    load_it = (bm + bn / mc) * ab * bk
    t_tensor = busiest * iters * (2.0 * bm * bn * bk) / (rate * f)
    t_l2 = busiest * iters * load_it / l2_share
    t_dram = ((m + n) * k * ab + m * n * 2.0) / (spec["dram_bw_gbps"] * 1e3)
    fill = C.DRAM_LATENCY_CYCLES / f + np.maximum(stages - 1.0, 0.0) * load_it / l2_share
    epi = bm * bn * np.where(split > 1, 4.0, 2.0) / l2_share
    return C.LAUNCH_US + fill + np.maximum(np.maximum(t_tensor, t_l2), t_dram) + epi


def _gemm_heuristic(m, n, k, ab, rate, spec: Spec, chunk: int = 4096) -> tuple[pd.DataFrame, np.ndarray]:
    """cuBLAS-like tile choice: the candidate with the smallest envelope time (see _tileplan).

    Exact branch and bound over the (row, candidate) pairs, vectorized: split-K candidates are
    allowed only where the unsplit grid under-fills the GPU and each slice keeps >= 4 k-steps;
    the allowed candidate with the smallest lower bound (:func:`_gemm_env_lower_bound`) is
    evaluated first, and only candidates whose lower bound does not exceed its envelope are
    evaluated after it. A skipped candidate's envelope is strictly larger than the one found, so
    the choice (ties included: first candidate in list order) equals the exhaustive search.
    """
    nrow = len(m)
    best = np.zeros((nrow, len(TILE_COLUMNS) + 1))
    hc = _async_mma(spec)
    one_byte = ab < 2
    cls = hc.astype(int) * 2 + one_byte.astype(int)  # architecture class x operand width
    lb_spec_keys = ("sm_clock_mhz", "sm_count", "dram_bw_gbps", "l2_bw_gbps")

    def envelope(rr: np.ndarray, c: np.ndarray) -> np.ndarray:
        sub_spec = _slice_spec(spec, rr, SCHEDULE_SPEC_KEYS)
        kd = tiled_matmul(
            "gemm",
            rows=m[rr],
            n=n[rr],
            k=k[rr],
            bm=c[:, 0],
            bn=c[:, 1],
            bk=c[:, 2],
            group_m=c[:, 3],
            warps=c[:, 4],
            stages=c[:, 5],
            a_bytes=ab[rr],
            b_bytes=ab[rr],
            out_bytes=2.0,
            tensor_rate=rate[rr],
            spec=sub_spec,
            split_k=c[:, 6],
            multicast=_cublas_multicast(m[rr], c[:, 0], hc[rr]),
            pair_mma=_cublas_pair_mma(m[rr], c[:, 0], spec["sm_arch"][rr]),
        )
        return envelope_us(kd, sub_spec)

    for code in np.unique(cls):
        rows = np.flatnonzero(cls == code)
        cand = gemm_candidates(bool(code // 2), bool(code % 2)).to_numpy()
        for start in range(0, len(rows), chunk):
            r = rows[start : start + chunk]
            # (rows x candidates) grids by broadcasting: per-row columns [:, None], candidates [None, :]
            col = {key: spec[key][r][:, None] for key in lb_spec_keys}
            mr, nr, kr = m[r][:, None], n[r][:, None], k[r][:, None]
            bm, bn, bk, split = (cand[None, :, i] for i in (0, 1, 2, 6))
            ok = (split == 1) | ((np.ceil(mr / bm) * np.ceil(nr / bn) < col["sm_count"]) & (kr / (bk * split) >= 4))
            c3 = np.broadcast_to(cand[None, :, :], (len(r), *cand.shape))
            c3 = np.concatenate([c3, _cublas_multicast(mr, c3[..., 0], hc[r][:, None])[..., None]], axis=2)
            lb = np.where(ok, _gemm_env_lower_bound(mr, nr, kr, c3, ab[r][:, None], rate[r][:, None], col), np.inf)
            first = np.argmin(lb, axis=1)  # split=1 candidates are always allowed: finite
            env = np.full(lb.shape, np.inf)
            env[np.arange(len(r)), first] = envelope(r, cand[first])
            bound = env.min(axis=1, keepdims=True) * (1.0 + 1e-9)  # margin for rounding
            ri, ci = np.nonzero((lb <= bound) & ~np.isfinite(env))
            if len(ri):
                env[ri, ci] = envelope(r[ri], cand[ci])
            best[r] = cand[np.argmin(env, axis=1)]
    return pd.DataFrame(best[:, :-1], columns=list(TILE_COLUMNS)), best[:, -1]


def _build_gemm(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    m, n, k = num_values(df, "m"), num_values(df, "n"), num_values(df, "k")
    ab = _dtype_bytes(df["dtype"])
    rate = _tensor_rate(df, spec)
    tiles, has = _recorded_tiles(df)
    split = np.ones(len(df))
    origin = np.where(has, "recorded", "cublas_heuristic").astype(object)
    if (~has).any():
        idx = np.flatnonzero(~has)
        h_tiles, h_split = _gemm_heuristic(m[idx], n[idx], k[idx], ab[idx], rate[idx], _slice_spec(spec, idx))
        tiles.iloc[idx] = h_tiles.to_numpy()
        split[idx] = h_split
    # fp8_block adds per-128x128 scale loads (negligible bytes) and runs other kernels than per-tensor
    # fp8: left to the learner, which tells the two apart by the feature fp8_scaling
    multicast = np.where(has, 1.0, _cublas_multicast(m, tiles["block_m"].to_numpy(), _async_mma(spec)))
    pair = np.where(has, 1.0, _cublas_pair_mma(m, tiles["block_m"].to_numpy(), spec["sm_arch"]))
    kd = _gemm_kernel(m, n, k, tiles, split, ab, 2.0, rate, spec, multicast=multicast, pair_mma=pair)
    tiles["tile_origin"] = origin
    return [kd], tiles


# ---------------------------------------------------------------------------------------- MoE
def _moe_grouped(
    name: str,
    tokens,
    topk,
    local_e,
    alpha,
    n_out,
    k_in,
    tiles: pd.DataFrame,
    ab,
    rate,
    spec,
    extra_fma: float = 0.0,
    rs: pd.DataFrame | None = None,
) -> tuple[KernelDemand, pd.DataFrame]:
    bm = tiles["block_m"].to_numpy()
    if rs is None:  # W13 and W2 of one layer share the routing
        rs = routing_stats(tokens, topk, local_e, alpha, bm)
    routed = rs["routed_rows"].to_numpy()
    kd = tiled_matmul(
        name,
        rows=rs["padded_rows"].to_numpy(),
        n=n_out,
        k=k_in,
        bm=bm,
        bn=tiles["block_n"].to_numpy(),
        bk=tiles["block_k"].to_numpy(),
        group_m=tiles["group_m"].to_numpy(),
        warps=tiles["num_warps"].to_numpy(),
        stages=tiles["num_stages"].to_numpy(),
        a_bytes=ab,
        b_bytes=ab,
        out_bytes=2.0,
        tensor_rate=rate,
        spec=spec,
        loaded_rows=routed,
        a_comp_rows=np.minimum(tokens, routed),
        b_groups=rs["active_experts"].to_numpy(),
        useful_rows=routed,
        extra_fma_per_row=extra_fma,
        triton_sm_arch=spec.get("sm_arch"),
    )
    return kd, rs


def _build_moe_w13(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    T, E, topk = num_values(df, "num_tokens"), num_values(df, "num_experts"), num_values(df, "topk")
    H, N = num_values(df, "hidden_size"), num_values(df, "inter_size")
    tp = np.nan_to_num(num_values(df, "moe_tp_size"), nan=1.0) if "moe_tp_size" in df else np.ones(len(df))
    ep = np.nan_to_num(num_values(df, "moe_ep_size"), nan=1.0) if "moe_ep_size" in df else np.ones(len(df))
    alpha = distribution_alpha(df["distribution"] if "distribution" in df else pd.Series(["balanced"] * len(df)))
    ab = _dtype_bytes(df["dtype"])
    rate = _tensor_rate(df, spec)
    tiles, has = _recorded_tiles(df)
    if (~has).any():
        d = moe_w13_default(T, E / ep)
        tiles.loc[~has, list(TILE_COLUMNS)] = d.to_numpy()[~has]
    kd, rs = _moe_grouped("moe_w13", T / ep, topk, E / ep, alpha, 2.0 * N / tp, H, tiles, ab, rate, spec)
    tiles["tile_origin"] = np.where(has, "recorded", "default")
    for c in rs.columns:
        tiles[c] = rs[c].to_numpy()
    return [kd], tiles


def _fused_moe_tiles(df: pd.DataFrame, ctx: dict, local_e: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    tiles, has = _recorded_tiles(df)
    origin = np.where(has, "recorded", "default").astype(object)
    if has.all():
        return tiles, origin
    todo = np.flatnonzero(~has)
    resolved = None
    if ctx.get("moe_configs", "auto") != "default":
        try:
            from ..sources import resolve_sglang_moe_configs

            resolved = resolve_sglang_moe_configs(df.iloc[todo], data=ctx.get("data"))
        except (PipeweaveError, ImportError, OSError) as exc:
            if ctx.get("moe_configs") == "sglang":
                raise
            warnings.warn(f"SGLang tuned MoE configs unavailable ({exc}); using SGLang's default config", stacklevel=3)
    if resolved is None:
        d = fused_moe_default(num_values(df, "num_tokens")[todo], local_e[todo], df["dtype"].to_numpy()[todo])
        tiles.iloc[todo, : len(TILE_COLUMNS)] = d.to_numpy()
    else:
        tiles.iloc[todo, : len(TILE_COLUMNS)] = resolved[list(TILE_COLUMNS)].to_numpy(dtype=float)
        origin[todo] = resolved["config_origin"].astype(str).to_numpy()
    return tiles, origin


def _build_fused_moe(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    """The whole SGLang fused-MoE layer: align, W13 (gate/up), SiLU-and-mul, W2 (down), moe_sum."""
    T, E, topk = num_values(df, "num_tokens"), num_values(df, "num_experts"), num_values(df, "topk")
    H, I = num_values(df, "hidden_size"), num_values(df, "inter_size")  # noqa: E741 (I = intermediate size)
    tp, ep = num_values(df, "moe_tp_size"), num_values(df, "moe_ep_size")
    tp, ep = np.nan_to_num(tp, nan=1.0), np.nan_to_num(ep, nan=1.0)
    alpha = distribution_alpha(df["distribution"])
    ab = _dtype_bytes(df["dtype"])
    rate = _tensor_rate(df, spec)
    local_e, n_loc, t_loc = E / ep, I / tp, T / ep
    tiles, origin = _fused_moe_tiles(df, ctx, local_e)
    w13, rs = _moe_grouped("moe_w13", t_loc, topk, local_e, alpha, 2.0 * n_loc, H, tiles, ab, rate, spec)
    routed = rs["routed_rows"].to_numpy()
    act = elementwise(
        "silu_mul",
        elems=routed * n_loc,
        in_bytes_per_elem=4.0,
        out_bytes_per_elem=2.0,
        fma_per_elem=6.0,
        xu_per_elem=2.0,
        spec=spec,
    )
    w2, _ = _moe_grouped("moe_w2", t_loc, topk, local_e, alpha, H, n_loc, tiles, ab, rate, spec, extra_fma=1.0, rs=rs)
    msum = elementwise(
        "moe_sum",
        elems=T * H,
        in_bytes_per_elem=2.0 * topk / ep,
        out_bytes_per_elem=2.0,
        fma_per_elem=topk / ep,
        xu_per_elem=0.0,
        spec=spec,
    )
    align = elementwise(
        "moe_align",
        elems=T * topk,
        in_bytes_per_elem=4.0,
        out_bytes_per_elem=8.0,
        fma_per_elem=0.0,
        xu_per_elem=0.0,
        spec=spec,
        elems_per_thread=1.0,
    )
    tiles["tile_origin"] = origin
    for c in rs.columns:
        tiles[c] = rs[c].to_numpy()
    # Expert-parallel ambiguity: the collector's rank may run all T*topk rows over its E/ep local
    # experts (masked remote rows still occupy the grid) instead of the expected T*topk/ep. The
    # envelope of that reading is a feature; the learner decides per regime which one holds.
    # Computed on the EP > 1 rows only (0 elsewhere: both readings coincide).
    ep_feature = np.zeros(len(df))
    i = np.flatnonzero(ep > 1)
    if len(i):
        sp, ti = _slice_spec(spec, i, SCHEDULE_SPEC_KEYS), tiles.iloc[i]
        w13b, rsb = _moe_grouped(
            "moe_w13", T[i], topk[i], local_e[i], alpha[i], 2.0 * n_loc[i], H[i], ti, ab[i], rate[i], sp
        )
        w2b, _ = _moe_grouped(
            "moe_w2", T[i], topk[i], local_e[i], alpha[i], H[i], n_loc[i], ti, ab[i], rate[i], sp, extra_fma=1.0, rs=rsb
        )
        env_b = envelope_us(w13b, sp) + envelope_us(w2b, sp)
        env_a = (envelope_us(w13, spec) + envelope_us(w2, spec))[i]
        ep_feature[i] = np.log2(env_b / env_a)
    tiles["log2_ep_all_rows_over_env"] = ep_feature
    return [align, w13, act, w2, msum], tiles


# ---------------------------------------------------------------------------------- attention
def attention_backend_labels(labels: Iterable[str]) -> np.ndarray:
    """``backend`` labels of attention rows with the unspecified ones (a missing value: 'nan', 'None'
    or '' as text) read as :data:`DEFAULT_ATTENTION_BACKEND`."""
    return np.array([attention_backend(b) for b in labels], dtype=object)


def _is_backend(df: pd.DataFrame, backend: str) -> np.ndarray:
    """Attention rows that run ``backend`` (the ``backend`` column; unspecified = FlashAttention)."""
    if "backend" not in df:
        return np.full(len(df), backend == DEFAULT_ATTENTION_BACKEND)
    codes, labels = str_codes(df["backend"])
    return (attention_backend_labels(labels) == backend)[codes]


def _is_flash_attention(df: pd.DataFrame) -> np.ndarray:
    """Attention rows that run FlashAttention (the ``backend`` column; unspecified = FlashAttention)."""
    return _is_backend(df, "flash_attention")


def _build_attention(decode: bool) -> Callable[[pd.DataFrame, Spec, dict], tuple[list[KernelDemand], pd.DataFrame]]:
    def build(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
        b, isl, step = (
            num_values(df, "batch_size"),
            num_values(df, "isl"),
            np.nan_to_num(num_values(df, "step"), nan=0.0),
        )
        h, hkv, d = num_values(df, "num_heads"), num_values(df, "num_key_value_heads"), num_values(df, "head_dim")
        qb = _dtype_bytes(df["dtype"])
        kvd = df["kv_cache_dtype"].fillna(df["dtype"]) if "kv_cache_dtype" in df else df["dtype"]
        kvb = _dtype_bytes(kvd)
        # the MMA runs in the KV dtype when both are 1-byte; bf16 otherwise
        mma_dtype = np.where((qb < 2) & (kvb < 2), "fp8", "bfloat16")
        rate = _tensor_rate(pd.DataFrame({"gpu": df["gpu"].to_numpy(), "dtype": mma_dtype}), spec)
        tiles = attention_tiles(_async_mma(spec), spec["smem_per_sm_kib"], decode)
        group = np.maximum(h / np.maximum(hkv, 1.0), 1.0)
        # SGLang's Triton decode launches with its own configuration (its prefill kernel's, screened,
        # made the leave-one-generation-out inner folds far worse: experiments/accuracy_log)
        triton = _is_backend(df, "triton") & decode
        if triton.any():
            own = sglang_triton_decode_tiles(group)
            tiles = tiles.where(~pd.Series(triton, index=tiles.index), own, axis=0)
        if decode:
            q_len, kv_len = np.ones(len(df)), np.maximum(step, 1.0)
        else:
            q_len, kv_len = isl, isl + step
        per_cta = split_own = None
        if decode and triton.any():
            per_cta, split_own = sglang_triton_decode_split(b, h, hkv, kv_len, spec["sm_count"])
            per_cta, split_own = np.where(triton, per_cta, np.nan), np.where(triton, split_own, np.nan)
        kd = flash_attention(
            "attention",
            batch=b,
            q_len=q_len,
            kv_len=kv_len,
            heads=h,
            kv_heads=hkv,
            head_dim=d,
            q_bytes=qb,
            kv_bytes=kvb,
            causal=not decode,
            decode=decode,
            tensor_rate=rate,
            spec=spec,
            bq=tiles["block_m"].to_numpy(),
            bkv=tiles["block_n"].to_numpy(),
            warps=tiles["num_warps"].to_numpy(),
            stages=tiles["num_stages"].to_numpy(),
            window=num_values(df, "window_size") if "window_size" in df else 0.0,
            pack_gqa=_is_flash_attention(df),
            decode_heads_per_cta=per_cta,
            decode_split=split_own,
        )
        parts = [kd]
        if decode:  # split-KV combine kernel: reads each split's fp32 partial output, only when split > 1
            ctas_per_split = b * hkv if per_cta is None else np.where(triton, b * np.ceil(h / per_cta), b * hkv)
            split = kd.grid_ctas / np.maximum(ctas_per_split, 1.0)
            comb = elementwise(
                "attn_combine",
                elems=b * h * d,
                in_bytes_per_elem=4.0 * split,
                out_bytes_per_elem=2.0,
                fma_per_elem=2.0 * split,
                xu_per_elem=1.0,
                spec=spec,
            )
            comb.grid_ctas = np.where(split > 1, comb.grid_ctas, 1.0)
            for attr in ("fma_it", "alu_it", "xu_it", "load_bytes_it", "store_bytes_cta", "dram_bytes"):
                setattr(comb, attr, np.where(split > 1, getattr(comb, attr), 0.0))
            comb.dram_compulsory_bytes = np.zeros(len(df))  # intermediate traffic, not compulsory
            parts.append(comb)
        tiles["block_k"] = d
        tiles["group_m"] = 1.0
        tiles = tiles[list(TILE_COLUMNS)]
        tiles["tile_origin"] = np.where(triton, "sglang_triton_config", "flash_attention_heuristic")
        return parts, tiles

    return build


FAMILIES: dict[str, Family] = {
    "gemm": Family(
        "gemm",
        ("m", "n", "k"),
        ("bfloat16", "float16", "fp8", "fp8_block"),
        _build_gemm,
        "C[m,n] = A[m,k] B[k,n] (cuBLAS/CUTLASS-style tiled tensor-core GEMM)",
    ),
    "moe_w13": Family(
        "moe_w13",
        ("num_tokens", "hidden_size", "inter_size", "topk", "num_experts"),
        ("bfloat16", "fp8", "fp8_block"),
        _build_moe_w13,
        "Triton fused-MoE gate/up (W13) grouped GEMM, one pass",
    ),
    "fused_moe": Family(
        "fused_moe",
        (
            "num_tokens",
            "hidden_size",
            "inter_size",
            "topk",
            "num_experts",
            "moe_tp_size",
            "moe_ep_size",
            "distribution",
        ),
        ("bfloat16", "fp8_block"),
        _build_fused_moe,
        "SGLang Triton fused-MoE layer: align + W13 + SiLU-and-mul + W2 + sum",
    ),
    "attention_context": Family(
        "attention_context",
        ("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim"),
        ("bfloat16", "fp8"),
        _build_attention(False),
        "causal prefill attention (FlashAttention-style)",
    ),
    "attention_generation": Family(
        "attention_generation",
        ("batch_size", "step", "num_heads", "num_key_value_heads", "head_dim"),
        ("bfloat16", "fp8"),
        _build_attention(True),
        "decode attention over a KV cache of `step` tokens (split-KV)",
    ),
}


# the non-tensor pipes and FlashInfer (issue 13): builders live in their own modules
from ._flashinfer import FLASHINFER_FAMILIES  # noqa: E402
from ._fp32ops import FP32_FAMILIES  # noqa: E402
from ._norm import NORM_FAMILIES  # noqa: E402

_cols: tuple[str, ...]
for _name, _cols, _dtypes, _build, _desc in NORM_FAMILIES + FP32_FAMILIES:
    FAMILIES[_name] = Family(
        _name, _cols, _dtypes, _build, _desc, uses_tensor_cores=False, memory_bound=_name != "gemm_fp32"
    )
for _name, _cols, _dtypes, _build, _desc in FLASHINFER_FAMILIES:
    FAMILIES[_name] = Family(_name, _cols, _dtypes, _build, _desc, text_columns=("q_lengths", "kv_lengths"))


def family_hint(names: Iterable[object]) -> str:
    """The ``hint=`` of an unknown-family error: the nearest registered name of each of ``names``, if any."""
    from ..vocab import closest_family

    guesses = {str(n): closest_family(n) for n in names}
    close = [f"{n!r} -> {g!r}" for n, g in guesses.items() if g]
    found = f"did you mean {', '.join(close)}? " if close else ""
    return found + "use one of the valid families listed (pipeweave.frontend.FAMILIES)"


def get_family(name: str) -> Family:
    """Registry lookup; unknown names raise :class:`UnknownFamilyError` listing valid names."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise UnknownFamilyError(
            f"unknown kernel family {name!r}; valid families: {sorted(FAMILIES)}", hint=family_hint([name])
        ) from None


def build_kernels(name: str, df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    """Validate the rows of family ``name`` and build the demand of every kernel it launches."""
    fam = get_family(name)
    missing = [c for c in fam.shape_columns if c not in df.columns]
    if missing:
        raise DataError(
            f"family {name!r} rows lack shape columns {missing}",
            hint=f"family {name!r} needs columns {list(fam.shape_columns)}",
        )
    vals = df[[c for c in fam.shape_columns if c != "distribution" and c not in fam.text_columns]].apply(
        pd.to_numeric, errors="coerce"
    )
    bad_cell = vals.isna() | (vals <= 0)
    bad = bad_cell.any(axis=1)
    if bad.any():
        shown = []
        for label in df.index[bad.to_numpy()][:5]:  # each bad row: its label and the offending cells as given
            cells = [f"{c}={_shown(df.at[label, c])}" for c in vals.columns if bad_cell.at[label, c]]
            shown.append(f"row label {label!r}: {', '.join(cells)}")
        k = int(bad.sum())
        raise DataError(
            f"family {name!r}: {k} {'row has' if k == 1 else 'rows have'} missing or non-positive shape values "
            f"({'; '.join(shown)})",
            hint=f"give positive numbers for {list(fam.shape_columns)}",
        )
    dts = str_values(df["dtype"])
    bad_dt = ~np.isin(dts, fam.dtypes)
    if bad_dt.any():
        raise DataError(
            f"family {name!r} does not support dtype {sorted(set(dts[bad_dt]))}",
            hint=f"family {name!r} supports {list(fam.dtypes)}",
        )
    return fam.build(df, spec, ctx)
