"""Argument groups shared by several subcommands (one launch from flags, data dir, GPU)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

import pandas as pd

from .._errors import DataError
from ..vocab import ATTENTION_BACKENDS as KNOWN_BACKENDS
from ..vocab import DEFAULT_ATTENTION_BACKEND, TILE_COLUMNS, default_source, parse_tile_config
from ._checks import whole_number

__all__ = [
    "add_data_argument",
    "add_gpu_argument",
    "add_launch_arguments",
    "launch_error",
    "flag_refused",
    "launch_frame",
    "resolve_gpu_arg",
    "parse_config",
    "print_json",
    "check_output_path",
    "interval_coverage",
    "plural",
    "unused_shape_flags",
]


_SHAPE_FLAGS: dict[str, tuple[str, type, str]] = {
    # flag -> (column, type, help)
    "--m": ("m", int, "GEMM rows of A/C"),
    "--n": ("n", int, "GEMM columns of B/C"),
    "--k": ("k", int, "GEMM reduction depth"),
    "--num-tokens": ("num_tokens", int, "tokens: MoE tokens (M); rows of rmsnorm, silu_mul and the *_fp32 row ops"),
    "--hidden-size": (
        "hidden_size",
        int,
        "MoE hidden size (H, W13 reduction depth); row width of rmsnorm and the *_fp32 row ops",
    ),
    "--inter-size": ("inter_size", int, "MoE per-expert intermediate size (N); silu_mul: output width (it reads 2x)"),
    "--topk": ("topk", int, "experts per token"),
    "--num-experts": ("num_experts", int, "experts (E)"),
    "--moe-tp-size": ("moe_tp_size", int, "MoE tensor-parallel size (default 1)"),
    "--moe-ep-size": ("moe_ep_size", int, "MoE expert-parallel size (default 1)"),
    "--distribution": ("distribution", str, "MoE routing: balanced or power_law_<alpha>"),
    "--batch-size": ("batch_size", int, "attention batch; gemm_fp32: GEMMs of one bmm (default 1)"),
    "--isl": ("isl", int, "prefill: input sequence length (decode: 1, the default; its context length is --step)"),
    "--num-heads": ("num_heads", int, "attention query heads"),
    "--num-kv-heads": ("num_key_value_heads", int, "attention KV heads"),
    "--head-dim": ("head_dim", int, "attention head dimension"),
    "--step": ("step", int, "decode: KV-cache length (context tokens); prefill: tokens already in the cache"),
    "--kv-cache-dtype": ("kv_cache_dtype", str, "attention KV-cache dtype (default = --dtype)"),
    # issue 13 families: rmsnorm (--num-tokens --hidden-size), silu_mul (--num-tokens --inter-size =
    # output width), *_fp32 row ops (--num-tokens rows x --hidden-size), gemm_fp32 (--m --n --k
    # [--batch-size]), attention_flashinfer (--q-lengths --kv-lengths per request)
    "--op": (
        "op",
        str,
        "operator inside a family: elementwise_fp32 add/addu/mul/mulu/div/divu/pow/powu/relu/"
        "tanh/gelu; gemm_fp32 bmm (default) or linear",
    ),
    "--split-k": (
        "split_k",
        int,
        "gemm_fp32: CTAs per output tile along the reduction (cuBLAS split-K: a legacy SGEMM's grid z / batch; "
        "default: the split of the smallest envelope for the tile, each SIMT tile's when no tile is given; 1 = none)",
    ),
    "--q-lengths": ("q_lengths", str, "attention_flashinfer: per-request query lengths, e.g. 128;512"),
    "--kv-lengths": ("kv_lengths", str, "attention_flashinfer: per-request KV lengths, e.g. 1024;2048"),
}
#: a plausible value per shape flag for the "needs ..." hint (a 128 for every flag gave top-128 routing)
_FLAG_EXAMPLE: dict[str, object] = {
    "--m": 4096,
    "--n": 4096,
    "--k": 4096,
    "--num-tokens": 512,
    "--hidden-size": 4096,
    "--inter-size": 1536,
    "--topk": 8,
    "--num-experts": 64,
    "--batch-size": 8,
    "--isl": 2048,
    "--num-heads": 32,
    "--num-kv-heads": 8,
    "--head-dim": 128,
    "--step": 4096,
    "--op": "add",
    "--split-k": 4,
    "--q-lengths": "128;512",
    "--kv-lengths": "1024;2048",
}
#: FlashInfer code paths of the attention_flashinfer family (the ``backend`` column)
from ..vocab import FLASHINFER_BACKENDS  # noqa: E402


def add_data_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data", metavar="DIR", help="measurement directory (default: $PIPEWEAVE_DATA or ../shared/datasets)"
    )


def add_gpu_argument(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument(
        "--gpu",
        required=required,
        metavar="NAME_OR_SPEC",
        help="catalog GPU name or alias (see `pipeweave gpus`) or a spec file (.toml/.json)",
    )


def add_launch_arguments(p: argparse.ArgumentParser, *, config: bool = True) -> None:
    """Flags describing one kernel launch: family, dtype, the family's shape, optional tile config."""
    from ..frontend import FAMILIES

    g = p.add_argument_group("launch")
    g.add_argument("--family", choices=sorted(FAMILIES), help="kernel family")
    g.add_argument(
        "--dtype",
        default=None,
        help="bfloat16 | float16 | fp8 | fp8_block | float32, or bf16, fp16, ... (default: the family's: "
        "bfloat16, float32 for the FP32 operator families)",
    )
    p.set_defaults(_family_dtype=True)  # main() fills a --dtype left out with the family's (default_dtype)
    g.add_argument(
        "--source",
        default=None,
        help="timing convention to predict for: aiconfigurator (CUDA-graph replay), pipeweave or "
        "pipeweave_fork_sample (CUDA events), neusight (CUDA events around the op call), vidur (Kineto kernel "
        "time); default: the family's main training source",
    )
    for flag, (col, typ, hlp) in _SHAPE_FLAGS.items():
        # the canonical column name works as a flag too (--num-key-value-heads = --num-kv-heads)
        alias = "--" + col.replace("_", "-")
        g.add_argument(
            flag, *([alias] if alias != flag else []), dest=col, type=whole_number if typ is int else typ, help=hlp
        )
    g.add_argument(
        "--backend",
        choices=list(KNOWN_BACKENDS) + list(FLASHINFER_BACKENDS),
        default=None,
        help=f"attention kernel implementation (default {DEFAULT_ATTENTION_BACKEND} for attention families)",
    )
    if config:
        g.add_argument(
            "--config",
            metavar="BM,BN,BK,GM,WARPS,STAGES",
            help="Triton tile config (default: the kernel's own selection logic)",
        )


