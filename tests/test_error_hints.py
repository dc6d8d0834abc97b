"""Every pipeweave error raised to a user carries a fix (``hint=``), not only a description.

:class:`pipeweave.PipeweaveError` takes ``hint=``, which the message ends with as a ``fix:`` line (the
CLI prints it as is). This walks the source of every module under ``pipeweave/`` and fails, naming
``file:line``, for each ``raise <error class>(...)`` of a class defined in ``pipeweave/_errors.py``
that passes no ``hint=`` keyword (nor a second positional argument), or passes ``hint=None``.

A raise that only forwards another error's text (one that already carries its own fix) may be listed
in :data:`ALLOWED` as (path relative to ``pipeweave/``, enclosing function), with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pipeweave

PKG = Path(pipeweave.__file__).resolve().parent

#: (module path relative to pipeweave/, enclosing function) whose raises may omit hint=; each needs a reason.
#: Empty: every raise gives a fix (re-raises forward the inner error's ``exc.hint``).
ALLOWED: frozenset[tuple[str, str]] = frozenset()


def error_classes() -> set[str]:
    """Names of the classes defined in pipeweave/_errors.py (PipeweaveError and its subclasses)."""
    tree = ast.parse((PKG / "_errors.py").read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.ClassDef)}


def _called_name(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _has_hint(call: ast.Call) -> bool:
    if len(call.args) >= 2:
        return True
    for kw in call.keywords:
        if kw.arg == "hint":
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is None)
        if kw.arg is None:  # **kwargs: cannot tell statically, count it as given
            return True
    return False


def scan(source: str, names: set[str], filename: str = "<string>") -> tuple[int, list[tuple[int, str, str]]]:
    """(number of raises of ``names`` classes, [(line, class, enclosing function) of those without a hint])."""
    tree = ast.parse(source, filename)
    total = 0
    missing: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, func: str) -> None:
        nonlocal total
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call):
                name = _called_name(child.exc)
                if name in names:
                    total += 1
                    if not _has_hint(child.exc):
                        missing.append((child.lineno, name, func))
            visit(child, inner)

    visit(tree, "<module>")
    return total, missing


def test_scan_flags_a_raise_without_hint():
    """Hand-made source (labelled as such): the checker must flag these, or the real test proves nothing."""
    src = (
        "def f(x):\n"
        "    if x == 1:\n"
        "        raise DataError(f'bad {x!r}')\n"
        "    if x == 2:\n"
        "        raise errors.UnknownGPUError('no such GPU', hint=None)\n"
        "    if x == 3:\n"
        "        raise DataError('bad', hint='use 4')\n"
        "    if x == 4:\n"
        "        raise CompileError('bad', 'use 5')\n"
        "    raise ValueError('not a pipeweave error')\n"
    )
    total, missing = scan(src, {"DataError", "UnknownGPUError", "CompileError"})
    assert total == 4
    assert missing == [(3, "DataError", "f"), (5, "UnknownGPUError", "f")]


def test_every_pipeweave_error_raise_has_a_hint():
    names = error_classes()
    assert {"PipeweaveError", "DataError", "UnknownGPUError", "CompileError"} <= names
    files = sorted(PKG.rglob("*.py"))
    total = 0
    bad: list[str] = []
    used: set[tuple[str, str]] = set()
    for path in files:
        rel = path.relative_to(PKG).as_posix()
        n, missing = scan(path.read_text(encoding="utf-8"), names, str(path))
        total += n
        for line, cls, func in missing:
            if (rel, func) in ALLOWED:
                used.add((rel, func))
            else:
                bad.append(f"pipeweave/{rel}:{line}: raise {cls}(...) in {func}() has no hint=")
    # a scan that finds nothing would pass vacuously: the package raises its errors in hundreds of places
    assert len(files) > 50 and total > 300, (len(files), total)
    assert not bad, "give each a hint= saying how to fix it:\n" + "\n".join(bad)
    assert used == set(ALLOWED), f"stale ALLOWED entries (no hint-less raise there): {sorted(set(ALLOWED) - used)}"
