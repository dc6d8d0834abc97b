"""``python -m pipeweave.measure``: checks before measuring, per-row failures, GPU identity, output.

The run path is exercised with fake ``torch`` / ``triton.testing`` / ``sglang`` modules put in
``sys.modules`` (the helper itself was run on an H200: experiments/device_h200). Every plan below is a tiny hand-made set of launch rows, and the fake ``do_bench``
returns made-up constants (0.1234 ms, chosen because 0.1234 * 1000 is 123.39999999999999 in floating
point): none of these numbers is a measurement.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import types
from pathlib import Path

import pandas as pd
import pytest

from pipeweave import measure
from pipeweave.measure import cuda_graph_bench, identify_gpu, main, measurement_method

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "datasets" / "example_gpu_spec.toml"  # the repository's example spec file (RTX-4090)


class _OOM(RuntimeError):
    """Stands in for torch.OutOfMemoryError (a RuntimeError subclass)."""


class _Tensor:
    def __init__(self, *shape: int) -> None:
        self.shape = shape

    def __truediv__(self, other: object) -> _Tensor:
        return self

    def to(self, dtype: object) -> _Tensor:
        return self

    def t(self) -> _Tensor:
        return _Tensor(*reversed(self.shape))


class FakeGPU:
    """Fake torch + triton.testing.do_bench: records calls, fails on chosen GEMM m values."""

    def __init__(
        self, device_name: str = "NVIDIA B200", oom_m: tuple[int, ...] = (), interrupt_m: tuple[int, ...] = ()
    ):
        self.device_name = device_name
        self.oom_m = oom_m
        self.interrupt_m = interrupt_m
        self.calls: list[tuple] = []
        self.on_call = None  # optional hook(call_number) run inside do_bench

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        torch = types.ModuleType("torch")
        torch.bfloat16, torch.float16, torch.float32 = "bf16", "fp16", "fp32"
        torch.OutOfMemoryError = _OOM
        torch.Tensor = _Tensor  # libraries that look for torch arrays (scipy's array API helpers) read it
        torch.randn = lambda *shape, device=None, dtype=None: _Tensor(*shape)
        torch.matmul = lambda a, b: ("gemm", a.shape[0], a.shape[1], b.shape[1])
        torch.float8_e4m3fn = "fp8"
        torch.ones = lambda *shape, device=None, dtype=None: _Tensor(*shape)
        torch._scaled_mm = lambda a, b, scale_a, scale_b, out_dtype: ("fp8_gemm", a.shape[0], a.shape[1], b.shape[1])
        torch.cuda = types.SimpleNamespace(
            is_available=lambda: True,
            get_device_name=lambda d=None: self.device_name,
            empty_cache=lambda: None,
            device=lambda d: contextlib.nullcontext(),
        )
        triton = types.ModuleType("triton")
        testing = types.ModuleType("triton.testing")
        testing.do_bench = self.do_bench
        triton.testing = testing
        monkeypatch.setitem(sys.modules, "torch", torch)
        monkeypatch.setitem(sys.modules, "triton", triton)
        monkeypatch.setitem(sys.modules, "triton.testing", testing)
        # the CUDA-graph timer (tested on its own below) stands in like do_bench: one call per row
        monkeypatch.setattr(measure, "cuda_graph_bench", self.graph_bench)
        self.modes: list[str] = []

    def graph_bench(self, fn, torch, warmup_ms, rep_ms):
        self.modes.append("cuda_graph")
        return self._time(fn)[0]

    def do_bench(self, fn, warmup, rep, quantiles):
        self.modes.append("do_bench")
        return self._time(fn)

    def _time(self, fn):
        call = fn()
        self.calls.append(call)
        if self.on_call is not None:
            self.on_call(len(self.calls))
        if call[0] == "gemm" and call[1] in self.oom_m:
            raise _OOM("CUDA out of memory. Tried to allocate 64.00 GiB\nmore lines of detail")
        if call[0] == "gemm" and call[1] in self.interrupt_m:
            raise KeyboardInterrupt
        return [0.1234, 0.12, 0.13]  # made-up ms, not a measurement


def install_sglang(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake sglang whose fused_moe returns a marker (no kernel runs)."""
    names = [
        "sglang",
        "sglang.srt",
        "sglang.srt.layers",
        "sglang.srt.layers.moe",
        "sglang.srt.layers.moe.fused_moe_triton",
    ]
    for name in names:
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules[names[-1]].fused_moe = lambda x, w1, w2, gating, topk, renorm: ("moe", x.shape[0], topk)


