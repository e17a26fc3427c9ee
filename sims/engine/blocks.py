"""Prompt block hashes and the physical KV block pool with its prefix cache.

``block_hashes`` names every FULL block of a sequence by a chained 64-bit hash, so two prompts that
share their first k full blocks of content share their first k hashes (vLLM's prefix caching, and
the prefix-aware routers of the cluster topic, both key on these). ``BlockPool`` owns blocks
0..num_blocks-1: refcounts, the hash -> block map of cached blocks, and the free queue that decides
which cached block is reused (evicted) next.
"""

from __future__ import annotations

from sims.core.panel import Checkpointed
from sims.core.rng import mix64 as _mix
from sims.core.rng import stable_hash64
from sims.engine.freequeue import EVICTORS, LRUFree

_ROOT = 0x6B765F726F6F7421  # the parent hash of block 0
_M64 = 0xFFFFFFFFFFFFFFFF


def block_hashes(segments: list, block_size: int, limit: int | None = None) -> list[int]:
    """One chained stable hash per FULL block of the token sequence described by ``segments``
    (``[[content_id, tokens], ...]``): hash_i folds hash_{i-1} with each (content_id, start, end)
    piece covering block i (content ids through FNV-1a, folding through splitmix64; integers only,
    so identical in every runtime). A trailing partial block gets no hash. ``limit`` stops after
    that many blocks."""
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size!r}")
    out: list[int] = []
    if limit is not None and limit <= 0:
        return out
    want = limit if limit is not None else -1
    h = _ROOT
    filled = 0
    B = block_size
    for seg in segments:
        cid = stable_hash64(str(seg[0]))
        n = int(seg[1])
        pos = 0
        while pos < n:
            take = n - pos if n - pos < B - filled else B - filled
            h = _mix((h ^ cid) + (pos << 32) + pos + take)
            pos += take
            filled += take
            if filled == B:
                h = _mix(h + 0x9E3779B97F4A7C15)
                out.append(h)
                if len(out) == want:
                    return out
                filled = 0
    return out


