"""KV memory allocators: where a sequence's token state lives.

``contiguous_max`` / ``contiguous_pow2`` / ``contiguous_oracle`` reserve one contiguous range of
token slots per sequence (Orca-style) from an address-ordered first-fit free list; ``paged`` gives
each sequence a block table over a ``BlockPool`` (vLLM). The engine calls ``admit`` (reserve for the
tokens it is about to compute, reporting prefix-cache hits), ``grow`` (when a decode step would write
past ``seq.reserved``) and ``release``. Capacity running out is a value (False), never an exception.

Every allocator keeps three aggregates the engine turns into the memory breakdown:
``held`` (slots in use), ``reserved_sum`` (sum over sequences of seq.reserved; larger than held
only when paged blocks are shared) and ``useful_sum`` (sum of min(reserved, final length): the
reserved slots its own tokens will fill; the rest of a reservation is never used).
"""

from __future__ import annotations

from sims.engine.blocks import BlockPool, block_hashes


class Allocator:
    kind = ""
    paged = False

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity  # token slots
        self.held = 0
        self.reserved_sum = 0
        self.useful_sum = 0

    def _set_reserved(self, seq, new: int) -> None:
        self.reserved_sum += new - seq.reserved
        self.useful_sum += min(new, seq.final_len) - min(seq.reserved, seq.final_len)
        seq.reserved = new

    def external(self) -> int:
        return 0

    def check_sums(self, holders: list) -> None:
        """The aggregates behind the memory breakdown equal a recount over the holders."""
        assert self.reserved_sum == sum(s.reserved for s in holders), "reserved_sum drifted"
        assert self.useful_sum == sum(min(s.reserved, s.final_len) for s in holders), "useful_sum drifted"

    def register(self, seq, tokens: int) -> list[int]:
        """Cache the full blocks of ``seq`` below ``tokens`` (paged only); returns new hashes."""
        return []

    def cached_prefix(self, segments: list, prompt_len: int) -> int:
        """Prompt tokens a prefix-cache hit would cover now (paged with caching only)."""
        return 0

    def grow_one(self, seq) -> bool:
        """Room for one more token past ``seq.reserved`` (a decode crossing its reservation)."""
        return self.grow(seq, seq.reserved + 1)


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

    def admit(self, seq, target: int, hashes: list[int] | None, watermark: int) -> bool:
        size = min(self.capacity, self.reserve(seq, target + 1))
        start = self._take(size)
        if start < 0:
            return False
        seq.region = start
        self.held += size
        self._set_reserved(seq, size)
        return True

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
        return 0 if self.admit(child, child.prompt_len + 1, None, 0) else None

    @property
    def num_units(self) -> int:
        return self.capacity

    def usage(self) -> float:
        return self.held / self.capacity

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


