"""MoE routing: expected tokens per expert, padded rows per expert and active experts.

Routing distributions in the shared data: ``balanced`` (every expert gets the same share) and
``power_law_<alpha>`` (aiconfigurator: expert popularity ~ rank^-alpha). We use the expected
per-expert counts c_e = T_local * topk * w_e with w_e normalized popularity over the local
experts, capped at T (a token picks an expert at most once) with the excess spread over the
others. Padded rows = sum_e ceil(c_e / BM) * BM (the Triton kernel pads every expert's rows to a
multiple of BLOCK_M). Rows are grouped by their unique (tokens, topk, experts, distribution,
BM) so the per-expert arithmetic runs once per distinct case, not per row.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from .._frame import distinct_rows

__all__ = ["routing_stats", "distribution_alpha"]


def distribution_alpha(distribution: pd.Series) -> np.ndarray:
    """Power-law exponent of each routing distribution name (0 for ``balanced``/``uniform``/missing).

    ``power_law_1.2`` -> 1.2; ``power_law`` without a number means alpha = 1. Unknown names raise.
    """
    codes, names = pd.factorize(pd.Series(distribution).reset_index(drop=True), use_na_sentinel=False)
    return _alpha_of_names(pd.Series(names, dtype=object))[codes] if len(codes) else np.zeros(0)


def _alpha_of_names(distribution: pd.Series) -> np.ndarray:
    s = distribution.astype("string").fillna("balanced").str.lower()
    alpha = np.zeros(len(s))
    pl = s.str.startswith("power_law").to_numpy(dtype=bool)
    if pl.any():
        num = s[pl].str.replace("power_law", "", regex=False).str.strip("_")
        alpha[pl] = pd.to_numeric(num.replace("", "1"), errors="coerce").to_numpy(dtype=float)
    bad = ~(pl | s.isin(["balanced", "uniform", "random"]).to_numpy(dtype=bool)) | np.isnan(alpha)
    if bad.any():
        from .._errors import DataError

        vals = sorted(set(s[bad].tolist()))[:5]
        raise DataError(
            f"unknown MoE routing distribution {vals}",
            hint="use 'balanced' or 'power_law_<alpha>' (e.g. power_law_1.2)",
        )
    return alpha


def _counts_matrix(tokens: np.ndarray, topk: np.ndarray, n_exp: int, alpha: np.ndarray) -> np.ndarray:
    """Integer expected tokens per expert for cases sharing ``n_exp`` experts (cases x n_exp).

    balanced: round-robin split of round(T*k) rows (the first (T*k mod E) experts get one more);
    power law: c_e = T*k*w_e with w_e ~ rank^-alpha, capped at T (a token picks an expert at most
    once) with the excess spread over uncapped experts by weight, then (what the weights cannot place:
    at a large alpha they underflow to 0) onto the most popular uncapped experts in rank order, so the
    routed rows stay T*k (at most T*E) however skewed; then rounded; at least one routed row.
    """
    total = np.maximum(np.round(tokens * topk), 1.0)[:, None]
    ranks = np.arange(1, n_exp + 1, dtype=float)[None, :]
    # balanced
    base, rem = np.floor(total / n_exp), np.mod(total, n_exp)
    bal = base + (np.arange(n_exp)[None, :] < rem)
    # power law
    w = ranks ** (-alpha[:, None])
    w /= w.sum(axis=1, keepdims=True)
    c = (tokens * topk)[:, None] * w
    cap = tokens[:, None]
    for _ in range(8):
        over = c > cap
        if not over.any():
            break
        excess = np.where(over, c - cap, 0.0).sum(axis=1, keepdims=True)
        c = np.minimum(c, cap)
        free = c < cap
        wf = np.where(free, w, 0.0)
        denom = wf.sum(axis=1, keepdims=True)
        c = c + np.divide(excess * wf, denom, out=np.zeros_like(c), where=denom > 0)
    # water-fill what is left in rank order: expert e takes min(room_e, left - room of the experts before it)
    c = np.minimum(c, cap)
    left = np.maximum((tokens * topk)[:, None] - c.sum(axis=1, keepdims=True), 0.0)
    room = cap - c
    before = np.cumsum(room, axis=1) - room
    c = c + np.clip(left - before, 0.0, room)
    c = np.round(c)
    empty = c.sum(axis=1) < 1
    c[empty, 0] = 1.0
    return np.where((alpha == 0.0)[:, None], bal, c)


def routing_stats(
    tokens: np.ndarray, topk: np.ndarray, local_experts: np.ndarray, alpha: np.ndarray, block_m: np.ndarray
) -> pd.DataFrame:
    """Per-row routing statistics of a fused-MoE launch on one rank.

    Parameters are per-row arrays: ``tokens`` routed into this rank's experts (before top-k
    expansion), ``topk``, ``local_experts``, power-law ``alpha`` and the tile's ``block_m``.
    Returns columns ``routed_rows`` (sum of counts), ``padded_rows`` (sum of ceil(c_e/BM)*BM with
    integer counts), ``active_experts`` (experts with >= 1 expected token), ``max_expert_rows``.
    Vectorized over the distinct cases, grouped by expert count.
    """
    key = pd.DataFrame(
        {
            "t": np.asarray(tokens, float),
            "k": np.asarray(topk, float),
            "e": np.maximum(np.round(np.asarray(local_experts, float)), 1.0),
            "a": np.asarray(alpha, float),
            "bm": np.asarray(block_m, float),
        }
    )
    codes, first = distinct_rows(key)
    uniq = key.iloc[first].reset_index(drop=True)
    out = np.zeros((len(uniq), 4))
    for e_val, idx in uniq.groupby("e").indices.items():
        sub = uniq.iloc[idx]
        c = _counts_matrix(sub["t"].to_numpy(), sub["k"].to_numpy(), int(cast(float, e_val)), sub["a"].to_numpy())
        bm = sub["bm"].to_numpy()[:, None]
        out[idx, 0] = c.sum(axis=1)
        out[idx, 1] = (np.ceil(c / bm) * bm).sum(axis=1)
        out[idx, 2] = (c > 0).sum(axis=1)
        out[idx, 3] = c.max(axis=1)
    return pd.DataFrame(out[codes], columns=["routed_rows", "padded_rows", "active_experts", "max_expert_rows"])
