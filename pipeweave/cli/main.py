"""Entry point of the ``pipeweave`` command.

Each subcommand lives in its own module ``pipeweave/cli/_<name>.py`` that defines
``COMMAND`` (its name), ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``.
Heavy imports happen inside ``run`` so that ``pipeweave --help`` stays fast. User errors
(:class:`pipeweave.PipeweaveError`) are printed without a traceback and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from .. import __version__
from .._errors import SHOWN_MAX_CHARS, PipeweaveError, shown

__all__ = ["main", "build_parser", "COMMAND_MODULES"]

#: Subcommand modules in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "_data",
    "_gpus",
    "_explain",
    "_sass",
    "_train",
    "_tune",
    "_predict",
    "_compare",
    "_evaluate",
    "_diagnose",
    "_bench",
    "_profiles",
    "_calibrate",
)

_EPILOG = """\
examples:
  pipeweave data                                  # what the shared measurements hold
  pipeweave gpus                                  # the GPU catalog
  pipeweave explain --gpu H100 --family gemm --dtype bfloat16 --m 4096 --n 4096 --k 4096
  pipeweave predict --gpu B300 --family gemm --dtype bfloat16 --m 8192 --n 8192 --k 8192
  pipeweave compare --gpus H100 H200 B200 B300 --input decode_step.csv   # which GPU runs a workload fastest
  pipeweave evaluate --protocol logo --out /tmp/pw_logo     # experiments/logo holds the committed report
  pipeweave diagnose --gpu H100 --family moe_w13 --num-tokens 4096 --num-experts 64 --topk 8 \\
      --hidden-size 3584 --inter-size 2560 --config 64,64,64,16,4,3 --measured-us 2321.0

data: --data DIR or $PIPEWEAVE_DATA (default ../shared/datasets next to the repository).

exit status:
  0    success
  1    partial success: `predict --input` / `compare` reported some rows (row N: reason) and used the others
  2    usage or input error, or no row predicted (one line on stderr naming the bad value and the fix)
  130  interrupted
