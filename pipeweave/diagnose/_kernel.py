"""Diagnose a user's own Triton kernel through the SASS front-end (compiled here, no GPU needed).

The kernel is compiled for the GPU's arch with the given launch arguments and config
(:mod:`pipeweave.frontend.sass`), and its dynamic per-pipe warp-instruction counts are turned into
times with the GPU's per-SM rates, the same schedule rules as the analytical front-end:

* busiest SM: ``c* = ceil(grid / SMs)`` CTAs; ``t_pipe = c* x per-CTA work / per-SM rate / clock``
  with rates (warp-instructions per clock per SM): fma ``fp32_lanes/32``, alu ``alu_lanes/32``,
  xu ``sfu_ops/32``, lsu 1, issue 4 (all instructions, 4 schedulers); tensor from the SASS MMA
  FLOPs per CTA over the dtype's tensor rate;
* latency: ``c* x main-loop trips x DRAM latency / (max(stages-1, 1) x min(occupancy, c*))``, with
  the occupancy from the compiled kernel's registers and shared memory; a kernel without a loop that
  loads from global memory counts one unpipelined round trip per CTA (trips = stages-1 = 1);
* dram: compulsory bytes over the spec bandwidth. The bytes come from the launch itself: every pointer
  argument given with a shape in the signature (``x_ptr=*fp32[16777216]``, ``w_ptr=*bf16[4096x4096]``)
  is read or written at least once, so its size counts once (a pointer the SASS never loads from or
  stores to - no LDG/STG/TMA in the mix - counts nothing); ``dram_bytes`` overrides that sum;
* bound = the largest; ``ceiling_us`` = launch overhead + bound: the analytical minimum of the
  compiled code on that GPU. L2 is not bounded. Nothing here is learned or validated on measurements;
* lower bound of a compiled config: launch overhead + the largest of its instruction work at the peak pipe
  rates spread evenly over all SMs (chip total, ``grid / SMs`` CTAs per SM, tensor FLOPs included) and the
  compulsory DRAM time. It bounds that config only (``lower_bound_us`` is the smallest over the compiled
  variants, ``config_lower_bound_us`` the given config's, against which a measurement is checked); configs
  that were never compiled are not bounded. A loop without a trip count is counted once (``warnings``).

With ``search=True`` the config's num_warps x num_stages variants and, when ``grid`` is an expression
of the launch arguments (``cdiv(n, BLOCK)``), the kernel's ``BLOCK*`` constexprs x 1/2, 2, 4 are
compiled and ranked by that bound (exact ties: the given config first, then by instruction issue time). The ceiling is then the
fastest variant, and the given config is ranked in the same order.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from .._errors import CompileError, DataError
from ..frontend.sass import eval_launch_expr, split_signature_items

__all__ = [
    "SEARCH_BLOCK_FACTORS",
    "SEARCH_STAGES",
    "SEARCH_WARPS",
    "diagnose_kernel",
    "eval_launch_expr",
    "fill_block_constants",
    "sass_pipe_times",
    "split_signature_shapes",
]

SEARCH_WARPS = (2, 4, 8)
SEARCH_STAGES = (2, 3, 4)
#: Multipliers applied to each BLOCK* constexpr by --search (power-of-two results only).
SEARCH_BLOCK_FACTORS = (0.5, 1.0, 2.0, 4.0)
_BLOCK_NAMES = {
    "block_m": ("BLOCK_SIZE_M", "BLOCK_M"),
    "block_n": ("BLOCK_SIZE_N", "BLOCK_N"),
    "block_k": ("BLOCK_SIZE_K", "BLOCK_K"),
    "group_m": ("GROUP_SIZE_M", "GROUP_M"),
}
_ELEM_BYTES = {
    "fp8e4nv": 1,
    "fp8e5": 1,
    "fp8e4b15": 1,
    "i8": 1,
    "u8": 1,
    "i1": 1,
    "fp16": 2,
    "bf16": 2,
    "i16": 2,
    "fp32": 4,
    "i32": 4,
    "u32": 4,
    "fp64": 8,
    "i64": 8,
    "u64": 8,
}
_SHAPED_PTR = re.compile(r"^\*(?P<dtype>[A-Za-z0-9_]+)\[(?P<dims>[0-9x*, ]+)\]$")


def split_signature_shapes(text: str) -> tuple[str, dict[str, tuple[str, int, int]]]:
    """``--signature`` text -> (text without pointer shapes, ``{name: (dtype, elements, bytes)}``).

    ``x_ptr=*fp32[16777216]`` or ``w_ptr=*bf16[4096x4096]`` (``x``, ``*`` or ``,`` between dims) give the
    array behind a pointer; other entries pass through unchanged.
    """
    if not isinstance(text, str):
        raise DataError(
            f"the signature must be text 'NAME=VALUE,...', got a {type(text).__name__}",
            hint="e.g. signature='x_ptr=*fp32[16777216],n=16777216,BLOCK=1024'",
        )
    out_items, shapes = [], {}
    seen: set[str] = set()
    for item in split_signature_items(text or ""):
        name, sep, val = item.partition("=")
        if sep and name.strip() in seen:
            raise DataError(
                f"the signature gives {name.strip()!r} twice ({item!r} repeats it)",
                hint="give each kernel parameter once",
            )
        seen.add(name.strip())
        m = _SHAPED_PTR.match(val.strip()) if sep else None
        if m is None:
            if sep and val.strip().startswith("*") and ("[" in val or "]" in val):
                raise DataError(
                    f"signature entry {item!r}: the array shape is not integers",
                    hint="write the shape as integers separated by x, e.g. x_ptr=*fp32[16777216] or "
                    "w_ptr=*bf16[4096x4096]",
                )
            out_items.append(item)
            continue
        dtype = m.group("dtype")
        dims = [d for d in re.split(r"[x*, ]+", m.group("dims")) if d]
        if dtype not in _ELEM_BYTES:
            raise DataError(
                f"signature entry {item!r}: unknown element type {dtype!r}", hint=f"use one of {sorted(_ELEM_BYTES)}"
            )
        n = math.prod(int(d) for d in dims)
        if n < 1:
            raise DataError(
                f"signature entry {item!r}: the array must have >= 1 element",
                hint="give positive dimensions, e.g. x_ptr=*fp32[16777216] or w_ptr=*bf16[4096x4096]",
            )
        shapes[name.strip()] = (dtype, n, n * _ELEM_BYTES[dtype])
        out_items.append(f"{name.strip()}=*{dtype}")
    return ",".join(out_items), shapes


def sass_pipe_times(mix: Any, spec: Any, dtype: str = "bfloat16", dram_bytes: float | None = None) -> dict[str, float]:
    """Busiest-SM time (us) of each pipe, of instruction issue and of memory latency for one compiled launch."""
    from ..frontend import DRAM_LATENCY_CYCLES, DTYPE_TENSOR_KEY

    S, f = float(spec.sm_count), float(spec.sm_clock_mhz)
    grid = max(int(mix.grid), 1)
    cstar = math.ceil(grid / S)
    key = DTYPE_TENSOR_KEY.get(str(dtype), "bf16")
    tensor_rate = float(spec.tensor_flop_per_clk_per_sm.get(key) or spec.tensor_flop_per_clk_per_sm.get("bf16") or 1.0)
    p = mix.pipes
    rates = {
        "fma": spec.fp32_lanes_per_sm / 32.0,
        "alu": spec.alu_lanes_per_sm / 32.0,
        "xu": spec.sfu_ops_per_clk_per_sm / 32.0,
        "lsu": 1.0,
    }
    out = {"tensor": cstar * float(mix.tensor_flops_per_cta) / tensor_rate / f}
    for pipe, r in rates.items():
        out[pipe] = cstar * float(p.get(pipe, 0.0)) / float(r) / f
    out["issue"] = cstar * float(sum(p.values())) / 4.0 / f
    occ = max(int(mix.occupancy_ctas_per_sm), 1)
    trips = max(int(mix.main_loop_trips or 0), 0)
    stages = max(int(mix.config.num_stages) - 1, 1)
    if trips == 0 and float(mix.mem.get("gmem_ld", 0.0)) > 0:  # no loop: one DRAM round trip per CTA, unpipelined
        trips, stages = 1, 1
    out["latency"] = cstar * trips * DRAM_LATENCY_CYCLES / (stages * min(occ, cstar)) / f
    if dram_bytes is not None:
        out["dram"] = float(dram_bytes) / (float(spec.dram_bw_gbps) * 1e3)
    return out


def _bound(times: dict[str, float]) -> tuple[str, float]:
    from ..frontend import LAUNCH_US

    name = max(times, key=lambda k: times[k])
    return name, LAUNCH_US + times[name]


def fill_block_constants(fn: Any, kargs: dict[str, Any], cfg: Any) -> dict[str, Any]:
    """Set the kernel's standard tile constexprs (BLOCK_SIZE_M/BLOCK_M ... GROUP_SIZE_M) from ``cfg`` unless given."""
    names = {p.name for p in fn.params if p.is_constexpr}
    out = dict(kargs)
    for field_, candidates in _BLOCK_NAMES.items():
        for n in candidates:
            if n in names and n not in out:
                out[n] = int(getattr(cfg, field_))
    return out


