"""Measure a calibration plan on the GPU: ``python -m pipeweave.measure plan.csv --out measured.csv``.

**Run on one GPU by this project** (an H200, torch 2.11, Triton 3.6: experiments/device_h200): 192 bf16 GEMMs
with each timer and the same shapes in fp8, compared with AIConfigurator's H200 rows of the same shapes. Check a few rows of your own
against your own timings before trusting it on another GPU or stack; fused-MoE rows were not run (no sglang
there).

For each row of the plan (``pipeweave calibrate plan`` output, or any canonical launch rows) it
builds random inputs with torch on ``--device`` and times one launch (rounded to 4 decimals, 0.1 ns,
in ``latency_us``) with ``--timing``:

* ``cuda_graph`` (default, :func:`cuda_graph_bench`): the median replay of a CUDA graph of back-to-back
  launches (~1 ms of work per replay, ``--warmup`` ms of replays first, ``--rep`` ms timed) / the launches in
  it: warm L2 where the operands fit, no CPU launch overhead. This is the convention of the AIConfigurator
  rows that the shipped model's GEMM and fused-MoE predictions follow, so ``calibrate fit`` on these rows
  corrects the model rather than the timer. On the H200: median 0.97x AIConfigurator's time, 10.8% MAPE.
* ``do_bench``: ``triton.testing.do_bench`` (median of ``--rep`` ms of single launches after ``--warmup`` ms,
  L2 flushed before each, launch overhead included; a Triton autotune cache's convention). On the H200 it
  read 1.64x AIConfigurator's time below 10 us and 1.30x at 10-30 us (within 4% above 30 us).

It writes the plan's columns plus ``latency_us`` and ``timing`` = ``<timing>_<call>`` (so these rows are
never pooled silently with other methods):

* ``gemm``: ``torch.matmul`` of A[m, k] and B[k, n] (cuBLAS, like the AIConfigurator GEMM data);
  ``timing = "cuda_graph_torch_matmul"`` (or ``do_bench_torch_matmul``). dtype ``fp8``:
  ``torch._scaled_mm`` of float8_e4m3fn operands with per-tensor scales and bf16 output
  (``..._torch_scaled_mm``; cuBLASLt wants k and n multiples of 16: other shapes fail and are reported). This
  is not what the shipped model's fp8 rows time: on the H200, AIConfigurator's fp8 GEMMs took a median 1.64x a
  bare ``_scaled_mm`` of the same shape (experiments/device_h200); ``calibrate fit`` warns about such rows.
* ``fused_moe``: SGLang's Triton fused-MoE (``sglang`` must be installed; its
  ``fused_moe(hidden_states, w1, w2, gating_output, topk, renormalize)`` entry point, routing by
  random gating logits, i.e. about balanced); ``timing = "cuda_graph_sglang_fused_moe"`` (or ``do_bench_...``). Only
  ``distribution = balanced`` rows (or uniform/random/power_law_0) are measured: ``power_law_<alpha>``
  rows are skipped, since random gating would time balanced routing under a power-law label. EP/TP
  are not emulated: rows with ``moe_ep_size`` or ``moe_tp_size`` > 1 are measured on the local
  expert/intermediate slice.
* other families are skipped with the reason (``moe_w13`` too: it is the W13 GEMM alone, and
  ``fused_moe`` would time both GEMMs and the activation).

Before anything is timed it checks the output path (.csv/.parquet, writable, not the plan or a spec
file), torch/triton and the CUDA device, that the device is the plan's GPU (its
``torch.cuda.get_device_name()`` resolved through the GPU catalog and the ``--gpu-spec`` files;
rows for another GPU are not measured; ``--gpu NAME`` says which GPU this is when the device name
is not known) and that sglang imports when fused-MoE rows are to be measured. A row that fails on
the GPU (e.g. CUDA out of memory) is reported as ``row N: not measured: <reason>`` and the run goes
on. Measured rows are written atomically every ``--save-every`` seconds and at the end (also after
Ctrl-C), so a crash keeps what was measured.

Exit status: 0 every measurable row was measured (rows skipped by design are listed); 1 some rows
were not measured here (failed on the GPU, or for another GPU), the others are written; 2 error
before measuring (nothing written); 130 interrupted (the rows measured so far are written).

``--dry-run`` validates the plan and prints what would be measured, without torch or a GPU (exit 2 when
no row could be, as the measuring run would stop).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._errors import DataError, PipeweaveError
from ._frame import row_list

if TYPE_CHECKING:
    from .hardware import GPUSpec

__all__ = [
    "MEASURABLE_FAMILIES",
    "LATENCY_DECIMALS",
    "TIMING_MODES",
    "cuda_graph_bench",
    "identify_gpu",
    "main",
    "measure_plan",
    "measurement_method",
    "read_plan",
]

#: family -> the call that is timed (the ``timing`` label is ``<mode>_<call>``, e.g. ``cuda_graph_torch_matmul``)
MEASURABLE_FAMILIES: dict[str, str] = {
    "gemm": "torch_matmul",
    "fused_moe": "sglang_fused_moe",
}
#: how a launch is timed: ``cuda_graph`` (default: replays of a CUDA graph of back-to-back launches, warm L2, no
#: launch overhead, the convention of the AIConfigurator rows the shipped model's GEMM and fused-MoE predictions
#: follow) or ``do_bench`` (``triton.testing.do_bench``: one launch at a time, L2 flushed before each, launch
#: overhead included; the convention of a Triton autotune cache)
TIMING_MODES = ("cuda_graph", "do_bench")
#: families with a reason why they are not measured here
_NOT_MEASURED_FAMILIES: dict[str, str] = {
    "moe_w13": "family moe_w13 is the W13 GEMM alone; SGLang's fused_moe would time both GEMMs and the activation",
}
_MOE_FAMILIES = ("fused_moe",)
_TORCH_DTYPE = {"bfloat16": "bfloat16", "float16": "float16", "fp8": "float8_e4m3fn"}
#: dtypes each family is measured in (fp8: gemm only, torch._scaled_mm with per-tensor scales)
_FAMILY_DTYPES = {"gemm": ("bfloat16", "float16", "fp8"), "fused_moe": ("bfloat16", "float16")}
#: decimals of ``latency_us`` (0.1 ns: far below do_bench's CUDA-event resolution)
LATENCY_DECIMALS = 4
_SUFFIXES = (".csv", ".parquet")
EXIT_OK, EXIT_ROWS_NOT_MEASURED, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


# --------------------------------------------------------------------------- plan
def read_plan(path: str, gpus: Mapping[str, GPUSpec] | None = None) -> pd.DataFrame:
    """Validated launch rows of a plan file (CSV/parquet, canonical columns; latency not needed).

    ``gpus`` maps names to GPUSpec for rows on GPUs outside the catalog (spec files)."""
    from .profiles import read_profiles

    try:
        return read_profiles(path, gpus=gpus, need_latency=False)
    except DataError as exc:
        if "unknown GPU" not in str(exc):
            raise
        raise DataError(
            str(exc).split("\n")[0],
            hint="give each GPU outside the catalog with --gpu-spec FILE.toml (the spec file the plan was made "
            "with, e.g. datasets/example_gpu_spec.toml), or fix those rows",
        ) from None


def _routing_alpha(value: Any) -> float:
    """Power-law exponent of a routing distribution name (:func:`pipeweave.frontend.distribution_alpha`; 0 for a
    blank cell, NaN for a name it does not know)."""
    from ._frame import is_missing
    from .frontend import distribution_alpha

    if is_missing(value):
        return 0.0
    try:
        return float(distribution_alpha(pd.Series([value], dtype=object))[0])
    except DataError:
        return float("nan")


def _check_timing(timing: str) -> str:
    if timing not in TIMING_MODES:
        raise DataError(f"unknown timing mode {timing!r}", hint=f"use one of {', '.join(TIMING_MODES)}")
    return timing


def measurement_method(plan: pd.DataFrame, timing: str = "cuda_graph") -> pd.Series:
    """Per row: the ``timing`` label it would be measured with (``<timing>_<call>``, see :data:`TIMING_MODES`),
    or ``"skip: <reason>"``."""
    _check_timing(timing)
    fam = plan["family"].astype(str)
    dtype = plan["dtype"].astype(str)
    out = fam.map({f: f"{timing}_{call}" for f, call in MEASURABLE_FAMILIES.items()}).fillna("")
    known = ", ".join(MEASURABLE_FAMILIES)
    out = out.where(out != "", "skip: family " + fam + f" has no measurement method here ({known})")
    for family, reason in _NOT_MEASURED_FAMILIES.items():
        out = out.where(fam != family, "skip: " + reason)
    allowed = fam.map(lambda f: _FAMILY_DTYPES.get(f, ()))
    ok_dt = np.array([d in a for d, a in zip(dtype, allowed, strict=True)], dtype=bool)
    bad_dt = ~ok_dt & ~out.str.startswith("skip").to_numpy()
    out = out.where(
        ~bad_dt, "skip: dtype " + dtype + " of " + fam + " is not measured here (" + allowed.map(", ".join) + ")"
    )
    fp8 = ((fam == "gemm") & (dtype == "fp8")).to_numpy() & ~out.str.startswith("skip").to_numpy()
    out = out.where(~fp8, f"{timing}_torch_scaled_mm")  # fp8 GEMMs run torch._scaled_mm, not torch.matmul
    if "distribution" in plan.columns:
        dist = plan["distribution"]
        alpha = np.array([_routing_alpha(v) for v in dist], dtype=float)
        skewed = (fam.isin(_MOE_FAMILIES).to_numpy() & (alpha != 0.0)) & ~out.str.startswith("skip").to_numpy()
        out = out.where(
            ~skewed,
            "skip: routing "
            + dist.astype(str)
            + " is not measured here (fused_moe routes by random gating, about balanced; only balanced rows)",
        )
    return out


# --------------------------------------------------------------------------- GPU identity
def _known_name(name: str, gpus: Mapping[str, GPUSpec]) -> str | None:
    """Catalog or spec-file GPU name of ``name`` (a name, alias or device string), or None."""
    from .hardware import match_gpu_name, resolve_gpu_name

    hit = match_gpu_name(name, gpus.values())
    if hit is not None:
        return hit
    try:
        return resolve_gpu_name(name)
    except DataError:
        return None


def identify_gpu(device_name: str, asserted: str | None = None, gpus: Mapping[str, GPUSpec] | None = None) -> str:
    """The GPU (catalog or spec-file name) that rows measured on the device ``device_name`` belong to.

    ``asserted``: the GPU the user says this is (for a device string that neither the catalog nor a
    spec file knows); refused when the device is known as another GPU."""
    gpus = dict(gpus or {})
    device = _known_name(device_name, gpus)
    if asserted is None:
        if device is None:
            raise DataError(
                f"this device is {device_name!r}, which is neither a catalog GPU nor a --gpu-spec GPU, so its "
                "rows could be labelled with another GPU's name",
                hint="pass --gpu NAME (the catalog or spec-file GPU this is, e.g. the plan's gpu) "
                "or --gpu-spec FILE.toml with the device name among its aliases",
            )
        return device
    said = _known_name(asserted, gpus)
    if said is None:
        raise DataError(
            f"--gpu {asserted!r} is neither a catalog GPU nor a --gpu-spec GPU",
            hint="run `pipeweave gpus` for the catalog names, or pass the spec file with --gpu-spec FILE.toml",
        )
    if device is not None and device != said:
        raise DataError(
            f"--gpu {asserted!r} says this is {said}, but the device {device_name!r} is {device}",
            hint=f"drop --gpu (the device is {device}), or run on a {said}",
        )
    return said


# --------------------------------------------------------------------------- output
def check_output(out: str, inputs: Iterable[str]) -> None:
    """Refuse an ``--out`` path that is not .csv/.parquet, is one of ``inputs`` or cannot be written."""
    from ._io import check_writable

    for src in inputs:
        same = Path(out).resolve() == Path(src).resolve()
        try:
            same = same or (os.path.exists(out) and os.path.exists(src) and os.path.samefile(src, out))
        except OSError:
            pass
        if same:
            raise DataError(
                f"--out {out!r} is the input file {src!r}; pipeweave never overwrites its input",
                hint="write to another file with --out, e.g. --out measured.csv",
            )
    if Path(out).suffix not in _SUFFIXES:
        raise DataError(
            f"--out {out!r}: a profile file must end in .csv or .parquet",
            hint=f"e.g. --out {Path(out).with_suffix('.csv').name}",
        )
    parent = Path(out).parent
    if not parent.is_dir():
        raise DataError(
            f"--out {out!r}: folder {str(parent)!r} does not exist", hint="create it first or choose another --out"
        )
    check_writable(out, "--out")


def _write(frame: pd.DataFrame, out: str) -> int:
    """Write the measured rows of ``frame`` to ``out`` atomically; the number written (0: nothing written)."""
    from .profiles import write_profiles

    done = frame[frame["latency_us"].notna()].drop(columns=["measure_note"], errors="ignore")
    if len(done):
        write_profiles(done, out)
    return len(done)


# --------------------------------------------------------------------------- measuring
def _gemm_call(row: pd.Series, device: str, torch: Any) -> Callable[[], Any]:
    dt = getattr(torch, _TORCH_DTYPE[str(row["dtype"])])
    m, n, k = (int(row[c]) for c in ("m", "n", "k"))
    if str(row["dtype"]) == "fp8":
        # fp8 e4m3 A[m, k] @ B[k, n] (B column-major, as cuBLASLt wants it), per-tensor scales, bf16 out
        a = torch.randn(m, k, device=device).to(dt)
        b = torch.randn(n, k, device=device).to(dt).t()
        one = torch.ones((), device=device, dtype=torch.float32)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    a = torch.randn(m, k, device=device, dtype=dt)
    b = torch.randn(k, n, device=device, dtype=dt)
    return lambda: torch.matmul(a, b)


def _int_or_1(v: Any) -> int:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 1
    return int(f) if math.isfinite(f) and f >= 1 else 1


def _moe_call(row: pd.Series, device: str, torch: Any, fused_moe: Callable[..., Any]) -> Callable[[], Any]:
    dt = getattr(torch, _TORCH_DTYPE[str(row["dtype"])])
    ep = _int_or_1(row.get("moe_ep_size", 1))
    tp = _int_or_1(row.get("moe_tp_size", 1))
    t, h, n, topk = (int(row[c]) for c in ("num_tokens", "hidden_size", "inter_size", "topk"))
    e = max(int(row["num_experts"]) // ep, 1)
    n = max(n // tp, 1)
    x = torch.randn(t, h, device=device, dtype=dt)
    w1 = torch.randn(e, 2 * n, h, device=device, dtype=dt) / h**0.5
    w2 = torch.randn(e, h, n, device=device, dtype=dt) / n**0.5
    gating = torch.randn(t, e, device=device, dtype=torch.float32)
    return lambda: fused_moe(x, w1, w2, gating, topk, True)


#: a CUDA graph holds about this much work (ms) per replay, and at most this many launches
_GRAPH_MS, _GRAPH_MAX_LAUNCHES = 1.0, 100


def cuda_graph_bench(fn: Callable[[], Any], torch: Any, warmup_ms: float = 25.0, rep_ms: float = 100.0) -> float:
    """Median time of one launch of ``fn``, ms, from replays of a CUDA graph of back-to-back launches.

    ``fn`` runs three times eagerly on a side stream first (cuBLAS picks its algorithm and allocates its
    workspace outside the capture), once more timed with CUDA events to size the graph: ``L`` launches, about
    1 ms of work (1 <= L <= 100). The graph is replayed for ``warmup_ms``, then each replay is timed with CUDA
    events for ``rep_ms`` (5 to 1000 replays); the result is the median replay time / ``L``. Consecutive
    launches find their inputs in L2 when they fit and pay no CPU launch overhead, as in the AIConfigurator
    collector's CUDA-graph timing (``timing = "cuda_graph"``)."""
    cuda = torch.cuda
    side = cuda.Stream()
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        for _ in range(3):
            fn()
    cuda.current_stream().wait_stream(side)
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    cuda.synchronize()
    one_ms = max(float(start.elapsed_time(end)), 1e-4)
    launches = int(min(_GRAPH_MAX_LAUNCHES, max(1, _GRAPH_MS // one_ms)))
    graph = cuda.CUDAGraph()
    with cuda.graph(graph):
        for _ in range(launches):
            fn()
    start.record()
    graph.replay()
    end.record()
    cuda.synchronize()
    replay_ms = max(float(start.elapsed_time(end)), 1e-4)
    for _ in range(max(1, int(warmup_ms / replay_ms))):
        graph.replay()
    n = int(min(1000, max(5, rep_ms / replay_ms)))
    starts = [cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [cuda.Event(enable_timing=True) for _ in range(n)]
    for a, b in zip(starts, ends, strict=True):
        a.record()
        graph.replay()
        b.record()
    cuda.synchronize()
    return float(np.median([a.elapsed_time(b) for a, b in zip(starts, ends, strict=True)])) / launches


def _load_torch() -> tuple[Any, Callable[..., Any]]:
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
    return torch, do_bench


def _load_fused_moe(rows: list[int]) -> Callable[..., Any]:
    try:
        from sglang.srt.layers.moe.fused_moe_triton import fused_moe
    except Exception as exc:  # noqa: BLE001  (sglang's import can fail in many ways; all mean "cannot measure")
        why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
        raise DataError(
            f"{row_list(rows)} (fused_moe) {'needs' if len(rows) == 1 else 'need'} sglang's Triton fused_moe, which does not import here ({why}); "
            "nothing was measured",
            hint="pip install sglang on this machine, or remove the fused_moe rows from the plan",
        ) from None
    moe_fn: Callable[..., Any] = fused_moe
    return moe_fn


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first[:200]}" if first else type(exc).__name__


def _print(*args: Any, file: Any = None) -> None:
    """print() that survives a closed pipe (``... | head``): further output to stdout is dropped."""
    stream = sys.stdout if file is None else file
    try:
        print(*args, file=stream, flush=True)
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())  # interpreter exit flushes into /dev/null, not the closed pipe
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured in tests)
        pass
    finally:
        os.close(devnull)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (lives until exit)


def measure_plan(
    plan: pd.DataFrame,
    *,
    device: str = "cuda",
    warmup_ms: int = 25,
    rep_ms: int = 100,
    gpu: str | None = None,
    gpus: Mapping[str, GPUSpec] | None = None,
    save: Callable[[pd.DataFrame], Any] | None = None,
    save_every_s: float = 60.0,
    timing: str = "cuda_graph",
) -> pd.DataFrame:
    """``plan`` with ``latency_us`` (median time of one launch, us, rounded to :data:`LATENCY_DECIMALS`; timed as
    ``timing`` says, one of :data:`TIMING_MODES`: :func:`cuda_graph_bench` or ``triton.testing.do_bench``), ``timing``
    and ``measure_note`` (None for measured rows, else why not: ``"skip: ..."`` by design,
    ``"not measured: ..."`` here: another GPU, a failure on the GPU, or interrupted).

    Everything is checked before timing anything: torch/triton, the CUDA device and which GPU it is
    (:func:`identify_gpu`; ``gpu`` asserts it, ``gpus`` adds spec-file GPUs), sglang for fused-MoE rows.
    A row that raises (e.g. CUDA out of memory) is reported on stderr and the run goes on; Ctrl-C stops
    it, the rest marked interrupted. ``save(frame)`` is called with the rows so far at least every
    ``save_every_s`` seconds while measuring (so a crash keeps them) and is the caller's to call at the end.
    """
    _check_timing(timing)
    torch, do_bench = _load_torch()
    dev_name = str(torch.cuda.get_device_name(device))
    device_gpu = identify_gpu(dev_name, gpu, gpus)
    method = measurement_method(plan, timing)
    note = method.where(method.str.startswith("skip"), None)
    other = (plan["gpu"].astype(str) != device_gpu).to_numpy() & note.isna().to_numpy()
    note = note.where(
        ~other, "not measured: the row is for " + plan["gpu"].astype(str) + f", this device is {device_gpu}"
    )
    notes: list[str | None] = [None if pd.isna(n) else str(n) for n in note]
    todo = [i for i, n in enumerate(notes) if n is None]
    if not todo:
        raise DataError(
            f"no row of the plan can be measured on this device ({dev_name!r} = {device_gpu}); "
            f"the plan's GPUs are {sorted(set(plan['gpu'].astype(str)))}, nothing was measured",
            hint="run it on the plan's GPU (pass --gpu NAME if the device name is wrong), or --dry-run to list "
            "what is measurable",
        )
    moe_rows = [i for i in todo if str(plan["family"].iloc[i]) in _MOE_FAMILIES]
    fused_moe = _load_fused_moe(moe_rows) if moe_rows else None
    lat = np.full(len(plan), np.nan)

    def frame() -> pd.DataFrame:
        timing = method.where(pd.Series(notes, index=plan.index).isna() & ~np.isnan(lat), None)
        return plan.assign(
            latency_us=np.round(lat, LATENCY_DECIMALS),
            timing=timing,
            measure_note=pd.Series(notes, index=plan.index, dtype=object),
        )

    for reason in dict.fromkeys(n for n in notes if n is not None and n.startswith("not measured")):
        rows = [i for i, n in enumerate(notes) if n == reason]
        _print(f"{row_list(rows)}: {reason}", file=sys.stderr)
    last_save = time.monotonic()
    for pos, i in enumerate(todo):  # one real launch per row: a Python loop is the point
        row = plan.iloc[i]
        fn: Callable[[], Any] | None = None
        try:
            if str(row["family"]) == "gemm":
                fn = _gemm_call(row, device, torch)
            else:
                fn = _moe_call(row, device, torch, fused_moe)  # type: ignore[arg-type]
            if timing == "cuda_graph":
                with torch.cuda.device(device):
                    ms = cuda_graph_bench(fn, torch, warmup_ms, rep_ms)
            else:
                ms = do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=(0.5, 0.2, 0.8))
            value = float(ms[0] if isinstance(ms, (list, tuple)) else ms) * 1000.0
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{timing} gave {value!r} us")
            lat[i] = value
            _print(f"row {i + 1}: {row['family']} {_shape(row)}: {round(value, LATENCY_DECIMALS):g} us")
        except KeyboardInterrupt:
            for j in todo[pos:]:
                notes[j] = "not measured: interrupted"
            _print(f"interrupted at row {i + 1}", file=sys.stderr)
            break
        except Exception as exc:  # noqa: BLE001  (one row's failure, e.g. CUDA OOM, must not lose the others)
            notes[i] = "not measured: " + _reason(exc)
            _print(f"row {i + 1}: not measured: {_reason(exc)}", file=sys.stderr)
        finally:
            fn = None  # free the inputs before the next row
            try:
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001,S110  (best effort after a CUDA error)
                pass
        try:
            if save is not None and time.monotonic() - last_save >= save_every_s and not np.isnan(lat).all():
                save(frame())
                last_save = time.monotonic()
        except KeyboardInterrupt:
            for j in todo[pos + 1 :]:
                notes[j] = "not measured: interrupted"
            _print(f"interrupted after row {i + 1}", file=sys.stderr)
            break
    return frame()


