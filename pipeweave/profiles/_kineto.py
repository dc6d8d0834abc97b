"""PyTorch profiler (Kineto) trace JSON -> canonical GEMM rows.

The trace (``prof.export_chrome_trace(path)`` or the tensorboard trace handler) holds
``traceEvents``: CPU operator events (``cat`` "cpu_op", with ``args["Input Dims"]`` and
``args["Input type"]`` when profiled with ``record_shapes=True``), CUDA runtime events and GPU
kernel events (``cat`` "kernel", "Kernel" in older versions; ``dur`` in microseconds, ``args``
with ``grid``, ``block``, ``device``, ``correlation`` and ``External id``). A kernel belongs to
the CPU operator with the same ``External id`` (else through the runtime launch event with the
same ``correlation``). The GPU comes from ``deviceProperties[device].name``.

Recovered rows: ``aten::mm`` (A[M,K] @ B[K,N]), ``aten::addmm`` (bias, A, B), ``aten::linear``
(input[..., K], weight[N, K]: M = product of the leading dims), ``aten::bmm`` and ``aten::_scaled_mm``
(fp8 e4m3 A[M,K] @ B[K,N] with per-tensor scales: ``gemm`` rows of dtype ``fp8``, AIConfigurator's
per-tensor FP8 GEMM; row-wise or block scales are skipped with the reason). In bf16 / fp16
they are ``gemm`` rows (``bmm`` with batch 1 only); in float32 they are ``gemm_fp32`` rows
(``batch_size`` GEMMs; ``op`` = ``linear`` for linear / addmm, else ``bmm``) with the CTA tile and
warps of the cuBLAS / CUTLASS SIMT kernel when its name encodes them, as NeuSight's rows have. A
float32 GEMM that ran a TF32 tensor-core kernel (``torch.backends.cuda.matmul.allow_tf32``) is
skipped: ``gemm_fp32`` models the CUDA-core SGEMM. The row's latency is the sum of the operator's
kernels (a split-K GEMM launches two), ``timing = "kineto"`` (CUPTI kernel activity, one eager
launch: no host overhead, unlike NeuSight's CUDA-event timing). Every other kernel is listed as
skipped with the reason.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from .._errors import DataError, PipeweaveError
from .._io import read_error_text
from ..sources import cublas_tile_from_kernel_name, recorded_split_k
from ._files import input_file, note_relabelled

__all__ = ["LAUNCH_KEY", "TORCH_DTYPES", "import_kineto", "kineto_launches"]

#: PyTorch "Input type" strings -> canonical dtype
TORCH_DTYPES: dict[str, str] = {
    "c10::BFloat16": "bfloat16",
    "c10::Half": "float16",
    "BFloat16": "bfloat16",
    "Half": "float16",
    "torch.bfloat16": "bfloat16",
    "torch.float16": "float16",
    "float": "float32",
    "Float": "float32",
    "c10::Float": "float32",
    "torch.float32": "float32",
    "c10::Float8_e4m3fn": "fp8",
    "Float8_e4m3fn": "fp8",
    "torch.float8_e4m3fn": "fp8",
}
_GEMM_OPS = ("aten::mm", "aten::addmm", "aten::linear", "aten::bmm", "aten::_scaled_mm")


def _load(path: Path) -> dict:
    path = input_file(path, "trace file", hint="pass the file written by prof.export_chrome_trace()")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig") as fh:
            trace = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as exc:
        raise DataError(
            f"{str(path)!r} is not a JSON trace ({read_error_text(exc)})",
            hint="pass the file written by prof.export_chrome_trace()",
        ) from None
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise DataError(
            f"{str(path)!r} has no 'traceEvents' list: not a PyTorch profiler trace",
            hint="pass the file written by prof.export_chrome_trace()",
        )
    return trace


def _mnk(op: str, dims: list, types: list) -> tuple[float, float, float, float, str] | str:
    """(batch, m, n, k, dtype) of a GEMM operator from its input dims and types, or the reason it is skipped."""
    if not dims:
        return "no 'Input Dims' (profile with record_shapes=True)"
    try:
        if op == "aten::mm":
            (m, k), (k2, n) = dims[0], dims[1]
            a_type, b = types[0], 1
        elif op == "aten::addmm":
            (m, k), (k2, n) = dims[1], dims[2]
            a_type, b = types[1], 1
        elif op == "aten::linear":
            x, w = dims[0], dims[1]
            m, k = float(np.prod(x[:-1])), x[-1]
            n, k2 = w
            a_type, b = types[0], 1
        elif op == "aten::_scaled_mm":  # (A, B, scale_a, scale_b, ...): fp8 A[M,K] @ B[K,N]
            (m, k), (k2, n) = dims[0], dims[1]
            a_type, b = types[0], 1
            scales = [list(d or []) for d in dims[2:4]]
            if any(int(np.prod(d)) != 1 for d in scales if d):
                return (
                    f"fp8 GEMM with row-wise or block scales {scales}: only per-tensor scaling (gemm dtype fp8) is "
                    "modelled"
                )
        else:  # aten::bmm
            (b, m, k), (b2, k2, n) = dims[0], dims[1]
            if b != b2:
                return f"inconsistent batch sizes {dims} for {op}"
            a_type = types[0]
    except (ValueError, TypeError, IndexError):
        return f"unexpected input dims {dims} for {op}"
    if k != k2:
        return f"inconsistent input dims {dims} for {op}"
    dtype = TORCH_DTYPES.get(str(a_type))
    if dtype is None:
        return f"dtype {a_type!r} has no GEMM family (bf16 / fp16 / fp8 e4m3: gemm, float32: gemm_fp32)"
    if b != 1 and dtype != "float32":
        return f"batched GEMM (batch {b}) in {dtype}: only gemm_fp32 models batched GEMMs"
    return float(b), float(m), float(n), float(k), dtype


def _tf32(names: list[str]) -> bool:
    """True when one of a float32 GEMM's kernels is a TF32 tensor-core kernel (by its name)."""
    return any("tf32" in n.lower() for n in names)


