"""``pipeweave gpus``: show the GPU catalog (or one GPU / spec file)."""

from __future__ import annotations

import argparse
import math
from typing import Any

COMMAND = "gpus"
HELP = "list the GPU catalog (spec sheets, aliases) or show one GPU or spec file"
DESCRIPTION = """\
List the GPUs pipeweave knows (datasets/gpus.toml): SMs, clock, dense tensor peaks, DRAM and L2.

examples:
  pipeweave gpus
  pipeweave gpus --gpu "NVIDIA H100 80GB HBM3"
  pipeweave gpus --gpu datasets/example_gpu_spec.toml --json
  pipeweave gpus --gpu H100 --spec-file --name H100-1.5xHBM > what_if.toml   # a what-if spec to edit
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``gpus`` options."""
    parser.add_argument(
        "--gpu", metavar="NAME_OR_SPEC", help="show only this GPU: a catalog name, an alias, or a .toml/.json spec file"
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument(
        "--json", action="store_true", help="print a JSON list of objects (all spec fields, peaks and aliases)"
    )
    out.add_argument(
        "--spec-file",
        action="store_true",
        help="print the --gpu as a spec file (TOML) to edit into a what-if GPU (the --json keys are a report's, "
        "not a spec file's)",
    )
    parser.add_argument("--name", help="with --spec-file: the copy's name (a changed copy needs its own)")


def _record(spec: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {}
    for k, v in spec.flat().items():
        rec[k] = None if isinstance(v, float) and math.isnan(v) else v
    for key in ("bf16", "fp16", "fp8", "tf32", "int8"):
        rec[f"peak_{key}_tflops"] = (
            round(spec.peak_tensor_tflops(key), 3) if key in spec.tensor_flop_per_clk_per_sm else None
        )
    rec["peak_fp32_tflops"] = round(spec.peak_fp32_tflops, 3)
    rec["aliases"] = list(spec.aliases)
    rec["sources"] = dict(spec.sources)
    rec["notes"] = spec.notes
    return rec


def _fmt(x: Any, digits: int = 0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def _table(records: list[dict[str, Any]]) -> str:
    head = ["name", "generation", "cc", "SMs", "clock MHz", "bf16 TFLOPS", "fp8 TFLOPS", "DRAM GB/s", "L2 MiB"]
    rows = [
        [
            r["name"],
            r["generation"],
            r["compute_capability"],
            str(r["sm_count"]),
            _fmt(r["sm_clock_mhz"]),
            _fmt(r["peak_bf16_tflops"], 1),
            _fmt(r["peak_fp8_tflops"], 1),
            _fmt(r["dram_bw_gbps"]),
            _fmt(r["l2_mib"]),
        ]
        for r in records
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    left = {0, 1}

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """Print the catalog (or one GPU) as a table or JSON."""
    from ..hardware import CATALOG_PATH, get_gpu, list_gpus

    if args.gpu is not None and not args.gpu.strip():
        from .._errors import DataError

        raise DataError(
            "--gpu is empty", hint="give a catalog name or a spec file, or leave --gpu out to list the catalog"
        )
    if (args.spec_file or args.name) and not args.gpu:
        from .._errors import DataError

        raise DataError(
            "--spec-file prints one GPU's spec file: give --gpu", hint="e.g. pipeweave gpus --gpu H100 --spec-file"
        )
    if args.name is not None and not args.spec_file:
        from .._errors import DataError

        raise DataError("--name names the copy --spec-file prints", hint="add --spec-file, or drop --name")
    specs = [get_gpu(args.gpu)] if args.gpu else list_gpus()
    if args.spec_file and args.name is not None:
        from .._errors import DataError
        from ..hardware import gpu_names

        if not args.name.strip():
            raise DataError("--name is empty", hint="give the copy a name of its own, e.g. --name H100-what-if")
        if args.name.strip() in gpu_names() and args.name.strip() != specs[0].name:
            raise DataError(
                f"--name {args.name!r} is another catalog GPU's name", hint="give the copy a name of its own"
            )
    if args.spec_file:
        from ..hardware import spec_to_toml

        print(spec_to_toml(specs[0], name=args.name), end="")
        return 0
    records = [_record(s) for s in specs]
    if args.json:
        from ._common import print_json

        print_json(records)
        return 0
    print(_table(records))
    if args.gpu:
        r = records[0]
        print()
        print(f"aliases: {', '.join(r['aliases']) or '-'}")
        print(
            f"fp32 {r['peak_fp32_tflops']:.1f} TFLOPS; tensor FLOP/clk/SM: "
            + ", ".join(f"{k}={v:g}" for k, v in specs[0].tensor_flop_per_clk_per_sm.items())
        )
        if r["notes"]:
            print(f"notes: {r['notes']}")
    else:
        print(
            f"\n{len(records)} GPUs from {CATALOG_PATH}; dense tensor peaks (FP32 accumulate). "
            "Use --gpu NAME for aliases and notes, --json for every field."
        )
    return 0
