"""Bélády's OPT: the offline optimum, a shadow baseline that reads the future."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from heapq import heapify, heappop, heappush

from sims.core.diverge import Decision
from sims.replace import why
from sims.replace.base import Replacement, references


class Lookahead:
    """The whole reference string (scans expanded) and, per position, the position of the same
    key's next use (``never + i`` when it is never used again, so every pending value is
    distinct); computed once, right to left, in O(n). Shared and read-only: checkpoints never
    copy it."""

    __slots__ = ("keys", "next_use", "never")

    def __init__(self, keys: Iterable[Hashable]) -> None:
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

    @classmethod
    def of_events(cls, events: list[dict]) -> Lookahead:
        """The look-ahead over a stream's ``ref`` and ``scan`` events."""
        return cls(references(events))

    def __deepcopy__(self, memo: dict) -> Lookahead:
        return self


class OPT(Replacement):
    """When is each resident key used next? Evict the one used farthest in the future; a key
    never used again is farthest, and among those the one referenced longest ago goes first.
    ``heap`` holds -(next use) for keys that come back (the key is ``ahead.keys[next use]``; next
    uses are distinct positions, so pops come in the order a (-use, key) heap gives), stale
    entries skipped lazily (O(log n) per miss); ``doomed`` holds the resident keys never used again, oldest first.
    ``access`` follows ``ahead`` position by position; a key the look-ahead did not foresee (an
    event added live) is treated as never used again."""

    policy_name = "opt"

    def __init__(self, size: int, ahead: Lookahead | Iterable[Hashable] = ()) -> None:
        super().__init__(size)
        self.ahead = ahead if isinstance(ahead, Lookahead) else Lookahead(ahead)
        self.pos = 0
        self.next_use: dict[Hashable, int] = {}  # resident key -> its next use
        self.heap: list[int] = []
        self.doomed: dict[Hashable, None] = {}  # resident, never used again; oldest first
        self.unforeseen = 0

    def access(self, key: Hashable) -> bool:
        ahead, i = self.ahead, self.pos
        if i < len(ahead.keys) and ahead.keys[i] == key:
            nu = ahead.next_use[i]
            self.pos = i + 1
        else:
            self.unforeseen += 1
            nu = 3 * ahead.never + self.unforeseen
        next_use, doomed = self.next_use, self.doomed
        hit = key in next_use
        if hit:
            if key in doomed:  # only an unforeseen key can come back
                del doomed[key]
        elif len(next_use) >= self.size:
            if doomed:
                victim = next(iter(doomed))
                del doomed[victim]
            else:
                heap, akeys = self.heap, ahead.keys
                while True:
                    nu_v = -heappop(heap)
                    victim = akeys[nu_v]
                    if next_use.get(victim) == nu_v:
                        break
            del next_use[victim]
            self._evicted(victim)
        next_use[key] = nu
        if nu >= ahead.never:
            doomed[key] = None
        else:
            heappush(self.heap, -nu)
            if len(self.heap) > 4 * self.size + 64:  # drop stale entries: amortised O(1)
                self.heap = [-v for k, v in next_use.items() if k not in doomed]
                heapify(self.heap)
        return hit

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys``."""
        ahead, next_use, doomed, heap = self.ahead, self.next_use, self.doomed, self.heap
        size, on_evict = self.size, self.on_evict
        akeys, anext, never = ahead.keys, ahead.next_use, ahead.never
        n, i, limit = len(akeys), self.pos, 4 * size + 64
        hits = 0
        for key in keys:
            if i < n and akeys[i] == key:
                nu = anext[i]
                i += 1
            else:
                self.unforeseen += 1
                nu = 3 * never + self.unforeseen
            if key in next_use:
                hits += 1
                if key in doomed:  # only an unforeseen key can come back
                    del doomed[key]
            elif len(next_use) >= size:
                if doomed:
                    victim = next(iter(doomed))
                    del doomed[victim]
                else:
                    while True:
                        nu_v = -heappop(heap)
                        victim = akeys[nu_v]
                        if next_use.get(victim) == nu_v:
                            break
                del next_use[victim]
                if on_evict is not None:
                    self.pos = i
                    on_evict(victim)
            next_use[key] = nu
            if nu >= never:
                doomed[key] = None
            else:
                heappush(heap, -nu)
                if len(heap) > limit:  # drop stale entries: amortised O(1)
                    heap[:] = [-v for k, v in next_use.items() if k not in doomed]
                    heapify(heap)
        self.pos = i
        return hits

    def resident(self) -> list[Hashable]:
        """The next victim first: the doomed keys oldest first, then the rest farthest first."""
        rest = sorted((k for k in self.next_use if k not in self.doomed), key=self.next_use.__getitem__, reverse=True)
        return list(self.doomed) + rest

    def __contains__(self, key: Hashable) -> bool:
        return key in self.next_use

    def __len__(self) -> int:
        return len(self.next_use)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        if d.action != "evict":
            return why.say(self, d, "")
        keys, victim = self.ahead.keys, d.facts.get("victim")
        nxt = next((i for i in range(self.pos, len(keys)) if keys[i] == victim), None)
        when = "is never used again" if nxt is None else f"is next used {nxt - self.pos + 1} references from now"
        return why.say(self, d, f"of the resident keys it is the one used farthest in the future (it {when})")

    def check_invariants(self) -> None:
        super().check_invariants()
        keys = self.ahead.keys
        live = {keys[-n] for n in self.heap if self.next_use.get(keys[-n]) == -n}
        assert live | set(self.doomed) == set(self.next_use), "every resident key is in the heap or doomed"
        assert not live & set(self.doomed)
        assert all(self.next_use[k] >= self.ahead.never for k in self.doomed)
