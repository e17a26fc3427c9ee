"""Classic eviction: LRU, FIFO, LFU and CLOCK from ``sims.replace`` (shared with paging), with
the lists the cache view draws, and SIEVE. O(1) per request each."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from sims import replace
from sims.cache.base import CachePolicy, seq
from sims.core.diverge import Decision
from sims.core.registry import register_policy
from sims.replace import why


@register_policy("cache", "lru")
class LRU(replace.LRU, CachePolicy):
    __doc__ = replace.LRU.__doc__

    def lists(self) -> list[dict]:
        return [seq("recency", self.od, len(self.od), "LRU first")]


@register_policy("cache", "fifo")
class FIFO(replace.FIFO, CachePolicy):
    __doc__ = replace.FIFO.__doc__

    def lists(self) -> list[dict]:
        return [seq("queue", self.od, len(self.od), "oldest first")]


@register_policy("cache", "lfu")
class LFU(replace.LFU, CachePolicy):
    __doc__ = replace.LFU.__doc__

    def lists(self) -> list[dict]:
        keys = self.resident()  # bounded by size; view() only
        return [seq("by count", keys, len(keys), "lowest count first, then LRU", marks=self.freq.__getitem__)]


@register_policy("cache", "clock")
class Clock(replace.Clock, CachePolicy):
    __doc__ = replace.Clock.__doc__

    def lists(self) -> list[dict]:
        n = len(self.where)
        return [seq("slots", self.keys[:n], n, "slot order", marks=lambda k: self.ref[self.where[k]])]

    def extra(self) -> dict[str, Any]:
        return {"hand": self.hand}


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

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` and ``_evict`` inlined over ``keys``."""
        visited, newer, older, size, on_evict = self.visited, self.newer, self.older, self.size, self.on_evict
        head, tail, hand = self.head, self.tail, self.hand
        hits = 0
        for key in keys:
            if key in visited:
                visited[key] = 1
                hits += 1
                continue
            if len(visited) >= size:
                obj = hand if hand is not None else tail
                while visited[obj]:
                    visited[obj] = 0
                    obj = newer[obj]
                    if obj is None:
                        obj = tail
                nw, ol = newer.pop(obj), older.pop(obj)
                hand = nw
                if nw is None:
                    head = ol
                else:
                    older[nw] = ol
                if ol is None:
                    tail = nw
                else:
                    newer[ol] = nw
                del visited[obj]
                if on_evict is not None:
                    self.head, self.tail, self.hand = head, tail, hand
                    on_evict(obj)
            visited[key] = 0
            older[key] = head
            newer[key] = None
            if head is not None:
                newer[head] = key
            else:
                tail = key
            head = key
        self.head, self.tail, self.hand = head, tail, hand
        return hits

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

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        reason = "the hand, walking from the oldest key, found it unvisited since it last passed (last used at {last}); visited keys kept their place"
        return why.say(self, d, reason)

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
            first = [k for k, _ in zip(self._walk(self.tail, self.newer), range(half), strict=False)]
            last = [k for k, _ in zip(self._walk(self.head, self.older), range(half), strict=False)][::-1]
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
