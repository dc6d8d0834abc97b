"""SASS opcode -> execution pipe of the analytical model, and tensor FLOPs per MMA instruction.

Pipes (Nsight Compute names, grouped the way the model consumes them; see ../shared/docs/sass_pipes.md):

``tensor``  MMA instructions (HMMA/IMMA/QMMA/OMMA/DMMA, wgmma HGMMA/QGMMA/IGMMA, tcgen05 UTC*MMA)
``fma``     FP32/FP16x2 arithmetic and IMAD/IMUL/IDP (fmaheavy)
``alu``     integer/logic, compares, selects, fast conversions (F2FP, I2FP)
``xu``      MUFU transcendentals and int<->float conversions
``fp64``    DFMA/DADD/DMUL
``lsu``     global/shared/local memory, cp.async, shuffles, S2R, mbarriers (the MIO path)
``tma``     TMA / bulk copies (UTMALDG ...)
``tmem``    Blackwell tensor-memory moves (LDTM/STTM)
``uniform`` uniform datapath (U*, R2UR, S2UR ...)
``control`` branch/convergence (cbu), barriers and constant loads (adu), tcgen05 commit/alloc
``other``   anything unrecognised (reported so it can be added)
"""

from __future__ import annotations

import re

from ..._errors import DataError
from ._arch import arch_capability, normalize_arch

__all__ = ["PIPES", "classify_opcode", "base_opcode", "mma_flops_per_warp_instruction", "is_mma", "is_single_warp"]

PIPES: tuple[str, ...] = ("tensor", "fma", "alu", "xu", "fp64", "lsu", "tma", "tmem", "uniform", "control", "other")

_TENSOR = {"HMMA", "IMMA", "BMMA", "DMMA", "QMMA", "OMMA"}
_WGMMA = {"HGMMA", "QGMMA", "IGMMA", "BGMMA"}
_TCGEN05_MMA = {"UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA", "UTCMMA"}
_TCGEN05_CTRL = {"UTCBAR", "UTCCP", "UTCSHIFT", "UTCATOMSWS"}
_TMEM = {"LDTM", "STTM", "LDT", "STT"}
_FMA = {
    "FFMA",
    "FADD",
    "FMUL",
    "FFMA32I",
    "FADD32I",
    "FMUL32I",
    "FCHK",
    "FFMA2",
    "FADD2",
    "FMUL2",
    "HFMA2",
    "HADD2",
    "HMUL2",
    "HFMA2_32I",
    "HADD2_32I",
    "HMUL2_32I",
    "HFMA",
    "HADD",
    "HMUL",
    "IMAD",
    "IMUL",
    "IMAD32I",
    "IMUL32I",
    "IDP",
    "IDP4A",
    "IMADSP",
}
_ALU = {
    "IADD3",
    "IADD",
    "IADD32I",
    "LOP3",
    "LOP",
    "LOP32I",
    "SHF",
    "SHL",
    "SHR",
    "LEA",
    "ISETP",
    "IMNMX",
    "VIMNMX",
    "VIMNMX3",
    "VIADD",
    "VIADDMNMX",
    "IABS",
    "SEL",
    "PRMT",
    "SGXT",
    "BMSK",
    "PLOP3",
    "PSETP",
    "P2R",
    "R2P",
    "MOV",
    "MOV32I",
    "VOTE",
    "CS2R",
    "FSETP",
    "FSET",
    "FSEL",
    "FMNMX",
    "FMNMX3",
    "HSETP2",
    "HSET2",
    "HMNMX2",
    "F2FP",
    "I2FP",
    "F2IP",
    "I2I",
    "I2IP",
    "LEPC",
    "FSWZADD",
    "VABSDIFF",
    "VABSDIFF4",
    "IDE",
    "ISCADD",
    "BFE",
    "BFI",
    "XMAD",
    "FMNMX2",
    "HMNMX",
    "ICMP",
    "FCMP",
    "HSETP",
    "HSET",
}
_XU = {"MUFU", "F2I", "I2F", "F2F", "FRND", "POPC", "FLO", "BREV", "RRO"}
_FP64 = {"DFMA", "DADD", "DMUL", "DSETP", "DMNMX", "DSET"}
_LSU = {
    "LDG",
    "STG",
    "LD",
    "ST",
    "LDL",
    "STL",
    "LDS",
    "STS",
    "LDSM",
    "STSM",
    "ATOM",
    "ATOMG",
    "ATOMS",
    "RED",
    "REDG",
    "REDAS",
    "LDGSTS",
    "SHFL",
    "S2R",
    "MEMBAR",
    "FENCE",
    "CCTL",
    "CCTLL",
    "ERRBAR",
    "SYNCS",
    "ARRIVES",
    "MATCH",
    "QSPC",
    "LDGMC",
    "REDUX_LSU",
}
_TMA = {"UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG", "UTMACCTL", "UTMACMDFLUSH", "UBLKCP", "UBLKPF", "UBLKRED"}
_CONTROL = {
    "BRA",
    "JMP",
    "CALL",
    "RET",
    "EXIT",
    "BSSY",
    "BSYNC",
    "BREAK",
    "BMOV",
    "WARPSYNC",
    "KILL",
    "BPT",
    "NANOSLEEP",
    "YIELD",
    "ELECT",
    "WARPGROUP",
    "WARPGROUPSET",
    "LDC",
    "BAR",
    "B2R",
    "DEPBAR",
    "LDGDEPBAR",
    "BRX",
    "JMX",
    "NOP",
    "ACQBULK",
    "PMTRIG",
    "SETCTAID",
    "CGAERRBAR",
    "ACQSHMINIT",
    "ENDCOLLECTIVE",
}
_UNIFORM_EXTRA = {"R2UR", "S2UR", "CS2UR", "VOTEU", "REDUX", "CREDUX", "USETMAXREG", "UVIRTCOUNT", "LDCU"}
_TEX = {"TEX", "TLD", "TLD4", "TMML", "TXD", "TXQ", "SULD", "SUST", "SUATOM", "SURED"}

