"""The cache mechanism's contract: a store of at most ``size`` objects, keyed by any hashable.

Every eviction policy subclasses ``CachePolicy``: ``access(key)`` returns True on a hit; on a miss
it admits the key (demand fetch: the key is resident afterwards), evicting one resident key first
when the cache is full, and reports each victim through ``on_evict``. Ghost entries (keys
remembered after eviction) never count against ``size``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Reversible
from itertools import islice
from typing import Any

from sims.core.registry import Param

VIEW_MAX = 64  # items per list in view(): the first and last VIEW_MAX // 2 of a longer list
MAX_SCAN = 1_000_000  # keys in one scan event


def scan_keys(ev: dict) -> range:
    """The keys of a ``{"kind": "scan", "start": K, "length": N}`` event: K, K+1, ..., K+N-1.
    The event carries everything needed, so every panel sees the same keys."""
    start, length = ev.get("start"), ev.get("length")
    for name, v in (("start", start), ("length", length)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"scan event at t={ev.get('t')}: field {name!r} must be an integer, got {v!r}")
    if not 0 <= length <= MAX_SCAN:
        raise ValueError(f"scan event at t={ev.get('t')}: length must be in [0, {MAX_SCAN}], got {length}")
    return range(start, start + length)


class CachePolicy:
    """Base class. Subclasses keep their own ordered structures and assert them in
    ``check_invariants``; this class owns the capacity and the eviction hook."""

    PARAMS: dict[str, Param] = {}
    policy_name = ""

    def __init__(self, size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"cache size must be an integer >= 1, got {size!r}")
        self.size = size
        self.on_evict: Callable[[Hashable], None] | None = None  # called with each victim

    def access(self, key: Hashable) -> bool:
        raise NotImplementedError

    def serve(self, events: list[dict], lo: int, hi: int) -> tuple[int, int]:
        """Serve the references in events[lo:hi] (``ref`` keys, ``scan`` ranges; other kinds are
        skipped) and return (requests, hits). LRU, FIFO and CLOCK inline ``access`` here."""
        access = self.access
        hits = requests = 0
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if kind == "ref":
                requests += 1
                if access(ev["key"]):
                    hits += 1
            elif kind == "scan":
                for key in scan_keys(ev):
                    requests += 1
                    if access(key):
                        hits += 1
        return requests, hits

    def __contains__(self, key: Hashable) -> bool:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def _evicted(self, key: Hashable) -> None:
        if self.on_evict is not None:
            self.on_evict(key)

    def lists(self) -> list[dict]:
        """The policy's structures for ``view()``: see ``seq``."""
        return []

    def extra(self) -> dict[str, Any]:
        """Scalars that explain the policy (ARC's p, a clock hand...)."""
        return {}

    def view(self) -> dict[str, Any]:
        return {
            "kind": "cache",
            "policy": self.policy_name,
            "capacity": self.size,
            "resident": len(self),
            "lists": self.lists(),
            **self.extra(),
        }

    def check_invariants(self) -> None:
        assert 0 <= len(self) <= self.size, (self.policy_name, len(self), self.size)


def seq(
    name: str,
    items: Reversible[Hashable] | Iterable[Hashable],
    n: int,
    order: str,
    ghost: bool = False,
    marks: Callable[[Hashable], Any] | None = None,
) -> dict[str, Any]:
    """One list for ``view()``: ``items`` in ``order`` (e.g. "LRU first"), bounded to VIEW_MAX.
    A longer list shows its first and last VIEW_MAX // 2 items and says how many it skipped at
    index ``skipped_at``. ``marks(key)`` adds a per-item flag (visited bit, frequency...)."""
    half = VIEW_MAX // 2
    if n <= VIEW_MAX:
        shown = list(items)
        skipped = 0
    else:
        shown = list(islice(items, half))
        shown += list(reversed(list(islice(reversed(items), half))))  # type: ignore[arg-type]
        skipped = n - VIEW_MAX
    out: dict[str, Any] = {"name": name, "size": n, "order": order, "ghost": ghost, "items": shown}
    if skipped:
        out["skipped"] = skipped
        out["skipped_at"] = half
    if marks is not None:
        out["marks"] = [marks(k) for k in shown]
    return out
