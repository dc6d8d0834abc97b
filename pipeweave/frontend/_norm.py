"""Row kernels on the CUDA cores: RMSNorm, SiLU-and-mul (bf16) and NeuSight's FP32 element-wise,
softmax and layernorm operators. None uses the tensor cores: they are bound by DRAM/L2, the FMA
and ALU pipes, the MUFU (XU) pipe for exp / rsqrt / reciprocal, and, at small token counts, by
per-CTA latency (load round trips, the CTA-wide reduction) and launch overhead.

Per-element instruction counts (thread-level ops per element) come from the SASS of pipeweave's
builtin Triton kernels (``pipeweave sass --builtin rmsnorm|silu_mul --arch sm_80``, triton 3.9):
rmsnorm 11.5 FMA-pipe + 13.5 ALU ops per element and 4 MUFU ops per thread per row (rsqrt and the
1/N scaling); silu_mul 8.4 FMA + 8.5 ALU + 2 MUFU (ex2 and rcp of the sigmoid) per element.
The measured CUDA kernels differ from those Triton builtins in their launch geometry, which is
what this module models: one CTA per token over the whole row (the Triton silu_mul builtin tiles
the row over a second grid axis), 16-byte vector loads (8 bf16 per load) with min(1024, H/8)
threads for RMSNorm (FlashInfer), and min(1024, I) threads with a strided scalar loop for
vLLM's act_and_mul kernel; the reduction is a warp-shuffle tree plus one shared-memory round
(cub BlockReduce), not Triton's tl.sum.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._frame import num_values, str_values
from . import _constants as C
from ._demand import KernelDemand

__all__ = ["row_kernel", "l2_miss_fraction", "reread_miss_fraction", "NORM_FAMILIES", "ELEMENTWISE_OPS"]

Spec = dict[str, np.ndarray]

#: RMSNorm (builtin rmsnorm_kernel SASS, sm_80): thread ops per element and MUFU ops per thread per row
RMSNORM_FMA_PER_ELEM, RMSNORM_ALU_PER_ELEM, RMSNORM_XU_PER_THREAD = 11.5, 13.5, 4.0
#: SiLU-and-mul (builtin silu_mul_kernel SASS, sm_80): thread ops per output element
SILU_FMA_PER_ELEM, SILU_ALU_PER_ELEM, SILU_XU_PER_ELEM = 8.4, 8.5, 2.0
#: CTA-wide reduction: shuffle steps per warp reduction (log2 32) x 2 levels, ALU ops per thread
REDUCTION_ALU_PER_THREAD = 2.0 * 5.0 * 3.0

#: PyTorch FP32 element-wise ops (NeuSight OPName): (input bytes per element, FMA ops, ALU ops,
#: MUFU ops) per element. Binary ops read two tensors, the ``u`` variants a tensor and a scalar
#: (CUDAFunctorOnSelf). IEEE division = MUFU.RCP + Newton FMAs; powf = log2/exp2 with extended-
#: precision FMA sequences; tanhf / gelu (erf) = FMA polynomials with one MUFU op.
ELEMENTWISE_OPS: dict[str, tuple[float, float, float, float]] = {
    "add": (8.0, 1.0, 2.0, 0.0),
    "addu": (4.0, 1.0, 2.0, 0.0),
    "mul": (8.0, 1.0, 2.0, 0.0),
    "mulu": (4.0, 1.0, 2.0, 0.0),
    "div": (8.0, 4.0, 2.0, 1.0),
    "divu": (4.0, 4.0, 2.0, 1.0),
    "pow": (8.0, 20.0, 6.0, 2.0),
    "powu": (4.0, 20.0, 6.0, 2.0),
    "relu": (4.0, 0.0, 3.0, 0.0),
    "tanh": (4.0, 12.0, 4.0, 1.0),
    "gelu": (4.0, 16.0, 4.0, 1.0),
}


def _warps_ceil(threads: np.ndarray) -> np.ndarray:
    return np.maximum(np.ceil(threads / 32.0), 1.0) * 32.0


def l2_miss_fraction(working_set_bytes: np.ndarray, spec: Spec) -> np.ndarray:
    """Share of a streaming kernel's compulsory bytes that come from DRAM when it is timed back to
    back on the same buffers (every source here repeats the launch): 0 while the working set fits
    the usable L2 (``L2_USABLE_FRACTION`` of it), 1 from twice that on (LRU streaming thrashes),
    linear in between."""
    l2 = spec["l2_mib"] * 2.0**20 * C.L2_USABLE_FRACTION
    return np.clip(np.asarray(working_set_bytes, dtype=float) / l2 - 1.0, 0.0, 1.0)


def reread_miss_fraction(
    rows: np.ndarray, row_bytes: np.ndarray, threads: np.ndarray, rows_per_cta: np.ndarray | float, spec: Spec
) -> np.ndarray:
    """Share of a multi-pass row kernel's re-reads that miss L2 and go to DRAM.

    A pass over a row re-reads what the CTA read a few microseconds earlier; between the two reads every
    resident CTA streams its own rows through L2. The rows in flight are min(rows, resident CTAs x
    ``rows_per_cta``), resident CTAs = SMs x the CTAs a ``threads``-thread CTA fits per SM (warp and CTA
    limits); the re-read misses like a streaming working set of those rows' ``row_bytes``
    (:func:`l2_miss_fraction`: none while they fit the usable L2, all from twice that)."""
    w = np.maximum(np.ceil(np.asarray(threads, dtype=float) / 32.0), 1.0)
    per_sm = np.maximum(np.minimum(spec["max_ctas_per_sm"], np.floor(spec["max_warps_per_sm"] / w)), 1.0)
    in_flight = np.minimum(np.asarray(rows, dtype=float), spec["sm_count"] * per_sm * rows_per_cta)
    return l2_miss_fraction(in_flight * np.asarray(row_bytes, dtype=float), spec)


def _reread_dram_bytes(
    rereads: np.ndarray | float,
    rows: np.ndarray,
    row_bytes: np.ndarray,
    threads: np.ndarray,
    rows_per_cta: np.ndarray | float,
    spec: Spec,
) -> np.ndarray:
    """DRAM bytes of ``rereads`` extra passes over each of ``rows`` rows of ``row_bytes`` (the share that
    misses L2: :func:`reread_miss_fraction`)."""
    return rereads * rows * row_bytes * reread_miss_fraction(rows, row_bytes, threads, rows_per_cta, spec)


def row_kernel(
    name: str,
    *,
    rows: np.ndarray,
    width: np.ndarray,
    threads: np.ndarray,
    vec: np.ndarray | float,
    in_bytes: np.ndarray | float,
    out_bytes: np.ndarray | float,
    fma_per_elem: np.ndarray | float,
    alu_per_elem: np.ndarray | float,
    xu_per_elem: np.ndarray | float,
    passes: float = 1.0,
    xu_per_thread: float = 0.0,
    reduction: bool = False,
    const_bytes: np.ndarray | float = 0.0,
    rows_per_cta: np.ndarray | float = 1.0,
    spec: Spec | None = None,
) -> KernelDemand:
    """Demand of a kernel with ``rows_per_cta`` rows of ``width`` elements per CTA (grid = rows / that).

    Each main-loop iteration moves ``threads * vec`` elements of every row the CTA owns;
    ``passes`` = dependent read rounds over the row (2 for two-pass norms: the second pass re-reads
    the row from L2, or from DRAM where the rows in flight outgrow L2: :func:`reread_miss_fraction`,
    with ``spec``); ``in_bytes`` / ``out_bytes`` per element; ``const_bytes`` = bytes per row
    of a vector shared by all rows (the norm weight: L2-resident, read from DRAM once);
    ``reduction`` adds a CTA-wide shuffle + shared-memory reduction per row; ``xu_per_thread``
    MUFU ops each thread runs once per row (rsqrt). Counts are thread-level ops. With ``spec``, the
    DRAM bytes are the compulsory bytes times :func:`l2_miss_fraction` (warm L2 between launches).
    """
    rows = np.asarray(rows, dtype=float)
    width = np.asarray(width, dtype=float)
    rpc = np.broadcast_to(np.asarray(rows_per_cta, dtype=float), rows.shape)
    threads = np.asarray(threads, dtype=float)
    grid = np.maximum(np.ceil(rows / rpc), 1.0)
    per_it = threads * vec / rpc  # elements of one row handled per iteration (threads split over rows)
    iters = np.maximum(np.ceil(width / per_it), 1.0) * passes
    elems_it = width * rpc / iters * passes  # elements touched per iteration, all rows of the CTA
    out_row = width * out_bytes
    compulsory = rows * width * (in_bytes + out_bytes) + width * const_bytes
    dram = compulsory * (l2_miss_fraction(compulsory, spec) if spec is not None else 1.0)
    if spec is not None and passes > 1:
        dram = dram + _reread_dram_bytes(passes - 1.0, rows, width * in_bytes, threads, rpc, spec)
    red_alu = np.where(reduction, threads * REDUCTION_ALU_PER_THREAD * rpc, 0.0)
    return KernelDemand(
        name=name,
        grid_ctas=grid,
        iters=iters,
        tensor_rate=1.0,
        threads=threads,
        stages=2.0,
        smem_cta_bytes=np.where(reduction, 32.0 * 4.0 * rpc, 0.0),
        regs_per_thread=32.0,
        tensor_flop_it=0.0,
        fma_it=elems_it * fma_per_elem / passes,
        alu_it=elems_it * alu_per_elem / passes,
        xu_it=elems_it * xu_per_elem / passes,
        load_bytes_it=elems_it * (in_bytes + const_bytes / passes),
        smem_bytes_it=0.0,
        fma_cta=0.0,
        xu_cta=threads * xu_per_thread,
        load_bytes_cta=np.where(reduction, 2.0 * 32.0 * 4.0, 0.0) * rpc,
        store_bytes_cta=out_row * rpc,
        dram_bytes=dram,
        dram_compulsory_bytes=compulsory,
        useful_flop=0.0,
        extra={"reduction_alu": red_alu},
    )


def _with_alu(kd: KernelDemand) -> KernelDemand:
    """Fold the per-CTA reduction ALU work into the per-iteration ALU column (the schedule has no
    per-CTA ALU term)."""
    red = kd.extra.pop("reduction_alu", None)
    if red is not None:
        kd.alu_it = kd.alu_it + red / kd.iters
    return kd


def _tile_frame(n: int, threads: np.ndarray, origin: str) -> pd.DataFrame:
    nan = np.full(n, np.nan)
    return pd.DataFrame(
        {
            "block_m": np.ones(n),
            "block_n": nan,
            "block_k": nan,
            "group_m": np.ones(n),
            "num_warps": threads / 32.0,
            "num_stages": np.ones(n),
            "tile_origin": origin,
        }
    )


def _build_rmsnorm(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    """FlashInfer RMSNorm: one CTA per token, min(1024, H/8) threads, 16-byte bf16 vectors, two passes
    (sum of squares -> block reduce -> rsqrt, then re-read x and the weight, scale, store)."""
    T, H = num_values(df, "num_tokens"), num_values(df, "hidden_size")
    threads = _warps_ceil(np.minimum(1024.0, np.ceil(H / 8.0)))
    kd = row_kernel(
        "rmsnorm",
        rows=T,
        width=H,
        threads=threads,
        vec=8.0,
        in_bytes=2.0,
        out_bytes=2.0,
        fma_per_elem=RMSNORM_FMA_PER_ELEM,
        alu_per_elem=RMSNORM_ALU_PER_ELEM,
        xu_per_elem=0.0,
        passes=2.0,
        xu_per_thread=RMSNORM_XU_PER_THREAD,
        reduction=True,
        const_bytes=2.0,
        spec=spec,
    )
    tiles = _tile_frame(len(df), threads, "cuda_rmsnorm")
    tiles["block_n"] = 8.0 * threads
    return [_with_alu(kd)], tiles


def _build_silu_mul(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    """vLLM act_and_mul: one CTA per token, min(1024, I) threads striding over the I outputs; reads
    the gate and up halves (2 x I bf16), writes I bf16; silu(x) = x / (1 + exp(-x)) on MUFU."""
    T, I = num_values(df, "num_tokens"), num_values(df, "inter_size")  # noqa: E741 (I = intermediate size)
    threads = _warps_ceil(np.minimum(1024.0, I))
    kd = row_kernel(
        "silu_mul",
        rows=T,
        width=I,
        threads=threads,
        vec=1.0,
        in_bytes=4.0,
        out_bytes=2.0,
        fma_per_elem=SILU_FMA_PER_ELEM,
        alu_per_elem=SILU_ALU_PER_ELEM,
        xu_per_elem=SILU_XU_PER_ELEM,
        spec=spec,
    )
    tiles = _tile_frame(len(df), threads, "cuda_act_and_mul")
    tiles["block_n"] = threads
    return [kd], tiles


def _build_elementwise_fp32(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    """PyTorch vectorized_elementwise_kernel<4>: 128 threads x 4 elements per CTA over B x H FP32."""
    B, H = num_values(df, "num_tokens"), num_values(df, "hidden_size")
    ops = str_values(df["op"]) if "op" in df else np.full(len(df), "add", dtype=object)
    table = np.array([ELEMENTWISE_OPS.get(str(o), (np.nan,) * 4) for o in pd.unique(ops)], dtype=float)
    pos = pd.Index(pd.unique(ops)).get_indexer(ops)
    cols = table[pos] if len(table) else np.zeros((len(df), 4))
    bad = ~np.isfinite(cols).all(axis=1)
    if bad.any():
        from .._errors import DataError

        raise DataError(
            f"elementwise_fp32: unknown op {sorted({str(o) for o in ops[bad]})}",
            hint=f"op is one of {sorted(ELEMENTWISE_OPS)}",
        )
    n = B * H
    kd = row_kernel(
        "elementwise_fp32",
        rows=np.ceil(n / 512.0),
        width=np.full(len(df), 512.0),
        threads=np.full(len(df), 128.0),
        vec=4.0,
        in_bytes=cols[:, 0],
        out_bytes=4.0,
        fma_per_elem=cols[:, 1],
        alu_per_elem=cols[:, 2],
        xu_per_elem=cols[:, 3],
    )
    kd.dram_compulsory_bytes = n * (cols[:, 0] + 4.0)
    kd.dram_bytes = kd.dram_compulsory_bytes * l2_miss_fraction(kd.dram_compulsory_bytes, spec)
    tiles = _tile_frame(len(df), np.full(len(df), 128.0), "pytorch_vectorized_elementwise")
    tiles["block_n"] = 512.0
    return [kd], tiles


def _softmax_threads(H: np.ndarray) -> np.ndarray:
    """PyTorch SoftMax_getBlockSize: ILP 4, block = next power of two of H / 4, in [32, 1024]."""
    want = np.maximum(H / 4.0, 1.0)
    return np.clip(2.0 ** np.ceil(np.log2(want)), 32.0, 1024.0)


def _build_softmax_fp32(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    """torch.softmax(dim=-1): H <= 1024 -> softmax_warp_forward (a warp per row, 4 rows per 128-thread
    CTA, one read held in registers); else cunn_SoftMaxForward (a CTA per row, reads the row for the
    max, again for the sum of exp, again to write: 3 passes, exp computed twice)."""
    B, H = num_values(df, "num_tokens"), num_values(df, "hidden_size")
    warp = H <= 1024.0
    threads = np.where(warp, 128.0, _softmax_threads(H))
    kd = row_kernel(
        "softmax_fp32",
        rows=B,
        width=H,
        threads=threads,
        vec=np.where(warp, 1.0, 4.0),
        in_bytes=4.0,
        out_bytes=4.0,
        fma_per_elem=np.where(warp, 4.0, 6.0),
        alu_per_elem=4.0,
        xu_per_elem=np.where(warp, 1.0, 2.0),
        passes=1.0,
        xu_per_thread=1.0,
        reduction=True,
        rows_per_cta=np.where(warp, 4.0, 1.0),
        spec=spec,
    )
    # the block kernel reads the row three times (from L2 after the first, or DRAM where the rows in flight
    # outgrow L2)
    kd.load_bytes_it = kd.load_bytes_it * np.where(warp, 1.0, 3.0)
    kd.dram_bytes = kd.dram_bytes + _reread_dram_bytes(np.where(warp, 0.0, 2.0), B, H * 4.0, threads, 1.0, spec)
    tiles = _tile_frame(len(df), threads, "pytorch_softmax")
    tiles["block_m"] = np.where(warp, 4.0, 1.0)
    return [_with_alu(kd)], tiles


def _build_layernorm_fp32(df: pd.DataFrame, spec: Spec, ctx: dict) -> tuple[list[KernelDemand], pd.DataFrame]:
    """PyTorch vectorized_layer_norm_kernel: a CTA of 128 threads (32 x 4) per row, float4 loads,
    Welford mean/variance (a division per update), block reduce, rsqrt, then re-read, scale by
    gamma and shift by beta (two shared vectors), store."""
    B, H = num_values(df, "num_tokens"), num_values(df, "hidden_size")
    threads = np.full(len(df), 128.0)
    kd = row_kernel(
        "layernorm_fp32",
        rows=B,
        width=H,
        threads=threads,
        vec=4.0,
        in_bytes=4.0,
        out_bytes=4.0,
        fma_per_elem=10.0,
        alu_per_elem=4.0,
        xu_per_elem=0.5,
        passes=2.0,
        xu_per_thread=2.0,
        reduction=True,
        const_bytes=8.0,
        spec=spec,
    )
    tiles = _tile_frame(len(df), threads, "pytorch_layer_norm")
    return [_with_alu(kd)], tiles


#: (name, shape columns, dtypes, builder, description) of the row-kernel families; registered by
#: :mod:`._families`, which builds :class:`~._families.Family` entries from them.
NORM_FAMILIES = (
    (
        "rmsnorm",
        ("num_tokens", "hidden_size"),
        ("bfloat16", "float16"),
        _build_rmsnorm,
        "RMSNorm CUDA kernel (FlashInfer/vLLM), one CTA per token over hidden_size (bf16)",
    ),
    (
        "silu_mul",
        ("num_tokens", "inter_size"),
        ("bfloat16", "float16"),
        _build_silu_mul,
        "SiLU-and-mul CUDA kernel (vLLM act_and_mul), one CTA per token; reads 2 x inter_size, writes inter_size",
    ),
    (
        "elementwise_fp32",
        ("num_tokens", "hidden_size"),
        ("float32",),
        _build_elementwise_fp32,
        "PyTorch FP32 element-wise op (`op`: add/mul/div/pow [+u = scalar], relu, tanh, gelu) over num_tokens x hidden_size",
    ),
    (
        "softmax_fp32",
        ("num_tokens", "hidden_size"),
        ("float32",),
        _build_softmax_fp32,
        "PyTorch FP32 softmax over the last dim (hidden_size) of num_tokens rows",
    ),
    (
        "layernorm_fp32",
        ("num_tokens", "hidden_size"),
        ("float32",),
        _build_layernorm_fp32,
        "PyTorch FP32 layer_norm over the last dim (hidden_size) of num_tokens rows",
    ),
)
