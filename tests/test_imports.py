"""Subpackages meet through public names: no module imports another subpackage's ``_private`` module.

The rule, checked with ``ast`` over every module of the package and every test:

* a module of package ``P`` may import ``pipeweave.X._y`` (or a ``_name`` from ``pipeweave.X``) only
  when ``pipeweave.X`` is ``P`` or one of its parents (a package's own private modules, and the
  top-level helpers ``pipeweave._errors``, ``_paths``, ``_io``, ``_frame`` ... shared by all);
* a test under ``tests/<sub>/`` is a white-box test of ``pipeweave.<sub>``: it may read the private
  modules of that subpackage and of its own subpackages (``tests/frontend`` -> ``pipeweave.frontend.sass._parse``),
  never another subpackage's; a test at ``tests/`` top level belongs to ``pipeweave`` itself (top-level
  helpers only). :data:`KNOWN_EXCEPTIONS` lists the imports that have no public seam yet, with the reason.

``import pipeweave`` itself must stay light (lazy exports, PEP 562).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pipeweave"
TESTS = ROOT / "tests"


def _package_of(path: Path) -> list[str]:
    """The dotted package a file belongs to, as parts (tests mirror the package layout)."""
    if path.is_relative_to(PACKAGE):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        return parts[:-1]  # the package that holds the module (for __init__: the package itself)
    rel = path.relative_to(TESTS)
    parts = ["pipeweave", *rel.parts[:-1]]
    return parts


def _imported(path: Path) -> list[tuple[int, list[str]]]:
    """(line, dotted name as parts) of every pipeweave module or name a file imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = _package_of(path) if path.is_relative_to(PACKAGE) else None
    out: list[tuple[int, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if pkg is None:
                    continue
                base = pkg[: len(pkg) - (node.level - 1)]
                mod = base + (node.module.split(".") if node.module else [])
            else:
                mod = node.module.split(".") if node.module else []
            out.append((node.lineno, mod))
            out += [(node.lineno, mod + [a.name]) for a in node.names if a.name != "*"]
    return [(ln, m) for ln, m in out if m and m[0] == "pipeweave"]


#: ``file: private module`` imports allowed for now, each with its reason (keep this list short)
KNOWN_EXCEPTIONS: dict[str, str] = {
    "tests/diagnose/test_diagnose_cli.py: pipeweave.frontend.sass._compile": "monkeypatches the Triton import inside the compile module (no public seam to fake a missing triton)",
    "tests/triton_autotune/test_autotune.py: pipeweave.frontend.sass._kernels": "needs a real @triton.jit kernel; the kernels module imports triton, so the package cannot re-export it",
}


def cross_private_imports(files: list[Path]) -> list[str]:
    """``file:line imports name`` for every import of another subpackage's private module or name."""
    bad: dict[tuple[str, int], str] = {}
    for path in files:
        owner_pkg = _package_of(path)
        for line, name in _imported(path):
            for i, part in enumerate(name):
                if part.startswith("_") and not part.startswith("__"):
                    owner = name[:i]  # the package the private module/name belongs to
                    in_tree = owner_pkg[: len(owner)] == owner  # its own package or a parent's
                    if path.is_relative_to(TESTS) and len(owner_pkg) > 1:  # a test: also its subpackage's subtree
                        in_tree = in_tree or owner[: len(owner_pkg)] == owner_pkg
                    rel = str(path.relative_to(ROOT))
                    if f"{rel}: {'.'.join(name[: i + 1])}" in KNOWN_EXCEPTIONS:
                        in_tree = True
                    if not in_tree:
                        key = (str(path.relative_to(ROOT)), line)
                        dotted = ".".join(name[: i + 1])  # up to the first private part
                        bad[key] = min(bad.get(key, dotted), dotted, key=len)
                    break
    return [f"{f}:{line} imports {name}" for (f, line), name in sorted(bad.items())]


def _python_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py")) + sorted(TESTS.rglob("*.py"))


def test_the_checker_catches_a_cross_private_import(tmp_path):
    # the rule itself, on hand-made files placed as if they were in the package / tests
    probe_dir = PACKAGE / "baselines"
    probe = probe_dir / "_probe_cross_private_tmp.py"
    probe.write_text(
        "from ..model._xgb import tree_params\nfrom ..model import tree_params\nfrom ._learned import KernelSight\n"
    )
    try:
        bad = cross_private_imports([probe])
    finally:
        probe.unlink()
    assert bad == ["pipeweave/baselines/_probe_cross_private_tmp.py:1 imports pipeweave.model._xgb"]
    tprobe = TESTS / "frontend" / "_probe_cross_private_tmp.py"
    tprobe.write_text(
        "from pipeweave.frontend._families import FAMILIES\nfrom pipeweave.model._features import x\n"
        "from pipeweave._paths import MODELS_DIR\n"
    )
    try:
        bad = cross_private_imports([tprobe])
    finally:
        tprobe.unlink()
    assert bad == ["tests/frontend/_probe_cross_private_tmp.py:2 imports pipeweave.model._features"]


def test_no_cross_subpackage_private_imports():
    bad = cross_private_imports(_python_files())
    assert not bad, "imports of another subpackage's private module (use its public names):\n" + "\n".join(bad)


def _import_in_fresh_process(module: str, watched: tuple[str, ...]) -> tuple[float, list[str]]:
    """(seconds ``import module`` took, the ``watched`` modules it loaded) in a fresh interpreter."""
    code = (
        f"import sys, time; t = time.perf_counter(); import {module}; dt = time.perf_counter() - t; "
        f"print(dt, ','.join(m for m in {watched!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(ROOT.parent)
    ).stdout.split()
    return float(out[0]), out[1].split(",") if len(out) > 1 else []


def test_import_pipeweave_is_light():
    dt, loaded = _import_in_fresh_process("pipeweave", ("pandas", "numpy", "xgboost", "sklearn", "scipy"))
    assert loaded == [], f"import pipeweave pulled in {loaded}"
    assert dt < 0.3


def test_import_pipeweave_triton_stays_light():
    """The autotune hook is imported inside users' kernels: no model stack until it ranks something (reading
    LATENCY_ORDERED_FAMILIES from pipeweave.diagnose once pulled in pandas, scikit-learn and XGBoost: 1.1 s)."""
    _, loaded = _import_in_fresh_process("pipeweave.triton", ("pandas", "xgboost", "sklearn", "pipeweave.diagnose"))
    assert loaded == [], f"import pipeweave.triton pulled in {loaded}"


def test_public_names_are_lazy_and_listed():
    import pipeweave as pw

    for name in (
        "predict",
        "load_model",
        "featurize",
        "explain",
        "PipeweaveRegressor",
        "load_profiles",
        "load_profiles_report",
        "evaluate",
        "get_gpu",
        "list_gpus",
        "diagnose",
    ):
        assert name in pw.__all__ and name in dir(pw)
        assert callable(getattr(pw, name)), name
    assert pw.vocab.TILE_COLUMNS[0] == "block_m"
    with pytest.raises(AttributeError):
        pw.no_such_name  # noqa: B018