def parse_config(text: str | None) -> dict[str, float]:
    """'64,64,32,8,4,3' -> tile-plan columns (:func:`pipeweave.vocab.parse_tile_config`); errors name the value."""
    if not text:
        return {}
    try:
        vals = parse_tile_config(text)
    except DataError as exc:
        raise DataError(f"--config: {str(exc).splitlines()[0]}", hint=exc.hint) from None
    return dict(zip(TILE_COLUMNS, map(float, vals)))


def resolve_gpu_arg(value: str):  # noqa: ANN201
    """GPUSpec for a --gpu value (catalog name, alias or spec file)."""
    from ..hardware import get_gpu

    return get_gpu(value)


from ..vocab import DEFAULT_SOURCE as _DEFAULT_SOURCE  # noqa: E402,F401  (kept for importers of the old name)


def launch_frame(args: argparse.Namespace, spec: Any, *, check: bool = True) -> pd.DataFrame:
    """One-row canonical profile frame from launch flags (``spec`` is the resolved GPUSpec); ``check``: refuse a
    launch outside the valid domain on ``spec`` (``False``: the caller checks it, e.g. once per GPU)."""
    from ..frontend import LAUNCH_DEFAULTS, get_family, row_problems

    if not args.family:
        raise DataError(
            "--family is required for a single launch", hint="e.g. --family gemm --m 4096 --n 4096 --k 4096"
        )
    fam = get_family(args.family)
    _note_unused_flags(args, fam.name)
    row: dict[str, Any] = {
        "family": args.family,
        "gpu": spec.name,
        "generation": spec.generation,
        "dtype": args.dtype,
        "source": args.source or default_source(args.family),
    }
    for _, (col, _, _) in _SHAPE_FLAGS.items():
        v = getattr(args, col, None)
        if v is not None:
            row[col] = v
    for col, value in LAUNCH_DEFAULTS.get(fam.name, {}).items():  # the same defaults as blank CSV cells
        if col != "backend":
            row.setdefault(col, value)
    if fam.name.startswith("attention"):
        row["backend"] = getattr(args, "backend", None) or DEFAULT_ATTENTION_BACKEND
    elif getattr(args, "backend", None):  # checked like a CSV cell: a family without backends refuses it
        row["backend"] = args.backend
    if fam.name == "attention_flashinfer":
        row["backend"] = getattr(args, "backend", None) or "fa2_paged"
        if "q_lengths" in row and "batch_size" not in row:
            row["batch_size"] = len(str(row["q_lengths"]).replace(",", ";").split(";"))
    if fam.name == "gemm_fp32":
        row.setdefault("batch_size", 1)
        row.setdefault("op", "bmm")
    missing = [c for c in fam.shape_columns if c not in row]
    if missing:
        flags = [f for f, (c, _, _) in _SHAPE_FLAGS.items() if c in missing]
        example = " ".join(f"{f} {_FLAG_EXAMPLE.get(f, 128)}" for f in flags)
        raise DataError(f"family {args.family!r} needs {' '.join(flags)}", hint=f"e.g. {example}")
    row.update(parse_config(getattr(args, "config", None)))
    frame = pd.DataFrame([row])
    problem = str(row_problems(frame, {spec.name: spec}).iloc[0]) if check else ""  # the valid domain of CSV rows
    if problem:
        raise launch_error(problem)
    return frame


