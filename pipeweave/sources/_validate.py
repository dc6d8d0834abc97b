"""``validate_profiles``: check a (user or loaded) table against the canonical schema."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import DataError, UnknownFamilyError, UnknownGPUError
from ..vocab import canonical_dtype, closest_family
from ._schema import (
    DTYPES,
    FAMILIES,
    FAMILY_DEFAULTS,
    FAMILY_REQUIRED_COLUMNS,
    NUMERIC_COLUMNS,
    STRING_COLUMNS,
    ZERO_OK_COLUMNS,
    conform,
)

__all__ = ["validate_profiles"]

_SHOW = 8  # offending rows shown in a message


def _rows(index: pd.Index, values: pd.Series | None = None) -> str:
    labels = list(index[:_SHOW])
    if values is None:
        shown = ", ".join(str(i) for i in labels)
    else:
        shown = ", ".join(f"{i} ({_plain(values.loc[i])!r})" for i in labels)
    more = f" and {len(index) - _SHOW} more" if len(index) > _SHOW else ""
    return f"row(s) {shown}{more}"


def _plain(v: object) -> object:
    return v.item() if isinstance(v, np.generic) else v


def validate_profiles(df: pd.DataFrame, *, require_latency: bool = False) -> pd.DataFrame:
    """Check ``df`` and return it in canonical form (a new frame; extra columns kept at the end).

    Checks: ``family``, ``gpu`` and ``dtype`` present; every family known and its required shape
    columns present (FAMILY_REQUIRED_COLUMNS), numeric, finite and > 0 (``step``/``window_size``
    >= 0); dtypes canonical; GPU names resolvable (aliases are replaced by catalog names and
    ``generation`` is filled in); ``latency_us``, when present, finite and > 0 where given
    (required on every row when ``require_latency``). Missing optional columns get the family
    defaults (FAMILY_DEFAULTS, e.g. moe_tp_size = 1). Raises :class:`DataError` naming the
    offending rows (index labels) and values.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(
            f"expected a pandas DataFrame of kernel launches, got {type(df).__name__}",
            hint="wrap the rows first, e.g. pd.DataFrame(list_of_dicts), or read a file with "
            "pipeweave.profiles.read_profiles(path)",
        )
    if df.empty:
        raise DataError("the profile table has no rows", hint="give at least one kernel launch")
    if df.columns.has_duplicates:
        dup = sorted(set(df.columns[df.columns.duplicated()]))
        raise DataError(
            f"duplicate column names {dup}", hint=f"keep one column each of {dup} (rename or drop the others)"
        )
    need = ["family", "gpu", "dtype"] + (["latency_us"] if require_latency else [])
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise DataError(
            f"the profile table lacks column(s) {missing}; columns found: {list(df.columns)}",
            hint="see pipeweave.sources.PROFILE_COLUMNS for the canonical names",
        )
    work = df.copy()
    for col in ("family", "gpu", "dtype"):
        bad = work[col].isna()
        if bad.any():
            raise DataError(
                f"column {col!r} is empty in {_rows(work.index[bad])}",
                hint=f"fill in {col} on those rows, or drop them"
                + (" (e.g. dtype 'bfloat16')" if col == "dtype" else ""),
            )
    fam = work["family"].astype(str)
    unknown = ~fam.isin(FAMILIES)
    if unknown.any():
        bad_names = sorted(pd.unique(fam[unknown]))
        guesses = {b: closest_family(b) for b in bad_names}
        close = "".join(f"; for {b!r} did you mean {g!r}?" for b, g in guesses.items() if g)
        raise UnknownFamilyError(
            f"unknown kernel family in {_rows(work.index[unknown], fam)}; valid families: {list(FAMILIES)}",
            hint=f"set family to one of the valid families on those rows{close}",
        )
    dt = work["dtype"].astype(str).map(canonical_dtype)  # "bf16" is bfloat16
    work["dtype"] = dt
    bad = ~dt.isin(DTYPES)
    if bad.any():
        raise DataError(
            f"unknown dtype in {_rows(work.index[bad], dt)}; valid dtypes: {list(DTYPES)}",
            hint="set dtype to one of the valid dtypes on those rows (aliases such as 'bf16' and 'fp16' are accepted)",
        )

    from ..hardware import generation_of, resolve_gpu_name

    gpu_raw = work["gpu"].astype(str)
    canon: dict[str, str] = {}
    for name in pd.unique(gpu_raw):
        try:
            canon[name] = resolve_gpu_name(name)
        except UnknownGPUError as exc:
            rows = work.index[(gpu_raw == name).to_numpy()]
            raise DataError(
                f"GPU {name!r} in {_rows(rows)} is not in the GPU catalog: {exc}",
                hint="use a catalog name or alias (`pipeweave gpus`)",
            ) from exc
    work["gpu"] = gpu_raw.map(canon)
    work["generation"] = work["gpu"].map({c: generation_of(c) for c in set(canon.values())})

    for family in [f for f in FAMILIES if (fam == f).any()]:
        sel = (fam == f"{family}").to_numpy()
        req = FAMILY_REQUIRED_COLUMNS[family]
        missing = [c for c in req if c not in work.columns]
        if missing:
            raise DataError(
                f"{int(sel.sum())} {family} row(s) need column(s) {missing}; columns found: {list(df.columns)}",
                hint=f"a {family} launch is described by {list(req)}",
            )
        for col, default in FAMILY_DEFAULTS[family].items():
            if col not in work.columns:
                work[col] = np.nan if col in NUMERIC_COLUMNS else None
            if col in STRING_COLUMNS:
                work[col] = work[col].astype(object)
            fill = sel & work[col].isna().to_numpy()
            if fill.any():
                work.loc[fill, col] = default
        for col in tuple(c for c in req if c not in STRING_COLUMNS) + tuple(
            c for c in FAMILY_DEFAULTS[family] if c in NUMERIC_COLUMNS
        ):
            vals = pd.to_numeric(work.loc[sel, col], errors="coerce")
            bad = ~np.isfinite(vals.to_numpy(dtype="float64", na_value=np.nan))
            if bad.any():
                idx = vals.index[bad]
                raise DataError(
                    f"{family} column {col!r} is missing or not a finite number in {_rows(idx, work.loc[idx, col])}",
                    hint=f"give every {family} row a number in {col!r} (a plain number, no units or text), or drop "
                    "those rows",
                )
            low = (vals < 0) if col in ZERO_OK_COLUMNS else (vals <= 0)
            if low.any():
                idx = vals.index[low.to_numpy()]
                raise DataError(
                    f"{family} column {col!r} must be {'>= 0' if col in ZERO_OK_COLUMNS else '> 0'}; "
                    f"got {_rows(idx, work.loc[idx, col])}",
                    hint=f"{col!r} is a size or count: correct those rows (a sign or unit slip?) or drop them",
                )

    if "latency_us" in work.columns:
        lat = pd.to_numeric(work["latency_us"], errors="coerce")
        raw = work["latency_us"]
        given = raw.notna().to_numpy()
        nonnum = given & lat.isna().to_numpy()
        if nonnum.any():
            idx = work.index[nonnum]
            raise DataError(
                f"latency_us is not a number in {_rows(idx, raw)}",
                hint="write latency_us as a plain number of microseconds (no unit suffix), or leave it blank",
            )
        arr = lat.to_numpy(dtype="float64", na_value=np.nan)
        if require_latency and np.isnan(arr).any():
            raise DataError(
                f"latency_us is missing in {_rows(work.index[np.isnan(arr)])}",
                hint="every measured row needs its latency in microseconds",
            )
        from ..frontend import MAX_LATENCY_US

        bad = ~np.isnan(arr) & ~(np.isfinite(arr) & (arr > 0) & (arr <= MAX_LATENCY_US))
        if bad.any():
            idx = work.index[bad]
            raise DataError(
                f"latency_us must be a finite number > 0 and <= {MAX_LATENCY_US:g} (microseconds); "
                f"got {_rows(idx, raw)}",
                hint="check the unit: latency_us is in microseconds",
            )
    for col in [c for c in NUMERIC_COLUMNS if c in work.columns and c != "latency_us"]:
        raw = work[col]
        nonnum = raw.notna().to_numpy() & pd.to_numeric(raw, errors="coerce").isna().to_numpy()
        if nonnum.any():
            idx = work.index[nonnum]
            raise DataError(
                f"column {col!r} is not a number in {_rows(idx, raw)}",
                hint=f"write {col!r} as a plain number (no units or text), or leave it blank for the default",
            )
    out = conform(work, keep_extra=True)
    out.index = df.index
    return out
