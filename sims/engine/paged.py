"""``Paged``: block tables over a ``BlockPool`` (vLLM); with prefix caching, full blocks are hashed
and shared.

Prefix hashes cost nothing while no prefix is shared. Every chained block hash folds in
the content id of the first non-empty segment first, so a sequence can only ever hit blocks
registered under the same *root* (that content id). The first sequence seen with a root registers
its full blocks lazily: each block is marked cached with a negative mark (real hashes are >= 0)
and is queued, freed and evicted exactly as a hashed block would be. The real hashes are computed
the moment anything else touches that root (another request, a parallel sample, a router's lookup,
the same request coming back after a preemption); from then on the root is hashed eagerly, as
before. A ``kv_listener`` (which publishes hashes) makes every root eager at once.
"""

from __future__ import annotations

from sims.engine.allocator import Allocator, KVBlocks
from sims.engine.blocks import BlockPool, block_hashes
from sims.engine.freequeue import LRUFree

_NEW = object()  # a root never seen by this allocator


def root_of(segments: list, out_cid: str) -> str:
    """The content id every block hash of ``segments`` (then ``out_cid``) folds in first."""
    for seg in segments:
        if int(seg[1]) > 0:
            return str(seg[0])
    return str(out_cid)


class _Lazy:
    """The one sequence registered under a root, with the blocks it registered lazily.
    ``blocks[i]`` holds chain block i while ``pool.block_hash[blocks[i]] == mark``."""

    __slots__ = ("owner", "mark", "segments", "out_cid", "output_len", "nfull", "blocks")

    def __init__(self, seq, block_size: int) -> None:
        self.owner = seq.order
        self.mark = ~seq.order  # negative: never a real hash
        self.segments = seq.segments  # never mutated: shared
        self.out_cid = seq.out_cid
        self.output_len = seq.output_len
        tokens = 0
        for seg in seq.segments:
            n = int(seg[1])
            if n > 0:
                tokens += n
        self.nfull = (tokens + max(0, seq.output_len)) // block_size  # full blocks block_hashes names
        self.blocks: list[int] = []

    def __deepcopy__(self, memo: dict) -> _Lazy:
        """A checkpoint's copy: ``segments`` (the stream's, never mutated) stays shared; a slot
        added and not named here is missing from the copy, which fails loudly."""
        new = _Lazy.__new__(_Lazy)
        new.owner, new.mark, new.segments = self.owner, self.mark, self.segments
        new.out_cid, new.output_len, new.nfull = self.out_cid, self.output_len, self.nfull
        new.blocks = list(self.blocks)
        return new


