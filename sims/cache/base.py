"""The cache mechanism's contract: a store of at most ``size`` objects, keyed by any hashable.

Every eviction policy is a ``CachePolicy``: the replacement contract of ``sims.replace`` (hit iff
resident, demand fetch, one victim per miss on a full cache, reported through ``on_evict``) plus
the lists ``view()`` draws. FIFO, LRU, LFU, CLOCK and OPT come from ``sims.replace``, shared with
paging. Ghost entries (keys remembered after eviction) never count against ``size``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Reversible
from itertools import islice
from typing import Any

from sims.core.registry import Param
from sims.replace.base import MAX_SCAN, Replacement, scan_keys

__all__ = ["MAX_SCAN", "VIEW_MAX", "CachePolicy", "scan_keys", "seq"]

VIEW_MAX = 64  # items per list in view(): the first and last VIEW_MAX // 2 of a longer list


class CachePolicy(Replacement):
    """Base class of the cache's eviction policies: ``sims.replace.Replacement`` (capacity, hook,
    stream loop) plus ``view()``. Subclasses keep their own ordered structures and assert them in
    ``check_invariants``."""

    PARAMS: dict[str, Param] = {}
    size_name = "cache size"

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
