"""Two small Triton kernels for trying `pipeweave diagnose / explain / sass --kernel FILE:NAME`.

They are the kernels the README and the commands' --help examples use; pipeweave compiles them for
the chosen GPU's architecture on this machine (needs the ``triton`` package, no GPU).

- ``add_relu``: ``out = max(x + y, 0)`` over ``n`` elements, ``BLOCK`` elements per program.
- ``matmul_kernel``: ``C = A @ B`` for row-major, contiguous ``A[M, K]``, ``B[K, N]``, ``C[M, N]``,
  one ``BLOCK_SIZE_M x BLOCK_SIZE_N`` tile of C per program, programs grouped ``GROUP_SIZE_M`` tile
  rows at a time so neighbouring programs share tiles of B in L2.
"""

import triton
import triton.language as tl


@triton.jit
def add_relu(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside)
    y = tl.load(y_ptr + offs, mask=inside)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=inside)


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
):
    # which tile of C: programs walk GROUP_SIZE_M tile rows down a column of tiles before moving right
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    per_group = GROUP_SIZE_M * tiles_n
    first_m = (pid // per_group) * GROUP_SIZE_M
    rows_in_group = min(tiles_m - first_m, GROUP_SIZE_M)
    tile_m = first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group

    rm = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rn = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    rk = tl.arange(0, BLOCK_SIZE_K)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K))
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N))
        acc = tl.dot(a, b, acc)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))
