"""Page replacement from the operating-systems textbooks: second chance, aging and NRU, as
Tanenbaum's *Modern Operating Systems* (ch. 3.4) describes them.

The hardware sets a page's R (referenced) bit on every reference, a load included, and its M
(modified) bit on every write. Aging and NRU also run on the clock interrupt: every ``tick``
references (the stream has no clock of its own that a trace replay keeps), aging shifts each
page's counter and NRU clears every R bit.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any

from sims.core.diverge import Decision
from sims.core.registry import Param, register_policy
from sims.paging.policies import PagingPolicy
from sims.replace import why
from sims.replace.base import scan_keys

_TICK = Param(
    int,
    100,
    "references between two clock interrupts (each one ages every page or clears every R bit)",
    min=1,
    max=10**9,
    work=-1,
)


@register_policy("paging", "second_chance")
class SecondChance(PagingPolicy):
    """FIFO with a reference bit (Tanenbaum, *Modern Operating Systems*, 3.4.4): on a fault, look
    at the oldest page; if its R bit is set, clear it and move the page to the back of the queue
    as if it had just arrived, else evict it. A load sets R. CLOCK is the same algorithm with the
    queue bent into a ring and a hand instead of moves, and makes the same decisions
    (tests/test_paging.py holds them equal, decision for decision). ``queue`` maps each page to its
    R bit, the oldest first."""

    def __init__(self, frames: int, events: list | None = None, rng: random.Random | None = None, **_: Any) -> None:
        super().__init__(frames)
        self.queue: OrderedDict[Hashable, int] = OrderedDict()

    def access(self, key: Hashable) -> bool:
        queue = self.queue
        if key in queue:
            queue[key] = 1
            return True
        if len(queue) >= self.frames:
            while True:
                oldest, r = next(iter(queue.items()))
                if not r:
                    break
                queue[oldest] = 0
                queue.move_to_end(oldest)  # a second chance: back of the queue
            del queue[oldest]
            self._evicted(oldest)
        queue[key] = 1
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys``: the oldest page is popped, and put back at the end
        with R cleared while its R was set (the same queue as clearing R and moving it)."""
        queue, size, on_evict = self.queue, self.size, self.on_evict
        pop = queue.popitem
        hits = 0
        for key in keys:
            if key in queue:
                queue[key] = 1
                hits += 1
                continue
            if len(queue) >= size:
                while True:
                    oldest, r = pop(False)
                    if not r:
                        break
                    queue[oldest] = 0  # a second chance: back of the queue
                if on_evict is not None:
                    on_evict(oldest)
            queue[key] = 1
        return hits

    def resident(self) -> list[Hashable]:
        return list(self.queue)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.queue

    def __len__(self) -> int:
        return len(self.queue)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        reason = "the oldest page in the queue with its R bit clear: older pages with R set went to the back with R cleared (last used at {last})"
        return why.say(self, d, reason)

    def state(self) -> dict:
        return {"queue": list(self.queue), "bits": list(self.queue.values())}


class Ticking(PagingPolicy):
    """A policy that also runs on the clock interrupt: ``on_tick`` every ``tick`` references."""

    PARAMS = {"tick": _TICK}

    def __init__(
        self, frames: int, events: list | None = None, rng: random.Random | None = None, tick: int = 100, **_: Any
    ) -> None:
        super().__init__(frames)
        if isinstance(tick, bool) or not isinstance(tick, int) or tick < 1:
            raise ValueError(f"{self.policy_name}: tick must be an integer >= 1, got {tick!r}")
        self.tick = tick
        self.until_tick = tick  # references left before the next interrupt

    def counted(self) -> None:
        """One reference served: the clock interrupt fires after every ``tick``-th."""
        self.until_tick -= 1
        if not self.until_tick:
            self.until_tick = self.tick
            self.on_tick()

    def on_tick(self) -> None:
        raise NotImplementedError

    def serve(self, events: list[dict], lo: int, hi: int) -> tuple[int, int]:
        """The generic loop, and ``wrote`` after a write's reference (NRU's M bit). It lives here, not in
        the policy, so an edited copy keeps it."""
        access = self.access
        hits = requests = 0
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if kind == "ref":
                requests += 1
                key = ev["key"]
                hits += access(key)
                if ev.get("op") == "w":
                    self.wrote(key)
            elif kind == "scan":
                for key in scan_keys(ev):
                    requests += 1
                    hits += access(key)
        return requests, hits


