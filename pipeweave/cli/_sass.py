"""``pipeweave sass``: per-pipe dynamic instruction counts of a compiled Triton kernel (SASS front-end)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

COMMAND = "sass"
HELP = "compile a Triton kernel for an arch (no GPU needed) and print its per-pipe SASS instruction mix"
DESCRIPTION = """\
Compile a builtin kernel (fused_moe, gemm, rmsnorm, silu_mul, attention) or your own @triton.jit kernel
for a target arch on this machine (no GPU needed), disassemble it and print the dynamic warp-instructions
per CTA of every execution pipe (tensor, fma, alu, xu, fp64, lsu, tma, tmem, uniform, control), the loop
structure with trip counts from the launch shape, registers, spills, shared memory and occupancy.
Needs triton (pip install 'pipeweave[sass]'), except --cached, which reads the shipped cache.

examples:
  pipeweave sass --builtin gemm --arch sm_90 --config 128,128,64,8,4,3 --m 4096 --n 4096 --k 4096
  pipeweave sass --builtin fused_moe --arch sm_80 --config 64,64,32,8,4,3 --num-tokens 512 \\
      --num-experts 64 --topk 8 --hidden-size 4096 --inter-size 1536 --json
  pipeweave sass --builtin fused_moe --arch sm_90 --config 64,64,32,8,4,3 --cached
  pipeweave sass --kernel examples/triton_kernels.py:add_relu --arch sm_89 --config 1,1024,1,1,4,1 \\
      --signature x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=1048576,BLOCK=1024 --grid 1024
  pipeweave sass --build-cache --groups defaults,dse --time-budget 1800
  pipeweave sass --build-cache --groups dse_groupm --dask local:2   # compile jobs as Dask tasks