class Paged(Allocator):
    """Block tables over a ``BlockPool``; with prefix caching, full blocks are hashed and shared."""

    kind = "paged"
    paged = True

    def __init__(self, capacity: int, block_size: int, caching: bool, eviction: str) -> None:
        self.B = block_size
        self.pool = BlockPool(capacity // block_size, eviction, caching)
        super().__init__(self.pool.num_blocks * block_size)
        self.kv_listener = None  # set by the engine: (kind, hashes) -> None
        self.hit_blocks = 0
        self._refused: tuple = ()  # (seq, target, watermark, cold, pool.gains) of the last refusal

    def admit(self, seq, target: int, hashes: list[int] | None, watermark: int) -> bool:
        """Blocks for ``target + 1`` tokens; leading full blocks found in the cache are shared
        (a hit covers at most floor((target - 1) / B) blocks, so one token is always computed)."""
        B = self.B
        pool = self.pool
        # A refused request refused again, with no block freed or cached since, is refused again:
        # a blocked queue head then costs O(1) a step instead of a prefix match (issue 14).
        r = self._refused
        if r and r[0] is seq and r[1:] == (target, watermark, not hashes, pool.gains):
            return False
        hits = pool.match(hashes[: (target - 1) // B]) if hashes else []
        need = -(-(target + 1) // B) - len(hits)
        if need > pool.num_free - pool.reusable(hits) - watermark:
            self._refused = (seq, target, watermark, not hashes, pool.gains)
            return False
        pool.touch(hits)
        evicted: list[int] = []
        fresh = pool.allocate(need, evicted)
        if evicted and self.kv_listener:
            self.kv_listener("removed", evicted)
        seq.blocks = hits + fresh
        seq.cached_blocks = len(hits)
        seq.computed = len(hits) * B
        self.held = pool.num_used * B
        self._set_reserved(seq, len(seq.blocks) * B)
        return True

    def grow_one(self, seq) -> bool:
        """One more block at the end of ``seq``'s table (the decode fast path)."""
        pool = self.pool
        q = pool.free_q
        if not len(q):
            return False
        b = q.pop()
        h = pool.block_hash[b]
        if h is not None:
            pool.block_hash[b] = None
            del pool.cached[h]
            pool.evictions += 1
            if self.kv_listener:
                self.kv_listener("removed", [h])
        pool.ref[b] = 1
        seq.blocks.append(b)
        B = self.B
        self.held += B
        self._set_reserved(seq, seq.reserved + B)
        return True

    def grow(self, seq, tokens: int) -> bool:
        need = -(-tokens // self.B) - len(seq.blocks)
        if need <= 0:
            return True
        evicted: list[int] = []
        fresh = self.pool.allocate(need, evicted)
        if fresh is None:
            return False
        if evicted and self.kv_listener:
            self.kv_listener("removed", evicted)
        seq.blocks += fresh
        self.held = self.pool.num_used * self.B
        self._set_reserved(seq, len(seq.blocks) * self.B)
        return True

    def fork(self, parent, child) -> int | None:
        """A parallel sample of ``parent`` shares its full blocks (refcounts) and gets a copy of
        the partly filled last one. Returns the blocks copied, or None when memory is short."""
        pool = self.pool
        full = parent.computed // self.B
        fresh = pool.allocate(len(parent.blocks) - full)
        if fresh is None:
            return None
        pool.touch(parent.blocks[:full])
        child.blocks = parent.blocks[:full] + fresh
        child.cached_blocks = min(full, parent.cached_blocks)
        self.held = pool.num_used * self.B
        self._set_reserved(child, len(child.blocks) * self.B)
        return len(fresh)

    def cells(self, holders: list, max_cells: int) -> list[int]:
        """At most ``max_cells`` evenly spaced blocks: the holding request's id, -3 when several
        share it, -2 when free but still a cached prefix block, -1 when free."""
        pool = self.pool
        owner = [-2 if h is not None else -1 for h in pool.block_hash]
        for q in holders:
            for b in q.blocks:
                owner[b] = -3 if pool.ref[b] > 1 else q.rid
        n = len(owner)
        return owner if n <= max_cells else [owner[i * n // max_cells] for i in range(max_cells)]

    def cached_prefix(self, segments: list, prompt_len: int) -> int:
        if not self.pool.caching:
            return 0
        hashes = block_hashes(segments, self.B, limit=(prompt_len - 1) // self.B)
        return len(self.pool.match(hashes)) * self.B

    @property
    def num_units(self) -> int:
        return self.pool.num_blocks

    def register(self, seq, tokens: int) -> list[int]:
        pool = self.pool
        if not pool.caching:
            return []
        full = min(tokens // self.B, len(seq.blocks))
        if full <= seq.cached_blocks:
            return []
        hashes = seq.full_hashes(self.B, full)
        stored = []
        for i in range(seq.cached_blocks, min(full, len(hashes))):
            if pool.cache(seq.blocks[i], hashes[i]):
                stored.append(hashes[i])
        seq.cached_blocks = full
        if stored and self.kv_listener:
            self.kv_listener("stored", stored)
        return stored

    def release(self, seq, tokens: int, cost: float = 0.0) -> None:
        self.register(seq, tokens)
        self.pool.free(seq.blocks, cost)
        seq.blocks = []
        seq.cached_blocks = 0
        self.held = self.pool.num_used * self.B
        self._set_reserved(seq, 0)

    def usage(self) -> float:
        return self.pool.num_used / self.pool.num_blocks

    def table(self, seq) -> list[int]:
        return seq.blocks

    def check_invariants(self, holders: list) -> None:
        pool = self.pool
        pool.check_invariants()
        refs = [0] * pool.num_blocks
        for s in holders:
            for b in s.blocks:
                assert pool.ref[b] > 0, f"request {s.rid}'s block table points at freed block {b}"
                refs[b] += 1
        assert refs == pool.ref, "refcounts differ from the block tables that point at them"
        assert self.held == pool.num_used * self.B
        self.check_sums(holders)


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


__all__ = ["ALLOCATORS", "Allocator", "Paged", "block_hashes", "make_allocator", "next_pow2"]
