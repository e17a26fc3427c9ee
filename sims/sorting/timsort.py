"""Timsort as CPython's ``list.sort`` runs it, comparison for comparison.

It follows ``Objects/listsort.txt`` and ``Objects/listobject.c`` of CPython 3.13 (``cpython =
"3.13"``, the default; 3.14 sorts the same way) or of 3.11 (``cpython = "3.11"``; 3.12 is the
same): minrun from the first six bits of n, natural runs (3.13 also folds equal keys into a
descending run and extends a reversed run by an ascending tail), binary insertion up to minrun,
powersort's merge order (3.11+), and merges that first gallop to trim what is already in place,
copy the shorter run out, and switch to galloping while one run keeps winning (``min_gallop``
adapts: it falls while galloping pays and rises when it stops). Its comparison count equals
``list.sort``'s on the same input in that version (``tests/test_sorting_timsort.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.registry import Param, register_policy
from sims.sorting.array import SortState
from sims.sorting.base import Sort, Step
from sims.sorting.galloping import INSERT, MIN_GALLOP, RUN, Merging


def minrun(n: int) -> int:
    """n's first six bits, plus one if any bit below them is set (n itself below 64)."""
    r = 0
    while n >= 64:
        r |= n & 1
        n >>= 1
    return n + r


def power(s1: int, n1: int, n2: int, n: int) -> int:
    """Powersort's power of the boundary between runs [s1, s1+n1) and [s1+n1, s1+n1+n2) of n
    items: the first bit where the runs' midpoints, as fractions of n, differ (listobject.c
    ``powerloop``; twice the midpoints, so they stay integers)."""
    result = 0
    a = 2 * s1 + n1
    b = a + n1 + n2
    while True:
        result += 1
        if a >= n:
            a -= n
            b -= n
        elif b >= n:
            return result
        a <<= 1
        b <<= 1


@register_policy("sorting", "timsort")
class Timsort(Sort):
    """CPython's list.sort (Tim Peters, 2002; powersort merge order by Munro & Wild, in CPython 3.11+)."""

    PARAMS = {
        "cpython": Param(str, "3.13", "whose list.sort: 3.13 (and 3.14) or 3.11 (and 3.12)", choices=("3.11", "3.13"))
    }
    PSEUDOCODE = (
        "minrun ← n's top 6 bits (+1 if rest ≠ 0)",
        "next run: ascending, or descending: reverse",
        "short run: binary insertion up to minrun",
        "push it; merge as the powers say (powersort)",
        "merge: gallop to trim, copy the shorter out",
        "  one pair at a time (A's on a tie)",
        "  gallop: one run wins, jump 1, 3, 7, 15, …",
        "at the end: merge what is left on the stack",
    )

    def __init__(self, cpython: str = "3.13") -> None:
        self.cpython = cpython

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        return TimState(s, self.cpython).sort()


class TimState(Merging):
    """One list.sort call: the pending runs ``[base, length, power]`` and ``min_gallop``."""

    def __init__(self, s: SortState, cpython: str) -> None:
        self.s = s
        self.new_runs = cpython != "3.11"
        self.pending: list[list[int]] = []
        self.min_gallop = MIN_GALLOP

    def sort(self) -> Iterator[Step]:
        s, n = self.s, self.s.n
        if n < 2:
            return
        mr = minrun(n)
        lo, remaining = 0, n
        while remaining:
            count = yield from (self.count_run_313 if self.new_runs else self.count_run_311)(lo, remaining)
            s.runs += 1
            if count < mr:
                force = min(remaining, mr)
                yield from self.binarysort(lo, lo + force, lo + count)
                count = force
            p = self.pending
            if p:
                pw = power(p[-1][0], p[-1][1], count, n)
                while len(p) > 1 and p[-2][2] > pw:
                    yield from self.merge_at(len(p) - 2)
                p[-1][2] = pw
            p.append([lo, count, 0])
            lo += count
            remaining -= count
        p = self.pending
        while len(p) > 1:
            i = len(p) - 2
            if i > 0 and p[i - 1][1] < p[i + 1][1]:
                i -= 1
            yield from self.merge_at(i)

    # -- runs ---------------------------------------------------------------------------------------
    def reverse(self, lo: int, hi: int) -> Iterator[Step]:
        hi -= 1
        while lo < hi:
            yield from self.s.swap(lo, hi, RUN)
            lo += 1
            hi -= 1

    def count_run_311(self, lo: int, remaining: int) -> Iterator[Step]:
        """The run at lo: non-decreasing, or strictly decreasing (reversed in place)."""
        if remaining == 1:
            return 1
        n = 2
        if (yield from self.less(lo + 1, lo, RUN, "run")):
            while n < remaining and (yield from self.less(lo + n, lo + n - 1, RUN, "descending run")):
                n += 1
            yield from self.reverse(lo, lo + n)
        else:
            while n < remaining and not (yield from self.less(lo + n, lo + n - 1, RUN, "ascending run")):
                n += 1
        return n

    def count_run_313(self, lo: int, remaining: int) -> Iterator[Step]:
        """3.13's run: ascending; else descending, where each block of equal keys is reversed
        first (so the final reversal keeps them in order), then extended by an ascending tail."""
        n = 1
        while n < remaining and not (yield from self.less(lo + n, lo + n - 1, RUN, "ascending run")):
            n += 1
        if n == remaining:
            return n
        if n > 1:
            if (yield from self.less(lo, lo + n - 1, RUN, "run start below its end")):
                return n
            yield from self.reverse(lo, lo + n)  # all equal: a descending run of equal keys
        n += 1
        neq = 0
        while n < remaining:
            if (yield from self.less(lo + n, lo + n - 1, RUN, "descending run")):
                if neq:
                    yield from self.reverse(lo + n - neq - 1, lo + n)
                    neq = 0
            elif (yield from self.less(lo + n - 1, lo + n, RUN, "descending run")):
                break
            else:
                neq += 1
            n += 1
        if neq:
            yield from self.reverse(lo + n - neq - 1, lo + n)
        yield from self.reverse(lo, lo + n)
        while n < remaining and not (yield from self.less(lo + n, lo + n - 1, RUN, "ascending tail")):
            n += 1
        return n

    def binarysort(self, lo: int, hi: int, start: int) -> Iterator[Step]:
        """Extend the sorted a[lo:start] to a[lo:hi], each item placed by binary search."""
        s = self.s
        a = s.a
        for i in range(max(start, lo + 1), hi):
            left, right = lo, i
            while left < right:
                mid = left + ((right - left) >> 1)
                if (yield from self.less(i, mid, INSERT, "binary insertion")):
                    right = mid
                else:
                    left = mid + 1
            if left < i:
                s.held = pivot = a[i]
                for p in range(i, left, -1):
                    s.write(p, a[p - 1])
                    yield INSERT, "shift {} right to a[{}]", (a[p][0], p)
                s.write(left, pivot)
                s.held = None
                yield INSERT, "insert {} at a[{}]", (pivot[0], left)
