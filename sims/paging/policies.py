"""Page-replacement policies. Each owns its page table (the resident set, at most ``frames``
pages) in the structure its decision needs, so one reference is a few dict operations.

Interface: ``access(key, pos) -> hit`` for one reference at stream position ``pos`` (only OPT
reads ``pos``), ``run(events, lo, hi) -> (refs, hits)`` for the tight loop over a stream slice,
``resident()`` (eviction order: the next victim first where the policy has one), ``state()`` for
the view and ``check_invariants()``.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from heapq import heapify, heappop, heappush

from sims.core.registry import register_policy


class Replacer:
    """Base class: ``run`` falls back to one ``access`` per reference."""

    def __init__(self, frames: int, events: list, rng: random.Random) -> None:
        if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
            raise ValueError(f"frames must be a positive integer, got {frames!r}")
        self.frames = frames

    def access(self, key: int, pos: int) -> bool:
        raise NotImplementedError

    def run(self, events: list, lo: int, hi: int) -> tuple[int, int]:
        refs = hits = 0
        access = self.access
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] == "ref":
                refs += 1
                hits += access(ev["key"], k)
        return refs, hits

    def resident(self) -> list[int]:
        raise NotImplementedError

    def state(self) -> dict:
        return {}

    def check_invariants(self) -> None:
        res = self.resident()
        assert len(res) <= self.frames, (len(res), self.frames)
        assert len(set(res)) == len(res), "a page is resident twice"


@register_policy("paging", "fifo")
class Fifo(Replacer):
    """Evict the page loaded longest ago. ``pages`` is in load order: the oldest first."""

    def __init__(self, frames: int, events: list, rng: random.Random) -> None:
        super().__init__(frames, events, rng)
        self.pages: OrderedDict[int, None] = OrderedDict()

    def access(self, key: int, pos: int) -> bool:
        pages = self.pages
        if key in pages:
            return True
        if len(pages) >= self.frames:
            pages.popitem(last=False)
        pages[key] = None
        return False

    def run(self, events: list, lo: int, hi: int) -> tuple[int, int]:
        pages, frames = self.pages, self.frames
        evict = pages.popitem
        refs = hits = 0
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] != "ref":
                continue
            refs += 1
            key = ev["key"]
            if key in pages:
                hits += 1
                continue
            if len(pages) >= frames:
                evict(False)
            pages[key] = None
        return refs, hits

    def resident(self) -> list[int]:
        return list(self.pages)


@register_policy("paging", "lru")
class Lru(Replacer):
    """Evict the least recently used page. ``pages`` is in recency order: the LRU page first."""

    def __init__(self, frames: int, events: list, rng: random.Random) -> None:
        super().__init__(frames, events, rng)
        self.pages: OrderedDict[int, None] = OrderedDict()

    def access(self, key: int, pos: int) -> bool:
        pages = self.pages
        if key in pages:
            pages.move_to_end(key)
            return True
        if len(pages) >= self.frames:
            pages.popitem(last=False)
        pages[key] = None
        return False

    def run(self, events: list, lo: int, hi: int) -> tuple[int, int]:
        pages, frames = self.pages, self.frames
        touch, evict = pages.move_to_end, pages.popitem
        refs = hits = 0
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] != "ref":
                continue
            refs += 1
            key = ev["key"]
            if key in pages:
                touch(key)
                hits += 1
                continue
            if len(pages) >= frames:
                evict(False)
            pages[key] = None
        return refs, hits

    def resident(self) -> list[int]:
        return list(self.pages)


@register_policy("paging", "clock")
class Clock(Replacer):
    """Second chance: frames in a ring with a reference bit; the hand clears set bits and evicts
    the first page whose bit is clear. Empty frames fill in slot order before the hand moves."""

    def __init__(self, frames: int, events: list, rng: random.Random) -> None:
        super().__init__(frames, events, rng)
        self.slot: dict[int, int] = {}  # page -> frame index
        self.ring: list[int | None] = [None] * frames  # frame index -> page
        self.bit = [0] * frames  # reference bits
        self.hand = 0

    def access(self, key: int, pos: int) -> bool:
        return self.run(({"kind": "ref", "key": key},), 0, 1)[1] == 1

    def run(self, events, lo: int, hi: int) -> tuple[int, int]:
        slot, ring, bit, frames = self.slot, self.ring, self.bit, self.frames
        hand = self.hand
        refs = hits = 0
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] != "ref":
                continue
            refs += 1
            key = ev["key"]
            s = slot.get(key)
            if s is not None:
                bit[s] = 1
                hits += 1
                continue
            if len(slot) < frames:
                s = len(slot)
            else:
                while bit[hand]:
                    bit[hand] = 0
                    hand = hand + 1 if hand + 1 < frames else 0
                s = hand
                del slot[ring[s]]
                hand = hand + 1 if hand + 1 < frames else 0
            ring[s] = key
            slot[key] = s
            bit[s] = 1
        self.hand = hand
        return refs, hits

    def resident(self) -> list[int]:
        n = len(self.slot)
        if n < self.frames:
            return self.ring[:n]
        return self.ring[self.hand :] + self.ring[: self.hand]

    def state(self) -> dict:
        return {"hand": self.hand, "ring": self.ring, "bits": self.bit}

    def check_invariants(self) -> None:
        super().check_invariants()
        for page, s in self.slot.items():
            assert self.ring[s] == page, (page, s)
        assert 0 <= self.hand < self.frames


@register_policy("paging", "lfu")
class Lfu(Replacer):
    """Evict the page with the fewest references since it was loaded; ties go to the one that
    reached that count first. ``buckets[c]`` holds the pages referenced c times, oldest first."""

    def __init__(self, frames: int, events: list, rng: random.Random) -> None:
        super().__init__(frames, events, rng)
        self.count: dict[int, int] = {}
        self.buckets: dict[int, OrderedDict[int, None]] = {}
        self.low = 0  # the smallest count with a non-empty bucket

    def access(self, key: int, pos: int) -> bool:
        count, buckets = self.count, self.buckets
        c = count.get(key)
        if c is not None:
            b = buckets[c]
            del b[key]
            if not b:
                del buckets[c]
                if self.low == c:
                    self.low = c + 1
            count[key] = c + 1
            nb = buckets.get(c + 1)
            if nb is None:
                nb = buckets[c + 1] = OrderedDict()
            nb[key] = None
            return True
        if len(count) >= self.frames:
            b = buckets[self.low]
            victim, _ = b.popitem(last=False)
            del count[victim]
            if not b:
                del buckets[self.low]
        count[key] = 1
        nb = buckets.get(1)
        if nb is None:
            nb = buckets[1] = OrderedDict()
        nb[key] = None
        self.low = 1
        return False

    def resident(self) -> list[int]:
        return [p for c in sorted(self.buckets) for p in self.buckets[c]]

    def state(self) -> dict:
        return {"counts": [[p, self.count[p]] for p in self.resident()]}

    def check_invariants(self) -> None:
        super().check_invariants()
        assert sum(len(b) for b in self.buckets.values()) == len(self.count)
        for c, b in self.buckets.items():
            assert b, f"empty bucket {c}"
            for p in b:
                assert self.count[p] == c
        if self.count:
            assert self.low == min(self.buckets), (self.low, min(self.buckets))


@register_policy("paging", "random")
class RandomEvict(Replacer):
    """Evict a resident page chosen uniformly by the panel's own generator."""

    def __init__(self, frames: int, events: list, rng: random.Random) -> None:
        super().__init__(frames, events, rng)
        self.rng = rng
        self.pages: list[int] = []  # frame order
        self.index: dict[int, int] = {}  # page -> position in ``pages``

    def access(self, key: int, pos: int) -> bool:
        index, pages = self.index, self.pages
        if key in index:
            return True
        if len(pages) >= self.frames:
            i = self.rng.randrange(len(pages))
            del index[pages[i]]
            pages[i] = key
        else:
            i = len(pages)
            pages.append(key)
        index[key] = i
        return False

    def resident(self) -> list[int]:
        return list(self.pages)

    def check_invariants(self) -> None:
        super().check_invariants()
        for page, i in self.index.items():
            assert self.pages[i] == page


