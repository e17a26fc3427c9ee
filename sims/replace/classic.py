"""FIFO, LRU, LFU and CLOCK: O(1) per reference each, for paging and cache alike."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable

from sims.core.diverge import Decision
from sims.replace import why
from sims.replace.base import Replacement


class LRU(Replacement):
    """Which key was used least recently? ``od`` holds the resident keys, least recent first."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.od: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, key: Hashable) -> bool:
        od = self.od
        if key in od:
            od.move_to_end(key)
            return True
        if len(od) >= self.size:
            victim = od.popitem(False)[0]
            if self.on_evict is not None:
                self.on_evict(victim)
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
                victim = pop(False)[0]
                if on_evict is not None:
                    on_evict(victim)
            od[key] = None
        return hits

    def resident(self) -> list[Hashable]:
        return list(self.od)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.od

    def __len__(self) -> int:
        return len(self.od)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        return why.say(self, d, "the least recently used resident key (last used at {last})")


class FIFO(Replacement):
    """Which key arrived first? ``od`` holds the resident keys in admission order; hits move nothing."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.od: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, key: Hashable) -> bool:
        od = self.od
        if key in od:
            return True
        if len(od) >= self.size:
            victim = od.popitem(False)[0]
            if self.on_evict is not None:
                self.on_evict(victim)
        od[key] = None
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys``."""
        od, size, on_evict, pop = self.od, self.size, self.on_evict, self.od.popitem
        hits = 0
        for key in keys:
            if key in od:
                hits += 1
                continue
            if len(od) >= size:
                victim = pop(False)[0]
                if on_evict is not None:
                    on_evict(victim)
            od[key] = None
        return hits

    def resident(self) -> list[Hashable]:
        return list(self.od)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.od

    def __len__(self) -> int:
        return len(self.od)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        return why.say(self, d, "the oldest arrival (admitted at {admitted}; hits since never moved it)")


class LFU(Replacement):
    """Which key was used least often while resident? ``buckets[f]`` holds the keys with count f,
    least recent first (the tie-break); ``low`` is the smallest non-empty count. Counts are
    forgotten on eviction, so a formerly hot set that moves away keeps its slots."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.freq: dict[Hashable, int] = {}
        self.buckets: dict[int, OrderedDict[Hashable, None]] = {}
        self.low = 0

    def access(self, key: Hashable) -> bool:
        freq, buckets = self.freq, self.buckets
        f = freq.get(key)
        if f is not None:
            b = buckets[f]
            del b[key]
            if not b:
                del buckets[f]
                if self.low == f:
                    self.low = f + 1
            nb = buckets.get(f + 1)
            if nb is None:
                nb = buckets[f + 1] = OrderedDict()
            nb[key] = None
            freq[key] = f + 1
            return True
        if len(freq) >= self.size:
            b = buckets[self.low]
            victim = b.popitem(False)[0]
            if not b:
                del buckets[self.low]
            del freq[victim]
            self._evicted(victim)
        b1 = buckets.get(1)
        if b1 is None:
            b1 = buckets[1] = OrderedDict()
        b1[key] = None
        freq[key] = 1
        self.low = 1
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys``."""
        freq, buckets, size, on_evict = self.freq, self.buckets, self.size, self.on_evict
        get, bucket = freq.get, buckets.get
        low = self.low
        hits = 0
        for key in keys:
            f = get(key)
            if f is not None:
                b = buckets[f]
                del b[key]
                if not b:
                    del buckets[f]
                    if low == f:
                        low = f + 1
                f += 1
                b = bucket(f)
                if b is None:
                    b = buckets[f] = OrderedDict()
                b[key] = None
                freq[key] = f
                hits += 1
                continue
            if len(freq) >= size:
                b = buckets[low]
                victim = b.popitem(False)[0]
                if not b:
                    del buckets[low]
                del freq[victim]
                if on_evict is not None:
                    self.low = low
                    on_evict(victim)
            b = bucket(1)
            if b is None:
                b = buckets[1] = OrderedDict()
            b[key] = None
            freq[key] = 1
            low = 1
        self.low = low
        return hits

    def resident(self) -> list[Hashable]:
        """Lowest count first, then least recent."""
        return [k for f in sorted(self.buckets) for k in self.buckets[f]]

    def __contains__(self, key: Hashable) -> bool:
        return key in self.freq

    def __len__(self) -> int:
        return len(self.freq)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        return why.say(self, d, "used {uses} times while resident, the fewest (the least recent among equals)")

    def check_invariants(self) -> None:
        super().check_invariants()
        assert sum(len(b) for b in self.buckets.values()) == len(self.freq)
        for f, b in self.buckets.items():
            assert b, f"empty bucket {f}"
            for k in b:
                assert self.freq[k] == f
        if self.freq:
            assert self.low == min(self.buckets), (self.low, min(self.buckets))


class Clock(Replacement):
    """LRU approximated by one bit per slot: a load and a hit set the slot's bit (R = 1 on load,
    as a page table's hardware does, and as the paging topic's CLOCK does: one definition); on a
    miss the hand sweeps, clearing set bits (a second chance), and evicts the first slot whose
    bit is clear. Slots ``0..n-1`` are filled; ``where`` maps each resident key to its slot."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.keys: list[Hashable] = [None] * size
        self.ref = bytearray(size)
        self.where: dict[Hashable, int] = {}
        self.hand = 0

    def access(self, key: Hashable) -> bool:
        where = self.where
        slot = where.get(key)
        if slot is not None:
            self.ref[slot] = 1
            return True
        n = len(where)
        if n < self.size:
            slot = n
        else:
            ref, size, hand = self.ref, self.size, self.hand
            while ref[hand]:
                ref[hand] = 0
                hand += 1
                if hand == size:
                    hand = 0
            slot = hand
            victim = self.keys[slot]
            del where[victim]
            self.hand = hand + 1 if hand + 1 < size else 0
            if self.on_evict is not None:
                self.on_evict(victim)
        self.keys[slot] = key
        self.ref[slot] = 1
        where[key] = slot
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys``."""
        where, ref, slots, size, on_evict = self.where, self.ref, self.keys, self.size, self.on_evict
        get = where.get
        hand = self.hand
        hits = 0
        for key in keys:
            slot = get(key)
            if slot is not None:
                ref[slot] = 1
                hits += 1
                continue
            slot = len(where)
            if slot >= size:
                while ref[hand]:
                    ref[hand] = 0
                    hand += 1
                    if hand == size:
                        hand = 0
                slot = hand
                victim = slots[slot]
                del where[victim]
                hand = hand + 1 if hand + 1 < size else 0
                if on_evict is not None:
                    self.hand = hand  # the hook may look at the clock (why.record, the view)
                    on_evict(victim)
            slots[slot] = key
            ref[slot] = 1
            where[key] = slot
        self.hand = hand
        return hits

    def resident(self) -> list[Hashable]:
        """Slot order from the hand once full (the order the hand will visit them)."""
        n = len(self.where)
        if n < self.size:
            return self.keys[:n]
        return self.keys[self.hand :] + self.keys[: self.hand]

    def __contains__(self, key: Hashable) -> bool:
        return key in self.where

    def __len__(self) -> int:
        return len(self.where)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        reason = f"the hand reached its slot with the reference bit clear (not used since the hand last passed; hand now at slot {self.hand})"
        return why.say(self, d, reason + ", last used at {last}")

    def check_invariants(self) -> None:
        super().check_invariants()
        assert 0 <= self.hand < self.size
        for k, s in self.where.items():
            assert self.keys[s] == k
        assert sorted(self.where.values()) == list(range(len(self.where)))
