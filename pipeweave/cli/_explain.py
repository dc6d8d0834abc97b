"""`pipeweave explain`: the analytical view of one launch (tile plan, per-pipe work and time)."""

from __future__ import annotations

import argparse

from ._common import (
    add_data_argument,
    add_gpu_argument,
    add_launch_arguments,
    check_plot_path,
    launch_frame,
    print_json,
    resolve_gpu_arg,
    save_plot,
)

COMMAND = "explain"
HELP = "show the resolved tile plan, per-pipe work and time, the binding pipe, roofline and tilesight latencies"
DESCRIPTION = (
    HELP
    + """

example:
  pipeweave explain --gpu H100 --family gemm --dtype bfloat16 --m 4096 --n 4096 --k 4096
  pipeweave explain --gpu L4 --family rmsnorm --num-tokens 4096 --hidden-size 4096 --plot /tmp/rmsnorm_l4.png
  pipeweave explain --gpu T4 --family gemm_fp32 --op linear --m 64 --n 1024 --k 8192   # the kernel predict assumes
  pipeweave explain --gpu B300 --family fused_moe --num-tokens 256 --hidden-size 7168 --inter-size 2048 \\
      --topk 8 --num-experts 256 --moe-ep-size 8
  pipeweave explain --gpu H100 --kernel examples/triton_kernels.py:add_relu --config 1,1024,1,1,4,1 --grid 'cdiv(n, BLOCK)' \\
      --signature 'x_ptr=*fp32[16777216],y_ptr=*fp32[16777216],out_ptr=*fp32[16777216],n=16777216,BLOCK=1024'
"""
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_gpu_argument(p)
    add_launch_arguments(p)
    add_data_argument(p)
    from ._diagnose import add_kernel_arguments

    add_kernel_arguments(p)  # --kernel FILE.py:NAME: a user's Triton kernel through the SASS front-end
    p.add_argument(
        "--model",
        metavar="PATH",
        help="an FP32 GEMM launch without a tile (cuBLAS chooses its kernel) is explained with the kernel this model "
        "predicts it with, as predict does (default: models/pipeweave_default.ubj; 'none': the front-end's heuristic "
        "tile, the smallest envelope); other launches never read it",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also draw each pipe's busiest-SM time, the binding one apart, against the lower bound and envelope "
        "(--kernel: see pipeweave diagnose --plot)",
    )


from ..api import explain_launch  # noqa: E402  (the public API; kept importable from here)


def run(args: argparse.Namespace) -> int:
    from .._errors import DataError

    if args.plot:
        if getattr(args, "kernel", None):
            raise DataError(
                "explain --plot draws a builtin family's launch; a --kernel launch is drawn by diagnose",
                hint="run the same flags as pipeweave diagnose ... --plot FILE.png",
            )
        check_plot_path(args.plot, [args.gpu or ""], "explain.png")
    if getattr(args, "kernel", None):
        from ._diagnose import run_kernel

        return run_kernel(args, "explain")
    spec = resolve_gpu_arg(args.gpu)
    model = getattr(args, "model", None)
    chooser = False if model is not None and str(model).strip().lower() == "none" else model  # None: shipped
    ex = explain_launch(launch_frame(args, spec), spec, data=args.data, model=chooser)
    if args.json:
        print_json(ex)
    else:
        _print_explanation(ex)
    if args.plot:
        import sys

        from ..diagnose import plot_pipes

        save_plot(plot_pipes(ex).figure, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _print_explanation(ex: dict) -> None:
    """The text form of one explanation."""
    tp = ex["tile_plan"]
    print(f"{ex['family']} {ex['dtype']} on {ex['gpu']}")
    fields = [("BM", "block_m"), ("BN", "block_n"), ("BK", "block_k"), ("GROUP_M", "group_m")]
    fields += [("warps", "num_warps"), ("stages", "num_stages"), ("split_k", "split_k")]
    # a row kernel has no K tile (one CTA per token): its blank tile fields are left out, not printed as nan
    plan = " ".join(f"{label}={tp[key]:.0f}" for label, key in fields if _finite(tp.get(key)))
    print(f"  tile plan    {plan}  ({tp['origin']})")
    print(
        f"  grid         {ex['grid_ctas']:.0f} CTAs, {ex['ctas_per_sm']:.0f} per SM, {ex['waves']:.2f} waves "
        f"(efficiency {ex['wave_efficiency']:.2f}), occupancy {ex['occupancy']:.2f}"
    )
    print(f"  {'pipe':<8}{'work':>16}{'chip us':>12}{'busiest SM us':>16}")
    for name, p in ex["pipes"].items():
        print(f"  {name:<8}{p['work']:>16.4g}{p['time_us']:>12.3f}{p['busiest_sm_time_us']:>16.3f}")
    print(f"  {'latency':<8}{'':>16}{'':>12}{ex['latency_bound_us']:>16.3f}")
    print(f"  bound pipe   {ex['bound_pipe']}")
    print(f"  envelope     {ex['envelope_us']:.3f} us   lower bound {ex['lower_bound_us']:.3f} us")
    print(f"  warm L2      {ex['warm_l2_envelope_us']:.3f} us (envelope of a replay that finds its operands in L2)")
    print(f"  roofline     {ex['roofline_us']:.3f} us   tilesight {ex['tilesight_us']:.3f} us")


def _finite(v: object) -> bool:
    """Whether ``v`` is a finite number (a blank tile field is NaN or None)."""
    import math

    return isinstance(v, (int, float)) and math.isfinite(v)
