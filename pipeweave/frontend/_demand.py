"""Per-pipe demand of one kernel launch and the schedule model that turns it into times.

A :class:`KernelDemand` describes a tiled kernel as columns (one entry per launch row): the
grid, the main-loop iterations of one CTA, the work of one iteration on each pipe, fixed
per-CTA work (prologue/epilogue) and the chip-level traffic after L2 reuse. :func:`schedule`
turns it, with the GPU spec columns, into chip-level and busiest-SM pipe times, occupancy,
waves and a pipeline-envelope latency. Every array is float64; times are microseconds.

Formulas (all per row):
  p      = CTAs resident per SM = min(smem_sm // smem_cta, regs_sm // (regs*threads),
           max_warps // warps, max_ctas), at least 1
  waves  = ceil(G / (S * p));   c* = ceil(G / S) CTAs on the busiest SM
  t_chip[pipe] = total work / (rate_per_SM * S * f)          (bytes / bandwidth for L2, DRAM)
  t_sm[pipe]   = c* * work per CTA / rate_per_SM / f         (busiest SM, serialized)
  L2->SM share = min(L2_bw / active_SMs, 64 B/clk * f); DRAM share scales with DRAM/L2 bytes
  t_lat  = c* * iters * DRAM_latency / (max(stages-1, 1) * min(p, c*)) / f
  steady = max(t_sm[...], t_lat, t_chip[l2], t_chip[dram])
  fill   = waves_busiest * (DRAM_latency/f + (stages-1) * one iteration's load time)
  t_env  = launch + fill + steady + epilogue stores
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

import numpy as np

from . import _constants as C
from ._occupancy import ctas_per_sm

__all__ = ["KernelDemand", "schedule", "envelope_us", "combine_schedules", "occupancy", "PIPES"]

#: GPU spec columns that :func:`occupancy` and :func:`schedule` read.
SCHEDULE_SPEC_KEYS: tuple[str, ...] = (
    "sm_count",
    "sm_clock_mhz",
    "fp32_lanes_per_sm",
    "alu_lanes_per_sm",
    "sfu_ops_per_clk_per_sm",
    "smem_bw_bytes_per_clk_per_sm",
    "smem_per_sm_kib",
    "regs_per_sm",
    "max_warps_per_sm",
    "max_ctas_per_sm",
    "l2_mib",
    "l2_bw_gbps",
    "dram_bw_gbps",
)

#: Where a kernel's demand is spent: four compute pipes and three memory levels (model features
#: ``t_sm_<pipe>_us`` ...). The SASS front-end's ``PIPES`` (11 issue classes) is a different list that
#: shares only the compute names tensor/fma/alu/xu (tests/test_vocab.py).
PIPES: tuple[str, ...] = ("tensor", "fma", "alu", "xu", "smem", "l2", "dram")

#: A per-row column, or a scalar broadcast to every row (:class:`KernelDemand` stores float64 columns).
Col = np.ndarray | float


@dataclass
class KernelDemand:
    """Columns describing one kernel per row (see module docstring). Ops are thread-level ops."""

    name: str
    grid_ctas: np.ndarray
    iters: np.ndarray
    tensor_rate: np.ndarray  # dense FLOP/clk/SM of the dtype used by this kernel
    threads: np.ndarray
    stages: np.ndarray
    smem_cta_bytes: np.ndarray
    regs_per_thread: np.ndarray
    tensor_flop_it: np.ndarray
    fma_it: np.ndarray
    alu_it: np.ndarray
    xu_it: np.ndarray
    load_bytes_it: np.ndarray  # global -> SM bytes per iteration (L2 traffic)
    smem_bytes_it: np.ndarray  # shared-memory bytes written + read per iteration
    fma_cta: np.ndarray  # fixed per-CTA work (prologue + epilogue)
    xu_cta: np.ndarray
    load_bytes_cta: np.ndarray
    store_bytes_cta: np.ndarray
    dram_bytes: np.ndarray  # chip DRAM traffic after L2 reuse (loads + stores)
    dram_compulsory_bytes: np.ndarray
    useful_flop: np.ndarray  # tensor FLOPs of the math itself (no padding)
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    if TYPE_CHECKING:  # the generated __init__ also takes scalars; __post_init__ broadcasts them to columns

        def __init__(
            self,
            name: str,
            *,
            grid_ctas: Col,
            iters: Col,
            tensor_rate: Col,
            threads: Col,
            stages: Col,
            smem_cta_bytes: Col,
            regs_per_thread: Col,
            tensor_flop_it: Col,
            fma_it: Col,
            alu_it: Col,
            xu_it: Col,
            load_bytes_it: Col,
            smem_bytes_it: Col,
            fma_cta: Col,
            xu_cta: Col,
            load_bytes_cta: Col,
            store_bytes_cta: Col,
            dram_bytes: Col,
            dram_compulsory_bytes: Col,
            useful_flop: Col,
            extra: dict[str, np.ndarray] = ...,
        ) -> None: ...

    def __post_init__(self) -> None:
        n = len(np.asarray(self.grid_ctas))
        for f in fields(self):
            if f.name in ("name", "extra"):
                continue
            v = np.asarray(getattr(self, f.name), dtype=float)
            if v.shape != (n,):  # broadcast scalars; full columns are used as they are (no copy)
                v = np.broadcast_to(v, (n,)).copy()
            setattr(self, f.name, v)
        self.grid_ctas = np.maximum(self.grid_ctas, 1.0)
        self.iters = np.maximum(self.iters, 1.0)

    # chip totals -----------------------------------------------------------------------------
    @property
    def total(self) -> dict[str, np.ndarray]:
        """Chip-total work per pipe: ops for compute pipes, bytes for smem/l2/dram."""
        g, it = self.grid_ctas, self.iters
        return {
            "tensor": g * it * self.tensor_flop_it,
            "fma": g * (it * self.fma_it + self.fma_cta),
            "alu": g * it * self.alu_it,
            "xu": g * (it * self.xu_it + self.xu_cta),
            "smem": g * it * self.smem_bytes_it,
            "l2": g * (it * self.load_bytes_it + self.load_bytes_cta + self.store_bytes_cta),
            "dram": self.dram_bytes,
        }


def occupancy(
    threads: np.ndarray, smem_cta_bytes: np.ndarray, regs_per_thread: np.ndarray, spec: dict[str, np.ndarray]
) -> np.ndarray:
    """CTAs resident per SM, limited by shared memory, registers, warps and the CTA slot count (>= 1);
    :func:`ctas_per_sm` with estimated (not compiled) register and shared-memory counts."""
    return ctas_per_sm(
        np.ceil(threads / 32.0),
        regs_per_thread,
        smem_cta_bytes,
        max_ctas=spec["max_ctas_per_sm"],
        max_warps=spec["max_warps_per_sm"],
        regs_per_sm=spec["regs_per_sm"],
        smem_per_sm_bytes=spec["smem_per_sm_kib"] * 1024.0,
        allocation="estimated",
    )


def _occupancy(kd: KernelDemand, spec: dict[str, np.ndarray]) -> np.ndarray:
    known = kd.extra.get("ctas_per_sm")  # builders that already needed it (tiled_matmul) keep it
    if known is not None:
        return known
    return occupancy(kd.threads, kd.smem_cta_bytes, kd.regs_per_thread, spec)


def schedule(kd: KernelDemand, spec: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Times (us) and scheduling quantities of one kernel on the GPUs in ``spec`` (per-row columns)."""
    return _schedule(kd, spec, envelope_only=False)


