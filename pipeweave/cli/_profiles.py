"""`pipeweave profiles`: import your own measurements into the canonical profile file, or check one."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

COMMAND = "profiles"
HELP = "import your own measurements (Kineto trace, Triton autotune cache, ncu CSV) as a canonical profile file"
DESCRIPTION = (
    HELP
    + """

The canonical profile file (CSV or parquet) has one row per measured launch with the columns of
`pipeweave data`: gpu, family, dtype, the family's shape columns (gemm: m n k; fused_moe/moe_w13:
num_tokens hidden_size inter_size topk num_experts [moe_tp_size moe_ep_size distribution];
attention: batch_size isl num_heads num_key_value_heads head_dim step ...), latency_us
(microseconds), optional source (default user), timing (how it was timed) and tile plan
(block_m block_n block_k group_m num_warps num_stages). `train --profiles` and `calibrate fit`
read it; rows are validated like `predict` input.

formats (--from):
  canonical        a canonical CSV/parquet (validated, GPU names resolved, defaults filled)
  kineto           PyTorch profiler trace JSON (record_shapes=True): aten::mm/addmm/linear/bmm kernels
                   -> gemm rows (bf16/fp16) or gemm_fp32 rows (float32, TF32 off), aten::_scaled_mm
                   (fp8 e4m3, per-tensor scales) -> gemm rows of dtype fp8; GPU from
                   deviceProperties; other kernels listed as skipped
  triton-autotune  <kernel>.autotune.json of @triton.autotune(cache_results=True): one row per config
                   (do_bench median, ms -> us); needs --gpu, --family, --key (names of the key entries);
                   a directory (~/.triton/cache/<hash>/) stands for the *.autotune.json files under it
  ncu              `ncu --csv --page raw` output joined with --shapes (kernel regex or ncu id -> family,
                   dtype, shape; ids 11+12: one launch of several kernels, e.g. split-K, times summed);
                   GPU from device__attribute_display_name or --gpu

A flag the format does not take is refused, as is --family/--dtype/--set for a column the file already
gives. The same launch found more than once (in one file or across files) becomes one row: the median
latency, n_raw_rows = the launches merged (canonical files are kept as they are).

