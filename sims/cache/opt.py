"""Belady's OPT: the offline optimum, a shadow baseline that reads the future."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from heapq import heapify, heappop, heappush
from typing import Any

from sims.cache.base import CachePolicy, seq
from sims.core.registry import register_policy


class Future:
    """The whole reference string and, per position, the position of the same key's next use
    (``never + i`` when it is never used again, so every pending value is distinct). Shared,
    read-only: checkpoints never copy it."""

    __slots__ = ("keys", "next_use", "never")

    def __init__(self, keys: Sequence[Hashable]) -> None:
        self.keys = list(keys)
        n = len(self.keys)
        self.never = 2 * n + 2
        nxt = [0] * n
        seen: dict[Hashable, int] = {}
        for i in range(n - 1, -1, -1):
            k = self.keys[i]
            nxt[i] = seen.get(k, self.never + i)
            seen[k] = i
        self.next_use = nxt

    def __deepcopy__(self, memo: dict) -> Future:
        return self


@register_policy("cache", "opt")
class OPT(CachePolicy):
    """When is each resident key used next? Evict the one used farthest in the future (never
    used again counts as farthest). ``heap`` holds (-next use, key) for keys that come back,
    stale entries skipped lazily; ``doomed`` holds the resident keys never used again, any of
    which is an optimal victim. ``access`` follows ``future`` position by position; a key the
    future did not foresee (an event added live) is treated as never used again."""

    def __init__(self, size: int, future: Future | Sequence[Hashable] = (), **_: Any) -> None:
        super().__init__(size)
        self.future = future if isinstance(future, Future) else Future(future)
        self.pos = 0
        self.next_use: dict[Hashable, int] = {}  # resident key -> its next use
        self.heap: list[tuple[int, Hashable]] = []
        self.doomed: dict[Hashable, None] = {}  # resident, never used again; newest last
        self.unforeseen = 0

    def access(self, key: Hashable) -> bool:
        fut, i = self.future, self.pos
        if i < len(fut.keys) and fut.keys[i] == key:
            nu = fut.next_use[i]
            self.pos = i + 1
        else:
            self.unforeseen += 1
            nu = 3 * fut.never + self.unforeseen
        next_use, doomed = self.next_use, self.doomed
        hit = key in next_use
        if hit:
            if key in doomed:  # only an unforeseen key can come back
                del doomed[key]
        elif len(next_use) >= self.size:
            if doomed:
                victim = doomed.popitem()[0]
            else:
                heap = self.heap
                while True:
                    neg, victim = heappop(heap)
                    if next_use.get(victim) == -neg:
                        break
            del next_use[victim]
            self._evicted(victim)
        next_use[key] = nu
        if nu >= fut.never:
            doomed[key] = None
        else:
            heappush(self.heap, (-nu, key))
            if len(self.heap) > 4 * self.size + 64:  # drop stale entries: amortised O(1)
                self.heap = [(-v, k) for k, v in next_use.items() if k not in doomed]
                heapify(self.heap)
        return hit

    def __contains__(self, key: Hashable) -> bool:
        return key in self.next_use

    def __len__(self) -> int:
        return len(self.next_use)

    def lists(self) -> list[dict]:
        ranked = sorted(self.next_use, key=self.next_use.__getitem__)  # view() only
        now, never = self.pos, self.future.never

        def distance(k: Hashable) -> int | None:  # references until the next use; None = never
            v = self.next_use[k]
            return v - now if v < never else None

        return [seq("by next use", ranked, len(ranked), "soonest first", marks=distance)]

    def check_invariants(self) -> None:
        super().check_invariants()
        live = {k for v, k in ((-n, k) for n, k in self.heap) if self.next_use.get(k) == v}
        assert live | set(self.doomed) == set(self.next_use), "every resident key is in the heap or doomed"
        assert not live & set(self.doomed)
        assert all(self.next_use[k] >= self.future.never for k in self.doomed)
