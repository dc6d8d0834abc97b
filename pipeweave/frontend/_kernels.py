"""Builders of :class:`KernelDemand` for the kernel shapes pipeweave models.

* :func:`tiled_matmul` - a tiled tensor-core matmul (cuBLAS/CUTLASS GEMM, Triton GEMM, and the
  Triton fused-MoE grouped GEMM) with split-K and an L2 reuse model driven by the CTA raster.
* :func:`elementwise` - a streaming kernel (SiLU-and-mul, MoE sum, RMSNorm-like).
* :func:`flash_attention` - FlashAttention-style prefill and split-KV decode.

L2 reuse model (per operand X of a matmul; all bytes):
  tile_X   = bytes the CTAs load (each CTA reads its full-K panel)
  comp_X   = compulsory bytes (each distinct element once)
  wave_X   = bytes if each concurrent wave reads each distinct panel once
             (a wave of W = min(G, S*p) CTAs covers r tile-rows x c tile-columns of the raster)
  h        = intra-wave hit rate: the wave streams (r*BM*a + c*BN*b)*BK bytes per k-step, so L2
             keeps a window of L2_usable / that many k-steps; CTAs sharing a panel drift apart by
             WAVE_DRIFT_FRACTION of the loop; h = clip(window / (drift + 1), 0, 1)
  fit      = clip(L2_usable / (comp_A + comp_B), 0, 1): share of operands that survive across waves
  dram_X   = comp_X + (wave_X - comp_X)(1 - fit) + (tile_X - wave_X)(1 - h)(1 - fit)
Unlike TileSight's lockstep replay, h falls as K grows (deep-K GEMMs thrash L2).
"""

from __future__ import annotations

import numpy as np

from . import _constants as C
from ._demand import Col, KernelDemand, occupancy
from ._smem import triton_smem_bytes

__all__ = ["tiled_matmul", "elementwise", "flash_attention", "sglang_triton_decode_split"]


def _cdiv(a: Col, b: Col) -> np.ndarray:
    return np.ceil(np.asarray(a, dtype=float) / np.asarray(b, dtype=float))


