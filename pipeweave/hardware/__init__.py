"""GPU specs: the catalog (``datasets/gpus.toml``), name resolution and user spec files.

>>> from pipeweave.hardware import get_gpu
>>> get_gpu("NVIDIA H100 80GB HBM3").name
'H100-SXM'
"""

from __future__ import annotations

from ._catalog import (
    CATALOG_PATH,
    EXAMPLE_SPEC_PATH,
    generation_of,
    get_gpu,
    gpu_frame,
    gpu_names,
    list_gpus,
    load_spec_file,
    match_gpu_name,
    resolve_gpu_name,
    resolve_gpu_names,
    spec_from_dict,
    spec_to_toml,
    suggest_gpu_names,
)
from ._spec import (
    GENERATIONS,
    OPTIONAL_SPEC_FIELDS,
    REQUIRED_SPEC_FIELDS,
    SPEC_FIELDS,
    TENSOR_DTYPES,
    GPUSpec,
    tensor_key,
)

__all__ = [
    "GPUSpec",
    "GENERATIONS",
    "TENSOR_DTYPES",
    "SPEC_FIELDS",
    "REQUIRED_SPEC_FIELDS",
    "OPTIONAL_SPEC_FIELDS",
    "CATALOG_PATH",
    "EXAMPLE_SPEC_PATH",
    "get_gpu",
    "resolve_gpu_name",
    "resolve_gpu_names",
    "match_gpu_name",
    "list_gpus",
    "gpu_names",
    "load_spec_file",
    "spec_from_dict",
    "spec_to_toml",
    "suggest_gpu_names",
    "gpu_frame",
    "generation_of",
    "tensor_key",
]
