"""Launchers for the Triton kernels: shape checks, launch grids, split-K sizing.

Shapes (all tensors on one device; CPU tensors only under ``TRITON_INTERPRET=1``):
- caches ``k_cache, v_cache``: ``[num_blocks, block_size, num_kv_heads, head_dim]``, head_dim contiguous
- ``block_tables``: int32 ``[batch, max_blocks]``; ``context_lens``: int32 ``[batch]`` (tokens in the
  cache per sequence, the new ones included)
- decode ``q``: ``[batch, num_q_heads, head_dim]``; extend ``q``: ``[total_new_tokens, num_q_heads, head_dim]``
  with ``query_start`` int32 ``[batch + 1]`` (sequence b's new tokens are rows query_start[b]:query_start[b+1])
"""

from __future__ import annotations

import math
import os

import torch
import triton

from gpu_backend import kernels


def interpreting() -> bool:
    """True when Triton runs kernels in its CPU interpreter (set before the kernels are defined)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def _check_cache(k_cache: torch.Tensor, v_cache: torch.Tensor) -> tuple[int, int, int, int]:
    if k_cache.dim() != 4 or k_cache.shape != v_cache.shape:
        raise ValueError(
            f"k_cache/v_cache: expected equal [num_blocks, block_size, kv_heads, head_dim] shapes, "
            f"got {tuple(k_cache.shape)} and {tuple(v_cache.shape)}"
        )
    if k_cache.stride(-1) != 1 or v_cache.stride(-1) != 1:
        raise ValueError("k_cache/v_cache: head_dim must be the contiguous dimension")
    return tuple(k_cache.shape)  # type: ignore[return-value]


def _check_tables(block_tables: torch.Tensor, context_lens: torch.Tensor, batch: int) -> None:
    if block_tables.dtype != torch.int32 or block_tables.dim() != 2 or block_tables.shape[0] != batch:
        raise ValueError(
            f"block_tables: expected int32 [{batch}, max_blocks], got {block_tables.dtype} {tuple(block_tables.shape)}"
        )
    if block_tables.stride(1) != 1:
        raise ValueError("block_tables: rows must be contiguous")
    if context_lens.dtype != torch.int32 or tuple(context_lens.shape) != (batch,):
        raise ValueError(
            f"context_lens: expected int32 [{batch}], got {context_lens.dtype} {tuple(context_lens.shape)}"
        )


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def split_plan(
    batch: int, kv_heads: int, max_context: int, block_n: int, num_splits: int | None, device: torch.device
) -> tuple[int, int]:
    """(num_splits, tokens_per_split): enough programs to fill the machine (flash-decoding), each
    split a whole number of BLOCK_N tiles; ``num_splits=1`` turns split-K off."""
    max_context = max(1, int(max_context))
    tiles = triton.cdiv(max_context, block_n)
    if num_splits is None:
        want = triton.cdiv(4 * _sm_count(device), max(1, batch * kv_heads))
        num_splits = max(1, min(want, tiles, 64))
    if num_splits < 1:
        raise ValueError(f"num_splits must be >= 1, got {num_splits}")
    tokens_per_split = triton.cdiv(tiles, min(num_splits, tiles)) * block_n
    return triton.cdiv(max_context, tokens_per_split), tokens_per_split


def paged_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    *,
    max_context: int | None = None,
    scale: float | None = None,
    num_splits: int | None = None,
    block_n: int | None = None,
    dynamic_loop: bool | None = None,
    out: torch.Tensor | None = None,
    num_warps: int = 4,
) -> torch.Tensor:
    """Decode attention for one new token per sequence over its paged KV; returns ``[batch, q_heads, head_dim]``."""
    num_blocks, block_size, kv_heads, head_dim = _check_cache(k_cache, v_cache)
    if q.dim() != 3 or q.shape[2] != head_dim or q.shape[1] % kv_heads:
        raise ValueError(f"q: expected [batch, q_heads (a multiple of {kv_heads}), {head_dim}], got {tuple(q.shape)}")
    if q.stride(-1) != 1:
        raise ValueError("q: head_dim must be contiguous")
    batch, q_heads, _ = q.shape
    _check_tables(block_tables, context_lens, batch)
    out = torch.empty_like(q) if out is None else out
    if batch == 0:
        return out
    if max_context is None:
        max_context = int(context_lens.max().item())
    block_n = block_n or (16 if interpreting() else 64)
    if dynamic_loop is None:
        dynamic_loop = not interpreting()
    group = q_heads // kv_heads
    splits, per_split = split_plan(batch, kv_heads, max_context, block_n, num_splits, q.device)
    scale_log2 = (scale if scale is not None else 1.0 / math.sqrt(head_dim)) * 1.4426950408889634
    common = dict(
        GROUP=group,
        GROUP_PAD=max(16, _pow2(group)),
        HEAD_DIM=head_dim,
        BLOCK_D=_pow2(head_dim),
        BLOCK_SIZE=block_size,
        BLOCK_N=block_n,
        DYNAMIC_LOOP=dynamic_loop,
        num_warps=num_warps,
    )
    if splits > 1:
        mid_o = torch.empty((batch, q_heads, splits, head_dim), dtype=torch.float32, device=q.device)
        mid_lse = torch.empty((batch, q_heads, splits), dtype=torch.float32, device=q.device)
    else:
        mid_o = mid_lse = out  # unused
    kernels.decode_split_kernel[(batch, kv_heads, splits)](
        q,
        k_cache,
        v_cache,
        block_tables,
        context_lens,
        out,
        mid_o,
        mid_lse,
        scale_log2,
        q.stride(0),
        q.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        v_cache.stride(0),
        v_cache.stride(1),
        v_cache.stride(2),
        block_tables.stride(0),
        out.stride(0),
        out.stride(1),
        mid_o.stride(0),
        mid_o.stride(1),
        mid_o.stride(2) if splits > 1 else 0,
        mid_lse.stride(0),
        mid_lse.stride(1),
        block_tables.shape[1],
        per_split,
        per_split // block_n,
        SPLIT=splits > 1,
        **common,
    )
    if splits > 1:
        kernels.decode_merge_kernel[(batch, q_heads)](
            mid_o,
            mid_lse,
            context_lens,
            out,
            mid_o.stride(0),
            mid_o.stride(1),
            mid_o.stride(2),
            mid_lse.stride(0),
            mid_lse.stride(1),
            out.stride(0),
            out.stride(1),
            per_split,
            splits,
            HEAD_DIM=head_dim,
            BLOCK_D=_pow2(head_dim),
            BLOCK_S=max(2, _pow2(splits)),
        )
    return out


def paged_extend(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    query_start: torch.Tensor,
    *,
    max_new: int | None = None,
    max_context: int | None = None,
    scale: float | None = None,
    block_m: int | None = None,
    block_n: int | None = None,
    dynamic_loop: bool | None = None,
    out: torch.Tensor | None = None,
    num_warps: int | None = None,
) -> torch.Tensor:
    """Causal prefill/extend attention: the new tokens (already in the cache) attend to the cached
    tokens and to themselves; returns ``[total_new_tokens, q_heads, head_dim]``."""
    num_blocks, block_size, kv_heads, head_dim = _check_cache(k_cache, v_cache)
    if q.dim() != 3 or q.shape[2] != head_dim or q.shape[1] % kv_heads:
        raise ValueError(f"q: expected [tokens, q_heads (a multiple of {kv_heads}), {head_dim}], got {tuple(q.shape)}")
    batch = block_tables.shape[0]
    _check_tables(block_tables, context_lens, batch)
    if query_start.dtype != torch.int32 or tuple(query_start.shape) != (batch + 1,):
        raise ValueError(
            f"query_start: expected int32 [{batch + 1}], got {query_start.dtype} {tuple(query_start.shape)}"
        )
    out = torch.empty_like(q) if out is None else out
    if batch == 0 or q.shape[0] == 0:
        return out
    if max_new is None:
        max_new = int((query_start[1:] - query_start[:-1]).max().item())
    if max_context is None:
        max_context = int(context_lens.max().item())
    group = q.shape[1] // kv_heads
    group_pad = _pow2(group)
    block_n = block_n or (16 if interpreting() else 64)
    block_m = block_m or (16 if interpreting() else max(16, 64 // group_pad))
    if dynamic_loop is None:
        dynamic_loop = not interpreting()
    scale_log2 = (scale if scale is not None else 1.0 / math.sqrt(head_dim)) * 1.4426950408889634
    if num_warps is None:
        num_warps = 8 if block_m * group_pad >= 128 else 4
    grid = (batch, kv_heads, triton.cdiv(max(1, max_new), block_m))
    kernels.extend_kernel[grid](
        q,
        k_cache,
        v_cache,
        block_tables,
        context_lens,
        query_start,
        out,
        scale_log2,
        q.stride(0),
        q.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        v_cache.stride(0),
        v_cache.stride(1),
        v_cache.stride(2),
        block_tables.stride(0),
        out.stride(0),
        out.stride(1),
        block_tables.shape[1],
        triton.cdiv(max(1, max_context), block_n),
        GROUP=group,
        GROUP_PAD=group_pad,
        HEAD_DIM=head_dim,
        BLOCK_D=_pow2(head_dim),
        BLOCK_SIZE=block_size,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        DYNAMIC_LOOP=dynamic_loop,
        num_warps=num_warps,
    )
    return out


def kv_write(
    k_new: torch.Tensor, v_new: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, slot_mapping: torch.Tensor
) -> None:
    """Write ``[tokens, kv_heads, head_dim]`` rows into the pool at ``slot_mapping`` (int64, -1 = skip)."""
    num_blocks, block_size, kv_heads, head_dim = _check_cache(k_cache, v_cache)
    if k_new.shape != v_new.shape or k_new.dim() != 3 or tuple(k_new.shape[1:]) != (kv_heads, head_dim):
        raise ValueError(f"k_new/v_new: expected [tokens, {kv_heads}, {head_dim}], got {tuple(k_new.shape)}")
    if k_new.stride() != v_new.stride() or k_new.stride(-1) != 1:
        raise ValueError("k_new/v_new: must share strides with head_dim contiguous")
    if slot_mapping.dtype != torch.int64 or tuple(slot_mapping.shape) != (k_new.shape[0],):
        raise ValueError(
            f"slot_mapping: expected int64 [{k_new.shape[0]}], got {slot_mapping.dtype} {tuple(slot_mapping.shape)}"
        )
    if k_new.shape[0] == 0:
        return
    kernels.kv_write_kernel[(k_new.shape[0],)](
        k_new,
        v_new,
        k_cache,
        v_cache,
        slot_mapping,
        k_new.stride(0),
        k_new.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        v_cache.stride(0),
        v_cache.stride(1),
        v_cache.stride(2),
        NUM_KV_HEADS=kv_heads,
        HEAD_DIM=head_dim,
        BLOCK_H=_pow2(kv_heads),
        BLOCK_D=_pow2(head_dim),
        BLOCK_SIZE=block_size,
    )


def slot_mapping(tables: list[list[int]], starts: list[int], counts: list[int], block_size: int) -> list[int]:
    """Pool slots of tokens ``starts[i] .. starts[i] + counts[i] - 1`` of each sequence, in order."""
    slots: list[int] = []
    for table, start, n in zip(tables, starts, counts, strict=True):
        for pos in range(start, start + n):
            blk = pos // block_size
            if blk >= len(table):
                raise ValueError(f"token {pos} needs block {blk} but the table has {len(table)} blocks")
            slots.append(table[blk] * block_size + pos % block_size)
    return slots