class Paged(Allocator):
    """Block tables over a ``BlockPool``; with prefix caching, full blocks are hashed and shared."""

    kind = "paged"
    paged = True

    def __init__(self, capacity: int, block_size: int, caching: bool, eviction: str) -> None:
        self.B = block_size
        self.pool = BlockPool(capacity // block_size, eviction, caching)
        super().__init__(self.pool.num_blocks * block_size)
        self._listener = None  # (kind, hashes) -> None, set by the engine (a bound method: a copy calls its own)
        self.lazy = caching  # roots seen once are registered without hashing (module docstring)
        self._roots: dict[str, _Lazy | None] = {}  # root -> its one lazy sequence, or None: eager
        self.hit_blocks = 0
        self._refused: tuple = ()  # (seq, target, watermark, cold, pool.gains) of the last refusal

    @property
    def kv_listener(self):
        return self._listener

    @kv_listener.setter
    def kv_listener(self, fn) -> None:
        """A listener needs every stored block's hash: hash everything from now on."""
        self._listener = fn
        if fn is not None and self.lazy:
            for g, rec in list(self._roots.items()):
                if rec is not None:
                    self._materialize(g, rec)
            self.lazy = False
            self._roots.clear()

    # -- lazy prefix hashes ----------------------------------------------------------------------
    def _root(self, seq) -> str:
        r = seq.root
        if r is None:
            r = seq.root = root_of(seq.segments, seq.out_cid)
        return r

    def _materialize(self, root: str, rec: _Lazy) -> None:
        """Give the blocks ``rec`` registered lazily their real hashes; the root turns eager."""
        self._roots[root] = None
        if not rec.blocks:
            return
        pool = self.pool
        bh, cached, mark = pool.block_hash, pool.cached, rec.mark
        segs = [*rec.segments, (rec.out_cid, rec.output_len)]
        hashes = block_hashes(segs, self.B, limit=len(rec.blocks))
        for i, b in enumerate(rec.blocks):
            if bh[b] == mark:
                h = hashes[i]
                if h not in cached:  # (always, but for a 64-bit collision: then it stays marked)
                    bh[b] = h
                    cached[h] = b
                    pool.lazy -= 1

    def prompt_hashes(self, seq, target: int) -> list[int] | None:
        """The hashes an admission of ``seq`` for ``target`` tokens matches against the cache; None
        while its root was seen by no other sequence (nothing can hit, so nothing is hashed)."""
        if self.lazy:
            g = seq.root or self._root(seq)
            rec = self._roots.get(g, _NEW)
            if rec is _NEW:
                self._roots[g] = _Lazy(seq, self.B)
                return None
            if rec is not None:
                if rec.owner == seq.order and not rec.blocks:
                    return None
                self._materialize(g, rec)
        return seq.full_hashes(self.B, target // self.B)

    # -- allocation -------------------------------------------------------------------------------
    def allocate_slots(self, seq, target: int, hashes: list[int] | None, watermark: int) -> KVBlocks | None:
        """Blocks for ``target + 1`` tokens; leading full blocks found in the cache are shared
        (a hit covers at most floor((target - 1) / B) blocks, so one token is always computed)."""
        B = self.B
        pool = self.pool
        # A refused request refused again, with no block freed or cached since, is refused again:
        # a blocked queue head then costs O(1) a step instead of a prefix match.
        r = self._refused
        if r and r[0] is seq and r[1:] == (target, watermark, not hashes, pool.gains):
            return None
        hits = pool.match(hashes[: (target - 1) // B]) if hashes else []
        need = -(-(target + 1) // B) - len(hits)
        if need > pool.num_free - (pool.reusable(hits) if hits else 0) - watermark:
            self._refused = (seq, target, watermark, not hashes, pool.gains)
            return None
        if hits:
            pool.touch(hits)
        evicted: list[int] = []
        fresh = pool.allocate(need, evicted)
        if evicted and self._listener:
            self._listener("removed", evicted)
        seq.blocks = hits + fresh if hits else fresh
        seq.cached_blocks = len(hits)
        seq.computed = hit = len(hits) * B
        self.held = (pool.num_blocks - pool.num_free) * B
        slots = len(seq.blocks) * B
        r, fl = seq.reserved, seq.final_len  # _set_reserved(seq, slots), inline
        self.reserved_sum += slots - r
        self.useful_sum += (slots if slots < fl else fl) - (r if r < fl else fl)
        seq.reserved = slots
        return KVBlocks(tuple(fresh), slots, hit)

    def grow_one(self, seq) -> bool:
        """One more block at the end of ``seq``'s table (a decode crossing a block boundary)."""
        pool = self.pool
        if not pool.num_free:
            return False
        b = pool.free_q.pop()
        pool.num_free -= 1
        if pool.block_hash[b] is not None:
            self._evict(b)
        pool.ref[b] = 1
        seq.blocks.append(b)
        B = self.B
        self.held += B
        r0, fl = seq.reserved, seq.final_len  # _set_reserved(seq, r0 + B), inline
        r = r0 + B
        self.reserved_sum += B
        self.useful_sum += (r if r < fl else fl) - (r0 if r0 < fl else fl)
        seq.reserved = r
        return True

    def decode_grow(self, crossings: list, cal: dict, step: int) -> bool:
        """``grow_one`` for each live ``(epoch, seq)`` of ``crossings`` (in order, so the same
        blocks); each crosses again one block, ``B`` steps, later, so the ones still short of their
        final length go on ``cal[step + B]`` together. False, with nothing done, when fewer blocks
        are free than entries (the general step then preempts). See ``Allocator.decode_grow``."""
        pool = self.pool
        if len(crossings) > pool.num_free:
            return False
        fq = pool.free_q
        stack = fq._stack if type(fq) is LRUFree else None  # LRU: unhashed blocks are taken first
        pop = fq.pop
        bh, ref = pool.block_hash, pool.ref
        B = self.B
        usum = self.useful_sum
        again = []
        n = 0
        for e in crossings:
            seq = e[1]
            if e[0] != seq.epoch:
                continue
            b = stack.pop() if stack else pop()
            h = bh[b]
            if h is not None:  # ``_evict``, inline
                bh[b] = None
                pool.evictions += 1
                if h < 0:
                    pool.lazy -= 1
                else:
                    del pool.cached[h]
                    if self._listener:
                        self._listener("removed", [h])
            ref[b] = 1
            seq.blocks.append(b)
            n += 1
            r0 = seq.reserved  # < final_len: a crossing is only ever scheduled below it
            r = r0 + B
            fl = seq.final_len
            if r < fl:
                usum += B
                again.append(e)
            else:
                usum += fl - r0
            seq.reserved = r
        if again:
            nxt = step + B
            if nxt in cal:
                cal[nxt] += again
            else:
                cal[nxt] = again
        pool.num_free -= n
        self.held += n * B
        self.reserved_sum += n * B
        self.useful_sum = usum
        return True

    def _evict(self, b: int) -> None:
        """Block ``b``, just taken from the free queue, loses the prefix it caches."""
        pool = self.pool
        h = pool.block_hash[b]
        pool.block_hash[b] = None
        pool.evictions += 1
        if h >= 0:
            del pool.cached[h]
            if self._listener:
                self._listener("removed", [h])
        else:
            pool.lazy -= 1

    def grow(self, seq, tokens: int) -> bool:
        need = -(-tokens // self.B) - len(seq.blocks)
        if need <= 0:
            return True
        evicted: list[int] = []
        fresh = self.pool.allocate(need, evicted)
        if fresh is None:
            return False
        if evicted and self._listener:
            self._listener("removed", evicted)
        seq.blocks += fresh
        self.held = (self.pool.num_blocks - self.pool.num_free) * self.B
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
        if self.lazy:
            g = root_of(segments, "")
            rec = self._roots.get(g, _NEW)
            if rec is _NEW:  # nothing under this root was ever registered here
                return 0
            if rec is not None:
                self._materialize(g, rec)
        hashes = block_hashes(segments, self.B, limit=(prompt_len - 1) // self.B)
        return len(self.pool.match(hashes)) * self.B

    @property
    def num_units(self) -> int:
        return self.pool.num_blocks

    @property
    def num_cached(self) -> int:
        return self.pool.num_cached

    def register(self, seq, tokens: int) -> list[int]:
        """Cache the full blocks of ``seq`` below ``tokens``; returns the hashes newly stored
        (none while its root is lazy)."""
        pool = self.pool
        if not pool.caching:
            return []
        full = min(tokens // self.B, len(seq.blocks))
        c = seq.cached_blocks
        if full <= c:
            return []
        if self.lazy:
            g = seq.root or self._root(seq)
            rec = self._roots.get(g, _NEW)
            if rec is _NEW:
                rec = self._roots[g] = _Lazy(seq, self.B)
            if rec is not None:
                if rec.owner == seq.order and len(rec.blocks) == min(c, rec.nfull):
                    new = seq.blocks[c : min(full, rec.nfull)]
                    bh, mark = pool.block_hash, rec.mark
                    for b in new:
                        bh[b] = mark
                    rec.blocks += new
                    pool.gains += len(new)
                    pool.lazy += len(new)
                    seq.cached_blocks = full
                    return []
                self._materialize(g, rec)
        hashes = seq.full_hashes(self.B, full)
        stored = []
        for i in range(c, min(full, len(hashes))):
            if pool.cache(seq.blocks[i], hashes[i]):
                stored.append(hashes[i])
        seq.cached_blocks = full
        if stored and self._listener:
            self._listener("stored", stored)
        return stored

    def release(self, seq, tokens: int, cost: float = 0.0) -> None:
        blocks = seq.blocks
        if tokens // self.B > seq.cached_blocks < len(blocks):  # else ``register`` has nothing to do
            self.register(seq, tokens)
        marked = -1  # the blocks its lazy root marked lead its table; no other block has a hash
        if self.lazy:
            rec = self._roots.get(seq.root)
            # ``register``'s own test that rec.blocks are this holding's (not a swapped-out table's)
            if rec is not None and rec.owner == seq.order and len(rec.blocks) == min(seq.cached_blocks, rec.nfull):
                marked = len(rec.blocks)
        self.pool.free(blocks, cost, marked)
        seq.blocks = []
        seq.cached_blocks = 0
        self.held = (self.pool.num_blocks - self.pool.num_free) * self.B
        r, fl = seq.reserved, seq.final_len  # _set_reserved(seq, 0), inline
        self.reserved_sum -= r
        self.useful_sum -= r if r < fl else fl
        seq.reserved = 0

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
        marks = {rec.mark for rec in self._roots.values() if rec is not None}
        for h in pool.block_hash:
            assert h is None or h >= 0 or h in marks, f"block marked {h} by no lazy root"
        self.check_sums(holders)
