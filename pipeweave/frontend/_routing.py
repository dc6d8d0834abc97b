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

import numpy as np
import pandas as pd

__all__ = ["routing_stats", "distribution_alpha"]


def distribution_alpha(distribution: pd.Series) -> np.ndarray:
    """Power-law exponent of each routing distribution name (0 for ``balanced``/``uniform``/missing).

    ``power_law_1.2`` -> 1.2; ``power_law`` without a number means alpha = 1. Unknown names raise.
    """
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
        raise DataError(f"unknown MoE routing distribution {vals}",
                        hint="use 'balanced' or 'power_law_<alpha>' (e.g. power_law_1.2)")
    return alpha


def _expected_counts(tokens: float, topk: float, n_exp: int, alpha: float) -> np.ndarray:
    """Expected tokens per local expert (length n_exp), sum = tokens*topk, each <= tokens."""
    total = tokens * topk
    w = np.arange(1, n_exp + 1, dtype=float) ** (-alpha)
    w /= w.sum()
    c = total * w
    for _ in range(8):  # cap at `tokens` and spread the excess over the uncapped experts
        over = c > tokens
        if not over.any():
            break
        excess = (c[over] - tokens).sum()
        c[over] = tokens
        free = ~over & (c < tokens)
        if not free.any():
            break
        c[free] += excess * w[free] / w[free].sum()
    return c


def routing_stats(tokens: np.ndarray, topk: np.ndarray, local_experts: np.ndarray,
                  alpha: np.ndarray, block_m: np.ndarray) -> pd.DataFrame:
    """Per-row routing statistics of a fused-MoE launch on one rank.

    Parameters are per-row arrays: ``tokens`` routed into this rank's experts (before top-k
    expansion), ``topk``, ``local_experts``, power-law ``alpha`` and the tile's ``block_m``.
    Returns columns ``routed_rows`` (sum of counts), ``padded_rows`` (sum of ceil(c_e/BM)*BM with
    integer counts), ``active_experts`` (experts with >= 1 expected token), ``max_expert_rows``.
    """
    key = pd.DataFrame({"t": tokens, "k": topk, "e": local_experts, "a": alpha, "bm": block_m})
    uniq = key.drop_duplicates().reset_index(drop=True)
    out = np.zeros((len(uniq), 4))
    for i, (t, k, e, a, bm) in enumerate(uniq.itertuples(index=False, name=None)):
        e_int = max(int(round(e)), 1)
        c = _expected_counts(float(t), float(k), e_int, float(a))
        if a == 0.0:
            # balanced: integer round-robin split (first (T*k mod E) experts get one more)
            tot = max(int(round(t * k)), 1)  # the kernel runs on >= 1 routed row
            base, rem = divmod(tot, e_int)
            c = np.full(e_int, float(base))
            c[:rem] += 1
        else:
            c = np.round(c)  # expected counts -> integers; keep the total close
            if c.sum() < 1:
                c[0] = 1.0
        nz = c > 0
        padded = (np.ceil(c[nz] / bm) * bm).sum()
        out[i] = (c.sum(), padded, nz.sum(), c.max(initial=0.0))
    stats = pd.DataFrame(out, columns=["routed_rows", "padded_rows", "active_experts", "max_expert_rows"])
    merged = key.merge(pd.concat([uniq, stats], axis=1), on=["t", "k", "e", "a", "bm"], how="left")
    return merged[["routed_rows", "padded_rows", "active_experts", "max_expert_rows"]].reset_index(drop=True)
