"""Build step: copy the files pipeweave reads at run time into the package (wheel) as package data.

The repository keeps ``datasets/`` (GPU catalog, source manifests), ``models/`` (the default and the
diagnose models) and ``features/`` (the SASS instruction-mix cache) at the top level; a built wheel
carries copies under ``pipeweave/_data/<folder>``. At run time ``pipeweave._paths.shipped_dir`` reads
the repository checkout first and the package data otherwise. The measurement data directory is
never shipped. All metadata lives in ``pyproject.toml``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: folder -> glob patterns of the files the wheel ships from it
SHIPPED: dict[str, tuple[str, ...]] = {
    "datasets": ("gpus.toml", "example_gpu_spec.toml", "sources/*.toml"),
    "models": ("*.ubj", "README.md"),
    "features": ("sass/instruction_mix.csv", "sass/MANIFEST.md"),
}


class BuildPyWithData(build_py):
    """``build_py`` plus the shipped folders copied to ``<build_lib>/pipeweave/_data``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout directly
            return
        target = Path(self.build_lib) / "pipeweave" / "_data"
        for folder, patterns in SHIPPED.items():
            for pattern in patterns:
                files = sorted((ROOT / folder).glob(pattern))
                if not files:
                    raise FileNotFoundError(f"nothing matches {folder}/{pattern}: the wheel would lack it")
                for src in files:
                    dst = target / folder / src.relative_to(ROOT / folder)
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dst)


setup(cmdclass={"build_py": BuildPyWithData})
