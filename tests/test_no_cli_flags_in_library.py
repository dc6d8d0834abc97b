"""Library error messages name Python arguments, not command-line flags (issue 16, section 1).

Library users call Python functions, so a message or hint such as ``pass --gpu NAME`` points them at
something they never typed. This walks the source of every module under ``pipeweave/`` except the
CLI layer (``pipeweave/cli/``, which may add its own flag hints) and ``pipeweave/measure.py`` (itself
a command-line program naming its own flags), and collects the string constants (f-string parts
included) inside ``raise`` statements, inside calls to exception classes (``...Error(...)``,
``...Exception(...)``, ``...Warning(...)``) and inside ``hint=`` keyword values. None may contain a
``--flag`` or the help flag ``-h``. Command lines of the external tool ``ncu`` (Nsight Compute, whose flags a
user must type to export a profile) are exempt.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import pipeweave

PKG = Path(pipeweave.__file__).resolve().parent
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")
# the short help flag: `pipeweave explain -h` sends a Python user to the command line for what a public name holds
SHORT_HELP = re.compile(r"(?<![\w-])-h(?![\w-])")
# `ncu ARG ARG ...` up to a backtick, bracket or redirection: flags of an external tool, not of pipeweave
EXTERNAL_COMMAND = re.compile(r"\bncu(?:\s+[^\s()`>]+)+")


def _exempt(rel: str) -> bool:
    return rel.startswith("cli/") or rel == "measure.py"


def _is_exception_call(node: ast.Call) -> bool:
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name.endswith(("Error", "Exception", "Warning"))


def flags_in_messages(source: str, filename: str = "<string>") -> list[tuple[int, str, str]]:
    """(line, flag, text) for each ``--flag`` in an error message or hint of ``source``."""
    tree = ast.parse(source, filename)
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            roots.append(node.exc)
        elif isinstance(node, ast.Call):
            if _is_exception_call(node):
                roots.append(node)
            roots.extend(kw.value for kw in node.keywords if kw.arg == "hint")
    seen: set[int] = set()
    hits = []
    for root in roots:
        for c in ast.walk(root):
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and id(c) not in seen:
                seen.add(id(c))
                text = EXTERNAL_COMMAND.sub("", c.value)
                hits.extend((c.lineno, m.group(), c.value) for m in FLAG.finditer(text))
                hits.extend((c.lineno, m.group(), c.value) for m in SHORT_HELP.finditer(text))
    return hits


def test_checker_finds_flags_in_raise_hint_and_fstring():
    """Hand-made source (labelled as such): the checker must flag these, or the real test proves nothing."""
    src = (
        "def f(x, gpu):\n"
        "    if x:\n"
        "        raise DataError(f'--top must be >= 1, got {x!r}')\n"
        "    err = ValueError('bad', hint='pass --gpu NAME')\n"
        "    raise RuntimeError('use ' + '--dask local:2')\n"
        "    log('--verbose is fine outside errors')\n"
        "    raise DataError('no header', hint='export with: ncu --import r.ncu-rep --csv --page raw > f.csv')\n"
        "    raise DataError('x', hint='pass gpu= (a catalog name); a--b and ---c are not flags')\n"
        "    raise DataError('no column', hint='see `pipeweave profiles -h`; tf32-heavy and -hopper are no flags')\n"
    )
    assert sorted(h[1] for h in flags_in_messages(src)) == ["--dask", "--gpu", "--top", "-h"]


@pytest.mark.parametrize(
    "path",
    sorted(p for p in PKG.rglob("*.py") if not _exempt(p.relative_to(PKG).as_posix())),
    ids=lambda p: p.relative_to(PKG).as_posix(),
)
def test_library_messages_name_no_cli_flags(path):
    hits = flags_in_messages(path.read_text(encoding="utf-8"), str(path))
    assert not hits, "\n".join(f"{path}:{line}: {flag} in {text!r}" for line, flag, text in hits)


def test_scan_covers_the_library():
    scanned = [p for p in PKG.rglob("*.py") if not _exempt(p.relative_to(PKG).as_posix())]
    assert len(scanned) > 50 and any(p.name == "_dask.py" for p in scanned)


@pytest.mark.parametrize(
    "argv, expect",
    [
        (["diagnose", "--gpu", "H100", "--top", "0"], ["--top", "got 0"]),
        (["diagnose", "--gpu", "H100", "--measured-us", "-3"], ["--measured-us", "-3.0"]),
        (["profiles", "import", "--from", "ncu", "missing.csv", "--out", "{tmp}/x.csv"], ["--shapes"]),
        (
            ["profiles", "import", "--from", "canonical", "missing.csv", "--out", "{tmp}/x.txt"],
            ["--out", "x.txt", ".csv"],
        ),
    ],
)
def test_cli_layer_names_its_own_flags(argv, expect, tmp_path, capsys):
    """The CLI, not the library, tells a command-line user which flag to fix (bad value and fix named)."""
    from pipeweave.cli.main import main

    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert all(e in err for e in expect), err
    assert not list(tmp_path.iterdir())
