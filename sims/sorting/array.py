"""The mechanism: the array being sorted and the memory beside it, which count every comparison
and every write and own the invariants.

Items are ``(key, tag)``: the tag is the item's place in the input, so stability is measured
(equal keys must come out in tag order) rather than assumed. A location is an ``int``: ``i >= 0``
is the array slot ``a[i]``, ``~k`` (that is, ``-k - 1``) is the auxiliary slot ``aux[k]`` (a merge
buffer, an output array, buckets laid end to end). ``counts`` is a count table (counting and radix
sort). Every step of an algorithm is one comparison (``lt``, ``less``), one element write
(``write``) or one count-table update (``tally``); a swap is two writes, so two steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sims.steps import Step

Item = tuple  # (key, tag)


class SortState:
    """One run: the array ``a``, the auxiliary slots ``aux`` (None: empty), the count table, the
    item in hand (``held``: insertion's key, a swap's first half) and the counters the metrics read.

    ``lo``..``hi`` is the key range the input declares (a counting sort's table spans it).
    ``extra`` is the peak of auxiliary slots in use (``aux`` plus ``counts``), in elements.
    """

    def __init__(self, keys: list, lo: Any = 0, hi: Any = 0) -> None:
        self.keys = list(keys)  # the input, by tag
        self.n = len(self.keys)
        self.lo, self.hi = lo, hi
        self.a: list[Item] = [(k, i) for i, k in enumerate(self.keys)]
        self.aux: list[Item | None] = []
        self.counts: list[int] = []
        self.cuts: list[int] = []  # bucket boundaries in aux (bucket sort), for the view
        self.aux_at = 0  # the array slot aux[0] is drawn under (a merge buffer under its run)
        self.held: Item | None = None
        self.span: tuple[int, int] = (0, self.n)  # the part of the array the algorithm works on now
        self.cmp: tuple[int, ...] = ()  # locations the latest step compared
        self.wrote: int | None = None  # location the latest step wrote
        self.counted = -1  # count-table slot the latest step updated
        self.comparisons = 0
        self.writes = 0
        self.swaps = 0
        self.tallies = 0  # count-table updates
        self.passes = 0  # passes over the array (bubble, selection, radix digits, bottom-up merge widths)
        self.runs = 0  # runs found and pushed (Timsort)
        self.depth = 0  # the deepest recursion (quick, top-down merge)
        self.extra = 0

    # -- reading and comparing ----------------------------------------------------------------------
    def item(self, p: int) -> Item:
        return self.a[p] if p >= 0 else self.aux[~p]

    def less(self, x: Item, y: Item, at: tuple[int, ...] = ()) -> bool:
        """x's key < y's key: one comparison; ``at`` are the locations to highlight."""
        self.comparisons += 1
        self.cmp, self.wrote, self.counted = at, None, -1
        return x[0] < y[0]

    def lt(self, p: int, q: int) -> bool:
        """The item at location p < the item at location q."""
        return self.less(self.item(p), self.item(q), (p, q))

    # -- writing ------------------------------------------------------------------------------------
    def write(self, p: int, x: Item) -> None:
        """Store item x at location p: one element write."""
        if p >= 0:
            self.a[p] = x
        else:
            self.aux[~p] = x
        self.writes += 1
        self.cmp, self.wrote, self.counted = (), p, -1

    def swap(self, i: int, j: int, line: int) -> Iterator[Step]:
        """Exchange a[i] and a[j]: two writes, two steps (the first leaves a[i]'s item in hand)."""
        a = self.a
        self.held = a[i]
        self.write(i, a[j])
        yield line, "swap: a[{}] ← {}, holding {}", (i, a[i][0], self.held[0])
        self.write(j, self.held)
        self.held = None
        self.swaps += 1
        yield line, "a[{}] ← {}: swapped", (j, a[j][0])

    def tally(self, v: int, value: int) -> None:
        """Set count-table slot v: one count-table update."""
        self.counts[v] = value
        self.tallies += 1
        self.cmp, self.wrote, self.counted = (), None, v

    # -- auxiliary memory ---------------------------------------------------------------------------
    def use(self, slots: int = 0, counts: int = 0, at: int = 0) -> None:
        """Take ``slots`` empty auxiliary slots (drawn under ``a[at]`` on) and a zeroed table of
        ``counts``, replacing any."""
        self.aux = [None] * slots
        self.counts = [0] * counts
        self.aux_at = at
        self.extra = max(self.extra, slots + counts)

    def release(self) -> None:
        self.aux, self.counts, self.cuts = [], [], []

    # -- results ------------------------------------------------------------------------------------
    def is_sorted(self) -> bool:
        """The array is a permutation of the input in non-decreasing key order."""
        a = self.a
        return sorted(t for _, t in a) == list(range(self.n)) and all(a[i][0] <= a[i + 1][0] for i in range(self.n - 1))

    def is_stable(self) -> bool:
        """Sorted, and every run of equal keys in input (tag) order."""
        a = self.a
        return self.is_sorted() and all(a[i][0] < a[i + 1][0] or a[i][1] < a[i + 1][1] for i in range(self.n - 1))

    # -- the invariants -----------------------------------------------------------------------------
    def check_invariants(self) -> None:
        keys = self.keys
        for k, t in self.a:
            assert 0 <= t < self.n and keys[t] == k, f"a holds ({k!r}, {t!r}), which is no input item"
        for x in self.aux:
            assert x is None or keys[x[1]] == x[0], f"aux holds {x!r}, which is no input item"
        if self.held is None and not any(x is not None for x in self.aux):
            assert sorted(t for _, t in self.a) == list(range(self.n)), "an item was lost or copied twice"
        assert all(c >= 0 for c in self.counts), "a negative count"
        assert len(self.aux) + len(self.counts) <= self.extra, "more auxiliary slots than the recorded peak"
        assert 2 * self.swaps <= self.writes, "a swap is two writes"