def _shape(row: pd.Series) -> str:
    from .sources import FAMILY_KEY_COLUMNS

    return " ".join(
        f"{c}={row[c]:g}"
        for c in FAMILY_KEY_COLUMNS.get(str(row["family"]), ())
        if c in row.index and isinstance(row[c], (int, float, np.integer, np.floating)) and np.isfinite(row[c])
    )


# --------------------------------------------------------------------------- command line
def _dry_run(plan: pd.DataFrame, method: pd.Series, gpu: str | None, gpus: Mapping[str, GPUSpec]) -> int:
    note = method.copy()
    said = identify_gpu(gpu, gpu, gpus) if gpu else None  # --gpu must name a known GPU
    if said is not None:
        other = (plan["gpu"].astype(str) != said) & ~method.str.startswith("skip")
        note = note.where(~other, "not measured: the row is for " + plan["gpu"].astype(str) + f", --gpu is {said}")
    for i in range(len(plan)):
        row = plan.iloc[i]
        _print(f"row {i + 1}: {row['gpu']} {row['family']} {row['dtype']} {_shape(row)} -> {note.iloc[i]}")
    ok = ~note.str.startswith(("skip", "not measured"))
    n_ok = int(ok.sum())
    _print(f"dry run: {n_ok} of {len(plan)} rows would be measured; nothing written")
    if n_ok:
        gpus_ok = sorted(set(plan.loc[ok, "gpu"].astype(str)))
        _print(
            f"measuring needs torch, triton and a CUDA GPU that is {' or '.join(gpus_ok)} (checked against "
            "torch.cuda.get_device_name(); --gpu NAME says which GPU it is if the catalog does not know its name)"
        )
    moe = [i for i in range(len(plan)) if ok.iloc[i] and str(plan["family"].iloc[i]) in _MOE_FAMILIES]
    if moe:
        try:
            here = importlib.util.find_spec("sglang") is not None
        except (ImportError, ValueError):
            here = False
        _print(
            f"{row_list(moe)} (fused_moe) {'needs' if len(moe) == 1 else 'need'} sglang on the GPU machine "
            f"({'installed here' if here else 'not installed here'})"
        )
    if not n_ok:  # the real run would refuse this plan: so does its dry run
        _print("nothing in this plan can be measured (see the rows above): the measuring run would stop with exit 2")
        return EXIT_ERROR
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pipeweave.measure", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("plan", help="plan file (pipeweave calibrate plan --out ...)")
    p.add_argument("--out", help="measured profile file to write (.csv/.parquet); required unless --dry-run")
    p.add_argument("--device", default="cuda", type=_cuda_device, help="torch device (default cuda; e.g. cuda:1)")
    p.add_argument(
        "--timing",
        choices=TIMING_MODES,
        default="cuda_graph",
        help="cuda_graph (default): replays of a CUDA graph of back-to-back launches (warm L2, no launch overhead; "
        "the convention of the shipped model's GEMM and fused-MoE rows, so a calibration corrects the model, not the "
        "timing method); do_bench: triton.testing.do_bench (L2 flushed, launch overhead included)",
    )
    p.add_argument("--warmup", type=_positive_ms, default=25, help="warmup, ms (default 25)")
    p.add_argument("--rep", type=_positive_ms, default=100, help="repetition time, ms (default 100)")
    p.add_argument(
        "--gpu",
        metavar="NAME",
        help="the GPU this device is (catalog name/alias, a --gpu-spec GPU or a spec file); default: from "
        "torch.cuda.get_device_name(). Only rows for this GPU are measured",
    )
    p.add_argument(
        "--gpu-spec",
        action="append",
        default=[],
        metavar="FILE",
        help="spec file (.toml/.json) of a GPU outside the catalog that plan rows name (repeatable)",
    )
    p.add_argument(
        "--save-every",
        type=float,
        default=60.0,
        metavar="S",
        help="write the rows measured so far every S seconds (default 60)",
    )
    p.add_argument("--dry-run", action="store_true", help="validate the plan and list what would be measured")
    return p


