"""Triton kernels: paged decode attention (GQA, split-K), paged prefill/extend attention, KV writes.

Cache layout: ``[num_blocks, block_size, num_kv_heads, head_dim]`` (head_dim contiguous); block
tables are int32 ``[batch, max_blocks]``; token ``j`` of a sequence lives in physical block
``table[j // block_size]`` at slot ``j % block_size``. Every index is cast to int64 before it is
multiplied by a stride, and every load is masked (an unmasked out-of-bounds load crashes the
interpreter and corrupts memory on the GPU).

Loop bounds: with ``DYNAMIC_LOOP`` the trip count comes from the loaded context length (the fast
path on a GPU); without it the loop runs to a bound passed from the host and masks the tail, which
is what the Triton interpreter needs (triton 3.6's interpreter with numpy >= 2.4 cannot loop to a
loaded scalar). Softmax runs in base 2 (``exp2``); log-sum-exps are stored in base 2.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def decode_split_kernel(
    Q,
    K,
    V,
    BlockTables,
    ContextLens,
    Out,
    MidO,
    MidLse,
    scale_log2,  # softmax scale * log2(e)
    stride_qb,
    stride_qh,
    stride_kb,
    stride_ks,
    stride_kh,
    stride_vb,
    stride_vs,
    stride_vh,
    stride_bt,
    stride_ob,
    stride_oh,
    stride_mb,
    stride_mh,
    stride_ms,  # MidO [batch, q_heads, splits, head_dim]
    stride_lb,
    stride_lh,  # MidLse [batch, q_heads, splits], splits contiguous
    max_blocks,  # columns of the block table
    tokens_per_split,  # a multiple of BLOCK_N
    static_iters,  # tokens_per_split // BLOCK_N: the trip count without DYNAMIC_LOOP
    GROUP: tl.constexpr,  # query heads per KV head
    GROUP_PAD: tl.constexpr,  # GROUP padded to >= 16 rows so tl.dot runs on the tensor cores
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,  # HEAD_DIM padded to a power of two
    BLOCK_SIZE: tl.constexpr,  # tokens per KV block (page)
    BLOCK_N: tl.constexpr,  # tokens per loop iteration (may span several pages)
    SPLIT: tl.constexpr,  # False: one split, normalise and write Out directly
    DYNAMIC_LOOP: tl.constexpr,
):
    """One program per (sequence, KV head, split): the GROUP query heads that share the KV head are
    packed as the rows of one tile, so each K/V tile is read once per group."""
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    s = tl.program_id(2)
    b64 = b.to(tl.int64)
    kvh64 = kvh.to(tl.int64)
    ctx = tl.load(ContextLens + b64)
    start = s * tokens_per_split
    end = tl.minimum(start + tokens_per_split, ctx)

    offs_g = tl.arange(0, GROUP_PAD)
    offs_d = tl.arange(0, BLOCK_D)
    mask_g = offs_g < GROUP
    mask_d = offs_d < HEAD_DIM
    heads = kvh64 * GROUP + offs_g.to(tl.int64)
    q_ptrs = Q + b64 * stride_qb + heads[:, None] * stride_qh + offs_d[None, :]
    q = tl.load(q_ptrs, mask=mask_g[:, None] & mask_d[None, :], other=0.0)

    m_i = tl.full([GROUP_PAD], float("-inf"), tl.float32)
    l_i = tl.zeros([GROUP_PAD], tl.float32)
    acc = tl.zeros([GROUP_PAD, BLOCK_D], tl.float32)
    if DYNAMIC_LOOP:
        n_iter = tl.cdiv(tl.maximum(end - start, 0), BLOCK_N)
    else:
        n_iter = static_iters
    for it in range(0, n_iter):
        offs_n = start + it * BLOCK_N + tl.arange(0, BLOCK_N)
        mask_n = offs_n < end
        logical = offs_n // BLOCK_SIZE
        phys = tl.load(BlockTables + b64 * stride_bt + logical, mask=mask_n & (logical < max_blocks), other=0)
        phys = phys.to(tl.int64)
        slot = (offs_n % BLOCK_SIZE).to(tl.int64)
        kv_mask = mask_n[:, None] & mask_d[None, :]
        k = tl.load(
            K + phys[:, None] * stride_kb + slot[:, None] * stride_ks + kvh64 * stride_kh + offs_d[None, :],
            mask=kv_mask,
            other=0.0,
        )
        v = tl.load(
            V + phys[:, None] * stride_vb + slot[:, None] * stride_vs + kvh64 * stride_vh + offs_d[None, :],
            mask=kv_mask,
            other=0.0,
        )
        qk = tl.dot(q, tl.trans(k)) * scale_log2  # [GROUP_PAD, BLOCK_N], fp32
        qk = tl.where(mask_n[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a fully masked tile gives no NaN
        alpha = tl.exp2(m_i - m_safe)
        p = tl.exp2(qk - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    has = l_i > 0.0
    out = acc / tl.where(has, l_i, 1.0)[:, None]
    store_mask = mask_g[:, None] & mask_d[None, :]
    if SPLIT:
        lse = tl.where(has, m_i + tl.log2(tl.where(has, l_i, 1.0)), float("-inf"))
        s64 = s.to(tl.int64)
        base = b64 * stride_mb + heads * stride_mh + s64 * stride_ms
        tl.store(MidO + base[:, None] + offs_d[None, :], out, mask=store_mask)
        tl.store(MidLse + b64 * stride_lb + heads * stride_lh + s64, lse, mask=mask_g)
    else:
        o_ptrs = Out + b64 * stride_ob + heads[:, None] * stride_oh + offs_d[None, :]
        tl.store(o_ptrs, out.to(Out.dtype.element_ty), mask=store_mask)


@triton.jit
def decode_merge_kernel(
    MidO,
    MidLse,
    ContextLens,
    Out,
    stride_mb,
    stride_mh,
    stride_ms,
    stride_lb,
    stride_lh,
    stride_ob,
    stride_oh,
    tokens_per_split,
    num_splits,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_S: tl.constexpr,  # num_splits padded to a power of two
):
    """Log-sum-exp merge of the splits of one (sequence, query head); empty splits weigh zero."""
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1).to(tl.int64)
    ctx = tl.load(ContextLens + b)
    valid = tl.cdiv(ctx, tokens_per_split)
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    mask_s = (offs_s < num_splits) & (offs_s < valid)
    mask_d = offs_d < HEAD_DIM
    offs_s64 = offs_s.to(tl.int64)
    base = b * stride_mb + h * stride_mh + offs_s64 * stride_ms
    lse = tl.load(MidLse + b * stride_lb + h * stride_lh + offs_s64, mask=mask_s, other=float("-inf"))
    o = tl.load(MidO + base[:, None] + offs_d[None, :], mask=mask_s[:, None] & mask_d[None, :], other=0.0)
    m = tl.max(lse, 0)
    m_safe = tl.where(m == float("-inf"), 0.0, m)
    w = tl.exp2(lse - m_safe)
    total = tl.sum(w, 0)
    out = tl.sum(o * w[:, None], 0) / tl.where(total > 0.0, total, 1.0)
    tl.store(Out + b * stride_ob + h * stride_oh + offs_d, out.to(Out.dtype.element_ty), mask=mask_d)


@triton.jit
def extend_kernel(
    Q,
    K,
    V,
    BlockTables,
    ContextLens,
    QueryStart,
    Out,
    scale_log2,
    stride_qt,
    stride_qh,
    stride_kb,
    stride_ks,
    stride_kh,
    stride_vb,
    stride_vs,
    stride_vh,
    stride_bt,
    stride_ot,
    stride_oh,
    max_blocks,
    static_iters,  # cdiv(max context, BLOCK_N): the trip count without DYNAMIC_LOOP
    GROUP: tl.constexpr,
    GROUP_PAD: tl.constexpr,  # next power of two >= GROUP
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    BLOCK_M: tl.constexpr,  # new tokens per program (rows = BLOCK_M * GROUP_PAD)
    BLOCK_N: tl.constexpr,
    DYNAMIC_LOOP: tl.constexpr,
):
    """Causal prefill/extend: the new tokens of a sequence (already written to the cache) sit at
    positions ctx - n_new .. ctx - 1 and attend to every cached token at or before their own.
    One program per (sequence, KV head, tile of BLOCK_M new tokens); row r is token r // GROUP_PAD
    of the tile and query head r % GROUP_PAD of the group."""
    b = tl.program_id(0).to(tl.int64)
    kvh = tl.program_id(1).to(tl.int64)
    mt = tl.program_id(2)
    ctx = tl.load(ContextLens + b)
    q_lo = tl.load(QueryStart + b)
    q_hi = tl.load(QueryStart + b + 1)
    n_new = q_hi - q_lo

    ROWS: tl.constexpr = BLOCK_M * GROUP_PAD
    rows = tl.arange(0, ROWS)
    tok = mt * BLOCK_M + rows // GROUP_PAD  # index among the new tokens
    g = rows % GROUP_PAD
    mask_r = (tok < n_new) & (g < GROUP)
    pos = ctx - n_new + tok  # absolute position of the query token
    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < HEAD_DIM
    heads = kvh * GROUP + g.to(tl.int64)
    q_rows = (q_lo + tok).to(tl.int64)
    q = tl.load(
        Q + q_rows[:, None] * stride_qt + heads[:, None] * stride_qh + offs_d[None, :],
        mask=mask_r[:, None] & mask_d[None, :],
        other=0.0,
    )

    m_i = tl.full([ROWS], float("-inf"), tl.float32)
    l_i = tl.zeros([ROWS], tl.float32)
    acc = tl.zeros([ROWS, BLOCK_D], tl.float32)
    last = tl.minimum(ctx, ctx - n_new + (mt + 1) * BLOCK_M)  # keys past the tile's last query are masked
    if DYNAMIC_LOOP:
        n_iter = tl.cdiv(tl.maximum(last, 0), BLOCK_N)
    else:
        n_iter = static_iters
    for it in range(0, n_iter):
        offs_n = it * BLOCK_N + tl.arange(0, BLOCK_N)
        mask_n = offs_n < last
        logical = offs_n // BLOCK_SIZE
        phys = tl.load(BlockTables + b * stride_bt + logical, mask=mask_n & (logical < max_blocks), other=0)
        phys = phys.to(tl.int64)
        slot = (offs_n % BLOCK_SIZE).to(tl.int64)
        kv_mask = mask_n[:, None] & mask_d[None, :]
        k = tl.load(
            K + phys[:, None] * stride_kb + slot[:, None] * stride_ks + kvh * stride_kh + offs_d[None, :],
            mask=kv_mask,
            other=0.0,
        )
        v = tl.load(
            V + phys[:, None] * stride_vb + slot[:, None] * stride_vs + kvh * stride_vh + offs_d[None, :],
            mask=kv_mask,
            other=0.0,
        )
        qk = tl.dot(q, tl.trans(k)) * scale_log2
        keep = mask_n[None, :] & (offs_n[None, :] <= pos[:, None]) & mask_r[:, None]
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_safe)
        p = tl.exp2(qk - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / tl.where(l_i > 0.0, l_i, 1.0)[:, None]
    tl.store(
        Out + q_rows[:, None] * stride_ot + heads[:, None] * stride_oh + offs_d[None, :],
        out.to(Out.dtype.element_ty),
        mask=mask_r[:, None] & mask_d[None, :],
    )


@triton.jit
def kv_write_kernel(
    Knew,
    Vnew,
    K,
    V,
    SlotMapping,
    stride_nt,
    stride_nh,  # Knew/Vnew [tokens, kv_heads, head_dim] share strides
    stride_kb,
    stride_ks,
    stride_kh,
    stride_vb,
    stride_vs,
    stride_vh,
    NUM_KV_HEADS: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    """One program per new token: copy its K and V rows into slot ``SlotMapping[t]`` of the pool
    (slot = physical block * block_size + offset); a negative slot is skipped (padding)."""
    t = tl.program_id(0).to(tl.int64)
    slot = tl.load(SlotMapping + t).to(tl.int64)
    valid = slot >= 0
    blk = tl.where(valid, slot // BLOCK_SIZE, 0)
    off = tl.where(valid, slot % BLOCK_SIZE, 0)
    offs_h = tl.arange(0, BLOCK_H).to(tl.int64)
    offs_d = tl.arange(0, BLOCK_D)
    valid_h = (offs_h < NUM_KV_HEADS) & ((offs_h * 0 + slot) >= 0)  # a vector: scalar masks trip the interpreter
    mask = valid_h[:, None] & (offs_d[None, :] < HEAD_DIM)
    src = t * stride_nt + offs_h[:, None] * stride_nh + offs_d[None, :]
    k = tl.load(Knew + src, mask=mask, other=0.0)
    v = tl.load(Vnew + src, mask=mask, other=0.0)
    tl.store(K + blk * stride_kb + off * stride_ks + offs_h[:, None] * stride_kh + offs_d[None, :], k, mask=mask)
    tl.store(V + blk * stride_vb + off * stride_vs + offs_h[:, None] * stride_vh + offs_d[None, :], v, mask=mask)


@triton.jit
def read_sweep_kernel(X, Partial, n, iters, BLOCK: tl.constexpr):
    """Bandwidth probe: program p reads tiles p, p + P, p + 2P, ... of X (grid-stride, masked) and
    writes one partial sum, so almost every byte moved is a read."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(0, iters):
        offs = (pid + i * nprog).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(X + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(Partial + pid, tl.sum(acc, 0))
