"""Device capture for pipeweave (H200): a Kineto trace, Triton autotune caches, the pipeweave autotune hook live.

Usage: TRITON_CACHE_DIR=/tmp/tcache python3 capture.py OUTDIR
"""

import json
import os
import sys
import time
import traceback

import torch
import triton

out = sys.argv[1] if len(sys.argv) > 1 and __name__ == "__main__" else "/tmp/cap"
dev = "cuda"
t0 = time.time()


def log(*a):
    print(f"[{time.time() - t0:6.1f}s]", *a, flush=True)


# ----------------------------------------------------------------------------- 1. Kineto trace
def kineto():
    from torch.profiler import ProfilerActivity, profile

    torch.backends.cuda.matmul.allow_tf32 = False
    bf, hf, f32 = torch.bfloat16, torch.float16, torch.float32
    r = lambda *s, dt=bf: torch.randn(*s, device=dev, dtype=dt)  # noqa: E731
    a1, b1 = r(4096, 4096), r(4096, 4096)
    a2, b2 = r(128, 4096), r(4096, 8192)
    a3, b3 = r(1, 4096), r(4096, 4096)
    ah, bh, ch = r(2048, 2048, dt=hf), r(2048, 2048, dt=hf), r(2048, dt=hf)
    x, w, bias = r(2, 512, 4096), r(11008, 4096), r(11008)
    qa, qb = r(8, 512, 64), r(8, 64, 512)
    fa, fb = r(1024, 1024, dt=f32), r(1024, 1024, dt=f32)
    ma, mb = r(1024, 2048), r(2048, 3072)
    s_in = r(4096, 4096)
    fp8 = None
    try:
        e4 = torch.float8_e4m3fn
        fa8 = torch.randn(4096, 4096, device=dev).to(e4)
        fb8 = torch.randn(4096, 4096, device=dev).to(e4).t()  # column-major for _scaled_mm
        one = torch.tensor(1.0, device=dev)
        fp8 = (fa8, fb8, one)
    except Exception as exc:  # noqa: BLE001
        log("fp8 setup failed:", exc)

    def work():
        torch.mm(a1, b1)
        torch.mm(a2, b2)
        torch.mm(a3, b3)
        torch.addmm(ch, ah, bh)
        torch.nn.functional.linear(x, w, bias)
        torch.nn.functional.linear(x, w)
        torch.bmm(qa, qb)
        torch.mm(fa, fb)
        torch.matmul(ma, mb)
        torch.softmax(s_in, dim=-1)
        if fp8 is not None:
            try:
                torch._scaled_mm(fp8[0], fp8[1], scale_a=fp8[2], scale_b=fp8[2], out_dtype=bf)
            except Exception as exc:  # noqa: BLE001
                log("scaled_mm failed:", exc)

    for _ in range(3):
        work()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for _ in range(3):
            work()
        torch.cuda.synchronize()
    path = os.path.join(out, "kineto_h200.json")
    prof.export_chrome_trace(path)
    log("kineto trace", path, os.path.getsize(path), "bytes")


# ----------------------------------------------------------------------------- 2. Triton matmul
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mm_kernel import matmul_kernel  # noqa: E402

CONFIGS = [
    triton.Config(
        {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8}, num_warps=w, num_stages=s
    )
    for bm in (64, 128)
    for bn in (64, 128, 256)
    for bk in (32, 64)
    for w in (4, 8)
    for s in (3, 4)
]
SHAPES2 = [
    (m, n, k) for m in (1, 8, 32, 64, 256, 512, 2048, 8192) for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))
]
SHAPES = [
    (4096, 4096, 4096),
    (128, 8192, 4096),
    (16, 4096, 4096),
    (2048, 14336, 4096),
    (1024, 1024, 1024),
    (8192, 8192, 1024),
]


def launch(kern, M, N, K):
    a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    b = torch.randn(K, N, device=dev, dtype=torch.bfloat16)
    c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)  # noqa: E731
    kern[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    err = (c.float() - ref).abs().max().item() / max(ref.abs().max().item(), 1e-6)
    return err


def autotune_all(shapes=None):
    kern = triton.autotune(configs=CONFIGS, key=["M", "N", "K"], cache_results=True, warmup=10, rep=50)(matmul_kernel)
    res = []
    for M, N, K in shapes or SHAPES:
        t = time.time()
        err = launch(kern, M, N, K)
        best = kern.best_config
        res.append({"shape": [M, N, K], "tune_s": time.time() - t, "best": str(best), "rel_err": err})
        log("exhaustive", M, N, K, f"{time.time() - t:.1f}s", best, f"err {err:.2e}")
    return res


def autotune_hook():
    from pipeweave.triton import perf_model

    res = []
    for top_k in (4,):
        pm = perf_model(family="gemm")  # GPU from torch.cuda.get_device_name()
        kern = triton.autotune(
            configs=CONFIGS, key=["M", "N", "K"], prune_configs_by={"perf_model": pm, "top_k": top_k}, warmup=10, rep=50
        )(matmul_kernel)
        for M, N, K in SHAPES:
            t = time.time()
            err = launch(kern, M, N, K)
            timings = {str(c): v for c, v in getattr(kern, "configs_timings", {}).items()}
            res.append(
                {
                    "top_k": top_k,
                    "shape": [M, N, K],
                    "tune_s": time.time() - t,
                    "best": str(kern.best_config),
                    "benched": timings,
                    "rel_err": err,
                }
            )
            log("hook", top_k, M, N, K, f"{time.time() - t:.1f}s", kern.best_config)
    return res


if __name__ == "__main__":
    os.makedirs(out, exist_ok=True)
    steps = {
        "kineto": kineto,
        "autotune_all": autotune_all,
        "autotune_hook": autotune_hook,
        "autotune_all2": lambda: autotune_all(SHAPES2),
    }
    summary = {}
    for name in sys.argv[2:] or list(steps):
        log("step", name)
        try:
            summary[name] = steps[name]()
        except Exception:  # noqa: BLE001
            summary[name] = {"error": traceback.format_exc()}
            log(name, "FAILED\n", traceback.format_exc())
        with open(os.path.join(out, "capture_summary.json"), "w") as f:
            json.dump(summary, f, indent=1, default=str)
    # the autotune cache files, one per tuning key
    n = 0
    for root, _, files in os.walk(os.environ.get("TRITON_CACHE_DIR", "/tmp/tcache")):
        for fn in files:
            if fn.endswith(".autotune.json"):
                n += 1
                with open(os.path.join(root, fn)) as src, open(os.path.join(out, f"at{n:02d}_{fn}"), "w") as dst:
                    dst.write(src.read())
    log("copied", n, "autotune files")
