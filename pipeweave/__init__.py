"""pipeweave: predict GPU kernel latency on GPUs that were never measured.

Analytical per-pipeline demand (tensor, FMA, ALU, SFU, MIO, L2, DRAM) computed from a kernel
launch and a GPU spec sheet, plus an XGBoost back-end that learns the cross-pipeline
interactions in a dimensionless, GPU-transferable form.
"""

from __future__ import annotations

__version__ = "0.1.0"

from ._errors import (
    CompileError,
    DataError,
    PipeweaveError,
    SchemaMismatchError,
    UnknownFamilyError,
    UnknownGPUError,
)

__all__ = [
    "__version__",
    "PipeweaveError",
    "DataError",
    "UnknownGPUError",
    "UnknownFamilyError",
    "SchemaMismatchError",
    "CompileError",
]
