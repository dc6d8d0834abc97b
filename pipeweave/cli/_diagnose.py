"""`pipeweave diagnose`: performance ceiling, headroom, binding pipe and ranked tile configs of one launch."""

from __future__ import annotations

import argparse
import math
import sys

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

COMMAND = "diagnose"
HELP = "how fast could this Triton kernel be on this GPU, what binds it, and which tile config to try"
DESCRIPTION = (
    HELP
    + """

For the builtin tiled families (moe_w13, fused_moe, gemm): the predicted latency of the given config,
the analytical lower bound, the learned ceiling (latency of the best config), the binding pipe and every
pipe's utilization (chip time / latency), and the best configs of the GPU's feasible config space
(BM x BN x BK x GROUP_M x warps x stages, filtered by shared memory, registers and tensor memory)
shortlisted by a model trained on measured tile sweeps (gemm: by the latency model's prediction of every
feasible config), with predicted speedups over the given config.
For your own @triton.jit kernel (--kernel): compiled here for the GPU's arch (needs triton); ceiling
and binding pipe from its SASS instruction mix and the compulsory DRAM bytes of its pointer arguments;
--search ranks num_warps x num_stages (and block-size) variants.

examples:
  pipeweave diagnose --gpu H100 --family moe_w13 --num-tokens 512 --num-experts 64 --topk 8 \\
      --hidden-size 3584 --inter-size 2560 --measured-us 805.6     # measured: pipeweave/moe_w13/H100.csv
  pipeweave diagnose --gpu A100 --family moe_w13 --num-tokens 64 --num-experts 8 --topk 2 \\
      --hidden-size 4096 --inter-size 1536 --top 3 --json
  pipeweave diagnose --gpu H200 --family gemm --m 4096 --n 4096 --k 4096 --config 128,128,64,8,4,3 \\
      --measured-us 208.3 --plot /tmp/diagnosis.png     # + a picture: pipe times and the ranked configs
  pipeweave diagnose --gpu L40S --kernel examples/triton_kernels.py:matmul_kernel --config 64,64,32,8,4,3 \\
      --signature 'a_ptr=*bf16[4096x4096],b_ptr=*bf16[4096x4096],c_ptr=*bf16[4096x4096],M=4096,N=4096,K=4096' \\
      --grid 'cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)' --trips 'cdiv(K, BLOCK_SIZE_K)' \\
      --search --max-variants 12     # each variant is compiled here (~1-2 s); without the cap, all of them
  pipeweave diagnose --gpu H100 --kernel examples/triton_kernels.py:add_relu --config 1,1024,1,1,4,1 \\
      --signature 'x_ptr=*fp32[16777216],y_ptr=*fp32[16777216],out_ptr=*fp32[16777216],n=16777216,BLOCK=1024' \\
      --grid 'cdiv(n, BLOCK)' --measured-us 70 --search
  pipeweave diagnose --rebuild-models --models /tmp/pw_models   # retrain the diagnose models (~5 min)
  pipeweave diagnose --rebuild-models --force   # refresh the committed models/diagnose_*.ubj on purpose
  pipeweave diagnose --rebuild-models --profiles my_sweeps.csv --models /tmp/my_models   # + your tile sweeps

The ranked list is one order: the shortlist (moe_w13 / fused_moe: the config ranker's best-scored configs; gemm:
the fastest predicted of every feasible config) plus the given config, sorted by predicted latency;
speedup = given / candidate. A measurement below the analytical lower bound is flagged (wrong units or
shape?) instead of being turned into utilizations. No headroom percentage is printed: in the dse
validation the measured/ceiling ratio was less accurate than assuming no headroom, so only whether the
measurement lies beyond the ceiling's held-out error is reported (the shipped models' error, from the dse
report: models built in another folder, e.g. from your own rows, have no validated error and claim no headroom).
"""
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_gpu_argument(p, required=False)
    add_launch_arguments(p)
    add_data_argument(p)
    p.add_argument("--measured-us", type=float, metavar="US", help="measured latency of this launch (microseconds)")
    p.add_argument("--top", type=int, default=5, help="number of recommended configs (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also draw the diagnosis: each pipe's time against the lower bound, ceiling, predicted and measured "
        "latency, and the ranked configs",
    )
    p.add_argument(
        "--models",
        metavar="DIR",
        help="folder with diagnose_{ranker,ceiling,latency}.ubj and the main model pipeweave_default.ubj (default "
        "models/); a folder without the main model uses the shipped one, a folder with only a main model (e.g. "
        "trained with --profiles on your GEMM tile sweeps) uses it with the shipped diagnose models",
    )
    g = add_kernel_arguments(p)
    g.add_argument(
        "--search",
        action="store_true",
        help="compile and rank num_warps x num_stages variants, and BLOCK* constexprs x 1/2, 2, 4 when --grid "
        "is an expression of them (up to ~150 compiles of a few seconds each: see --max-variants)",
    )
    g.add_argument(
        "--max-variants",
        type=int,
        metavar="N",
        default=None,
        help="--search: compile at most N variants, those nearest the given config first (default: all)",
    )
    g.add_argument("--no-progress", action="store_true", help="--search: no progress bar on stderr")
    p.add_argument(
        "--rebuild-models",
        action="store_true",
        help="retrain the diagnose models from the measurements into --models (python -m pipeweave.diagnose.build)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="--rebuild-models: write into a folder that holds committed model files (default: refuse)",
    )
    p.add_argument(
        "--profiles",
        nargs="+",
        metavar="FILE",
        default=None,
        help="--rebuild-models: your own canonical profile files (see `pipeweave profiles -h`): moe_w13 tile sweeps "
        "(e.g. an imported Triton autotune cache) and default-config launches, added to the shared measurements",
    )
    p.add_argument("--no-shared", action="store_true", help="--rebuild-models: train on the --profiles rows only")


def add_kernel_arguments(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The ``--kernel`` options shared by ``diagnose``, ``explain`` and ``predict`` (a user's @triton.jit kernel)."""
    g = p.add_argument_group("your own Triton kernel (SASS front-end; needs triton)")
    g.add_argument("--kernel", metavar="FILE.py:NAME", help="a @triton.jit kernel to compile (no GPU needed)")
    g.add_argument(
        "--signature",
        default="",
        help="launch arguments NAME=VALUE,... (pointers *bf16/*fp16/*fp32, with the array shape for DRAM traffic: "
        "x_ptr=*fp32[16777216], w_ptr=*bf16[4096x4096]; ints as values); the kernel's "
        "BLOCK_SIZE_M/N/K and GROUP_SIZE_M constexprs are filled from --config when not given",
    )
    g.add_argument(
        "--grid",
        default=None,
        help="number of CTAs: an integer or an expression of the integer arguments, e.g. 'cdiv(n, BLOCK)' "
        "(default 1, with a note: the kernel's work is then one CTA's)",
    )
    g.add_argument(
        "--trips",
        default="",
        help="source trip count of each top-level loop, comma list (integers or expressions, e.g. 'cdiv(K, BLOCK_K)')",
    )
    g.add_argument(
        "--dram-bytes",
        type=float,
        metavar="B",
        help="bytes the launch moves to/from DRAM (default: the sum of the pointer shapes in --signature)",
    )
    return g


def _grid(args: argparse.Namespace) -> str:
    """--grid, or "1" with a note on stderr when it was not given (one CTA's work is rarely the launch's)."""
    if args.grid is None:
        print(
            "note: --grid not given: the launch is taken as 1 CTA (pass --grid, e.g. 'cdiv(n, BLOCK)', for the "
            "kernel's real work)",
            file=sys.stderr,
        )
        return "1"
    return str(args.grid)


#: library wording (Python arguments) -> command-line wording, for the notes of ``diagnose_kernel``
_CLI_WORDS: tuple[tuple[str, str], ...] = (
    ("call with search=True", "pass --search"),
    ("search=True", "--search"),
    ("the trips argument", "--trips"),
    ("the signature argument", "--signature"),
    ("the dram_bytes argument", "--dram-bytes"),
    ("(max_variants)", "(--max-variants)"),
    ("give the grid as an expression", "give --grid as an expression"),
    ("pointer shapes in the signature", "pointer shapes in --signature"),
)


def cli_wording(text: str, command: str = "diagnose") -> str:
    """A library note in command-line words (``search=True`` -> ``--search``); ``explain``/``predict`` have no
    ``--search``, so their notes point at ``pipeweave diagnose --kernel ... --search``."""
    if command != "diagnose":
        text = text.replace("call with search=True", "run `pipeweave diagnose --kernel ... --search`")
    for lib, cli in _CLI_WORDS:
        text = text.replace(lib, cli)
    return text


def _cli_result(res: dict, command: str = "diagnose") -> dict:
    """``res`` with its notes, warnings and sources in command-line words."""
    out = dict(res)
    for key in ("notes", "warnings"):
        if out.get(key):
            out[key] = [cli_wording(n, command) for n in out[key]]
    if isinstance(out.get("dram_bytes_source"), str):
        out["dram_bytes_source"] = cli_wording(out["dram_bytes_source"], command)
    return out


def _note_unused_shape_flags(args: argparse.Namespace, used: tuple[str, ...], what: str) -> None:
    """One ``note:`` line on stderr for shape flags the launch does not use (``--num-experts`` for gemm)."""
    from ._common import unused_shape_flags

    unused = unused_shape_flags(args, used)
    if unused:
        print(
            f"note: {' '.join(unused)} {'is' if len(unused) == 1 else 'are'} not used by {what}: ignored",
            file=sys.stderr,
        )


def _check_kernel_flags(args: argparse.Namespace) -> None:
    """--kernel FILE.py:NAME: the file first (no --config makes a missing file diagnosable), then --config."""
    from .._errors import DataError
    from ..frontend.sass import kernel_file_path

    kernel_file_path(args.kernel)
    if not (getattr(args, "config", None) or "").strip():
        raise DataError(
            f"--kernel {args.kernel} needs --config BM,BN,BK,GM,WARPS,STAGES (num_warps and num_stages are used by "
            "the compiler; BM/BN/BK/GM fill the kernel's BLOCK_SIZE_M ... constexprs if it has them)",
            hint="e.g. --config 64,64,32,8,4,3 for a matmul, or --config 1,1024,1,1,4,1 for an elementwise kernel",
        )


def run_kernel(args: argparse.Namespace, command: str) -> int:
    """``explain``/``predict --kernel``: the analytical SASS view (pipe times, bound, ceiling) of one launch."""
    from ..diagnose import diagnose_kernel

    spec = resolve_gpu_arg(args.gpu)
    _check_kernel_flags(args)
    trips = [t.strip() for t in _split_top(args.trips) if t.strip()] or None
    _note_unused_shape_flags(args, (), f"--kernel {args.kernel} (its shape is --signature)")
    res = diagnose_kernel(
        args.kernel,
        spec,
        args.config,
        signature=args.signature,
        grid=_grid(args),
        trips=trips,
        dtype=args.dtype,
        dram_bytes=args.dram_bytes,
    )
    res = _cli_result(res, command)
    if command == "predict" or getattr(args, "json", False):  # the text of `explain` shows them itself
        for w in res.get("warnings") or []:
            print(f"warning: {w}", file=sys.stderr)
    if command == "predict":
        out = {
            "gpu": res["gpu"],
            "kernel": res["kernel"],
            "config": res["config"],
            "predicted_us": res["predicted_us"],
            "method": "analytical SASS bound of the compiled kernel (not learned, not validated on measurements)",
            "bound_pipe": res["bound_pipe"],
            "lower_bound_us": res["lower_bound_us"],
            "lower_bound_scope": res["lower_bound_scope"],
            "trips_missing": res["trips_missing"],
            "warnings": res["warnings"],
            "notes": res["notes"],
        }
        if getattr(args, "json", False):
            print_json(out)
        else:
            print(
                f"{out['predicted_us']:.4g} us  ({res['kernel']} on {res['gpu']}, config {res['config']}; "
                f"{out['method']}; bound by {res['bound_pipe']})"
            )
        return 0
    if getattr(args, "json", False):
        print_json(res)
    else:
        print_diagnosis(res)
    return 0


def run(args: argparse.Namespace) -> int:
    from .._errors import DataError

    if args.plot:
        if args.rebuild_models:
            raise DataError("--plot draws a diagnosis; --rebuild-models diagnoses nothing", hint="drop --plot")
        check_plot_path(args.plot, [args.kernel.split(":")[0] if args.kernel else ""], "diagnosis.png")
    if args.rebuild_models:
        from .._outputs import refuse_committed_output
        from .._paths import MODELS_DIR
        from ..diagnose.build import build_models

        try:
            refuse_committed_output(args.models or MODELS_DIR, force=args.force, what="model")
        except DataError as exc:
            raise DataError(
                str(exc).splitlines()[0],
                hint="pass --models /tmp/<folder>, or --force to refresh the committed models on purpose",
            ) from None

        rows, files = None, None
        if args.profiles:
            from ..profiles import file_record, read_profiles

            rows = read_profiles(args.profiles)
            files = [file_record(f, len(read_profiles(f))) for f in args.profiles]
        elif args.no_shared:
            raise DataError("--no-shared needs --profiles FILE...", hint="give your profile files, or drop --no-shared")
        paths = build_models(
            args.data,
            args.models,
            profiles=rows,
            profile_files=files,
            shared=not args.no_shared,
            progress=not args.json,
        )
        if args.json:
            print_json({k: str(v) for k, v in paths.items()})
        return 0
    if args.profiles or args.no_shared or args.force:
        given = [
            f
            for f, on in (("--profiles", args.profiles), ("--no-shared", args.no_shared), ("--force", args.force))
            if on
        ]
        raise DataError(
            f"{' / '.join(given)} without --rebuild-models: {'it applies' if len(given) == 1 else 'they apply'} "
            "only to training the diagnose models (flags that need --rebuild-models)",
            hint=f"drop {' '.join(given)} to diagnose a launch, or rebuild the models, e.g. pipeweave diagnose "
            "--rebuild-models --profiles my_sweeps.csv --models /tmp/my_models",
        )
    if not args.gpu:
        raise DataError("pipeweave diagnose needs --gpu", hint="e.g. --gpu H100 (see `pipeweave gpus`)")
    if args.measured_us is not None and not (math.isfinite(args.measured_us) and args.measured_us > 0):
        raise DataError(
            f"--measured-us must be a positive number of microseconds, got {args.measured_us!r}",
            hint="e.g. --measured-us 805.6, or leave --measured-us out to diagnose without a measurement",
        )
    if args.top < 1:
        raise DataError(f"--top must be >= 1, got {args.top!r}", hint="e.g. --top 5 (the default)")
    if args.max_variants is not None and args.max_variants < 1:
        raise DataError(f"--max-variants must be >= 1, got {args.max_variants!r}", hint="e.g. --max-variants 24")
    if (args.max_variants is not None) and not (args.kernel and args.search):
        print("note: --max-variants limits --kernel ... --search only: ignored", file=sys.stderr)
    spec = resolve_gpu_arg(args.gpu)
    if args.kernel:
        from ..diagnose import diagnose_kernel

        _check_kernel_flags(args)
        if args.family:
            print(
                f"note: --family {args.family} is ignored with --kernel (the kernel file is diagnosed)", file=sys.stderr
            )
        _note_unused_shape_flags(args, (), f"--kernel {args.kernel} (its shape is --signature)")
        trips = [t.strip() for t in _split_top(args.trips) if t.strip()] or None
        try:
            res = diagnose_kernel(
                args.kernel,
                spec,
                args.config,
                signature=args.signature,
                grid=_grid(args),
                trips=trips,
                dtype=args.dtype,
                measured_us=args.measured_us,
                top=args.top,
                search=args.search,
                dram_bytes=args.dram_bytes,
                max_variants=args.max_variants,
                progress=args.search and not args.no_progress,
            )
        except DataError as exc:  # library wording (max_variants=) -> flags
            msg = str(exc).splitlines()[0].replace("max_variants", "--max-variants")
            raise DataError(msg, hint=exc.hint) from None
        res = _cli_result(res)
        if args.json:
            for w in res.get("warnings") or []:
                print(f"warning: {w}", file=sys.stderr)
    else:
        from ..diagnose import diagnose

        if not args.family:
            raise DataError(
                "pipeweave diagnose needs --family (moe_w13, fused_moe, gemm) or --kernel FILE.py:NAME",
                hint="e.g. --family moe_w13 --num-tokens 512 --num-experts 64 --topk 8 "
                "--hidden-size 4096 --inter-size 1536",
            )
        for flag, given in (("--signature", args.signature), ("--trips", args.trips), ("--grid", args.grid)):
            if given:
                print(f"note: {flag} describes a --kernel launch: ignored for --family {args.family}", file=sys.stderr)
        if args.search or args.dram_bytes is not None:
            print(
                f"note: {'--search' if args.search else '--dram-bytes'} applies to --kernel only: ignored for "
                f"--family {args.family} (the feasible config space is always ranked)",
                file=sys.stderr,
            )
        row = launch_frame(args, spec)
        models = _load_models(args.models)
        res = diagnose(
            row, measured_us=args.measured_us, top=args.top, gpus={spec.name: spec}, models=models, data=args.data
        )
    if args.json:
        print_json(res)
    else:
        print_diagnosis(res)
    if args.plot:
        from ..diagnose import plot_diagnosis

        save_plot(plot_diagnosis(res), args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _load_models(folder: str | None):  # noqa: ANN202
    """The diagnose models of ``--models`` (default ``models/``); the fix of a missing or damaged one rebuilds them
    in the user's folder (``--rebuild-models --models FOLDER``), never the committed models (``--force``)."""
    import shlex
    from pathlib import Path

    from .._errors import PipeweaveError
    from .._paths import MODELS_DIR
    from ..diagnose import DiagnoseModels

    try:
        return DiagnoseModels.load(folder)
    except PipeweaveError as exc:
        if folder is None or Path(folder).resolve() == Path(MODELS_DIR).resolve():
            raise
        rebuild = f"pipeweave diagnose --rebuild-models --models {shlex.quote(folder)}"
        raise type(exc)(
            exc.message,
            hint=f"build them there with `{rebuild}` (~5 min), or give --models the folder that holds them "
            "(default models/)",
        ) from None


def _split_top(text: str) -> list[str]:
    """Split a comma list at commas outside parentheses (``cdiv(K, BK),4``)."""
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text or "":
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _us(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.2f} us" if abs(x) >= 1 else f"{x:.3g} us"


def _t(x: float) -> str:
    return f"{x:,.3f}" if abs(x) >= 1 else f"{x:.3g}"


def print_diagnosis(r: dict) -> None:
    """Text form of a :func:`pipeweave.diagnose.diagnose` / ``diagnose_kernel`` result."""
    what = r.get("kernel") or f"{r['family']} {r['dtype']}"
    shape = " ".join(f"{k}={v:g}" for k, v in r.get("shape", {}).items())
    print(f"{what} on {r['gpu']} ({r['generation']})" + (f"  {shape}" if shape else ""))
    origin = f" ({r['config_origin']})" if r.get("config_origin") else ""
    print(f"  config       {r['config']}{origin}   [BM,BN,BK,GROUP_M,warps,stages]")
    print(
        f"  predicted    {_us(r['predicted_us'])}"
        + (f"   measured {_us(r['measured_us'])}" if r.get("measured_us") else "")
    )
    for w in r.get("warnings") or []:
        print(f"  WARNING      {w}")
    print(f"  ceiling      {_us(r['ceiling_us'])}   ({r['ceiling_method']})")
    if r.get("lower_bound_scope"):  # a user kernel: only compiled configs are bounded
        print(f"  lower bound  {_us(r['lower_bound_us'])}   (of {r['lower_bound_scope']}: {r['lower_bound_basis']})")
        if r.get("config_lower_bound_us") is not None and r["config_lower_bound_us"] != r["lower_bound_us"]:
            print(f"               {_us(r['config_lower_bound_us'])}   (of the given config)")
    else:
        print(f"  lower bound  {_us(r['lower_bound_us'])}   (no config can beat it)")
    if r.get("measurement_below_bound"):
        print(
            "  measurement  BELOW THE LOWER BOUND: wrong units (us?) or wrong shape/trips/GPU? "
            "no utilization or headroom derived"
        )
    elif r.get("measured_over_ceiling") is not None:
        print(f"  vs ceiling   measured / ceiling = {r['measured_over_ceiling']:.2f}  ({r.get('headroom_verdict')})")
    util = r.get("pipe_utilization")
    times = r["pipe_times_us"]
    sm = r.get("pipe_times_busiest_sm_us")
    if sm:  # builtin families: the bound pipe is the largest busiest-SM time; utilization uses chip time
        print(f"  bound pipe   {r['bound_pipe']}   (largest busiest-SM time; chip = the work spread over all SMs)")
        order = sorted(times, key=lambda k: (-sm.get(k, 0.0), -times[k]))
        over = set(r.get("pipes_over_latency") or [])
        head = f"  {'pipe':<9}{'busiest SM us':>14}{'chip us':>12}"
        if util is None:
            print(head)
        else:
            print(head + f"{'utilization':>13}   (chip time / {r['utilization_basis']} latency)")
        for p in order:
            row = f"  {p:<9}{_t(sm[p]) if p in sm else '-':>14}{_t(times[p]):>12}"
            if util is not None:
                row += f"{100 * util[p]:>12.1f}%" + ("  (modeled time > latency)" if p in over else "")
            print(row)
    else:
        print(f"  bound pipe   {r['bound_pipe']}")
        label = "busiest-SM us" if r.get("pipe_times_basis") else "time us"
        if util is None:
            print(f"  {'pipe':<9}{label:>14}")
            for p in sorted(times, key=lambda k: -times[k]):
                print(f"  {p:<9}{_t(times[p]):>14}")
        else:
            over = set(r.get("pipes_over_latency") or [])
            print(f"  {'pipe':<9}{label:>14}{'utilization':>13}   (of the {r['utilization_basis']} latency)")
            for p in sorted(util, key=lambda k: -times[k]):
                mark = "  (modeled time > latency)" if p in over else ""
                print(f"  {p:<9}{_t(times[p]):>14}{100 * util[p]:>12.1f}%{mark}")
    recs = r.get("recommendations") or []
    if recs:
        n = r.get("n_ranked", len(recs))
        print(
            f"  ranked configs (by predicted latency; {n} ranked"
            + (f", shortlisted from {r['n_candidates']} feasible" if r.get("n_candidates") else "")
            + "):"
        )
        print(f"  {'#':>3}  {'config':<24}{'predicted':>14}{'speedup':>9}")
        for c in recs:
            mark = "  (given)" if c.get("is_given") else ""
            if c.get("same_as"):
                how = "within 0.5%" if r.get("shortlist_order") == "predicted_latency" else "the same"
                mark += f"  (+{len(c['same_as'])} config(s) one parameter apart, predicted {how})"
            print(f"  {c['rank']:>3}  {c['config']:<24}{_us(c['predicted_us']):>14}{c['speedup']:>8.2f}x{mark}")
    if r.get("given_config_rank") and recs:
        print(f"  the given config ranks {r['given_config_rank']} of {r.get('n_ranked', len(recs))}")
    for n in r.get("notes", []):
        print(f"  note: {n}")
