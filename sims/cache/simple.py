"""MRU, uniform random and TTL eviction: the baselines the other cache policies are measured by.
O(1) per request each (TTL's purge is O(1) per expired key)."""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any

from sims.cache.base import CachePolicy, scan_keys, seq
from sims.core.diverge import Decision
from sims.core.registry import Param, register_policy
from sims.replace import why
from sims.replace.base import random_run


@register_policy("cache", "mru")
class MRU(CachePolicy):
    """Which key was used most recently? Chou & DeWitt's MRU (VLDB'85, the DBMIN study): for a
    file scanned in a loop larger than the buffer, the page just used is the one needed last.
    ``od`` holds the resident keys, least recent first; the victim is its last entry."""

    def __init__(self, size: int, **_: Any) -> None:
        super().__init__(size)
        self.od: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, key: Hashable) -> bool:
        od = self.od
        if key in od:
            od.move_to_end(key)
            return True
        if len(od) >= self.size:
            self._evicted(od.popitem(True)[0])
        od[key] = None
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys``."""
        od, size, on_evict = self.od, self.size, self.on_evict
        move, pop = od.move_to_end, od.popitem
        hits = 0
        for key in keys:
            if key in od:
                move(key)
                hits += 1
                continue
            if len(od) >= size:
                victim = pop(True)[0]
                if on_evict is not None:
                    on_evict(victim)
            od[key] = None
        return hits

    def resident(self) -> list[Hashable]:
        return list(reversed(self.od))

    def __contains__(self, key: Hashable) -> bool:
        return key in self.od

    def __len__(self) -> int:
        return len(self.od)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        return why.say(self, d, "the most recently used resident key (last used at {last}), the one a loop needs last")

    def lists(self) -> list[dict]:
        return [seq("recency", self.od, len(self.od), "LRU first, the victim last")]


@register_policy("cache", "random")
class Random(CachePolicy):
    """Which key does a fair draw pick? RAND in Bélády's study of replacement algorithms (IBM
    Systems Journal, 1966): a uniform victim among the resident keys, drawn from the panel's own
    seeded generator. ``keys`` holds the resident keys in slot order, ``where`` their slots."""

    def __init__(self, size: int, **_: Any) -> None:
        super().__init__(size)
        self.keys: list[Hashable] = []
        self.where: dict[Hashable, int] = {}
        self.rng = random.Random(0)  # a trace replay's; a panel hands over its own (use_rng)

    def use_rng(self, rng: random.Random) -> None:
        self.rng = rng

    def access(self, key: Hashable) -> bool:
        where, keys = self.where, self.keys
        if key in where:
            return True
        if len(keys) >= self.size:
            i = self.rng.randrange(len(keys))
            victim = keys[i]
            del where[victim]
            keys[i] = key
            self._evicted(victim)
        else:
            i = len(keys)
            keys.append(key)
        where[key] = i
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys`` (``sims.replace.base.random_run``)."""
        return random_run(self.where, self.keys, self.size, self.on_evict, self.rng, keys)

    def resident(self) -> list[Hashable]:
        return list(self.keys)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.where

    def __len__(self) -> int:
        return len(self.keys)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        reason = f"the panel's generator drew its slot uniformly from all {self.size} (last used at {{last}})"
        return why.say(self, d, reason)

    def lists(self) -> list[dict]:
        return [seq("slots", self.keys, len(self.keys), "slot order")]

    def check_invariants(self) -> None:
        super().check_invariants()
        assert len(self.where) == len(self.keys)
        assert all(self.keys[i] == k for k, i in self.where.items())