def _block_params(fn: Any, kargs: dict[str, Any]) -> list[str]:
    """constexpr parameters named BLOCK* with an integer value in the launch."""
    return [
        p.name
        for p in fn.params
        if p.is_constexpr
        and p.name.upper().startswith("BLOCK")
        and isinstance(kargs.get(p.name), int)
        and not isinstance(kargs.get(p.name), bool)
    ]


_FIELD_OF = {n: f for f, names in _BLOCK_NAMES.items() for n in names}
#: pipes whose time is instruction work at a peak rate (chip total = a bound for the compiled code)
_THROUGHPUT_PIPES = ("tensor", "fma", "alu", "xu", "lsu", "issue")


def _effective_cfg(fn: Any, kargs: dict[str, Any], cfg: Any) -> Any:
    """``cfg`` with BM/BN/BK/GM replaced by the kernel's actual ``BLOCK_SIZE_M`` ... constexpr values, so that the
    six-tuple printed for a variant builds that variant when given back as the config."""
    import dataclasses

    names = {p.name for p in fn.params if p.is_constexpr}
    repl: dict[str, int] = {}
    for n, f in _FIELD_OF.items():
        v = kargs.get(n)
        if n in names and isinstance(v, int) and not isinstance(v, bool) and f not in repl:
            repl[f] = int(v)
    return dataclasses.replace(cfg, **repl)


