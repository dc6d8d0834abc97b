"""Target architectures: name normalisation, GPU -> arch, residency limits for occupancy.

Triton always compiles cc >= 90 for the arch-specific ``sm_XXa`` target (wgmma on sm_90a, tcgen05 on
sm_100a/103a), so ``sm_90`` and ``sm_90a`` name the same build here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..._errors import CompileError
from .._occupancy import ctas_per_sm

__all__ = [
    "SUPPORTED_ARCHS",
    "ArchLimits",
    "normalize_arch",
    "arch_capability",
    "arch_limits",
    "arch_for_gpu",
    "supports_fp8",
    "occupancy",
]

#: Archs this front-end compiles for (Triton 3.9 targets them all from a CPU-only machine).
SUPPORTED_ARCHS: tuple[str, ...] = ("sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_103a", "sm_120a")

_CC = {"sm_80": 80, "sm_86": 86, "sm_89": 89, "sm_90a": 90, "sm_100a": 100, "sm_103a": 103, "sm_120a": 120}

_WHY_NOT = {
    70: "Triton lowers tl.dot to plain FFMA on sm_70 (no tensor cores), so its mix is not representative",
    75: "Triton lowers tl.dot to plain FFMA on sm_75 (no tensor cores), so its mix is not representative",
}


@dataclass(frozen=True)
class ArchLimits:
    """Per-SM residency limits (CUDA Programming Guide compute-capability tables)."""

    max_warps: int
    max_ctas: int
    smem_per_sm_bytes: int
    smem_per_cta_bytes: int
    regs: int = 65536
    tmem_columns: int = 0  # sm_100: 512 TMEM columns per SM


_LIMITS = {
    "sm_80": ArchLimits(64, 32, 164 * 1024, 163 * 1024),
    "sm_86": ArchLimits(48, 16, 100 * 1024, 99 * 1024),
    "sm_89": ArchLimits(48, 24, 100 * 1024, 99 * 1024),
    "sm_90a": ArchLimits(64, 32, 228 * 1024, 227 * 1024),
    "sm_100a": ArchLimits(64, 32, 228 * 1024, 227 * 1024, tmem_columns=512),
    "sm_103a": ArchLimits(64, 32, 228 * 1024, 227 * 1024, tmem_columns=512),
    "sm_120a": ArchLimits(48, 32, 100 * 1024, 99 * 1024),
}


def normalize_arch(arch: str | int | float) -> str:
    """``"sm_90"``, ``"sm_90a"``, ``"90"``, ``"9.0"``, ``90`` -> ``"sm_90a"``; raises CompileError if unsupported."""
    raw = arch
    if isinstance(arch, float):
        cc = int(round(arch * 10))
    elif isinstance(arch, int):
        cc = arch
    else:
        s = str(arch).strip().lower()
        m = re.fullmatch(r"(?:sm_?|compute_)?(\d+)\.(\d)", s) or None
        if m:
            cc = int(m.group(1)) * 10 + int(m.group(2))
        else:
            m = re.fullmatch(r"(?:sm_?|compute_)?(\d{2,3})[af]?", s)
            if not m:
                raise CompileError(
                    f"cannot read the arch {raw!r}",
                    hint=f"use one of {', '.join(SUPPORTED_ARCHS)} (or a compute capability like 9.0)",
                )
            cc = int(m.group(1))
    name = f"sm_{cc}a" if cc >= 90 else f"sm_{cc}"
    if name not in _CC:
        why = _WHY_NOT.get(
            cc,
            "Triton 3.9 has no backend for it"
            if cc > 121 or cc < 70
            else "this front-end has no limits table / pipe map for it",
        )
        raise CompileError(
            f"arch {raw!r} (cc {cc}) is not a target this SASS front-end supports: {why}",
            hint=f"use one of {', '.join(SUPPORTED_ARCHS)}",
        )
    return name


def arch_capability(arch: str | int | float) -> int:
    """Triton ``GPUTarget`` capability (80, 86, 89, 90, 100, 103, 120)."""
    return _CC[normalize_arch(arch)]


def arch_limits(arch: str | int | float) -> ArchLimits:
    return _LIMITS[normalize_arch(arch)]


def supports_fp8(arch: str | int | float) -> bool:
    """FP8 (e4m3) tensor-core MMAs exist from sm_89 on."""
    return arch_capability(arch) >= 89


_GPU_ARCH = [
    # (regex on a normalised GPU name, arch); first match wins
    (r"gb?300|b300", "sm_103a"),
    (r"gb?200|b200|b100", "sm_100a"),
    (r"pro ?6000|rtx ?pro|rtx ?50\d0|pro6000", "sm_120a"),
    (r"h100|h200|h800|h20\b|h20[^0-9]|^h20$|gh200", "sm_90a"),
    (r"l40|l20|l4\b|^l4$|4090|4080|6000 ?ada|5880 ?ada|ada|rtx ?40\d0", "sm_89"),
    (r"a100|a800|a30\b|^a30$", "sm_80"),
    (r"a40|a6000|a10\b|^a10$|a10g|rtx ?30\d0|a5000|a4000", "sm_86"),
]


def arch_for_gpu(name: str) -> str:
    """Arch Triton would compile for on the named GPU (A100 -> sm_80, H20 -> sm_90a, B300 -> sm_103a ...)."""
    s = str(name).strip().lower().replace("_", " ").replace("-", " ")
    s = re.sub(r"^nvidia ", "", s)
    for pat, arch in _GPU_ARCH:
        if re.search(pat, s):
            return arch
    cc = None
    try:  # a catalog GPU of an arch this front-end does not target (T4 is sm_75): say so
        from ...hardware import get_gpu

        cc = int(get_gpu(str(name)).sm_arch)
    except Exception:
        cc = None
    if cc is not None:
        why = _WHY_NOT.get(cc, "this SASS front-end has no limits table / pipe map for it")
        raise CompileError(
            f"GPU {name!r} is sm_{cc}, which this SASS front-end does not compile for: {why}",
            hint=f"it supports {', '.join(SUPPORTED_ARCHS)}: choose a GPU of one of them "
            f"(e.g. {supported_gpu_examples()})",
        )
    raise CompileError(
        f"no arch known for GPU {name!r}",
        hint=f"name a GPU of a supported arch ({supported_gpu_examples()}), or give the arch itself "
        f"({', '.join(SUPPORTED_ARCHS)})",
    )


def supported_gpu_examples() -> str:
    """One example GPU name per supported arch (``A100 (sm_80), L40S (sm_89), H100 (sm_90a) ...``)."""
    examples = {"sm_80": "A100", "sm_89": "L40S", "sm_90a": "H100", "sm_100a": "B200"}
    examples.update({"sm_103a": "B300", "sm_120a": "RTX PRO 6000"})
    return ", ".join(f"{g} ({a})" for a, g in examples.items())


def occupancy(arch: str, *, num_warps: int, registers: int, shared_bytes: int, tmem_columns: int = 0) -> int:
    """Resident CTAs per SM (0 when the CTA does not fit): min over warps, CTAs, registers, smem, TMEM.

    :func:`pipeweave.frontend.ctas_per_sm` with the exact allocation rules and this arch's limits."""
    lim = arch_limits(arch)
    p = ctas_per_sm(
        num_warps,
        registers,
        shared_bytes,
        max_ctas=lim.max_ctas,
        max_warps=lim.max_warps,
        regs_per_sm=lim.regs,
        smem_per_sm_bytes=lim.smem_per_sm_bytes,
        smem_per_cta_bytes=lim.smem_per_cta_bytes,
        tmem_columns=tmem_columns,
        tmem_columns_per_sm=lim.tmem_columns,
        allocation="exact",
    )
    return int(p)
