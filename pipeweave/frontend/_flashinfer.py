"""FlashInfer batch prefill attention over ragged or paged KV (FA2 and FA3 code paths).

One launch serves a batch of requests of different query lengths q_i and KV lengths kv_i
(``q_lengths`` / ``kv_lengths``, ";"-joined). FlashInfer packs the GQA group into the query rows
(q_i * group rows per KV head), tiles them by CTA_TILE_Q and walks the visible keys (causal: a
prefix of kv_i - q_i keys plus the causal triangle) in CTA_TILE_KV steps:

* FA2 (``fa2_*``, every arch): CTA_TILE_Q = 128 when the mean packed query length > 64, 64 when
  > 16, else 16 (FA2DetermineCtaTileQ); CTA_TILE_KV = 64; 4 warps; mma.sync.
* FA3 (``fa3_*``, sm_90 only): 128 x 128 tiles, a producer + two consumer warpgroups (12 warps),
  wgmma with TMA loads (ragged) or cp.async gathers (paged).
* paged KV (``*_paged``): every key row is fetched through the page table (an index load and
  address arithmetic per key), ragged KV streams contiguous rows.

The demand is averaged over the batch: grid = KV heads x sum_i ceil(q_i * group / CTA_TILE_Q),
per-CTA iterations = the tile-weighted mean of ceil(visible keys / CTA_TILE_KV). Pure decode
batches (every q_i = 1) are the same kernel with 16-row tiles.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import DataError
from .._frame import num_values, str_values
from ._demand import KernelDemand

__all__ = ["FLASHINFER_FAMILIES", "parse_lengths"]

Spec = dict[str, np.ndarray]


def parse_lengths(values: pd.Series | np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(row index, length) of every request in ";"- or ","-joined length lists (brackets allowed)."""
    s = pd.Series(np.asarray(values, dtype=object)).astype(str).str.strip("[] ").str.replace(",", ";")
    parts = s.str.split(";").explode()
    vals = pd.to_numeric(parts.str.strip(), errors="coerce")
    bad = ~np.isfinite(vals.to_numpy(dtype=float)) | (vals.to_numpy(dtype=float) < 1)
    if bad.any():
        row = int(parts.index[bad][0])
        raise DataError(
            f"{what}: {s.iloc[row]!r} is not a list of positive integers",
            hint=f"give {what} as ';'-joined request lengths, e.g. 128;512",
        )
    return parts.index.to_numpy(dtype=np.int64), vals.to_numpy(dtype=float)


