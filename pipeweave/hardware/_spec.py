"""The :class:`GPUSpec` record: one GPU's spec sheet, with units in every field name."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .._errors import DataError
from ..vocab import GENERATIONS as _GENERATIONS

__all__ = [
    "CC_BY_GENERATION",
    "GENERATIONS",
    "OPTIONAL_SPEC_FIELDS",
    "REQUIRED_SPEC_FIELDS",
    "SPEC_FIELDS",
    "SPEC_RANGES",
    "TENSOR_DTYPES",
    "TENSOR_RANGE",
    "GPUSpec",
    "tensor_key",
]

#: GPU generations, oldest first (defined once, in :mod:`pipeweave.vocab`).
GENERATIONS: tuple[str, ...] = _GENERATIONS

#: Keys of :attr:`GPUSpec.tensor_flop_per_clk_per_sm`, in the order :meth:`GPUSpec.flat` lists them.
TENSOR_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "tf32", "int8")

# Accepted dtype spellings -> tensor key. Profile dtypes are bfloat16/float16/fp8/fp8_block;
# float32 GEMMs run on the TF32 tensor path.
_DTYPE_ALIASES: dict[str, str] = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "fp8": "fp8",
    "fp8_block": "fp8",
    "float8": "fp8",
    "fp8_e4m3": "fp8",
    "e4m3": "fp8",
    "float8_e4m3fn": "fp8",
    "fp8_e5m2": "fp8",
    "tf32": "tf32",
    "float32": "tf32",
    "fp32": "tf32",
    "int8": "int8",
    "w8a8_int8": "int8",
}

_INT_FIELDS: tuple[str, ...] = (
    "sm_count",
    "fp32_lanes_per_sm",
    "alu_lanes_per_sm",
    "regs_per_sm",
    "max_warps_per_sm",
    "max_ctas_per_sm",
)
_FLOAT_FIELDS: tuple[str, ...] = (
    "sm_clock_mhz",
    "sfu_ops_per_clk_per_sm",
    "dram_bw_gbps",
    "dram_gib",
    "l2_mib",
    "l2_bw_gbps",
    "smem_per_sm_kib",
    "smem_per_cta_kib",
    "smem_bw_bytes_per_clk_per_sm",
)
_CC_RE = re.compile(r"^\d{1,2}\.\d$")

#: Plausible range (low, high, unit) of each numeric spec field, covering Pascal .. Blackwell
#: datacenter and consumer parts with margin. A value outside is almost always a unit slip
#: (TB/s for GB/s, GHz for MHz, bytes for KiB); the error names the expected unit. Fields added
#: later are checked only when listed here.
SPEC_RANGES: dict[str, tuple[float, float, str]] = {
    "sm_count": (4, 1024, "SMs"),
    "sm_clock_mhz": (300, 4000, "MHz (e.g. 1980 for 1.98 GHz)"),
    "dram_bw_gbps": (50, 100_000, "GB/s (e.g. 3350 for 3.35 TB/s)"),
    "dram_gib": (1, 4096, "GiB (e.g. 80)"),
    "l2_mib": (0.25, 4096, "MiB (e.g. 50)"),
    "l2_bw_gbps": (100, 500_000, "GB/s (e.g. 12000 for 12 TB/s)"),
    "smem_per_sm_kib": (16, 4096, "KiB (e.g. 228)"),
    "smem_per_cta_kib": (16, 4096, "KiB (e.g. 227)"),
    "smem_bw_bytes_per_clk_per_sm": (16, 4096, "bytes per clock per SM (e.g. 128)"),
    "fp32_lanes_per_sm": (16, 1024, "FP32 FMA lanes per SM (e.g. 128)"),
    "alu_lanes_per_sm": (16, 1024, "INT32 lanes per SM (e.g. 64)"),
    "sfu_ops_per_clk_per_sm": (1, 512, "MUFU ops per clock per SM (e.g. 16)"),
    "regs_per_sm": (8192, 1_048_576, "32-bit registers per SM (e.g. 65536)"),
    "max_warps_per_sm": (8, 256, "warps per SM (e.g. 64)"),
    "max_ctas_per_sm": (1, 256, "CTAs per SM (e.g. 32)"),
}
#: Plausible dense tensor rate per SM per clock (FMA = 2 FLOP), any dtype key.
TENSOR_RANGE: tuple[float, float, str] = (
    16,
    262_144,
    "dense FLOP per clock per SM (e.g. 4096 for bf16 on H100, not TFLOPS)",
)
#: Compute capabilities (prefixes) of each generation.
CC_BY_GENERATION: dict[str, tuple[str, ...]] = {
    "pascal": ("6.",),
    "volta": ("7.0", "7.2"),
    "turing": ("7.5",),
    "ampere": ("8.0", "8.6", "8.7"),
    "ada": ("8.9",),
    "hopper": ("9.",),
    "blackwell": ("10.", "11.", "12."),
}


def _plausible(where: str, name: str, value: float, rng: tuple[float, float, str]) -> None:
    lo, hi, unit = rng
    if not lo <= value <= hi:
        raise DataError(
            f"{where}: field {name!r} = {value!r} is implausible; expected {unit}, within [{lo:g}, {hi:g}]",
            hint=f"check the unit of {name!r}: the key names it",
        )


def tensor_key(dtype: str) -> str:
    """Map a dtype name (``bfloat16``, ``fp8_block``, ``bf16`` ...) to its tensor key (``bf16`` ...).

    Raises :class:`DataError` for a dtype with no tensor-core path.
    """
    key = _DTYPE_ALIASES.get(str(dtype).strip().lower())
    if key is None:
        raise DataError(
            f"unknown tensor dtype {dtype!r}; expected one of {sorted(_DTYPE_ALIASES)}",
            hint="profile dtypes are bfloat16, float16, fp8, fp8_block",
        )
    return key


class FrozenDict(dict):
    """A read-only dict (a spec's tables): pickles, deep-copies and ``dataclasses.asdict``-es like a dict,
    which a ``types.MappingProxyType`` does not (joblib / multiprocessing with a spec failed)."""

    def _readonly(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a GPU spec is read-only: build a new one (dataclasses.replace) instead")

    __setitem__ = __delitem__ = _readonly
    clear = pop = popitem = setdefault = update = _readonly
    __ior__ = _readonly

    def __reduce__(self) -> tuple[Any, tuple[dict]]:
        return (FrozenDict, (dict(self),))


@dataclass(frozen=True)
class GPUSpec:
    """One GPU's spec sheet (catalog entry or user spec file). Units are in the field names.

    Attributes
    ----------
    name : canonical catalog name, e.g. ``"H100-SXM"``.
    generation : one of :data:`GENERATIONS`.
    compute_capability : e.g. ``"9.0"``; :attr:`sm_arch` gives ``90``.
    sm_count : number of SMs.
    sm_clock_mhz : clock (MHz) at which the data-sheet dense tensor peak is reached.
    tensor_flop_per_clk_per_sm : dtype key -> dense tensor FLOP/clk/SM (FMA = 2 FLOP); keys among
        ``bf16, fp16, fp8, tf32, int8``; a missing key means the dtype is unsupported.
    fp32_lanes_per_sm : FP32 FMA lanes (FMA/clk/SM).
    alu_lanes_per_sm : INT32/logic lanes (ops/clk/SM).
    sfu_ops_per_clk_per_sm : MUFU ops/clk/SM.
    dram_bw_gbps : DRAM bandwidth, GB/s (1e9 B/s).
    dram_gib : DRAM capacity, GiB.
    l2_mib : L2 size, MiB.
    l2_bw_gbps : L2 bandwidth, GB/s.
    smem_per_sm_kib : max shared memory per SM, KiB.
    smem_per_cta_kib : max opt-in shared memory per CTA, KiB.
    smem_bw_bytes_per_clk_per_sm : shared-memory bandwidth, B/clk/SM.
    regs_per_sm : 32-bit registers per SM.
    max_warps_per_sm, max_ctas_per_sm : residency limits.
    aliases : other names the data sources use for this GPU.
    sources : field name -> URL or document of the public number.
    notes : free text (how disagreements between sources were decided).
    """

    name: str
    generation: str
    compute_capability: str
    sm_count: int
    sm_clock_mhz: float
    tensor_flop_per_clk_per_sm: Mapping[str, float]
    fp32_lanes_per_sm: int
    alu_lanes_per_sm: int
    sfu_ops_per_clk_per_sm: float
    dram_bw_gbps: float
    dram_gib: float
    l2_mib: float
    l2_bw_gbps: float
    smem_per_sm_kib: float
    smem_per_cta_kib: float
    smem_bw_bytes_per_clk_per_sm: float
    regs_per_sm: int
    max_warps_per_sm: int
    max_ctas_per_sm: int
    aliases: tuple[str, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        where = f"GPU spec {self.name!r}"
        if not isinstance(self.name, str) or not self.name.strip():
            raise DataError(
                f"GPU spec field 'name' must be a non-empty string, got {self.name!r}",
                hint='give the GPU a name of its own, e.g. name = "RTX-4090" (a catalog name only with the '
                "catalog's numbers)",
            )
        if self.generation not in GENERATIONS:
            raise DataError(
                f"{where}: unknown generation {self.generation!r}; expected one of {list(GENERATIONS)}",
                hint="give the listed generation whose architecture the GPU shares (its compute capability's); "
                "the front-end's per-generation rules (asynchronous copies, tensor-core paths) follow it",
            )
        cc = self.compute_capability
        if isinstance(cc, (int, float)) and not isinstance(cc, bool) and math.isfinite(cc):
            cc = f"{float(cc):.1f}"  # compute_capability = 10.0 unquoted in TOML: "10.0"
        if not isinstance(cc, str) or not _CC_RE.match(cc):
            raise DataError(
                f"{where}: compute_capability must look like '9.0' (a string), got {self.compute_capability!r}",
                hint="write the GPU's CUDA compute capability as MAJOR.MINOR in quotes, e.g. "
                'compute_capability = "8.9"',
            )
        object.__setattr__(self, "compute_capability", cc)
        ccs = CC_BY_GENERATION.get(self.generation)
        if ccs and not (cc + "|").startswith(tuple(p if p.endswith(".") else p + "|" for p in ccs)):
            raise DataError(
                f"{where}: compute_capability {cc!r} does not belong to generation {self.generation!r} "
                f"(expected {' or '.join(p + 'x' if p.endswith('.') else p for p in ccs)})",
                hint="fix compute_capability or generation",
            )
        for f in _INT_FIELDS:
            object.__setattr__(self, f, _positive(where, f, getattr(self, f), integer=True))
        for f in _FLOAT_FIELDS:
            object.__setattr__(self, f, _positive(where, f, getattr(self, f), integer=False))
        for f, rng in SPEC_RANGES.items():
            if hasattr(self, f):
                _plausible(where, f, getattr(self, f), rng)
        if self.smem_per_cta_kib > self.smem_per_sm_kib:
            raise DataError(
                f"{where}: smem_per_cta_kib={self.smem_per_cta_kib} exceeds "
                f"smem_per_sm_kib={self.smem_per_sm_kib}; a CTA cannot use more than its SM has",
                hint="smem_per_cta_kib is the opt-in maximum of one CTA (e.g. 227 of 228 on Hopper); check both",
            )
        tensor = self.tensor_flop_per_clk_per_sm
        if not isinstance(tensor, Mapping):
            raise DataError(
                f"{where}: tensor_flop_per_clk_per_sm must be a table dtype -> FLOP/clk/SM, got {type(tensor).__name__}",
                hint="e.g. tensor_flop_per_clk_per_sm = { bf16 = 512, fp16 = 512, fp8 = 1024 } (dense FLOP per "
                "clock per SM)",
            )
        unknown = sorted(set(tensor) - set(TENSOR_DTYPES))
        if unknown:
            renames = [
                f"{k!r} -> {_DTYPE_ALIASES[str(k).lower()]!r}" for k in unknown if str(k).lower() in _DTYPE_ALIASES
            ]
            raise DataError(
                f"{where}: unknown tensor dtype key(s) {unknown} in tensor_flop_per_clk_per_sm; "
                f"expected keys among {list(TENSOR_DTYPES)}",
                hint=f"rename or drop {unknown}" + (f" (rename {', '.join(renames)})" if renames else ""),
            )
        clean = {
            k: _positive(where, f"tensor_flop_per_clk_per_sm.{k}", tensor[k], integer=False)
            for k in TENSOR_DTYPES
            if k in tensor
        }
        for k, v in clean.items():
            _plausible(where, f"tensor_flop_per_clk_per_sm.{k}", v, TENSOR_RANGE)
        if "bf16" not in clean and GENERATIONS.index(self.generation) >= GENERATIONS.index("ampere"):
            raise DataError(
                f"{where}: tensor_flop_per_clk_per_sm has no bf16 rate, but every {self.generation} GPU runs bf16 on "
                f"its tensor cores (keys given: {sorted(clean)})",
                hint="add bf16 = <dense FLOP per clock per SM> (usually the fp16 rate) to tensor_flop_per_clk_per_sm",
            )
        object.__setattr__(self, "tensor_flop_per_clk_per_sm", FrozenDict(clean))
        aliases = (self.aliases,) if isinstance(self.aliases, str) else tuple(self.aliases)
        if not all(isinstance(a, str) and a.strip() for a in aliases):
            raise DataError(
                f"{where}: aliases must be a list of non-empty strings, got {list(aliases)!r}",
                hint='e.g. aliases = ["NVIDIA GeForce RTX 4090", "RTX 4090"] (drop empty entries), or leave it out',
            )
        object.__setattr__(self, "aliases", aliases)
        sources = dict(self.sources)
        bad = sorted(set(sources) - set(SPEC_FIELDS))
        if bad:
            raise DataError(
                f"{where}: sources has key(s) {bad} that are not spec fields; expected keys among {list(SPEC_FIELDS)}",
                hint=f'key each source by the field it documents (e.g. dram_bw_gbps = "<url>"); rename or drop {bad}',
            )
        object.__setattr__(self, "sources", FrozenDict({k: str(v) for k, v in sources.items()}))
        object.__setattr__(self, "notes", str(self.notes))

    def __hash__(self) -> int:
        return hash((self.name, tuple(self.flat().items())))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GPUSpec):
            return NotImplemented
        return all(
            getattr(self, f) == getattr(other, f)
            if f not in ("tensor_flop_per_clk_per_sm", "sources")
            else dict(getattr(self, f)) == dict(getattr(other, f))
            for f in SPEC_FIELDS
        )

    # ------------------------------------------------------------------ derived numbers
    @property
    def sm_arch(self) -> int:
        """Compute capability as an int: ``"9.0"`` -> 90, ``"10.3"`` -> 103."""
        major, minor = self.compute_capability.split(".")
        return int(major) * 10 + int(minor)

    @property
    def supported_tensor_dtypes(self) -> tuple[str, ...]:
        """Tensor keys this GPU supports (``bf16``, ``fp16``, ...)."""
        return tuple(self.tensor_flop_per_clk_per_sm)

    def tensor_flop_per_clk_per_sm_for(self, dtype: str) -> float:
        """Dense tensor FLOP/clk/SM for ``dtype`` (``bfloat16``, ``fp8_block``, ``bf16`` ...).

        Raises :class:`DataError` naming the dtype and the dtypes this GPU supports when the GPU
        has no tensor-core path for it (e.g. fp8 on A100).
        """
        key = tensor_key(dtype)
        rate = self.tensor_flop_per_clk_per_sm.get(key)
        if rate is None:
            raise DataError(
                f"GPU {self.name!r} ({self.generation}, sm_{self.sm_arch}) has no {key} tensor-core path "
                f"(dtype {dtype!r}); it supports {list(self.supported_tensor_dtypes)}",
                hint=f"pick a dtype among {list(self.supported_tensor_dtypes)} or another GPU",
            )
        return rate

    def peak_tensor_tflops(self, dtype: str) -> float:
        """Dense tensor peak, TFLOPS (1e12 FLOP/s) = FLOP/clk/SM x SMs x clock."""
        return self.tensor_flop_per_clk_per_sm_for(dtype) * self.sm_count * self.sm_clock_mhz * 1e-6

    @property
    def peak_fp32_tflops(self) -> float:
        """Non-tensor FP32 FMA peak, TFLOPS (2 FLOP per FMA lane per clock), at :attr:`sm_clock_mhz`."""
        return 2.0 * self.fp32_lanes_per_sm * self.sm_count * self.sm_clock_mhz * 1e-6

    @property
    def dram_bw_bytes_per_clk(self) -> float:
        """DRAM bandwidth in bytes per SM clock for the whole chip (GB/s / GHz)."""
        return self.dram_bw_gbps * 1e3 / self.sm_clock_mhz

    @property
    def l2_bw_bytes_per_clk(self) -> float:
        """L2 bandwidth in bytes per SM clock for the whole chip."""
        return self.l2_bw_gbps * 1e3 / self.sm_clock_mhz

    # ------------------------------------------------------------------ export
    def flat(self) -> dict[str, Any]:
        """Flat dict of scalars: spec fields plus ``sm_arch`` and ``tensor_<key>_flop_per_clk_per_sm``
        for every key in :data:`TENSOR_DTYPES` (NaN where unsupported). No aliases, sources or notes."""
        out: dict[str, Any] = {
            "name": self.name,
            "generation": self.generation,
            "compute_capability": self.compute_capability,
            "sm_arch": self.sm_arch,
        }
        for f in _FLAT_SCALARS:
            out[f] = getattr(self, f)
        for k in TENSOR_DTYPES:
            out[f"tensor_{k}_flop_per_clk_per_sm"] = float(self.tensor_flop_per_clk_per_sm.get(k, math.nan))
        return out

    def to_dict(self) -> dict[str, Any]:
        """All fields as plain Python objects (the layout of a spec file's ``[gpu]`` table)."""
        out: dict[str, Any] = {}
        for f in SPEC_FIELDS:
            v = getattr(self, f)
            if isinstance(v, Mapping):
                v = dict(v)
            elif isinstance(v, tuple):
                v = list(v)
            out[f] = v
        return out


SPEC_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(GPUSpec))
OPTIONAL_SPEC_FIELDS: tuple[str, ...] = ("aliases", "sources", "notes")
REQUIRED_SPEC_FIELDS: tuple[str, ...] = tuple(f for f in SPEC_FIELDS if f not in OPTIONAL_SPEC_FIELDS)
_FLAT_SCALARS: tuple[str, ...] = tuple(
    f
    for f in REQUIRED_SPEC_FIELDS
    if f not in ("name", "generation", "compute_capability", "tensor_flop_per_clk_per_sm")
)


def _unit(name: str) -> str:
    """The unit a spec field is written in, for error hints (``tensor_flop_per_clk_per_sm.bf16`` included)."""
    if name.startswith("tensor_flop_per_clk_per_sm"):
        return TENSOR_RANGE[2]
    if name in SPEC_RANGES:
        return SPEC_RANGES[name][2]
    return f"the unit its name says ({name})"


def _positive(where: str, name: str, value: Any, *, integer: bool) -> Any:
    """Check that ``value`` is a finite positive number (an integer if ``integer``); return it typed."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(
            f"{where}: field {name!r} must be a positive number, got {value!r} ({type(value).__name__})",
            hint=f"write it as a bare number in {_unit(name)}, without quotes or a unit suffix",
        )
    if not math.isfinite(value) or value <= 0:
        raise DataError(
            f"{where}: field {name!r} must be a finite positive number, got {value!r}",
            hint=f"give the GPU's value in {_unit(name)} (the spec sheet's number; 0, NaN and inf are not values)",
        )
    if integer:
        if float(value) != int(value):
            raise DataError(
                f"{where}: field {name!r} must be a whole number, got {value!r}",
                hint=f"it is a count ({_unit(name)}): give a whole number, e.g. {max(1, round(value))}",
            )
        return int(value)
    return float(value)