#: the columns that make two kernel launches of a trace the same launch (their median is one row)
LAUNCH_KEY: tuple[str, ...] = ("gpu", "family", "dtype", "batch_size", "m", "n", "k")


def import_kineto(path: str | os.PathLike[str], *, gpu: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows, skipped) from one trace file; ``gpu`` overrides ``deviceProperties``.

    ``rows``: canonical GEMM rows (median latency per distinct launch, ``n_raw_rows`` launches);
    ``skipped``: ``file, kernel, reason, count``.
    """
    out, skip = kineto_launches(path, gpu=gpu)
    return _median_per_launch(out, list(LAUNCH_KEY)), skip


def kineto_launches(path: str | os.PathLike[str], *, gpu: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Like :func:`import_kineto`, one row per launch (repeated launches not merged yet)."""
    try:
        return _kineto_launches(path, gpu=gpu)
    except PipeweaveError:  # already says what is wrong (DataError is a ValueError too)
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:  # a field of an unexpected type
        raise DataError(
            f"{Path(path).name}: a malformed trace entry ({exc})",
            hint="export the trace with torch.profiler (record_shapes=True) and prof.export_chrome_trace(path); "
            "an edited or truncated trace cannot be read",
        ) from None


def _kineto_launches(path: str | os.PathLike[str], *, gpu: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    path = Path(path)
    trace = _load(path)
    events = trace["traceEvents"]
    devices = {int(d.get("id", i)): str(d.get("name", "")) for i, d in enumerate(trace.get("deviceProperties") or [])}
    ops: dict[int, dict] = {}
    runtime_ext: dict[int, int] = {}
    kernels = []
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        cat = str(ev.get("cat", "")).lower()
        args = ev.get("args") or {}
        # torch 1.x traces name the categories "Operator", "Runtime" and "Kernel"; torch 2.x "cpu_op",
        # "cuda_runtime" and "kernel"
        if cat in ("cpu_op", "operator"):
            ext = args.get("External id")
            if ext is not None:
                ops[int(ext)] = ev
        elif cat in ("cuda_runtime", "runtime") and "correlation" in args and "External id" in args:
            runtime_ext[int(args["correlation"])] = int(args["External id"])
        elif cat == "kernel":
            kernels.append(ev)
    if not kernels:
        raise DataError(
            f"{str(path)!r} has no GPU kernel events (cat 'kernel'): a CPU-only trace",
            hint="profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on the GPU",
        )
    rows, skipped, blocks = [], [], []
    profiled: set[str] = set()  # the devices' names of the rows kept (a gpu= label is checked against them)
    per_op: dict[int, dict] = {}
    for ev in kernels:
        args = ev.get("args") or {}
        name = str(ev.get("name", ""))
        ext = args.get("External id")
        if ext is None and args.get("correlation") is not None:
            ext = runtime_ext.get(int(args["correlation"]))
        op = ops.get(int(ext)) if ext is not None else None
        if op is None:
            skipped.append((name, "no CPU operator linked (no External id / correlation)"))
            continue
        opname = str(op.get("name", ""))
        if opname not in _GEMM_OPS:
            skipped.append((name, f"launched by {opname}, not a GEMM operator ({', '.join(_GEMM_OPS)})"))
            continue
        rec = per_op.setdefault(
            int(cast(int, ext)),
            {
                "op": op,
                "dur": 0.0,
                "n": 0,
                "device": args.get("device"),
                "names": [],
                "block": args.get("block"),
                "grid": args.get("grid"),
            },
        )
        rec["dur"] += float(ev.get("dur", np.nan))
        rec["n"] += 1
        rec["names"].append(name)
    for rec in per_op.values():
        op = rec["op"]
        oargs = op.get("args") or {}
        got = _mnk(str(op["name"]), oargs.get("Input Dims") or [], oargs.get("Input type") or [])
        if isinstance(got, str):
            skipped.extend((n, got) for n in rec["names"])
            continue
        device = int(rec["device"]) if rec["device"] is not None else 0
        gname = gpu or devices.get(device)
        profiled.add(devices.get(device, ""))
        if not gname:
            if not devices:
                why = "has no deviceProperties naming the GPU"
            elif device not in devices:
                why = (
                    f"has kernels on device {device}, but its deviceProperties only describe "
                    f"device{'s' if len(devices) > 1 else ''} {sorted(devices)}"
                )
            else:
                why = f"has no GPU name in deviceProperties for device {device}"
            raise DataError(f"{str(path)!r} {why}", hint="pass gpu= (a catalog name or a spec .toml path)")
        b, m, n, k, dtype = got
        fp32 = dtype == "float32"
        if fp32 and _tf32(rec["names"]):
            reason = (
                "TF32 tensor-core kernel (allow_tf32 on): gemm_fp32 models the CUDA-core SGEMM; profile with TF32 off"
            )
            skipped.extend((n, reason) for n in rec["names"])
            continue
        row = {
            "gpu": gname,
            "family": "gemm_fp32" if fp32 else "gemm",
            "dtype": dtype,
            "batch_size": b,
            "m": m,
            "n": n,
            "k": k,
            "latency_us": rec["dur"],
            "kernel_name": rec["names"][0],
            "n_kernels": rec["n"],
        }
        if fp32:
            row["op"] = "linear" if str(op["name"]) in ("aten::linear", "aten::addmm") else "bmm"
        rows.append(row)
        blocks.append((rec["block"], rec["grid"]))
    out = pd.DataFrame(rows)
    if gpu and len(out):
        note_relabelled(path.name, profiled, gpu)
    if len(out) and (out["family"] == "gemm_fp32").any():
        out = _with_simt_tile(out, blocks)
    if len(out):
        out["timing"] = "kineto"
    skip = pd.DataFrame(skipped, columns=["kernel", "reason"])
    skip = skip.value_counts().rename("count").reset_index() if len(skip) else skip.assign(count=0)
    skip.insert(0, "file", path.name)
    return out, skip


def _with_simt_tile(rows: pd.DataFrame, blocks: list) -> pd.DataFrame:
    """gemm_fp32 rows + the CTA tile their (first) kernel's name encodes, its warps (block threads / 32) and,
    for a legacy cuBLAS SGEMM, the split-K its grid records (grid z / batch: ``pipeweave.sources.recorded_split_k``).
    ``blocks``: (block, grid) of each row's first kernel."""
    tiles = cublas_tile_from_kernel_name(rows["kernel_name"])
    fp32 = (rows["family"] == "gemm_fp32").to_numpy()
    has = fp32 & np.isfinite(tiles["block_m"].to_numpy())
    out = rows.copy()
    for c in tiles.columns:
        out[c] = np.where(has, tiles[c].to_numpy(), np.nan)
    threads = np.array([float(np.prod(b)) if isinstance(b, list) and b else np.nan for b, _ in blocks])
    out["num_warps"] = np.where(has, threads / 32.0, np.nan)  # NaN: the front-end resolves the warps
    grid_z = np.array([float(g[2]) if isinstance(g, list) and len(g) == 3 else np.nan for _, g in blocks])
    split = recorded_split_k(out["kernel_name"], pd.Series(grid_z), out["batch_size"])
    out["split_k"] = np.where(fp32, split, np.nan)
    return out


def _median_per_launch(df: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """One row per distinct launch ``key``: median latency, ``n_raw_rows`` = launches merged."""
    if df.empty:
        return df
    g = df.groupby(key, sort=False, dropna=False)
    out = g.agg(
        latency_us=("latency_us", "median"),
        n_raw_rows=("latency_us", "size"),
        **{c: (c, "first") for c in df.columns if c not in key and c != "latency_us"},
    ).reset_index()
    out["n_raw_rows"] = out["n_raw_rows"].astype(float)
    return out
