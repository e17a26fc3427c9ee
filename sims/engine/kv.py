"""KV memory allocators: where a sequence's token state lives.

``contiguous_max`` / ``contiguous_pow2`` / ``contiguous_oracle`` reserve one contiguous range of
token slots per sequence (Orca-style) from an address-ordered first-fit free list; ``paged`` gives
each sequence a block table over a ``BlockPool`` (vLLM; ``paged.py``). The engine calls
``allocate_slots`` (reserve for the tokens it is about to compute, reporting prefix-cache hits in
the ``KVBlocks`` it returns), ``grow`` (when a decode step would write past ``seq.reserved``) and
``release``; it never touches a block itself (``allocator.py``). Capacity running out is a value
(None, False), never an exception.

Every allocator keeps three aggregates the engine turns into the memory breakdown:
``held`` (slots in use), ``reserved_sum`` (sum over sequences of seq.reserved; larger than held
only when paged blocks are shared) and ``useful_sum`` (sum of min(reserved, final length): the
reserved slots its own tokens will fill; the rest of a reservation is never used).
"""

from __future__ import annotations

from sims.engine.allocator import Allocator, KVBlocks
from sims.engine.blocks import block_hashes
from sims.engine.paged import Paged


class Contiguous(Allocator):
    """One contiguous slot range per sequence, first fit over an address-ordered free list that
    coalesces neighbours on free. ``reserve(seq, need)`` says how many slots to take."""

    def __init__(self, capacity: int, max_model_len: int) -> None:
        super().__init__(capacity)
        self.max_model_len = max_model_len
        self.holes: list[list[int]] = [[0, capacity]]  # [start, length], address order, disjoint
        self._largest = capacity

    def reserve(self, seq, need: int) -> int:
        raise NotImplementedError

    def _take(self, size: int) -> int:
        for i, (start, length) in enumerate(self.holes):
            if length >= size:
                if length == size:
                    del self.holes[i]
                else:
                    self.holes[i] = [start + size, length - size]
                self._largest = -1
                return start
        return -1

    def _give(self, start: int, size: int) -> None:
        holes = self.holes
        i = 0
        while i < len(holes) and holes[i][0] < start:
            i += 1
        holes.insert(i, [start, size])
        if i + 1 < len(holes) and holes[i][0] + holes[i][1] == holes[i + 1][0]:
            holes[i][1] += holes[i + 1][1]
            del holes[i + 1]
        if i > 0 and holes[i - 1][0] + holes[i - 1][1] == holes[i][0]:
            holes[i - 1][1] += holes[i][1]
            del holes[i]
        self._largest = -1

    def external(self) -> int:
        """Free slots outside the largest hole: free memory no large request can use."""
        if self._largest < 0:
            self._largest = max((h[1] for h in self.holes), default=0)
        return (self.capacity - self.held) - self._largest

    def allocate_slots(self, seq, target: int, hashes: list[int] | None, watermark: int) -> KVBlocks | None:
        size = min(self.capacity, self.reserve(seq, target + 1))
        start = self._take(size)
        if start < 0:
            return None
        seq.region = start
        self.held += size
        self._set_reserved(seq, size)
        return KVBlocks((), size, 0)

    def grow(self, seq, tokens: int) -> bool:
        size = min(self.capacity, self.reserve(seq, tokens))
        if size < tokens:
            return False
        old, old_size = seq.region, seq.reserved
        # extend in place when the next hole starts where this region ends
        for i, (start, length) in enumerate(self.holes):
            if start == old + old_size and length >= size - old_size:
                extra = size - old_size
                if length == extra:
                    del self.holes[i]
                else:
                    self.holes[i] = [start + extra, length - extra]
                self._largest = -1
                self.held += extra
                self._set_reserved(seq, size)
                return True
        start = self._take(size)
        if start < 0:
            return False
        self._give(old, old_size)  # copy, then free the old range
        seq.region = start
        self.held += size - old_size
        self._set_reserved(seq, size)
        return True

    def release(self, seq, tokens: int, cost: float = 0.0) -> None:
        if seq.reserved:
            self._give(seq.region, seq.reserved)
            self.held -= seq.reserved
            self._set_reserved(seq, 0)
        seq.region = -1

    def cells(self, holders: list, max_cells: int) -> list[int]:
        """At most ``max_cells`` evenly spaced token slots: the holding request's id, or -1 (free)."""
        n = self.capacity
        regions = sorted((q.region, q.reserved, q.rid) for q in holders if q.reserved)
        cells = []
        j = 0
        m = min(n, max_cells)
        for i in range(m):
            pos = i * n // m
            while j < len(regions) and regions[j][0] + regions[j][1] <= pos:
                j += 1
            cells.append(regions[j][2] if j < len(regions) and regions[j][0] <= pos else -1)
        return cells

    def fork(self, parent, child) -> int | None:
        """A parallel sample of ``parent``: a range of its own with room for its next token.
        Returns the blocks copied (0), or None when memory is short."""
        return None if self.allocate_slots(child, child.prompt_len + 1, None, 0) is None else 0

    @property
    def num_units(self) -> int:
        return self.capacity

    def table(self, seq) -> list[int]:
        return [seq.region, seq.reserved] if seq.reserved else []

    def check_invariants(self, holders: list) -> None:
        spans = sorted([h[0], h[1], -1] for h in self.holes)
        spans += sorted([s.region, s.reserved, s.rid] for s in holders if s.reserved)
        spans.sort()
        pos = 0
        for start, length, _ in spans:
            assert start == pos, f"KV slots overlap or leak at {start} (expected {pos})"
            assert length > 0
            pos = start + length
        assert pos == self.capacity, "contiguous ranges do not tile the KV memory"
        assert self.held == sum(s.reserved for s in holders)
        self.check_sums(holders)