examples:
  pipeweave profiles import --from kineto trace.json --out my_profiles.csv
  pipeweave profiles import --from triton-autotune ~/.triton/cache/*/matmul_kernel.autotune.json \\
      --gpu H100 --family gemm --key m,n,k --out tiles.parquet
  pipeweave profiles import --from ncu report.csv --shapes shapes.csv --gpu L40S --out ncu_rows.csv
  pipeweave profiles check my_profiles.csv
"""
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    imp = sub.add_parser(
        "import",
        help="convert profiler output into a canonical profile file",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from ..profiles import IMPORT_KINDS

    imp.add_argument("--from", dest="kind", required=True, choices=list(IMPORT_KINDS), help="input format")
    imp.add_argument(
        "files", nargs="+", metavar="FILE", help="input files (never modified; triton-autotune: or cache directories)"
    )
    imp.add_argument("--out", required=True, metavar="PATH", help="canonical profile file to write (.csv or .parquet)")
    imp.add_argument("--gpu", metavar="NAME_OR_SPEC", help="GPU the files were measured on (overrides the files)")
    imp.add_argument("--family", help="kernel family, where the file cannot say it (triton-autotune)")
    imp.add_argument("--dtype", help="dtype, where the file cannot say it (default: from the file)")
    imp.add_argument(
        "--key",
        metavar="COL,COL,...",
        help="triton-autotune: shape column of each leading key entry (e.g. m,n,k; _ skips one)",
    )
    imp.add_argument("--shapes", metavar="CSV", help="ncu: kernel (regex) or id -> family, dtype, shape columns")
    imp.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="COL=VALUE",
        help="constant columns for every row, where the file does not give them "
        "(e.g. topk=8 num_experts=64 hidden_size=4096; canonical column names only)",
    )
    imp.add_argument("--source", default="user", help="source label of the rows (default user)")
    chk = sub.add_parser(
        "check",
        help="validate canonical profile files and summarize them",
        description="Validate canonical profile files (CSV or parquet) row by row, as train / calibrate fit read "
        "them: a bad row is reported by number with the reason (exit 2); valid files are summarized per GPU, "
        "family and dtype (rows, fastest and slowest latency_us). The files are never modified.\n\n"
        "examples:\n  pipeweave profiles check my_profiles.csv\n"
        "  pipeweave profiles check mine.csv --gpu my_gpu.toml   # rows on a GPU outside the catalog",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    chk.add_argument("files", nargs="+", metavar="FILE")
    chk.add_argument("--gpu", metavar="NAME_OR_SPEC", help="spec file for rows on a GPU outside the catalog")


def _fixed(items: list[str]) -> dict[str, object]:
    from .._errors import DataError

    out: dict[str, object] = {}
    for it in items:
        if "=" not in it:
            raise DataError(f"--set {it!r} is not COL=VALUE", hint="e.g. --set topk=8")
        k, v = it.split("=", 1)
        try:
            out[k.strip()] = float(v)
        except ValueError:
            out[k.strip()] = v
    return out


def _require_import_flags(args: argparse.Namespace, have_gpu: bool, key: list[str]) -> None:
    """Name the missing command-line flags before the library's (flag-free) checks run."""
    from pathlib import Path

    from .._errors import DataError
    from ..profiles import PROFILE_SUFFIXES

    if args.kind == "triton-autotune":
        lacking = [what for what, have in (("GPU", have_gpu), ("kernel family", bool(args.family))) if not have]
        if lacking:
            flags = [
                f for f, have in (("--gpu NAME_OR_SPEC", have_gpu), ("--family FAMILY", bool(args.family))) if not have
            ]
            raise DataError(
                "a Triton autotune cache "
                + (
                    "names neither the GPU nor the kernel family"
                    if len(lacking) == 2
                    else f"does not name the {lacking[0]}"
                ),
                hint=f"pass {' and '.join(flags)}" + (" (e.g. --family gemm)" if not args.family else ""),
            )
        if not key:
            raise DataError(
                "--key is required for triton-autotune files",
                hint="name the shape column of each key entry, e.g. --key m,n,k",
            )
    if args.kind == "ncu" and not args.shapes:
        raise DataError(
            "ncu files need --shapes CSV: ncu does not know each kernel's family and shape",
            hint="a CSV with columns kernel (regex) or id, family, dtype and the shape columns",
        )
    if Path(args.out).suffix not in PROFILE_SUFFIXES:
        raise DataError(f"--out must end in .csv or .parquet, got {str(args.out)!r}", hint="e.g. --out my_profiles.csv")
    from ._common import check_output_path

    check_output_path(args.out, "--out", [*args.files, args.shapes])


def run(args: argparse.Namespace) -> int:
    from ..profiles import import_profiles, read_profiles, write_profiles
    from ._common import plural, resolve_gpu_arg

    spec = resolve_gpu_arg(args.gpu) if args.gpu else None
    gpus = {spec.name: spec} if spec is not None else None
    if args.action == "check":
        df = read_profiles(args.files, gpus=gpus)
        summary = df.groupby(["gpu", "family", "dtype"], observed=True).agg(
            rows=("latency_us", "size"), min_us=("latency_us", "min"), max_us=("latency_us", "max")
        )
        print(f"{plural(len(df), 'valid row')}")
        print(summary.to_string())
        return _check_lower_bound(df, gpus)
    key = [k.strip() for k in args.key.split(",")] if args.key else []
    _require_import_flags(args, spec is not None, key)
    rows, skipped = import_profiles(
        args.kind,
        args.files,
        gpu=spec.name if spec else None,
        family=args.family,
        dtype=args.dtype,
        key=key,
        shapes=args.shapes,
        fixed=_fixed(args.set),
        source=args.source,
        gpus=gpus,
    )
    path = write_profiles(rows, args.out)
    print(f"wrote {plural(len(rows), 'row')} to {path}")
    if len(skipped) and int(skipped["count"].sum()):
        by = skipped.groupby("reason")["count"].sum().sort_values(ascending=False)
        total = int(by.sum())
        print(f"skipped {total:,} kernel{'s' if total != 1 else ''}:", file=sys.stderr)
        for reason, n in by.head(10).items():
            names = skipped.loc[skipped["reason"] == reason, "kernel"].astype(str).head(2).tolist()
            print(f"  {n:>6,}  {reason}  (e.g. {', '.join(n_[:60] for n_ in names)})", file=sys.stderr)
    if len(rows):  # the rows are written as measured; impossible ones (ms written as us, another GPU) are noted
        _check_lower_bound(rows, gpus)
    return 0


def _check_lower_bound(df: pd.DataFrame, gpus: dict | None) -> int:
    """Exit status of `profiles check` after the physical check: 1 (and the rows on stderr) when rows are faster
    than their launch's lower bound allows (the rows training drops; most often ms written as us), else 0."""
    import numpy as np

    from ..model import below_lower_bound, ensure_features

    feats = ensure_features(df.reset_index(drop=True), gpus=gpus, baselines=False)
    lat = feats["latency_us"].to_numpy(dtype=float)
    lower = feats["t_lower_us"].to_numpy(dtype=float)
    mask, unit = below_lower_bound(lat, lower)
    bad = np.flatnonzero(mask)
    if not len(bad):
        return 0
    rows = ", ".join(str(i + 1) for i in bad[:8]) + (" ..." if len(bad) > 8 else "")
    print(
        f"{len(bad):,} of {len(df):,} rows are faster than the physical lower bound of their launch (rows {rows}; "
        f"e.g. row {bad[0] + 1}: {lat[bad[0]]:.4g} us against {lower[bad[0]]:.4g} us){unit}: train and calibrate "
        "leave such rows out, and refuse a file made mostly of them",
        file=sys.stderr,
    )
    return 1