class BlockPool(Checkpointed):
    """Physical KV blocks with refcounts and a prefix cache (checkpoints copy it field by field).

    Invariants: ``ref[b] >= 0``; a block is in the free queue iff ``ref[b] == 0``; free + used =
    total; ``cached[h] == b`` iff ``block_hash[b] == h >= 0``; ``lazy`` blocks carry a negative
    mark instead (cached, hash not computed yet: ``Paged``). A free block keeps its hash (a later
    request may hit it) until the free queue hands it out again: evicted on reuse.
    """

    def __init__(self, num_blocks: int, eviction: str = "lru", caching: bool = True) -> None:
        if num_blocks < 1:
            raise ValueError(f"num_blocks must be >= 1, got {num_blocks!r}")
        if eviction not in EVICTORS:
            raise ValueError(f"unknown eviction {eviction!r}; valid: {', '.join(sorted(EVICTORS))}")
        self.num_blocks = num_blocks
        self.caching = caching
        self.ref = [0] * num_blocks
        self.block_hash: list[int | None] = [None] * num_blocks
        self.cached: dict[int, int] = {}
        self.free_q = EVICTORS[eviction]()
        self.free_q.fill(num_blocks)
        self.num_free = num_blocks  # len(free_q), kept by every take and give (a hot read)
        self.shared = 0  # references beyond each block's first (0: no block has two holders)
        self.lazy = 0  # blocks marked cached with a negative mark: hashes not computed yet (paged.py)
        self.evictions = 0  # cached blocks handed out again
        # frees and new cache entries: the only changes that can let a refused admission through
        # (allocations, touches and evictions only take free blocks or hits away)
        self.gains = 0

    @property
    def num_cached(self) -> int:
        """Blocks holding a cached prefix (hashed, or marked to be hashed)."""
        return len(self.cached) + self.lazy

    @property
    def num_used(self) -> int:
        return self.num_blocks - self.num_free

    def match(self, hashes: list[int]) -> list[int]:
        """The blocks caching the longest prefix of ``hashes`` (stops at the first miss)."""
        out = []
        if not self.caching:
            return out
        cached = self.cached
        for h in hashes:
            b = cached.get(h)
            if b is None:
                break
            out.append(b)
        return out

    def reusable(self, blocks: list[int]) -> int:
        """How many of ``blocks`` sit in the free queue (touching them takes them out)."""
        if not blocks:
            return 0
        ref = self.ref
        return sum(1 for b in blocks if ref[b] == 0)

    def touch(self, blocks: list[int]) -> None:
        """Take a reference on cache hits."""
        ref = self.ref
        for b in blocks:
            if ref[b] == 0:
                self.free_q.remove(b)
                self.num_free -= 1
            else:
                self.shared += 1
            ref[b] += 1

    def allocate(self, n: int, evicted: list[int] | None = None) -> list[int] | None:
        """``n`` fresh blocks from the front of the free queue, or None if fewer are free.
        A reused block loses its cached hash (its hash is appended to ``evicted`` if given)."""
        if n > self.num_free:
            return None
        fq = self.free_q
        lru = type(fq) is LRUFree
        if lru:  # the blocks after the first k all hold a hash or a lazy mark
            out, k = fq.take_split(n)
        else:
            out, k = fq.take(n), 0
        self.num_free -= n
        ref = self.ref
        if lru and k < n and self.lazy and not self.cached:
            # every one after the first k is a lazy mark, and only those: each loses it in the
            # pass that takes its reference (one loop over an admission's ~33 blocks, not two)
            bh = self.block_hash
            for b in out[:k]:
                ref[b] = 1
            for b in out[k:]:
                ref[b] = 1
                bh[b] = None
            self.lazy -= n - k
            self.evictions += n - k
            return out
        for b in out:
            ref[b] = 1
        if k == n or not (self.cached or self.lazy):  # none of them carries a hash
            return out
        bh = self.block_hash
        hs = [bh[b] for b in out[k:]]
        hs = [h for h in hs if h is not None]  # the hashes reused blocks lose, in queue order
        if not hs:
            return out
        for b in out[k:]:
            bh[b] = None
        held = len(hs)
        self.evictions += held
        if self.cached:
            real = [h for h in hs if h >= 0]
            cached = self.cached
            for h in real:
                del cached[h]
            if evicted is not None:
                evicted += real
            self.lazy -= held - len(real)
        else:
            self.lazy -= held
        return out

    def free(self, blocks: list[int], cost: float = 0.0, marked: int = -1) -> None:
        """Drop one reference on each block, tail first, so the tail is evicted before the head.
        ``marked >= 0``: the caller knows that ``blocks[:marked]`` hold a hash or a lazy mark and
        the rest none (``Paged.release``), so with no block shared the LRU queue takes them in two
        slices."""
        self.gains += 1
        ref = self.ref
        if type(self.free_q) is LRUFree:  # the hot path, in bulk
            if marked >= 0 and not self.shared:  # every block frees, and which are hashed is known
                for b in blocks:
                    ref[b] = 0
                self.num_free += len(blocks)
                self.free_q.push_freed(blocks[:marked][::-1], blocks[marked:][::-1])
                return
            bh = self.block_hash
            hashed: list[int] = []
            unhashed: list[int] = []
            keep, drop = hashed.append, unhashed.append
            for b in reversed(blocks):
                r = ref[b] - 1
                ref[b] = r
                if not r:  # free now: a block still referenced elsewhere stays taken
                    if bh[b] is None:
                        drop(b)
                    else:
                        keep(b)
                else:
                    self.shared -= 1
            self.num_free += len(hashed) + len(unhashed)
            self.free_q.push_freed(hashed, unhashed)
            return
        push = self.free_q.push
        bh = self.block_hash
        for b in reversed(blocks):
            ref[b] -= 1
            if ref[b] == 0:
                push(b, bh[b] is not None, cost)
                self.num_free += 1
            else:
                self.shared -= 1

    def cache(self, block: int, h: int) -> bool:
        """Register a full, computed block under hash ``h``. False if caching is off, the block
        already has a hash, or another block already caches ``h`` (the first one stays)."""
        if not self.caching or self.block_hash[block] is not None or h in self.cached:
            return False
        self.block_hash[block] = h
        self.cached[h] = block
        self.gains += 1
        return True

    def check_invariants(self) -> None:
        free = self.free_q.order()
        assert len(free) == len(set(free)) == len(self.free_q), "free queue holds a block twice"
        assert self.num_free == len(free), "num_free differs from the free queue"
        for b in free:
            assert self.ref[b] == 0, f"block {b} is free with refcount {self.ref[b]}"
        assert min(self.ref) >= 0, "negative refcount"
        used = sum(1 for r in self.ref if r > 0)
        assert self.shared == sum(r - 1 for r in self.ref if r > 1), "shared differs from the refcounts"
        assert used + len(free) == self.num_blocks, "free + used != total"
        for h, b in self.cached.items():
            assert self.block_hash[b] == h, f"cache map and block {b} disagree"
        assert sum(1 for h in self.block_hash if h is not None and h >= 0) == len(self.cached)
        assert sum(1 for h in self.block_hash if h is not None and h < 0) == self.lazy
        if type(self.free_q) is LRUFree:  # the stack holds the unhashed free blocks, the FIFO the rest
            stack = set(self.free_q._stack)
            for b in free:
                assert (self.block_hash[b] is None) == (b in stack), f"free block {b} is queued on the wrong side"