"""

_DEFAULT_CONFIG = {
    "gemm": "128,128,64,8,4,3",
    "fused_moe": "64,64,32,8,4,3",
    "rmsnorm": "1,1024,1,1,4,1",
    "silu_mul": "1,1024,1,1,4,1",
    "attention": "128,64,1,1,4,2",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--builtin", choices=sorted(_DEFAULT_CONFIG), help="one of the project's own Triton kernels")
    what.add_argument("--kernel", metavar="FILE.py:NAME", help="your own @triton.jit kernel")
    what.add_argument(
        "--build-cache",
        action="store_true",
        help="(re)build the shipped cache features/sass/instruction_mix.csv (resumes)",
    )
    p.add_argument("--arch", help="target arch: sm_80, sm_86, sm_89, sm_90, sm_100, sm_103, sm_120 (or 9.0 ...)")
    p.add_argument("--gpu", help="GPU name instead of --arch (A100 -> sm_80, H100 -> sm_90a, B200 -> sm_100a ...)")
    p.add_argument(
        "--config",
        metavar="BM,BN,BK,GM,WARPS,STAGES",
        help="tile plan; default per builtin (gemm 128,128,64,8,4,3; fused_moe 64,64,32,8,4,3; "
        "rmsnorm/silu_mul use BLOCK_N and WARPS; attention BLOCK_M, BLOCK_N)",
    )
    p.add_argument(
        "--dtype", default=None, help="bfloat16 (default for builtins), float16, fp8 (e4m3, sm_89+), fp8_block"
    )
    g = p.add_argument_group("shape (gemm)")
    g.add_argument("--m", type=int)
    g.add_argument("--n", type=int)
    g.add_argument("--k", type=int)
    g = p.add_argument_group("shape (fused_moe; rmsnorm/silu_mul use --num-tokens, --hidden-size / --inter-size)")
    g.add_argument("--num-tokens", type=int)
    g.add_argument("--num-experts", type=int)
    g.add_argument("--topk", type=int)
    g.add_argument("--hidden-size", type=int)
    g.add_argument("--inter-size", type=int)
    g.add_argument("--mul-routed-weight", action="store_true", help="multiply by the routed weights (the W2 pass)")
    g = p.add_argument_group("shape (attention)")
    g.add_argument("--batch-size", type=int)
    g.add_argument("--num-heads", type=int)
    g.add_argument("--seq-len", type=int)
    g.add_argument("--head-dim", type=int)
    g = p.add_argument_group("your own kernel (--kernel)")
    g.add_argument(
        "--signature",
        default="",
        help="launch arguments NAME=VALUE,...: pointers as *bf16/*fp16/*fp32/*fp8e4nv, ints as values "
        "(specialised like the JIT: 1 -> constexpr, multiple of 16 -> divisible), constexprs as values; "
        "BLOCK_SIZE_M/N/K and GROUP_SIZE_M (or BLOCK_M/N/K, GROUP_M) are filled from --config when not "
        "given, as in `pipeweave diagnose --kernel`",
    )
    g.add_argument(
        "--trips",
        default="",
        help="source trip count of each top-level loop, comma list of integers or expressions (default 1)",
    )
    g.add_argument(
        "--grid",
        default="1",
        help="number of CTAs, for per-kernel totals: an integer or an expression such as 'cdiv(n, BLOCK)'",
    )
    p.add_argument("--cached", action="store_true", help="read the shipped cache instead of compiling (no triton)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    g = p.add_argument_group("--build-cache options")
    g.add_argument("--groups", default="defaults,dse,sglang,dse_groupm", help="job groups to build")
    g.add_argument("--time-budget", type=float, default=None, metavar="S", help="stop after S seconds")
    g.add_argument("--max-jobs", type=int, default=None, help="compile at most this many missing jobs")
    g.add_argument("--flush-every", type=int, default=25, help=argparse.SUPPRESS)
    g.add_argument("--plan", action="store_true", help="only count the jobs per group")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="compile the jobs as Dask tasks: local[:N] = N local worker processes, or a scheduler "
        "address tcp://HOST:8786 (each worker needs triton; needs pipeweave[dask])",
    )
    p.add_argument("--data", help=argparse.SUPPRESS)


def _shape(args: argparse.Namespace) -> dict[str, Any]:
    keys = [
        "m",
        "n",
        "k",
        "num_tokens",
        "num_experts",
        "topk",
        "hidden_size",
        "inter_size",
        "batch_size",
        "num_heads",
        "seq_len",
        "head_dim",
    ]
    out = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    if getattr(args, "mul_routed_weight", False):
        out["mul_routed_weight"] = True
    return out


def _arch(args: argparse.Namespace) -> str:
    from .._errors import DataError
    from ..frontend.sass import arch_for_gpu, normalize_arch

    if args.arch and args.gpu:
        want, have = normalize_arch(args.arch), arch_for_gpu(args.gpu)
        if want != have:
            raise DataError(
                f"--gpu {args.gpu} compiles for {have}, but --arch {args.arch} asks for {want}",
                hint=f"give one of them (--arch {want}, or --gpu {args.gpu})",
            )
        return want
    if args.arch:
        return normalize_arch(args.arch)
    if args.gpu:
        return arch_for_gpu(args.gpu)
    raise DataError("pipeweave sass needs --arch (or --gpu)", hint="e.g. --arch sm_90")


#: builtin kernels whose instruction mixes the committed SASS cache holds (features/sass; the rest compile on demand)
_CACHED_BUILTINS: tuple[str, ...] = ("gemm", "fused_moe")


def _check_fits(builtin: str, arch: str, cfg, dtype: str) -> None:  # noqa: ANN001
    """Refuse, before compiling (minutes), a builtin tile config that fits no catalog GPU of ``arch``."""
    import pandas as pd

    from .._errors import DataError
    from ..diagnose import config_fits, smem_bytes
    from ..hardware import list_gpus

    if builtin not in ("gemm", "fused_moe", "moe_w13"):
        return
    arch_num = int(arch.removeprefix("sm_").rstrip("a")) if arch.removeprefix("sm_").rstrip("a").isdigit() else None
    specs = [g for g in list_gpus() if arch_num is not None and g.sm_arch == arch_num]
    if not specs:
        return
    row = pd.DataFrame(
        [dict(zip(("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"), map(float, cfg.as_tuple())))]
    )
    if any(bool(config_fits(row, g, dtype)[0]) for g in specs):
        return
    roomy = max(specs, key=lambda g: g.smem_per_cta_kib)
    need = float(smem_bytes(row, dtype, roomy)[0]) / 1024.0
    raise DataError(
        f"config {','.join(str(v) for v in cfg.as_tuple())} fits no {arch} GPU of the catalog (it needs "
        f"{need:.0f} KiB of shared memory per CTA, {roomy.name} has {roomy.smem_per_cta_kib:g} KiB; or too many "
        "registers / tensor-memory columns)",
        hint="use smaller BLOCK_M/N/K or fewer stages, e.g. --config 128,128,64,8,4,3",
    )


def _check_shape(builtin: str, shape: dict[str, Any]) -> None:
    """Refuse launch numbers that `diagnose` / `predict` refuse too: sizes below 1, topk above num_experts."""
    from .._errors import DataError
    from ..frontend.sass import default_shape

    for k, v in shape.items():
        if k != "mul_routed_weight" and v < 1:
            raise DataError(f"--{k.replace('_', '-')} must be >= 1, got {v}", hint=f"e.g. --{k.replace('_', '-')} 64")
    full = {**default_shape(builtin), **shape}
    if "topk" in full and "num_experts" in full and full["topk"] > full["num_experts"]:
        raise DataError(
            f"--topk {full['topk']} is more than --num-experts {full['num_experts']}: each token picks topk "
            "distinct experts",
            hint="give --topk <= --num-experts",
        )


def _note_ignored(args: argparse.Namespace) -> None:
    """One ``note:`` line on stderr per flag the chosen kernel does not use (instead of silently ignoring it)."""
    from ..frontend.sass import default_shape

    if args.builtin:
        used = set(default_shape(args.builtin))
        for flag, val in (("--signature", args.signature), ("--trips", args.trips)):
            if val:
                print(f"note: {flag} is for --kernel; --builtin {args.builtin} ignores it", file=sys.stderr)
        if str(args.grid).strip() != "1":
            print(
                f"note: --grid is for --kernel; --builtin {args.builtin} derives its grid from the shape",
                file=sys.stderr,
            )
        what = f"--builtin {args.builtin}"
    else:
        used = set()
        what = f"--kernel {args.kernel} (its launch is --signature/--grid/--trips)"
    unused = [k for k in _shape(args) if k not in used]
    if unused:
        flags = " ".join("--" + k.replace("_", "-") for k in unused)
        print(f"note: {flags} {'is' if len(unused) == 1 else 'are'} not used by {what}: ignored", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from .._errors import DataError
    from ._common import print_json

    if args.build_cache:
        from ..frontend.sass.build_cache import run_build

        return run_build(args)
    if not args.builtin and not args.kernel:
        raise DataError(
            "pipeweave sass needs --builtin NAME or --kernel FILE.py:NAME (or --build-cache)",
            hint="e.g. pipeweave sass --builtin gemm --arch sm_90",
        )
    from ..frontend import sass as S

    arch = _arch(args)
    cfg = S.SassConfig.parse(args.config or _DEFAULT_CONFIG.get(args.builtin or "", "64,64,32,8,4,3"))
    if args.cached:
        if not args.builtin:
            raise DataError(
                "--cached works only with --builtin (the cache holds builtin kernels)",
                hint=f"e.g. pipeweave sass --builtin gemm --cached, or drop --cached to compile --kernel "
                f"{args.kernel} (needs triton)",
            )
        dtype = args.dtype or "bfloat16"
        if args.builtin not in _CACHED_BUILTINS:
            raise DataError(
                f"the SASS cache holds {list(_CACHED_BUILTINS)} mixes only, not {args.builtin!r}",
                hint=f"drop --cached to compile {args.builtin} (needs triton)",
            )
        row = S.cached_mix_row(args.builtin, arch, dtype, cfg)
        exact = True
        if row is None:
            row = S.cached_mix_row(args.builtin, arch, dtype, cfg, exact_group_m=False)
            exact = False
        if row is None:
            raise DataError(
                f"no cached mix for {args.builtin} {arch} {dtype} config {args.config or cfg.as_tuple()}",
                hint="drop --cached to compile it (needs triton), or rebuild the cache: pipeweave sass --build-cache",
            )
        row = {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
        row["group_m_exact"] = exact
        if args.json:
            print_json(row)
        else:
            _print_cached(row)
        asked = _shape(args)
        if asked:  # the cache holds one reference shape per kernel: say that the asked one was not used
            shown = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in asked.items())
            print(
                f"note: --cached reports the mix compiled at the cache's reference shape, not at {shown}; "
                "drop --cached to compile for that shape (needs triton)",
                file=sys.stderr,
            )
        return 0
    _note_ignored(args)
    trips_warning = ""
    if args.builtin:
        shape = _shape(args)
        _check_shape(args.builtin, shape)
        _check_fits(args.builtin, arch, cfg, args.dtype or "bfloat16")
        mix = S.instruction_mix(args.builtin, arch, cfg, shape, dtype=args.dtype or "bfloat16")
    else:
        from ..diagnose import eval_launch_expr, fill_block_constants, split_signature_shapes
        from ..frontend.sass import load_kernel_file, parse_signature
        from ._diagnose import _split_top

        sig, _ = split_signature_shapes(args.signature)  # shapes only matter to `diagnose` (DRAM bytes)
        fn = load_kernel_file(args.kernel)
        kargs = fill_block_constants(fn, parse_signature(fn, sig), cfg)  # same as `diagnose --kernel`
        grid = eval_launch_expr(args.grid, kargs, "--grid")
        if grid < 1:
            raise DataError(
                f"--grid {args.grid!r} = {grid}: a launch needs >= 1 CTA", hint="e.g. --grid 'cdiv(n, BLOCK)'"
            )
        trips = [eval_launch_expr(t, kargs, "--trips") for t in _split_top(args.trips) if t.strip()] or None
        if trips is not None and any(t < 0 for t in trips):
            raise DataError(
                f"--trips {args.trips!r} = {trips}: trip counts must be >= 0",
                hint="give one count >= 0 per top-level loop, e.g. --trips 'cdiv(K, BLOCK_SIZE_K)'",
            )
        mix = S.instruction_mix(fn, arch, cfg, {}, dtype=args.dtype or "-", args=kargs, loop_trips=trips, grid=grid)
        n_loops = sum(1 for lp in mix.loops if lp.depth == 0)
        if n_loops > len(trips or []):
            trips_warning = (
                f"the kernel has {n_loops} top-level loop(s) but --trips gives {len(trips or [])} trip count(s): "
                "each loop without one is counted ONCE, so the per-CTA and per-kernel counts are for a single trip "
                "(too low by about its trip count); give --trips, e.g. --trips 'cdiv(K, BLOCK_SIZE_K)'"
            )
    if args.json:
        if trips_warning:
            print(f"warning: {trips_warning}", file=sys.stderr)
            d = mix.to_dict()
            d["trips_missing"] = True
            d["warnings"] = [trips_warning]
            print_json(d)
            return 0
        print_json(mix.to_dict())
    else:
        if trips_warning:
            print(f"WARNING: {trips_warning}")
        _print_mix(mix)
    return 0


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e7:
        return f"{v:.3e}"
    return f"{v:,.1f}".rstrip("0").rstrip(".")


def _print_mix(mix: Any) -> None:
    c = mix.config
    print(
        f"kernel {mix.kernel}  arch {mix.arch}  dtype {mix.dtype}  config BM={c.block_m} BN={c.block_n} "
        f"BK={c.block_k} GM={c.group_m} warps={c.num_warps} stages={c.num_stages}"
    )
    if mix.shape:
        print("shape  " + "  ".join(f"{k}={v}" for k, v in mix.shape.items()))
    print(
        f"registers {mix.registers}/thread  spills {mix.spills} B stack ({mix.spill_instructions} LDL/STL)  "
        f"shared {mix.shared_bytes} B  tmem {mix.tmem_columns} cols  occupancy {mix.occupancy_ctas_per_sm} CTA/SM  "
        f"grid {mix.grid} CTAs"
    )
    print(
        f"compile {mix.compile_s:.2f} s  disassemble {mix.disasm_s:.2f} s  parse {mix.parse_s:.3f} s  "
        f"(triton {mix.triton_version}, {mix.static_instructions} static instructions)"
    )
    print()
    print("dynamic warp-instructions")
    hdr = f"  {'pipe':8s} {'per CTA':>14s} {'per iter':>10s} {'prologue':>10s} {'epilogue':>10s} {'per kernel':>14s}"
    print(hdr)
    per_kernel = mix.pipes_per_kernel
    for p, v in mix.pipes.items():
        if v == 0 and mix.pipes_per_iter[p] == 0:
            continue
        print(
            f"  {p:8s} {_fmt(v):>14s} {_fmt(mix.pipes_per_iter[p]):>10s} {_fmt(mix.pipes_prologue[p]):>10s} "
            f"{_fmt(mix.pipes_epilogue[p]):>10s} {_fmt(per_kernel[p]):>14s}"
        )
    tot = sum(mix.pipes.values())
    print(f"  {'total':8s} {_fmt(tot):>14s} {_fmt(sum(mix.pipes_per_iter.values())):>10s}")
    print()
    print(
        f"tensor FLOPs per CTA {mix.tensor_flops_per_cta:.6g}"
        + (
            f" (analytic {mix.tensor_flops_analytic_per_cta:.6g})"
            if mix.tensor_flops_analytic_per_cta is not None
            else ""
        )
        + f", per main-loop iteration {mix.tensor_flops_per_iter:.6g}"
    )
    mem = {k: v for k, v in mix.mem.items() if v}
    if mem:
        print("memory instructions per CTA  " + "  ".join(f"{k} {_fmt(v)}" for k, v in mem.items()))
    print()
    if mix.loops:
        print("loops")
        print(
            f"  {'start':>7s} {'end':>7s} {'depth':>5s} {'static':>7s} {'trips':>6s} {'effective':>9s}  mma  static pipes"
        )
        for lp in mix.loops:
            sp = " ".join(f"{k}:{v}" for k, v in lp.static_pipes.items())
            print(
                f"  0x{lp.start:05x} 0x{lp.end:05x} {lp.depth:5d} {lp.static_instructions:7d} {lp.trips:6d} "
                f"{lp.trips_effective:9g}  {'yes' if lp.contains_mma else 'no ':3s}  {sp}"
            )
    else:
        print("loops: none")
    for n in mix.notes:
        print(f"note: {n}")


def _print_cached(row: dict[str, Any]) -> None:
    from ..frontend.sass import PIPES

    print(
        f"cached {row['kernel']} arch {row['arch']} dtype {row['dtype']} config BM={row['block_m']} "
        f"BN={row['block_n']} BK={row['block_k']} GM={row['group_m']} warps={row['num_warps']} "
        f"stages={row['num_stages']}" + ("" if row.get("group_m_exact") else "  (nearest GROUP_M)")
    )
    print(
        f"registers {row['registers']}  spills {row['spills']} B  shared {row['shared_bytes']} B  "
        f"occupancy {row['occupancy_ctas_per_sm']} CTA/SM  peeled iterations {row['peeled_iters']}"
    )
    print(f"tensor FLOPs per main-loop iteration per CTA {float(row['tensor_flops_per_iter']):.6g}")
    print(f"  {'pipe':8s} {'per iter':>10s} {'prologue':>10s} {'epilogue':>10s}")
    for p in PIPES:
        vals = [float(row.get(f"{p}_{part}") or 0) for part in ("per_iter", "prologue", "epilogue")]
        if any(vals):
            print(f"  {p:8s} " + " ".join(f"{_fmt(v):>10s}" for v in vals))
    print("per CTA = prologue + epilogue + per_iter * (cdiv(K, BLOCK_K) - peeled iterations)")
