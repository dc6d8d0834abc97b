"""ncu target: a few bf16 / fp32 GEMM launches and the Triton matmul at a fixed config, each launched once."""

import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mm_kernel import matmul_kernel  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
dev = "cuda"
r = lambda *s, dt=torch.bfloat16: torch.randn(*s, device=dev, dtype=dt)  # noqa: E731
for m, n, k in [(4096, 4096, 4096), (8192, 4096, 4096), (128, 8192, 4096), (16, 4096, 4096)]:
    torch.mm(r(m, k), r(k, n))
torch.mm(r(1024, 1024, dt=torch.float32), r(1024, 1024, dt=torch.float32))
M, N, K = 4096, 4096, 4096
a, b = r(M, K), r(K, N)
c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
matmul_kernel[grid](
    a,
    b,
    c,
    M,
    N,
    K,
    a.stride(0),
    a.stride(1),
    b.stride(0),
    b.stride(1),
    c.stride(0),
    c.stride(1),
    BLOCK_SIZE_M=128,
    BLOCK_SIZE_N=128,
    BLOCK_SIZE_K=64,
    GROUP_SIZE_M=8,
    num_warps=8,
    num_stages=3,
)
torch.cuda.synchronize()
print("done", file=sys.stderr)