"""


def _load_commands(command: str | None = None) -> list[ModuleType]:
    """The subcommand modules; only ``command``'s when it names one (start-up: the others are not imported)."""
    if command is not None and f"_{command}" in COMMAND_MODULES:
        mod = importlib.import_module(f"{__package__}._{command}")
        if getattr(mod, "COMMAND", None) == command:
            return [mod]
    mods: list[ModuleType] = []
    for name in COMMAND_MODULES:
        try:
            mods.append(importlib.import_module(f"{__package__}.{name}"))
        except ModuleNotFoundError as exc:  # a subcommand not built yet must not break the others
            if exc.name != f"{__package__}.{name}":
                raise
    return mods


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: the problem, a close match for a mistyped choice, and where
    the options are listed (argparse's default prints the whole usage block first). Subparsers inherit it."""

    def error(self, message: str) -> NoReturn:  # noqa: D102
        import difflib
        import re

        hint = f"see '{self.prog} --help'"
        bad = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if bad and len(bad.group(1)) > SHOWN_MAX_CHARS:  # an absurdly long value is echoed cut, not whole
            message = message.replace(f"'{bad.group(1)}'", shown(bad.group(1)), 1)
        close: list[str] = []
        if bad:
            choices = re.findall(r"'([^']*)'", bad.group(2)) or [c.strip() for c in bad.group(2).split(",")]
            # a family's evaluation names extend it ("gemm" -> gemm_bf16, gemm_fp8, gemm_fp32): those first
            close = [c for c in choices if c.startswith(bad.group(1) + "_")][:3] or difflib.get_close_matches(
                bad.group(1), choices, n=1
            )
        elif message.startswith("unrecognized arguments:"):
            options = [o for a in self._actions for o in a.option_strings]
            words = [w.split("=")[0] for w in message.split(":", 1)[1].split() if w.startswith("--")]
            close = [m for w in words[:1] for m in difflib.get_close_matches(w, options, n=1)]
        if len(close) > 1:
            hint = f"did you mean one of {', '.join(repr(c) for c in close)}? ({hint})"
        elif close:
            hint = f"did you mean '{close[0]}'? ({hint})"
        self.exit(2, f"{self.prog}: error: {message}\n  fix: {hint}\n")


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)parser of the (sub)command ``args`` selected: where an unrecognized option belongs."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, str(action.dest), None)
            if isinstance(name, str) and name in action.choices:
                return _innermost(action.choices[name], args)
    return parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Build the argument parser with every available subcommand (only ``command``'s when given)."""
    parser = _Parser(
        prog="pipeweave",
        description="Predict GPU kernel latency on GPUs that were never measured "
        "(analytical per-pipeline demand + XGBoost), evaluate it leave-one-generation-out, "
        "and diagnose Triton kernels.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pipeweave {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _load_commands(command):
        p = sub.add_parser(
            mod.COMMAND,
            help=mod.HELP,
            description=getattr(mod, "DESCRIPTION", mod.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


#: library wording (Python argument names) -> what a command-line user typed
_CLI_WORDS: tuple[tuple[str, str], ...] = (
    ("the `data` argument", "--data DIR"),
    ("the data argument", "--data"),
    ("length_scale and noise must be", "--length-scale and --noise must be"),
    ("pass storage='sqlite:///tune.db'", "pass --storage sqlite:///tune.db"),
    (
        "pass gpu= (a catalog name or a spec .toml path)",
        "pass --gpu NAME_OR_SPEC (a catalog name or a spec .toml path)",
    ),
    ("pass gpu= a catalog name", "pass --gpu with a catalog name"),
    ("pass dtype= (e.g. 'bfloat16')", "pass --dtype (e.g. --dtype bfloat16)"),
    ("the family argument", "--family"),
    ("the dtype argument", "--dtype"),
    ("the key argument", "--key"),
    ("the shapes argument", "--shapes"),
    ("the fixed argument", "--set"),
    ("the gpu argument", "--gpu"),
    ("the source argument", "--source"),
    (
        "convert it to canonical rows first (pipeweave.profiles.import_profiles)",
        "convert it to canonical rows first: pipeweave profiles import --from kineto|triton-autotune|ncu FILE "
        "--out rows.csv",
    ),
    (
        "start from a catalog entry (pipeweave.hardware.spec_to_toml)",
        "start from a catalog entry: pipeweave gpus --gpu H100 --spec-file > my_gpu.toml",
    ),
)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """pipeweave's own warnings as one ``note:`` line (no source line); other libraries' as Python shows them."""
    import os
    import warnings

    if os.path.abspath(str(filename)).startswith(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
        print(f"note: {_cli_words(str(message))}", file=sys.stderr if file is None else file)
        return
    print(warnings.formatwarning(message, category, filename, lineno, line), end="", file=file or sys.stderr)


def _cli_words(text: str) -> str:
    """A library message with its Python argument names replaced by the flags that set them."""
    for lib, cli in _CLI_WORDS:
        text = text.replace(lib, cli)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:  # building the parser imports the subcommand (seconds for train): Ctrl-C there is an interrupt too
        parser = build_parser(next((w for w in words if not w.startswith("-")), None))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    args, extra = parser.parse_known_args(words)
    if extra:
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 0
    if getattr(args, "_family_dtype", False):  # --dtype left out: the family's; bf16 / half: the canonical name
        from ..frontend import default_dtype
        from ..vocab import canonical_dtype

        given = (args.dtype or "").strip()  # blank: the family's, as a blank CSV cell
        args.dtype = canonical_dtype(given) if given else default_dtype(getattr(args, "family", None) or "")
    import warnings

    try:
        if getattr(args, "data", None) is not None:  # a --data folder that is not there: said before any work
            from .._paths import resolve_data_dir

            resolve_data_dir(args.data)
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args._run(args) or 0)
    except PipeweaveError as exc:
        print(f"pipeweave {args.command}: error: {_cli_words(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` etc.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
