"""The shared vocabulary of pipeweave: every term that several subpackages use, defined once.

This module is deliberately light (standard library only at import; numpy only inside the one
vectorized helper), so any module, the CLI and user code can import it without paying for pandas
or XGBoost. Lists are plain tuples in a fixed order; extend them here and every user follows.

>>> from pipeweave import vocab
>>> vocab.TILE_COLUMNS
('block_m', 'block_n', 'block_k', 'group_m', 'num_warps', 'num_stages')
>>> vocab.order_generations(["hopper", "ampere", "blackwell"])
['ampere', 'hopper', 'blackwell']
>>> vocab.arch_class(100), vocab.arch_class(120)
('tcgen05', 'mma_sync')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._errors import DataError

__all__ = [
    "TILE_COLUMNS",
    "LATENCY_ORDERED_FAMILIES",
    "RECORDED_TILE_FAMILIES",
    "FAMILIES",
    "FAMILY_REQUIRED_COLUMNS",
    "closest_family",
    "DTYPES",
    "DTYPE_ALIASES",
    "canonical_dtype",
    "GENERATIONS",
    "LOGO_GENERATIONS",
    "order_generations",
    "ARCH_CLASSES",
    "arch_class",
    "async_mma",
    "ATTENTION_BACKENDS",
    "DEFAULT_ATTENTION_BACKEND",
    "attention_backend",
    "FLASHINFER_BACKENDS",
    "SOURCES",
    "USER_SOURCE",
    "DEFAULT_SOURCE",
    "default_source",
    "MOE_W13_DEFAULT_CONFIG",
    "MOE_W13_SMALL_M_CONFIG",
    "moe_w13_default_tiles",
    "parse_tile_config",
    "format_tile_config",
]

# ----------------------------------------------------------------------------------- tile plan
#: The six columns of a Triton tile plan (config), in the order of the ``BM,BN,BK,GM,WARPS,STAGES``
#: text form: BLOCK_M, BLOCK_N, BLOCK_K (elements), GROUP_M (tile rows per raster group), warps per
#: CTA, software-pipeline stages. NaN in a profile row when the source did not record the plan.
TILE_COLUMNS: tuple[str, ...] = ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages")
#: Families whose tile configs are shortlisted and ordered by the latency model's prediction of each tile-plan
#: row over the whole feasible space, by ``pipeweave diagnose`` and by the ``pipeweave.triton`` autotune hook (the
#: other tunable families: by the diagnose config ranker, trained on fused-MoE tile sweeps). Chosen on exhaustive
#: H200 sweeps of one Triton matmul kernel (experiments/device_h200, 29 shapes: the best of the first four configs
#: is 1.08x the exhaustive best by predicted latency, 1.28x by the ranker, 1.23x for four random configs); no
#: other GEMM sweep exists here.
LATENCY_ORDERED_FAMILIES: tuple[str, ...] = ("gemm",)
#: Families whose tile plan is the library's choice, recorded from the kernel that ran (gemm_fp32: the cuBLAS /
#: CUTLASS SIMT tile its kernel name encodes), not a launch parameter: a row may carry it, read without the Triton
#: checks; a launch planned for another GPU leaves it blank (that GPU's library may pick another tile).
RECORDED_TILE_FAMILIES: tuple[str, ...] = ("gemm_fp32",)

# ------------------------------------------------------------------------------------ families
#: Kernel families a profile row can belong to (the front-end registry has one entry per name).
FAMILIES: tuple[str, ...] = (
    "gemm",
    "fused_moe",
    "moe_w13",
    "attention_context",
    "attention_generation",
    # the non-tensor pipes (issue 13): bf16 CUDA kernels one CTA per token, FlashInfer batch
    # prefill/decode, and PyTorch FP32 operators on the CUDA cores (NeuSight)
    "rmsnorm",
    "silu_mul",
    "attention_flashinfer",
    "gemm_fp32",
    "elementwise_fp32",
    "softmax_fp32",
    "layernorm_fp32",
)

#: Columns a (user) table must provide for each family; the rest default (``pipeweave.sources.FAMILY_DEFAULTS``).
FAMILY_REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "gemm": ("m", "n", "k"),
    "fused_moe": ("num_tokens", "hidden_size", "inter_size", "topk", "num_experts"),
    "moe_w13": ("num_tokens", "hidden_size", "inter_size", "topk", "num_experts"),
    "attention_context": ("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim"),
    "attention_generation": ("batch_size", "num_heads", "num_key_value_heads", "head_dim", "step"),
    "rmsnorm": ("num_tokens", "hidden_size"),
    "silu_mul": ("num_tokens", "inter_size"),
    "attention_flashinfer": ("batch_size", "num_heads", "num_key_value_heads", "head_dim", "q_lengths", "kv_lengths"),
    "gemm_fp32": ("m", "n", "k"),
    "elementwise_fp32": ("op", "num_tokens", "hidden_size"),
    "softmax_fp32": ("num_tokens", "hidden_size"),
    "layernorm_fp32": ("num_tokens", "hidden_size"),
}


def closest_family(name: object) -> str | None:
    """The family of :data:`FAMILIES` nearest to the unknown ``name`` (difflib, cutoff 0.6), for "did you mean"
    messages; ``None`` when none is close."""
    import difflib

    close = difflib.get_close_matches(str(name), FAMILIES, n=1)
    return close[0] if close else None


#: Canonical dtype names: bf16, fp16, per-tensor FP8, W8A8 FP8 with [128,128] block scales.
DTYPES: tuple[str, ...] = ("bfloat16", "float16", "fp8", "fp8_block", "float32")
#: other spellings of a launch dtype (lower case; torch's names too) -> the canonical name of :data:`DTYPES`
DTYPE_ALIASES: dict[str, str] = {
    "bf16": "bfloat16",
    "torch.bfloat16": "bfloat16",
    "fp16": "float16",
    "half": "float16",
    "torch.float16": "float16",
    "torch.half": "float16",
    "fp32": "float32",
    "float": "float32",
    "torch.float32": "float32",
    "torch.float": "float32",
    "float8_e4m3fn": "fp8",
    "torch.float8_e4m3fn": "fp8",
    "fp8_e4m3": "fp8",
    "e4m3": "fp8",
}


def canonical_dtype(name: Any) -> Any:
    """The canonical dtype of ``name`` (``"bf16"`` -> ``"bfloat16"``, any case); other values unchanged."""
    if not isinstance(name, str):
        return name
    key = name.strip().lower()
    return key if key in DTYPES else DTYPE_ALIASES.get(key, name)


# --------------------------------------------------------------------------------- generations
#: NVIDIA GPU generations, oldest first (the order of every report and figure). A catalog GPU's
#: ``generation`` must be one of these.
GENERATIONS: tuple[str, ...] = ("pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")

#: The generations with latency measurements in the shared data: the folds of the
#: leave-one-generation-out protocol. A generation joins when its measurements do.
LOGO_GENERATIONS: tuple[str, ...] = ("pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")


def order_generations(values: Iterable[str]) -> list[str]:
    """Distinct generation names in :data:`GENERATIONS` order; unknown names follow, sorted."""
    vals = {str(v) for v in values}
    return [g for g in GENERATIONS if g in vals] + sorted(vals - set(GENERATIONS))


# ------------------------------------------------------------------------------ arch classes
#: Tensor-core programming model by compute capability (``sm_arch`` = 10 x major + minor):
#: ``mma_sync`` = warp-synchronous mma.sync with cp.async (sm_80/86/89 and the consumer
#: Blackwell sm_120/121), ``wgmma`` = asynchronous warpgroup MMA + TMA + thread-block clusters
#: (sm_90), ``tcgen05`` = asynchronous CTA-pair MMA into tensor memory + TMA + clusters
#: (datacenter Blackwell sm_100/103). Older parts (sm_60/70/75) are ``legacy``.
ARCH_CLASSES: tuple[str, ...] = ("legacy", "mma_sync", "wgmma", "tcgen05")


def arch_class(sm_arch: int) -> str:
    """The tensor-core class (one of :data:`ARCH_CLASSES`) of compute capability ``sm_arch`` (e.g. 90)."""
    a = int(sm_arch)
    if a < 80:
        return "legacy"
    if 90 <= a < 100:
        return "wgmma"
    if 100 <= a < 120:
        return "tcgen05"
    return "mma_sync"


def async_mma(sm_arch: Any) -> Any:
    """True where ``sm_arch`` (int or numpy array) has asynchronous MMA + TMA (``wgmma`` or ``tcgen05``).

    That is sm_90 and the datacenter Blackwell parts sm_100/103, not sm_120 (consumer Blackwell
    keeps mma.sync). Works element-wise on arrays.
    """
    import numpy as np

    a = np.asarray(sm_arch)
    out = (a >= 90) & (a < 120)
    return bool(out) if out.ndim == 0 else out


# -------------------------------------------------------------------------- attention backends
#: Attention kernel implementations in the profiles (the ``backend`` column). An attention launch
#: always runs one of them; an unspecified backend means FlashAttention.
ATTENTION_BACKENDS: tuple[str, ...] = ("flash_attention", "trtllm_mha", "triton")
DEFAULT_ATTENTION_BACKEND: str = "flash_attention"

#: FlashInfer code paths of the ``attention_flashinfer`` family (its ``backend`` column)
FLASHINFER_BACKENDS: tuple[str, ...] = ("fa2_ragged", "fa2_paged", "fa3_ragged", "fa3_paged")


def attention_backend(label: object) -> str:
    """The backend an attention row runs: ``label``, or :data:`DEFAULT_ATTENTION_BACKEND` when it is
    unspecified (None, or ``''``, ``'nan'``, ``'None'`` as text)."""
    text = "" if label is None else str(label)
    return DEFAULT_ATTENTION_BACKEND if text in ("", "nan", "None", "<NA>") else text


# ------------------------------------------------------------------------------------- sources
#: Sources of measured latencies the model knows (the ``source`` column; each is also a timing
#: convention: aiconfigurator = CUDA-graph replay, pipeweave = CUDA events around one launch).
SOURCES: tuple[str, ...] = ("aiconfigurator", "pipeweave", "pipeweave_fork_sample", "neusight", "vidur")
#: the ``source`` of a user's own measurements (a profile file's default): a valid source of a launch to
#: predict too (a model trained on such rows learned them under it; other models read it as no known source)
USER_SOURCE: str = "user"

#: The source a launch is predicted for when none is given: the family's main training source.
DEFAULT_SOURCE: dict[str, str] = {
    "gemm": "aiconfigurator",
    "fused_moe": "aiconfigurator",
    "moe_w13": "pipeweave",
    "attention_context": "aiconfigurator",
    "attention_generation": "aiconfigurator",
    "rmsnorm": "pipeweave_fork_sample",
    "silu_mul": "pipeweave_fork_sample",
    "attention_flashinfer": "pipeweave_fork_sample",
    "gemm_fp32": "neusight",
    "elementwise_fp32": "neusight",
    "softmax_fp32": "neusight",
    "layernorm_fp32": "neusight",
}


def default_source(family: str) -> str:
    """The default ``source`` of ``family`` (``aiconfigurator`` for families not listed)."""
    return DEFAULT_SOURCE.get(str(family), SOURCES[0])


# ----------------------------------------------------------------------- moe_w13 default config
#: Default tile plan of PipeWeave's W13 Triton kernel (the SGLang heuristic its artifact compares
#: against): this plan when M (tokens) > E (experts), :data:`MOE_W13_SMALL_M_CONFIG` when M <= E.
MOE_W13_DEFAULT_CONFIG: tuple[int, ...] = (64, 64, 64, 16, 4, 3)
MOE_W13_SMALL_M_CONFIG: tuple[int, ...] = (16, 32, 64, 1, 4, 3)


def moe_w13_default_tiles(num_tokens: Any, num_experts: Any) -> Any:
    """(rows, 6) float array of the W13 default plan per row (columns :data:`TILE_COLUMNS`)."""
    import numpy as np

    small = np.asarray(num_tokens, dtype=float) <= np.asarray(num_experts, dtype=float)
    return np.where(
        np.atleast_1d(small)[:, None],
        np.array(MOE_W13_SMALL_M_CONFIG, dtype=float),
        np.array(MOE_W13_DEFAULT_CONFIG, dtype=float),
    )


# ------------------------------------------------------------------------- config text form
def parse_tile_config(text: str) -> tuple[int, ...]:
    """``"64,64,32,8,4,3"`` -> (BM, BN, BK, GROUP_M, warps, stages); raises :class:`DataError`.

    Separators ``,``, ``/`` and ``x`` are accepted; all six values must be positive integers.
    """
    parts = [p.strip() for p in str(text).replace("/", ",").replace("x", ",").split(",") if p.strip()]
    try:
        vals = tuple(int(p) for p in parts)
    except ValueError:
        vals = ()
    if len(vals) != len(TILE_COLUMNS) or any(v <= 0 for v in vals):
        raise DataError(
            f"tile config {text!r} is not six positive integers",
            hint="write BLOCK_M,BLOCK_N,BLOCK_K,GROUP_M,WARPS,STAGES, e.g. 64,64,32,8,4,3",
        )
    return vals


def format_tile_config(values: Iterable[float]) -> str:
    """(64, 64, 32, 8, 4, 3) -> ``"64,64,32,8,4,3"`` (the text form :func:`parse_tile_config` reads)."""
    return ",".join(str(int(round(float(v)))) for v in values)