def _build_flashinfer(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    n = len(df)
    h, hkv, d = num_values(df, "num_heads"), num_values(df, "num_key_value_heads"), num_values(df, "head_dim")
    backend = str_values(df["backend"]).astype(str) if "backend" in df else np.full(n, "fa2_paged", dtype=object)
    fa3 = np.char.startswith(backend.astype(str), "fa3")
    paged = np.char.endswith(backend.astype(str), "paged")
    qi, q = parse_lengths(df["q_lengths"].to_numpy(), "q_lengths")
    ki, kv = parse_lengths(df["kv_lengths"].to_numpy(), "kv_lengths")
    if len(qi) != len(ki) or (qi != ki).any():
        raise DataError(
            "q_lengths and kv_lengths list different numbers of requests", hint="give one KV length per query length"
        )
    kv = np.maximum(kv, q)
    group = np.maximum(h / np.maximum(hkv, 1.0), 1.0)
    g_r = group[qi]
    sum_q = np.bincount(qi, weights=q, minlength=n)
    nreq = np.bincount(qi, minlength=n).astype(float)
    mean_packed = sum_q * group / np.maximum(nreq, 1.0)
    bq = np.where(fa3, 128.0, np.where(mean_packed > 64.0, 128.0, np.where(mean_packed > 16.0, 64.0, 16.0)))
    bkv = np.where(fa3, 128.0, 64.0)
    warps = np.where(fa3, 12.0, 4.0)
    # per request: tiles per KV head and mean visible keys per tile (causal, prefix kv - q)
    tiles_r = np.ceil(q * g_r / bq[qi])
    span = np.minimum(bq[qi] / g_r, q)
    keys_tile = (kv - q) + (q + 1.0) / 2.0 + span / 2.0
    iters_r = np.maximum(np.ceil(np.minimum(keys_tile, kv) / bkv[qi]), 1.0)
    tiles = np.bincount(qi, weights=tiles_r, minlength=n)
    tile_iters = np.bincount(qi, weights=tiles_r * iters_r, minlength=n)
    G = np.maximum(tiles * hkv, 1.0)
    iters = np.maximum(tile_iters / np.maximum(tiles, 1.0), 1.0)
    pairs = np.bincount(qi, weights=q * (kv - q) + q * (q + 1.0) / 2.0, minlength=n)  # (query, key) pairs
    sum_kv = np.bincount(qi, weights=kv, minlength=n)
    rate = spec.get("tensor_bf16_flop_per_clk_per_sm", spec.get("tensor_fp16_flop_per_clk_per_sm"))
    if rate is None or not np.isfinite(rate).all():
        raise DataError(
            "attention_flashinfer needs a bf16 tensor-core rate on every GPU",
            hint="FlashInfer's bf16 prefill runs on sm_80 and newer",
        )
    rows_q = bq
    scores_it = np.minimum(bq, mean_packed) * bkv
    load_it = 2.0 * bkv * d * 2.0 + np.where(paged, bkv * 8.0, 0.0)  # K and V rows (+ page-table entries)
    threads = warps * 32.0
    kv_bytes = hkv * sum_kv * d * 2.0 * 2.0
    qo_bytes = h * sum_q * d * 2.0 * 2.0
    kd = KernelDemand(
        name="attention_flashinfer",
        grid_ctas=G,
        iters=iters,
        tensor_rate=rate,
        threads=threads,
        stages=np.where(fa3, 2.0, 1.0) + 1.0,
        smem_cta_bytes=rows_q * d * 2.0 + 2.0 * load_it,
        regs_per_thread=np.where(fa3, 168.0, 128.0),
        tensor_flop_it=4.0 * rows_q * bkv * d,
        fma_it=5.0 * scores_it + np.minimum(bq, mean_packed) * d,
        alu_it=threads * 6.0 + np.where(paged, bkv * 2.0 * d / 8.0, 0.0),
        xu_it=scores_it,
        load_bytes_it=load_it,
        smem_bytes_it=2.0 * load_it,
        fma_cta=rows_q * d * 2.0,
        xu_cta=rows_q * 2.0,
        load_bytes_cta=rows_q * d * 2.0,
        store_bytes_cta=rows_q * d * 2.0,
        dram_bytes=kv_bytes + qo_bytes,
        dram_compulsory_bytes=kv_bytes + qo_bytes,
        useful_flop=4.0 * h * d * pairs,
    )
    plan = pd.DataFrame(
        {
            "block_m": bq,
            "block_n": bkv,
            "block_k": d,
            "group_m": np.ones(n),
            "num_warps": warps,
            "num_stages": np.where(paged, 1.0, 2.0),
            "tile_origin": np.where(fa3, "flashinfer_fa3", "flashinfer_fa2").astype(object),
        }
    )
    return [kd], plan


#: (name, shape columns, dtypes, builder, description); registered by :mod:`._families`.
FLASHINFER_FAMILIES = (
    (
        "attention_flashinfer",
        ("batch_size", "num_heads", "num_key_value_heads", "head_dim", "q_lengths", "kv_lengths"),
        ("bfloat16",),
        _build_flashinfer,
        "FlashInfer batch prefill/decode (causal) over per-request q_lengths / kv_lengths; backend = fa2/fa3 x ragged/paged",
    ),
)
