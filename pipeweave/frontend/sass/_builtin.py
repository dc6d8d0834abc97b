"""Builtin kernels: launch arguments, loop trip counts, grid and analytic FLOPs from (config, shape, dtype).

Nothing here imports triton: the ``@triton.jit`` functions live in ``_kernels.py`` and are loaded on demand.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..._errors import CompileError, DataError, UnknownFamilyError
from ...vocab import parse_tile_config
from ._arch import normalize_arch, supports_fp8
from ._compile import Ptr

__all__ = [
    "SassConfig",
    "BUILTINS",
    "BuiltinLaunch",
    "DTYPES",
    "builtin_launch",
    "kernel_source_hash",
    "function_hash",
    "family_builtin",
    "default_shape",
    "normalize_dtype",
]

_KERNELS_FILE = Path(__file__).with_name("_kernels.py")

#: dtype names accepted (profile-table names) -> (operand element type, output element type)
DTYPES: dict[str, tuple[str, str]] = {
    "bfloat16": ("bf16", "bf16"),
    "float16": ("fp16", "fp16"),
    "fp8": ("fp8e4nv", "bf16"),
    "fp8_block": ("fp8e4nv", "bf16"),
}
_DTYPE_ALIASES = {
    "bf16": "bfloat16",
    "fp16": "float16",
    "half": "float16",
    "fp8_e4m3": "fp8",
    "e4m3": "fp8",
    "fp8e4m3": "fp8",
    "fp8_w8a8": "fp8",
    "fp8-block": "fp8_block",
}


@dataclass(frozen=True)
class SassConfig:
    """Triton tile plan. For rmsnorm/silu_mul only ``block_n`` (elements per program) and ``num_warps``
    matter; for attention ``block_m`` (query rows) and ``block_n`` (keys per iteration)."""

    block_m: int = 64
    block_n: int = 64
    block_k: int = 32
    group_m: int = 8
    num_warps: int = 4
    num_stages: int = 3

    @classmethod
    def parse(cls, text: str | Sequence[int] | SassConfig) -> SassConfig:
        """``"BLOCK_M,BLOCK_N,BLOCK_K,GROUP_M,WARPS,STAGES"`` (e.g. ``64,64,32,8,4,3``), or the six integers as a
        tuple/list (``(64, 64, 32, 8, 4, 3)``), or a :class:`SassConfig` (returned as is)."""
        if isinstance(text, SassConfig):
            return text
        if isinstance(text, (tuple, list)):
            vals = list(text)
            if len(vals) == 6 and all(
                not isinstance(v, bool) and isinstance(v, (int, float)) and float(v) == int(v) for v in vals
            ):
                return cls(*parse_tile_config(",".join(str(int(v)) for v in vals)))
            return cls(*parse_tile_config(",".join(str(v) for v in vals)))
        return cls(*parse_tile_config(str(text)))  # the one parser (pipeweave.vocab)

    def validate(self) -> SassConfig:
        for name in ("block_m", "block_n", "block_k"):
            v = getattr(self, name)
            if v < 1 or v & (v - 1):
                raise DataError(f"{name}={v} is not a power of two", hint="Triton block sizes must be powers of 2")
        if self.num_warps not in (1, 2, 4, 8, 16, 32):
            raise DataError(
                f"num_warps={self.num_warps} is not a power of two <= 32", hint="use 1, 2, 4, 8, 16 or 32 (e.g. 4)"
            )
        if self.num_stages < 1:
            raise DataError(f"num_stages={self.num_stages} must be >= 1", hint="e.g. 3 (1 disables pipelining)")
        return self

    def as_tuple(self) -> tuple[int, ...]:
        return (self.block_m, self.block_n, self.block_k, self.group_m, self.num_warps, self.num_stages)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class BuiltinLaunch:
    """Everything needed to compile one builtin and turn its SASS into per-CTA counts."""

    kernel: str
    args: dict[str, Any]
    loop_trips: list[int]
    grid: int
    tensor_flops_per_cta: float
    shape: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def normalize_dtype(dtype: str) -> str:
    d = str(dtype).strip().lower()
    d = _DTYPE_ALIASES.get(d, d)
    if d not in DTYPES:
        raise DataError(
            f"dtype {dtype!r} is not supported by the SASS front-end", hint=f"use one of {', '.join(DTYPES)}"
        )
    return d


def _cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


def _compute_type(dtype_out: str) -> Any:
    from ._compile import import_triton

    import_triton()
    import triton.language as tl

    return {"bf16": tl.bfloat16, "fp16": tl.float16, "fp32": tl.float32}[dtype_out]


def _check_dtype(dtype: str, arch: str, kernel: str) -> tuple[str, str]:
    d = normalize_dtype(dtype)
    if d.startswith("fp8") and not supports_fp8(arch):
        raise CompileError(
            f"{kernel}: dtype {d} needs FP8 tensor cores, which {arch} does not have",
            hint="fp8 needs sm_89 or newer; use bfloat16 on sm_80/sm_86",
        )
    return DTYPES[d]


# ----------------------------------------------------------------------------------------- gemm
def _gemm(cfg: SassConfig, shape: dict[str, Any], dtype: str, arch: str) -> BuiltinLaunch:
    m, n, k = int(shape["m"]), int(shape["n"]), int(shape["k"])
    a_t, c_t = _check_dtype(dtype, arch, "gemm")
    args = {
        "a_ptr": Ptr(a_t),
        "b_ptr": Ptr(a_t),
        "c_ptr": Ptr(c_t),
        "M": m,
        "N": n,
        "K": k,
        "stride_am": k,
        "stride_ak": 1,
        "stride_bn": k,
        "stride_bk": 1,
        "stride_cm": n,
        "stride_cn": 1,
        "BLOCK_M": cfg.block_m,
        "BLOCK_N": cfg.block_n,
        "BLOCK_K": cfg.block_k,
        "GROUP_M": cfg.group_m,
        "EVEN_K": k % cfg.block_k == 0,
    }
    trips = _cdiv(k, cfg.block_k)
    return BuiltinLaunch(
        "gemm_kernel",
        args,
        [trips],
        _cdiv(m, cfg.block_m) * _cdiv(n, cfg.block_n),
        2.0 * cfg.block_m * cfg.block_n * cfg.block_k * trips,
        {"m": m, "n": n, "k": k},
    )


# ------------------------------------------------------------------------------------ fused_moe
def moe_padded_tokens(num_tokens: int, num_experts: int, topk: int, block_m: int) -> int:
    """Σ_e ceil(c_e / BLOCK_M) * BLOCK_M under ideal round-robin routing (c_e = M*topk/E, remainder first)."""
    pairs = num_tokens * topk
    base, rem = divmod(pairs, num_experts)
    return rem * _cdiv(base + 1, block_m) * block_m + (num_experts - rem) * _cdiv(base, block_m) * block_m


def _fused_moe(cfg: SassConfig, shape: dict[str, Any], dtype: str, arch: str) -> BuiltinLaunch:
    m = int(shape["num_tokens"])
    e = int(shape["num_experts"])
    topk = int(shape["topk"])
    h = int(shape["hidden_size"])
    inter = int(shape["inter_size"])
    n = 2 * inter if shape.get("w13", True) else h
    k = h if shape.get("w13", True) else inter
    a_t, c_t = _check_dtype(dtype, arch, "fused_moe")
    d = normalize_dtype(dtype)
    fp8 = d.startswith("fp8")
    block = d == "fp8_block"
    gk = gn = 128 if block else 0
    if block and gk % cfg.block_k and cfg.block_k % gk:
        raise DataError(
            f"fp8_block needs BLOCK_K dividing or a multiple of the 128 quantisation group, got {cfg.block_k}",
            hint=f"use a power-of-two block_k such as 64 or 128 (e.g. config {cfg.block_m},{cfg.block_n},128,"
            f"{cfg.group_m},{cfg.num_warps},{cfg.num_stages})",
        )
    em_max = m * topk + e * (cfg.block_m - 1)  # sorted_token_ids buffer length the launcher allocates
    scale_ptr: Any = Ptr("fp32") if fp8 else None
    args = {
        "a_ptr": Ptr(a_t),
        "b_ptr": Ptr(a_t),
        "c_ptr": Ptr(c_t),
        "a_scale_ptr": scale_ptr,
        "b_scale_ptr": scale_ptr,
        "topk_weights_ptr": Ptr("fp32"),
        "sorted_token_ids_ptr": Ptr("i32"),
        "expert_ids_ptr": Ptr("i32"),
        "num_tokens_post_padded_ptr": Ptr("i32"),
        "N": n,
        "K": k,
        "EM": em_max,
        "num_valid_tokens": m * topk,
        "stride_am": k,
        "stride_ak": 1,
        "stride_be": n * k,
        "stride_bk": 1,
        "stride_bn": k,
        "stride_cm": n,
        "stride_cn": 1,
        "stride_asm": _cdiv(k, gk) if block else 0,
        "stride_ask": 1 if block else 0,
        "stride_bse": _cdiv(n, gn) * _cdiv(k, gk) if block else 0,
        "stride_bsk": 1 if block else 0,
        "stride_bsn": _cdiv(k, gk) if block else 0,
        "group_n": gn,
        "group_k": gk,
        "BLOCK_SIZE_M": cfg.block_m,
        "BLOCK_SIZE_N": cfg.block_n,
        "BLOCK_SIZE_K": cfg.block_k,
        "GROUP_SIZE_M": cfg.group_m,
        "MUL_ROUTED_WEIGHT": bool(shape.get("mul_routed_weight", False)),
        "top_k": topk,
        "compute_type": _compute_type(c_t),
        "use_fp8_w8a8": fp8,
        "EVEN_K": k % cfg.block_k == 0,
    }
    trips = _cdiv(k, cfg.block_k)
    padded = moe_padded_tokens(m, e, topk, cfg.block_m)
    grid = _cdiv(padded, cfg.block_m) * _cdiv(n, cfg.block_n)
    shp = {
        "num_tokens": m,
        "num_experts": e,
        "topk": topk,
        "hidden_size": h,
        "inter_size": inter,
        "gemm_n": n,
        "gemm_k": k,
        "padded_tokens": padded,
        "mul_routed_weight": bool(shape.get("mul_routed_weight", False)),
    }
    return BuiltinLaunch(
        "fused_moe_kernel", args, [trips], grid, 2.0 * cfg.block_m * cfg.block_n * cfg.block_k * trips, shp
    )


# -------------------------------------------------------------------------------------- rmsnorm
def _rmsnorm(cfg: SassConfig, shape: dict[str, Any], dtype: str, arch: str) -> BuiltinLaunch:
    m, n = int(shape["num_tokens"]), int(shape["hidden_size"])
    a_t, c_t = _check_dtype(dtype, arch, "rmsnorm")
    if a_t.startswith("fp8"):
        raise DataError("rmsnorm is built for 16-bit activations", hint="use dtype bfloat16")
    args = {
        "x_ptr": Ptr(a_t),
        "w_ptr": Ptr(a_t),
        "y_ptr": Ptr(c_t),
        "N": n,
        "stride_x": n,
        "stride_y": n,
        "eps": 1e-6,
        "BLOCK_N": cfg.block_n,
    }
    t = _cdiv(n, cfg.block_n)
    return BuiltinLaunch("rmsnorm_kernel", args, [t, t], m, 0.0, {"num_tokens": m, "hidden_size": n})


# ------------------------------------------------------------------------------------- silu_mul
def _silu_mul(cfg: SassConfig, shape: dict[str, Any], dtype: str, arch: str) -> BuiltinLaunch:
    m, n = int(shape["num_tokens"]), int(shape["inter_size"])
    a_t, c_t = _check_dtype(dtype, arch, "silu_mul")
    if a_t.startswith("fp8"):
        raise DataError("silu_mul is built for 16-bit activations", hint="use dtype bfloat16")
    args = {"x_ptr": Ptr(a_t), "y_ptr": Ptr(c_t), "N": n, "stride_x": 2 * n, "stride_y": n, "BLOCK_N": cfg.block_n}
    return BuiltinLaunch(
        "silu_mul_kernel", args, [], m * _cdiv(n, cfg.block_n), 0.0, {"num_tokens": m, "inter_size": n}
    )


# ------------------------------------------------------------------------------------ attention
def _attention(cfg: SassConfig, shape: dict[str, Any], dtype: str, arch: str) -> BuiltinLaunch:
    b, h, s, d = (int(shape[x]) for x in ("batch_size", "num_heads", "seq_len", "head_dim"))
    a_t, c_t = _check_dtype(dtype, arch, "attention")
    if a_t.startswith("fp8"):
        raise DataError("the attention builtin is built for 16-bit Q/K/V", hint="use dtype bfloat16")
    if d & (d - 1):
        raise DataError(
            f"head_dim={d} must be a power of two for tl.arange",
            hint=f"use a power-of-two head_dim such as {1 << max(d - 1, 0).bit_length()} (64, 128 and 256 are common)",
        )
    args = {
        "q_ptr": Ptr(a_t),
        "k_ptr": Ptr(a_t),
        "v_ptr": Ptr(a_t),
        "o_ptr": Ptr(c_t),
        "sm_scale": 1.0 / math.sqrt(d),
        "seq_len": s,
        "num_heads": h,
    }
    for t in "qkvo":
        args.update({f"stride_{t}b": h * s * d, f"stride_{t}h": s * d, f"stride_{t}s": d})
    args.update({"BLOCK_M": cfg.block_m, "BLOCK_N": cfg.block_n, "HEAD_DIM": d, "EVEN_N": s % cfg.block_n == 0})
    trips = _cdiv(s, cfg.block_n)
    return BuiltinLaunch(
        "attention_kernel",
        args,
        [trips],
        _cdiv(s, cfg.block_m) * b * h,
        4.0 * cfg.block_m * cfg.block_n * d * trips,
        {"batch_size": b, "num_heads": h, "seq_len": s, "head_dim": d},
    )


_DEFAULT_SHAPES: dict[str, dict[str, Any]] = {
    "gemm": {"m": 4096, "n": 4096, "k": 4096},
    "fused_moe": {"num_tokens": 512, "num_experts": 64, "topk": 8, "hidden_size": 4096, "inter_size": 1536},
    "rmsnorm": {"num_tokens": 4096, "hidden_size": 4096},
    "silu_mul": {"num_tokens": 4096, "inter_size": 14336},
    "attention": {"batch_size": 1, "num_heads": 32, "seq_len": 4096, "head_dim": 128},
}

BUILTINS: dict[str, Callable[[SassConfig, dict[str, Any], str, str], BuiltinLaunch]] = {
    "fused_moe": _fused_moe,
    "gemm": _gemm,
    "rmsnorm": _rmsnorm,
    "silu_mul": _silu_mul,
    "attention": _attention,
}

_KERNEL_OF = {
    "fused_moe": "fused_moe_kernel",
    "gemm": "gemm_kernel",
    "rmsnorm": "rmsnorm_kernel",
    "silu_mul": "silu_mul_kernel",
    "attention": "attention_kernel",
}

_FAMILY_BUILTIN = {"moe_w13": "fused_moe", "fused_moe": "fused_moe", "gemm": "gemm"}


def family_builtin(family: str) -> str | None:
    """Profile-table family -> builtin kernel name (None when no builtin models that family)."""
    return _FAMILY_BUILTIN.get(str(family))


def default_shape(builtin: str) -> dict[str, Any]:
    if builtin not in _DEFAULT_SHAPES:
        raise UnknownFamilyError(f"no builtin kernel {builtin!r}", hint=f"choose one of {', '.join(BUILTINS)}")
    return dict(_DEFAULT_SHAPES[builtin])


def builtin_launch(
    builtin: str, config: SassConfig, shape: dict[str, Any] | None, dtype: str, arch: str
) -> BuiltinLaunch:
    if builtin not in BUILTINS:
        raise UnknownFamilyError(f"no builtin kernel {builtin!r}", hint=f"choose one of {', '.join(BUILTINS)}")
    arch = normalize_arch(arch)
    full = default_shape(builtin)
    full.update({k: v for k, v in (shape or {}).items() if v is not None})
    return BUILTINS[builtin](config.validate(), full, dtype, arch)


@functools.cache
def kernel_source_hash(builtin: str) -> str:
    """sha256 (12 hex) of the builtin's ``@triton.jit`` function, read without importing triton.

    The hash keys the shipped SASS cache, so it must change when the kernel's code changes and
    only then: it is taken over the function's normalized source (:func:`function_hash`), so a
    formatter or an edited comment does not make every cached instruction mix stale."""
    name = _KERNEL_OF.get(builtin, builtin)
    return function_hash(_KERNELS_FILE.read_text(encoding="utf-8"), name, where=_KERNELS_FILE.name)


def function_hash(source: str, name: str, *, where: str = "source") -> str:
    """sha256 (12 hex) of the top-level function ``name`` of Python ``source``, over ``ast.unparse``
    of its definition: formatting, comments, quotes and trailing commas do not change it, code does."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return hashlib.sha256(ast.unparse(node).encode()).hexdigest()[:12]
    defined = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    raise UnknownFamilyError(
        f"no kernel {name!r} in {where}",
        hint=f"name a top-level function defined there: {', '.join(defined) or '(none)'}",
    )


def kernel_function(builtin: str) -> Any:
    """The ``@triton.jit`` function of a builtin (imports triton)."""
    from ._compile import import_triton

    import_triton()
    from . import _kernels

    return getattr(_kernels, _KERNEL_OF[builtin])
