"""The valid domain of every launch column, in one declarative table, checked per row (vectorized).

:func:`row_problems` returns one reason per row (``''`` = fine), so ``pipeweave predict`` and the
library's predict path report bad rows by number and still predict the others; the CLI flags of a
single launch are turned into a one-row frame and go through the same check.

The domain (also printed in the README):

* :data:`COLUMN_DOMAINS` - each shape / tile column: whole number or real, range, power of two,
  multiple of; the reason names the column, the bad value and the valid range.
* :data:`FAMILY_RULES` - cross-column rules per family: ``topk <= num_experts``, ``moe_ep_size``
  divides ``num_experts``, ``moe_tp_size`` divides ``inter_size``, ``num_key_value_heads`` divides
  ``num_heads``, ``split_k <= k`` (FP32 GEMM, where given).
* tile plans (``block_m`` ... of the Triton-tiled families gemm, moe_w13, fused_moe): block_m, block_n
  and block_k come together (a lone ``block_m`` is an error, not ignored); the plan must launch on the
  row's GPU: shared memory (:func:`pipeweave.frontend.triton_smem_bytes`, the one rule) within
  ``smem_per_cta_kib`` and the fp32 accumulator within 255 registers per thread and
  ``regs_per_sm`` per CTA. gemm_fp32 reads the cuBLAS/CUTLASS tile a source recorded (unchecked); every other
  family (attention, the row kernels) chooses its own tiles: tile cells there are refused, not ignored.
* memory: the operands, outputs (and KV cache) of one launch fit in the GPU's ``dram_gib``.
* labels: family, dtype (with the family's dtypes), ``kv_cache_dtype``, ``backend`` (attention),
  ``source``, ``distribution`` (``balanced`` or ``power_law_<alpha>``, alpha >= 0), GPU name.

:data:`LAUNCH_DEFAULTS` holds the values an absent or blank optional column takes (the CLI flags
default to the same values): ``moe_tp_size = moe_ep_size = 1``, ``distribution = balanced``,
``step = 0`` for attention_context, ``isl = 1`` for attention_generation (unused by a decode step),
``backend = flash_attention`` for attention families. Every numeric default column is range-checked where given
(a shape column, or one of :data:`OPTIONAL_LAUNCH_COLUMNS`): a given ``step`` of a prefill is a whole number in
``[0, 2**21]``, as the README's domain table says.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from .._errors import shown
from .._frame import is_missing
from ..vocab import RECORDED_TILE_FAMILIES, closest_family
from ._constants import DTYPE_BYTES, DTYPE_TENSOR_KEY
from ._families import FAMILIES

if TYPE_CHECKING:
    from ..hardware import GPUSpec

__all__ = [
    "COLUMN_DOMAINS",
    "DERIVED_COLUMNS",
    "FAMILY_RULES",
    "LAUNCH_DEFAULTS",
    "MAX_LATENCY_US",
    "OPTIONAL_LAUNCH_COLUMNS",
    "TILED_FAMILIES",
    "default_dtype",
    "launch_columns",
    "Domain",
    "domain_table",
    "fill_launch_defaults",
    "row_problems",
    "suggest_dtype",
]

_MAX_DIM = 2**24  # 16,777,216: tokens / rows; beyond it no launch fits a GPU's memory anyway


@dataclass(frozen=True)
class Domain:
    """Valid values of one numeric column: ``low <= v <= high``, whole if ``integer``, and optionally a
    power of two or a multiple of ``multiple_of``."""

    low: float
    high: float
    integer: bool = True
    power_of_two: bool = False
    multiple_of: int | None = None
    meaning: str = ""

    def describe(self) -> str:
        """Text form, e.g. 'a whole number in [1, 16777216]' or 'a power of two in [16, 256]'."""
        what = "a power of two" if self.power_of_two else ("a whole number" if self.integer else "a number")
        extra = f", a multiple of {self.multiple_of}" if self.multiple_of else ""
        return f"{what} in [{_num(self.low)}, {_num(self.high)}]{extra}"


def _num(v: float) -> str:
    f = float(v)
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)


#: Valid domain of each launch column (shape and tile-plan columns; any family that uses the column).
COLUMN_DOMAINS: dict[str, Domain] = {
    "m": Domain(1, _MAX_DIM, meaning="GEMM rows of A/C"),
    "n": Domain(1, _MAX_DIM, meaning="GEMM columns of B/C"),
    "k": Domain(1, _MAX_DIM, meaning="GEMM reduction depth"),
    "num_tokens": Domain(1, _MAX_DIM, meaning="tokens"),
    "hidden_size": Domain(1, 2**20, meaning="hidden size"),
    "inter_size": Domain(1, 2**20, meaning="MoE per-expert intermediate size"),
    "topk": Domain(1, 4096, meaning="experts per token (<= num_experts)"),
    "num_experts": Domain(1, 4096, meaning="experts"),
    "moe_tp_size": Domain(1, 1024, meaning="MoE tensor-parallel size (divides inter_size)"),
    "moe_ep_size": Domain(1, 4096, meaning="MoE expert-parallel size (divides num_experts)"),
    "batch_size": Domain(1, 2**20, meaning="attention batch"),
    "isl": Domain(1, 2**21, meaning="input sequence length"),
    "step": Domain(0, 2**21, meaning="KV-cache length before the step (0 for a fresh prefill)"),
    "num_heads": Domain(1, 1024, meaning="query heads"),
    "num_key_value_heads": Domain(1, 1024, meaning="KV heads (divides num_heads)"),
    "head_dim": Domain(
        16, 256, multiple_of=8, meaning="head dimension (FlashAttention/TRT-LLM: multiple of 8, <= 256)"
    ),
    "window_size": Domain(0, 2**21, meaning="sliding window (0 = none)"),
    "block_m": Domain(16, 256, power_of_two=True, meaning="Triton BLOCK_M"),
    "block_n": Domain(16, 256, power_of_two=True, meaning="Triton BLOCK_N"),
    "block_k": Domain(16, 256, power_of_two=True, meaning="Triton BLOCK_K (tl.dot needs K >= 16)"),
    "group_m": Domain(1, 256, meaning="Triton GROUP_M"),
    "num_warps": Domain(1, 32, power_of_two=True, meaning="warps per CTA (<= 1024 threads)"),
    "num_stages": Domain(1, 8, meaning="software-pipeline stages"),
    "split_k": Domain(1, 1024, meaning="gemm_fp32: CTAs per output tile along the reduction (cuBLAS split-K)"),
}

#: Families whose recorded tile plan (``block_m`` ...) is a Triton tiled-matmul plan the front-end uses.
TILED_FAMILIES: tuple[str, ...] = ("gemm", "moe_w13", "fused_moe")
#: Families that read a recorded tile plan without the Triton checks (:data:`pipeweave.vocab.RECORDED_TILE_FAMILIES`);
#: every other family chooses its own launch configuration, and tile cells on its rows are refused.
_RECORDED_TILE_FAMILIES: tuple[str, ...] = RECORDED_TILE_FAMILIES
_ATTENTION_FAMILIES = ("attention_context", "attention_generation")
#: row kernels whose launch reads one num_tokens x hidden_size tensor and writes one (the memory check)
_ROW_FAMILIES = ("rmsnorm", "elementwise_fp32", "softmax_fp32", "layernorm_fp32")
_TILES = ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages")

#: Values an absent or blank optional column takes, per family (the CLI flags default to these too).
LAUNCH_DEFAULTS: dict[str, dict[str, float | str]] = {
    "fused_moe": {"moe_tp_size": 1, "moe_ep_size": 1, "distribution": "balanced"},
    "moe_w13": {"moe_tp_size": 1, "moe_ep_size": 1, "distribution": "balanced"},
    "attention_context": {"step": 0, "backend": "flash_attention"},
    "attention_generation": {"backend": "flash_attention", "isl": 1},  # isl does not enter a decode step
}

#: Optional launch columns a family reads besides its shape columns and :data:`LAUNCH_DEFAULTS` (absent or
#: blank: the family's default; the numeric ones are range-checked where given)
OPTIONAL_LAUNCH_COLUMNS: dict[str, tuple[str, ...]] = {
    "attention_context": ("kv_cache_dtype", "step", "window_size"),
    "attention_generation": ("kv_cache_dtype", "isl", "window_size"),
    "attention_flashinfer": ("kv_cache_dtype", "backend"),  # its FlashInfer code path, checked by its own rule
    "gemm_fp32": ("batch_size", "op", "split_k"),
    "elementwise_fp32": ("op",),
    "moe_w13": ("moe_tp_size", "moe_ep_size"),
}


def default_dtype(family: str) -> str:
    """The dtype a launch of ``family`` takes when none is given: bfloat16 where the family supports it, else
    its first dtype (float32 for the FP32 operator families)."""
    fam = FAMILIES.get(str(family))
    if fam is None or "bfloat16" in fam.dtypes:
        return "bfloat16"
    return str(fam.dtypes[0])


def launch_columns(family: str) -> tuple[str, ...]:
    """The launch columns a row of ``family`` is read by: its shape and text columns, its optional columns
    (:data:`OPTIONAL_LAUNCH_COLUMNS`, :data:`LAUNCH_DEFAULTS`) and the tile-plan columns where the family reads a
    recorded plan. Empty for an unknown family."""
    fam = FAMILIES.get(str(family))
    if fam is None:
        return ()
    cols = [*fam.shape_columns, *fam.text_columns, *OPTIONAL_LAUNCH_COLUMNS.get(fam.name, ())]
    cols += list(LAUNCH_DEFAULTS.get(fam.name, {}))
    if fam.name in TILED_FAMILIES or fam.name in _RECORDED_TILE_FAMILIES:
        cols += list(_TILES)
    return tuple(dict.fromkeys(cols))


#: Largest plausible measured latency of one kernel launch, microseconds (1000 s). The shared data's
#: longest is 1.2e7 us (12 s, NeuSight); a larger value is a unit slip (ns or ps read as us) or a
#: sentinel, never a latency to learn from.
MAX_LATENCY_US: float = 1e9

#: Columns pipeweave computes (features, predictions): an input column of that name is ignored for
#: featurization (kept in the output as given).
DERIVED_COLUMNS: tuple[str, ...] = (
    "t_env_us",
    "t_env_warm_us",
    "t_lower_us",
    "t_roofline_us",
    "t_tilesight_us",
    "latency_us_pred",
    "tile_origin",
)

_KV_DTYPES = ("bfloat16", "float16", "fp8")
_DTYPE_SUGGEST = {
    "bf16": "bfloat16",
    "fp16": "float16",
    "half": "float16",
    "fp32": "float32",
    "float": "float32",
    "float8": "fp8",
    "e4m3": "fp8",
    "fp8_e4m3": "fp8",
    "float8_e4m3fn": "fp8",
    "fp8_blockwise": "fp8_block",
    "torch.bfloat16": "bfloat16",
    "torch.float16": "float16",
}
_DIST_RE = re.compile(r"^(balanced|uniform|random|power_law(_\d+(\.\d*)?)?)$")


def suggest_dtype(value: str, valid: tuple[str, ...] | list[str]) -> str:
    """' (did you mean 'bfloat16'?)' for a near miss of a canonical dtype name, else ''."""
    v = str(value).strip().lower()
    guess = _DTYPE_SUGGEST.get(v)
    if guess is None or guess not in valid:
        close = difflib.get_close_matches(v, list(valid), n=1, cutoff=0.6)
        guess = close[0] if close else None
    return f" (did you mean {guess!r}?)" if guess else ""


def _uniq(s: pd.Series) -> tuple[np.ndarray, list[object]]:
    try:
        codes, uniques = pd.factorize(s, use_na_sentinel=False)
    except TypeError:  # a list / array / dict cell (a Python caller's): group by value text, keep the objects
        keys = pd.Series([_cell_key(v) for v in s], index=s.index, dtype=object)
        codes, _ = pd.factorize(keys, use_na_sentinel=False)
        first = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=np.int64)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        return codes, [s.iloc[int(i)] for i in first]
    return codes, list(uniques)


def _cell_key(value: object) -> object:
    """``value`` itself when it can be hashed, else a hashable stand-in (its type and repr)."""
    try:
        hash(value)
    except TypeError:
        return ("\0unhashable", type(value).__name__, repr(value))
    return value


#: cell types that hold several values (a launch cell holds one number or name), as messages name them
_CONTAINER_NAMES: dict[type, str] = {
    list: "a list",
    tuple: "a tuple",
    set: "a set",
    frozenset: "a set",
    dict: "a dict",
    np.ndarray: "an array",
    pd.Series: "a Series",
    pd.DataFrame: "a DataFrame",
}
_CONTAINER_TYPES = tuple(_CONTAINER_NAMES)


def _container_name(value: object) -> str:
    """'a list', 'an array', ... for a container cell (its type's name otherwise)."""
    return next((n for t, n in _CONTAINER_NAMES.items() if isinstance(value, t)), f"a {type(value).__name__}")


def _container_cells(df: pd.DataFrame) -> dict[object, np.ndarray]:
    """Per column, the cells that hold a container (a list, tuple, array, dict, set) instead of one value: only a
    Python caller's frame can hold them. One C-level type scan per object column; a Python pass only where it
    finds mixed types."""
    out: dict[object, np.ndarray] = {}
    for col in df.columns:
        s = df[col]
        if s.dtype != object or not pd.api.types.infer_dtype(s, skipna=True).startswith("mixed"):
            continue
        mask = np.fromiter(
            (isinstance(v, _CONTAINER_TYPES) or _cell_key(v) is not v for v in s),
            dtype=bool,
            count=len(s),
        )
        if mask.any():
            out[col] = mask
    return out


def _blank(s: pd.Series) -> np.ndarray:
    """Missing cells: NaN/None, or text that is empty/whitespace (pandas 3 keeps NaN through astype(str))."""
    if pd.api.types.is_numeric_dtype(s.dtype):
        return s.isna().to_numpy()
    codes, uniques = _uniq(s)
    return np.array([is_missing(u) for u in uniques], dtype=bool)[codes] if len(codes) else np.zeros(0, bool)


def _text(s: pd.Series) -> np.ndarray:
    """Cells as stripped text ('' for missing), an object array."""
    return _text_padded(s)[0]


def _text_padded(s: pd.Series) -> tuple[np.ndarray, bool]:
    """(:func:`_text` of ``s``, whether some text cell had surrounding spaces), from one factorization."""
    codes, uniques = _uniq(s)
    names = np.array(
        ["" if is_missing(u) else (_num(u) if isinstance(u, float) else str(u)).strip() for u in uniques], dtype=object
    )
    padded = any(isinstance(u, str) and u != n for u, n in zip(uniques, names) if n)
    return (names[codes] if len(codes) else np.array([], dtype=object)), padded


def _shown_at(raw: pd.Series, i: int) -> str:
    """Cell ``i`` as the user wrote it, for messages."""
    u = raw.iloc[i]
    v = "" if is_missing(u) else (_num(u) if isinstance(u, float) else str(u)).strip()
    return v if len(v) <= 40 else v[:37] + "..."


def _column_hint(col: str, columns: Iterable[object]) -> str:
    """``'; the file has 'X': rename it to 'col''`` for a column the table spells another way (case, dashes,
    ``kv`` for ``key_value``, a near miss), else ``''``."""

    def norm(s: str) -> str:
        return s.strip().lower().replace("-", "_").replace("key_value", "kv")

    names = {norm(str(c)): str(c) for c in columns}
    key = (
        norm(col) if norm(col) in names else next(iter(difflib.get_close_matches(norm(col), list(names), 1, 0.8)), None)
    )
    return "" if key is None else f"; the table has {shown(names[key])}: rename it to {col!r}"


def _per_row(mask: np.ndarray, fmt: Callable[[int], str]) -> np.ndarray:
    """Object array with ``fmt(i)`` at the rows of ``mask`` (messages built only where needed)."""
    out = np.full(len(mask), "", dtype=object)
    for i in np.flatnonzero(mask):
        out[i] = fmt(int(i))
    return out


def fill_launch_defaults(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with :data:`LAUNCH_DEFAULTS` filled into absent or blank cells of each family's rows, and dtype
    spellings (``bf16``, ``half``, ``torch.float32``: :data:`pipeweave.vocab.DTYPE_ALIASES`) made canonical
    (a new frame; ``df`` itself when nothing changes)."""
    df = _canonical_dtypes(df)
    if "family" not in df.columns:
        return df
    fam, padded = _text_padded(df["family"])
    if padded:  # "gemm " is gemm (the model looks families up by exact name); blank cells stay as they were
        df = df.assign(family=np.where(fam == "", df["family"].to_numpy(dtype=object), fam))
    out = df
    # an absent or blank dtype: the family's default (default_dtype), as the CLI's --dtype
    blank_dt = _blank(df["dtype"]) if "dtype" in df.columns else np.ones(len(df), dtype=bool)
    if blank_dt.any():
        out = df.copy()
        names = pd.unique(fam)  # one lookup per family present, not per row
        fill = pd.Series(
            np.array([default_dtype(f) for f in names], dtype=object)[pd.Index(names).get_indexer(fam)],
            index=df.index,
            dtype=object,
        )
        out["dtype"] = fill if "dtype" not in df.columns else df["dtype"].astype(object).where(~blank_dt, fill)
    for name, defaults in LAUNCH_DEFAULTS.items():
        m = fam == name
        if not m.any():
            continue
        for col, value in defaults.items():
            if col not in out.columns:
                out = out.copy() if out is df else out
                out[col] = (
                    pd.Series([value if x else None for x in m], index=out.index, dtype=object)
                    if isinstance(value, str)
                    else np.where(m, float(value), np.nan)
                )
                continue
            fill = m & _blank(out[col])
            if fill.any():
                out = out.copy() if out is df else out
                if isinstance(value, str) or not pd.api.types.is_numeric_dtype(out[col].dtype):
                    out[col] = out[col].astype(object)  # a text column (pandas 3 str) refuses numbers
                out.loc[fill, col] = value
    return out


def _canonical_dtypes(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the aliases in its ``dtype`` / ``kv_cache_dtype`` cells replaced by canonical names."""
    from ..vocab import canonical_dtype

    out = df
    for col in ("dtype", "kv_cache_dtype"):
        if col not in df.columns or pd.api.types.is_numeric_dtype(df[col].dtype):
            continue
        codes, uniques = _uniq(df[col])
        canon = np.empty(len(uniques), dtype=object)  # filled one by one: a list cell stays one element
        for i, u in enumerate(uniques):
            canon[i] = canonical_dtype(u)
        if any(isinstance(u, str) and c != u for u, c in zip(uniques, canon)):
            out = out.copy() if out is df else out
            out[col] = pd.Series(canon[codes], index=df.index, dtype=object)
    return out


def _rule_divides(a: str, b: str) -> Callable[[dict[str, np.ndarray]], tuple[np.ndarray, str]]:
    def rule(v: dict[str, np.ndarray]) -> tuple[np.ndarray, str]:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.mod(v[b], v[a]) != 0, f"{a} must divide {b}"

    return rule


def _rule_le(a: str, b: str) -> Callable[[dict[str, np.ndarray]], tuple[np.ndarray, str]]:
    def rule(v: dict[str, np.ndarray]) -> tuple[np.ndarray, str]:
        return v[a] > v[b], f"{a} must be <= {b}"

    return rule


#: Cross-column rules per family: (columns it reads, rule -> (bad mask, text)).
FAMILY_RULES: dict[str, list[tuple[tuple[str, ...], Callable]]] = {
    "moe_w13": [
        (("topk", "num_experts"), _rule_le("topk", "num_experts")),
        (("moe_ep_size", "num_experts"), _rule_divides("moe_ep_size", "num_experts")),
        (("moe_tp_size", "inter_size"), _rule_divides("moe_tp_size", "inter_size")),
    ],
    "fused_moe": [
        (("topk", "num_experts"), _rule_le("topk", "num_experts")),
        (("moe_ep_size", "num_experts"), _rule_divides("moe_ep_size", "num_experts")),
        (("moe_tp_size", "inter_size"), _rule_divides("moe_tp_size", "inter_size")),
    ],
    "attention_context": [(("num_key_value_heads", "num_heads"), _rule_divides("num_key_value_heads", "num_heads"))],
    "attention_generation": [(("num_key_value_heads", "num_heads"), _rule_divides("num_key_value_heads", "num_heads"))],
    # a split's CTAs each reduce a slice of k: more slices than k leaves CTAs with nothing to reduce (checked where
    # split_k is given)
    "gemm_fp32": [(("split_k", "k"), _rule_le("split_k", "k"))],
}

#: Optional numeric columns per family (those of OPTIONAL_LAUNCH_COLUMNS with a domain), checked where given
#: (blank = the default).
_OPTIONAL_NUMERIC: dict[str, tuple[str, ...]] = {
    f: tuple(c for c in cols if c in COLUMN_DOMAINS) for f, cols in OPTIONAL_LAUNCH_COLUMNS.items()
}

_GENERATION_STEP = Domain(1, 2**21, meaning="KV-cache length (>= 1 for a decode step)")


def domain_table() -> pd.DataFrame:
    """The column domains as a table (column, valid values, meaning), e.g. for the docs."""
    rows = [{"column": c, "valid": d.describe(), "meaning": d.meaning} for c, d in COLUMN_DOMAINS.items()]
    return pd.DataFrame(rows)


class _Reasons:
    """First reason per row wins; later checks skip rows that already have one."""

    def __init__(self, index: pd.Index) -> None:
        self.text = np.full(len(index), "", dtype=object)
        self.ok = np.ones(len(index), dtype=bool)

    def add(self, mask: np.ndarray, text: str | np.ndarray | pd.Series) -> None:
        m = np.asarray(mask, dtype=bool) & self.ok
        if not m.any():
            return
        self.ok &= ~m
        if isinstance(text, str):
            self.text[m] = text
        else:
            self.text[m] = np.asarray(text, dtype=object)[m]


def _check_numeric(r: _Reasons, raw: pd.Series, rows: np.ndarray, col: str, dom: Domain, fam: str) -> np.ndarray:
    """Apply ``dom`` to ``raw`` on ``rows``; returns the values (NaN where bad or outside ``rows``)."""
    if pd.api.types.is_bool_dtype(raw.dtype):  # a true/false column: pandas would read True as 1
        v = np.full(len(raw), np.nan)
    else:
        v = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if raw.dtype == object:  # a True / False cell among numbers (one check per distinct value)
            codes, uniques = _uniq(raw)
            is_bool = np.array([isinstance(u, (bool, np.bool_)) for u in uniques], dtype=bool)
            if is_bool.any():
                v = np.where(is_bool[codes], np.nan, v)
    blank = _blank(raw)

    def msg(mask: np.ndarray, problem: str) -> np.ndarray:
        return _per_row(mask & r.ok, lambda i: f"{col}={_shown_at(raw, i)} {problem}")

    r.add(rows & blank, f"{col} is blank; family {fam!r} needs it ({dom.describe()})")
    notnum = rows & ~blank & ~np.isfinite(v)
    if notnum.any():
        r.add(notnum, msg(notnum, f"is not a finite number; {col} must be {dom.describe()}"))
    with np.errstate(invalid="ignore", over="ignore"):  # exp2 of a huge value is inf: != v, flagged
        bad = rows & np.isfinite(v) & ((v < dom.low) | (v > dom.high))
        if dom.integer:
            bad |= rows & np.isfinite(v) & (v != np.round(v))
        if dom.power_of_two:
            bad |= rows & np.isfinite(v) & (v > 0) & (np.exp2(np.round(np.log2(np.where(v > 0, v, 1.0)))) != v)
        if dom.multiple_of:
            bad |= rows & np.isfinite(v) & (np.mod(v, dom.multiple_of) != 0)
    if bad.any():
        r.add(bad, msg(bad, f"is outside its domain: {col} must be {dom.describe()}"))
    return np.where(rows & ~blank & np.isfinite(v), v, np.nan)


def row_problems(df: pd.DataFrame, spec_lookup: Mapping[str, GPUSpec] | None = None) -> pd.Series:
    """One reason string per row (``''`` when the row is inside the valid domain and can be predicted).

    ``spec_lookup`` maps GPU names to GPUSpec (rows whose gpu is not in it are resolved through the
    catalog; unknown names get a reason). Absent optional columns are read with
    :data:`LAUNCH_DEFAULTS`. Vectorized: a handful of numpy passes per family present.
    """
    from .._errors import PipeweaveError
    from ..hardware import get_gpu

    r = _Reasons(df.index)
    n = len(df)
    if df.columns.has_duplicates:
        dup = sorted(set(map(str, df.columns[df.columns.duplicated()])))
        r.add(np.ones(n, dtype=bool), f"duplicate column(s) {dup}: each column may appear once")
        return pd.Series(r.text, index=df.index, dtype=object)
    for col in ("family", "gpu"):
        if col not in df.columns:
            r.add(np.ones(n, dtype=bool), f"missing column {col!r} (every row needs family and gpu)")
            return pd.Series(r.text, index=df.index, dtype=object)
    nested = _container_cells(df)
    if nested:  # named first; the cells are then blanked so no later check trips on them
        df = df.copy()
        for name, mask in nested.items():

            def nested_msg(i: int, c: object = name, raw: pd.Series = df[name]) -> str:
                v = raw.iloc[i]
                return (
                    f"{c} holds {_container_name(v)} ({shown(v)}), not one value: give one number or name per cell "
                    "(one row per launch)"
                )

            r.add(mask, _per_row(mask & r.ok, nested_msg))
            df[name] = df[name].where(~mask, np.nan)
    df = fill_launch_defaults(df)
    famv = _text(df["family"])
    r.add(famv == "", f"family is blank; valid families: {sorted(FAMILIES)}")
    unknown = ~np.isin(famv, list(FAMILIES))
    for f in pd.unique(famv[unknown & r.ok]):
        close = closest_family(f)
        r.add(
            famv == f,
            f"unknown family {shown(f)}; valid families: {sorted(FAMILIES)}"
            + (f" (did you mean {close!r}?)" if close else ""),
        )
    dtv = _text(df["dtype"])
    r.add(dtv == "", f"dtype is blank; valid dtypes: {sorted(DTYPE_TENSOR_KEY)}")
    bad_dt = ~np.isin(dtv, list(DTYPE_TENSOR_KEY)) & r.ok
    for d in pd.unique(dtv[bad_dt]):
        r.add(
            dtv == d,
            f"unknown dtype {shown(d)}; valid dtypes: {sorted(DTYPE_TENSOR_KEY)}"
            + suggest_dtype(d, tuple(DTYPE_TENSOR_KEY)),
        )
    gpuv = _text(df["gpu"])
    r.add(gpuv == "", "gpu is blank; give a catalog name or a spec .toml path, or one GPU for all rows (gpu=)")
    if "source" in df.columns:
        from ..vocab import SOURCES, USER_SOURCE

        valid = [*SOURCES, USER_SOURCE]
        src = _text(df["source"])
        bad = (src != "") & ~np.isin(src, valid)
        for s in pd.unique(src[bad & r.ok]):
            r.add(src == s, f"unknown source {shown(s)}; valid sources: {valid} (blank = the family's default)")
    if "kv_cache_dtype" in df.columns:
        kv = _text(df["kv_cache_dtype"])
        att = np.isin(famv, _ATTENTION_FAMILIES)
        bad = att & (kv != "") & ~np.isin(kv, _KV_DTYPES)
        for s in pd.unique(kv[bad & r.ok]):
            r.add(
                att & (kv == s),
                f"unknown kv_cache_dtype {shown(s)}; valid: {list(_KV_DTYPES)} (blank = dtype)"
                + suggest_dtype(s, _KV_DTYPES),
            )
    if "backend" in df.columns:
        from ..vocab import ATTENTION_BACKENDS

        bk = _text(df["backend"])
        att = np.isin(famv, _ATTENTION_FAMILIES)
        bad = att & (bk != "") & ~np.isin(bk, list(ATTENTION_BACKENDS))
        for s in pd.unique(bk[bad & r.ok]):
            r.add(
                att & (bk == s),
                f"unknown attention backend {shown(s)}; valid: {list(ATTENTION_BACKENDS)} (blank = flash_attention)",
            )
        # a backend names an attention kernel: on another family's row it is a shifted cell or a wrong family
        other = ~att & (famv != "attention_flashinfer") & (bk != "") & r.ok
        for f_, s in {(str(a), str(b)) for a, b in zip(famv[other], bk[other])}:
            r.add(
                other & (famv == f_) & (bk == s),
                f"backend={shown(s)} is an attention kernel; family {f_!r} has no backend (leave the cell blank)",
            )

    # GPU specs (resolved once per distinct name)
    specs: dict[str, GPUSpec] = {}
    for g in pd.unique(gpuv[r.ok]):
        try:
            specs[g] = (spec_lookup or {}).get(g) or get_gpu(g)
        except PipeweaveError as exc:
            r.add(gpuv == g, str(exc).splitlines()[0])

    for name, family in FAMILIES.items():
        m = (famv == name) & r.ok
        if not m.any():
            continue
        bad_dt = m & ~np.isin(dtv, list(family.dtypes))
        for d in pd.unique(dtv[bad_dt]):
            r.add(bad_dt & (dtv == d), f"family {name!r} supports dtypes {list(family.dtypes)}, not {shown(d)}")
        vals: dict[str, np.ndarray] = {}
        # a routing distribution is checked wherever the family reads one (moe_w13 has it as an option)
        optional = [c for c in LAUNCH_DEFAULTS.get(name, {}) if c == "distribution" and c not in family.shape_columns]
        for col in (*family.shape_columns, *optional):
            if col == "distribution":
                if col not in df.columns:
                    continue
                dist = _text(df[col])
                bad = m & ~np.isin(dist, [u for u in pd.unique(dist[m]) if u == "" or _DIST_RE.match(u.lower())])

                def dist_msg(i: int, raw: pd.Series = df[col]) -> str:
                    return (
                        f"distribution={_shown_at(raw, i)} is not a routing distribution; use 'balanced' or "
                        "'power_law_<alpha>' with alpha >= 0 (e.g. power_law_1.2)"
                    )

                r.add(bad, _per_row(bad & r.ok, dist_msg))
                continue
            if col not in df.columns:
                r.add(
                    m,
                    f"missing column {col!r} for family {name!r} (it needs {list(family.shape_columns)})"
                    + _column_hint(col, df.columns),
                )
                continue
            if col in family.text_columns:  # e.g. ';'-joined request lengths, parsed by the family
                continue
            dom = COLUMN_DOMAINS.get(col, Domain(0, math.inf, integer=False))
            if name == "attention_generation" and col == "step":
                dom = _GENERATION_STEP
            if col not in COLUMN_DOMAINS:  # families without a declared domain: a positive number
                v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                bad = m & ~(np.isfinite(v) & (v > 0))

                def pos_msg(i: int, c: str = col, raw: pd.Series = df[col], f: str = name) -> str:
                    return f"{c}={_shown_at(raw, i)} must be a positive number for family {f!r}"

                r.add(bad, _per_row(bad & r.ok, pos_msg))
                vals[col] = v
                continue
            vals[col] = _check_numeric(r, df[col], m, col, dom, name)
        for col in _OPTIONAL_NUMERIC.get(name, ()):
            if col in df.columns:
                vals[col] = _check_numeric(r, df[col], m & ~_blank(df[col]), col, COLUMN_DOMAINS[col], name)
        if name == "attention_generation" and "isl" in df.columns:
            # a decode step adds one token per request: an isl other than 1 is a context length put in the
            # wrong column (the KV-cache length is `step`), which the front-end would silently ignore
            isl = pd.to_numeric(df["isl"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            bad = m & ~_blank(df["isl"]) & np.isfinite(isl) & (isl != 1)

            def isl_msg(i: int, raw: pd.Series = df["isl"]) -> str:
                return (
                    f"isl={_shown_at(raw, i)} for attention_generation: a decode step adds 1 token per request "
                    f"(isl 1 or blank); the KV-cache length is step (e.g. step={_shown_at(raw, i)}, isl=1)"
                )

            r.add(bad, _per_row(bad & r.ok, isl_msg))
        for needs, rule in FAMILY_RULES.get(name, []):
            if all(c in vals for c in needs):
                bad, text = rule(vals)
                mm = m & bad & np.all([np.isfinite(vals[c]) for c in needs], axis=0)
                if mm.any():
                    pairs = np.array(
                        [", ".join(f"{c}={_num(vals[c][i])}" for c in needs) for i in np.flatnonzero(mm)], dtype=object
                    )
                    txt = np.full(n, "", dtype=object)
                    txt[mm] = [f"{s}: {text}" for s in pairs]
                    r.add(mm, txt)
        _check_tiles(r, df, m & r.ok, name, dtv, gpuv, specs)
        _check_memory(r, df, m & r.ok, name, vals, dtv, gpuv, specs)
    _check_ops(r, df, famv)
    _check_flashinfer(r, df, famv, gpuv, specs)

    # tensor path of the GPU for the dtype
    tensor_fams = np.isin(
        str_fam := df["family"].astype(str).to_numpy(), [f for f, fam_ in FAMILIES.items() if fam_.uses_tensor_cores]
    )
    del str_fam
    for g, spec in specs.items():
        mg = (gpuv == g) & r.ok & tensor_fams
        for fname in pd.unique(famv[mg]):
            mf = mg & (famv == fname)
            for dt in pd.unique(dtv[mf]):
                key = DTYPE_TENSOR_KEY.get(dt)
                if key and key not in spec.tensor_flop_per_clk_per_sm:
                    r.add(mf & (dtv == dt), _no_tensor_path(g, spec, str(fname), str(dt)))
    return pd.Series(r.text, index=df.index, dtype=object)


#: the CUDA-core family that runs a launch of a tensor-core family on a GPU without its tensor-core path
_CUDA_CORE_FAMILY: dict[str, tuple[str, str]] = {"gemm": ("gemm_fp32", "the CUDA-core FP32 GEMM")}


def _no_tensor_path(g: str, spec: GPUSpec, family: str, dtype: str) -> str:
    """Why a ``family`` launch in ``dtype`` cannot run on GPU ``g``: the dtypes of the family it does run on tensor
    cores (only those the family accepts), or, when there is none, the CUDA-core family to use instead."""
    accepted = FAMILIES[family].dtypes
    has = [d for d in accepted if DTYPE_TENSOR_KEY.get(d) in spec.tensor_flop_per_clk_per_sm]
    if has:
        return f"GPU {g!r} has no {dtype} tensor-core path; {family} dtypes it runs on tensor cores: {has}"
    text = f"GPU {g!r} has no {dtype} tensor-core path, nor one for any other {family} dtype {list(accepted)}"
    alt = _CUDA_CORE_FAMILY.get(family)
    if alt is not None:
        return text + f"; use family {alt[0]!r} ({alt[1]}, dtype {default_dtype(alt[0])})"
    return text + f": {family} cannot run on {g}"


#: the operators of the families whose ``op`` column picks the kernel (other values have no model)
FAMILY_OPS: dict[str, tuple[str, ...]] = {"gemm_fp32": ("bmm", "linear")}


def _check_ops(r: _Reasons, df: pd.DataFrame, famv: np.ndarray) -> None:
    """``op`` of elementwise_fp32 / gemm_fp32 rows: one the family models (blank: the family's default)."""
    from ._norm import ELEMENTWISE_OPS

    opv = _text(df["op"]) if "op" in df.columns else np.full(len(df), "", dtype=object)
    for fam, ops in (("elementwise_fp32", tuple(sorted(ELEMENTWISE_OPS))), *FAMILY_OPS.items()):
        m = (famv == fam) & r.ok
        blank_ok = fam != "elementwise_fp32"  # gemm_fp32 defaults to bmm; an element-wise op must be named
        r.add(m & (opv == "") & (not blank_ok), f"op is blank: {fam} needs the operator, one of {list(ops)}")
        bad = m & (opv != "") & ~np.isin(opv, list(ops))
        for o in pd.unique(opv[bad]):
            r.add(bad & (opv == o), f"op={shown(o)} is not an operator of {fam}; valid: {list(ops)}")


def _check_flashinfer(
    r: _Reasons, df: pd.DataFrame, famv: np.ndarray, gpuv: np.ndarray, specs: dict[str, GPUSpec]
) -> None:
    """attention_flashinfer rows: a known backend (fa3 on Hopper only), per-request lengths that parse, one KV
    length per query length, a KV length >= its query length (the cache holds the new tokens), batch_size =
    the number of requests."""
    from ..vocab import FLASHINFER_BACKENDS

    m = (famv == "attention_flashinfer") & r.ok
    if not m.any():
        return
    if "backend" in df.columns:
        bk = _text(df["backend"])
        bad = m & (bk != "") & ~np.isin(bk, list(FLASHINFER_BACKENDS))
        for b in pd.unique(bk[bad]):
            r.add(
                bad & (bk == b), f"backend={shown(b)} is not a FlashInfer code path; valid: {list(FLASHINFER_BACKENDS)}"
            )
        for g in pd.unique(gpuv[m & r.ok]):
            spec = specs.get(g)
            if spec is not None and spec.sm_arch // 10 != 9:  # FlashInfer's FA3 kernels are sm_90 (Hopper) only
                fa3 = m & r.ok & (gpuv == g) & np.char.startswith(bk.astype(str), "fa3")
                r.add(
                    fa3, f"FlashInfer's fa3 backends run on Hopper (sm_90) only, not on {g}; use fa2_paged/fa2_ragged"
                )
    if not {"q_lengths", "kv_lengths"} <= set(df.columns):
        return

    def parse(col: str) -> list[list[float] | None]:
        out: list[list[float] | None] = []
        for t in _text(df[col]):
            parts = [p.strip() for p in str(t).strip("[] ").replace(",", ";").split(";")]
            try:
                v = [float(p) for p in parts]
            except ValueError:
                v = []
            out.append(v if v and all(np.isfinite(x) and x >= 1 and x == int(x) for x in v) else None)
        return out

    rows = np.flatnonzero(m & r.ok)
    q_all, kv_all = parse("q_lengths"), parse("kv_lengths")
    batch = pd.to_numeric(df["batch_size"], errors="coerce").to_numpy(dtype=float) if "batch_size" in df else None
    text = np.full(len(df), "", dtype=object)
    for i in rows:
        q, kv = q_all[i], kv_all[i]
        if q is None or kv is None:
            col = "q_lengths" if q is None else "kv_lengths"
            text[i] = f"{col}={_shown_at(df[col], int(i))} is not a list of positive integers (e.g. 128;512)"
        elif len(q) != len(kv):
            text[i] = f"q_lengths lists {len(q)} requests but kv_lengths {len(kv)}: give one KV length per query length"
        elif any(a > b for a, b in zip(q, kv)):
            text[i] = "a request's query length exceeds its KV length (kv_lengths include the query's own tokens)"
        elif batch is not None and np.isfinite(batch[i]) and batch[i] != len(q):
            text[i] = f"batch_size={_num(batch[i])} but q_lengths lists {len(q)} requests"
    r.add(text != "", text)


def _spec_col(gpuv: np.ndarray, specs: dict[str, GPUSpec], attr: str, default: float) -> np.ndarray:
    """Per-row spec field (looked up once per distinct GPU name)."""
    codes, uniques = pd.factorize(gpuv)
    vals = np.array([float(getattr(specs.get(g), attr, default)) for g in uniques], dtype=float)
    return vals[codes] if len(codes) else np.zeros(0)


def _check_tiles(
    r: _Reasons,
    df: pd.DataFrame,
    m: np.ndarray,
    name: str,
    dtv: np.ndarray,
    gpuv: np.ndarray,
    specs: dict[str, GPUSpec],
) -> None:
    present = [c for c in _TILES if c in df.columns]
    if not present or not m.any():
        return
    given = {c: m & ~_blank(df[c]) for c in present}
    any_given = np.any([given[c] for c in present], axis=0)
    if name in _RECORDED_TILE_FAMILIES:
        return
    if name not in TILED_FAMILIES:
        # a tile plan the family never reads would change nothing: refused, not silently ignored
        own = (
            "its tiles follow the attention kernel's own heuristic"
            if name in _ATTENTION_FAMILIES or name == "attention_flashinfer"
            else "it chooses its own launch configuration"
        )

        def unused(i: int) -> str:
            cols = [c for c in present if given[c][i]]
            return f"tile columns {cols} are not used by {name} ({own}); leave them blank"

        r.add(any_given, _per_row(any_given & r.ok, unused))
        return
    core = ("block_m", "block_n", "block_k")
    all_core = np.all([given.get(c, np.zeros(len(m), dtype=bool)) for c in core], axis=0)
    partial = any_given & ~all_core
    if partial.any():

        def why(i: int) -> str:
            got = [f"{c}={_shown_at(df[c], i)}" for c in present if given[c][i]]
            lack = [c for c in core if not (c in given and given[c][i])]
            return (
                f"tile plan incomplete: {', '.join(got)} given but {', '.join(lack)} blank or absent; give "
                f"block_m, block_n and block_k together, or leave every tile column blank for the kernel's own choice"
            )

        r.add(partial, _per_row(partial & r.ok, why))
    rows = m & all_core & r.ok
    if not rows.any():
        return
    v = {}
    for c in _TILES:
        if c in df.columns:
            v[c] = _check_numeric(r, df[c], rows & given[c], c, COLUMN_DOMAINS[c], name)
    rows &= r.ok
    if not rows.any():
        return
    defaults = {"group_m": 1.0, "num_warps": 4.0, "num_stages": 3.0}
    t = {
        c: np.where(np.isfinite(v[c]), v[c], defaults.get(c, np.nan)) if c in v else np.full(len(m), defaults[c])
        for c in _TILES
    }
    # the one feasibility rule (shared memory, registers, tensor memory) lives with the config space
    from ..diagnose import config_fits, smem_bytes

    cfg = pd.DataFrame(t)
    fits = np.ones(len(m), dtype=bool)
    smem = np.zeros(len(m))
    idx = np.flatnonzero(rows)
    gc, gu = pd.factorize(gpuv[idx])
    dc, du = pd.factorize(dtv[idx])
    pair = gc * len(du) + dc
    for j in np.unique(pair):
        sel = idx[pair == j]
        spec, dt = specs[gu[j // len(du)]], du[j % len(du)]
        fits[sel] = config_fits(cfg.iloc[sel], spec, dt)
        smem[sel] = smem_bytes(cfg.iloc[sel], dt, spec)
    bad = rows & ~fits
    if not bad.any():
        return
    smem_cap = _spec_col(gpuv, specs, "smem_per_cta_kib", np.inf) * 1024.0

    def why_fit(i: int) -> str:
        plan = ",".join(_num(t[c][i]) for c in _TILES)
        if smem[i] > smem_cap[i]:
            what = f"needs {smem[i] / 1024:.0f} KiB of shared memory per CTA but {gpuv[i]} allows {smem_cap[i] / 1024:.0f} KiB"
            fix = "use smaller blocks or fewer stages (more warps do not reduce shared memory)"
            launch = "Triton would refuse to launch it"
        else:
            what = (
                f"keeps a {_num(t['block_m'][i])}x{_num(t['block_n'][i])} fp32 accumulator that does not fit "
                f"{gpuv[i]}'s registers (255 per thread) with {_num(t['num_warps'][i])} warps"
            )
            fix = "use smaller blocks or more warps (they share the accumulator)"
            # Triton compiles it with register spills and launches it: several times slower than the best
            # config in the H200 sweeps of experiments/device_h200; the model does not predict spilling kernels
            launch = "Triton launches it with register spills (several times slower), which the model does not predict"
        return (
            f"tile plan {plan} (BM,BN,BK,GM,WARPS,STAGES) {what}; {launch} "
            f"({fix}; `pipeweave diagnose` without a config ranks the feasible ones)"
        )

    r.add(bad, _per_row(bad & r.ok, why_fit))


def _check_memory(
    r: _Reasons,
    df: pd.DataFrame,
    m: np.ndarray,
    name: str,
    vals: dict[str, np.ndarray],
    dtv: np.ndarray,
    gpuv: np.ndarray,
    specs: dict[str, GPUSpec],
) -> None:
    """Operands + outputs (+ KV cache) of one launch must fit the GPU's memory."""
    if not m.any():
        return
    ab = pd.Series(dtv).map(DTYPE_BYTES).to_numpy(dtype=float, na_value=2.0)
    g = cast(Callable[..., np.ndarray], vals.get)  # the family's columns are all in vals here
    one = np.ones(len(m))
    with np.errstate(all="ignore"):
        if name == "gemm":
            need = (g("m") * g("k") + g("k") * g("n")) * ab + g("m") * g("n") * 2.0
        elif name in ("moe_w13", "fused_moe"):
            tp = np.nan_to_num(g("moe_tp_size", one), nan=1.0)
            ep = np.nan_to_num(g("moe_ep_size", one), nan=1.0)
            per_expert = g("hidden_size") * g("inter_size") / tp * (3.0 if name == "fused_moe" else 2.0)
            need = (
                g("num_experts") / ep * per_expert * ab
                + g("num_tokens") * g("hidden_size") * (ab + 2.0)
                + g("num_tokens") * g("topk") * 2.0 * g("inter_size") / tp * 2.0
            )
        elif name in _ATTENTION_FAMILIES:
            kvb = ab
            if "kv_cache_dtype" in df.columns:
                kvb = np.where(
                    _blank(df["kv_cache_dtype"]),
                    ab,
                    pd.Series(_text(df["kv_cache_dtype"])).map(DTYPE_BYTES).to_numpy(dtype=float, na_value=2.0),
                )
            q = g("isl") if name == "attention_context" else one
            step = np.nan_to_num(g("step", np.zeros(len(m))), nan=0.0)
            need = g("batch_size") * (
                (q + step) * 2.0 * g("num_key_value_heads") * g("head_dim") * kvb
                + q * g("num_heads") * g("head_dim") * ab * 2.0
            )
        elif name == "gemm_fp32":  # batch x (A + B + C)
            b = np.nan_to_num(g("batch_size", one), nan=1.0)
            need = b * (g("m") * g("k") + g("k") * g("n") + g("m") * g("n")) * ab
        elif name == "silu_mul":  # reads 2 x inter_size per token, writes inter_size
            need = g("num_tokens") * g("inter_size") * 3.0 * ab
        elif name in _ROW_FAMILIES:  # one num_tokens x hidden_size input and one output (a lower bound)
            need = g("num_tokens") * g("hidden_size") * 2.0 * ab
        else:  # attention_flashinfer: ragged ';'-joined lengths, bounded by their own checks
            return
    cap = _spec_col(gpuv, specs, "dram_gib", np.inf) * 2**30
    bad = m & np.isfinite(need) & (need > cap)
    if bad.any():
        txt = np.full(len(m), "", dtype=object)
        for i in np.flatnonzero(bad):
            txt[i] = (
                f"{name} launch needs {need[i] / 2**30:,.1f} GiB of operands/outputs but {gpuv[i]} has "
                f"{cap[i] / 2**30:,.0f} GiB; check the shape's units and magnitude"
            )
        r.add(bad, txt)