def _positive_ms(text: str) -> int:
    """A whole number of milliseconds >= 1 (argparse type of --warmup / --rep)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of milliseconds") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} ms: give at least 1 ms")
    return value


def _cuda_device(text: str) -> str:
    """``cuda`` or ``cuda:N`` (argparse type of --device): the helper times CUDA launches only."""
    import re

    if not re.fullmatch(r"cuda(:\d+)?", text.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a CUDA device (cuda or cuda:N)")
    return text.strip()


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring); returns the exit status."""
    try:
        return _main(_parser().parse_args(argv))
    except PipeweaveError as exc:
        _print(f"pipeweave.measure: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `... | head`: the reader left; exit quietly
        _silence_stdout()
        return EXIT_OK


def _main(args: argparse.Namespace) -> int:
    from .hardware import load_spec_file

    specs = [load_spec_file(f) for f in args.gpu_spec]
    gpu = args.gpu
    inputs = [args.plan, *args.gpu_spec]
    if gpu and Path(gpu).suffix.lower() in (".toml", ".json"):  # --gpu FILE.toml: a spec file names the GPU
        spec = load_spec_file(gpu)
        specs.append(spec)
        inputs.append(gpu)
        gpu = spec.name
    gpus = {s.name: s for s in specs}
    if args.out:
        check_output(args.out, inputs)
    if not args.save_every >= 0:
        raise DataError(f"--save-every must be >= 0 seconds, got {args.save_every}", hint="e.g. --save-every 60")
    plan = read_plan(args.plan, gpus or None)
    method = measurement_method(plan, args.timing)
    if args.dry_run:
        return _dry_run(plan, method, gpu, gpus)
    if not args.out:
        raise DataError("--out is required", hint="e.g. --out measured.csv (or pass --dry-run)")
    out = measure_plan(
        plan,
        device=args.device,
        warmup_ms=args.warmup,
        rep_ms=args.rep,
        gpu=gpu,
        gpus=gpus,
        save=lambda f: _write(f, args.out),
        save_every_s=args.save_every,
        timing=args.timing,
    )
    n = _write(out, args.out)
    notes = out["measure_note"].astype("string").fillna("")
    skipped = int(notes.str.startswith("skip").sum())
    failed = notes.str.startswith("not measured")
    interrupted = bool(notes.str.contains("not measured: interrupted", regex=False).any())
    where = f"to {args.out}" if n else f"(nothing written to {args.out})"
    _print(f"wrote {n} measured rows {where}; {skipped} skipped by design, {int(failed.sum())} not measured")
    if failed.any():
        _print(
            f"not measured: {row_list(np.flatnonzero(failed.to_numpy()))} (reasons above; the exit status is "
            f"{EXIT_INTERRUPTED if interrupted else EXIT_ROWS_NOT_MEASURED})",
            file=sys.stderr,
        )
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_ROWS_NOT_MEASURED if failed.any() else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
