"""Diagnose a user's own Triton kernel through the SASS front-end (compiled here, no GPU needed).

The kernel is compiled for the GPU's arch with the given launch arguments and config
(:mod:`pipeweave.frontend.sass`), and its dynamic per-pipe warp-instruction counts are turned into
times with the GPU's per-SM rates, the same schedule rules as the analytical front-end:

* busiest SM: ``c* = ceil(grid / SMs)`` CTAs; ``t_pipe = c* x per-CTA work / per-SM rate / clock``
  with rates (warp-instructions per clock per SM): fma ``fp32_lanes/32``, alu ``alu_lanes/32``,
  xu ``sfu_ops/32``, lsu 1, issue 4 (all instructions, 4 schedulers); tensor from the SASS MMA
  FLOPs per CTA over the dtype's tensor rate;
* latency: ``c* x main-loop trips x DRAM latency / (max(stages-1, 1) x min(occupancy, c*))``, with
  the occupancy from the compiled kernel's registers and shared memory;
* bound = the largest; ``ceiling_us`` = launch overhead + bound: the analytical minimum of the
  compiled code on that GPU. Memory traffic is not in the SASS mix: give ``dram_bytes`` (bytes the
  launch moves to/from DRAM) to bound the ``dram`` pipe at the spec bandwidth; L2 is not bounded.
  Nothing here is learned or validated on measurements.

With ``search=True`` the num_warps x num_stages variants of the config are compiled and ranked by
that bound (block sizes stay as given: they are the kernel's own constexprs).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import CompileError, DataError

__all__ = ["diagnose_kernel", "sass_pipe_times", "SEARCH_WARPS", "SEARCH_STAGES"]

SEARCH_WARPS = (4, 8)
SEARCH_STAGES = (2, 3, 4, 5)
_BLOCK_NAMES = {"block_m": ("BLOCK_SIZE_M", "BLOCK_M"), "block_n": ("BLOCK_SIZE_N", "BLOCK_N"),
                "block_k": ("BLOCK_SIZE_K", "BLOCK_K"), "group_m": ("GROUP_SIZE_M", "GROUP_M")}


def sass_pipe_times(mix: Any, spec: Any, dtype: str = "bfloat16", dram_bytes: float | None = None) -> dict[str, float]:
    """Busiest-SM time (us) of each pipe, of instruction issue and of memory latency for one compiled launch."""
    from ..frontend._constants import DRAM_LATENCY_CYCLES, DTYPE_TENSOR_KEY

    S, f = float(spec.sm_count), float(spec.sm_clock_mhz)
    grid = max(int(mix.grid), 1)
    cstar = math.ceil(grid / S)
    key = DTYPE_TENSOR_KEY.get(str(dtype), "bf16")
    tensor_rate = float(spec.tensor_flop_per_clk_per_sm.get(key) or spec.tensor_flop_per_clk_per_sm.get("bf16") or 1.0)
    p = mix.pipes
    rates = {"fma": spec.fp32_lanes_per_sm / 32.0, "alu": spec.alu_lanes_per_sm / 32.0,
             "xu": spec.sfu_ops_per_clk_per_sm / 32.0, "lsu": 1.0}
    out = {"tensor": cstar * float(mix.tensor_flops_per_cta) / tensor_rate / f}
    for pipe, r in rates.items():
        out[pipe] = cstar * float(p.get(pipe, 0.0)) / float(r) / f
    out["issue"] = cstar * float(sum(p.values())) / 4.0 / f
    occ = max(int(mix.occupancy_ctas_per_sm), 1)
    trips = max(int(mix.main_loop_trips or 0), 0)
    stages = max(int(mix.config.num_stages) - 1, 1)
    out["latency"] = cstar * trips * DRAM_LATENCY_CYCLES / (stages * min(occ, cstar)) / f
    if dram_bytes is not None:
        out["dram"] = float(dram_bytes) / (float(spec.dram_bw_gbps) * 1e3)
    return out


def _bound(times: dict[str, float]) -> tuple[str, float]:
    from ..frontend._constants import LAUNCH_US

    name = max(times, key=lambda k: times[k])
    return name, LAUNCH_US + times[name]


def _fill_blocks(fn: Any, kargs: dict[str, Any], cfg: Any) -> dict[str, Any]:
    """Set the kernel's standard tile constexprs (BLOCK_SIZE_M ...) from the config unless given."""
    names = {p.name for p in fn.params if p.is_constexpr}
    out = dict(kargs)
    for field_, candidates in _BLOCK_NAMES.items():
        for n in candidates:
            if n in names and n not in out:
                out[n] = int(getattr(cfg, field_))
    return out


