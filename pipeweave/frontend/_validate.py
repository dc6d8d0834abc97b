"""Per-row validation of launch rows before featurization (vectorized).

Returns a reason per row (empty string = fine) so callers such as ``pipeweave predict`` can
report bad rows by number and still predict the others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._constants import DTYPE_TENSOR_KEY
from ._families import FAMILIES

__all__ = ["row_problems"]


def row_problems(df: pd.DataFrame, spec_lookup: dict[str, object] | None = None) -> pd.Series:
    """One reason string per row ('' when the row can be featurized).

    ``spec_lookup`` maps gpu names to GPUSpec (rows whose gpu is not in it are resolved through the
    catalog; unknown names get a reason).
    """
    from .._errors import PipeweaveError
    from ..hardware import get_gpu

    reasons = pd.Series("", index=df.index, dtype=object)

    def add(mask: np.ndarray, text: str | pd.Series) -> None:
        m = mask & (reasons == "").to_numpy()
        if m.any():
            reasons[m] = text if isinstance(text, str) else text[m]

    for col in ("family", "gpu", "dtype"):
        if col not in df.columns:
            reasons[:] = f"missing column {col!r}"
            return reasons
    fam = df["family"].astype(str)
    add(~fam.isin(list(FAMILIES)).to_numpy(), "unknown family " + fam.map(repr) + f"; valid: {sorted(FAMILIES)}")
    dtype = df["dtype"].astype(str)
    add(~dtype.isin(list(DTYPE_TENSOR_KEY)).to_numpy(), "unknown dtype " + dtype.map(repr))
    for name, family in FAMILIES.items():
        m = (fam == name).to_numpy()
        if not m.any():
            continue
        add(m & ~dtype.isin(family.dtypes).to_numpy(), f"family {name!r} supports dtypes {list(family.dtypes)}")
        for col in family.shape_columns:
            if col == "distribution":
                continue
            if col not in df.columns:
                add(m, f"missing column {col!r} for family {name!r}")
                continue
            v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
            add(m & ~(np.isfinite(v) & (v > 0)), f"{col} must be a positive number for family {name!r}")
    specs = {}
    for g in pd.unique(df["gpu"].astype(str)):
        try:
            specs[g] = (spec_lookup or {}).get(g) or get_gpu(g)
        except PipeweaveError as exc:
            add((df["gpu"].astype(str) == g).to_numpy(), str(exc).splitlines()[0])
    for g, spec in specs.items():
        m = (df["gpu"].astype(str) == g).to_numpy()
        for dt in pd.unique(dtype[m]):
            key = DTYPE_TENSOR_KEY.get(dt)
            if key and key not in spec.tensor_flop_per_clk_per_sm:
                add(m & (dtype == dt).to_numpy(), f"GPU {g!r} has no {dt} tensor-core path")
    return reasons
