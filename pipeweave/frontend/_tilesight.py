"""TileSight-style analytical tile model (baseline; no training on latencies).

Follows the published structure (TileSight, arXiv 2025, Eqs 1-11) on pipeweave's per-kernel demand:
  * per-iteration resource times on one SM (memory: DRAM, L2, shared memory; compute: tensor,
    FMA, SFU) at spec rates with 0.9 utilization caps ("spec mode");
  * L2 traffic from a *lockstep* wave replay: perfect reuse inside a wave, none across waves
    (the K-invariant assumption the paper itself flags as optimistic for deep K);
  * pipeline envelope with p resident tiles and S stages: N = p * iters, d = S * p - 1,
    T = min(d, N) * mem_t + max(N - d, 0) * max(mem_t, comp_t) + min(d, N) * comp_t + p * store_t;
  * wave aggregation: full waves at S*p tiles, a tail wave recomputed with its active SMs getting
    a larger share of DRAM/L2 bandwidth; the head wave scaled by (1 + 0.1 * T_pro / T_wave);
  * no launch-overhead term (the model is of the kernel body).
"""

from __future__ import annotations

import numpy as np

from ._demand import KernelDemand, occupancy

__all__ = ["tilesight_time_us", "TILESIGHT_CAP"]

TILESIGHT_CAP: float = 0.9


def _wave_time(
    kd: KernelDemand, spec: dict[str, np.ndarray], tiles_per_sm: np.ndarray, active: np.ndarray, dram_frac: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    f = spec["sm_clock_mhz"]
    cap = TILESIGHT_CAP
    l2_it = kd.load_bytes_it
    t_l2 = l2_it * active / (spec["l2_bw_gbps"] * 1e3 * cap)
    t_ddr = l2_it * dram_frac * active / (spec["dram_bw_gbps"] * 1e3 * cap)
    t_s = kd.smem_bytes_it / (spec["smem_bw_bytes_per_clk_per_sm"] * f * cap)
    mem_t = np.maximum.reduce([t_l2, t_ddr, t_s])
    comp_t = np.maximum.reduce(
        [
            kd.tensor_flop_it / (kd.tensor_rate * f * cap),
            kd.fma_it / (spec["fp32_lanes_per_sm"] * f * cap),
            kd.xu_it / (spec["sfu_ops_per_clk_per_sm"] * f * cap),
        ]
    )
    store_t = kd.store_bytes_cta * active / (spec["dram_bw_gbps"] * 1e3 * cap)
    n = tiles_per_sm * kd.iters
    d = np.maximum(kd.stages * tiles_per_sm - 1.0, 0.0)
    k = np.minimum(d, n)
    t_pro = k * mem_t
    t = t_pro + np.maximum(n - d, 0.0) * np.maximum(mem_t, comp_t) + k * comp_t + tiles_per_sm * store_t
    return t, t_pro


def tilesight_time_us(kd: KernelDemand, spec: dict[str, np.ndarray]) -> np.ndarray:
    """TileSight-style latency (us) of one kernel on each row's GPU."""
    S = spec["sm_count"]
    G = kd.grid_ctas
    p = occupancy(kd.threads, kd.smem_cta_bytes, kd.regs_per_thread, spec)
    lockstep = kd.extra.get("dram_bytes_lockstep", kd.dram_bytes)
    l2_total = np.maximum(kd.total["l2"], 1.0)
    dram_frac = np.clip(lockstep / l2_total, 0.0, 1.0)
    per_wave = S * p
    n_full = np.floor(G / per_wave)
    tail = G - n_full * per_wave
    t_full, t_pro = _wave_time(kd, spec, p, S, dram_frac)
    tail_tiles = np.ceil(tail / S)
    t_tail, _ = _wave_time(kd, spec, np.maximum(tail_tiles, 1.0), np.maximum(np.minimum(tail, S), 1.0), dram_frac)
    t_tail = np.where(tail > 0, t_tail, 0.0)
    head = np.where(n_full > 0, t_full * 0.1 * t_pro / np.maximum(t_full, 1e-12), 0.0)
    return n_full * t_full + head + t_tail