def _wave_cover(W: np.ndarray, tm: np.ndarray, tn: np.ndarray, group_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tile rows r and columns c covered by W consecutive CTAs of a GROUP_M raster."""
    g = np.clip(group_m, 1.0, None)
    tm, tn = np.maximum(tm, 1.0), np.maximum(tn, 1.0)
    r = np.minimum(g, tm)
    c = np.minimum(_cdiv(W, r), tn)
    r = np.maximum(r, np.minimum(_cdiv(W, c), tm))
    return r, c


def tiled_matmul(
    name: str,
    *,
    rows: np.ndarray,
    n: np.ndarray,
    k: np.ndarray,
    bm: np.ndarray,
    bn: np.ndarray,
    bk: np.ndarray,
    group_m: np.ndarray,
    warps: np.ndarray,
    stages: np.ndarray,
    a_bytes: Col,
    b_bytes: Col,
    out_bytes: Col,
    tensor_rate: np.ndarray,
    spec: dict[str, np.ndarray],
    split_k: np.ndarray | float = 1.0,
    loaded_rows: np.ndarray | None = None,
    a_comp_rows: np.ndarray | None = None,
    b_groups: np.ndarray | float = 1.0,
    useful_rows: np.ndarray | None = None,
    extra_fma_per_row: np.ndarray | float = 0.0,
    multicast: np.ndarray | float = 1.0,
    triton_sm_arch: np.ndarray | None = None,
    pair_mma: np.ndarray | float = 1.0,
) -> KernelDemand:
    """Demand of C[rows, n] = A[rows, k] B[k, n] computed with BM x BN x BK tiles.

    ``rows`` is the (padded) row count the grid covers; for the grouped MoE GEMM, ``loaded_rows``
    are the rows really gathered (padding is masked), ``a_comp_rows`` the distinct token rows and
    ``b_groups`` the number of distinct B matrices touched (active experts; 1 for a GEMM).
    ``useful_rows`` gives the FLOPs of the math itself (2*useful_rows*n*k). ``multicast``: CTAs
    of a thread-block cluster that receive one B tile from L2 together (TMA multicast on sm_90,
    CTA-pair MMA on sm_100; 1 = none): the L2->SM bytes of B per CTA divide by it. ``pair_mma``:
    CTAs that issue one MMA together (tcgen05 ``cta_group::2`` on sm_100: each CTA of the pair holds
    only its half of the B tile in shared memory; 1 = none): the shared-memory bytes (buffer and
    traffic) of B per CTA divide by it. TMA multicast on sm_90 writes the full B tile into each CTA.
    ``triton_sm_arch``: set for a Triton kernel (the GPU's sm_arch per row): its shared memory per CTA
    follows :func:`pipeweave.frontend.triton_smem_bytes`; otherwise (cuBLAS/CUTLASS) ``stages`` buffers.
    """
    rows = np.asarray(rows, dtype=float)
    split = np.broadcast_to(np.asarray(split_k, dtype=float), rows.shape)
    tm, tn = _cdiv(rows, bm), _cdiv(n, bn)
    G = tm * tn * split
    iters = _cdiv(k, bk * split)
    threads = warps * 32.0
    loaded_rows = rows if loaded_rows is None else loaded_rows
    a_comp_rows = loaded_rows if a_comp_rows is None else a_comp_rows
    useful_rows = loaded_rows if useful_rows is None else useful_rows
    b_groups = np.broadcast_to(np.asarray(b_groups, dtype=float), rows.shape)

    load_it = (bm * a_bytes + bn * b_bytes / pair_mma) * bk  # bytes landing in this CTA's smem
    l2_load_it = (bm * a_bytes + bn * b_bytes / multicast) * bk
    smem_cta = (
        stages * load_it
        if triton_sm_arch is None
        else triton_smem_bytes(bm, bn, bk, stages, a_bytes, b_bytes, triton_sm_arch)
    )
    regs = bm * bn / threads + C.REG_OVERHEAD_PER_THREAD  # fp32 accumulators + addressing
    p = occupancy(threads, smem_cta, regs, spec)
    W = np.minimum(G, spec["sm_count"] * p)

    # --- L2 reuse (module docstring) ---
    kp = iters * bk * split
    a_tile = loaded_rows * kp * a_bytes * tn
    b_tile = tm * tn * bn * kp * b_bytes
    a_comp = a_comp_rows * k * a_bytes
    b_comp = b_groups * n * k * b_bytes
    r, c = _wave_cover(W, tm, tn, group_m)
    n_waves = _cdiv(G, W)
    fill_frac = loaded_rows / np.maximum(rows, 1.0)
    a_wave = np.clip(n_waves * r * bm * fill_frac * kp * a_bytes, a_comp, a_tile)
    rows_per_b = np.maximum(tm / np.maximum(b_groups, 1.0), 1.0)  # M-blocks sharing one B matrix
    b_wave = np.clip(n_waves * _cdiv(r, np.minimum(r, rows_per_b)) * c * bn * kp * b_bytes, b_comp, b_tile)
    l2_eff = spec["l2_mib"] * 2**20 * C.L2_USABLE_FRACTION
    per_step = (r * bm * fill_frac * a_bytes + c * bn * b_bytes) * bk
    window = l2_eff / np.maximum(per_step, 1.0)
    drift = C.WAVE_DRIFT_FRACTION * iters
    h = np.clip(window / (drift + 1.0), 0.0, 1.0)
    fit = np.clip(l2_eff / np.maximum(a_comp + b_comp, 1.0), 0.0, 1.0)

    def dram(tile: np.ndarray, wave: np.ndarray, comp: np.ndarray) -> np.ndarray:
        return comp + (wave - comp) * (1 - fit) + (tile - wave) * (1 - h) * (1 - fit)

    out_elems = useful_rows * n
    partial = np.where(split > 1, 2 * 4.0 * out_elems * split, 0.0)  # fp32 partials written + read
    dram_total = dram(a_tile, a_wave, a_comp) + dram(b_tile, b_wave, b_comp) + out_elems * out_bytes + partial
    compulsory = a_comp + b_comp + out_elems * out_bytes

    store_cta = bm * bn * np.where(split > 1, 4.0, out_bytes)
    kd = KernelDemand(
        name=name,
        grid_ctas=G,
        iters=iters,
        tensor_rate=tensor_rate,
        threads=threads,
        stages=stages,
        smem_cta_bytes=smem_cta,
        regs_per_thread=regs,
        tensor_flop_it=2.0 * bm * bn * bk,
        fma_it=0.0,
        alu_it=threads * 8.0,
        xu_it=0.0,
        load_bytes_it=l2_load_it,
        smem_bytes_it=2.0 * load_it,
        fma_cta=bm * bn * (C.EPILOGUE_OPS_PER_ELEMENT + extra_fma_per_row),
        xu_cta=0.0,
        load_bytes_cta=0.0,
        store_bytes_cta=store_cta,
        dram_bytes=dram_total,
        dram_compulsory_bytes=compulsory,
        useful_flop=2.0 * useful_rows * n * k,
        extra={
            "ctas_per_sm": p,
            "l2_hit_intra_wave": h,
            "l2_operand_fit": fit,
            "tiles_m": tm,
            "tiles_n": tn,
            "split_k": split,
            # TileSight's lockstep assumption: perfect intra-wave reuse, none across waves
            "dram_bytes_lockstep": np.maximum(a_wave + b_wave, a_comp + b_comp) + out_elems * out_bytes + partial,
        },
    )
    return kd


def elementwise(
    name: str,
    *,
    elems: np.ndarray,
    in_bytes_per_elem: Col,
    out_bytes_per_elem: Col,
    fma_per_elem: float,
    xu_per_elem: float,
    spec: dict[str, np.ndarray],
    threads: float = 256.0,
    elems_per_thread: float = 8.0,
) -> KernelDemand:
    """A streaming kernel over ``elems`` outputs: no reuse, DRAM = compulsory bytes."""
    elems = np.asarray(elems, dtype=float)
    per_cta = threads * elems_per_thread
    G = np.maximum(_cdiv(elems, per_cta), 1.0)
    load_cta = per_cta * in_bytes_per_elem
    store_cta = per_cta * out_bytes_per_elem
    nbytes = elems * (in_bytes_per_elem + out_bytes_per_elem)
    return KernelDemand(
        name=name,
        grid_ctas=G,
        iters=1.0,
        tensor_rate=1.0,
        threads=threads,
        stages=2.0,
        smem_cta_bytes=0.0,
        regs_per_thread=32.0,
        tensor_flop_it=0.0,
        fma_it=per_cta * fma_per_elem,
        alu_it=per_cta * 2.0,
        xu_it=per_cta * xu_per_elem,
        load_bytes_it=load_cta,
        smem_bytes_it=0.0,
        fma_cta=0.0,
        xu_cta=0.0,
        load_bytes_cta=0.0,
        store_bytes_cta=store_cta,
        dram_bytes=nbytes,
        dram_compulsory_bytes=nbytes,
        useful_flop=0.0,
    )


def _keys_per_query(q_len: np.ndarray, kv_len: np.ndarray, win: np.ndarray, causal: bool) -> np.ndarray:
    """Mean keys attended per query. Causal: query i (1-based, after a prefix of kv-q keys) sees
    prefix + i keys; with a window w, min(that, w). Closed form of the sum over i = 1..q."""
    prefix = np.maximum(kv_len - q_len, 0.0)
    if not causal:
        return np.minimum(kv_len, win)
    # keys(i) = min(prefix + i, w); sum over i=1..q
    lo = prefix + 1.0
    hi = prefix + q_len
    w = np.minimum(win, 1e30)
    # part below the cap: i with prefix+i <= w
    n_below = np.clip(np.minimum(hi, w) - lo + 1.0, 0.0, None)
    sum_below = n_below * (lo + (lo + n_below - 1.0)) / 2.0
    sum_capped = (q_len - n_below) * np.where(np.isfinite(win), win, 0.0)
    return (sum_below + sum_capped) / np.maximum(q_len, 1.0)


def sglang_triton_decode_split(
    batch: Col, heads: Col, kv_heads: Col, kv_len: Col, sm_count: Col, max_splits: float = 8.0
) -> tuple[np.ndarray, np.ndarray]:
    """(query heads per CTA, KV splits) of SGLang 0.5.10's Triton decode (``get_num_kv_splits_triton``).

    Heads sharing a KV head are packed BLOCK_H = min(16, group) per CTA (one head per CTA without
    GQA); the grid is batch x ceil(heads / BLOCK_H) x splits with, for equal sequence lengths,
    splits = min(ceil(SMs x max(log2(kv_len / 64), 1) / that grid), ``max_splits``) (the server's
    ``triton_attention_num_kv_splits``, 8 by default), then each split holds
    ceil(ceil(kv_len / splits) / 32) x 32 keys, so short sequences use fewer.
    """
    b, h, hkv, kv = (np.asarray(x, dtype=float) for x in (batch, heads, kv_heads, kv_len))
    group = np.maximum(h / np.maximum(hkv, 1.0), 1.0)
    per_cta = np.where(group > 1, np.minimum(16.0, group), 1.0)
    token_grid = np.maximum(b * _cdiv(h, per_cta), 1.0)
    ext_cores = np.floor(np.asarray(sm_count, dtype=float) * np.maximum(np.log2(np.maximum(kv, 1.0) / 64.0), 1.0))
    split = np.clip(np.minimum(_cdiv(ext_cores, token_grid), max_splits), 1.0, None)
    per_split = _cdiv(_cdiv(kv, split), 32.0) * 32.0
    return per_cta, np.maximum(_cdiv(kv, np.maximum(per_split, 1.0)), 1.0)


def flash_attention(
    name: str,
    *,
    batch: np.ndarray,
    q_len: np.ndarray,
    kv_len: np.ndarray,
    heads: np.ndarray,
    kv_heads: np.ndarray,
    head_dim: np.ndarray,
    q_bytes: np.ndarray,
    kv_bytes: np.ndarray,
    causal: bool,
    decode: bool,
    tensor_rate: np.ndarray,
    spec: dict[str, np.ndarray],
    bq: np.ndarray,
    bkv: np.ndarray,
    warps: np.ndarray,
    stages: np.ndarray,
    window: np.ndarray | float = 0.0,
    pack_gqa: np.ndarray | bool = False,
    decode_heads_per_cta: np.ndarray | None = None,
    decode_split: np.ndarray | None = None,
) -> KernelDemand:
    """FlashAttention forward. Prefill: one CTA per (batch, head, q-tile), causal average trip count.

    Decode (q_len = 1): split-KV ("flash-decoding"), one CTA per (batch, kv-head, split) with the
    GQA group packed into the MMA rows (at least 16); splits fill about two waves of SMs. Rows with
    ``decode_heads_per_cta`` / ``decode_split`` (finite values) use that kernel's own grid instead:
    ceil(heads / per-CTA heads) CTAs per batch entry and split (SGLang's Triton decode,
    :func:`sglang_triton_decode_split`).
    """
    batch, q_len, kv_len = (np.asarray(x, dtype=float) for x in (batch, q_len, kv_len))
    # sliding window (window > 0): each query sees at most `window` keys
    win = np.broadcast_to(np.asarray(window, dtype=float), batch.shape)
    win = np.where(np.isfinite(win) & (win > 0), win, np.inf)
    heads, kv_heads, d = (np.asarray(x, dtype=float) for x in (heads, kv_heads, head_dim))
    S = spec["sm_count"]
    group = np.maximum(heads / np.maximum(kv_heads, 1.0), 1.0)
    if decode:
        kv_len = np.minimum(kv_len, win)
        rows_q = np.maximum(np.ceil(group / 16.0) * 16.0, 16.0)
        base = batch * kv_heads
        max_split = np.maximum(_cdiv(kv_len, 256.0), 1.0)
        split = np.clip(np.floor(2.0 * S / np.maximum(base, 1.0)), 1.0, max_split)
        qrows_real = group
        if decode_heads_per_cta is not None and decode_split is not None:
            own = np.isfinite(decode_heads_per_cta) & np.isfinite(decode_split)
            per_cta = np.where(own, decode_heads_per_cta, group)
            base = np.where(own, batch * _cdiv(heads, np.maximum(per_cta, 1.0)), base)
            split = np.where(own, decode_split, split)
            qrows_real = per_cta
            rows_q = np.where(own, np.maximum(np.ceil(per_cta / 16.0) * 16.0, 16.0), rows_q)
        G = base * split
        iters = _cdiv(kv_len, split * bkv)
        scores_it = qrows_real * bkv
    else:
        rows_q = bq
        # pack-GQA (the FlashAttention-3 code base: always below sm_90, and for the variable-length
        # batches SGLang sends on sm_90): the query rows of all heads sharing a KV head form one
        # M dimension, q_len * group rows, tiled by BQ
        packed = np.where(np.broadcast_to(pack_gqa, batch.shape), group, 1.0)
        nq = _cdiv(q_len * packed, bq)
        G = batch * heads / packed * nq
        keys = _keys_per_query(q_len, kv_len, win, causal)
        # a q-tile spans min(BQ / packed, q_len) positions: causal tiles see about half of them as
        # extra (masked) keys
        span = np.minimum(bq / packed, q_len)
        iters = np.maximum(_cdiv(keys + np.where(causal, span / 2.0, 0.0), bkv), 1.0)
        qrows_real = np.minimum(bq, q_len * packed)
        scores_it = qrows_real * bkv
    threads = warps * 32.0
    load_it = 2.0 * bkv * d * kv_bytes
    smem_cta = rows_q * d * q_bytes + stages * load_it
    useful = 4.0 * batch * heads * d * q_len * _keys_per_query(q_len, kv_len, win, causal and not decode)
    kv_total = batch * kv_heads * kv_len * d * 2.0 * kv_bytes
    qo_total = batch * heads * q_len * d * 2.0 * q_bytes
    return KernelDemand(
        name=name,
        grid_ctas=G,
        iters=iters,
        tensor_rate=tensor_rate,
        threads=threads,
        stages=stages,
        smem_cta_bytes=smem_cta,
        regs_per_thread=np.full_like(G, 168.0),
        tensor_flop_it=4.0 * rows_q * bkv * d,
        fma_it=5.0 * scores_it + qrows_real * d,
        alu_it=threads * 6.0,
        xu_it=scores_it,
        load_bytes_it=load_it,
        smem_bytes_it=2.0 * load_it,
        fma_cta=rows_q * d * 2.0,
        xu_cta=rows_q * 2.0,
        load_bytes_cta=rows_q * d * q_bytes,
        store_bytes_cta=qrows_real * d * q_bytes * np.where(decode, 2.0, 1.0),
        dram_bytes=kv_total + qo_total,
        dram_compulsory_bytes=kv_total + qo_total,
        useful_flop=useful,
    )
