"""The crude view of a launch: about ten hand-normalized features (issue 17's crude reference).

No pipe model, no L2 model, no SASS: each row is reduced to a "GEMM-equivalent" view from its raw
shape and the spec sheet, tiled with one **fixed** 128 x 128 x 64 tile on every GPU:

=====================  ================================  =====  ====================  ===========
family                 M (rows per group)                N      K                     groups
=====================  ================================  =====  ====================  ===========
gemm                   m                                 n      k                     1
gemm_fp32              m                                 n      k                     batch_size
fused_moe / moe_w13    T topk / ep / active experts      2I/tp  H                     active experts
attention_context      isl                               step + isl  head_dim         batch x q heads
attention_generation   q heads / kv heads                step   head_dim              batch x kv heads
attention_flashinfer   mean q length x q / kv heads      mean kv length  head_dim    requests x kv heads
row kernels            tokens                            width  1                     1
=====================  ================================  =====  ====================  ===========

FLOPs F and compulsory bytes B are the standard counts (fused MoE: W13 + W2 of the rank's
T topk / ep routed rows; attention: causal prefill, KV read once per KV head; FlashInfer's ragged
batches: the front-end's ``useful_flop`` and ``dram_compulsory_bytes``). The row kernels
(the ``memory_bound`` families: RMSNorm, SiLU-and-mul, element-wise, softmax, layernorm; width =
``hidden_size``, SiLU-and-mul's ``inter_size``) read the front-end's compulsory bytes
(``dram_compulsory_bytes``: what the operator must read and write once, per operator), count one FLOP
per output element and are tiled with one fixed CTA per row (element-wise: per
:data:`CRUDE_ROW_CHUNK` elements) instead of the 128 x 128 tile; their padding efficiency is 1. Features: log2 of
the wave-quantized roofline time, log2 AI / ridge, log2 waves, wave efficiency, padding
efficiency (useful / padded tile area), log2 working set / L2, log2 of M/BM, N/BN, K/BK and of the
group count and an fp8 indicator; :func:`crude_matrix` appends family and attention-backend
indicators. Used by the ``xgboost_crude`` baseline and by the crude companion booster of
:class:`~pipeweave.model.PipeweaveRegressor` (both learn log(latency / wave-quantized roofline)).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from ..vocab import ATTENTION_BACKENDS
from ._families import FAMILIES
from ._flashinfer import parse_lengths

__all__ = [
    "CRUDE_FEATURES",
    "CRUDE_INPUT_COLUMNS",
    "CRUDE_ROW_CHUNK",
    "CRUDE_TILE",
    "crude_features",
    "crude_matrix",
    "crude_matrix_names",
]

#: the fixed tile (BM, BN, BK) of the crude view, the same on every GPU
CRUDE_TILE: tuple[int, int, int] = (128, 128, 64)
#: the featurized columns the crude view reads (spec columns; the front-end's standard counts for the row
#: kernels and FlashInfer), beside the raw shape columns
CRUDE_INPUT_COLUMNS: tuple[str, ...] = (
    "gpu_sm_count",
    "peak_tensor_flops_per_us",
    "gpu_dram_bw_gbps",
    "gpu_l2_mib",
    "dram_compulsory_bytes",
    "useful_flop",
)
#: elements per CTA of an element-wise kernel in the crude view (one CTA per row for the other row kernels)
CRUDE_ROW_CHUNK: int = 4096
CRUDE_FEATURES: tuple[str, ...] = (
    "log2_t_wq_roof_us",
    "log2_ai_over_ridge",
    "log2_waves",
    "wave_efficiency",
    "pad_efficiency",
    "log2_working_set_over_l2",
    "log2_m_tiles",
    "log2_n_tiles",
    "log2_k_tiles",
    "log2_groups",
    "is_fp8",
)


def _num(df: pd.DataFrame, name: str, default: float = np.nan) -> np.ndarray:
    if name not in df.columns:
        return np.full(len(df), default)
    return np.nan_to_num(pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=float), nan=default)


def _gemm_view(df: pd.DataFrame, count: Callable[[str], np.ndarray]) -> tuple[np.ndarray, ...]:
    """(M, N, K, groups, FLOPs, compulsory bytes) per row from the raw shape columns (the row kernels'
    and FlashInfer's counts from the featurized columns ``count(name)`` reads)."""
    n_rows = len(df)
    fam = df["family"].astype(str).to_numpy()
    b = np.where(df["dtype"].astype(str).str.startswith("fp8").to_numpy(), 1.0, 2.0)
    M, N, K, G = (np.ones(n_rows) for _ in range(4))
    F, B = np.zeros(n_rows), np.zeros(n_rows)

    g = fam == "gemm"
    m, n, k = _num(df, "m", 1.0), _num(df, "n", 1.0), _num(df, "k", 1.0)
    M[g], N[g], K[g] = m[g], n[g], k[g]
    F[g] = 2 * m[g] * n[g] * k[g]
    B[g] = b[g] * (m[g] * k[g] + n[g] * k[g]) + 2 * m[g] * n[g]
    # FP32 GEMM (NeuSight bmm / linear): batch_size independent m x n x k products, 4-byte operands and
    # output; peak_tensor_flops_per_us is then the FP32 CUDA-core peak
    f32 = fam == "gemm_fp32"
    bat = np.maximum(_num(df, "batch_size", 1.0), 1.0)
    M[f32], N[f32], K[f32], G[f32] = m[f32], n[f32], k[f32], bat[f32]
    F[f32] = (2 * bat * m * n * k)[f32]
    B[f32] = (4.0 * bat * (m * k + n * k + m * n))[f32]

    moe = np.isin(fam, ["fused_moe", "moe_w13"])
    T, topk, E = _num(df, "num_tokens", 1.0), _num(df, "topk", 1.0), _num(df, "num_experts", 1.0)
    H, inter = _num(df, "hidden_size", 1.0), _num(df, "inter_size", 1.0)
    tp, ep = np.maximum(_num(df, "moe_tp_size", 1.0), 1.0), np.maximum(_num(df, "moe_ep_size", 1.0), 1.0)
    rows = T * topk / ep
    act = np.maximum(np.minimum(E / ep, rows), 1.0)
    i_loc = inter / tp
    both = np.where(fam == "fused_moe", 3.0, 2.0)  # W13 (2I) + W2 (I) vs W13 only
    M[moe], N[moe], K[moe], G[moe] = (rows / act)[moe], 2 * i_loc[moe], H[moe], act[moe]
    F[moe] = (2 * rows * both * i_loc * H)[moe]
    B[moe] = (b * act * both * i_loc * H + 2 * (T * H + rows * both * i_loc))[moe]

    att = np.isin(fam, ["attention_context", "attention_generation"])
    bs, isl, step = _num(df, "batch_size", 1.0), _num(df, "isl", 1.0), _num(df, "step", 0.0)
    hq, hkv, d = (
        _num(df, "num_heads", 1.0),
        np.maximum(_num(df, "num_key_value_heads", 1.0), 1.0),
        _num(df, "head_dim", 128.0),
    )
    kvb = np.where(
        df["kv_cache_dtype"].astype(str).str.startswith("fp8").to_numpy()
        if "kv_cache_dtype" in df.columns
        else np.zeros(n_rows, bool),
        1.0,
        2.0,
    )
    ctx = fam == "attention_context"
    M[ctx], N[ctx], K[ctx], G[ctx] = isl[ctx], (step + isl)[ctx], d[ctx], (bs * hq)[ctx]
    F[ctx] = (4 * bs * hq * isl * (step + (isl + 1) / 2) * d)[ctx]
    B[ctx] = (2 * 2 * bs * isl * hq * d + kvb * 2 * bs * (step + isl) * hkv * d)[ctx]
    gen = fam == "attention_generation"
    M[gen], N[gen], K[gen], G[gen] = (hq / hkv)[gen], np.maximum(step, 1.0)[gen], d[gen], (bs * hkv)[gen]
    F[gen] = (4 * bs * hq * np.maximum(step, 1.0) * d)[gen]
    B[gen] = (kvb * 2 * bs * np.maximum(step, 1.0) * hkv * d + 2 * 2 * bs * hq * d)[gen]
    del att

    fi = fam == "attention_flashinfer"
    if fi.any():  # FlashInfer: a batch of requests of ragged lengths, averaged (FLOPs and bytes: crude_features)
        sub = df.loc[fi]
        qi, q = parse_lengths(sub["q_lengths"].to_numpy(), "q_lengths")
        ki, kv = parse_lengths(sub["kv_lengths"].to_numpy(), "kv_lengths")
        n_req = np.bincount(qi, minlength=len(sub)).astype(float)
        q_mean = np.bincount(qi, weights=q, minlength=len(sub)) / np.maximum(n_req, 1.0)
        kv_mean = np.bincount(ki, weights=kv, minlength=len(sub)) / np.maximum(np.bincount(ki, minlength=len(sub)), 1)
        M[fi], N[fi], K[fi] = q_mean * (hq / hkv)[fi], kv_mean, d[fi]
        G[fi] = n_req * hkv[fi]
        F[fi], B[fi] = count("useful_flop")[fi], count("dram_compulsory_bytes")[fi]

    row = _row_mask(fam)
    width = np.where(fam == "silu_mul", _num(df, "inter_size", 1.0), _num(df, "hidden_size", 1.0))
    M[row], N[row] = _num(df, "num_tokens", 1.0)[row], width[row]
    F[row] = (M * N)[row]
    if row.any():
        B[row] = count("dram_compulsory_bytes")[row]
    return M, N, K, G, F, B


def _row_mask(fam: np.ndarray) -> np.ndarray:
    """Rows of the row-kernel (``memory_bound``) families."""
    return np.isin(fam, [name for name, f in FAMILIES.items() if f.memory_bound])


def crude_features(df: pd.DataFrame, columns: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(feature matrix in :data:`CRUDE_FEATURES` order, wave-quantized roofline time in us) per row.

    Needs the raw shape columns, ``family``, ``dtype`` and the featurized columns of
    :data:`CRUDE_INPUT_COLUMNS` (from ``ensure_features``, or in ``columns``, e.g.
    :func:`~pipeweave.frontend.feature_arrays` of the same rows; the counts only for the row kernels'
    and FlashInfer's rows).
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # out-of-domain rows: reported upstream
        return _crude_features(df, columns)


def _crude_features(df: pd.DataFrame, columns: Mapping[str, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    bm, bn, bk = CRUDE_TILE

    def spec(name: str) -> np.ndarray:
        return np.asarray(columns[name] if columns is not None else df[name].to_numpy(), dtype=float)

    M, N, K, G, F, B = _gemm_view(df, spec)
    M, N, K, G = (np.maximum(x, 1e-3) for x in (M, N, K, G))

    sms = spec("gpu_sm_count")
    peak = spec("peak_tensor_flops_per_us")
    bw = spec("gpu_dram_bw_gbps") * 1e3
    l2 = spec("gpu_l2_mib") * 2**20
    mt, nt = np.ceil(M / bm), np.ceil(N / bn)
    tiles = G * mt * nt
    pad = (M * N) / (mt * bm * nt * bn)
    fam = df["family"].astype(str).to_numpy()
    row = _row_mask(fam)
    if row.any():  # row kernels: one CTA per row (element-wise: per CRUDE_ROW_CHUNK elements), no padding
        ew = fam == "elementwise_fp32"
        tiles = np.where(row, np.where(ew, np.ceil(M * N / CRUDE_ROW_CHUNK), M), tiles)
        pad = np.where(row, 1.0, pad)
    waves = tiles / sms
    wave_eff = waves / np.ceil(waves)
    t_c = F / peak
    t_m = B / bw
    t_wq = np.maximum(t_c / pad / wave_eff, t_m)
    t_wq = np.maximum(t_wq, 1e-3)
    X = np.column_stack(
        [
            np.log2(t_wq),
            np.log2(np.maximum(t_c, 1e-9) / np.maximum(t_m, 1e-9)),
            np.log2(waves),
            wave_eff,
            pad,
            np.log2(np.maximum(B, 1.0) / l2),
            np.log2(M / bm),
            np.log2(N / bn),
            np.log2(K / bk),
            np.log2(G),
            df["dtype"].astype(str).str.startswith("fp8").to_numpy().astype(float),
        ]
    )
    return X, t_wq


def crude_matrix(df: pd.DataFrame, columns: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`crude_features` plus one indicator per kernel family and per attention backend
    (the input of a crude booster), and the wave-quantized roofline time (us)."""
    X, t_wq = crude_features(df, columns)
    fam = df["family"].astype(str).to_numpy()
    backend = df["backend"].astype(str).to_numpy() if "backend" in df.columns else np.full(len(df), "")
    extra = [(fam == f).astype(float) for f in FAMILIES] + [(backend == b).astype(float) for b in ATTENTION_BACKENDS]
    return np.column_stack([X, *extra]), t_wq


def crude_matrix_names() -> list[str]:
    """Column names of :func:`crude_matrix`'s matrix, in order."""
    return [*CRUDE_FEATURES, *(f"is_{f}" for f in FAMILIES), *(f"backend_{b}" for b in ATTENTION_BACKENDS)]
