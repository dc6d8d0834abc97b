"""The project's own Triton kernels (written from the published algorithms). Importing this imports triton.

* ``gemm_kernel``       tiled C = A @ B^T with grouped (GROUP_M) tile ordering; A (M, K), B (N, K) row-major.
* ``fused_moe_kernel``  fused-MoE expert GEMM: tokens pre-sorted by expert (``sorted_token_ids`` padded to
                        BLOCK_M per expert, ``expert_ids`` per M-block), A rows gathered by token id // top_k,
                        per-expert B (E, N, K), optional routed-weight multiply, bf16 or fp8 (per-tensor scales
                        in the epilogue, or [group_n, group_k] block scales inside the K loop).
* ``rmsnorm_kernel``    one program per row, two passes over the row (sum of squares, then scale).
* ``silu_mul_kernel``   out = silu(x[:, :N]) * x[:, N:].
* ``attention_kernel``  flash-attention forward (non-causal), online softmax with exp2.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def gemm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bn,
    stride_bk,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_M * grid_n
    group = pid // tiles_per_group
    first_m = group * GROUP_M
    rows_in_group = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_per_group) % rows_in_group
    pid_n = (pid % tiles_per_group) // rows_in_group

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            k_left = K - kk * BLOCK_K
            a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    out = acc.to(c_ptr.dtype.element_ty)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c_ptrs, out, mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def fused_moe_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    a_scale_ptr,
    b_scale_ptr,
    topk_weights_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_padded_ptr,
    N,
    K,
    EM,
    num_valid_tokens,
    stride_am,
    stride_ak,
    stride_be,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    stride_asm,
    stride_ask,
    stride_bse,
    stride_bsk,
    stride_bsn,
    group_n: tl.constexpr,
    group_k: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr,
    top_k: tl.constexpr,
    compute_type: tl.constexpr,
    use_fp8_w8a8: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    # which (M-block of sorted tokens, N-block) this program computes, with grouped ordering
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pids_per_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // pids_per_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_rows = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % pids_per_group) % group_rows)
    pid_n = (pid % pids_per_group) // group_rows

    # M-blocks past the padded token count have nothing to do
    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return

    offs_sorted = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_sorted).to(tl.int64)
    token_mask = offs_token < num_valid_tokens
    expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)

    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    # gathered activation rows: sorted id // top_k is the source token
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + expert * stride_be + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    if use_fp8_w8a8:
        if group_k > 0 and group_n > 0:
            a_scale_ptrs = a_scale_ptr + (offs_token // top_k) * stride_asm
            b_scale_ptrs = b_scale_ptr + expert * stride_bse + (offs_bn // group_n) * stride_bsn
        else:
            a_scale = tl.load(a_scale_ptr)
            b_scale = tl.load(b_scale_ptr + expert)

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=token_mask[:, None], other=0.0)
            b = tl.load(b_ptrs)
        else:
            k_left = K - kb * BLOCK_SIZE_K
            a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        if use_fp8_w8a8 and group_k > 0 and group_n > 0:
            k_group = (kb * BLOCK_SIZE_K) // group_k
            a_s = tl.load(a_scale_ptrs + k_group * stride_ask, mask=token_mask, other=0.0)
            b_s = tl.load(b_scale_ptrs + k_group * stride_bsk)
            acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    if MUL_ROUTED_WEIGHT:
        w = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
        acc = acc * w[:, None]
    if use_fp8_w8a8:
        if not (group_k > 0 and group_n > 0):
            acc = acc * a_scale * b_scale
    out = acc.to(compute_type)

    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, out, mask=token_mask[:, None] & (offs_cn[None, :] < N))


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    sq = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        sq += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def silu_mul_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    gate = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + N + cols, mask=mask, other=0.0).to(tl.float32)
    out = gate * tl.sigmoid(gate) * up
    tl.store(y_ptr + row * stride_y + cols, out.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def attention_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    sm_scale,
    seq_len,
    num_heads,
    stride_qb,
    stride_qh,
    stride_qs,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_ob,
    stride_oh,
    stride_os,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    EVEN_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // num_heads
    h = bh % num_heads
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :], mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): softmax with exp2
    for start_n in range(0, seq_len, BLOCK_N):
        cols = start_n + offs_n
        if EVEN_N:
            k = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None])
            v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :])
        else:
            k = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None], mask=cols[None, :] < seq_len, other=0.0)
            v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :], mask=cols[:, None] < seq_len, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        if not EVEN_N:
            qk = tl.where(cols[None, :] < seq_len, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    o_base = o_ptr + b * stride_ob + h * stride_oh
    tl.store(
        o_base + offs_m[:, None] * stride_os + offs_d[None, :],
        acc.to(o_ptr.dtype.element_ty),
        mask=offs_m[:, None] < seq_len,
    )