def scan_pages(ev: dict) -> range:
    """The pages a ``{"kind": "scan", "start", "length"}`` event touches, in order."""
    start, length = ev.get("start"), ev.get("length")
    for name, v in (("start", start), ("length", length)):
        if isinstance(v, bool) or not isinstance(v, int) or (name == "length" and v < 0):
            raise ValueError(f"scan event: field {name!r} must be a non-negative integer, got {v!r}")
    return range(start, start + length)


class Lookahead:
    """The whole stream as one reference string (scans expanded), read-only once built, so
    checkpoints share it instead of copying it. ``keys[o]`` is the o-th reference, ``nxt[o]`` the
    ordinal of the next reference to the same page (-1: never again), computed once, right to
    left, in O(n); ``first[k]`` is the ordinal of stream position k's first reference and
    ``at[k]`` is ``nxt[first[k]]`` for plain references (the tight loop's one lookup)."""

    __slots__ = ("events", "keys", "first", "nxt", "at")

    def __init__(self, events: list) -> None:
        self.events = events
        keys: list[int] = []
        first = [0] * len(events)
        for k, ev in enumerate(events):
            first[k] = len(keys)
            if ev["kind"] == "ref":
                keys.append(ev["key"])
            elif ev["kind"] == "scan":
                keys.extend(scan_pages(ev))
        nxt = [-1] * len(keys)
        last: dict[int, int] = {}
        for o in range(len(keys) - 1, -1, -1):
            key = keys[o]
            nxt[o] = last.get(key, -1)
            last[key] = o
        self.keys, self.first, self.nxt = keys, first, nxt
        self.at = [nxt[first[k]] if ev["kind"] == "ref" else -1 for k, ev in enumerate(events)]

    def __deepcopy__(self, memo: dict) -> Lookahead:
        return self

    def next_use(self, key: int, pos: int) -> int:
        """The next use after the reference to ``key`` at stream position ``pos``; -1 for a
        reference the stream does not hold there (an event injected live: never seen again)."""
        if not 0 <= pos < len(self.events):
            return -1
        ev = self.events[pos]
        if ev["kind"] == "ref":
            return self.at[pos] if ev["key"] == key else -1
        if ev["kind"] == "scan":
            i = key - ev["start"]
            return self.nxt[self.first[pos] + i] if 0 <= i < ev["length"] else -1
        return -1