def launch_error(problem: str) -> DataError:
    """The error of a launch from flags that a row check refused with ``problem``: the library speaks of CSV cells
    ("leave the cell blank"); the fix line names the flags instead (:func:`flag_hint`)."""
    shown = problem.replace(" (leave the cell blank)", "").replace("; leave them blank", "")
    return DataError(f"invalid launch: {shown}", hint=flag_hint(problem))


def flag_refused(problem: str) -> bool:
    """Whether a row-check ``problem`` refuses a flag outright, whatever the GPU (a tile plan or a backend that the
    family does not take): the fix is to drop the flag."""
    return flag_hint(problem).startswith("drop ")


def unused_shape_flags(args: argparse.Namespace, used: Iterable[str] = ()) -> list[str]:
    """The shape flags given on the command line whose column is not among ``used`` (they change nothing)."""
    keep = set(used)
    return [f for f, (c, _, _) in _SHAPE_FLAGS.items() if getattr(args, c, None) is not None and c not in keep]


def _note_unused_flags(args: argparse.Namespace, family: str) -> None:
    """A ``note:`` for launch flags the family never reads (``--head-dim`` on a GEMM): they change nothing."""
    from ..frontend import launch_columns

    used = set(launch_columns(family))
    unused = unused_shape_flags(args, used)
    if unused:
        print(
            f"note: {family} does not read {' '.join(unused)}; ignored (its flags: "
            + " ".join(f for f, (c, _, _) in _SHAPE_FLAGS.items() if c in used)
            + ")",
            file=sys.stderr,
        )


def flag_hint(reason: str) -> str:
    """The fix of a row-check reason in flags: the flags behind the column names it mentions (``num_key_value_heads``
    is ``--num-kv-heads``) to give another value, or the flag to drop where the reason refuses the column outright
    (a tile plan on a family without one, a backend on a family without backends)."""
    import re

    other = re.search(r"use family '(\w+)' \(.*dtype (\w+)\)", reason)
    if other:  # no tensor-core path for any dtype of the family: another family runs the launch
        return f"use --family {other.group(1)} --dtype {other.group(2)} (with the same shape flags)"
    if re.search(r"tile columns .* are not used by", reason):
        return "drop --config: this family takes no tile plan (it chooses its own)"
    if re.search(r"\bhas no backend\b", reason):
        return "drop --backend: it names an attention kernel, and this family has no backend"
    flags = [f"{f} (sets {c})" for f, (c, _, _) in _SHAPE_FLAGS.items() if re.search(rf"\b{c}\b", reason)]
    if re.search(r"tile plan|block_m|block_n|block_k|num_warps|num_stages|group_m", reason):
        flags.append("--config BM,BN,BK,GM,WARPS,STAGES (the tile plan)")
    if re.search(r"\bdtypes?\b", reason):
        flags.append("--dtype")
    if re.search(r"\bbackends?\b", reason):
        flags.append("--backend")
    if re.search(r"\bsources?\b", reason):
        flags.append("--source")
    if re.search(r"\bGPU\b|\bgpu\b", reason) and not flags:
        flags.append("--gpu")
    return "give a value the message allows with " + ", ".join(flags) if flags else "see the command's -h for the flags"


