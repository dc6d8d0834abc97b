"""Bring your own measurements: the canonical profile file and importers for common profilers.

``read_profiles(paths)`` reads and validates canonical profile files (CSV/parquet; format in
:mod:`._canonical`), ``import_profiles(kind, files, ...)`` converts PyTorch profiler (Kineto)
traces, Triton autotune caches and Nsight Compute CSVs, ``write_profiles`` writes the result.
A regressor trains on them through the public path::

    from pipeweave.model import PipeweaveRegressor
    from pipeweave.profiles import read_profiles

    model = PipeweaveRegressor().fit(read_profiles("my_profiles.csv"))
"""

from ._canonical import (
    PROFILE_SUFFIXES,
    REQUIRED_COLUMNS,
    USER_SOURCE,
    check_profiles,
    file_record,
    read_profiles,
    write_profiles,
)
from ._import import FIXED_COLUMNS, IMPORT_KINDS, IMPORT_OPTIONS, check_fixed_columns, import_profiles
from ._kineto import TORCH_DTYPES, import_kineto
from ._ncu import TIME_UNITS_US, import_ncu, read_ncu_csv, read_shapes
from ._triton import TILE_NAMES, autotune_files, import_triton_autotune

__all__ = [
    "FIXED_COLUMNS",
    "IMPORT_KINDS",
    "IMPORT_OPTIONS",
    "PROFILE_SUFFIXES",
    "REQUIRED_COLUMNS",
    "TILE_NAMES",
    "TIME_UNITS_US",
    "TORCH_DTYPES",
    "USER_SOURCE",
    "autotune_files",
    "check_fixed_columns",
    "check_profiles",
    "file_record",
    "import_kineto",
    "import_ncu",
    "import_profiles",
    "import_triton_autotune",
    "read_ncu_csv",
    "read_profiles",
    "read_shapes",
    "write_profiles",
]
