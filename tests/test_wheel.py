"""Packaging: what the wheel ships, where an installed package finds it, the CI and README commands.

The end-to-end check (build the wheel, install it in a fresh venv, use it from outside the
repository) is ``.ci/wheel_smoke.sh``, run by ``.ci/run``; it needs a network for the build
backend, so it is not a unit test. These tests check its ingredients.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shipped() -> dict[str, tuple[str, ...]]:
    src = (ROOT / "setup.py").read_text()
    block = src[src.index("SHIPPED") : src.index("}", src.index("SHIPPED")) + 1]
    return eval(block.split("=", 1)[1])  # a literal dict of folder -> glob patterns


def test_shipped_files_exist_and_cover_what_the_package_reads(shipped):
    from pipeweave import _paths
    from pipeweave.diagnose import DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH, DEFAULT_RANKER_PATH
    from pipeweave.frontend.sass import CACHE_FILE
    from pipeweave.hardware import CATALOG_PATH
    from pipeweave.model import DEFAULT_MODEL_PATH
    from pipeweave.sources import MANIFEST_DIR

    assert set(shipped) == set(_paths.SHIPPED_FOLDERS)
    files = {p.resolve() for folder, pats in shipped.items() for pat in pats for p in (ROOT / folder).glob(pat)}
    for f in (
        CATALOG_PATH,
        DEFAULT_MODEL_PATH,
        DEFAULT_RANKER_PATH,
        DEFAULT_CEILING_PATH,
        DEFAULT_LATENCY_PATH,
        CACHE_FILE,
        *MANIFEST_DIR.glob("*.toml"),
    ):
        assert Path(f).resolve() in files, f"the wheel would not ship {f}"


def test_installed_package_reads_package_data(tmp_path, monkeypatch):
    # an installed package (no pyproject.toml next to it) reads pipeweave/_data/<folder>
    from pipeweave import _paths

    assert _paths.IN_CHECKOUT and _paths.shipped_dir("models") == ROOT / "models"
    monkeypatch.setattr(_paths, "IN_CHECKOUT", False)
    assert _paths.shipped_dir("models") == _paths.PACKAGE_DATA_DIR / "models"


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    cmds = re.findall(r"^pip install -e '\.\[[^\]]*\]' && python -m pytest$", readme, re.M)
    assert cmds, "README has no test command"
    ci_cmds = [line.strip() for line in ci.splitlines() if "python -m pytest" in line]
    assert ci_cmds == cmds[:1]  # character for character
    assert "sass" in ci_cmds[0], "CI installs the sass extra so the triton tests run"
    assert ".ci/wheel_smoke.sh" in ci


def test_cpu_requirements_match_the_project_dependencies():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    cpu = [
        line.strip()
        for line in (ROOT / "requirements-cpu.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert cpu == [d.replace("xgboost>=", "xgboost-cpu>=") if d.startswith("xgboost") else d for d in deps]
