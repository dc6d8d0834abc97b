"""Where the project's own files and the shared measurements live.

The repository layout is fixed (``datasets/``, ``features/``, ``models/``, ``experiments/`` next
to the package). Each shipped folder is looked up in the repository checkout first, then in the
package data of an installed wheel (``pipeweave/_data/<folder>``, copied there by the build step in
``setup.py``), so a non-editable install works from any directory. The measurement directory is
never shipped: it is resolved from the ``data`` argument (``--data`` on the command line),
``PIPEWEAVE_DATA`` or the default ``../shared/datasets`` next to a repository checkout, in that order.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._errors import DataError

__all__ = [
    "REPO_ROOT",
    "PACKAGE_DATA_DIR",
    "SHIPPED_FOLDERS",
    "shipped_dir",
    "IN_CHECKOUT",
    "DATASETS_DIR",
    "FEATURES_DIR",
    "MODELS_DIR",
    "EXPERIMENTS_DIR",
    "DATA_ENV_VAR",
    "resolve_data_dir",
]

REPO_ROOT: Path = Path(__file__).resolve().parents[1]
#: where an installed wheel keeps the shipped folders (see ``setup.py``)
PACKAGE_DATA_DIR: Path = Path(__file__).resolve().parent / "_data"
#: the folders the wheel ships (GPU catalog + source manifests, SASS cache, models)
SHIPPED_FOLDERS: tuple[str, ...] = ("datasets", "features", "models")


#: True when the package runs from a repository checkout (editable install), False from a wheel
IN_CHECKOUT: bool = (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "datasets").is_dir()


def shipped_dir(name: str) -> Path:
    """``name`` (one of :data:`SHIPPED_FOLDERS`) in the repository checkout, else in the package data."""
    return REPO_ROOT / name if IN_CHECKOUT else PACKAGE_DATA_DIR / name


DATASETS_DIR: Path = shipped_dir("datasets")
FEATURES_DIR: Path = shipped_dir("features")
MODELS_DIR: Path = shipped_dir("models")
EXPERIMENTS_DIR: Path = REPO_ROOT / "experiments"
DATA_ENV_VAR = "PIPEWEAVE_DATA"
#: ../shared/datasets next to a repository checkout; an installed package has no default
_DEFAULT_DATA: Path | None = REPO_ROOT.parent / "shared" / "datasets" if IN_CHECKOUT else None

_WHERE_TO_GET = (
    "give the data directory (the `data` argument) or set PIPEWEAVE_DATA to a folder holding the public measurements "
    "(aiconfigurator/, pipeweave/, sglang_moe_configs/ ...). They come from "
    "https://github.com/ai-dynamo/aiconfigurator (systems/data, SGLang 0.5.10 slice), "
    "https://github.com/zksainx/pipeweave (dataset/, pipetuning_test/moe_dse) and the "
    "sglang==0.5.10 wheel (fused_moe_triton/configs); see README.md, section 'Data'."
)


def resolve_data_dir(data: str | os.PathLike[str] | None = None) -> Path:
    """Return the measurement directory: ``data`` if given, else $PIPEWEAVE_DATA, else ../shared/datasets.

    Raises :class:`DataError` naming the path that was tried and where to get the data.
    """
    if data is not None and not str(data).strip():
        raise DataError(
            "the data argument is empty", hint="give the measurement directory, or leave it out for the default"
        )
    if data is not None:
        path, how = Path(data), "the data argument"
    elif os.environ.get(DATA_ENV_VAR):
        path, how = Path(os.environ[DATA_ENV_VAR]), f"${DATA_ENV_VAR}"
    elif _DEFAULT_DATA is not None:
        path, how = _DEFAULT_DATA, "the default data directory"
    else:
        raise DataError(
            f"no measurement data directory given (installed package: there is no default; ${DATA_ENV_VAR} is not set)",
            hint=_WHERE_TO_GET,
        )
    if not path.is_dir():
        raise DataError(
            f"measurement data not found: {how} points to {str(path)!r}, which is not a directory", hint=_WHERE_TO_GET
        )
    return path.resolve()
