"""Scan resistance by probation: 2Q (Johnson & Shasha, VLDB'94) and S3-FIFO (Yang et al., SOSP'23)
put a new key in a small FIFO first, so a scan passes through it without flushing the main cache;
a key reaches the main cache only when it is used again (2Q: after it left the FIFO, while its
ghost is remembered; S3-FIFO: while it was in the FIFO, or after, through its ghost)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any

from sims.cache.base import CachePolicy, seq
from sims.core.diverge import Decision
from sims.core.registry import Param, register_policy
from sims.replace import why


@register_policy("cache", "twoq")
class TwoQ(CachePolicy):
    """Has this key been seen before it fell out of a probation FIFO? New keys enter ``a1in``
    (FIFO, oldest first); keys pushed out of it are remembered in the ghost FIFO ``a1out``; a key
    referenced again while in ``a1out`` is admitted to ``am`` (LRU first). A hit in ``a1in`` moves
    nothing, so a scan passes through ``a1in`` without touching ``am``."""

    PARAMS = {
        "kin": Param(float, 0.25, "a1in's share of the cache (2Q: 25%)", min=0.0, max=1.0),
        "kout": Param(float, 0.5, "a1out's ghost entries, as a share of the cache (2Q: 50%)", min=0.0, max=10.0),
    }

    def __init__(self, size: int, kin: float = 0.25, kout: float = 0.5, **_: Any) -> None:
        super().__init__(size)
        if not (0.0 < kin < 1.0 and kout > 0.0):
            raise ValueError(f"twoq needs 0 < kin < 1 and kout > 0, got kin={kin!r} kout={kout!r}")
        self.kin = max(1, int(size * kin))
        self.kout = max(1, int(size * kout))
        self.a1in: OrderedDict[Hashable, None] = OrderedDict()
        self.a1out: OrderedDict[Hashable, None] = OrderedDict()
        self.am: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, key: Hashable) -> bool:
        am = self.am
        if key in am:
            am.move_to_end(key)
            return True
        if key in self.a1in:
            return True
        if key in self.a1out:
            del self.a1out[key]
            self._reclaim()
            am[key] = None
            return False
        self._reclaim()
        self.a1in[key] = None
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` and ``_reclaim`` inlined over ``keys``."""
        a1in, a1out, am, size, on_evict = self.a1in, self.a1out, self.am, self.size, self.on_evict
        move, inpop, outpop, ampop = am.move_to_end, a1in.popitem, a1out.popitem, am.popitem
        kin, kout = self.kin, self.kout
        hits = 0
        for key in keys:
            if key in am:
                move(key)
                hits += 1
                continue
            if key in a1in:
                hits += 1
                continue
            seen = key in a1out
            if seen:
                del a1out[key]
            if len(a1in) + len(am) >= size:
                if len(a1in) > kin or not am:
                    victim = inpop(False)[0]
                    a1out[victim] = None
                    if len(a1out) > kout:
                        outpop(False)
                else:
                    victim = ampop(False)[0]
                if on_evict is not None:
                    on_evict(victim)
            if seen:
                am[key] = None
            else:
                a1in[key] = None
        return hits

    def _reclaim(self) -> None:
        """Free one slot if the cache is full: from a1in while it is over its share, else am's LRU."""
        a1in, am = self.a1in, self.am
        if len(a1in) + len(am) < self.size:
            return
        if len(a1in) > self.kin or not am:
            victim = a1in.popitem(False)[0]
            self.a1out[victim] = None
            if len(self.a1out) > self.kout:
                self.a1out.popitem(False)
        else:
            victim = am.popitem(False)[0]
        self._evicted(victim)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        if d.facts.get("victim") in self.a1out:
            reason = f"A1in, the probation FIFO, was over its share of {self.kin}, so its oldest key (in since {{admitted}}) went, remembered in A1out"
        else:
            reason = "A1in was within its share, so Am's least recently used key (last used at {last}) went"
        return why.say(self, d, reason) + why.kept(
            other,
            lambda k: "in Am, seen again after probation" if k in self.am else ("in A1in" if k in self.a1in else None),
        )

    def __contains__(self, key: Hashable) -> bool:
        return key in self.am or key in self.a1in

    def __len__(self) -> int:
        return len(self.am) + len(self.a1in)

    def lists(self) -> list[dict]:
        return [
            seq("A1in", self.a1in, len(self.a1in), "oldest first"),
            seq("A1out", self.a1out, len(self.a1out), "oldest first", ghost=True),
            seq("Am", self.am, len(self.am), "LRU first"),
        ]

    def check_invariants(self) -> None:
        super().check_invariants()
        assert len(self.a1out) <= self.kout
        assert not (set(self.a1in) & set(self.am)) and not (set(self.a1out) & (set(self.a1in) | set(self.am)))


