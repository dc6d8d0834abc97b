"""Spec similarity between GPUs: which measured GPU is "nearest" to a target.

Distance = Euclidean distance between the GPUs' spec vectors
``[ln sm_count, ln dram_bw_gbps, ln peak_bf16_flops, ln smem_per_sm_kib]``, each coordinate divided by
its standard deviation over the whole GPU catalog (so that no single spec dominates because of its
units or spread). ``nearest_gpus`` can exclude the target's own generation, as the dse protocol's
``transfer`` reference does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = ["spec_vector", "gpu_distance", "nearest_gpus"]

_SCALE: np.ndarray | None = None


def _raw(spec: GPUSpec) -> np.ndarray:
    bf16 = spec.tensor_flop_per_clk_per_sm.get("bf16", spec.tensor_flop_per_clk_per_sm.get("fp16", 1.0))
    return np.log(
        [
            float(spec.sm_count),
            float(spec.dram_bw_gbps),
            float(bf16) * spec.sm_count * spec.sm_clock_mhz,
            float(spec.smem_per_sm_kib),
        ]
    )


def _scale() -> np.ndarray:
    global _SCALE
    if _SCALE is None:
        from ..hardware import list_gpus

        X = np.array([_raw(s) for s in list_gpus()])
        sd = X.std(axis=0)
        _SCALE = np.where(sd > 0, sd, 1.0)
    return _SCALE


def _spec(g: str | GPUSpec) -> GPUSpec:
    from ..hardware import GPUSpec, get_gpu

    return g if isinstance(g, GPUSpec) else get_gpu(g)


def spec_vector(gpu: str | GPUSpec) -> np.ndarray:
    """Standardized spec vector of a GPU (name, alias or GPUSpec)."""
    return _raw(_spec(gpu)) / _scale()


def gpu_distance(a: str | GPUSpec, b: str | GPUSpec) -> float:
    """Spec distance between two GPUs (0 = identical spec vectors)."""
    return float(np.linalg.norm(spec_vector(a) - spec_vector(b)))


def nearest_gpus(
    target: str | GPUSpec,
    candidates: Iterable[str | GPUSpec],
    *,
    other_generation: bool = True,
    exclude_self: bool = True,
) -> list[tuple[str, float]]:
    """``[(name, distance), ...]`` of ``candidates`` sorted by spec distance to ``target``.

    ``other_generation`` drops candidates of the target's generation; ``exclude_self`` drops the
    target itself.
    """
    t = _spec(target)
    out = []
    for c in candidates:
        s = _spec(c)
        if exclude_self and s.name == t.name:
            continue
        if other_generation and s.generation == t.generation:
            continue
        out.append((s.name, gpu_distance(t, s)))
    return sorted(out, key=lambda x: (x[1], x[0]))
