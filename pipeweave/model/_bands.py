"""Error bands: how far a prediction may be from the measurement, from the model's own held-out residuals.

A band is the spread of ``measured / predicted`` (dimensionless) on rows the model did not train on,
kept as quantiles at :data:`BAND_LEVELS`. A prediction ``p`` (us) gets the band
``[p * q((1 - c) / 2), p * q((1 + c) / 2)]`` at coverage ``c`` (:data:`BAND_COVERAGES`). Three situations
are kept apart (:data:`BAND_SITUATIONS`), because their errors differ by a factor of two or more:

- ``unseen``: a GPU of a generation without training rows of the family (leave-one-generation-out
  residuals; each held-out generation weighs the same, so the one with the most rows does not set the
  band alone);
- ``sibling``: a GPU without training rows of the family, of a generation that has some (a new SKU such as
  B300 after B200: leave-one-GPU-out residuals where another GPU of the held-out GPU's generation trains;
  each held-out GPU weighs the same). Optional: without it such rows take the ``unseen`` band;
- ``seen``: a GPU the model was trained on, a launch shape it was not (shapes held out on every GPU; each
  GPU weighs the same).

The residuals are computed by :func:`pipeweave.evaluation.estimate_error_bands` (``pipeweave train
--error-bands``); this module holds the table layout, its validation and the lookup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._errors import DataError

__all__ = [
    "BAND_LEVELS",
    "BAND_COVERAGES",
    "BAND_SITUATIONS",
    "BAND_MIN_ROWS",
    "weighted_quantiles",
    "band_table",
    "check_error_bands",
    "band_key",
    "find_band",
    "check_coverage",
    "coverage_levels",
    "band_bounds",
    "band_summary",
    "merge_error_bands",
]

#: Quantile levels of ``measured / predicted`` kept per band (their pairs give :data:`BAND_COVERAGES`).
BAND_LEVELS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: Central coverages a band can be asked for: 0.5 (q25-q75), 0.8 (q10-q90), 0.9 (q05-q95).
BAND_COVERAGES: tuple[float, ...] = (0.5, 0.8, 0.9)
#: The situations a band describes (see the module docstring); ``sibling`` is optional in a band layout.
BAND_SITUATIONS: tuple[str, ...] = ("unseen", "sibling", "seen")
#: A (family) or (family, dtype) with fewer held-out rows gets no band of its own.
BAND_MIN_ROWS: int = 100


def weighted_quantiles(values: Any, weights: Any, levels: Any) -> np.ndarray:
    """Quantiles of ``values`` at ``levels`` (in [0, 1]) where each value counts ``weights`` times.

    The weighted empirical CDF puts each value at the middle of its weight (a value of weight w whose
    predecessors sum to W sits at (W + w / 2) / total), linearly interpolated between values; equal
    weights give numpy's ``method="hazen"`` quantiles.
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    if v.shape != w.shape or v.ndim != 1 or not len(v):
        raise DataError(
            f"weighted_quantiles needs two 1-D arrays of one non-zero length, got {v.shape} and {w.shape}",
            hint="pass one weight per value",
        )
    if not (np.isfinite(v).all() and np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
        raise DataError(
            "weighted_quantiles needs finite values and non-negative weights of positive sum",
            hint="drop NaN / infinite values and give each value a weight >= 0",
        )
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cdf = (np.cumsum(w) - w / 2.0) / w.sum()
    return np.interp(np.asarray(levels, dtype=float), cdf, v)


def band_key(family: str, dtype: str | None = None) -> str:
    """The key of a band: ``family`` or ``family:dtype`` (as the companion weights are keyed)."""
    return f"{family}:{dtype}" if dtype else str(family)


def find_band(bands: Mapping[str, Any], situation: str, family: str, dtype: str | None = None) -> dict | None:
    """The band of ``family`` (and ``dtype``) in ``situation`` of checked ``bands``: the ``family:dtype`` band,
    else the ``family`` band, else ``None`` (also when the layout lacks the situation)."""
    table = bands.get(situation, {}).get("bands", {})
    return table.get(band_key(family, dtype)) or table.get(band_key(family))


def _level_index(level: float) -> int:
    """Position in :data:`BAND_LEVELS` of the quantile level nearest ``level``."""
    return int(np.argmin(np.abs(np.asarray(BAND_LEVELS) - level)))


def coverage_levels(coverage: Any) -> tuple[int, int]:
    """Positions in :data:`BAND_LEVELS` of the lower and upper quantile of a band holding the middle ``coverage``
    (checked by :func:`check_coverage`: 0.5, 0.8 or 0.9, or 50 / 80 / 90)."""
    c = check_coverage(coverage)
    return _level_index((1.0 - c) / 2.0), _level_index((1.0 + c) / 2.0)


def band_table(
    rows: pd.DataFrame,
    *,
    group_col: str,
    pred_col: str = "pred_us",
    target_col: str = "latency_us",
    min_rows: int = BAND_MIN_ROWS,
) -> dict[str, dict[str, Any]]:
    """Bands of held-out predictions, keyed by ``family`` and, for a family with several dtypes, ``family:dtype``.

    ``rows``: one held-out prediction per row with ``family``, ``dtype``, ``group_col`` (each of its values
    weighs the same in the quantiles), ``target_col`` and ``pred_col`` (us). Rows without a finite positive
    prediction are left out. Each band: ``q`` (quantiles of measured / predicted at :data:`BAND_LEVELS`),
    ``mape`` (%, same weights), ``n`` (rows), ``groups`` (the ``group_col`` values it pools) and ``coverage``:
    per coverage c (text key, e.g. ``"0.8"``), the share of each group's rows inside the c band built from the
    other groups alone, averaged over the groups (``None`` with one group): whether the band carries to a
    group it was not made from. Keys with fewer than ``min_rows`` rows are omitted.
    """
    need = ["family", "dtype", group_col, target_col, pred_col]
    missing = [c for c in need if c not in rows.columns]
    if missing:
        raise DataError(f"band_table needs the columns {missing}", hint=f"give a frame with {need}")
    lat = pd.to_numeric(rows[target_col], errors="coerce").to_numpy(dtype=float)
    pred = pd.to_numeric(rows[pred_col], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(lat) & np.isfinite(pred) & (lat > 0) & (pred > 0)
    work = pd.DataFrame(
        {
            "family": rows["family"].astype(str).to_numpy()[ok],
            "dtype": rows["dtype"].astype(str).to_numpy()[ok],
            "group": rows[group_col].astype(str).to_numpy()[ok],
            "ratio": lat[ok] / pred[ok],
        }
    )
    out: dict[str, dict[str, Any]] = {}
    for fam, sub in work.groupby("family", sort=True):
        parts: list[tuple[str, pd.DataFrame]] = [(band_key(str(fam)), sub)]
        if sub["dtype"].nunique() > 1:
            parts += [(band_key(str(fam), str(d)), s) for d, s in sub.groupby("dtype", sort=True)]
        for key, s in parts:
            if len(s) < min_rows:
                continue
            # each group (held-out generation or GPU) weighs the same: w = 1 / (rows of its group)
            w = 1.0 / s.groupby("group")["ratio"].transform("size").to_numpy(dtype=float)
            r = s["ratio"].to_numpy(dtype=float)
            ape = np.abs(1.0 / r - 1.0) * 100.0  # |predicted / measured - 1|, the harness's APE
            out[key] = {
                "q": [float(x) for x in weighted_quantiles(r, w, BAND_LEVELS)],
                "mape": float(np.average(ape, weights=w)),
                "n": int(len(s)),
                "groups": sorted(s["group"].unique().tolist()),
                "coverage": _cross_group_coverage(r, s["group"].to_numpy()),
            }
    return out


def _cross_group_coverage(ratio: np.ndarray, group: np.ndarray) -> dict[str, float] | None:
    """Per coverage c of :data:`BAND_COVERAGES` (key ``str(c)``): the share of a group's ratios inside the band
    made from the OTHER groups alone, averaged over the groups (leave-one-group-out: how well a band carries to
    a generation or GPU outside it). ``None`` with fewer than two groups."""
    names = np.unique(group)
    if len(names) < 2:
        return None
    hit: dict[float, list[float]] = {c: [] for c in BAND_COVERAGES}
    for g in names:
        own = group == g
        others = group[~own]
        w = 1.0 / pd.Series(others).map(pd.Series(others).value_counts()).to_numpy(dtype=float)
        for c in BAND_COVERAGES:
            lo, hi = weighted_quantiles(ratio[~own], w, [(1.0 - c) / 2.0, (1.0 + c) / 2.0])
            hit[c].append(float(np.mean((ratio[own] >= lo) & (ratio[own] <= hi))))
    return {str(c): float(np.mean(v)) for c, v in hit.items()}


def _bad(where: str, what: str) -> DataError:
    return DataError(
        f"{where}: malformed error bands ({what})",
        hint="re-estimate them with pipeweave.evaluation.estimate_error_bands and set_error_bands",
    )


def check_error_bands(bands: Any, where: str = "error_bands") -> dict[str, Any]:
    """``bands`` validated (the layout :func:`pipeweave.evaluation.estimate_error_bands` returns), as plain
    Python types; a :class:`DataError` names the first malformed field.

    Layout: ``levels`` (= :data:`BAND_LEVELS`); ``unseen``, ``seen`` and optionally ``sibling``, each
    ``{"protocol": str, "bands": {key: {"q": [ratio per level, non-decreasing, > 0], "mape": %, "n": rows,
    "groups": [str]}}}``; ``seen_gpus``: family -> the catalog names of the GPUs with training rows of that
    family; ``seen_generations`` (optional): family -> the generations with training rows of that family. A band's optional
    ``coverage`` maps each of :data:`BAND_COVERAGES` (as text) to the share of a held-out group's rows inside
    the band of the other groups (see :func:`band_table`).
    """
    if not isinstance(bands, Mapping):
        raise _bad(where, f"expected a mapping, got {type(bands).__name__}")
    levels = bands.get("levels")
    if not isinstance(levels, (list, tuple)) or [float(x) for x in levels] != list(BAND_LEVELS):
        raise _bad(where, f"levels {levels!r} are not {list(BAND_LEVELS)}")
    out: dict[str, Any] = {"levels": list(BAND_LEVELS)}
    for situation in BAND_SITUATIONS:
        part = bands.get(situation)
        if situation == "sibling" and part is None:  # optional: such rows take the unseen band
            continue
        if not isinstance(part, Mapping) or not isinstance(part.get("protocol"), str):
            raise _bad(where, f"{situation!r} needs a protocol and bands")
        table = part.get("bands")
        if not isinstance(table, Mapping):
            raise _bad(where, f"{situation}.bands is not a mapping")
        checked: dict[str, Any] = {}
        for key, band in table.items():
            try:
                q = [float(x) for x in band["q"]]
                mape, n = float(band["mape"]), int(band["n"])
                groups = [str(g) for g in band["groups"]]
                cov = band.get("coverage")
                coverage = None if cov is None else {str(k): float(v) for k, v in cov.items()}
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise _bad(where, f"{situation}.bands[{key!r}]: {exc}") from None
            if coverage is not None and not all(0.0 <= v <= 1.0 for v in coverage.values()):
                raise _bad(where, f"{situation}.bands[{key!r}].coverage {coverage!r} is not shares in [0, 1]")
            if len(q) != len(BAND_LEVELS) or not all(np.isfinite(q)) or min(q) <= 0 or np.any(np.diff(q) < 0):
                raise _bad(where, f"{situation}.bands[{key!r}].q {q!r} is not {len(BAND_LEVELS)} rising ratios > 0")
            checked[str(key)] = {"q": q, "mape": mape, "n": n, "groups": groups, "coverage": coverage}
        out[situation] = {"protocol": part["protocol"], "bands": checked}
    seen_gpus = bands.get("seen_gpus")
    if not isinstance(seen_gpus, Mapping) or not all(isinstance(v, (list, tuple)) for v in seen_gpus.values()):
        raise _bad(where, "seen_gpus is not a mapping of family to GPU names")
    out["seen_gpus"] = {str(k): sorted(str(g) for g in v) for k, v in seen_gpus.items()}
    gens = bands.get("seen_generations", {})
    if not isinstance(gens, Mapping) or not all(isinstance(v, (list, tuple)) for v in gens.values()):
        raise _bad(where, "seen_generations is not a mapping of family to generations")
    out["seen_generations"] = {str(k): sorted(str(g) for g in v) for k, v in gens.items()}
    carried = bands.get("carried")
    if carried is not None:
        fams, source = (carried.get("families"), carried.get("source")) if isinstance(carried, Mapping) else (0, 0)
        if not isinstance(fams, (list, tuple)) or not isinstance(source, str):
            raise _bad(where, "carried needs families (a list) and source (text)")
        out["carried"] = {"families": sorted(str(f) for f in fams), "source": source}
    return out


def _band_family(key: str) -> str:
    """The family of a band key (``family`` or ``family:dtype``)."""
    return key.split(":", 1)[0]


def merge_error_bands(
    base: Mapping[str, Any], update: Mapping[str, Any], families: Any, *, source: str = ""
) -> dict[str, Any]:
    """``base``'s bands with those of ``families`` replaced by ``update``'s (both in the layout of
    :func:`check_error_bands`).

    ``update``: bands estimated for ``families`` on the new model's training rows
    (``estimate_error_bands(..., families=...)``); ``base``: an earlier model's bands, whose other families'
    bands are carried over as they are. That is right only when nothing those families' predictions depend
    on changed (their rows, the rows their boosters also read, their recipe); it is checked where it can
    be: the situations' protocols (generations, cap, seed) must be equal, and every carried family must
    have been trained on the same GPUs and generations in ``base`` as now. ``seen_gpus`` and
    ``seen_generations`` come from ``update``. The result records the carried families and ``source``
    (e.g. the earlier model file) under ``carried``.
    """
    old, new = check_error_bands(base, "base bands"), check_error_bands(update, "updated bands")
    fams = sorted({str(families)} if isinstance(families, str) else {str(f) for f in families})
    trained = sorted(new["seen_gpus"])
    unknown = [f for f in fams if f not in trained]
    if not fams or unknown:
        raise DataError(
            f"merge_error_bands: {unknown or 'no'} families to refresh; the updated bands were estimated on {trained}",
            hint="name the families the updated bands were estimated for",
        )
    differ = [s for s in BAND_SITUATIONS if s in old and s in new and old[s]["protocol"] != new[s]["protocol"]] + [
        s for s in ("sibling",) if (s in old) != (s in new)
    ]
    if differ:
        s = differ[0]
        raise DataError(
            f"the earlier bands were estimated another way ({', '.join(differ)}; {s}: "
            f"{old.get(s, {}).get('protocol')!r} vs now {new.get(s, {}).get('protocol')!r})",
            hint="estimate every family's bands afresh (no refresh of a few)",
        )
    carried = [f for f in trained if f not in fams]
    missing = [f for f in carried if f not in old["seen_gpus"]]
    moved = [
        f
        for f in carried
        if f not in missing
        and (
            old["seen_gpus"][f] != new["seen_gpus"][f]
            or old["seen_generations"].get(f, new["seen_generations"].get(f)) != new["seen_generations"].get(f)
        )
    ]
    if missing or moved:
        raise DataError(
            "the earlier bands cannot stand for "
            + "; ".join(
                x
                for x in (
                    f"{missing}: not trained then" if missing else "",
                    f"{moved}: trained on other GPUs or generations then" if moved else "",
                )
                if x
            ),
            hint=f"refresh those families' bands too (add them to {fams})",
        )
    out: dict[str, Any] = {
        "levels": list(BAND_LEVELS),
        "seen_gpus": new["seen_gpus"],
        "seen_generations": new["seen_generations"],
    }
    for s in BAND_SITUATIONS:
        if s not in new:
            continue
        table = {k: v for k, v in old[s]["bands"].items() if _band_family(k) in carried}
        table.update({k: v for k, v in new[s]["bands"].items() if _band_family(k) in fams})
        out[s] = {"protocol": new[s]["protocol"], "bands": dict(sorted(table.items()))}
    earlier: dict[str, Any] = old.get("carried") or {}  # a chain of refreshes: where the carried bands came from
    chained = sorted(set(carried) & set(earlier.get("families", ())))
    note = f" (which carried {chained} from {earlier.get('source') or 'an earlier model'})" if chained else ""
    out["carried"] = {"families": carried, "source": f"{source}{note}"}
    return check_error_bands(out, "merged bands")


def check_coverage(coverage: Any) -> float:
    """``coverage`` as one of :data:`BAND_COVERAGES` (a fraction, or a percentage such as 80)."""
    try:
        c = float(coverage)
    except (TypeError, ValueError):
        c = float("nan")
    if c > 1.0:
        c /= 100.0
    for allowed in BAND_COVERAGES:
        if abs(c - allowed) < 1e-6:  # float32 0.8 is 0.800000012
            return allowed
    raise DataError(
        f"band coverage must be one of {list(BAND_COVERAGES)} (or {[int(x * 100) for x in BAND_COVERAGES]} %), "
        f"got {coverage!r}",
        hint="e.g. 0.8: the band holds the middle 80% of held-out measured / predicted ratios",
    )


def band_bounds(
    bands: Mapping[str, Any],
    family: Any,
    dtype: Any,
    gpu_keys: Any,
    pred_us: Any,
    coverage: float,
    generations: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lo_us, hi_us, situation)`` per row: the band of each prediction at ``coverage``.

    ``bands``: checked bands (:func:`check_error_bands`); ``family``, ``dtype``, ``gpu_keys`` (catalog GPU
    names), ``pred_us`` and ``generations`` (each row's GPU generation; ``None`` or ``""``: unknown) are
    aligned arrays. A row's situation is ``seen`` when its GPU has training rows of its family, else
    ``sibling`` when its generation has some (and the bands have that situation), else ``unseen``; its band is
    the ``family:dtype`` band, else the ``family`` band. Rows without a band (no such key, or a prediction
    that is not finite) get NaN bounds and situation ``""``.
    """
    i_lo, i_hi = coverage_levels(coverage)
    fam = np.asarray(family, dtype=object).astype(str)
    dt = np.asarray(dtype, dtype=object).astype(str)
    keys = np.asarray(gpu_keys, dtype=object).astype(str)
    pred = np.asarray(pred_us, dtype=float)
    n = len(pred)
    gen = np.full(n, "", dtype=object) if generations is None else np.asarray(generations, dtype=object).astype(str)
    if not (len(fam) == len(dt) == len(keys) == len(gen) == n):
        raise DataError(
            f"band_bounds: {len(fam)} families, {len(dt)} dtypes, {len(keys)} GPUs, {len(gen)} generations "
            f"and {n} predictions",
            hint="pass one of each per row",
        )
    q_lo, q_hi = np.full(n, np.nan), np.full(n, np.nan)
    situation = np.full(n, "", dtype=object)
    seen_gpus, seen_gens = bands.get("seen_gpus", {}), bands.get("seen_generations", {})
    frame = pd.DataFrame({"f": fam, "d": dt, "g": keys, "e": gen})
    for key, idx in frame.groupby(["f", "d", "g", "e"], sort=False).indices.items():
        f, d, g, e = (str(x) for x in key)  # type: ignore[attr-defined]  # pandas-stubs: a tuple key
        if g in seen_gpus.get(f, ()):
            s = "seen"
        elif e in seen_gens.get(f, ()) and "sibling" in bands:
            s = "sibling"
        else:
            s = "unseen"
        band = find_band(bands, s, f, d)
        if band is None and s == "sibling":  # no sibling band of this key: the unseen one
            s, band = "unseen", find_band(bands, "unseen", f, d)
        if band is None:
            continue
        q_lo[idx], q_hi[idx] = band["q"][i_lo], band["q"][i_hi]
        situation[idx] = s
    ok = np.isfinite(pred) & np.isfinite(q_lo)
    situation[~ok] = ""
    return np.where(ok, pred * q_lo, np.nan), np.where(ok, pred * q_hi, np.nan), situation


def band_summary(bands: Mapping[str, Any], coverage: float = 0.8) -> pd.DataFrame:
    """One row per band key: ``key``, and per situation (``unseen_``, ``sibling_``, ``seen_``) the ``lo`` / ``hi`` ratio
    (measured / predicted) at ``coverage``, the median ratio ``q50``, the held-out ``mape`` (%), ``n`` (rows)
    and ``coverage`` (the share of a held-out group's rows inside the band of the other groups, see
    :func:`band_table`); NaN where a situation has no band of that key (or no coverage). ``bands``: checked bands (:func:`check_error_bands`)."""
    c = check_coverage(coverage)
    i_lo, i_mid, i_hi = _level_index((1.0 - c) / 2.0), _level_index(0.5), _level_index((1.0 + c) / 2.0)
    keys = sorted(set().union(*(bands[s]["bands"] for s in BAND_SITUATIONS if s in bands)))
    rows = []
    for key in keys:
        row: dict[str, Any] = {"key": key}
        for s in BAND_SITUATIONS:
            b = bands[s]["bands"].get(key) if s in bands else None
            for name, value in (
                ("lo", b["q"][i_lo] if b else np.nan),
                ("q50", b["q"][i_mid] if b else np.nan),
                ("hi", b["q"][i_hi] if b else np.nan),
                ("mape", b["mape"] if b else np.nan),
                ("n", b["n"] if b else np.nan),
                ("coverage", (b.get("coverage") or {}).get(str(c), np.nan) if b else np.nan),
            ):
                row[f"{s}_{name}"] = value
        rows.append(row)
    return pd.DataFrame(rows)
