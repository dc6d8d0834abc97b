"""The canonical profile table: column names, dtypes, families and their key columns.

One row = one measured kernel launch. Units are in the column names (``latency_us`` is
microseconds); shape columns are counts (tokens, elements, heads). Numeric columns are float64
with NaN where a column does not apply to a row's family; string columns are pandas
``category``; the ``in_dse_*`` membership columns are bool.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..vocab import DTYPES, FAMILIES, FAMILY_REQUIRED_COLUMNS, TILE_COLUMNS

__all__ = [
    "FAMILIES",
    "DTYPES",
    "PROFILE_COLUMNS",
    "FAMILY_KEY_COLUMNS",
    "FAMILY_REQUIRED_COLUMNS",
    "FAMILY_DEFAULTS",
    "COMMON_COLUMNS",
    "TILE_COLUMNS",
    "STRING_COLUMNS",
    "BOOL_COLUMNS",
    "NUMERIC_COLUMNS",
    "empty_profiles",
    "conform",
]

# FAMILIES (kernel families), DTYPES (canonical dtype names) and TILE_COLUMNS (the Triton tile
# plan, NaN when the source did not record it) are the shared vocabulary (pipeweave.vocab).

COMMON_COLUMNS: tuple[str, ...] = (
    "source",  # public project the measurement comes from (aiconfigurator, pipeweave, user ...)
    "dataset",  # file group inside the source (gemm_perf, moe_w13, moe_dse, gemm_fp8 ...)
    "timing",  # timing method: cuda_graph, cuda_event
    "gpu",  # canonical catalog name (pipeweave.hardware.resolve_gpu_name)
    "generation",  # ampere, ada, hopper, blackwell
    "family",
    "dtype",
    "latency_us",  # measured latency, microseconds, finite > 0
)
GEMM_COLUMNS: tuple[str, ...] = ("m", "n", "k")
MOE_COLUMNS: tuple[str, ...] = (
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "moe_tp_size",
    "moe_ep_size",
    "distribution",
)
ATTENTION_COLUMNS: tuple[str, ...] = (
    "batch_size",
    "isl",
    "num_heads",
    "num_key_value_heads",
    "head_dim",
    "step",
    "window_size",
    "backend",
    "kv_cache_dtype",
)
#: Non-tensor families (issue 13). rmsnorm: num_tokens x hidden_size; silu_mul: num_tokens x
#: inter_size (the OUTPUT width; the kernel reads 2 x inter_size per token); elementwise_fp32 /
#: softmax_fp32 / layernorm_fp32: num_tokens rows (NeuSight's B) x hidden_size (its H), with
#: ``op`` naming the PyTorch operator; gemm_fp32: batch_size x (m, n, k), ``op`` = bmm or linear;
#: attention_flashinfer: per-request ``q_lengths`` / ``kv_lengths`` (";"-joined integers) with
#: ``backend`` = fa2_ragged / fa2_paged / fa3_ragged / fa3_paged.
OP_COLUMNS: tuple[str, ...] = (
    "op",  # operator inside a family (NeuSight OPName: bmm, linear, add, gelu, softmax, ln ...)
    "kernel_name",  # name of the (dominant) CUDA kernel the source recorded, e.g. volta_sgemm_128x64_tn
    "split_k",  # gemm_fp32: CTAs per output tile along the reduction (cuBLAS split-K over grid z; blank: none
    # in training, the split of the smallest envelope for the row's tile in pipeweave.predict)
    "q_lengths",
    "kv_lengths",  # attention_flashinfer: per-request query / KV lengths, ";"-joined
)
EXTRA_COLUMNS: tuple[str, ...] = (
    "n_raw_rows",  # source rows merged into this row (>1 when repeated keys were median-aggregated)
    "split",  # the source's own train/test file (pipeweave gemm_fp8), NaN elsewhere
    "in_dse_99",
    "in_dse_99_5",
    "in_dse_top3",  # moe_dse file membership (False elsewhere)
    # what a fused-MoE row with moe_ep_size > 1 timed on its rank (per source and GPU, from the manifest):
    # rank_all_tokens (all T*topk routed rows enter the rank's grid) or rank_local_tokens (T*topk/EP rows)
    "moe_ep_semantics",
    # what a prefill-attention row with window_size 0 timed (per source and GPU, from the manifest):
    # full_attention (every earlier key, as labelled) or less_than_window_128 (the B200 file's window-0
    # rows run faster than window 128 at the same shape: not full attention)
    "window0_semantics",
)

#: Every column of the profile table, in order.
PROFILE_COLUMNS: list[str] = [
    *COMMON_COLUMNS,
    *GEMM_COLUMNS,
    *MOE_COLUMNS,
    *ATTENTION_COLUMNS,
    *TILE_COLUMNS,
    *OP_COLUMNS,
    *EXTRA_COLUMNS,
]

STRING_COLUMNS: tuple[str, ...] = (
    "source",
    "dataset",
    "timing",
    "gpu",
    "generation",
    "family",
    "dtype",
    "distribution",
    "backend",
    "kv_cache_dtype",
    "split",
    "op",
    "kernel_name",
    "q_lengths",
    "kv_lengths",
    "moe_ep_semantics",
    "window0_semantics",
)
BOOL_COLUMNS: tuple[str, ...] = ("in_dse_99", "in_dse_99_5", "in_dse_top3")
NUMERIC_COLUMNS: tuple[str, ...] = tuple(
    c for c in PROFILE_COLUMNS if c not in STRING_COLUMNS and c not in BOOL_COLUMNS
)

_ATTN_KEY = (
    "batch_size",
    "isl",
    "num_heads",
    "num_key_value_heads",
    "head_dim",
    "step",
    "window_size",
    "kv_cache_dtype",
    "backend",
)

#: Columns that, with ``gpu``, ``dtype`` and the tile plan, identify one launch of a family.
FAMILY_KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "gemm": GEMM_COLUMNS,
    "fused_moe": MOE_COLUMNS,
    "moe_w13": MOE_COLUMNS,
    "attention_context": _ATTN_KEY,
    "attention_generation": _ATTN_KEY,
    "rmsnorm": ("num_tokens", "hidden_size"),
    "silu_mul": ("num_tokens", "inter_size"),
    "attention_flashinfer": (
        "backend",
        "batch_size",
        "num_heads",
        "num_key_value_heads",
        "head_dim",
        "q_lengths",
        "kv_lengths",
    ),
    "gemm_fp32": ("op", "batch_size", "m", "n", "k"),
    "elementwise_fp32": ("op", "num_tokens", "hidden_size"),
    "softmax_fp32": ("num_tokens", "hidden_size"),
    "layernorm_fp32": ("num_tokens", "hidden_size"),
}

#: Values filled in where a family's optional column is missing (NaN) in a user table.
FAMILY_DEFAULTS: dict[str, dict[str, float | str]] = {
    "gemm": {},
    "fused_moe": {"moe_tp_size": 1.0, "moe_ep_size": 1.0, "distribution": "balanced"},
    "moe_w13": {"moe_tp_size": 1.0, "moe_ep_size": 1.0, "distribution": "balanced"},
    "attention_context": {"step": 0.0, "window_size": 0.0},
    "attention_generation": {"isl": 1.0, "window_size": 0.0},
    "rmsnorm": {},
    "silu_mul": {},
    "attention_flashinfer": {"backend": "fa2_paged"},
    "gemm_fp32": {"batch_size": 1.0, "op": "bmm"},
    "elementwise_fp32": {},
    "softmax_fp32": {},
    "layernorm_fp32": {},
}

#: Shape columns that may be 0 (all other numeric shape columns must be > 0).
ZERO_OK_COLUMNS: frozenset[str] = frozenset({"step", "window_size"})


def empty_profiles() -> pd.DataFrame:
    """An empty profile table with every canonical column and dtype."""
    return conform(pd.DataFrame(index=pd.RangeIndex(0)))


def conform(df: pd.DataFrame, *, keep_extra: bool = False) -> pd.DataFrame:
    """Return ``df`` with every canonical column (missing ones NaN/False), canonical dtypes and order.

    String columns become ``category`` with sorted categories; numeric columns float64; the
    membership columns bool. Extra columns are dropped unless ``keep_extra`` (then appended).
    """
    n = len(df)
    out: dict[str, object] = {}
    for col in PROFILE_COLUMNS:
        if col in BOOL_COLUMNS:
            vals = df[col] if col in df else pd.Series(False, index=df.index)
            out[col] = vals.fillna(False).astype(bool).to_numpy() if n else np.zeros(0, dtype=bool)
        elif col in STRING_COLUMNS:
            out[col] = (
                _as_category(df[col])
                if col in df
                else pd.Categorical.from_codes(np.full(n, -1, dtype=np.int8), categories=pd.Index([], dtype=object))
            )
        elif col not in df:
            out[col] = np.full(n, np.nan)
        elif df[col].dtype == np.float64:
            out[col] = df[col].to_numpy()
        else:
            out[col] = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    res = pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)
    if keep_extra:
        extra = [c for c in df.columns if c not in res.columns]
        for c in extra:
            res[c] = df[c].to_numpy()
    return res


def _as_category(s: pd.Series) -> pd.Categorical:
    """``s`` as a Categorical whose categories are sorted Python ``str`` (object Index); NaN stays NaN."""
    cat = s.array if isinstance(s.dtype, pd.CategoricalDtype) else pd.Categorical(s.to_numpy(dtype=object))
    names = [str(c) for c in cat.categories]
    if cat.categories.dtype == object and names == sorted(names) and list(cat.categories) == names:
        return cat if not cat.ordered else cat.as_unordered()
    order = sorted(range(len(names)), key=names.__getitem__)
    remap = np.empty(len(names) + 1, dtype=np.int32)
    remap[-1] = -1  # code -1 (missing) indexes the last slot
    remap[np.asarray(order, dtype=np.int64)] = np.arange(len(names), dtype=np.int32)
    codes = remap[np.asarray(cat.codes, dtype=np.int64)]
    cats = pd.Index([names[i] for i in order], dtype=object)
    if cats.has_duplicates:  # e.g. 1 and "1": fall back to a full string conversion
        return pd.Categorical(
            s.astype(object).where(s.notna(), None).map(lambda v: v if v is None else str(v)).to_numpy(dtype=object)
        )
    return pd.Categorical.from_codes(codes, categories=cats)
