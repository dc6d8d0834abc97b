"""Measure a calibration plan on the GPU: ``python -m pipeweave.measure plan.csv --out measured.csv``.

**Not run on a GPU by this project**: it was written and its plan parsing and ``--dry-run`` were
tested on CPU-only machines. Check a few rows against your own timings before trusting it.

For each row of the plan (``pipeweave calibrate plan`` output, or any canonical launch rows on
one GPU) it builds random inputs with torch on ``--device`` and times the launch with
``triton.testing.do_bench`` (median of ``--rep`` ms of repetitions after ``--warmup`` ms; do_bench
flushes the L2 cache between repetitions), writing the plan's columns plus ``latency_us`` and
``timing`` (the method, so these rows are never pooled silently with CUDA-graph measurements):

* ``gemm``: ``torch.matmul`` of A[m, k] and B[k, n] (cuBLAS, like the AIConfigurator GEMM data);
  ``timing = "do_bench_torch_matmul"``.
* ``fused_moe`` / ``moe_w13``: SGLang's Triton fused-MoE (``sglang`` must be installed; its
  ``fused_moe(hidden_states, w1, w2, gating_output, topk, renormalize)`` entry point, balanced
  random routing); ``timing = "do_bench_sglang_fused_moe"``. EP/TP are not emulated: rows with
  ``moe_ep_size`` or ``moe_tp_size`` > 1 are measured on the local expert/intermediate slice.
* other families are skipped with the reason.

``--dry-run`` validates the plan and prints what would be measured, without torch or a GPU.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._errors import DataError, PipeweaveError

__all__ = ["MEASURABLE_FAMILIES", "main", "measure_plan", "measurement_method", "read_plan"]

#: family -> the ``timing`` label of its measurement method
MEASURABLE_FAMILIES: dict[str, str] = {
    "gemm": "do_bench_torch_matmul",
    "fused_moe": "do_bench_sglang_fused_moe",
    "moe_w13": "do_bench_sglang_fused_moe",
}
_TORCH_DTYPE = {"bfloat16": "bfloat16", "float16": "float16"}


def read_plan(path: str) -> pd.DataFrame:
    """Validated launch rows of a plan file (CSV/parquet, canonical columns; latency not needed)."""
    from .profiles import read_profiles

    return read_profiles(path, need_latency=False)


def measurement_method(plan: pd.DataFrame) -> pd.Series:
    """Per row: the ``timing`` label it would be measured with, or ``"skip: <reason>"``."""
    fam = plan["family"].astype(str)
    dtype = plan["dtype"].astype(str)
    out = fam.map(MEASURABLE_FAMILIES).fillna("")
    out = out.where(out != "", "skip: family " + fam + " has no measurement method here (gemm, fused_moe, moe_w13)")
    bad_dt = ~dtype.isin(list(_TORCH_DTYPE)) & ~out.str.startswith("skip")
    return out.where(~bad_dt, "skip: dtype " + dtype + " is not measured here (bfloat16, float16)")


def _gemm_call(row: pd.Series, device: str):
    import torch

    dt = getattr(torch, _TORCH_DTYPE[str(row["dtype"])])
    m, n, k = (int(row[c]) for c in ("m", "n", "k"))
    a = torch.randn(m, k, device=device, dtype=dt)
    b = torch.randn(k, n, device=device, dtype=dt)
    return lambda: torch.matmul(a, b)


def _moe_call(row: pd.Series, device: str):
    import torch

    try:
        from sglang.srt.layers.moe.fused_moe_triton import fused_moe
    except ImportError as exc:
        raise DataError(
            "fused-MoE rows need sglang installed (its Triton fused_moe kernel)",
            hint="pip install sglang, or measure gemm rows only",
        ) from exc
    dt = getattr(torch, _TORCH_DTYPE[str(row["dtype"])])
    ep = int(row.get("moe_ep_size", 1) or 1)
    tp = int(row.get("moe_tp_size", 1) or 1)
    t, h, n, topk = (int(row[c]) for c in ("num_tokens", "hidden_size", "inter_size", "topk"))
    e = max(int(row["num_experts"]) // ep, 1)
    n = max(n // tp, 1)
    x = torch.randn(t, h, device=device, dtype=dt)
    w1 = torch.randn(e, 2 * n, h, device=device, dtype=dt) / h**0.5
    w2 = torch.randn(e, h, n, device=device, dtype=dt) / n**0.5
    gating = torch.randn(t, e, device=device, dtype=torch.float32)
    return lambda: fused_moe(x, w1, w2, gating, topk, True)


def measure_plan(plan: pd.DataFrame, *, device: str = "cuda", warmup_ms: int = 25, rep_ms: int = 100) -> pd.DataFrame:
    """``plan`` with ``latency_us`` (median of do_bench, us) and ``timing``; skipped rows have NaN."""
    try:
        import torch
        from triton.testing import do_bench
    except ImportError as exc:
        raise DataError(
            f"measuring needs torch and triton with a CUDA GPU ({exc.name or exc} is not installed here)",
            hint="run it on the GPU machine with `pip install torch triton`, or check the plan with --dry-run",
        ) from None

    if not torch.cuda.is_available():
        raise DataError(
            "no CUDA device: measuring needs the GPU the plan is for", hint="run it on that GPU, or use --dry-run"
        )
    method = measurement_method(plan)
    lat = np.full(len(plan), np.nan)
    for i, (_, row) in enumerate(plan.iterrows()):  # one real launch per row: a Python loop is the point
        if method.iloc[i].startswith("skip"):
            continue
        fn = _gemm_call(row, device) if row["family"] == "gemm" else _moe_call(row, device)
        lat[i] = float(do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=(0.5, 0.2, 0.8))[0]) * 1000.0
        torch.cuda.empty_cache()
    return plan.assign(latency_us=lat, timing=method.where(~method.str.startswith("skip"), None))


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(
        prog="python -m pipeweave.measure", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("plan", help="plan file (pipeweave calibrate plan --out ...)")
    p.add_argument("--out", help="measured profile file to write (.csv/.parquet); required unless --dry-run")
    p.add_argument("--device", default="cuda", help="torch device (default cuda)")
    p.add_argument("--warmup", type=int, default=25, help="do_bench warmup, ms (default 25)")
    p.add_argument("--rep", type=int, default=100, help="do_bench repetition time, ms (default 100)")
    p.add_argument("--dry-run", action="store_true", help="validate the plan and list what would be measured")
    args = p.parse_args(argv)
    try:
        plan = read_plan(args.plan)
        method = measurement_method(plan)
        if args.dry_run:
            from .sources import FAMILY_KEY_COLUMNS

            for i, (_, row) in enumerate(plan.iterrows()):
                shape = " ".join(
                    f"{c}={row[c]:g}"
                    for c in FAMILY_KEY_COLUMNS[str(row["family"])]
                    if c in row.index and isinstance(row[c], (int, float)) and np.isfinite(row[c])
                )
                print(f"row {i + 1}: {row['gpu']} {row['family']} {row['dtype']} {shape} -> {method.iloc[i]}")
            n_ok = int((~method.str.startswith("skip")).sum())
            print(f"dry run: {n_ok} of {len(plan)} rows would be measured; nothing written")
            return 0
        if not args.out:
            raise DataError("--out is required", hint="e.g. --out measured.csv (or pass --dry-run)")
        from .profiles import write_profiles

        out = measure_plan(plan, device=args.device, warmup_ms=args.warmup, rep_ms=args.rep)
        done = out[out["latency_us"].notna()]
        write_profiles(done, args.out)
        print(f"wrote {len(done)} measured rows to {args.out} ({len(out) - len(done)} skipped)")
        return 0
    except PipeweaveError as exc:
        print(f"pipeweave.measure: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