# opcodes that only exist on some archs (for validating user input; the disassembler never emits others)
_ONLY_ON: dict[str, tuple[int, ...]] = {
    **{op: (90,) for op in _WGMMA | {"WARPGROUP", "WARPGROUPSET"}},
    **{op: (100, 103) for op in _TCGEN05_MMA | _TCGEN05_CTRL | _TMEM},
    "QMMA": (89, 100, 103, 120),
    "OMMA": (100, 103, 120),
    "DMMA": (80, 90, 100, 103),
    **{op: (90, 100, 103, 120) for op in _TMA | {"SYNCS", "ELECT"}},
    **{op: (100, 103) for op in ("FFMA2", "FADD2", "FMUL2")},
}


def base_opcode(opcode: str) -> str:
    """Mnemonic before the first ``.`` (``HMMA.16816.F32.BF16`` -> ``HMMA``)."""
    return opcode.strip().split(".", 1)[0].upper()


def classify_opcode(opcode: str, arch: str = "sm_90a") -> str:
    """Pipe of a SASS opcode (full mnemonic with modifiers or base) on ``arch``; one of :data:`PIPES`.

    Raises :class:`DataError` when the opcode does not exist on that arch (e.g. HGMMA on sm_80).
    """
    cc = arch_capability(normalize_arch(arch))
    base = base_opcode(opcode)
    only = _ONLY_ON.get(base)
    if only is not None and cc not in only:
        raise DataError(
            f"SASS opcode {opcode!r} does not exist on {normalize_arch(arch)}",
            hint=f"{base} is emitted only for cc {', '.join(map(str, only))}",
        )
    if base in _TENSOR or base in _WGMMA or base in _TCGEN05_MMA:
        return "tensor"
    if base in _TCGEN05_CTRL:
        return "control"
    if base in _TMEM or opcode.upper().startswith("FENCE.VIEW.ASYNC.T"):
        return "tmem"
    if base in _TMA:
        return "tma"
    if base in _FMA:
        return "fma"
    if base in _ALU:
        return "alu"
    if base in _XU:
        return "xu"
    if base in _FP64:
        return "fp64"
    if base in _LSU:
        return "lsu"
    if base in _CONTROL:
        return "control"
    if base in _UNIFORM_EXTRA or (base.startswith("U") and len(base) > 2):
        return "uniform"
    if base in _TEX:
        return "lsu"
    return "other"


