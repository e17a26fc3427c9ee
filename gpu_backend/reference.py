"""Plain torch references (float64 by default) for the kernels: gather each sequence's KV through its
block table, then causal softmax attention. Slow and obviously right; the tests compare against it."""

from __future__ import annotations

import math

import torch


def gather_kv(cache: torch.Tensor, table: list[int] | torch.Tensor, length: int) -> torch.Tensor:
    """The first ``length`` tokens of one sequence as ``[length, kv_heads, head_dim]``."""
    block_size = cache.shape[1]
    n_blocks = -(-length // block_size)
    idx = torch.as_tensor(list(table)[:n_blocks], dtype=torch.long, device=cache.device)
    return cache.index_select(0, idx).reshape(-1, cache.shape[2], cache.shape[3])[:length]


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, q_pos: torch.Tensor, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """``q [n, Hq, D]`` at absolute positions ``q_pos`` over ``k, v [L, Hkv, D]``, key j visible iff j <= pos."""
    hq, hkv = q.shape[1], k.shape[1]
    rep = hq // hkv
    qf = q.to(dtype)
    kf = k.to(dtype).repeat_interleave(rep, dim=1)
    vf = v.to(dtype).repeat_interleave(rep, dim=1)
    scores = torch.einsum("nhd,lhd->hnl", qf, kf) / math.sqrt(q.shape[-1])
    keys = torch.arange(k.shape[0], device=q.device)
    visible = keys[None, :] <= q_pos.to(q.device)[:, None]
    scores = scores.masked_fill(~visible[None], float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return torch.einsum("hnl,lhd->nhd", probs, vf)


def paged_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    tables: list[list[int]],
    context_lens: list[int],
    query_lens: list[int],
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Reference for both kernels: sequence b owns rows sum(query_lens[:b]) .. of ``q``; its new tokens
    are its last ``query_lens[b]`` positions (decode: query_lens all 1)."""
    outs = []
    row = 0
    for table, ctx, n in zip(tables, context_lens, query_lens, strict=True):
        k = gather_kv(k_cache, table, ctx)
        v = gather_kv(v_cache, table, ctx)
        pos = torch.arange(ctx - n, ctx)
        outs.append(attention(q[row : row + n], k, v, pos, dtype))
        row += n
    return torch.cat(outs) if outs else q.new_zeros((0, *q.shape[1:]), dtype=dtype)