class Clocked(CachePolicy):
    """A policy that reads the clock: ``now`` is the time of the reference being served (the
    stream's virtual seconds), or advances ``tick`` seconds a reference where nothing gives times
    (a key trace). ``serve`` lives here, not in the policy, so an edited copy keeps it."""

    def __init__(self, size: int, tick: float = 0.001) -> None:
        super().__init__(size)
        self.tick = tick
        self.now = 0.0
        self._timed = False

    def clock(self) -> float:
        """The time of the reference being served."""
        if not self._timed:
            self.now += self.tick
        return self.now

    def serve(self, events: list[dict], lo: int, hi: int) -> tuple[int, int]:
        """Each reference at its event's time."""
        self._timed = True
        access = self.access
        hits = requests = 0
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if kind == "ref":
                self.now = ev["t"]
                requests += 1
                hits += access(ev["key"])
            elif kind == "scan":
                self.now = ev["t"]
                for key in scan_keys(ev):
                    requests += 1
                    hits += access(key)
        return requests, hits


@register_policy("cache", "ttl")
class TTL(Clocked):
    """An LRU cache whose keys expire ``ttl`` seconds after they were admitted, as cachetools'
    ``TTLCache`` does: a read does not extend the deadline, a read of an expired key is a miss,
    the next admission first removes every expired key (soonest deadline first), and a cache still
    full then evicts the least recently used key. ``od`` is the LRU order, ``deadline`` each key's
    expiry in admission order (the order keys expire in, the TTL being the same for all).

    Time is the stream's virtual time; a trace without times advances ``tick`` seconds a reference."""

    PARAMS = {
        "ttl": Param(float, 1.0, "time to live: seconds from admission to expiry", above=0.0, max=1e6),
        "tick": Param(
            float, 0.001, "clock advance per reference when a trace has no times, seconds", above=0.0, max=1.0
        ),
    }
    expires = True  # removes keys on its own: a miss may free several slots, a full cache may not stay full

    def __init__(self, size: int, ttl: float = 1.0, tick: float = 0.001, **_: Any) -> None:
        for name, v in (("ttl", ttl), ("tick", tick)):
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < float("inf"):
                raise ValueError(f"ttl: {name} must be a number > 0, got {v!r}")
        super().__init__(size, float(tick))
        self.ttl = float(ttl)
        self.od: OrderedDict[Hashable, None] = OrderedDict()
        self.deadline: OrderedDict[Hashable, float] = OrderedDict()
        self.expired = 0  # keys removed by their deadline rather than for room

    def _remove(self, key: Hashable) -> None:
        del self.od[key]
        del self.deadline[key]
        self._evicted(key)

    def access(self, key: Hashable) -> bool:
        now, deadline = self.clock(), self.deadline
        if key in deadline:
            if now < deadline[key]:
                self.od.move_to_end(key)
                return True
            self.expired += 1
            self._remove(key)
        while deadline:  # the expiry pass cachetools runs before an insertion
            first = next(iter(deadline))
            if now < deadline[first]:
                break
            self.expired += 1
            self._remove(first)
        if len(self.od) >= self.size:
            self._remove(next(iter(self.od)))
        self.od[key] = None
        deadline[key] = now + self.ttl
        return False

    def resident(self) -> list[Hashable]:
        return list(self.od)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.od

    def __len__(self) -> int:
        return len(self.od)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        f = d.facts
        admitted = f.get("admitted")
        if d.action == "evict" and admitted is not None and f.get("t", 0.0) >= admitted + self.ttl:
            reason = f"its {self.ttl:g} s to live had run out (admitted at {{admitted}}, last used at {{last}})"
        else:
            reason = "the cache was full of live keys, so the least recently used went (last used at {last})"
        return why.say(self, d, reason)

    def lists(self) -> list[dict]:
        return [seq("by deadline", self.deadline, len(self.deadline), "soonest expiry first")]

    def extra(self) -> dict[str, Any]:
        return {"ttl": self.ttl, "expired": self.expired}

    def check_invariants(self) -> None:
        super().check_invariants()
        assert set(self.od) == set(self.deadline)
        d = list(self.deadline.values())
        assert all(a <= b for a, b in zip(d, d[1:], strict=False)), "deadlines in admission order"
