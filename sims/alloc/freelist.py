"""The free list of a contiguous heap: free blocks in address order, coalesced on free.

Invariant: free blocks never overlap and never touch (a freed range merges with the free
blocks on either side at once). ``starts`` (start -> size) and ``ends`` (end -> start) find both
neighbours in O(1). ``tree`` is a max segment tree over heap units (``align`` bytes each): the
leaf of a block's *last* unit holds its size, every other leaf 0. Blocks never overlap, so leaf
order is address order, and carving from a block's front, the common case, changes one leaf.
The tree answers first fit, next fit and worst fit with one O(log units) descent; ``by_size``
(kept only for best fit) is the sorted list of size*2^k + start, so the smallest block that fits,
lowest address first, is one bisect. The tree is a flat list up to 2^20 leaves; above that a dict
of the nodes ever touched, so a 1 GiB heap at 1-byte units costs only what its free blocks reach.
"""

from __future__ import annotations

from bisect import bisect_left, insort

from sims.core.panel import Checkpointed

_DENSE_LEAVES = 1 << 20


class _Sparse(dict):
    """A tree too wide for a list: nodes never written read as 0."""

    def __missing__(self, key: int) -> int:
        return 0

    def __deepcopy__(self, memo: dict) -> _Sparse:  # ints only: a C-speed copy that keeps the type
        return _Sparse(self)