def gemm_plan(path: Path, ms: list[int], gpu: str | list[str] = "B200") -> Path:
    # hand-made GEMM launch rows (no latencies)
    gpus = gpu if isinstance(gpu, list) else [gpu] * len(ms)
    pd.DataFrame({"gpu": gpus, "family": "gemm", "dtype": "bfloat16", "m": ms, "n": 256, "k": 512}).to_csv(
        path, index=False
    )
    return path


def moe_plan(path: Path, distributions: list[str], family: str = "fused_moe") -> Path:
    # hand-made rows: one GEMM, then fused-MoE launches with the given routing
    rows = [{"gpu": "B200", "family": "gemm", "dtype": "bfloat16", "m": 128, "n": 256, "k": 512}]
    rows += [
        {
            "gpu": "B200",
            "family": family,
            "dtype": "bfloat16",
            "num_tokens": 64,
            "hidden_size": 1024,
            "inter_size": 512,
            "topk": 2,
            "num_experts": 8,
            "distribution": d,
        }
        for d in distributions
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


# --------------------------------------------------------------------------- output path
def test_out_equal_to_plan_is_refused_and_plan_kept(tmp_path, capsys):
    plan = gemm_plan(tmp_path / "plan.csv", [128])
    before = plan.read_bytes()
    for same in (str(plan), str(tmp_path / "." / "plan.csv")):
        assert main([str(plan), "--out", same]) == 2
        err = capsys.readouterr().err
        assert "is the input file" in err and "--out" in err and "Traceback" not in err
    assert plan.read_bytes() == before


@pytest.mark.parametrize(
    ("out", "words"),
    [("m.txt", ".csv or .parquet"), ("no_such_dir/m.csv", "does not exist")],
)
def test_bad_out_is_refused_before_anything_is_timed(tmp_path, capsys, monkeypatch, out, words):
    gpu = FakeGPU()
    gpu.install(monkeypatch)
    plan = gemm_plan(tmp_path / "plan.csv", [128, 256])
    assert main([str(plan), "--out", str(tmp_path / out)]) == 2
    assert words in capsys.readouterr().err
    assert gpu.calls == []


# --------------------------------------------------------------------------- requirements before measuring
def test_missing_sglang_is_refused_before_any_gemm_is_timed(tmp_path, capsys, monkeypatch):
    gpu = FakeGPU()
    gpu.install(monkeypatch)
    monkeypatch.setitem(sys.modules, "sglang", None)  # import sglang -> ImportError
    plan = moe_plan(tmp_path / "plan.csv", ["balanced", "balanced"])
    out = tmp_path / "m.csv"
    assert main([str(plan), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "rows 2-3 (fused_moe) need sglang" in err and "nothing was measured" in err
    assert gpu.calls == [] and not out.exists()


# --------------------------------------------------------------------------- per-row failures, saving
def test_oom_row_is_reported_and_the_others_are_written(tmp_path, capsys, monkeypatch):
    gpu = FakeGPU(oom_m=(4096,))
    gpu.install(monkeypatch)
    plan = gemm_plan(tmp_path / "plan.csv", [128, 4096, 256])
    out = tmp_path / "m.csv"
    assert main([str(plan), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "row 2: not measured: _OOM: CUDA out of memory. Tried to allocate 64.00 GiB" in err
    assert "Traceback" not in err and "more lines of detail" not in err
    got = pd.read_csv(out)
    assert got["m"].tolist() == [128, 256]
    assert set(got["timing"]) == {"cuda_graph_torch_matmul"}
    assert "measure_note" not in got.columns
    text = out.read_text()
    assert "123.4" in text and "123.39999" not in text  # rounded to LATENCY_DECIMALS


def test_rows_are_saved_while_measuring_and_after_ctrl_c(tmp_path, capsys, monkeypatch):
    gpu = FakeGPU(interrupt_m=(999,))
    gpu.install(monkeypatch)
    out = tmp_path / "m.csv"
    seen: dict[int, int] = {}

    def peek(n: int) -> None:  # what a crash at call n would leave on disk
        seen[n] = len(pd.read_csv(out)) if out.exists() else 0

    gpu.on_call = peek
    plan = gemm_plan(tmp_path / "plan.csv", [128, 256, 999, 512])
    assert main([str(plan), "--out", str(out), "--save-every", "0"]) == 130
    assert seen == {1: 0, 2: 1, 3: 2}  # saved after each row (--save-every 0)
    assert pd.read_csv(out)["m"].tolist() == [128, 256]  # row 4 never started
    err = capsys.readouterr().err
    assert "interrupted at row 3" in err and "rows 3-4" in err
    assert not list(tmp_path.glob(".m.csv*"))  # no temporary file left behind


# --------------------------------------------------------------------------- which GPU
def test_rows_for_another_gpu_are_never_measured(tmp_path, capsys, monkeypatch):
    gpu = FakeGPU(device_name="NVIDIA H100 80GB HBM3")
    gpu.install(monkeypatch)
    out = tmp_path / "m.csv"
    only_b200 = gemm_plan(tmp_path / "b200.csv", [128, 256])
    assert main([str(only_b200), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no row of the plan can be measured on this device" in err and "['B200']" in err and "H100-SXM" in err
    assert gpu.calls == [] and not out.exists()

    mixed = gemm_plan(tmp_path / "mixed.csv", [128, 256, 512], gpu=["B200", "H100", "B200"])
    assert main([str(mixed), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "rows 1, 3: not measured: the row is for B200, this device is H100-SXM" in err
    got = pd.read_csv(out)
    assert got["gpu"].tolist() == ["H100-SXM"] and got["m"].tolist() == [256]


def test_unknown_device_name_needs_gpu_flag(tmp_path, capsys, monkeypatch):
    gpu = FakeGPU(device_name="Mystery Accelerator 9000")
    gpu.install(monkeypatch)
    plan = gemm_plan(tmp_path / "plan.csv", [128])
    out = tmp_path / "m.csv"
    assert main([str(plan), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "'Mystery Accelerator 9000'" in err and "--gpu NAME" in err and gpu.calls == []
    assert main([str(plan), "--out", str(out), "--gpu", "B200"]) == 0
    assert pd.read_csv(out)["gpu"].tolist() == ["B200"]


def test_gpu_flag_cannot_relabel_a_known_device(tmp_path, capsys, monkeypatch):
    FakeGPU(device_name="NVIDIA H100 80GB HBM3").install(monkeypatch)
    plan = gemm_plan(tmp_path / "plan.csv", [128])
    assert main([str(plan), "--out", str(tmp_path / "m.csv"), "--gpu", "B200"]) == 2
    assert "says this is B200, but the device 'NVIDIA H100 80GB HBM3' is H100-SXM" in capsys.readouterr().err


def test_identify_gpu_uses_catalog_aliases_and_spec_aliases():
    from pipeweave.hardware import load_spec_file

    spec = load_spec_file(SPEC)
    assert identify_gpu("NVIDIA H100 80GB HBM3") == "H100-SXM"
    assert identify_gpu("NVIDIA GeForce RTX 4090", gpus={spec.name: spec}) == "RTX-4090"
    with pytest.raises(Exception, match="neither a catalog GPU"):
        identify_gpu("NVIDIA GeForce RTX 4090")


# --------------------------------------------------------------------------- spec-file GPUs
def test_spec_file_gpu_plan_needs_and_accepts_gpu_spec(tmp_path, capsys, monkeypatch):
    plan = gemm_plan(tmp_path / "plan.csv", [128, 256], gpu="RTX-4090")
    assert main([str(plan), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "unknown GPU 'RTX-4090'" in err and "--gpu-spec" in err
    assert main([str(plan), "--dry-run", "--gpu-spec", str(SPEC)]) == 0
    assert "2 of 2 rows would be measured" in capsys.readouterr().out

    FakeGPU(device_name="NVIDIA GeForce RTX 4090").install(monkeypatch)
    out = tmp_path / "m.csv"
    assert main([str(plan), "--out", str(out), "--gpu-spec", str(SPEC)]) == 0
    assert pd.read_csv(out)["gpu"].tolist() == ["RTX-4090", "RTX-4090"]
    # --gpu FILE.toml works too, and a spec file is an input that --out may not overwrite
    assert main([str(plan), "--out", str(out), "--gpu", str(SPEC)]) == 0
    spec = tmp_path / "my_gpu.toml"  # a copy: the check must never get a chance to touch the repository's file
    spec.write_bytes(SPEC.read_bytes())
    before = spec.read_bytes()
    assert main([str(plan), "--out", str(spec), "--gpu-spec", str(spec)]) == 2
    assert "is the input file" in capsys.readouterr().err and spec.read_bytes() == before


# --------------------------------------------------------------------------- routing, families
def test_power_law_moe_rows_are_skipped_not_mislabelled(tmp_path, capsys, monkeypatch):
    plan = moe_plan(tmp_path / "plan.csv", ["balanced", "power_law_1.2"])
    assert main([str(plan), "--dry-run"]) == 0
    out_text = capsys.readouterr().out
    assert "row 3:" in out_text and "skip: routing power_law_1.2 is not measured here" in out_text
    assert "2 of 3 rows would be measured" in out_text and "row 2 (fused_moe) needs sglang" in out_text

    gpu = FakeGPU()
    gpu.install(monkeypatch)
    install_sglang(monkeypatch)
    out = tmp_path / "m.csv"
    assert main([str(plan), "--out", str(out)]) == 0  # a skip by design is not a failure
    got = pd.read_csv(out)
    assert got["family"].tolist() == ["gemm", "fused_moe"]
    assert got["distribution"].dropna().tolist() == ["balanced"]
    assert got["timing"].tolist() == ["cuda_graph_torch_matmul", "cuda_graph_sglang_fused_moe"]
    assert ("moe", 64, 2) in gpu.calls


def test_fp8_gemm_rows_run_scaled_mm(tmp_path, monkeypatch):
    gpu = FakeGPU()
    gpu.install(monkeypatch)
    plan = tmp_path / "plan.csv"
    rows = [{"gpu": "B200", "family": "gemm", "dtype": d, "m": 64, "n": 256, "k": 512} for d in ("fp8", "bfloat16")]
    pd.DataFrame(rows).to_csv(plan, index=False)
    out = tmp_path / "m.csv"
    assert main([str(plan), "--out", str(out)]) == 0
    assert gpu.calls == [("fp8_gemm", 64, 512, 256), ("gemm", 64, 512, 256)]  # A[m, k] @ B[k, n] both times
    assert pd.read_csv(out)["timing"].tolist() == ["cuda_graph_torch_scaled_mm", "cuda_graph_torch_matmul"]


# --------------------------------------------------------------------------- timing modes
def test_timing_flag_picks_the_timer_and_labels_the_rows(tmp_path, capsys, monkeypatch):
    gpu = FakeGPU()
    gpu.install(monkeypatch)
    plan = gemm_plan(tmp_path / "plan.csv", [128, 256])
    out = tmp_path / "m.csv"
    assert main([str(plan), "--out", str(out)]) == 0
    assert gpu.modes == ["cuda_graph", "cuda_graph"]  # the default
    assert set(pd.read_csv(out)["timing"]) == {"cuda_graph_torch_matmul"}
    assert main([str(plan), "--out", str(out), "--timing", "do_bench"]) == 0
    assert gpu.modes[2:] == ["do_bench", "do_bench"]
    assert set(pd.read_csv(out)["timing"]) == {"do_bench_torch_matmul"}
    assert main([str(plan), "--dry-run", "--timing", "do_bench"]) == 0
    assert "-> do_bench_torch_matmul" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([str(plan), "--dry-run", "--timing", "events"])
    assert "invalid choice: 'events'" in capsys.readouterr().err
    with pytest.raises(measure.DataError, match="unknown timing mode 'events'"):
        measurement_method(measure.read_plan(str(plan)), "events")


class _Clock:
    """A fake CUDA clock for :func:`cuda_graph_bench`: each launch costs ``cost_ms`` (made up, checks the arithmetic)."""

    def __init__(self, cost_ms: float) -> None:
        self.t, self.cost_ms, self.eager, self.captured, self.replays = 0.0, cost_ms, 0, 0, 0
        self.capturing = False
        me = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.at = 0.0

            def record(self) -> None:
                self.at = me.t

            def elapsed_time(self, end: Event) -> float:
                return end.at - self.at

        class Graph:
            def replay(self) -> None:
                me.t += me.cost_ms * me.captured
                me.replays += 1

        @contextlib.contextmanager
        def graph(g: Graph):
            me.capturing = True
            yield
            me.capturing = False

        stream = types.SimpleNamespace(wait_stream=lambda other: None)
        self.torch = types.SimpleNamespace(
            cuda=types.SimpleNamespace(
                Stream=lambda: stream,
                current_stream=lambda: stream,
                stream=lambda s: contextlib.nullcontext(),
                Event=Event,
                synchronize=lambda: None,
                CUDAGraph=Graph,
                graph=graph,
            )
        )

    def launch(self) -> None:
        if self.capturing:
            self.captured += 1  # captured, not run
        else:
            self.t += self.cost_ms
            self.eager += 1


@pytest.mark.parametrize(("cost_ms", "launches"), [(0.004, 100), (0.3, 3), (5.0, 1)])
def test_cuda_graph_bench_times_one_launch_from_graph_replays(cost_ms, launches):
    clock = _Clock(cost_ms)
    got = cuda_graph_bench(clock.launch, clock.torch, warmup_ms=25, rep_ms=100)
    assert got == pytest.approx(cost_ms)  # replay time / launches per graph
    assert clock.eager == 4  # three warm-up launches outside the capture, one timed to size the graph
    assert clock.captured == launches  # about 1 ms of work per replay, 1 to 100 launches
    replay_ms = cost_ms * launches
    timed = min(1000, max(5, int(100 / replay_ms)))
    assert clock.replays == 1 + max(1, int(25 / replay_ms)) + timed


def test_moe_w13_rows_are_not_timed_with_the_whole_fused_moe(tmp_path):
    plan = moe_plan(tmp_path / "plan.csv", ["balanced"], family="moe_w13")
    from pipeweave.measure import read_plan

    method = measurement_method(read_plan(str(plan)))
    assert method.iloc[0] == "cuda_graph_torch_matmul"
    assert method.iloc[1].startswith("skip: family moe_w13 is the W13 GEMM alone")


# --------------------------------------------------------------------------- broken pipe
class _ClosedPipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_dry_run_into_a_closed_pipe_exits_quietly(tmp_path, monkeypatch, capsys):
    plan = gemm_plan(tmp_path / "plan.csv", [128, 256])
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main([str(plan), "--dry-run"]) == 0
    assert capsys.readouterr().err == ""


def test_dry_run_piped_into_head_has_no_traceback(tmp_path):
    plan = gemm_plan(tmp_path / "plan.csv", list(range(1, 3001)))  # more output than a pipe buffer holds
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeweave.measure", str(plan), "--dry-run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert first.startswith(b"row 1: B200 gemm") and "Traceback" not in err and "BrokenPipe" not in err


@pytest.mark.parametrize(
    "flags, needle",
    [
        (["--warmup", "-1"], "give at least 1 ms"),
        (["--rep", "0"], "give at least 1 ms"),
        (["--device", "bogus"], "not a CUDA device"),
    ],
)
def test_timing_flags_are_checked(tmp_path, capsys, flags, needle):
    plan = gemm_plan(tmp_path / "plan.csv", [128])
    with pytest.raises(SystemExit) as info:
        main([str(plan), "--dry-run", *flags])
    assert info.value.code == 2 and needle in capsys.readouterr().err
