"""fp8 GEMM variants on the 192 plan shapes, CUDA-graph timed with pipeweave.measure.cuda_graph_bench:
static = bf16 activation scaled and cast to e4m3 (fixed scale) then _scaled_mm; dynamic = per-tensor amax -> scale ->
cast, then _scaled_mm with that scale. The weight is fp8 beforehand in both (a linear layer's weights are stored
quantized). Usage: python3 fp8_variants.py plan.csv out.csv"""

import sys

import pandas as pd
import torch

from pipeweave.measure import cuda_graph_bench

plan = pd.read_csv(sys.argv[1])
e4 = torch.float8_e4m3fn
rows = []
for i, r in plan.iterrows():
    m, n, k = int(r.m), int(r.n), int(r.k)
    out = {"m": m, "n": n, "k": k}
    try:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda").to(e4).t()
        one = torch.ones((), device="cuda", dtype=torch.float32)
        inv = torch.full((), 0.5, device="cuda", dtype=torch.float32)

        def static(a=a, b=b, inv=inv, one=one):  # bound now (ruff B023); the run bound them by late lookup
            q = (a * inv).to(e4)
            return torch._scaled_mm(q, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

        def dynamic(a=a, b=b, one=one):
            amax = a.abs().amax().float()
            scale = (amax / 448.0).clamp(min=1e-12)
            q = (a / scale).to(e4)
            return torch._scaled_mm(q, b, scale_a=scale, scale_b=one, out_dtype=torch.bfloat16)

        out["static_us"] = cuda_graph_bench(static, torch, 10, 50) * 1000
        out["dynamic_us"] = cuda_graph_bench(dynamic, torch, 10, 50) * 1000
    except Exception as exc:  # noqa: BLE001
        out["error"] = f"{type(exc).__name__}: {str(exc)[:100]}"
    rows.append(out)
    torch.cuda.empty_cache()
    if i % 32 == 0:
        print(i, out, flush=True)
pd.DataFrame(rows).to_csv(sys.argv[2], index=False)
print("done", len(rows))