class FreeList(Checkpointed):
    __slots__ = ("heap", "align", "width", "starts", "ends", "tree", "total", "by_size", "_shift")

    def __init__(self, heap: int, align: int = 1, *, by_size: bool = False) -> None:
        if isinstance(heap, bool) or not isinstance(heap, int) or heap < 1:
            raise ValueError(f"heap must be a positive number of bytes, got {heap!r}")
        if isinstance(align, bool) or not isinstance(align, int) or align < 1:
            raise ValueError(f"align must be a positive number of bytes, got {align!r}")
        if heap % align:
            raise ValueError(f"heap ({heap} bytes) must be a multiple of align ({align})")
        self.heap = heap
        self.align = align
        units = heap // align
        self.width = 1 << (units - 1).bit_length()  # leaves: a power of two >= units
        self.starts: dict[int, int] = {0: heap}  # start -> size, for each free block
        self.ends: dict[int, int] = {heap: 0}  # end -> start, for each free block
        # node -> largest free block ending under it; node 1 is the root, leaf u is width + u
        self.tree: list[int] | _Sparse = [0] * (2 * self.width) if self.width <= _DENSE_LEAVES else _Sparse()
        self.total = heap  # free bytes
        self._shift = heap.bit_length() + 1  # by_size key = size << shift | start
        self.by_size: list[int] | None = [heap << self._shift] if by_size else None
        self._set(heap, heap)

    # -- the tree ----------------------------------------------------------------------------
    def _set(self, end: int, size: int) -> None:
        """The leaf of the block ending at ``end`` := size, then fix ancestors until one
        already holds the right max."""
        t = self.tree
        i = end // self.align - 1 + self.width
        t[i] = v = size
        while i > 1:
            s = t[i ^ 1]
            if s > v:
                v = s
            i >>= 1
            if t[i] == v:
                return
            t[i] = v

    def _start_of(self, leaf: int) -> int:
        return self.ends[(leaf - self.width + 1) * self.align]

    def largest(self) -> int:
        return self.tree[1]

    def first_fit(self, need: int) -> int | None:
        """Start of the lowest-addressed free block of at least ``need`` bytes."""
        t = self.tree
        if t[1] < need:
            return None
        i, width = 1, self.width
        while i < width:
            i <<= 1
            if t[i] < need:
                i += 1
        return self._start_of(i)

    def fit_from(self, at: int, need: int) -> int | None:
        """Start of the lowest-addressed free block that fits and ends after byte ``at`` (the
        block holding ``at``, or the first one after it)."""
        t, width = self.tree, self.width
        i = at // self.align + width
        if t[i] >= need:
            return self._start_of(i)
        while i > 1:
            if not i & 1 and t[i + 1] >= need:
                i += 1
                break
            i >>= 1
        else:
            return None
        while i < width:
            i <<= 1
            if t[i] < need:
                i += 1
        return self._start_of(i)

    def worst_fit(self, need: int) -> int | None:
        """Start of the largest free block (lowest address among equals), if it fits."""
        t = self.tree
        best = t[1]
        if best < need:
            return None
        i, width = 1, self.width
        while i < width:
            i <<= 1
            if t[i] != best:
                i += 1
        return self._start_of(i)

    def best_fit(self, need: int) -> int | None:
        """Start of the smallest free block that fits (lowest address among equals)."""
        keys = self.by_size
        j = bisect_left(keys, need << self._shift)
        if j == len(keys):
            return None
        return keys[j] & ((1 << self._shift) - 1)

    # -- blocks ------------------------------------------------------------------------------
    def take(self, start: int, need: int) -> None:
        """Carve [start, start+need) from the front of the free block that starts at ``start``."""
        starts = self.starts
        size = starts.get(start, 0)
        if size < need:
            raise ValueError(f"free block at {start} has {size} bytes, fewer than {need}")
        del starts[start]
        self.total -= need
        end = start + size
        keys = self.by_size
        if keys is not None:
            del keys[bisect_left(keys, size << self._shift | start)]
        if size > need:
            rest = start + need
            starts[rest] = size - need
            self.ends[end] = rest
            if keys is not None:
                insort(keys, (size - need) << self._shift | rest)
        else:
            del self.ends[end]
        self._set(end, size - need)

    def release(self, start: int, size: int) -> None:
        """Free [start, start+size), merging with the free blocks that touch it. The merged
        block's leaf is set before the previous block's leaf is cleared, so that walk stops
        early."""
        starts, ends, keys = self.starts, self.ends, self.by_size
        self.total += size
        end = start + size
        prev = ends.pop(start, None)  # a free block ending where this one starts
        if prev is not None:
            del starts[prev]
            if keys is not None:
                del keys[bisect_left(keys, (start - prev) << self._shift | prev)]
        nsize = starts.pop(end, None)  # a free block starting where this one ends
        if nsize is not None:
            if keys is not None:
                del keys[bisect_left(keys, nsize << self._shift | end)]
            end += nsize
        first = start if prev is None else prev
        starts[first] = end - first
        ends[end] = first
        self._set(end, end - first)
        if keys is not None:
            insort(keys, (end - first) << self._shift | first)
        if prev is not None:
            self._set(start, 0)

    def extend(self, start: int, have: int, need: int) -> bool:
        """Grow the used block [start, start+have) in place to ``need`` bytes, if the free
        block right after it is large enough."""
        nxt = self.starts.get(start + have)
        if nxt is None or nxt < need - have:
            return False
        self.take(start + have, need - have)
        return True

    def blocks(self) -> list[tuple[int, int]]:
        """Free blocks as (start, size), in address order."""
        return sorted(self.starts.items())

    def check_invariants(self) -> None:
        blocks = self.blocks()
        end = -1
        for start, size in blocks:
            assert size > 0 and start % self.align == 0 and size % self.align == 0, (start, size)
            assert start > end, f"free blocks overlap or touch at {start}"
            end = start + size
            assert self.ends[end] == start
            assert self.tree[end // self.align - 1 + self.width] == size
        assert end <= self.heap
        assert len(self.ends) == len(blocks)
        assert self.total == sum(s for _, s in blocks)
        assert self.largest() == max((s for _, s in blocks), default=0)
        t = self.tree
        nodes = [(i, v) for i, v in (t.items() if isinstance(t, dict) else enumerate(t)) if v]
        leaves = sum(1 for i, _ in nodes if i >= self.width)
        assert leaves == len(blocks), "a tree leaf without a free block"
        for i, v in nodes:
            assert v > 0
            if i < self.width:
                assert v == max(t[2 * i], t[2 * i + 1]), f"tree node {i} is stale"
            if i > 1:
                assert t[i >> 1] >= v, f"tree node {i} is above its parent"
        if self.by_size is not None:
            assert self.by_size == sorted(s << self._shift | a for a, s in blocks)
