"""Analytical front-end: kernel launches + GPU specs -> per-pipeline demand and features.

Public API: :func:`featurize` (vectorized over a profile DataFrame), :data:`FEATURES` (ordered
model features; :data:`SHAPE_FEATURE_COLUMNS`: the columns behind the shape features),
:data:`FAMILIES` (the family registry), :data:`PIPES`, :func:`get_family`, :func:`bound_pipe`.
The SASS path lives in :mod:`pipeweave.frontend.sass`.
"""

# modelling constants other subpackages use (units and sources in ._constants)
from ._constants import DRAM_LATENCY_CYCLES, DTYPE_BYTES, DTYPE_TENSOR_KEY, LAUNCH_US
from ._crude import (
    CRUDE_FEATURES,
    CRUDE_INPUT_COLUMNS,
    CRUDE_ROW_CHUNK,
    CRUDE_TILE,
    crude_features,
    crude_matrix,
    crude_matrix_names,
)
from ._demand import PIPES, KernelDemand, schedule
from ._families import FAMILIES, Family, get_family, named_tile_rows
from ._featurize import (
    DEFAULT_SHAPE_FEATURE_COLUMNS,
    EXTRA_FEATURES,
    FEATURES,
    SHAPE_FEATURE_COLUMNS,
    bound_pipe,
    feature_arrays,
    featurize,
    l2_resident_share,
    spec_arrays,
    warm_l2_envelope_us,
)
from ._fp32ops import (
    SIMT_TILES,
    SPLIT_K_CANDIDATES,
    SPLIT_K_MIN_SLICE,
    b_transposed,
    given_split_k,
    infer_split_k,
    library_tile_rows,
    simt_tile_launches,
    tiled_launches,
)
from ._occupancy import ctas_per_sm
from ._roofline import ROOFLINE_COLUMNS, ROOFLINE_ETA_COMPUTE, ROOFLINE_ETA_MEMORY, calibrated_roofline_us, wave_factor
from ._routing import distribution_alpha, routing_stats
from ._smem import triton_smem_buffers, triton_smem_bytes
from ._tileplan import TILE_COLUMNS
from ._validate import (
    COLUMN_DOMAINS,
    DERIVED_COLUMNS,
    LAUNCH_DEFAULTS,
    MAX_LATENCY_US,
    OPTIONAL_LAUNCH_COLUMNS,
    default_dtype,
    fill_launch_defaults,
    launch_columns,
    row_problems,
)

__all__ = [
    "SIMT_TILES",
    "SPLIT_K_CANDIDATES",
    "SPLIT_K_MIN_SLICE",
    "infer_split_k",
    "given_split_k",
    "library_tile_rows",
    "b_transposed",
    "simt_tile_launches",
    "tiled_launches",
    "CRUDE_FEATURES",
    "CRUDE_INPUT_COLUMNS",
    "CRUDE_ROW_CHUNK",
    "CRUDE_TILE",
    "crude_features",
    "crude_matrix",
    "crude_matrix_names",
    "ctas_per_sm",
    "LAUNCH_US",
    "ROOFLINE_COLUMNS",
    "ROOFLINE_ETA_COMPUTE",
    "ROOFLINE_ETA_MEMORY",
    "calibrated_roofline_us",
    "wave_factor",
    "DRAM_LATENCY_CYCLES",
    "DTYPE_BYTES",
    "DTYPE_TENSOR_KEY",
    "featurize",
    "feature_arrays",
    "EXTRA_FEATURES",
    "FEATURES",
    "SHAPE_FEATURE_COLUMNS",
    "DEFAULT_SHAPE_FEATURE_COLUMNS",
    "FAMILIES",
    "Family",
    "get_family",
    "named_tile_rows",
    "PIPES",
    "TILE_COLUMNS",
    "KernelDemand",
    "schedule",
    "bound_pipe",
    "spec_arrays",
    "l2_resident_share",
    "warm_l2_envelope_us",
    "distribution_alpha",
    "routing_stats",
    "row_problems",
    "fill_launch_defaults",
    "COLUMN_DOMAINS",
    "LAUNCH_DEFAULTS",
    "OPTIONAL_LAUNCH_COLUMNS",
    "launch_columns",
    "default_dtype",
    "DERIVED_COLUMNS",
    "MAX_LATENCY_US",
    "triton_smem_bytes",
    "triton_smem_buffers",
]
