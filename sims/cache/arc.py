"""ARC (Megiddo & Modha, FAST'03): recency and frequency lists that adapt their split."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any

from sims.cache.base import CachePolicy, seq
from sims.core.diverge import Decision
from sims.core.registry import register_policy
from sims.replace import why


@register_policy("cache", "arc")
class ARC(CachePolicy):
    """How much of the cache should hold keys seen once (T1) versus keys seen again (T2)?
    Each list is LRU first. B1 and B2 remember the keys just evicted from T1 and T2 (ghosts):
    a hit in B1 says T1 was too small and raises the target ``p`` for |T1|; a hit in B2 lowers it.
    Invariants: |T1|+|T2| <= c, |T1|+|B1| <= c, |T2|+|B2| <= 2c, all four <= 2c, 0 <= p <= c."""

    def __init__(self, size: int, **_: Any) -> None:
        super().__init__(size)
        self.t1: OrderedDict[Hashable, None] = OrderedDict()
        self.t2: OrderedDict[Hashable, None] = OrderedDict()
        self.b1: OrderedDict[Hashable, None] = OrderedDict()
        self.b2: OrderedDict[Hashable, None] = OrderedDict()
        self.p = 0.0

    def access(self, key: Hashable) -> bool:
        t1, t2, b1, b2, c = self.t1, self.t2, self.b1, self.b2, self.size
        if key in t2:
            t2.move_to_end(key)
            return True
        if key in t1:
            del t1[key]
            t2[key] = None
            return True
        if key in b1:  # T1 was evicted too early: grow its target
            self.p = min(float(c), self.p + (1.0 if len(b1) >= len(b2) else len(b2) / len(b1)))
            self._replace(False)
            del b1[key]
            t2[key] = None
            return False
        if key in b2:  # T2 was evicted too early: shrink T1's target
            self.p = max(0.0, self.p - (1.0 if len(b2) >= len(b1) else len(b1) / len(b2)))
            self._replace(True)
            del b2[key]
            t2[key] = None
            return False
        l1 = len(t1) + len(b1)
        if l1 == c:
            if len(t1) < c:
                b1.popitem(False)
                self._replace(False)
            else:  # B1 is empty: drop T1's LRU outright
                self._evicted(t1.popitem(False)[0])
        else:
            total = l1 + len(t2) + len(b2)
            if total >= c:
                if total == 2 * c:
                    b2.popitem(False)
                if len(t1) + len(t2) >= c:  # always true here: ghosts exist only when full
                    self._replace(False)
        t1[key] = None
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` and ``_replace`` inlined over ``keys``, in the same order of steps."""
        t1, t2, b1, b2, c, on_evict = self.t1, self.t2, self.b1, self.b2, self.size, self.on_evict
        move2, pop1, pop2 = t2.move_to_end, t1.popitem, t2.popitem
        p, fc, c2 = self.p, float(c), 2 * c
        hits = 0
        for key in keys:
            if key in t2:
                move2(key)
                hits += 1
                continue
            if key in t1:
                del t1[key]
                t2[key] = None
                hits += 1
                continue
            if key in b1:
                n1, n2 = len(b1), len(b2)
                p = min(fc, p + (1.0 if n1 >= n2 else n2 / n1))
                ghost, in_b2 = b1, False
            elif key in b2:
                n1, n2 = len(b1), len(b2)
                p = max(0.0, p - (1.0 if n2 >= n1 else n1 / n2))
                ghost, in_b2 = b2, True
            else:
                ghost, in_b2 = None, False
                l1 = len(t1) + len(b1)
                if l1 == c:
                    if len(t1) < c:
                        b1.popitem(False)
                    else:  # B1 is empty: drop T1's LRU outright
                        victim = pop1(False)[0]
                        if on_evict is not None:
                            self.p = p
                            on_evict(victim)
                        t1[key] = None
                        continue
                else:
                    total = l1 + len(t2) + len(b2)
                    if total == c2:
                        b2.popitem(False)
                    if total < c or len(t1) + len(t2) < c:
                        t1[key] = None
                        continue
            n1 = len(t1)
            if n1 and (n1 > p or (in_b2 and n1 == p)):
                victim = pop1(False)[0]
                b1[victim] = None
            else:
                victim = pop2(False)[0]
                b2[victim] = None
            if on_evict is not None:
                self.p = p
                on_evict(victim)
            if ghost is None:
                t1[key] = None
            else:
                del ghost[key]
                t2[key] = None
        self.p = p
        return hits

    def _replace(self, in_b2: bool) -> None:
        """Evict T1's LRU into B1 if T1 is over its target, else T2's LRU into B2."""
        t1 = self.t1
        if t1 and (len(t1) > self.p or (in_b2 and len(t1) == self.p)):
            victim = t1.popitem(False)[0]
            self.b1[victim] = None
        else:
            victim = self.t2.popitem(False)[0]
            self.b2[victim] = None
        self._evicted(victim)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        victim = d.facts.get("victim")
        if victim in self.b2:
            reason = f"T1 was within its target p={self.p:.1f}, so T2's least recently used key (seen {{uses}} times, last at {{last}}) went, to ghost list B2"
        elif victim not in self.b1:
            reason = "T1 filled the whole cache with keys seen once, so its least recently used key (last at {last}) went outright, with no ghost"
        else:
            reason = f"T1, the keys seen once since they came in, was over its target p={self.p:.1f}, so its least recently used key (last at {{last}}) went, to ghost list B1"
        return why.say(self, d, reason) + why.kept(other, self._where)

    def _where(self, key: Hashable) -> str | None:
        if key in self.t2:
            return "in T2 because it was seen at least twice"
        return "in T1" if key in self.t1 else None

    def __contains__(self, key: Hashable) -> bool:
        return key in self.t1 or key in self.t2

    def __len__(self) -> int:
        return len(self.t1) + len(self.t2)

    def lists(self) -> list[dict]:
        return [
            seq("B1", self.b1, len(self.b1), "LRU first", ghost=True),
            seq("T1", self.t1, len(self.t1), "LRU first"),
            seq("T2", self.t2, len(self.t2), "LRU first"),
            seq("B2", self.b2, len(self.b2), "LRU first", ghost=True),
        ]

    def extra(self) -> dict[str, Any]:
        return {"p": self.p}

    def check_invariants(self) -> None:
        super().check_invariants()
        c = self.size
        t1, t2, b1, b2 = len(self.t1), len(self.t2), len(self.b1), len(self.b2)
        assert t1 + t2 <= c and t1 + b1 <= c and t2 + b2 <= 2 * c and t1 + t2 + b1 + b2 <= 2 * c
        assert 0.0 <= self.p <= c
        union = set(self.t1) | set(self.t2) | set(self.b1) | set(self.b2)
        assert len(union) == t1 + t2 + b1 + b2, "ARC lists overlap"
        if b1 or b2:
            assert t1 + t2 == c, "ghosts exist only once the cache is full"
