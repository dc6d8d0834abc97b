"""The shipped model's recipe, defined once: what ``pipeweave train`` and ``PipeweaveRegressor()`` use.

``PipeweaveRegressor()``'s own defaults are this recipe (one booster per family plus the shared
fallback, 200 trees, at most :data:`DEFAULT_MAX_ROWS_PER_GROUP` seeded-random training rows per
(GPU, family, dtype, source)); :data:`DEFAULT_MODEL_PARAMS` lists the settings that differ from
XGBoost's or the historical defaults, for callers that build the model by name.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEFAULT_MAX_ROWS_PER_GROUP",
    "DEFAULT_MODEL_PARAMS",
    "FAMILY_BOOSTER_ROWS",
    "ROW_CAP_GROUP",
    "GPU_BLIND_FAMILIES",
    "INFORMATIVE_SAMPLING_FAMILIES",
]

#: seeded random cap on training rows per (GPU, family, dtype, source), so no group dominates
DEFAULT_MAX_ROWS_PER_GROUP: int = 10_000
#: the columns of a row-cap group
ROW_CAP_GROUP: tuple[str, ...] = ("gpu", "family", "dtype", "source")
#: families whose rows see no per-GPU constant feature (``pipeweave.model.GPU_CONSTANT_FEATURES``) in
#: any booster: the memory-bound ones (``pipeweave.frontend.FAMILIES[f].memory_bound``) and prefill
#: attention, each chosen by nested leave-one-generation-out inside the training generations
#: (``experiments/accuracy_log``, frames "GPU-constant features"); GEMM, MoE, decode and FlashInfer
#: attention and FP32 GEMM keep them (removing them was worse or no better there)
GPU_BLIND_FAMILIES: tuple[str, ...] = (
    "rmsnorm",
    "silu_mul",
    "elementwise_fp32",
    "softmax_fp32",
    "layernorm_fp32",
    "attention_context",
)
#: families whose boosters draw columns (``colsample_bytree``) only among those that vary on their
#: training rows (``sample_informative_only``): prefill attention, chosen by nested
#: leave-one-generation-out over three seeds (inner 30.7 vs 32.3); decode attention, fused MoE and
#: moe_w13 were worse with it (``experiments/accuracy_log``, frames "informative-column sampling" and
#: "feature screens on prefill attention")
INFORMATIVE_SAMPLING_FAMILIES: tuple[str, ...] = ("attention_context",)
#: family -> the families whose training rows its booster is fitted on (family one-hots tell them
#: apart); a family not listed is fitted on its own rows. Decode attention's booster also learns from
#: the other tensor-core families (GEMM, fused MoE, moe_w13, prefill attention), measured on the same
#: GPUs: nested leave-one-generation-out inside the training generations, three seeds, inner 28.62 /
#: 29.11 / 29.14 against 30.42 / 30.74 / 31.20 on its own rows (``experiments/accuracy_log``, frame
#: "joint training"); every family's rows in one booster was worse on GEMM (29.3 vs 18.2) and no better
#: on prefill attention, and GEMM with the fp8 rows was worse (19.0 vs 18.2)
FAMILY_BOOSTER_ROWS: dict[str, tuple[str, ...]] = {
    "attention_generation": ("gemm", "fused_moe", "moe_w13", "attention_context", "attention_generation"),
}
#: settings of the shipped model (all equal to PipeweaveRegressor's defaults; ``--shared`` unsets per_family)
DEFAULT_MODEL_PARAMS: dict[str, Any] = {"per_family": True, "max_rows_per_group": DEFAULT_MAX_ROWS_PER_GROUP}