def _fmt_cfg(cfg: Any, blocks: dict[str, int]) -> str:
    """The six-tuple (with the real tile constexprs) plus the BLOCK* constexprs it does not hold (``BLOCK=2048``)."""
    base = ",".join(map(str, cfg.as_tuple()))
    extra = {k: v for k, v in blocks.items() if k not in _FIELD_OF}
    return base + ("" if not extra else " " + " ".join(f"{k}={v}" for k, v in extra.items()))


def _config_lower(times: dict[str, float], mix: Any, spec: Any) -> tuple[float, str]:
    """(lower bound us, binding part) of one compiled config: its instruction work at the peak pipe rates spread
    evenly over all SMs (chip total, not the busiest SM) and the compulsory DRAM bytes at full bandwidth."""
    from ..frontend import LAUNCH_US

    grid = max(int(mix.grid), 1)
    S = float(spec.sm_count)
    scale = (grid / S) / math.ceil(grid / S)
    chip = {p: times[p] * scale for p in _THROUGHPUT_PIPES if p in times}
    if "dram" in times:
        chip["dram"] = times["dram"]
    name = max(chip, key=lambda k: chip[k])
    return LAUNCH_US + chip[name], name


def _top_level_loops(mix: Any) -> int:
    return sum(1 for lp in mix.loops if int(lp.depth) == 0)