def diagnose_kernel(kernel: str, gpu: Any, config: str, *, signature: str = "", grid: int = 1,
                    trips: list[int] | None = None, dtype: str = "bfloat16", measured_us: float | None = None,
                    top: int = 5, search: bool = False, dram_bytes: float | None = None) -> dict[str, Any]:
    """Diagnose ``kernel`` (``file.py:name``, a ``@triton.jit`` function) on ``gpu`` at ``config``.

    ``signature``: the launch arguments (``--signature`` syntax of ``pipeweave sass``); ``grid``: CTAs;
    ``trips``: source trip count of each top-level loop; ``dram_bytes``: DRAM traffic of the launch
    (optional, bounds the dram pipe). Raises :class:`CompileError` when triton is
    missing or the kernel does not compile.
    """
    from ..frontend.sass import SassConfig, arch_for_gpu, instruction_mix
    from ..frontend.sass import Ptr, import_triton, load_kernel_file, parse_signature
    from ..hardware import GPUSpec, get_gpu

    spec = gpu if isinstance(gpu, GPUSpec) else get_gpu(gpu)
    if not config:
        raise DataError("--kernel needs --config BM,BN,BK,GM,WARPS,STAGES (num_warps and num_stages are used "
                        "by the compiler; BM/BN/BK/GM fill the kernel's BLOCK_SIZE_M ... constexprs if it has them)")
    cfg = SassConfig.parse(config)
    if measured_us is not None and not (np.isfinite(measured_us) and measured_us > 0):
        raise DataError(f"--measured-us must be a positive number of microseconds, got {measured_us!r}")
    if dram_bytes is not None and not (np.isfinite(dram_bytes) and dram_bytes >= 0):
        raise DataError(f"--dram-bytes must be a non-negative number of bytes, got {dram_bytes!r}")
    if int(grid) < 1:
        raise DataError(f"--grid must be >= 1 CTA, got {grid!r}")
    import_triton()
    arch = arch_for_gpu(spec.name)
    fn = load_kernel_file(kernel)
    kargs = _fill_blocks(fn, parse_signature(fn, signature), cfg)
    mix = instruction_mix(fn, arch, cfg, args=kargs, loop_trips=trips, grid=int(grid), dtype=dtype)
    times = sass_pipe_times(mix, spec, dtype, dram_bytes)
    bound, ceiling = _bound(times)
    latency = float(measured_us) if measured_us is not None else ceiling
    recs: list[dict[str, Any]] = []
    notes = ["user kernel: ceiling = analytical minimum of the compiled SASS (pipe, issue and latency bounds"
             + (", DRAM from --dram-bytes); L2 traffic is not bounded" if dram_bytes is not None else
                "); memory traffic is not in the SASS mix and is not bounded (give --dram-bytes)")
             + "; not validated on measurements"]
    if search:
        variants = []
        for w in SEARCH_WARPS:
            for st in SEARCH_STAGES:
                c = SassConfig(cfg.block_m, cfg.block_n, cfg.block_k, cfg.group_m, w, st)
                try:
                    m = instruction_mix(fn, arch, c, args=kargs, loop_trips=trips, grid=int(grid), dtype=dtype)
                except CompileError as exc:
                    first = str(exc).splitlines()[0]
                    notes.append(f"config {','.join(map(str, c.as_tuple()))} does not compile: {first}")
                    continue
                if m.occupancy_ctas_per_sm < 1:
                    notes.append(f"config {','.join(map(str, c.as_tuple()))} does not fit on {arch}")
                    continue
                b, t = _bound(sass_pipe_times(m, spec, dtype, dram_bytes))
                variants.append((t, c, b, m))
        variants.sort(key=lambda v: v[0])
        for i, (t, c, b, m) in enumerate(variants[:max(int(top), 1)]):
            recs.append({"rank": i + 1, "config": ",".join(map(str, c.as_tuple())), "predicted_us": t,
                         "speedup": ceiling / t, "bound_pipe": b, "registers": m.registers,
                         "shared_bytes": m.shared_bytes, "occupancy": m.occupancy_ctas_per_sm})
    else:
        notes.append("no config search: pass --search to compile and rank the num_warps x num_stages variants")
    return {
        "gpu": spec.name, "generation": spec.generation, "arch": arch, "kernel": kernel, "dtype": dtype,
        "config": ",".join(map(str, cfg.as_tuple())), "grid": int(grid),
        "predicted_us": ceiling, "measured_us": None if measured_us is None else float(measured_us),
        "ceiling_us": ceiling, "headroom": None if measured_us is None else float(measured_us) / ceiling,
        "headroom_pct": None if measured_us is None else 100.0 * (1.0 - ceiling / float(measured_us)),
        "bound_pipe": bound, "pipe_times_us": times,
        "pipe_utilization": {k: v / latency for k, v in times.items()},
        "utilization_basis": "measured" if measured_us is not None else "predicted",
        "registers": mix.registers, "spills": mix.spills, "shared_bytes": mix.shared_bytes,
        "occupancy": mix.occupancy_ctas_per_sm, "main_loop_trips": mix.main_loop_trips,
        "recommendations": recs, "ceiling_method": "SASS pipe bound (analytical)", "notes": notes + list(mix.notes),
    }