def is_mma(opcode: str) -> bool:
    b = base_opcode(opcode)
    return b in _TENSOR or b in _WGMMA or b in _TCGEN05_MMA


def is_single_warp(opcode: str) -> bool:
    """tcgen05 instructions are issued by one elected thread of one warp per CTA, not by every warp."""
    b = base_opcode(opcode)
    return b in _TCGEN05_MMA or b in _TCGEN05_CTRL


_MMA_SYNC_SHAPE = re.compile(r"^(?:HMMA|IMMA|QMMA|OMMA|BMMA|DMMA)\.(\d+)")
_WGMMA_SHAPE = re.compile(r"^[HQIB]GMMA\.(\d+)x(\d+)x(\d+)", re.IGNORECASE)
_MMA_SYNC_K = {
    "16816": (16, 8, 16),
    "1688": (16, 8, 8),
    "16832": (16, 8, 32),
    "16864": (16, 8, 64),
    "884": (8, 8, 4),
    "8816": (8, 8, 16),
    "8832": (8, 8, 32),
    "168256": (16, 8, 256),
}


def mma_flops_per_warp_instruction(opcode: str, operands: str = "", idesc: int | None = None) -> float:
    """Dense FLOPs (FMA = 2) one warp-level execution of this MMA instruction performs.

    mma.sync (HMMA.16816 ...): 2*m*n*k per warp.  wgmma (HGMMA.64xNx16): 2*M*N*K per warpgroup, i.e.
    a quarter per warp (each of the 4 warps issues it).  tcgen05 (UTCHMMA): 2*M*N*K from the 32-bit
    instruction descriptor ``idesc`` (issued once per CTA).  Returns 0.0 for non-MMA opcodes.
    """
    op = opcode.upper()
    b = base_opcode(op)
    if b in _TENSOR:
        m = _MMA_SYNC_SHAPE.match(op)
        if not m or m.group(1) not in _MMA_SYNC_K:
            raise DataError(
                f"cannot read the MMA shape of {opcode!r}",
                hint=f"give the full opcode with its shape, e.g. 'HMMA.16816.F32.BF16' (known shapes: "
                f"{', '.join(_MMA_SYNC_K)})",
            )
        mm, nn, kk = _MMA_SYNC_K[m.group(1)]
        return 2.0 * mm * nn * kk
    if b in _WGMMA:
        m = _WGMMA_SHAPE.match(op)
        if not m:
            raise DataError(
                f"cannot read the wgmma shape of {opcode!r}",
                hint="give the full opcode with its MxNxK shape, e.g. 'HGMMA.64x128x16.F32.BF16'",
            )
        mm, nn, kk = (int(g) for g in m.groups())
        return 2.0 * mm * nn * kk / 4.0
    if b in _TCGEN05_MMA:
        if idesc is None:
            raise DataError(
                f"tcgen05 MMA {opcode!r} needs its instruction descriptor to size it, got idesc=None",
                hint="pass idesc= (the 32-bit immediate moved into its idesc[URx] register; "
                "pipeweave.frontend.sass.parse_sass fills Instruction.idesc when the UMOV precedes the MMA)",
            )
        n = ((idesc >> 17) & 0x3F) << 3
        mm = ((idesc >> 24) & 0x1F) << 4
        a_type = (idesc >> 7) & 0x7
        if b == "UTCHMMA":
            kk = 8 if a_type == 2 else 16  # tf32 : f16/bf16
        elif b in ("UTCQMMA", "UTCIMMA"):
            kk = 32
        elif b == "UTCOMMA":
            kk = 64
        else:
            kk = 16
        if ".2CTA" in op:
            mm *= 2
        return 2.0 * mm * n * kk
    return 0.0