def diagnose_kernel(
    kernel: str,
    gpu: Any,
    config: str | Sequence[int] | Any,
    *,
    signature: str = "",
    grid: int | str = 1,
    trips: Sequence[int | str] | str | int | None = None,
    dtype: str = "bfloat16",
    measured_us: float | None = None,
    top: int = 5,
    search: bool = False,
    dram_bytes: float | None = None,
    max_variants: int | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Diagnose ``kernel`` (``file.py:name``, a ``@triton.jit`` function) on ``gpu`` at ``config``.

    ``config``: ``"BM,BN,BK,GM,WARPS,STAGES"`` or the six integers as a tuple; ``signature``: the launch
    arguments (``NAME=VALUE,...`` as in ``pipeweave sass``, pointers optionally with the array shape:
    ``x_ptr=*fp32[16777216]``); ``grid``: CTAs, an int or an expression of the integer arguments
    (``cdiv(n, BLOCK)``); ``trips``: source trip count of each top-level loop (ints or expressions; without
    them every loop is counted once and the result carries a ``warnings`` entry); ``dram_bytes``: DRAM
    traffic of the launch (overrides the sum of the pointer shapes); ``search``: compile and rank variants
    (at most ``max_variants`` of them, nearest the given config first); ``progress``: report the search on stderr.
    Returns the same invariants as :func:`diagnose` (ranks by predicted time, lower bound <= ceiling <= every
    ranked prediction, speedup = given / candidate, utilizations in [0, 1] or null below the lower bound).
    ``lower_bound_us`` bounds the compiled configs (the given one, or every searched one), not configs never
    compiled; ``config_lower_bound_us`` is the given config's, against which a measurement is checked.
    Raises :class:`CompileError` when triton is missing or the kernel does not compile.
    """
    from ..frontend.sass import (
        Ptr,
        SassConfig,
        arch_for_gpu,
        import_triton,
        instruction_mix,
        kernel_file_path,
        load_kernel_file,
        parse_signature,
    )
    from ..hardware import GPUSpec, get_gpu
    from ._diagnose import BELOW_BOUND_TOLERANCE, check_measured_us

    spec = gpu if isinstance(gpu, GPUSpec) else get_gpu(gpu)
    if isinstance(kernel, str):
        kernel_file_path(kernel)  # a missing file first: no config could make it diagnosable
    if config is None or (isinstance(config, str) and not config.strip()):
        raise DataError(
            f"diagnosing a kernel needs config='BM,BN,BK,GM,WARPS,STAGES', got {config!r} (num_warps and "
            "num_stages are used by the compiler; BM/BN/BK/GM fill the kernel's BLOCK_SIZE_M ... constexprs if it "
            "has them)",
            hint="e.g. config='64,64,32,8,4,3' for a matmul, or config='1,1024,1,1,4,1' for an elementwise kernel",
        )
    cfg = SassConfig.parse(config)
    measured_us = check_measured_us(measured_us)
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or int(top) < 1:
        raise DataError(f"top must be an integer >= 1, got {top!r}", hint="e.g. top=5")
    if max_variants is not None and (
        isinstance(max_variants, bool) or not isinstance(max_variants, (int, np.integer)) or int(max_variants) < 1
    ):
        raise DataError(f"max_variants must be an integer >= 1, got {max_variants!r}", hint="e.g. max_variants=24")
    if dram_bytes is not None and not (np.isfinite(dram_bytes) and dram_bytes >= 0):
        raise DataError(
            f"dram_bytes must be a non-negative number of bytes, got {dram_bytes!r}",
            hint="e.g. dram_bytes=3 * 4 * n for a kernel reading two and writing one fp32 array of n elements, "
            "or dram_bytes=None to sum the signature's pointer shapes",
        )
    if isinstance(trips, bool):
        raise DataError(f"trips must be trip counts (ints or expressions), got {trips!r}", hint="e.g. trips=[64]")
    trip_list: list[int | str] | None = (
        [int(trips)]
        if isinstance(trips, (int, np.integer))
        else [trips]
        if isinstance(trips, str)
        else None
        if trips is None
        else list(trips)
    )
    sig_text, shapes = split_signature_shapes(signature)
    import_triton()
    arch = arch_for_gpu(spec.name)
    fn = load_kernel_file(kernel)
    base_args = fill_block_constants(fn, parse_signature(fn, sig_text), cfg)
    pointer_names = [p.name for p in fn.params if not p.is_constexpr and isinstance(base_args.get(p.name), Ptr)]
    unknown = [n for n in shapes if n not in pointer_names]
    if unknown:
        raise DataError(
            f"the signature gives a shape for {unknown}, which are not pointer arguments of {fn.__name__!r}",
            hint=f"pointer arguments: {pointer_names}",
        )

    def launch(c: Any, kargs: dict[str, Any]) -> tuple[Any, dict[str, float], int]:
        g = eval_launch_expr(grid, kargs, "grid")
        if g < 1:
            raise DataError(f"grid must be >= 1 CTA, got {grid!r} = {g}", hint="e.g. grid='cdiv(n, BLOCK)'")
        t = None if trip_list is None else [eval_launch_expr(x, kargs, "trips") for x in trip_list]
        if t is not None and any(x < 0 for x in t):
            raise DataError(
                f"trips must be >= 0, got {trip_list} = {t}",
                hint="give one count >= 0 per top-level loop, e.g. trips=['cdiv(K, BLOCK_SIZE_K)']",
            )
        m = instruction_mix(fn, arch, c, args=kargs, loop_trips=t, grid=g, dtype=dtype)
        return m, sass_pipe_times(m, spec, dtype, dram), g

    # compulsory DRAM bytes from the launch ---------------------------------------------------------------------
    notes: list[str] = []
    warnings: list[str] = []
    dram: float | None
    if dram_bytes is not None:
        dram, dram_source = float(dram_bytes), "the dram_bytes argument"
    elif shapes:
        dram, dram_source = float(sum(b for _, _, b in shapes.values())), "pointer shapes in the signature"
    else:
        dram, dram_source = None, None
    mix, times, g0 = launch(cfg, base_args)
    gmem = float(mix.mem.get("gmem_ld", 0.0)) + float(mix.mem.get("gmem_st", 0.0))
    if dram is not None and dram_bytes is None and gmem == 0:
        dram, dram_source = 0.0, "the SASS has no global loads or stores"
        times = sass_pipe_times(mix, spec, dtype, dram)
    missing = [n for n in pointer_names if n not in shapes]
    if dram_bytes is None and missing and gmem > 0:
        notes.append(
            f"no array shape for {', '.join(missing)}: their DRAM traffic is not counted (give e.g. "
            f"{missing[0]}=*fp32[N] in the signature argument, or the dram_bytes argument)"
        )
    if dram is None:
        notes.append(
            "memory traffic is not bounded: give the pointer shapes in the signature argument (x_ptr=*fp32[N]) "
            "or the dram_bytes argument"
        )
    n_loops = _top_level_loops(mix)
    n_trips = len(trip_list or [])
    trips_missing = n_loops > n_trips
    if trips_missing:
        warnings.append(
            f"the kernel has {n_loops} top-level loop(s) but {n_trips} trip count(s) were given: each loop without "
            "one is counted ONCE, so every time, bound and ranking here is for a single trip of it (too low by about "
            "its trip count); give each loop's source trip count in the trips argument (e.g. 'cdiv(K, BLOCK_SIZE_K)')"
        )
    bound, given_t = _bound(times)
    given_lower, given_lower_part = _config_lower(times, mix, spec)
    issue0 = times.get("issue", 0.0)
    cfg_eff = _effective_cfg(fn, base_args, cfg)

    # variants ------------------------------------------------------------------------------------------------
    variants: list[dict[str, Any]] = [
        {
            "cfg": cfg_eff,
            "blocks": {},
            "t": given_t,
            "lower": given_lower,
            "bound": bound,
            "issue": issue0,
            "mix": mix,
            "grid": g0,
            "is_given": True,
        }
    ]
    n_planned = 0
    if search:
        blocks = _block_params(fn, base_args)
        grid_is_expr = not isinstance(grid, (int, np.integer)) and not str(grid).strip().isdigit()
        if blocks and not grid_is_expr:
            notes.append(
                f"the search keeps {', '.join(blocks)} fixed: give the grid as an expression of them "
                f"(e.g. 'cdiv(n, {blocks[0]})') to search block sizes too"
            )
            blocks = []
        block_sets: list[dict[str, int]] = [{}]
        if blocks:
            variants[0]["blocks"] = {b: int(base_args[b]) for b in blocks[:2]}
            opts = []
            for b in blocks[:2]:
                v0 = int(base_args[b])
                opts.append(
                    [
                        int(v0 * fct)
                        for fct in SEARCH_BLOCK_FACTORS
                        if v0 * fct >= 1 and float(v0 * fct).is_integer() and (int(v0 * fct) & (int(v0 * fct) - 1)) == 0
                    ]
                )
            block_sets = [dict(zip(blocks[:2], combo)) for combo in itertools.product(*opts)]
        has_loop = int(mix.main_loop_trips or 0) > 0 or n_loops > 0
        stage_opts = SEARCH_STAGES if has_loop else (cfg.num_stages,)
        given_blocks = {b: int(base_args[b]) for b in blocks[:2]}
        seen = {(cfg.num_warps, cfg.num_stages, tuple(sorted(given_blocks.items())))}
        jobs: list[tuple[dict[str, int], int, int]] = []
        for bs in block_sets:
            for w in SEARCH_WARPS:
                for st in stage_opts:
                    key = (w, st, tuple(sorted(bs.items())))
                    if key not in seen:
                        seen.add(key)
                        jobs.append((bs, w, st))

        def distance(job: tuple[dict[str, int], int, int]) -> tuple[int, float]:
            bs, w, st = job
            changed = sum(bs[b] != given_blocks.get(b) for b in bs) + (w != cfg.num_warps) + (st != cfg.num_stages)
            far = sum(abs(math.log2(bs[b] / given_blocks[b])) for b in bs if given_blocks.get(b))
            return changed, far

        jobs.sort(key=distance)  # nearest the given config first (stable: the grid order among equals)
        n_planned = len(jobs)
        if max_variants is not None and len(jobs) > int(max_variants):
            notes.append(
                f"searched {int(max_variants)} of {len(jobs)} variants (max_variants), those nearest the given "
                "config first: the ceiling is the best of these only"
            )
            jobs = jobs[: int(max_variants)]
        from .._progress import progress_bar

        if progress and jobs:
            import sys

            print(
                f"compiling {len(jobs)} variant(s) of {fn.__name__} for {arch} (a few seconds each)",
                file=sys.stderr,
                flush=True,
            )
        bar = progress_bar(len(jobs), "variants", unit="compile", enabled=bool(progress))
        try:
            for bs, w, st in jobs:
                c = SassConfig(cfg.block_m, cfg.block_n, cfg.block_k, cfg.group_m, w, st)
                kargs = {**base_args, **bs}
                c_eff = _effective_cfg(fn, kargs, c)
                label = _fmt_cfg(c_eff, bs)
                try:
                    m, t_, gg = launch(c, kargs)
                except CompileError as exc:
                    notes.append(f"config {label} does not compile: {str(exc).splitlines()[0]}")
                    continue
                finally:
                    bar.update(1)
                if m.occupancy_ctas_per_sm < 1:
                    notes.append(f"config {label} does not fit on {arch}")
                    continue
                b_, tt = _bound(t_)
                variants.append(
                    {
                        "cfg": c_eff,
                        "blocks": bs,
                        "t": tt,
                        "lower": _config_lower(t_, m, spec)[0],
                        "bound": b_,
                        "issue": t_.get("issue", 0.0),
                        "mix": m,
                        "grid": gg,
                        "is_given": False,
                    }
                )
        finally:
            bar.close()
        if not has_loop:
            notes.append(
                "the kernel has no loop, so num_stages does not change the code: only warps"
                + (" and block sizes" if blocks else "")
                + " are searched"
            )
        if any(k not in _FIELD_OF for k in blocks[:2]):
            notes.append(
                "a BLOCK*=value after a config's six numbers is a constexpr of the kernel: give it in the signature "
                "to build that variant"
            )
    else:
        notes.append(
            "no config search: call with search=True to compile and rank num_warps x num_stages variants (and "
            "BLOCK* constexprs when the grid is an expression of them)"
        )
    variants.sort(key=lambda v: (v["t"], not v["is_given"], v["issue"]))  # exact ties: the given config first
    given_rank = next(i for i, v in enumerate(variants) if v["is_given"]) + 1
    shown = variants[: max(int(top), 1)]
    if given_rank > len(shown):
        shown = [*shown, variants[given_rank - 1]]
    recs = [
        {
            "rank": variants.index(v) + 1,
            "config": _fmt_cfg(v["cfg"], v["blocks"]),
            "blocks": v["blocks"],
            "predicted_us": v["t"],
            "speedup": given_t / v["t"],
            "bound_pipe": v["bound"],
            "lower_bound_us": v["lower"],
            "grid": v["grid"],
            "registers": v["mix"].registers,
            "shared_bytes": v["mix"].shared_bytes,
            "occupancy": v["mix"].occupancy_ctas_per_sm,
            "is_given": v["is_given"],
        }
        for v in shown
    ]
    if search and len(variants) > 1:
        tied = [v for v in variants if abs(v["t"] - variants[0]["t"]) <= 1e-9 * variants[0]["t"]]
        if len(tied) > 1:
            notes.append(
                f"{len(tied)} variants tie at the {variants[0]['bound']} bound "
                f"({variants[0]['t']:.4g} us): for this launch the config does not change the bound; "
                "the given config is listed first among them, the rest by instruction issue time"
            )
    ceiling = variants[0]["t"]

    # lower bounds and the measurement --------------------------------------------------------------------------
    lower = min(v["lower"] for v in variants)  # every compiled variant's time >= its own bound >= this
    scope = "the searched configs" if len(variants) > 1 else "this config"
    basis = (
        "the compiled code's instruction work at peak pipe rates spread over all SMs"
        + (" and the compulsory DRAM bytes at full bandwidth" if dram is not None else "")
        + "; configs never compiled are not bounded"
    )
    below = measured_us is not None and float(measured_us) < (1.0 - BELOW_BOUND_TOLERANCE) * given_lower
    if below:
        what = (
            f"compulsory DRAM bytes from {dram_source} at full bandwidth"
            if given_lower_part == "dram"
            else f"its compiled {given_lower_part} work at the peak rate of every SM"
        )
        notes.append(
            f"the measured {float(cast(float, measured_us)):.4g} us is below the lower bound {given_lower:.4g} us of "
            f"the given config ({what}): check the units (microseconds), the array shapes, the trip counts and "
            "the GPU; no headroom or utilization is derived from it"
        )
    latency = float(measured_us) if measured_us is not None else given_t
    over = [k for k, v in times.items() if v > latency]
    util = None if below else {k: min(v / latency, 1.0) for k, v in times.items()}
    if over and not below:
        notes.append(f"the modeled time of {', '.join(over)} exceeds the latency; its utilization is shown as 100%")
    out = {
        "gpu": spec.name,
        "generation": spec.generation,
        "arch": arch,
        "kernel": kernel,
        "dtype": dtype,
        "config": ",".join(map(str, cfg_eff.as_tuple())),
        "grid": g0,
        "predicted_us": given_t,
        "measured_us": None if measured_us is None else float(measured_us),
        "ceiling_us": ceiling,
        "lower_bound_us": lower,
        "lower_bound_scope": scope,
        "lower_bound_basis": basis,
        "config_lower_bound_us": given_lower,
        "config_lower_bound_part": given_lower_part,
        "measured_over_ceiling": None if measured_us is None or below else float(measured_us) / ceiling,
        "measurement_below_bound": bool(below),
        "headroom_verdict": (
            None
            if measured_us is None
            else "below_physical_bound"
            if below
            else "at_or_below_ceiling"
            if float(measured_us) <= ceiling
            else "above_analytical_ceiling"
        ),
        "bound_pipe": bound,
        "pipe_times_us": times,
        "pipe_times_basis": "busiest SM (ceil(grid / SMs) CTAs); dram: whole launch",
        "dram_bytes": dram,
        "dram_bytes_source": dram_source,
        "sass_global_mem_instructions_per_cta": {
            "loads": float(mix.mem.get("gmem_ld", 0.0)),
            "stores": float(mix.mem.get("gmem_st", 0.0)),
        },
        "pipe_utilization": util,
        "pipes_over_latency": over,
        "utilization_basis": "measured" if measured_us is not None else "predicted",
        "latency_bound_us": times["latency"],
        "registers": mix.registers,
        "spills": mix.spills,
        "shared_bytes": mix.shared_bytes,
        "occupancy": mix.occupancy_ctas_per_sm,
        "main_loop_trips": mix.main_loop_trips,
        "top_level_loops": n_loops,
        "trips_given": n_trips,
        "trips_missing": trips_missing,
        "warnings": warnings,
        "recommendations": recs if search else [],
        "given_config_rank": given_rank,
        "n_ranked": len(variants),
        "n_variants_planned": n_planned,
        "ceiling_method": "SASS pipe bound (analytical)" + (", fastest searched variant" if search else ""),
        "notes": [
            "user kernel: ceiling = analytical minimum of the compiled SASS (pipe, issue, latency and DRAM "
            "bounds); L2 traffic is not bounded; not validated on measurements",
            *notes,
            *[n for n in mix.notes if not (trips_missing and "top-level loop" in n)],
        ],
    }
    _check_kernel_invariants(out)
    return out


def _check_kernel_invariants(res: dict[str, Any]) -> None:
    from ._diagnose import check_invariants

    if res["recommendations"]:
        check_invariants(res)