class ContiguousMax(Contiguous):
    kind = "contiguous_max"

    def reserve(self, seq, need: int) -> int:
        return self.max_model_len


class ContiguousOracle(Contiguous):
    kind = "contiguous_oracle"

    def reserve(self, seq, need: int) -> int:
        return max(need, seq.final_len)


def next_pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


class ContiguousPow2(Contiguous):
    """``pow2_of = "output"`` (vLLM's Orca-Pow2 baseline): prompt + next_pow2(true output), at most
    2x over-reservation of the output. ``"context"``: next_pow2 of the context, doubled on overflow."""

    kind = "contiguous_pow2"

    def __init__(self, capacity: int, max_model_len: int, pow2_of: str = "output") -> None:
        super().__init__(capacity, max_model_len)
        if pow2_of not in ("output", "context"):
            raise ValueError(f"pow2_of must be 'output' or 'context', got {pow2_of!r}")
        self.pow2_of = pow2_of

    def reserve(self, seq, need: int) -> int:
        if self.pow2_of == "output":
            return max(need, min(self.max_model_len, seq.prompt_len + next_pow2(seq.output_len)))
        return min(self.max_model_len, next_pow2(need))


ALLOCATORS = ("contiguous_max", "contiguous_pow2", "contiguous_oracle", "paged")


def make_allocator(
    kind: str, capacity: int, *, block_size: int, max_model_len: int, caching: bool, eviction: str, pow2_of: str
) -> Allocator:
    if kind == "paged":
        return Paged(capacity, block_size, caching, eviction)
    if kind == "contiguous_max":
        return ContiguousMax(capacity, max_model_len)
    if kind == "contiguous_oracle":
        return ContiguousOracle(capacity, max_model_len)
    if kind == "contiguous_pow2":
        return ContiguousPow2(capacity, max_model_len, pow2_of)
    raise ValueError(f"unknown allocator {kind!r}; valid: {', '.join(ALLOCATORS)}")


__all__ = ["ALLOCATORS", "Allocator", "KVBlocks", "Paged", "block_hashes", "make_allocator", "next_pow2"]