@register_policy("paging", "opt")
class Opt(Replacer):
    """Bélády's OPT: evict the page whose next use is farthest in the stream; a page never used
    again is farthest, and among those the one referenced longest ago goes first.

    Look-ahead comes from ``Lookahead`` (built once, O(n)). ``heap`` is a max-heap (negated) of
    each resident page's next-use value with stale entries skipped lazily: O(log n) per fault.
    """

    _NEVER = 1 << 52  # next-use values at or above this mean "never used again"

    def __init__(self, frames: int, events: list, rng: random.Random) -> None:
        super().__init__(frames, events, rng)
        self.ahead = Lookahead(events)
        self.next_of: dict[int, int] = {}  # resident page -> its next-use value
        self.heap: list[int] = []  # -next-use values; an entry is live iff next_of agrees
        self.owner: dict[int, int] = {}  # next-use value -> page, for "never" values
        self.seq = 0  # references so far: orders the never-used-again pages

    def access(self, key: int, pos: int) -> bool:
        return self._ref(key, self.ahead.next_use(key, pos))

    def _ref(self, key: int, n: int) -> bool:
        self.seq += 1
        if n < 0:
            n = self._NEVER + (self._NEVER - self.seq)  # older never-used pages rank higher
            self.owner[n] = key
        next_of = self.next_of
        hit = key in next_of
        if not hit and len(next_of) >= self.frames:
            self._evict()
        next_of[key] = n
        heappush(self.heap, -n)
        if len(self.heap) > 4 * self.frames + 64:
            self.heap = [-v for v in next_of.values()]
            heapify(self.heap)
            self.owner = {v: p for p, v in next_of.items() if v >= self._NEVER}
        return hit

    def _evict(self) -> None:
        heap, next_of, owner, keys = self.heap, self.next_of, self.owner, self.ahead.keys
        while True:
            v = -heappop(heap)
            page = owner.pop(v) if v >= self._NEVER else keys[v]
            if next_of.get(page) == v:
                del next_of[page]
                return

    def run(self, events: list, lo: int, hi: int) -> tuple[int, int]:
        if events is not self.ahead.events:
            raise ValueError("opt: the stream must be the one the panel was built with")
        at, ref = self.ahead.at, self._ref
        refs = hits = 0
        for k in range(lo, hi):
            if events[k]["kind"] == "ref":
                refs += 1
                hits += ref(events[k]["key"], at[k])
        return refs, hits

    def resident(self) -> list[int]:
        return sorted(self.next_of, key=lambda p: -self.next_of[p])

    def state(self) -> dict:
        never = self._NEVER
        return {"next_use": [[p, -1 if v >= never else v] for p, v in sorted(self.next_of.items())]}

    def check_invariants(self) -> None:
        super().check_invariants()
        live = set(-v for v in self.heap)
        for v in self.next_of.values():
            assert v in live, "a resident page lost its heap entry"
