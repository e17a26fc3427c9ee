"""The per-step device work: KV writes + paged attention per layer, or the
whole synthetic transformer (random weights, nothing downloaded) so step times include weight reads.

A step's sequences are ordered decode first (one new token each, the split-K decode kernel), then
extend/prefill (several new tokens, the causal extend kernel); query rows and KV-write slots follow
that same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

import torch

from gpu_backend import ops
from gpu_backend.spec import ModelShape


@dataclass(frozen=True)
class SeqStep:
    """One sequence in one engine step: ``new`` tokens computed, ``context`` tokens cached after it."""

    rid: int
    new: int
    context: int
    table: tuple[int, ...]  # physical block ids (paged) in logical order


class StepInputs:
    """The device tensors of one step, built once and shared by every layer."""

    def __init__(self, seqs: list[SeqStep], block_size: int, device: torch.device) -> None:
        self.decode = [s for s in seqs if s.new == 1]
        self.extend = [s for s in seqs if s.new > 1]
        order = self.decode + self.extend
        self.tokens = sum(s.new for s in order)
        slots = ops.slot_mapping(
            [list(s.table) for s in order], [s.context - s.new for s in order], [s.new for s in order], block_size
        )
        self.slots = torch.tensor(slots, dtype=torch.int64, device=device)
        self.n_decode = len(self.decode)
        self.dec_tables, self.dec_lens = _tables(self.decode, device)
        self.ext_tables, self.ext_lens = _tables(self.extend, device)
        qlens = [s.new for s in self.extend]
        self.query_start = torch.tensor([0, *accumulate(qlens)], dtype=torch.int32, device=device)
        self.max_dec_ctx = max((s.context for s in self.decode), default=0)
        self.max_ext_ctx = max((s.context for s in self.extend), default=0)
        self.max_new = max(qlens, default=0)
        self.last_rows = [r - 1 for r in accumulate(s.new for s in order)]  # sampling positions


def _tables(seqs: list[SeqStep], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    width = max((len(s.table) for s in seqs), default=1) or 1
    rows = [list(s.table) + [0] * (width - len(s.table)) for s in seqs]
    tables = torch.tensor(rows, dtype=torch.int32, device=device).reshape(len(seqs), width)
    lens = torch.tensor([s.context for s in seqs], dtype=torch.int32, device=device)
    return tables, lens


def attention(
    inp: StepInputs, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, out: torch.Tensor
) -> None:
    """Paged attention for every new token of the step: rows ``[:n_decode]`` decode, the rest extend."""
    nd = inp.n_decode
    if nd:
        ops.paged_decode(
            q[:nd], k_cache, v_cache, inp.dec_tables, inp.dec_lens, max_context=inp.max_dec_ctx, out=out[:nd]
        )
    if inp.extend:
        ops.paged_extend(
            q[nd:],
            k_cache,
            v_cache,
            inp.ext_tables,
            inp.ext_lens,
            inp.query_start,
            max_new=inp.max_new,
            max_context=inp.max_ext_ctx,
            out=out[nd:],
        )


class PagedAttentionModel:
    """Per layer: write the step's new K/V into the block pool, then paged attention. The pool holds
    ``num_blocks`` blocks for every layer: ``[layers, 2, num_blocks, block_size, kv_heads, head_dim]``.

    ``full=True`` adds the rest of a Llama-style layer around attention (RMSNorm, QKV/O projections,
    SwiGLU MLP; no rotary embedding) and the LM head on each sequence's last token."""

    def __init__(
        self,
        shape: ModelShape,
        num_blocks: int,
        block_size: int,
        device: torch.device,
        dtype: torch.dtype,
        full: bool = False,
        seed: int = 0,
    ) -> None:
        self.shape, self.block_size, self.device, self.dtype, self.full = shape, block_size, device, dtype, full
        self.gen = torch.Generator(device=device).manual_seed(seed)
        self.pool = self.new_store(num_blocks)
        self.weights = _weights(shape, device, dtype, self.gen) if full else None
        self._qkv = torch.empty(0, device=device, dtype=dtype)

    def _random_qkv(self, tokens: int) -> torch.Tensor:
        """Activations for attention-only replay: one random buffer, regrown when a step needs more."""
        s = self.shape
        width = (s.q_heads + 2 * s.kv_heads) * s.head_dim
        if self._qkv.shape[0] < tokens:
            self._qkv = torch.randn(
                (max(tokens, 2 * self._qkv.shape[0]), width), device=self.device, dtype=self.dtype, generator=self.gen
            )
        return self._qkv[:tokens]

    def step(self, inp: StepInputs) -> None:
        """One engine step over the shared block pool."""
        self.step_groups([(self.pool, inp)])

    def step_groups(self, groups: list[tuple[torch.Tensor, StepInputs]]) -> None:
        """One engine step whose sequences are split into groups, each with its own KV store
        (``[layers, 2, blocks, block_size, kv_heads, head_dim]``): one group for the paged pool, one
        per request for the contiguous baselines. Token rows follow the group order."""
        s = self.shape
        qd = s.q_heads * s.head_dim
        kd = s.kv_heads * s.head_dim
        t = sum(inp.tokens for _, inp in groups)
        if t == 0:
            return
        bounds = [0, *accumulate(inp.tokens for _, inp in groups)]
        w = self.weights
        x = None
        if w is not None:
            x = w["embed"][torch.arange(t, device=self.device) % s.vocab]
        out = torch.empty((t, s.q_heads, s.head_dim), device=self.device, dtype=self.dtype)
        for layer in range(s.layers):
            if w is None:
                qkv = self._random_qkv(t)
            else:
                qkv = torch.nn.functional.rms_norm(x, (s.hidden,)) @ w["qkv"][layer]
            q = qkv[:, :qd].view(t, s.q_heads, s.head_dim)
            k = qkv[:, qd : qd + kd].view(t, s.kv_heads, s.head_dim)
            v = qkv[:, qd + kd :].view(t, s.kv_heads, s.head_dim)
            for (store, inp), lo, hi in zip(groups, bounds, bounds[1:], strict=False):
                if hi == lo:
                    continue
                k_cache, v_cache = store[layer, 0], store[layer, 1]
                ops.kv_write(k[lo:hi], v[lo:hi], k_cache, v_cache, inp.slots)
                attention(inp, q[lo:hi], k_cache, v_cache, out[lo:hi])
            if w is not None:
                x = x + out.view(t, qd) @ w["o"][layer]
                h = torch.nn.functional.rms_norm(x, (s.hidden,))
                gu = h @ w["gate_up"][layer]
                x = x + (torch.nn.functional.silu(gu[:, : s.intermediate]) * gu[:, s.intermediate :]) @ w["down"][layer]
        if w is not None:
            rows = [lo + r for (_, inp), lo in zip(groups, bounds, strict=False) for r in inp.last_rows]
            last = torch.nn.functional.rms_norm(x[rows], (s.hidden,))
            torch.argmax(last @ w["lm_head"], dim=-1)

    def new_store(self, blocks: int) -> torch.Tensor:
        """A zeroed KV store of ``blocks`` blocks for every layer."""
        s = self.shape
        return torch.zeros(
            (s.layers, 2, blocks, self.block_size, s.kv_heads, s.head_dim), dtype=self.dtype, device=self.device
        )

    def ensure_blocks(self, needed: int, limit: int) -> None:
        """Grow the pool (doubling, at most ``limit`` blocks) until block ``needed - 1`` exists; the
        engine hands out low block ids first, so the pool tracks its peak use."""
        have = self.pool.shape[2]
        if needed <= have:
            return
        grown = self.new_store(min(limit, max(needed, 2 * have)))
        grown[:, :, :have] = self.pool
        self.pool = grown

    def kv_bytes(self) -> int:
        return self.pool.numel() * self.pool.element_size()


def _weights(s: ModelShape, device: torch.device, dtype: torch.dtype, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Random weights (std 0.02), stacked per layer: {embed, qkv, o, gate_up, down, lm_head}."""

    def rand(*shape: int) -> torch.Tensor:
        return (torch.randn(shape, device=device, dtype=dtype, generator=gen) * 0.02).contiguous()

    qkv = (s.q_heads + 2 * s.kv_heads) * s.head_dim
    return {
        "embed": rand(s.vocab, s.hidden),
        "qkv": rand(s.layers, s.hidden, qkv),
        "o": rand(s.layers, s.q_heads * s.head_dim, s.hidden),
        "gate_up": rand(s.layers, s.hidden, 2 * s.intermediate),
        "down": rand(s.layers, s.intermediate, s.hidden),
        "lm_head": rand(s.hidden, s.vocab),
    }
