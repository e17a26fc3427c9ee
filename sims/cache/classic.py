"""Classic eviction: LRU, FIFO, LFU, CLOCK (second chance) and SIEVE. O(1) per request each."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from sims.cache.base import CachePolicy, seq
from sims.core.registry import register_policy


@register_policy("cache", "lru")
class LRU(CachePolicy):
    """Which key was used least recently? ``od`` holds the resident keys, least recent first."""

    def __init__(self, size: int, **_: Any) -> None:
        super().__init__(size)
        self.od: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, key: Hashable) -> bool:
        od = self.od
        if key in od:
            od.move_to_end(key)
            return True
        if len(od) >= self.size:
            victim = od.popitem(False)[0]
            if self.on_evict is not None:
                self.on_evict(victim)
        od[key] = None
        return False

    def serve(self, events: list[dict], lo: int, hi: int) -> tuple[int, int]:
        """``access`` inlined for runs of ``ref`` events (the 1M requests/s target)."""
        od, size = self.od, self.size
        move, pop = od.move_to_end, od.popitem
        hits = requests = 0
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] != "ref":
                r, h = CachePolicy.serve(self, events, k, k + 1)
                requests += r
                hits += h
                continue
            requests += 1
            key = ev["key"]
            if key in od:
                move(key)
                hits += 1
                continue
            if len(od) >= size:
                victim = pop(False)[0]
                if self.on_evict is not None:
                    self.on_evict(victim)
            od[key] = None
        return requests, hits

    def __contains__(self, key: Hashable) -> bool:
        return key in self.od

    def __len__(self) -> int:
        return len(self.od)

    def lists(self) -> list[dict]:
        return [seq("recency", self.od, len(self.od), "LRU first")]


@register_policy("cache", "fifo")
class FIFO(CachePolicy):
    """Which key arrived first? ``od`` holds the resident keys in admission order; hits move nothing."""

    def __init__(self, size: int, **_: Any) -> None:
        super().__init__(size)
        self.od: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, key: Hashable) -> bool:
        od = self.od
        if key in od:
            return True
        if len(od) >= self.size:
            victim = od.popitem(False)[0]
            if self.on_evict is not None:
                self.on_evict(victim)
        od[key] = None
        return False

    def serve(self, events: list[dict], lo: int, hi: int) -> tuple[int, int]:
        """``access`` inlined for runs of ``ref`` events (the 1M requests/s target)."""
        od, size, pop = self.od, self.size, self.od.popitem
        hits = requests = 0
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] != "ref":
                r, h = CachePolicy.serve(self, events, k, k + 1)
                requests += r
                hits += h
                continue
            requests += 1
            key = ev["key"]
            if key in od:
                hits += 1
                continue
            if len(od) >= size:
                victim = pop(False)[0]
                if self.on_evict is not None:
                    self.on_evict(victim)
            od[key] = None
        return requests, hits

    def __contains__(self, key: Hashable) -> bool:
        return key in self.od

    def __len__(self) -> int:
        return len(self.od)

    def lists(self) -> list[dict]:
        return [seq("queue", self.od, len(self.od), "oldest first")]


@register_policy("cache", "lfu")
class LFU(CachePolicy):
    """Which key was used least often while resident? ``buckets[f]`` holds the keys with count f,
    least recent first (the tie-break); ``low`` is the smallest non-empty count. Counts are
    forgotten on eviction, so a formerly hot set that moves away keeps its slots."""

    def __init__(self, size: int, **_: Any) -> None:
        super().__init__(size)
        self.freq: dict[Hashable, int] = {}
        self.buckets: dict[int, OrderedDict[Hashable, None]] = {}
        self.low = 0

    def access(self, key: Hashable) -> bool:
        freq, buckets = self.freq, self.buckets
        f = freq.get(key)
        if f is not None:
            b = buckets[f]
            del b[key]
            if not b:
                del buckets[f]
                if self.low == f:
                    self.low = f + 1
            nb = buckets.get(f + 1)
            if nb is None:
                nb = buckets[f + 1] = OrderedDict()
            nb[key] = None
            freq[key] = f + 1
            return True
        if len(freq) >= self.size:
            b = buckets[self.low]
            victim = b.popitem(False)[0]
            if not b:
                del buckets[self.low]
            del freq[victim]
            self._evicted(victim)
        b1 = buckets.get(1)
        if b1 is None:
            b1 = buckets[1] = OrderedDict()
        b1[key] = None
        freq[key] = 1
        self.low = 1
        return False

    def __contains__(self, key: Hashable) -> bool:
        return key in self.freq

    def __len__(self) -> int:
        return len(self.freq)

    def _ordered(self):
        for f in sorted(self.buckets):
            yield from self.buckets[f]

    def lists(self) -> list[dict]:
        keys = list(self._ordered())  # bounded by size; view() only
        return [seq("by count", keys, len(keys), "lowest count first, then LRU", marks=self.freq.__getitem__)]

    def check_invariants(self) -> None:
        super().check_invariants()
        assert sum(len(b) for b in self.buckets.values()) == len(self.freq)
        for f, b in self.buckets.items():
            assert b, f"empty bucket {f}"
            for k in b:
                assert self.freq[k] == f
        if self.freq:
            assert self.low == min(self.buckets), (self.low, min(self.buckets))


@register_policy("cache", "clock")
class Clock(CachePolicy):
    """LRU approximated by one bit per slot: a load and a hit set the slot's bit (R = 1 on load,
    as a page table's hardware does, and as the paging topic's CLOCK does: one definition); on a
    miss the hand sweeps, clearing set bits (a second chance), and evicts the first slot whose
    bit is clear. Slots ``0..n-1`` are filled; ``where`` maps each resident key to its slot."""

    def __init__(self, size: int, **_: Any) -> None:
        super().__init__(size)
        self.keys: list[Hashable] = [None] * size
        self.ref = bytearray(size)
        self.where: dict[Hashable, int] = {}
        self.hand = 0

    def access(self, key: Hashable) -> bool:
        where = self.where
        slot = where.get(key)
        if slot is not None:
            self.ref[slot] = 1
            return True
        n = len(where)
        if n < self.size:
            slot = n
        else:
            ref, size, hand = self.ref, self.size, self.hand
            while ref[hand]:
                ref[hand] = 0
                hand += 1
                if hand == size:
                    hand = 0
            slot = hand
            victim = self.keys[slot]
            del where[victim]
            self.hand = hand + 1 if hand + 1 < size else 0
            if self.on_evict is not None:
                self.on_evict(victim)
        self.keys[slot] = key
        self.ref[slot] = 1
        where[key] = slot
        return False

    def serve(self, events: list[dict], lo: int, hi: int) -> tuple[int, int]:
        """``access`` inlined for runs of ``ref`` events (the 1M requests/s target)."""
        where, ref, keys, size = self.where, self.ref, self.keys, self.size
        hits = requests = 0
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] != "ref":
                r, h = CachePolicy.serve(self, events, k, k + 1)
                requests += r
                hits += h
                continue
            requests += 1
            key = ev["key"]
            slot = where.get(key)
            if slot is not None:
                ref[slot] = 1
                hits += 1
                continue
            slot = len(where)
            if slot >= size:
                hand = self.hand
                while ref[hand]:
                    ref[hand] = 0
                    hand += 1
                    if hand == size:
                        hand = 0
                slot = hand
                victim = keys[slot]
                del where[victim]
                self.hand = hand + 1 if hand + 1 < size else 0
                if self.on_evict is not None:
                    self.on_evict(victim)
            keys[slot] = key
            ref[slot] = 1
            where[key] = slot
        return requests, hits

    def __contains__(self, key: Hashable) -> bool:
        return key in self.where

    def __len__(self) -> int:
        return len(self.where)

    def lists(self) -> list[dict]:
        n = len(self.where)
        return [seq("slots", self.keys[:n], n, "slot order", marks=lambda k: self.ref[self.where[k]])]

    def extra(self) -> dict[str, Any]:
        return {"hand": self.hand}

    def check_invariants(self) -> None:
        super().check_invariants()
        assert 0 <= self.hand < self.size
        for k, s in self.where.items():
            assert self.keys[s] == k
        assert sorted(self.where.values()) == list(range(len(self.where)))


@register_policy("cache", "sieve")
class Sieve(CachePolicy):
    """SIEVE (Zhang et al., NSDI'24): a FIFO queue whose hand walks from the oldest key toward the
    newest, clearing visited bits and evicting the first unvisited key; survivors stay in place
    and new keys enter at the head. ``newer``/``older`` link the queue; ``visited`` is the bit."""

    def __init__(self, size: int, **_: Any) -> None:
        super().__init__(size)
        self.visited: dict[Hashable, int] = {}
        self.newer: dict[Hashable, Any] = {}  # toward the head; None at the head
        self.older: dict[Hashable, Any] = {}  # toward the tail; None at the tail
        self.head: Any = None
        self.tail: Any = None
        self.hand: Any = None  # None: start at the tail

    def access(self, key: Hashable) -> bool:
        visited = self.visited
        if key in visited:
            visited[key] = 1
            return True
        if len(visited) >= self.size:
            self._evict()
        visited[key] = 0
        self.older[key] = self.head
        self.newer[key] = None
        if self.head is not None:
            self.newer[self.head] = key
        else:
            self.tail = key
        self.head = key
        return False

    def _evict(self) -> None:
        visited, newer = self.visited, self.newer
        obj = self.hand if self.hand is not None else self.tail
        while visited[obj]:
            visited[obj] = 0
            obj = newer[obj]
            if obj is None:
                obj = self.tail
        self.hand = newer[obj]
        nw, ol = newer.pop(obj), self.older.pop(obj)
        if nw is None:
            self.head = ol
        else:
            self.older[nw] = ol
        if ol is None:
            self.tail = nw
        else:
            newer[ol] = nw
        del visited[obj]
        self._evicted(obj)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.visited

    def __len__(self) -> int:
        return len(self.visited)

    def _walk(self, start: Any, link: dict):
        k = start
        while k is not None:
            yield k
            k = link[k]

    def lists(self) -> list[dict]:
        n = len(self.visited)
        half = 32
        items = list(self._walk(self.tail, self.newer)) if n <= 64 else None
        if items is None:  # only the two ends: never walk the whole queue for a frame
            first = [k for k, _ in zip(self._walk(self.tail, self.newer), range(half))]
            last = [k for k, _ in zip(self._walk(self.head, self.older), range(half))][::-1]
            items = first + last
            out = seq("queue", items, len(items), "oldest first", marks=self.visited.__getitem__)
            out.update(size=n, skipped=n - 64, skipped_at=half)
            return [out]
        return [seq("queue", items, n, "oldest first", marks=self.visited.__getitem__)]

    def extra(self) -> dict[str, Any]:
        return {"hand": self.hand}

    def check_invariants(self) -> None:
        super().check_invariants()
        forward = list(self._walk(self.tail, self.newer))
        assert len(forward) == len(self.visited) == len(self.newer) == len(self.older)
        assert forward == list(self._walk(self.head, self.older))[::-1]
        assert self.hand is None or self.hand in self.visited
