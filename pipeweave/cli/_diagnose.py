"""`pipeweave diagnose`: performance ceiling, headroom, binding pipe and ranked tile configs of one launch."""

from __future__ import annotations

import argparse

from ._common import add_data_argument, add_gpu_argument, add_launch_arguments, launch_frame, print_json, resolve_gpu_arg

COMMAND = "diagnose"
HELP = "how fast could this Triton kernel be on this GPU, what binds it, and which tile config to try"
DESCRIPTION = HELP + """

For the builtin tiled families (moe_w13, fused_moe, gemm): the predicted latency of the given config,
the learned ceiling (latency of the best config), headroom = measured / ceiling, the binding pipe and
every pipe's utilization (chip time / latency), and the top configs of the GPU's feasible config space
(BM x BN x BK x GROUP_M x warps x stages, filtered by shared memory and registers) ranked by a model
trained on measured tile sweeps, with predicted speedups over the given config.
For your own @triton.jit kernel (--kernel): compiled here for the GPU's arch (needs triton); ceiling
and binding pipe from its SASS instruction mix; --search ranks the num_warps x num_stages variants.

examples:
  pipeweave diagnose --gpu H100 --family moe_w13 --num-tokens 512 --num-experts 64 --topk 8 \\
      --hidden-size 4096 --inter-size 1536 --config 64,64,32,8,4,3 --measured-us 123.4
  pipeweave diagnose --gpu A100 --family moe_w13 --num-tokens 64 --num-experts 8 --topk 2 \\
      --hidden-size 4096 --inter-size 1536 --top 3 --json
  pipeweave diagnose --gpu L40S --kernel my_kernels.py:matmul_kernel --config 64,64,32,8,4,3 \\
      --signature a_ptr=*bf16,b_ptr=*bf16,c_ptr=*bf16,M=4096,N=4096,K=4096 --grid 4096 --trips 128 --search
  pipeweave diagnose --gpu A100 --kernel scale.py:scale --config 1,1024,1,1,4,1 --grid 1024 \
      --signature x_ptr=*fp32,y_ptr=*fp32,n=1048576,BLOCK=1024 --dram-bytes 8388608 --measured-us 20
  pipeweave diagnose --rebuild-models          # retrain models/diagnose_*.ubj (~5 min)
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_gpu_argument(p, required=False)
    add_launch_arguments(p)
    add_data_argument(p)
    p.add_argument("--measured-us", type=float, metavar="US", help="measured latency of this launch (microseconds)")
    p.add_argument("--top", type=int, default=5, help="number of recommended configs (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--models", metavar="DIR", help="folder with diagnose_{ranker,ceiling,latency}.ubj (default models/)")
    g = p.add_argument_group("your own Triton kernel (SASS front-end; needs triton)")
    g.add_argument("--kernel", metavar="FILE.py:NAME", help="a @triton.jit kernel to compile and diagnose")
    g.add_argument("--signature", default="",
                   help="launch arguments NAME=VALUE,... (pointers *bf16/*fp16/*fp32, ints as values); the kernel's "
                        "BLOCK_SIZE_M/N/K and GROUP_SIZE_M constexprs are filled from --config when not given")
    g.add_argument("--grid", type=int, default=1, help="number of CTAs of the launch")
    g.add_argument("--trips", default="", help="source trip count of each top-level loop, comma list")
    g.add_argument("--search", action="store_true", help="compile and rank the num_warps x num_stages variants")
    g.add_argument("--dram-bytes", type=float, metavar="B",
                   help="bytes the launch moves to/from DRAM (bounds the dram pipe; the SASS mix has no byte counts)")
    p.add_argument("--rebuild-models", action="store_true",
                   help="retrain the shipped diagnose models from the measurements (python -m pipeweave.diagnose.build)")


def run(args: argparse.Namespace) -> int:
    from .._errors import DataError

    if args.rebuild_models:
        from ..diagnose.build import build_models

        paths = build_models(args.data, args.models, progress=not args.json)
        if args.json:
            print_json({k: str(v) for k, v in paths.items()})
        return 0
    if not args.gpu:
        raise DataError("pipeweave diagnose needs --gpu", hint="e.g. --gpu H100 (see `pipeweave gpus`)")
    spec = resolve_gpu_arg(args.gpu)
    if args.kernel:
        from ..diagnose import diagnose_kernel

        try:
            trips = [int(t) for t in args.trips.split(",") if t.strip()] or None
        except ValueError:
            raise DataError(f"--trips {args.trips!r} is not a comma list of integers", hint="e.g. --trips 128") from None
        res = diagnose_kernel(args.kernel, spec, args.config, signature=args.signature, grid=args.grid, trips=trips,
                              dtype=args.dtype, measured_us=args.measured_us, top=args.top, search=args.search,
                              dram_bytes=args.dram_bytes)
    else:
        from ..diagnose import DiagnoseModels, diagnose

        if not args.family:
            raise DataError("pipeweave diagnose needs --family (moe_w13, fused_moe, gemm) or --kernel FILE.py:NAME",
                            hint="e.g. --family moe_w13 --num-tokens 512 --num-experts 64 --topk 8 "
                                 "--hidden-size 4096 --inter-size 1536")
        row = launch_frame(args, spec)
        models = DiagnoseModels.load(args.models)
        res = diagnose(row, measured_us=args.measured_us, top=args.top, gpus={spec.name: spec}, models=models,
                       data=args.data)
    if args.json:
        print_json(res)
    else:
        _print(res)
    return 0


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x:,.2f} us"


def _print(r: dict) -> None:
    what = r.get("kernel") or f"{r['family']} {r['dtype']}"
    shape = " ".join(f"{k}={v:g}" for k, v in r.get("shape", {}).items())
    print(f"{what} on {r['gpu']} ({r['generation']})" + (f"  {shape}" if shape else ""))
    origin = f" ({r['config_origin']})" if r.get("config_origin") else ""
    print(f"  config       {r['config']}{origin}   [BM,BN,BK,GROUP_M,warps,stages]")
    print(f"  predicted    {_us(r['predicted_us'])}" + (f"   measured {_us(r['measured_us'])}" if r.get("measured_us") else ""))
    print(f"  ceiling      {_us(r['ceiling_us'])}   ({r['ceiling_method']})")
    if r.get("headroom") is not None:
        print(f"  headroom     {r['headroom']:.2f}x measured/ceiling  ({r['headroom_pct']:.1f}% of the measured time "
              f"is above the ceiling)" + ("  -> at the ceiling" if r.get("at_ceiling") else ""))
    elif r.get("predicted_headroom") is not None:
        print(f"  headroom     {r['predicted_headroom']:.2f}x predicted/ceiling (no measurement given)")
    print(f"  bound pipe   {r['bound_pipe']}")
    util = r["pipe_utilization"]
    times = r["pipe_times_us"]
    print(f"  {'pipe':<9}{'time us':>12}{'utilization':>13}   (of the {r['utilization_basis']} latency)")
    for p in sorted(util, key=lambda k: -util[k]):
        print(f"  {p:<9}{times[p]:>12.3f}{100 * util[p]:>12.1f}%")
    recs = r.get("recommendations") or []
    if recs:
        print(f"  top {len(recs)} configs" + (f" of {r['n_candidates']} feasible" if r.get("n_candidates") else "") + ":")
        print(f"  {'#':>3}  {'config':<20}{'predicted':>14}{'speedup':>9}")
        for c in recs:
            mark = "  (given)" if c.get("is_given") else ""
            print(f"  {c['rank']:>3}  {c['config']:<20}{_us(c['predicted_us']):>14}{c['speedup']:>8.2f}x{mark}")
    if r.get("given_config_rank"):
        print(f"  the given config ranks {r['given_config_rank']} of {r['n_candidates']}")
    for n in r.get("notes", []):
        print(f"  note: {n}")
