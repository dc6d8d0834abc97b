"""Where the project's own files and the shared measurements live.

The repository layout is fixed (``datasets/``, ``features/``, ``models/``, ``experiments/`` next
to the package); the measurement directory is resolved from ``--data``, ``PIPEWEAVE_DATA`` or the
default ``../shared/datasets`` next to the repository, in that order.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._errors import DataError

__all__ = [
    "REPO_ROOT",
    "DATASETS_DIR",
    "FEATURES_DIR",
    "MODELS_DIR",
    "EXPERIMENTS_DIR",
    "DATA_ENV_VAR",
    "resolve_data_dir",
]

REPO_ROOT: Path = Path(__file__).resolve().parents[1]
DATASETS_DIR: Path = REPO_ROOT / "datasets"
FEATURES_DIR: Path = REPO_ROOT / "features"
MODELS_DIR: Path = REPO_ROOT / "models"
EXPERIMENTS_DIR: Path = REPO_ROOT / "experiments"
DATA_ENV_VAR = "PIPEWEAVE_DATA"
_DEFAULT_DATA = REPO_ROOT.parent / "shared" / "datasets"

_WHERE_TO_GET = (
    "pass --data DIR or set PIPEWEAVE_DATA to a folder holding the public measurements "
    "(aiconfigurator/, pipeweave/, sglang_moe_configs/ ...). They come from "
    "https://github.com/ai-dynamo/aiconfigurator (systems/data, SGLang 0.5.10 slice), "
    "https://github.com/zksainx/pipeweave (dataset/, pipetuning_test/moe_dse) and the "
    "sglang==0.5.10 wheel (fused_moe_triton/configs); see README.md, section 'Data'."
)


def resolve_data_dir(data: str | os.PathLike[str] | None = None) -> Path:
    """Return the measurement directory: ``data`` if given, else $PIPEWEAVE_DATA, else ../shared/datasets.

    Raises :class:`DataError` naming the path that was tried and where to get the data.
    """
    if data is not None:
        path, how = Path(data), "--data"
    elif os.environ.get(DATA_ENV_VAR):
        path, how = Path(os.environ[DATA_ENV_VAR]), f"${DATA_ENV_VAR}"
    else:
        path, how = _DEFAULT_DATA, "the default data directory"
    if not path.is_dir():
        raise DataError(f"measurement data not found: {how} points to {str(path)!r}, which is not a directory",
                        hint=_WHERE_TO_GET)
    return path.resolve()