def interval_coverage(value: float | None) -> float | None:
    """The band coverage of ``--interval P`` (50 / 80 / 90, or 0.5 / 0.8 / 0.9); ``None`` for 0 (no band) or when
    --interval was not given. `predict` and `compare` read it alike."""
    if value is None or value == 0:
        return None
    from ..model import check_coverage

    try:
        return check_coverage(value)
    except DataError:
        raise DataError(
            f"--interval must be 50, 80 or 90 (or 0 for no band), got {value:g}",
            hint="e.g. --interval 80 (the middle 80% of the model's held-out errors)",
        ) from None


def check_output_path(path: str, what: str, inputs: Any = ()) -> None:
    """Refuse an output ``path`` (flag ``what``) that is one of the ``inputs`` files (a spec file given as a
    GPU included), a file committed to the repository (e.g. the shipped model, a GPU spec), or cannot be
    written."""
    import os

    from .._io import check_writable
    from .._outputs import refuse_committed_output

    refuse_committed_output(
        path,
        what="repository",
        hint=f"write to a file of your own with {what} (e.g. under /tmp); the commands "
        "that refresh committed results (train, evaluate, bench) take --force",
    )
    for src in [inputs] if isinstance(inputs, str) else list(inputs or ()):
        if src and os.path.exists(path) and os.path.exists(src) and os.path.samefile(src, path):
            raise DataError(
                f"{what} {path!r} is the input file {src!r}; pipeweave never overwrites its input",
                hint=f"write to another file with {what}",
            )
    check_writable(path, what)


def check_plot_path(path: str, inputs: Any, example: str) -> None:
    """Refuse a ``--plot`` file that :func:`check_output_path` refuses or that is not a ``.png``; ``example``: the
    file name the hint offers."""
    check_output_path(path, "--plot", inputs)
    if not path.lower().endswith(".png"):
        raise DataError(f"--plot {path!r} must end in .png", hint=f"e.g. --plot {example}")


def save_plot(fig: Any, path: str) -> None:
    """Write the ``--plot`` figure ``fig`` to ``path`` (an 8-bit PNG at the CLI's one resolution, atomically)."""
    from .._io import save_figure_png

    save_figure_png(fig, path, dpi=110)


def check_output_dir(path: str, what: str) -> None:
    """Refuse an output folder ``path`` (flag ``what``) that is an existing file or lies under one,
    before any work (a report folder is written only at the end of a long run)."""
    from pathlib import Path

    p = Path(path)
    for q in (p, *p.parents):
        if q.exists() and not q.is_dir():
            where = "is" if q == p else f"lies under {str(q)!r}, which is"
            raise DataError(
                f"{what} {path!r} {where} a file, not a folder", hint=f"give a folder with {what} (e.g. /tmp/report)"
            )
        if q.exists():
            break


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``"1 launch"``, ``"3 launches"``: a count and its noun (``many``: an irregular plural)."""
    if n == 1:
        return f"{n:,} {noun}"
    return f"{n:,} {many or (noun + 'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else noun + 's')}"


def print_json(obj: Any, *, indent: int | None = 2) -> None:
    """Print ``obj`` as strict JSON (a NaN or infinite number is written ``null``: every JSON parser reads the
    output); numpy values via the same conversion as the file writers, any other object as its text."""
    from .._io import _json_default, json_text

    def default(o: Any) -> Any:
        try:
            return _json_default(o)
        except TypeError:
            return str(o)

    sys.stdout.write(json_text(obj, indent=indent, default=default) + "\n")
