"""Write policies: when does a write reach the backing store, and what does a crash lose?

Each policy is two decisions over an eviction cache (``evict``, LRU by default):
- ``allocate``: does a write miss bring the key into the cache?
- ``through``: does every write go to the backend at once, or only when a dirty key is evicted?

Events: ``ref`` (a read, or a write with ``"op": "w"``), ``scan`` (reads) and ``crash``: the cache
loses its contents; dirty keys that never reached the backend count in ``lost_on_crash``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from sims.cache.base import CachePolicy, scan_keys
from sims.core.diverge import Decision, name_key
from sims.core.metrics import ratio
from sims.core.panel import Panel
from sims.core.registry import Param, get_policy, register_policy
from sims.replace import why


class WritePolicy:
    """A write policy: both decisions as class attributes."""

    PARAMS = {"evict": Param(str, "lru", "eviction policy of the cache underneath")}
    allocate = True  # a write miss loads the key into the cache
    through = True  # every write goes to the backend at once

    @classmethod
    def explain(cls, d: Decision) -> str:
        raise NotImplementedError(f"{cls.__name__} does not explain its writes")


@register_policy("cache", "write_through")
class WriteThrough(WritePolicy):
    """Every write updates the cache and the backend: nothing is ever at risk."""

    @classmethod
    def explain(cls, d: Decision) -> str:
        return f"write_through sent the write of {d.subject} to the backend at once and updated the cache: nothing is at risk"


@register_policy("cache", "write_back")
class WriteBack(WritePolicy):
    """Writes mark the cached key dirty; the backend sees one write per dirty eviction."""

    through = False

    @classmethod
    def explain(cls, d: Decision) -> str:
        return f"write_back kept {d.subject} dirty in the cache: the backend sees the write only when {d.subject} is evicted"


@register_policy("cache", "write_around")
class WriteAround(WritePolicy):
    """Writes go to the backend; a write miss does not load the key, so data written once and
    never read back cannot push the hot set out. A cached copy is updated in place."""

    allocate = False

    @classmethod
    def explain(cls, d: Decision) -> str:
        cached = "and updated the cached copy" if d.facts.get("hit") else "without loading it into the cache"
        return f"write_around sent the write of {d.subject} to the backend only, {cached}"


def eviction_cache(evict: str, size: int) -> CachePolicy:
    cls = get_policy("cache", evict)
    if not (isinstance(cls, type) and issubclass(cls, CachePolicy)) or evict == "opt":
        raise ValueError(f"evict: {evict!r} is not an online eviction policy (opt and write policies are not)")
    if getattr(cls, "expires", False):
        raise ValueError(f"evict: {evict!r} expires keys by the stream's clock, which a write panel does not give it")
    return cls(size)


class WritePanel(Panel):
    topic = "cache"

    def __init__(self, name: str, params: dict, ctx: Any, policy: type[WritePolicy]) -> None:
        super().__init__(name, params, ctx)
        self.policy = policy
        self.cache = self._fresh_cache()
        self.dirty: dict[Hashable, None] = {}  # dirty resident keys, in the order they became dirty
        self.requests = self.hits = self.writes = 0
        self.backend_writes = 0
        self.lost_on_crash = 0
        self.crashes = 0

    def _fresh_cache(self) -> CachePolicy:
        cache = eviction_cache(self.params["evict"], self.params["size"])
        cache.on_evict = self._flush
        return cache

    def _flush(self, key: Hashable) -> None:
        """An evicted dirty key is written back."""
        if key in self.dirty:
            del self.dirty[key]
            self.backend_writes += 1

    def write(self, key: Hashable) -> None:
        self.requests += 1
        self.writes += 1
        cache = self.cache
        if self.policy.allocate:
            hit = cache.access(key)
        else:
            hit = key in cache
            if hit:
                cache.access(key)
        if hit:
            self.hits += 1
        if self.policy.through:
            self.backend_writes += 1
        else:
            self.dirty[key] = None

    def crash(self) -> None:
        self.crashes += 1
        self.lost_on_crash += len(self.dirty)
        self.dirty = {}
        self.cache = self._fresh_cache()

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if kind == "ref":
                if ev.get("op") == "w":
                    self.write(ev["key"])
                else:
                    self.requests += 1
                    if self.cache.access(ev["key"]):
                        self.hits += 1
            elif kind == "scan":
                for key in scan_keys(ev):
                    self.requests += 1
                    if self.cache.access(key):
                        self.hits += 1
            elif kind == "crash":
                self.crash()

    def on_event(self, ev: dict) -> None:
        self.feed([ev], 0, 1, ev["t"])

    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        d = why.record(self, self.cache, events, k, name_key)
        if d is None or ev["kind"] != "ref" or ev.get("op") != "w":
            return d
        p = self.policy
        where = "backend now" if p.through else "dirty in cache"
        if not p.allocate and d.action == "admit":
            where = "backend only"
        return Decision(
            "write", name_key(ev["key"]), where, (d.action, d.subject, d.detail), {"hit": d.action == "hit"}
        )

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        if decision.action == "write":
            return self.policy.explain(decision)
        return self.cache.explain(decision, other)

    def metrics(self) -> dict[str, float]:
        return {
            "requests": self.requests,
            "hits": self.hits,
            "misses": self.requests - self.hits,
            "hit_ratio": ratio(self.hits, self.requests),
            "writes": self.writes,
            "backend_writes": self.backend_writes,
            "dirty_at_risk": len(self.dirty),
            "lost_on_crash": self.lost_on_crash,
            "crashes": self.crashes,
        }

    def view(self) -> dict[str, Any]:
        v = self.cache.view()
        v["policy"] = self.policy.policy_name
        v["evict"] = self.params["evict"]
        dirty = list(self.dirty)
        v["dirty"] = {"size": len(dirty), "items": dirty[-64:]}  # the 64 newest dirty keys
        return v

    def check_invariants(self) -> None:
        self.cache.check_invariants()
        assert 0 <= self.hits <= self.requests and self.writes <= self.requests
        for k in self.dirty:
            assert k in self.cache, f"dirty key {k!r} is not resident"
        if self.policy.through:
            assert not self.dirty