@register_policy("cache", "s3fifo")
class S3FIFO(CachePolicy):
    """Was this key hit more than once while on probation? New keys enter the small FIFO
    ``small`` (10%). Evicting from small, a key accessed at least ``move_threshold`` times since
    insertion moves to ``main`` (count reset) and the eviction goes on with the next small key;
    the first key below the threshold leaves for the ghost FIFO ``ghost`` (90% of the size).
    A miss that hits the ghost goes straight to ``main``. ``main`` evicts like CLOCK with a
    2-bit counter: a key with count > 0 is reinserted with min(count, 3) - 1. Main yields while
    it holds more than its share (size - small) or small is empty; otherwise small does. Until
    the first eviction, keys that find small full fill main instead.
    All three are FIFOs, oldest first; values are access counts. This is the authors' code
    (libCacheSim's S3FIFO.c, Dec 2024: move-to-main-threshold 2, ghost 0.9, the warm-up rule);
    tests/test_cache_libcachesim.py compares hit counts with it. One deliberate difference: a
    cache under 20 objects keeps a small FIFO of one, where libCacheSim's holds none."""

    PARAMS = {
        "small_fraction": Param(float, 0.1, "the small FIFO's share of the cache (S3-FIFO: 10%)", min=0.0, max=1.0),
        "ghost_fraction": Param(
            float, 0.9, "ghost entries, as a share of the cache (libCacheSim: 90%)", min=0.0, max=10.0
        ),
        "move_threshold": Param(
            int, 2, "accesses in small that promote a key to main (libCacheSim: 2)", min=1, max=100
        ),
    }

    def __init__(
        self, size: int, small_fraction: float = 0.1, ghost_fraction: float = 0.9, move_threshold: int = 2, **_: Any
    ) -> None:
        super().__init__(size)
        if not 0.0 < small_fraction < 1.0 or not ghost_fraction >= 0.0 or not 1 <= move_threshold <= 3:
            raise ValueError(
                "s3fifo needs 0 < small_fraction < 1, ghost_fraction >= 0 and 1 <= move_threshold <= 3, got "
                f"{small_fraction!r}, {ghost_fraction!r}, {move_threshold!r}"
            )
        self.small_max = max(1, int(size * small_fraction))
        self.main_max = size - self.small_max
        self.ghost_max = int(size * ghost_fraction)
        self.move_threshold = move_threshold
        self.small: OrderedDict[Hashable, int] = OrderedDict()
        self.main: OrderedDict[Hashable, int] = OrderedDict()
        self.ghost: OrderedDict[Hashable, None] = OrderedDict()
        self.warm = False  # an eviction has happened: before it, keys beyond small's share go to main

    def access(self, key: Hashable) -> bool:
        small, main = self.small, self.main
        f = small.get(key)
        if f is not None:
            if f < 3:
                small[key] = f + 1
            return True
        f = main.get(key)
        if f is not None:
            if f < 3:
                main[key] = f + 1
            return True
        ghost_hit = key in self.ghost
        if ghost_hit:
            del self.ghost[key]
        while len(small) + len(main) >= self.size:
            self.warm = True
            if len(main) > self.main_max or not small:
                self._evict_main()
            else:
                self._evict_small()
        if ghost_hit or (not self.warm and len(small) >= self.small_max):
            main[key] = 0
        else:
            small[key] = 0
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access``, ``_evict_small`` and ``_evict_main`` inlined over ``keys`` (a key is in at
        most one of small and main, so main, the larger, is looked up first)."""
        small, main, ghost, size, on_evict = self.small, self.main, self.ghost, self.size, self.on_evict
        sget, mget, spop, mpop, gpop = small.get, main.get, small.popitem, main.popitem, ghost.popitem
        main_max, small_max, ghost_max, threshold = self.main_max, self.small_max, self.ghost_max, self.move_threshold
        warm = self.warm
        hits = 0
        for key in keys:
            f = mget(key)
            if f is not None:
                if f < 3:
                    main[key] = f + 1
                hits += 1
                continue
            f = sget(key)
            if f is not None:
                if f < 3:
                    small[key] = f + 1
                hits += 1
                continue
            ghost_hit = key in ghost
            if ghost_hit:
                del ghost[key]
            while len(small) + len(main) >= size:
                warm = True
                if len(main) > main_max or not small:
                    while True:
                        victim, f = mpop(False)
                        if f == 0:
                            break
                        main[victim] = f - 1
                else:
                    gone = False
                    while small:
                        victim, f = spop(False)
                        if f >= threshold:
                            main[victim] = 0  # stays resident: main may now be over its share
                            continue
                        if ghost_max:
                            ghost[victim] = None
                            if len(ghost) > ghost_max:
                                gpop(False)
                        gone = True
                        break
                    if not gone:  # every key in small moved to main
                        continue
                if on_evict is not None:
                    self.warm = warm
                    on_evict(victim)
            if ghost_hit or (not warm and len(small) >= small_max):
                main[key] = 0
            else:
                small[key] = 0
        self.warm = warm
        return hits

    def _evict_small(self) -> None:
        """Move keys hit often enough to main until one leaves (or small runs empty)."""
        small, main, threshold = self.small, self.main, self.move_threshold
        while small:
            key, f = small.popitem(False)
            if f >= threshold:
                main[key] = 0  # stays resident: main may now be over its share
                continue
            if self.ghost_max:
                ghost = self.ghost
                ghost[key] = None
                if len(ghost) > self.ghost_max:
                    ghost.popitem(False)
            self._evicted(key)
            return

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        if d.facts.get("victim") in self.ghost:
            reason = f"the small FIFO's oldest key was hit fewer than {self.move_threshold} times while on probation (used {{uses}} times), so it left for the ghost FIFO"
        else:
            reason = "the main FIFO's oldest key had its access count down to 0 (last used at {last})"
        return why.say(self, d, reason) + why.kept(
            other, lambda k: "in main" if k in self.main else ("in small" if k in self.small else None)
        )

    def _evict_main(self) -> None:
        main = self.main
        while True:
            key, f = main.popitem(False)
            if f == 0:
                self._evicted(key)
                return
            main[key] = f - 1

    def __contains__(self, key: Hashable) -> bool:
        return key in self.small or key in self.main

    def __len__(self) -> int:
        return len(self.small) + len(self.main)

    def lists(self) -> list[dict]:
        return [
            seq("small", self.small, len(self.small), "oldest first", marks=self.small.__getitem__),
            seq("main", self.main, len(self.main), "oldest first", marks=self.main.__getitem__),
            seq("ghost", self.ghost, len(self.ghost), "oldest first", ghost=True),
        ]

    def check_invariants(self) -> None:
        super().check_invariants()
        assert len(self.ghost) <= self.ghost_max
        assert all(0 <= f <= 3 for f in self.small.values()) and all(0 <= f <= 3 for f in self.main.values())
        assert len(self.small) <= self.size and self.main_max + self.small_max == self.size
        assert not (set(self.small) & set(self.main)) and not (set(self.ghost) & (set(self.small) | set(self.main)))
