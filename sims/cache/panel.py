"""The cache panel: one eviction policy over the shared reference stream.

Events it understands: ``{"kind": "ref", "key": K}`` (a read; ``"op": "w"`` writes count the
same here) and ``{"kind": "scan", "start": K, "length": N}``, a sequential scan of the N keys
K, K+1, ..., K+N-1 (the "run a scan" action). Other kinds are ignored.
"""

from __future__ import annotations

from typing import Any

from sims.cache.base import CachePolicy
from sims.core.diverge import Decision, name_key
from sims.core.metrics import ratio
from sims.core.panel import Panel
from sims.replace import why
from sims.replace.base import references

__all__ = ["CachePanel", "references"]


class CachePanel(Panel):
    topic = "cache"

    def __init__(self, name: str, params: dict, ctx: Any, cache: CachePolicy) -> None:
        super().__init__(name, params, ctx)
        self.cache = cache
        self.requests = 0
        self.hits = 0

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        requests, hits = self.cache.serve(events, lo, hi)
        self.requests += requests
        self.hits += hits

    def on_event(self, ev: dict) -> None:
        self.feed([ev], 0, 1, ev["t"])

    def decide(self, events: list[dict], k: int) -> Decision | None:
        return why.record(self, self.cache, events, k, name_key)

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        return self.cache.explain(decision, other)

    def metrics(self) -> dict[str, float]:
        return {
            "requests": self.requests,
            "hits": self.hits,
            "misses": self.requests - self.hits,
            "hit_ratio": ratio(self.hits, self.requests),
        }

    def view(self) -> dict[str, Any]:
        return self.cache.view()

    def check_invariants(self) -> None:
        self.cache.check_invariants()
        assert 0 <= self.hits <= self.requests
