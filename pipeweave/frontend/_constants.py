"""Modelling constants of the analytical front-end, each with its unit and where it comes from.

These are not fitted to kernel latencies: they are micro-architectural facts or conservative
round numbers from public micro-benchmark papers. The XGBoost back-end learns what they miss.
"""

from __future__ import annotations

#: Bytes per element of each canonical dtype (activation/weight storage).
DTYPE_BYTES: dict[str, float] = {"bfloat16": 2.0, "float16": 2.0, "fp8": 1.0, "fp8_block": 1.0, "float32": 4.0}

#: Tensor-core rate key (``GPUSpec.tensor_flop_per_clk_per_sm``) used by each canonical dtype.
DTYPE_TENSOR_KEY: dict[str, str] = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "fp8": "fp8",
    "fp8_block": "fp8",
    "float32": "tf32",
}

#: Kernel launch + first-CTA dispatch on an idle GPU, microseconds. CUDA-graph replay floors in the
#: aiconfigurator data are ~1.5-2.5 us; CUDA-event timing adds host launch cost on top (learned).
LAUNCH_US: float = 2.0

#: Global-memory load latency seen by one warp (L2 miss to HBM/GDDR), SM cycles. Jia et al.
#: ("Dissecting the Ampere/Hopper GPU architecture") measure ~470-700 cycles; we use 600.
DRAM_LATENCY_CYCLES: float = 600.0

#: Most bytes per clock one SM can pull from L2 (LSU/TMA path), B/clk/SM. Ampere..Blackwell SMs
#: sustain 64 B/clk of L2->SM fill; a lone SM cannot draw the whole chip's bandwidth.
SM_L2_BYTES_PER_CLK: float = 64.0

#: Fraction of the L2 that a streaming kernel can keep for reuse (the rest holds outputs, metadata,
#: and lines in flight; L2 is split in two partitions on A100/H100/B200).
L2_USABLE_FRACTION: float = 0.5

#: Registers per thread assumed for a tensor-core tile of BM x BN x 4-byte accumulators spread over
#: the CTA's threads, plus this many for addresses/indices (used when ptxas' count is unknown).
REG_OVERHEAD_PER_THREAD: float = 40.0

#: Epilogue elementwise ops per output element (scale, convert, store address math).
EPILOGUE_OPS_PER_ELEMENT: float = 2.0

#: How far apart (as a fraction of the main loop) CTAs of one wave drift while they share an
#: operand panel; sets how long a panel must survive in L2 to be reused (deep-K correction of
#: TileSight's lockstep assumption, which predicts K-invariant reuse).
WAVE_DRIFT_FRACTION: float = 0.25

#: CTA raster group assumed for cuBLAS/CUTLASS GEMMs (threadblock swizzle), tiles.
CUBLAS_GROUP_M: int = 8

#: attention kernel implementations (the ``backend`` column) and the default: the shared
#: vocabulary, :data:`pipeweave.vocab.ATTENTION_BACKENDS` / ``DEFAULT_ATTENTION_BACKEND``
from ..vocab import ATTENTION_BACKENDS as KNOWN_BACKENDS  # noqa: E402,F401
from ..vocab import DEFAULT_ATTENTION_BACKEND  # noqa: E402,F401
