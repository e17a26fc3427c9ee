"""LIRS (Jiang & Zhang, SIGMETRICS'02): evict by reuse distance, not recency."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any

from sims.cache.base import CachePolicy, seq
from sims.core.diverge import Decision
from sims.core.registry import Param, register_policy
from sims.replace import why


@register_policy("cache", "lirs")
class LIRS(CachePolicy):
    """Was this key's last reuse distance short (LIR) or long (HIR)? LIR keys hold all but
    ``hir_slots`` of the cache and are never evicted directly; resident HIR keys wait in ``q``
    (FIFO, next victim first). The stack ``s`` (oldest first) holds every LIR key and the HIR keys
    (resident or ghost) more recent than the oldest LIR key, which is always at the bottom: a HIR
    key hit while still in ``s`` has a shorter reuse distance than that LIR key and swaps with it.

    Ghost (non-resident) HIR entries: the paper removes them only by stack pruning, so a scan of
    fresh keys grows ``s`` without bound (``ghost_bound = "none"``). By default (``"size"``) at
    most ``size`` of them stay, the oldest ghost dropped first: a deliberate choice that bounds
    memory, as libCacheSim does (it caps the whole stack at 2 x size). ``hir_slots`` is
    max(1, int(size * hir_fraction)), as in libCacheSim. ``outside_hits`` counts hits on resident
    HIR keys no longer in ``s``: there the paper (and this class) only moves the key to the top,
    while libCacheSim also demotes the bottom LIR key (docs/memory-cache.md, "Where the policies
    differ from their papers")."""

    PARAMS = {
        "hir_fraction": Param(float, 0.01, "share of the cache for resident HIR keys (LIRS: ~1%)", min=0.0, max=1.0),
        "ghost_bound": Param(
            str,
            "size",
            "ghost HIR entries kept in the stack: size (at most size) | none (the paper)",
            choices=("size", "none"),
        ),
    }

    def __init__(self, size: int, hir_fraction: float = 0.01, ghost_bound: str = "size", **_: Any) -> None:
        super().__init__(size)
        if not 0.0 < hir_fraction < 1.0:
            raise ValueError(f"lirs hir_fraction must be in (0, 1), got {hir_fraction!r}")
        if ghost_bound not in ("size", "none"):
            raise ValueError(f"lirs ghost_bound must be 'size' or 'none', got {ghost_bound!r}")
        self.ghost_max = size if ghost_bound == "size" else None
        self.outside_hits = 0
        self.hir_slots = max(1, min(size - 1, int(size * hir_fraction)))
        self.lir_max = size - self.hir_slots
        self.s: OrderedDict[Hashable, None] = OrderedDict()  # bottom (oldest) first
        self.q: OrderedDict[Hashable, None] = OrderedDict()  # resident HIR, next victim first
        self.lir: dict[Hashable, None] = {}
        self.ghosts: OrderedDict[Hashable, None] = OrderedDict()  # non-resident HIR in s, oldest first

    def access(self, key: Hashable) -> bool:
        s, q, lir = self.s, self.q, self.lir
        if key in lir:
            bottom = next(iter(s))
            s.move_to_end(key)
            if bottom == key:
                self._prune()
            return True
        if key in q:
            if key in s:  # reuse distance beat the oldest LIR key: promote
                s.move_to_end(key)
                del q[key]
                lir[key] = None
                self._demote()
            else:
                self.outside_hits += 1
                s[key] = None
                q.move_to_end(key)
            return True
        if len(lir) < self.lir_max:  # warm-up: the first keys become LIR
            if key in s:
                del self.ghosts[key]
                s.move_to_end(key)
            else:
                s[key] = None
            lir[key] = None
            return False
        if len(lir) + len(q) >= self.size:
            victim = q.popitem(False)[0]
            if victim in s:
                self.ghosts[victim] = None
            self._evicted(victim)
        if key in s:  # a ghost HIR key: its reuse distance is short, make it LIR
            del self.ghosts[key]
            s.move_to_end(key)
            lir[key] = None
            self._demote()
        else:
            s[key] = None
            q[key] = None
        ghosts = self.ghosts
        if self.ghost_max is not None:
            while len(ghosts) > self.ghost_max:
                del s[ghosts.popitem(False)[0]]
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys`` (``_demote`` and ``_prune``, the rarer steps, called)."""
        s, q, lir, ghosts, size, on_evict = self.s, self.q, self.lir, self.ghosts, self.size, self.on_evict
        move, qmove, qpop, gpop = s.move_to_end, q.move_to_end, q.popitem, ghosts.popitem
        lir_max, ghost_max, demote, prune = self.lir_max, self.ghost_max, self._demote, self._prune
        hits = 0
        for key in keys:
            if key in lir:
                hits += 1
                if next(iter(s)) == key:
                    move(key)
                    prune()
                else:
                    move(key)
                continue
            if key in q:
                hits += 1
                if key in s:  # reuse distance beat the oldest LIR key: promote
                    move(key)
                    del q[key]
                    lir[key] = None
                    demote()
                else:
                    self.outside_hits += 1
                    s[key] = None
                    qmove(key)
                continue
            if len(lir) < lir_max:  # warm-up: the first keys become LIR
                if key in s:
                    del ghosts[key]
                    move(key)
                else:
                    s[key] = None
                lir[key] = None
                continue
            if len(lir) + len(q) >= size:
                victim = qpop(False)[0]
                if victim in s:
                    ghosts[victim] = None
                if on_evict is not None:
                    on_evict(victim)
            if key in s:  # a ghost HIR key: its reuse distance is short, make it LIR
                del ghosts[key]
                move(key)
                lir[key] = None
                demote()
            else:
                s[key] = None
                q[key] = None
            if ghost_max is not None:
                while len(ghosts) > ghost_max:
                    del s[gpop(False)[0]]
        return hits

    def _demote(self) -> None:
        """Over the LIR budget: the bottom LIR key becomes resident HIR (end of q), then prune."""
        if len(self.lir) > self.lir_max:
            self._prune()  # only needed when the LIR set was empty (a cache of one)
            bottom = self.s.popitem(False)[0]
            del self.lir[bottom]
            self.q[bottom] = None
            self._prune()

    def _prune(self) -> None:
        """Drop HIR entries from the bottom of s until a LIR key is there."""
        s, lir, ghosts = self.s, self.lir, self.ghosts
        while s:
            k = next(iter(s))
            if k in lir:
                return
            del s[k]
            if k in ghosts:
                del ghosts[k]

    def __contains__(self, key: Hashable) -> bool:
        return key in self.lir or key in self.q

    def __len__(self) -> int:
        return len(self.lir) + len(self.q)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        reason = f"it was the oldest resident HIR key (a long reuse distance; LIR keys, {len(self.lir)} of them, are never evicted), last used at {{last}}"
        return why.say(self, d, reason) + why.kept(
            other,
            lambda k: (
                "as LIR, its reuse distance being short"
                if k in self.lir
                else ("as resident HIR" if k in self.q else None)
            ),
        )

    def _status(self, key: Hashable) -> str:
        return "LIR" if key in self.lir else ("HIR" if key in self.q else "ghost")

    def lists(self) -> list[dict]:
        return [
            seq("S", self.s, len(self.s), "bottom (oldest) first", marks=self._status),
            seq("Q", self.q, len(self.q), "next victim first"),
        ]

    def extra(self) -> dict[str, Any]:
        return {
            "lir": len(self.lir),
            "lir_max": self.lir_max,
            "hir_slots": self.hir_slots,
            "ghosts": len(self.ghosts),
            "outside_hits": self.outside_hits,
        }

    def check_invariants(self) -> None:
        super().check_invariants()
        s, q, lir, ghosts = self.s, self.q, self.lir, self.ghosts
        assert len(lir) <= self.lir_max
        assert self.ghost_max is None or len(ghosts) <= self.ghost_max
        assert not (set(lir) & set(q)), "a key is both LIR and resident HIR"
        for k in lir:
            assert k in s, "every LIR key is in the stack"
        for k in ghosts:
            assert k in s and k not in lir and k not in q
        for k in s:
            assert k in lir or k in q or k in ghosts, k
        if lir:
            assert next(iter(s)) in lir, "the stack bottom is a LIR key"
