"""pipeweave: predict GPU kernel latency on GPUs that were never measured.

Analytical per-pipeline demand (tensor, FMA, ALU, SFU, MIO, L2, DRAM) computed from a kernel
launch and a GPU spec sheet, plus an XGBoost back-end that learns the cross-pipeline
interactions in a dimensionless, GPU-transferable form.

Use from Python (latencies in microseconds)::

    import pipeweave as pw

    pw.predict({"family": "gemm", "dtype": "bfloat16", "m": 8192, "n": 8192, "k": 8192}, gpu="B300")
    pw.explain({"family": "gemm", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096}, gpu="H100")
    pw.compare(workload_rows, gpus=["H100", "B200", "B300"]).summary  # which GPU runs a workload fastest
    model = pw.PipeweaveRegressor().fit(pw.load_profiles(families="moe_w13"))

Your own measurements and a new GPU (see docs/own_measurements.md)::

    rows, skipped = pw.profiles.import_profiles("kineto", "trace.json")    # or "triton-autotune", "ncu"
    plan = pw.calibrate.plan_launches(candidates, 32, gpus={spec.name: spec})  # what to measure on it
    # python -m pipeweave.measure plan.csv --out measured.csv               (on the GPU)
    calibrated = pw.calibrate.calibrate_model(pw.load_model(), measured, gpu=spec.name, gpus={spec.name: spec})
    pw.diagnose(launch, gpu="H100", measured_us=2321.0)                     # ceiling, bound pipe, configs

The names below are imported on first use (PEP 562), so ``import pipeweave`` stays fast and does
not import pandas, scikit-learn or XGBoost.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import (
    CompileError,
    DataError,
    PipeweaveError,
    SchemaMismatchError,
    UnknownFamilyError,
    UnknownGPUError,
)

__version__ = "0.1.0"

#: public name -> module it lives in (imported on first attribute access)
_LAZY: dict[str, str] = {
    "predict": "pipeweave.api",
    "predict_frame": "pipeweave.api",
    "compare": "pipeweave.api",
    "plot_comparison": "pipeweave.api",
    "plot_diagnosis": "pipeweave.diagnose",
    "load_model": "pipeweave.api",
    "featurize": "pipeweave.api",
    "explain": "pipeweave.api",
    "load_profiles": "pipeweave.api",
    "load_profiles_report": "pipeweave.api",
    "evaluate": "pipeweave.api",
    "get_gpu": "pipeweave.api",
    "list_gpus": "pipeweave.api",
    "PipeweaveRegressor": "pipeweave.model",
    "save_model": "pipeweave.model",
    "GPUSpec": "pipeweave.hardware",
}
#: subpackages and modules reachable as attributes (``pw.vocab.TILE_COLUMNS``)
_SUBMODULES: tuple[str, ...] = (
    "api",
    "vocab",
    "hardware",
    "sources",
    "frontend",
    "model",
    "baselines",
    "evaluation",
    "diagnose",
    "profiles",
    "calibrate",
    "triton",
    "distributed",
    "cli",
)

__all__ = [
    "__version__",
    "PipeweaveError",
    "DataError",
    "UnknownGPUError",
    "UnknownFamilyError",
    "SchemaMismatchError",
    "CompileError",
    *_LAZY,
    "diagnose",  # the subpackage, callable as pw.diagnose(launch, gpu=...) (pipeweave.api.diagnose)
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from . import (  # noqa: F401
        api,
        diagnose,  # noqa: F401
        vocab,
    )
    from .api import (  # noqa: F401
        evaluate,
        explain,
        featurize,
        get_gpu,
        list_gpus,
        load_model,
        load_profiles,
        load_profiles_report,
        predict,
        predict_frame,
    )
    from .hardware import GPUSpec  # noqa: F401
    from .model import PipeweaveRegressor, save_model  # noqa: F401


def __getattr__(name: str) -> Any:
    """Import a public name (or a subpackage) on first access (PEP 562)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and subpackages (not this module's own imports such as ``importlib``)."""
    return sorted(set(__all__) | set(_SUBMODULES) | {n for n in globals() if n.startswith("__")})
