"""From SASS to dynamic per-pipe instruction counts per CTA (and per kernel)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._errors import CompileError, DataError
from ._arch import normalize_arch, occupancy
from ._builtin import SassConfig, builtin_launch, kernel_function, kernel_source_hash, normalize_dtype
from ._compile import CompiledSass, compile_kernel, triton_version
from ._parse import Instruction, Loop, SassFunction, find_loops, parse_sass
from ._pipes import PIPES, classify_opcode, is_mma, is_single_warp, mma_flops_per_warp_instruction

__all__ = ["InstructionMix", "LoopInfo", "analyze_sass", "instruction_mix", "MEM_CLASSES"]

#: memory-instruction classes counted next to the pipes
MEM_CLASSES: dict[str, tuple[str, ...]] = {
    "gmem_ld": ("LDG", "LDGSTS", "UTMALDG", "UBLKCP"),
    "gmem_st": ("STG", "UTMASTG", "RED", "REDG", "ATOMG", "UTMAREDG"),
    "smem_ld": ("LDS", "LDSM"),
    "smem_st": ("STS", "STSM"),
    "local": ("LDL", "STL"),
    "shfl": ("SHFL",),
    "barrier": ("BAR", "SYNCS", "WARPGROUP"),
}
_MEM_OF = {op: cls for cls, ops in MEM_CLASSES.items() for op in ops}


@dataclass
class LoopInfo:
    start: int
    end: int
    static_instructions: int
    trips: int  # source-level trip count from the launch shape
    trips_effective: float  # trips minus iterations the compiler peeled out of the loop
    depth: int
    contains_mma: bool
    static_pipes: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": f"0x{self.start:04x}",
            "end": f"0x{self.end:04x}",
            "static_instructions": self.static_instructions,
            "trips": self.trips,
            "trips_effective": self.trips_effective,
            "depth": self.depth,
            "contains_mma": self.contains_mma,
            "static_pipes": self.static_pipes,
        }


@dataclass
class InstructionMix:
    """Dynamic warp-instruction counts of one compiled kernel launch (per CTA unless the name says otherwise)."""

    kernel: str
    arch: str
    dtype: str
    config: SassConfig
    shape: dict[str, Any]
    pipes: dict[str, float]  # pipe -> dynamic warp-instructions per CTA
    pipes_per_iter: dict[str, float]  # one iteration of the main loop, per CTA
    pipes_prologue: dict[str, float]  # outside loops, before the main loop
    pipes_epilogue: dict[str, float]  # outside loops, after the main loop
    mem: dict[str, float]  # memory class -> dynamic warp-instructions per CTA
    mem_per_iter: dict[str, float]
    tensor_flops_per_cta: float
    tensor_flops_per_iter: float
    tensor_flops_analytic_per_cta: float | None
    main_loop_trips: int
    peeled_iters: float
    registers: int
    spills: int  # stack-frame bytes per thread (ptxas spill area)
    spill_instructions: int  # static LDL/STL count
    shared_bytes: int
    tmem_columns: int
    occupancy_ctas_per_sm: int
    grid: int
    loops: list[LoopInfo]
    static_instructions: int
    opcodes: dict[str, float]  # base opcode -> dynamic warp-instructions per CTA
    specialization: str = ""
    kernel_hash: str = ""
    triton_version: str | None = None
    compile_s: float = 0.0
    disasm_s: float = 0.0
    parse_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def pipes_per_kernel(self) -> dict[str, float]:
        return {p: v * self.grid for p, v in self.pipes.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "arch": self.arch,
            "dtype": self.dtype,
            "config": self.config.to_dict(),
            "shape": self.shape,
            "pipes": self.pipes,
            "pipes_per_iter": self.pipes_per_iter,
            "pipes_prologue": self.pipes_prologue,
            "pipes_epilogue": self.pipes_epilogue,
            "pipes_per_kernel": self.pipes_per_kernel,
            "mem": self.mem,
            "mem_per_iter": self.mem_per_iter,
            "tensor_flops_per_cta": self.tensor_flops_per_cta,
            "tensor_flops_per_iter": self.tensor_flops_per_iter,
            "tensor_flops_analytic_per_cta": self.tensor_flops_analytic_per_cta,
            "main_loop_trips": self.main_loop_trips,
            "peeled_iters": self.peeled_iters,
            "registers": self.registers,
            "spills": self.spills,
            "spill_instructions": self.spill_instructions,
            "shared_bytes": self.shared_bytes,
            "tmem_columns": self.tmem_columns,
            "occupancy_ctas_per_sm": self.occupancy_ctas_per_sm,
            "grid": self.grid,
            "num_warps": self.config.num_warps,
            "loops": [lp.to_dict() for lp in self.loops],
            "static_instructions": self.static_instructions,
            "opcodes": self.opcodes,
            "specialization": self.specialization,
            "kernel_hash": self.kernel_hash,
            "triton_version": self.triton_version,
            "compile_s": round(self.compile_s, 4),
            "disasm_s": round(self.disasm_s, 4),
            "parse_s": round(self.parse_s, 4),
            "notes": self.notes,
        }


def _flops(ins: Instruction) -> float:
    return mma_flops_per_warp_instruction(ins.opcode, ins.operands, ins.idesc) if is_mma(ins.opcode) else 0.0


def analyze_sass(func: SassFunction, arch: str, num_warps: int, loop_trips: list[int] | None) -> dict[str, Any]:
    """Dynamic counts per CTA from one parsed SASS function and the source-level trip count of each top-level loop.

    Every instruction is weighted by the effective trip count of the loops around it and by the number of
    warps that execute it (all warps, except tcgen05 instructions which one elected warp issues). When the
    compiler peels MMA iterations out of a loop (tcgen05 on sm_100a), the loop's effective trip count is the
    source trip count minus the peeled iterations (MMA FLOPs outside the loop / MMA FLOPs per iteration).
    """
    arch = normalize_arch(arch)
    instrs = func.instructions
    roots = find_loops(instrs)
    notes: list[str] = []
    trips = list(loop_trips or [])
    if len(trips) != len(roots):
        if trips or roots:
            notes.append(
                f"found {len(roots)} top-level loop(s) in the SASS but the launch declares {len(trips)} trip "
                "count(s) (loop_trips): each unmatched loop is counted ONCE, so every count is for a single trip "
                "of it (too low by about its trip count)"
            )
    mult = [1 if is_single_warp(ins.opcode) else num_warps for ins in instrs]
    flops = [_flops(ins) * m for ins, m in zip(instrs, mult)]
    pipe_of = []
    for ins in instrs:
        try:
            pipe_of.append(classify_opcode(ins.opcode, arch))
        except Exception:
            pipe_of.append("other")

    in_loop = [False] * len(instrs)
    for lp in roots:
        for i in lp.body:
            in_loop[i] = True
    outside_flops = sum(f for f, il in zip(flops, in_loop) if not il)
    mma_roots = [lp for lp in roots if any(flops[i] for i in lp.body)]
    weight = [1.0] * len(instrs)
    infos: list[LoopInfo] = []
    main: Loop | None = None
    main_trips, peeled = 0, 0.0
    for idx, lp in enumerate(roots):
        t = trips[idx] if idx < len(trips) else 1
        body_flops = sum(flops[i] for i in lp.body)
        eff = float(t)
        if body_flops > 0 and outside_flops > 0 and len(mma_roots) == 1:
            p = outside_flops / body_flops
            eff = max(0.0, t - p)
            peeled = min(p, float(t))
            notes.append(f"{p:g} MMA iteration(s) peeled out of the loop at 0x{lp.start:04x}")
        for i in lp.body:
            weight[i] *= eff
        for depth, child in _nested(lp.children, 1):
            notes.append(f"nested loop at 0x{child.start:04x} counted once per outer iteration (trip count unknown)")
            infos.append(_info(child, instrs, pipe_of, flops, 1, 1.0, depth))
        infos.append(_info(lp, instrs, pipe_of, flops, t, eff, 0))
        if (
            main is None
            or (lp in mma_roots and main not in mma_roots)
            or (len(lp.body) > len(main.body) and (lp in mma_roots) == (main in mma_roots))
        ):
            main, main_trips = lp, t
    infos.sort(key=lambda x: x.start)

    def acc(sel) -> dict[str, float]:
        out = dict.fromkeys(PIPES, 0.0)
        for i in range(len(instrs)):
            if sel(i):
                out[pipe_of[i]] += weight[i] * mult[i]
        return out

    def acc_iter(sel) -> dict[str, float]:  # one iteration: do not apply the main loop's own trip count
        out = dict.fromkeys(PIPES, 0.0)
        for i in sel:
            out[pipe_of[i]] += mult[i]
        return out

    main_body = set(main.body) if main else set()
    pipes = acc(lambda i: True)
    per_iter = acc_iter(main_body) if main else dict.fromkeys(PIPES, 0.0)
    start = main.start if main else instrs[-1].addr + 1
    end = main.end if main else instrs[-1].addr + 1
    pro = acc(lambda i: i not in main_body and instrs[i].addr < start)
    epi = acc(lambda i: i not in main_body and instrs[i].addr > end)
    # Counters of float weights (typeshed types a Counter's counts as int)
    mem: Any = Counter()
    mem_iter: Any = Counter()
    opcodes: Any = Counter()
    for i, ins in enumerate(instrs):
        opcodes[ins.base] += weight[i] * mult[i]
        cls = _MEM_OF.get(ins.base)
        if cls:
            mem[cls] += weight[i] * mult[i]
            if i in main_body:
                mem_iter[cls] += mult[i]
    return {
        "pipes": pipes,
        "pipes_per_iter": per_iter,
        "pipes_prologue": pro,
        "pipes_epilogue": epi,
        "mem": {c: float(mem.get(c, 0.0)) for c in MEM_CLASSES},
        "mem_per_iter": {c: float(mem_iter.get(c, 0.0)) for c in MEM_CLASSES},
        "tensor_flops_per_cta": float(sum(f * w for f, w in zip(flops, weight))),
        "tensor_flops_per_iter": float(sum(flops[i] for i in main_body)),
        "main_loop_trips": int(main_trips),
        "peeled_iters": float(peeled),
        "loops": infos,
        "static_instructions": len(instrs),
        "spill_instructions": sum(1 for ins in instrs if ins.base in ("LDL", "STL")),
        "opcodes": {k: float(v) for k, v in sorted(opcodes.items(), key=lambda kv: -kv[1])},
        "notes": notes,
    }


def _nested(children: list[Loop], depth: int):
    for c in children:
        yield depth, c
        yield from _nested(c.children, depth + 1)


def _info(lp: Loop, instrs, pipe_of, flops, trips, eff, depth) -> LoopInfo:
    static = Counter(pipe_of[i] for i in lp.body)
    return LoopInfo(
        lp.start,
        lp.end,
        len(lp.body),
        int(trips),
        float(eff),
        depth,
        any(flops[i] for i in lp.body),
        {p: int(static.get(p, 0)) for p in PIPES if static.get(p)},
    )


def mix_from_compiled(
    comp: CompiledSass,
    *,
    kernel: str,
    dtype: str,
    config: SassConfig,
    shape: dict[str, Any],
    loop_trips: list[int] | None,
    grid: int,
    analytic_flops: float | None,
    kernel_hash: str = "",
    notes: list[str] | None = None,
) -> InstructionMix:
    t0 = time.perf_counter()
    func = parse_sass(comp.sass, comp.name)
    res = analyze_sass(func, comp.arch, comp.num_warps, loop_trips)
    parse_s = time.perf_counter() - t0
    occ = occupancy(
        comp.arch,
        num_warps=comp.num_warps,
        registers=func.registers,
        shared_bytes=comp.shared_bytes,
        tmem_columns=comp.tmem_columns,
    )
    all_notes = list(notes or []) + res["notes"]
    if occ == 0:
        all_notes.append(f"the CTA does not fit on {comp.arch} (shared memory {comp.shared_bytes} B)")
    return InstructionMix(
        kernel=kernel,
        arch=comp.arch,
        dtype=dtype,
        config=config,
        shape=shape,
        pipes=res["pipes"],
        pipes_per_iter=res["pipes_per_iter"],
        pipes_prologue=res["pipes_prologue"],
        pipes_epilogue=res["pipes_epilogue"],
        mem=res["mem"],
        mem_per_iter=res["mem_per_iter"],
        tensor_flops_per_cta=res["tensor_flops_per_cta"],
        tensor_flops_per_iter=res["tensor_flops_per_iter"],
        tensor_flops_analytic_per_cta=None if analytic_flops is None else float(analytic_flops),
        main_loop_trips=res["main_loop_trips"],
        peeled_iters=res["peeled_iters"],
        registers=func.registers,
        spills=func.stack_bytes,
        spill_instructions=res["spill_instructions"],
        shared_bytes=comp.shared_bytes,
        tmem_columns=comp.tmem_columns,
        occupancy_ctas_per_sm=occ,
        grid=int(grid),
        loops=res["loops"],
        static_instructions=res["static_instructions"],
        opcodes=res["opcodes"],
        specialization=comp.specialization,
        kernel_hash=kernel_hash,
        triton_version=triton_version(),
        compile_s=comp.compile_s,
        disasm_s=comp.disasm_s,
        parse_s=parse_s,
        notes=all_notes,
    )


def instruction_mix(
    builtin_or_kernel: Any,
    arch: str,
    config: SassConfig | str | None = None,
    shape: dict[str, Any] | None = None,
    *,
    dtype: str = "bfloat16",
    args: dict[str, Any] | str | None = None,
    loop_trips: Sequence[int | str] | None = None,
    grid: int | str = 1,
) -> InstructionMix:
    """Compile and analyse a kernel for ``arch``.

    ``builtin_or_kernel``: a builtin name (``fused_moe``, ``gemm``, ``rmsnorm``, ``silu_mul``, ``attention``)
    with ``shape`` (see :func:`default_shape`); or a ``@triton.jit`` function / ``"file.py:name"`` with ``args``
    (launch values, see :func:`specialize`, or the signature text ``"x_ptr=*fp32,n=1024,BLOCK=256"`` of
    :func:`parse_signature`) and optional ``loop_trips`` (source trip count of each top-level loop). For a kernel,
    ``grid`` and ``loop_trips`` may be integers or expressions of the integer arguments (``"cdiv(n, BLOCK)"``).
    """
    arch = normalize_arch(arch)
    if config is None:
        config = SassConfig()
    elif isinstance(config, str):
        config = SassConfig.parse(config)
    if isinstance(builtin_or_kernel, str) and ":" not in builtin_or_kernel:
        name = builtin_or_kernel
        d = normalize_dtype(dtype)
        launch = builtin_launch(name, config, shape, d, arch)
        fn = kernel_function(name)
        comp = compile_kernel(fn, launch.args, arch, num_warps=config.num_warps, num_stages=config.num_stages)
        return mix_from_compiled(
            comp,
            kernel=name,
            dtype=d,
            config=config,
            shape=launch.shape,
            loop_trips=launch.loop_trips,
            grid=launch.grid,
            analytic_flops=launch.tensor_flops_per_cta,
            kernel_hash=kernel_source_hash(name),
            notes=launch.notes,
        )
    from ._compile import load_kernel_file, parse_signature
    from ._launch import eval_launch_expr

    fn = load_kernel_file(builtin_or_kernel) if isinstance(builtin_or_kernel, str) else builtin_or_kernel
    if args is None:
        raise CompileError(
            f"kernel {getattr(fn, '__name__', fn)!r} needs its launch arguments",
            hint="pass args= (a dict, or the text 'NAME=VALUE,...': pointers as *bf16, ints as values)",
        )
    if isinstance(args, str):
        args = parse_signature(fn, args)
    elif not isinstance(args, dict):
        raise DataError(
            f"args must be a dict of launch values or the text 'NAME=VALUE,...', got a {type(args).__name__}",
            hint="e.g. args='x_ptr=*fp32,n=1024,BLOCK=256'",
        )
    grid = eval_launch_expr(grid, args, "grid")
    if grid < 1:
        raise DataError(f"grid must be >= 1 CTA, got {grid!r}", hint="e.g. grid='cdiv(n, BLOCK)' or grid=1024")
    if isinstance(loop_trips, (str, int)):
        loop_trips = [loop_trips]
    trips = None if loop_trips is None else [eval_launch_expr(t, args, "loop_trips") for t in loop_trips]
    if trips is not None and any(t < 0 for t in trips):
        raise DataError(
            f"loop_trips must be >= 0, got {trips}",
            hint="give one count >= 0 per top-level loop, e.g. loop_trips=['cdiv(K, BLOCK_SIZE_K)']",
        )
    comp = compile_kernel(fn, args, arch, num_warps=config.num_warps, num_stages=config.num_stages)
    import hashlib

    try:
        src_hash = hashlib.sha256(fn.src.encode()).hexdigest()[:12]
    except Exception:
        src_hash = ""
    return mix_from_compiled(
        comp,
        kernel=getattr(fn, "__name__", str(fn)),
        dtype=dtype,
        config=config,
        shape=dict(shape or {}),
        loop_trips=trips,
        grid=grid,
        analytic_flops=None,
        kernel_hash=src_hash,
    )