def envelope_us(kd: KernelDemand, spec: dict[str, np.ndarray]) -> np.ndarray:
    """Only the envelope latency ``t_env_us`` of :func:`schedule` (the same formulas, fewer outputs);
    used where many candidate plans are compared (the cuBLAS-like tile heuristic)."""
    return _schedule(kd, spec, envelope_only=True)["t_env_us"]


def _schedule(kd: KernelDemand, spec: dict[str, np.ndarray], envelope_only: bool) -> dict[str, np.ndarray]:
    S = spec["sm_count"]
    f = spec["sm_clock_mhz"]  # cycles per microsecond
    G = kd.grid_ctas
    p = _occupancy(kd, spec)
    busiest = np.ceil(G / S)
    active = np.minimum(G, S)
    it = kd.iters

    l2_rate = spec["l2_bw_gbps"] * 1e3  # GB/s -> bytes/us, whole chip
    dram_rate = spec["dram_bw_gbps"] * 1e3
    per_cta = {
        "tensor": it * kd.tensor_flop_it,
        "fma": it * kd.fma_it + kd.fma_cta,
        "alu": it * kd.alu_it,
        "xu": it * kd.xu_it + kd.xu_cta,
        "smem": it * kd.smem_bytes_it,
        "l2": it * kd.load_bytes_it + kd.load_bytes_cta,
    }
    sm_rate = {  # per microsecond, one SM
        "tensor": kd.tensor_rate * f,
        "fma": spec["fp32_lanes_per_sm"] * f,
        "alu": spec["alu_lanes_per_sm"] * f,
        "xu": spec["sfu_ops_per_clk_per_sm"] * f,
        "smem": spec["smem_bw_bytes_per_clk_per_sm"] * f,
    }
    # busiest SM: c* CTAs serialized on its pipes; memory at its share of the chip bandwidth
    l2_share = np.minimum(l2_rate / active, C.SM_L2_BYTES_PER_CLK * f)
    sm_rate["l2"] = l2_share
    l2_total = G * (per_cta["l2"] + kd.store_bytes_cta)
    dram_frac = np.clip(kd.dram_bytes / np.maximum(l2_total, 1.0), 0.0, 1.0)
    out: dict[str, np.ndarray] = {}
    for pipe, work in per_cta.items():
        out[f"t_sm_{pipe}_us"] = busiest * work / sm_rate[pipe]
    out["t_sm_dram_us"] = busiest * (per_cta["l2"] + kd.store_bytes_cta) * dram_frac / (dram_rate / active)
    out["t_chip_l2_us"] = l2_total / l2_rate
    out["t_chip_dram_us"] = kd.dram_bytes / dram_rate

    conc = np.minimum(p, busiest)
    lat_us = C.DRAM_LATENCY_CYCLES / f
    out["t_latency_us"] = busiest * it * lat_us / (np.maximum(kd.stages - 1.0, 1.0) * conc)
    # the busiest SM bounds the kernel, and so does the chip's shared L2/DRAM bandwidth
    steady = np.maximum.reduce(
        [out[f"t_sm_{p_}_us"] for p_ in PIPES] + [out["t_latency_us"], out["t_chip_l2_us"], out["t_chip_dram_us"]]
    )
    waves_busiest = np.ceil(busiest / p)
    load_it_time = kd.load_bytes_it * conc / l2_share
    fill = waves_busiest * (lat_us + np.maximum(kd.stages - 1.0, 0.0) * load_it_time)
    epi = waves_busiest * kd.store_bytes_cta * conc / l2_share
    out["t_env_us"] = C.LAUNCH_US + fill + steady + epi
    if envelope_only:
        return out

    tot = kd.total
    for pipe in ("tensor", "fma", "alu", "xu", "smem"):  # chip totals at the whole chip's rate
        out[f"t_chip_{pipe}_us"] = tot[pipe] / (sm_rate[pipe] * S)
    waves = np.ceil(G / (S * p))
    out["t_fill_us"] = fill
    out["t_epilogue_us"] = epi
    out["t_steady_us"] = steady
    out["ctas_per_sm"] = p
    out["occupancy"] = p * np.ceil(kd.threads / 32.0) / spec["max_warps_per_sm"]
    out["waves"] = G / (S * p)
    out["waves_ceil"] = waves
    out["wave_efficiency"] = G / (waves * S * p)
    out["active_sm_frac"] = active / S
    out["busiest_sm_ctas"] = busiest
    out["grid_ctas"] = G
    out["iters"] = it
    for pipe in PIPES:
        out[f"work_{pipe}"] = tot[pipe]
    out["useful_flop"] = kd.useful_flop
    out["dram_compulsory_bytes"] = kd.dram_compulsory_bytes
    nan = np.full_like(G, np.nan)
    for key in _EXTRA_KEYS:
        out[key] = kd.extra.get(key, nan)
    return out


#: Optional per-kernel quantities (NaN for kernels that do not define them).
_EXTRA_KEYS: tuple[str, ...] = ("l2_hit_intra_wave", "l2_operand_fit", "split_k")


_SUM_PREFIXES = ("t_", "work_", "useful_flop", "dram_compulsory_bytes")


def combine_schedules(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Combine kernels launched back to back (e.g. fused-MoE: W13, activation, W2).

    Times and work add up; scheduling quantities (occupancy, waves, ...) come from the part with
    the largest envelope time on each row.
    """
    if len(parts) == 1:
        return parts[0]
    env = np.vstack([p["t_env_us"] for p in parts])
    dom = np.argmax(env, axis=0)
    out: dict[str, np.ndarray] = {}
    for key in parts[0]:
        stack = np.vstack([p[key] for p in parts])
        if key.startswith(_SUM_PREFIXES):
            out[key] = stack.sum(axis=0)
        else:
            out[key] = np.take_along_axis(stack, dom[None, :], axis=0)[0]
    # each launch after the first pays its launch overhead too (already inside t_env of each part)
    return out
