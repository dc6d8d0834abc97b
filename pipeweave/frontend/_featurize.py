"""Vectorized featurization: profile rows + GPU specs -> per-pipe demand and dimensionless features.

``featurize(df)`` groups the rows by family, resolves each row's tile plan, schedules every
kernel the operation launches (:mod:`._demand`) and derives features that transfer across GPUs:
each pipe's time as a fraction of the analytical envelope, arithmetic intensity over the ridge
point, waves, occupancy, L2 working set over L2 size. It never reads latencies.

Reference time: ``t_env_us`` (pipeline-envelope estimate); ``t_env_warm_us`` is the same envelope
for a replay that finds its compulsory bytes in L2 as far as they fit (see ``_derive``). Physical
lower bound: ``t_lower_us`` =
max(useful tensor FLOPs / chip peak, compulsory bytes / bandwidth), where the bandwidth is L2's
when the compulsory bytes fit in L2 (the aiconfigurator collector replays with warm L2) and
DRAM's otherwise. Roofline (spec peaks, no launch term): ``t_roofline_us`` =
max(useful FLOPs / peak, compulsory bytes / DRAM bandwidth). ``t_tilesight_us``: the
TileSight-style baseline on the same demand (:mod:`._tilesight`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from .._errors import DataError
from .._frame import str_codes, str_map, str_startswith, str_values
from . import _constants as C
from ._demand import PIPES, combine_schedules, schedule
from ._families import FAMILIES, build_kernels, family_hint
from ._tileplan import TILE_COLUMNS
from ._tilesight import tilesight_time_us

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "featurize",
    "feature_arrays",
    "FEATURES",
    "EXTRA_FEATURES",
    "SHAPE_FEATURE_COLUMNS",
    "DEFAULT_SHAPE_FEATURE_COLUMNS",
    "spec_arrays",
    "bound_pipe",
    "iter_kernels",
    "l2_resident_share",
    "warm_l2_envelope_us",
]

#: Ordered model features (dimensionless or log-scaled); documented in docs/model.md.
FEATURES: tuple[str, ...] = (
    "log10_t_env_us",
    *(f"r_chip_{p}" for p in PIPES),
    *(f"r_sm_{p}" for p in PIPES),
    "r_latency",
    "r_fill",
    "r_epilogue",
    "r_launch",
    "log2_ai_over_ridge",
    "waves",
    "log2_waves",
    "wave_efficiency",
    "ctas_per_sm",
    "occupancy",
    "active_sm_frac",
    "log2_working_set_over_l2",
    "dram_over_compulsory",
    "pad_overhead",
    "l2_hit_intra_wave",
    "l2_operand_fit",
    "log2_iters",
    "block_m",
    "block_n",
    "block_k",
    "group_m",
    "num_warps",
    "num_stages",
    "split_k",
    "l2_bw_over_dram_bw",
    "log2_ridge_flop_per_byte",
    "fp8_scaling",
    "mma_generation",
    "log2_moe_tp",
    "log2_moe_ep",
    "log2_rows_per_expert",
    "routing_alpha",
    "log2_ep_all_rows_over_env",
    *(f"log2_shape_{i}" for i in range(1, 6)),
)
#: Launch descriptors outside :data:`FEATURES` that a family's own booster may read
#: (``PipeweaveRegressor(family_extra_features=...)``, recipe ``pipeweave.model.FAMILY_EXTRA_FEATURES``); NaN
#: on the rows of the families that do not define them. ``b_transposed``: FP32 GEMM's operand layout (1 for
#: NeuSight's ``linear``, x @ W^T run as a cuBLAS ``tn`` kernel; 0 for ``bmm``). Kept out of FEATURES so that
#: the boosters that do not read it are trained exactly as before (a column more changes every booster's
#: column sampling).
EXTRA_FEATURES: tuple[str, ...] = ("b_transposed",)
#: The shape features ``log2_shape_1`` .. ``log2_shape_5``: the log2 of a family's own problem-size
#: columns, in this order (a column a row lacks gives NaN). GPU-independent descriptors of the
#: problem, so per-shape effects (the tuned-config choice, routing, per-sequence costs) carry from the
#: training GPUs to a new one. Families not listed take :data:`DEFAULT_SHAPE_FEATURE_COLUMNS`, the MoE
#: shape (rmsnorm, silu_mul and the FP32 element-wise, softmax and layernorm families have some of its
#: columns: num_tokens, hidden_size or inter_size; GEMM and the other attention families none). Kept by nested leave-one-generation-out on fused MoE and on prefill
#: attention; GEMM's m, n, k and the decode shapes measured no better than the seed noise
#: (experiments/accuracy_log/).
DEFAULT_SHAPE_FEATURE_COLUMNS: tuple[str, ...] = ("num_tokens", "hidden_size", "inter_size", "num_experts", "topk")
SHAPE_FEATURE_COLUMNS: dict[str, tuple[str, ...]] = {
    "attention_context": ("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim"),
}

_SPEC_COLUMNS = (
    "sm_count",
    "sm_clock_mhz",
    "fp32_lanes_per_sm",
    "alu_lanes_per_sm",
    "sfu_ops_per_clk_per_sm",
    "dram_bw_gbps",
    "l2_mib",
    "l2_bw_gbps",
    "smem_per_sm_kib",
    "smem_bw_bytes_per_clk_per_sm",
    "regs_per_sm",
    "max_warps_per_sm",
    "max_ctas_per_sm",
)


def spec_arrays(gpu: pd.Series, gpus: Mapping[str, GPUSpec] | None = None) -> dict[str, np.ndarray]:
    """Per-row GPU spec columns (numpy arrays) for the GPU names in ``gpu``.

    ``gpus`` maps names to :class:`~pipeweave.hardware.GPUSpec` for GPUs outside the catalog
    (spec files); other names are resolved through the catalog.
    """
    from ..hardware import get_gpu

    pos, uniq = str_codes(gpu)
    rows = []
    for name in uniq:
        spec = gpus[name] if gpus is not None and name in gpus else get_gpu(name)
        flat = dict(spec.flat())
        flat["sm_arch"] = float(spec.sm_arch)
        rows.append(flat)
    frame = pd.DataFrame(rows, index=uniq)
    out = {}
    for col in frame.columns:
        vals = pd.to_numeric(frame[col], errors="coerce")
        if vals.notna().any():
            out[col] = vals.to_numpy(dtype=float)[pos]
    missing = [c for c in _SPEC_COLUMNS if c not in out]
    if missing:
        raise DataError(f"GPU spec lacks fields {missing}", hint="see datasets/gpus.toml for the full key list")
    return out


def bound_pipe(feats: pd.DataFrame) -> pd.Series:
    """Name of the pipe (or 'latency') with the largest busiest-SM time on each row."""
    return pd.Series(_bound_pipe(feats), index=feats.index, name="bound_pipe")


def _bound_pipe(cols: pd.DataFrame | Mapping[str, Any]) -> np.ndarray:
    times = np.column_stack(
        [np.asarray(cols[f"t_sm_{p}_us"], dtype=float) for p in PIPES] + [np.asarray(cols["t_latency_us"], dtype=float)]
    )
    return np.array([*PIPES, "latency"], dtype=object)[np.argmax(times, axis=1)]


def featurize(
    df: pd.DataFrame,
    *,
    gpus: Mapping[str, GPUSpec] | None = None,
    data: str | os.PathLike[str] | None = None,
    moe_configs: str = "auto",
    baselines: bool = True,
) -> pd.DataFrame:
    """Analytical features of every row of ``df`` (canonical profile columns; latency not used).

    Returns a DataFrame on ``df.index`` with the resolved tile plan (``block_m`` ... and
    ``tile_origin``), per-pipe work (``work_<pipe>``: FLOPs/ops/bytes), chip and busiest-SM pipe
    times (``t_chip_<pipe>_us``, ``t_sm_<pipe>_us``), ``t_env_us``, ``t_env_warm_us``, ``t_lower_us``,
    ``t_roofline_us``, scheduling quantities and every name in :data:`FEATURES`.
    ``moe_configs``: ``auto`` (SGLang tuned files when the data dir is there, else default),
    ``sglang`` (require them) or ``default``. ``baselines=False`` skips the TileSight baseline
    column ``t_tilesight_us`` (the learned model does not use it; the prediction path saves ~5%).
    """
    cols: dict[str, Any] = feature_arrays(df, gpus=gpus, data=data, moe_configs=moe_configs, baselines=baselines)
    for name, col in cols.items():  # labels (tile_origin, bound_pipe, ...): categoricals, built from codes
        if col.dtype == object:
            codes, labels = pd.factorize(col)
            cols[name] = pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=object))
    return pd.DataFrame(cols, index=df.index)


def feature_arrays(
    df: pd.DataFrame,
    *,
    gpus: Mapping[str, GPUSpec] | None = None,
    data: str | os.PathLike[str] | None = None,
    moe_configs: str = "auto",
    baselines: bool = True,
) -> dict[str, np.ndarray]:
    """The columns of :func:`featurize` as numpy arrays in row order (labels as object arrays).

    The prediction hot path reads its features from here without building a DataFrame.
    """
    # columns are assembled as numpy arrays (one per family, then scattered back to row order):
    # no per-column DataFrame inserts on the hot path
    from ._validate import fill_launch_defaults

    df = fill_launch_defaults(df)  # absent optional columns read as pipeweave.predict reads them (no copy if none)
    pieces: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []
    for pos, sub, spec, parts, tiles in iter_kernels(df, gpus=gpus, data=data, moe_configs=moe_configs):
        part = {c: tiles[c].to_numpy() for c in tiles.columns}
        part.update(combine_schedules([schedule(kd, spec) for kd in parts]))
        for col in _SPEC_COLUMNS + ("sm_arch",):
            part[f"gpu_{col}"] = spec[col]
        part["peak_tensor_flops_per_us"] = _peak_tensor(sub, spec)
        if baselines:
            part["t_tilesight_us"] = np.sum([tilesight_time_us(kd, spec) for kd in parts], axis=0)
        pieces.append((pos, part))
    cols: dict[str, np.ndarray] = {}
    names = list(dict.fromkeys(c for _, part in pieces for c in part))
    for name in names:
        vals = [part.get(name) for _, part in pieces]
        obj = any(v is not None and v.dtype == object for v in vals)
        column = np.full(len(df), None if obj else np.nan, dtype=object if obj else float)
        for (pos, _), v in zip(pieces, vals):
            if v is not None:
                column[pos] = v
        cols[name] = column
    _derive(cols, df)
    return cols


def iter_kernels(
    df: pd.DataFrame,
    *,
    gpus: Mapping[str, GPUSpec] | None = None,
    data: str | os.PathLike[str] | None = None,
    moe_configs: str = "auto",
):
    """Yield ``(positions, rows, spec, kernels, tile_plan)`` per family present in ``df``.

    ``kernels`` is the list of :class:`KernelDemand` the family launches. Its one caller is
    :func:`feature_arrays` (which :func:`featurize` wraps); the analytical baselines read the
    featurized columns instead.
    """
    for col in ("family", "gpu", "dtype"):
        if col not in df.columns:
            raise DataError(
                f"input rows lack the column {col!r}",
                hint="give family, gpu, dtype and the family's shape columns "
                "(pipeweave.frontend.launch_columns(family))",
            )
    if df.empty:
        raise DataError("no rows to featurize", hint="pass at least one launch row")
    fam_codes, fam_names = str_codes(df["family"])
    unknown = sorted(set(fam_names) - set(FAMILIES))
    if unknown:
        from .._errors import UnknownFamilyError

        raise UnknownFamilyError(
            f"unknown kernel family {unknown}; valid families: {sorted(FAMILIES)}", hint=family_hint(unknown)
        )
    ctx = {"data": data, "moe_configs": moe_configs}
    for code, fam in enumerate(fam_names):
        pos = np.flatnonzero(fam_codes == code)
        sub = df if len(pos) == len(df) else df.iloc[pos]  # builders only read their rows
        spec = spec_arrays(sub["gpu"], gpus)
        parts, tiles = build_kernels(fam, sub, spec, ctx)
        yield pos, sub, spec, parts, tiles


def _peak_tensor(sub: pd.DataFrame, spec: dict[str, np.ndarray]) -> np.ndarray:
    fam = str(sub["family"].iloc[0]) if len(sub) else ""
    if fam in FAMILIES and not FAMILIES[fam].uses_tensor_cores:  # CUDA-core families: the FP32 FMA peak
        return 2.0 * spec["fp32_lanes_per_sm"] * spec["sm_count"] * spec["sm_clock_mhz"]
    keys = str_map(sub["dtype"], C.DTYPE_TENSOR_KEY, default="bf16")
    rate = np.zeros(len(sub))
    for key in pd.unique(keys):
        m = keys == key
        col = spec.get(f"tensor_{key}_flop_per_clk_per_sm", spec.get("tensor_bf16_flop_per_clk_per_sm"))
        rate[m] = cast(np.ndarray, col)[m]
    return rate * spec["sm_count"] * spec["sm_clock_mhz"]


def l2_resident_share(cols: Mapping[str, Any]) -> np.ndarray:
    """h = min(1, L2 size / compulsory bytes) (dimensionless): the share of a launch's compulsory bytes that
    a replay on reused inputs (a CUDA graph replayed, a timing loop) finds in L2 from the previous replay.

    ``cols``: featurized columns (a featurize() frame or feature_arrays() dict) with
    ``dram_compulsory_bytes`` and ``gpu_l2_mib``."""
    comp = np.maximum(np.asarray(cols["dram_compulsory_bytes"], dtype=float), 1.0)
    return np.minimum(np.asarray(cols["gpu_l2_mib"], dtype=float) * 2**20 / comp, 1.0)


def warm_l2_envelope_us(cols: Mapping[str, Any]) -> np.ndarray:
    """The envelope (us) of a replay that finds :func:`l2_resident_share` of its compulsory bytes in L2.

    That share of the steady-state DRAM time goes away (busiest-SM and chip DRAM terms scaled by 1 - h);
    the other pipes, the latency chain, the fill, the epilogue and the launch stay as in ``t_env_us``.
    ``cols``: featurized columns with the ``t_*_us`` pipe times and what :func:`l2_resident_share` reads."""
    h = l2_resident_share(cols)
    t = {k: np.asarray(cols[k], dtype=float) for k in ("t_env_us", "t_latency_us", "t_chip_l2_us", "t_chip_dram_us")}
    other = np.maximum.reduce(
        [np.asarray(cols[f"t_sm_{p}_us"], dtype=float) for p in PIPES if p != "dram"]
        + [t["t_latency_us"], t["t_chip_l2_us"]]
    )
    dram = np.maximum(np.asarray(cols["t_sm_dram_us"], dtype=float), t["t_chip_dram_us"])
    return t["t_env_us"] - np.maximum(other, dram) + np.maximum(other, (1.0 - h) * dram)


def _derive(out: dict[str, np.ndarray], df: pd.DataFrame) -> None:
    """Add the derived, dimensionless features to the column dict ``out`` in place."""
    n = len(df)
    env = out["t_env_us"]
    out["log10_t_env_us"] = np.log10(env)
    for p in PIPES:
        out[f"r_chip_{p}"] = out[f"t_chip_{p}_us"] / env
        out[f"r_sm_{p}"] = out[f"t_sm_{p}_us"] / env
    out["r_latency"] = out["t_latency_us"] / env
    out["r_fill"] = out["t_fill_us"] / env
    out["r_epilogue"] = out["t_epilogue_us"] / env
    out["r_launch"] = C.LAUNCH_US / env
    dram_bpus = out["gpu_dram_bw_gbps"] * 1e3
    l2_bpus = out["gpu_l2_bw_gbps"] * 1e3
    peak = out["peak_tensor_flops_per_us"]
    comp = np.maximum(out["dram_compulsory_bytes"], 1.0)
    useful = out["useful_flop"]
    ridge = peak / dram_bpus
    out["log2_ai_over_ridge"] = np.log2(np.maximum(useful, 1.0) / comp / ridge)
    out["log2_waves"] = np.log2(np.maximum(out["waves"], 1e-6))
    l2_bytes = out["gpu_l2_mib"] * 2**20
    out["log2_working_set_over_l2"] = np.log2(comp / l2_bytes)
    out["dram_over_compulsory"] = out["work_dram"] / comp
    out["pad_overhead"] = np.where(useful > 0, out["work_tensor"] / np.maximum(useful, 1.0), 1.0)
    out["log2_iters"] = np.log2(out["iters"])
    out["l2_bw_over_dram_bw"] = l2_bpus / dram_bpus
    out["log2_ridge_flop_per_byte"] = np.log2(ridge)
    out["is_fp8"] = str_startswith(df["dtype"], "fp8").astype(float)  # the baselines' fp8 flag
    # the model's: 0 = 16-bit operands, 1 = fp8 with per-tensor scales, 2 = fp8 with [128 x 128] block
    # scales (fp8_block). The envelope is the same for both fp8 kinds, so without it the same shape's
    # two fp8 rows have identical features while their measured times differ
    out["fp8_scaling"] = out["is_fp8"] + str_map(df["dtype"], {"fp8_block": 1.0}, 0.0)
    out["split_k"] = np.nan_to_num(out["split_k"], nan=1.0)
    # tensor-core instruction class from the compute capability (a spec-sheet fact):
    # 0 = warp-level mma.sync (sm_80/86/89/120), 1 = warpgroup wgmma (sm_90), 2 = tcgen05 (sm_100/103)
    arch = out["gpu_sm_arch"]
    out["mma_generation"] = np.where((arch >= 90) & (arch < 100), 1.0, np.where((arch >= 100) & (arch < 120), 2.0, 0.0))

    # MoE parallelism and routing (0 for other families)
    def col(name: str) -> np.ndarray:
        return pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=float) if name in df else np.full(n, np.nan)

    tp, ep = np.nan_to_num(col("moe_tp_size"), nan=1.0), np.nan_to_num(col("moe_ep_size"), nan=1.0)
    out["log2_moe_tp"] = np.log2(np.maximum(tp, 1.0))
    out["log2_moe_ep"] = np.log2(np.maximum(ep, 1.0))
    # num_experts 0 / missing, or a product past float range (a fuzzed launch): non-finite, mapped to 0 below
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rows_per_e = col("num_tokens") * col("topk") / col("num_experts")
    out["log2_rows_per_expert"] = np.where(np.isfinite(rows_per_e), np.log2(np.maximum(rows_per_e, 1e-3)), 0.0)
    alpha = np.zeros(n)
    if "distribution" in df:
        from ._routing import distribution_alpha

        moe = np.isin(str_values(df["family"]), ["fused_moe", "moe_w13"])
        if moe.any():
            alpha[moe] = distribution_alpha(df["distribution"][moe])
    out["routing_alpha"] = alpha
    out["log2_ep_all_rows_over_env"] = np.nan_to_num(out.get("log2_ep_all_rows_over_env", np.zeros(n)), nan=0.0)
    fam_codes, fam_labels = str_codes(df["family"])
    own_rows = {f: fam_codes == list(fam_labels).index(f) for f in SHAPE_FEATURE_COLUMNS if f in fam_labels}
    for i, c in enumerate(DEFAULT_SHAPE_FEATURE_COLUMNS):
        v = col(c)
        for family, rows in own_rows.items():
            v = np.where(rows, col(SHAPE_FEATURE_COLUMNS[family][i]), v)
        out[f"log2_shape_{i + 1}"] = np.where(np.isfinite(v) & (v > 0), np.log2(np.where(v > 0, v, 1.0)), np.nan)
    # bounds ----------------------------------------------------------------------------------
    mem_bw = np.where(comp <= l2_bytes, l2_bpus, dram_bpus)
    out["t_lower_us"] = np.maximum(useful / peak, comp / mem_bw)
    out["t_roofline_us"] = np.maximum(useful / peak, comp / dram_bpus)
    out["t_env_warm_us"] = warm_l2_envelope_us(out)  # the reference of pipeweave.model.FAMILY_REFERENCE
    out["bound_pipe"] = _bound_pipe(out)
    for c in TILE_COLUMNS:
        out[c] = out[c].astype(float)