@register_policy("paging", "aging")
class Aging(Ticking):
    """Aging (Tanenbaum, *Modern Operating Systems*, 3.4.7): an 8-bit counter per page; at every
    clock tick each counter shifts right by one and the page's R bit enters at the left, then R is
    cleared. A fault evicts the page with the smallest counter. **Our choice where the book is
    silent:** R still counts between ticks, as the bit the next tick would shift in (the smallest
    R·256 + counter goes), so a page loaded and used since the last tick is not the first victim;
    ties go to the page loaded first. ``age`` maps each page to [counter, R] in load order."""

    def __init__(self, frames: int, events: list | None = None, rng: random.Random | None = None, **kw: Any) -> None:
        super().__init__(frames, events, rng, **kw)
        self.age: dict[Hashable, list[int]] = {}

    def access(self, key: Hashable) -> bool:
        age = self.age
        entry = age.get(key)
        if entry is not None:
            entry[1] = 1
            self.counted()
            return True
        if len(age) >= self.frames:
            victim = min(age, key=self._history)  # min keeps the first of equals: load order
            del age[victim]
            self._evicted(victim)
        age[key] = [0, 1]
        self.counted()
        return False

    def _history(self, page: Hashable) -> int:
        counter, r = self.age[page]
        return r << 8 | counter

    def on_tick(self) -> None:
        for entry in self.age.values():
            entry[0] = entry[0] >> 1 | entry[1] << 7
            entry[1] = 0

    def resident(self) -> list[Hashable]:
        """The next victim first."""
        return sorted(self.age, key=self._history)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.age

    def __len__(self) -> int:
        return len(self.age)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        reason = f"its reference history (8 bits shifted in every {self.tick} references, then its R bit) was the lowest: the least used lately (last used at {{last}})"
        return why.say(self, d, reason)

    def state(self) -> dict:
        return {"counters": [[p, c, r] for p, (c, r) in self.age.items()], "tick": self.tick}

    def check_invariants(self) -> None:
        super().check_invariants()
        assert all(0 <= c < 256 and r in (0, 1) for c, r in self.age.values())
        assert 1 <= self.until_tick <= self.tick


@register_policy("paging", "nru")
class NRU(Ticking):
    """Not recently used (Tanenbaum, *Modern Operating Systems*, 3.4.2): each page has an R bit,
    set by every reference and cleared at every clock tick, and an M bit, set by every write and
    kept until the page leaves. A fault sorts the pages into four classes, 2·R + M (0: not
    referenced, clean; 1: not referenced, modified; 2: referenced, clean; 3: both), and evicts a
    page drawn at random, from the panel's generator, from the lowest non-empty class. A write is
    a ``ref`` event with ``"op": "w"`` (the key workloads' ``write_ratio``). ``pages`` holds the
    resident pages in frame order, ``bits`` each one's [R, M]."""

    def __init__(self, frames: int, events: list | None = None, rng: random.Random | None = None, **kw: Any) -> None:
        super().__init__(frames, events, rng, **kw)
        if rng is None:
            raise ValueError("nru needs the panel's generator")
        self.rng = rng
        self.pages: list[Hashable] = []
        self.index: dict[Hashable, int] = {}
        self.bits: dict[Hashable, list[int]] = {}
        self.chose = -1  # the class the last victim came from

    def access(self, key: Hashable) -> bool:
        bits = self.bits.get(key)
        if bits is not None:
            bits[0] = 1
            self.counted()
            return True
        pages, index = self.pages, self.index
        if len(pages) >= self.frames:
            lowest, best = [], 4
            for i, page in enumerate(pages):
                r, m = self.bits[page]
                c = 2 * r + m
                if c < best:
                    lowest, best = [i], c
                elif c == best:
                    lowest.append(i)
            i = lowest[self.rng.randrange(len(lowest))]
            victim = pages[i]
            del index[victim], self.bits[victim]
            pages[i] = key
            self.chose = best
            self._evicted(victim)
        else:
            i = len(pages)
            pages.append(key)
        index[key] = i
        self.bits[key] = [1, 0]
        self.counted()
        return False

    def wrote(self, key: Hashable) -> None:
        self.bits[key][1] = 1

    def on_tick(self) -> None:
        for bits in self.bits.values():
            bits[0] = 0

    def resident(self) -> list[Hashable]:
        return list(self.pages)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.index

    def __len__(self) -> int:
        return len(self.pages)

    _CLASSES = (
        "not referenced and clean",
        "not referenced but modified",
        "referenced but clean",
        "referenced and modified",
    )

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        cls = self._CLASSES[self.chose] if 0 <= self.chose < 4 else "the lowest class"
        reason = f"a random pick from class {self.chose}, {cls}, the lowest class with a page in it (R bits clear every {self.tick} references; last used at {{last}})"
        return why.say(self, d, reason)

    def state(self) -> dict:
        return {"bits": [[p, *self.bits[p]] for p in self.pages], "tick": self.tick}

    def check_invariants(self) -> None:
        super().check_invariants()
        assert set(self.bits) == set(self.index)
        assert all(self.pages[i] == p for p, i in self.index.items())
        assert all(r in (0, 1) and m in (0, 1) for r, m in self.bits.values())
