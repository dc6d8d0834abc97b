"""The calibrated roofline time of a launch: launch + max(compute at the wave-quantized peak, compulsory
bytes at the DRAM bandwidth), each at a measured fraction of the spec sheet.

``T = t0 + max(u * F / (eta_c * P), B / (eta_m * BW_dram))`` (us), with F the useful FLOPs, P the spec
peak of the launch's pipe (``peak_tensor_flops_per_us``), B the compulsory DRAM bytes, u =
ceil(G / (S p)) * S p / G >= 1 the wave quantization of the compute term (G grid CTAs, S SMs, p
resident CTAs per SM), eta_c / eta_m the mean measured/spec ratios of TileSight's microbenchmarks
(Table 3: A100, H200, B6000, B200) and t0 = :data:`LAUNCH_US`. It is the ``roofline`` baseline of the
evaluation and a physical prior of the model (:data:`pipeweave.model.FAMILY_ROOFLINE_BLEND`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ._constants import LAUNCH_US

__all__ = ["ROOFLINE_COLUMNS", "ROOFLINE_ETA_COMPUTE", "ROOFLINE_ETA_MEMORY", "calibrated_roofline_us", "wave_factor"]

#: measured / spec tensor-core peak, mean of TileSight Table 3 (A100 0.96, H200 0.94, B6000 0.93, B200 0.92)
ROOFLINE_ETA_COMPUTE: float = 0.93
#: measured / spec DRAM bandwidth, mean of TileSight Table 3 (A100 0.89, H200 0.88, B6000 0.78, B200 0.88)
ROOFLINE_ETA_MEMORY: float = 0.86
#: featurized columns :func:`calibrated_roofline_us` reads
ROOFLINE_COLUMNS: tuple[str, ...] = (
    "useful_flop",
    "peak_tensor_flops_per_us",
    "dram_compulsory_bytes",
    "gpu_dram_bw_gbps",
    "grid_ctas",
    "gpu_sm_count",
    "ctas_per_sm",
)


def _col(cols: Mapping[str, Any] | pd.DataFrame, name: str) -> np.ndarray:
    return np.asarray(cols[name], dtype=float)


def wave_factor(cols: Mapping[str, Any] | pd.DataFrame) -> np.ndarray:
    """u = ceil(G / (S p)) * S p / G >= 1 per row (G = ``grid_ctas``, S = ``gpu_sm_count``, p =
    ``ctas_per_sm``, at least 1) from featurized columns (a DataFrame or a mapping of arrays)."""
    G = np.maximum(np.nan_to_num(_col(cols, "grid_ctas"), nan=1.0), 1.0)
    slots = _col(cols, "gpu_sm_count") * np.maximum(np.nan_to_num(_col(cols, "ctas_per_sm"), nan=1.0), 1.0)
    return np.ceil(G / slots) * slots / G


def calibrated_roofline_us(
    cols: Mapping[str, Any] | pd.DataFrame,
    *,
    eta_compute: float = ROOFLINE_ETA_COMPUTE,
    eta_memory: float = ROOFLINE_ETA_MEMORY,
    launch_us: float = LAUNCH_US,
) -> np.ndarray:
    """Calibrated roofline time (us) per featurized row (module docstring for the formula)."""
    t_c = _col(cols, "useful_flop") / _col(cols, "peak_tensor_flops_per_us")
    t_m = _col(cols, "dram_compulsory_bytes") / (_col(cols, "gpu_dram_bw_gbps") * 1e3)
    return launch_us + np.maximum(wave_factor(cols) * t_c / eta_compute, t_m / eta_memory)
