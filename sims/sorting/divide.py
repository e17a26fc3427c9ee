"""The n log n comparison sorts: merge sort (top-down and bottom-up), quicksort (three pivot
rules) and heap sort (Knuth, TAOCP vol. 3, §5.2.4, §5.2.2 algorithm Q, §5.2.3 algorithm H;
Sedgewick & Wayne, Algorithms, 4th ed., §2.2–2.4 for the array forms used here).

Recursion is unrolled (merge sort lists its merges in the order the recursion makes them;
quicksort keeps an explicit stack), so a sorted input that drives quicksort n levels deep costs
no Python recursion; ``depth`` still reports the deepest call that partitions or merges.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.registry import Param, register_policy
from sims.sorting.array import SortState
from sims.sorting.base import Sort, Step


def merge(s: SortState, lo: int, mid: int, hi: int) -> Iterator[Step]:
    """Merge the sorted a[lo:mid] and a[mid:hi]: the left half is copied out to aux, then the
    smaller head goes first (the left one on a tie, which keeps the sort stable)."""
    a = s.a
    na = mid - lo
    s.use(na, at=lo)
    s.span = (lo, hi)
    for k in range(na):
        s.write(~k, a[lo + k])
        yield 2, "copy {} out to aux[{}]", (a[lo + k][0], k)
    i, j, k = 0, mid, lo
    while i < na and j < hi:
        if s.lt(j, ~i):
            yield 3, "{} < {}: the right half's goes first", (a[j][0], s.aux[i][0])
            s.write(k, a[j])
            yield 3, "a[{}] ← {}", (k, a[k][0])
            j += 1
        else:
            yield 3, "{} ≤ {}: the left half's goes first", (s.aux[i][0], a[j][0])
            s.write(k, s.aux[i])
            yield 3, "a[{}] ← {}", (k, a[k][0])
            i += 1
        k += 1
    while i < na:
        s.write(k, s.aux[i])
        yield 4, "a[{}] ← {}: the left half's rest", (k, a[k][0])
        i, k = i + 1, k + 1
    s.release()


def top_down_merges(lo: int, hi: int, depth: int, out: list) -> None:
    """(lo, mid, hi, depth) of every merge, in the order the recursion makes them."""
    if hi - lo < 2:
        return
    mid = (lo + hi) // 2
    top_down_merges(lo, mid, depth + 1, out)
    top_down_merges(mid, hi, depth + 1, out)
    out.append((lo, mid, hi, depth))


@register_policy("sorting", "merge")
class Merge(Sort):
    """Merge sort (von Neumann, 1945): top-down halves recursively, bottom-up merges runs of 1,
    2, 4, … in passes. At most n⌈log2 n⌉ comparisons, n/2 extra slots, stable."""

    PARAMS = {
        "variant": Param(str, "top_down", "top_down | bottom_up", choices=("top_down", "bottom_up")),
    }
    PSEUDOCODE = (
        "top-down: sort the halves, merge them",
        "bottom-up: merge runs of width 1, 2, 4, …",
        "merge: copy the left half out to aux",
        "  smaller head → a[k] (the left on a tie)",
        "  copy the rest of aux back",
    )

    def __init__(self, variant: str = "top_down") -> None:
        self.variant = variant

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        n = s.n
        if self.variant == "top_down":
            merges: list = []
            top_down_merges(0, n, 1, merges)
            for lo, mid, hi, depth in merges:
                s.depth = max(s.depth, depth)
                yield from merge(s, lo, mid, hi)
            return
        width = 1
        while width < n:
            s.passes += 1
            for lo in range(0, n - width, 2 * width):
                yield from merge(s, lo, lo + width, min(lo + 2 * width, n))
            width *= 2


@register_policy("sorting", "quick")
class Quick(Sort):
    """Quicksort (Hoare, 1961), with Hoare's partition as Sedgewick & Wayne write it: the pivot
    goes to the front, i scans right past smaller items, j scans left past larger ones, and
    they swap until they cross. The pivot rule decides the depth: the first item of sorted input
    is its minimum, so every split is lopsided, the recursion goes n − 1 deep and the
    comparisons are quadratic; the median of first, middle and last (Singleton, 1969) or a random
    item splits near the middle."""

    stable = False

    PARAMS = {
        "pivot": Param(str, "median3", "first | median3 | random", choices=("first", "median3", "random")),
    }
    PSEUDOCODE = (
        "quicksort(lo, hi): stop if hi − lo < 2",
        "  pick p; swap a[p], a[lo]; pivot v ← a[lo]",
        "  i ← lo; j ← hi; repeat:",
        "    i ← i + 1 while a[i] < v",
        "    j ← j − 1 while v < a[j]",
        "    if i ≥ j: stop, else swap a[i], a[j]",
        "  swap a[lo], a[j]: the pivot is in place",
        "  quicksort(lo, j); quicksort(j + 1, hi)",
    )

    def __init__(self, pivot: str = "median3") -> None:
        self.pivot = pivot

    def choose(self, s: SortState, lo: int, hi: int, rng: Random) -> Iterator[Step]:
        """The pivot's index in a[lo:hi]."""
        if self.pivot == "random":
            return lo + rng.randrange(hi - lo)
        if self.pivot == "first" or hi - lo < 3:
            return lo
        x, y, z = lo, (lo + hi - 1) // 2, hi - 1
        a = s.a
        if s.lt(y, x):
            yield 1, "median of three: {} < {}", (a[y][0], a[x][0])
            x, y = y, x
        else:
            yield 1, "median of three: {} ≤ {}", (a[x][0], a[y][0])
        if not s.lt(z, y):
            yield 1, "median of three: {} ≤ {}, so {} is the median", (a[y][0], a[z][0], a[y][0])
            return y
        yield 1, "median of three: {} < {}", (a[z][0], a[y][0])
        m = x if s.lt(z, x) else z
        yield 1, "median of three: {} is the median", (a[m][0],)
        return m

    def partition(self, s: SortState, lo: int, hi: int) -> Iterator[Step]:
        """Hoare's partition of a[lo:hi] around v = a[lo]; returns where v ends."""
        a = s.a
        i, j = lo, hi
        while True:
            i += 1
            while True:
                lt = s.lt(i, lo)
                yield 3, "i: {} < pivot {}? {}", (a[i][0], a[lo][0], "yes, go on" if lt else "no, stop")
                if not lt or i == hi - 1:
                    break
                i += 1
            j -= 1
            while True:
                lt = s.lt(lo, j)
                yield 4, "j: pivot {} < {}? {}", (a[lo][0], a[j][0], "yes, go on" if lt else "no, stop")
                if not lt or j == lo:
                    break
                j -= 1
            if i >= j:
                return j
            yield from s.swap(i, j, 5)

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        stack = [(0, s.n, 1)]
        while stack:
            lo, hi, depth = stack.pop()
            if hi - lo < 2:
                continue
            s.depth = max(s.depth, depth)
            s.span = (lo, hi)
            p = yield from self.choose(s, lo, hi, rng)
            if p != lo:
                yield from s.swap(p, lo, 1)
            j = yield from self.partition(s, lo, hi)
            if j != lo:
                yield from s.swap(lo, j, 6)
            stack.append((j + 1, hi, depth + 1))
            stack.append((lo, j, depth + 1))  # the left part first, as the recursion does


@register_policy("sorting", "heap")
class Heap(Sort):
    """Heap sort (Williams, 1964; Floyd's bottom-up heap construction, 1964): build a max-heap in
    the array, then swap the largest to the end and sift the new root down. n log n in the worst
    case, in place, and unstable: the swaps carry equal keys past each other."""

    stable = False

    PSEUDOCODE = (
        "max-heap: sift_down(i) for i = n/2 − 1 … 0",
        "for end in n − 1 … 1:",
        "  swap a[0], a[end]: the largest to its place",
        "  sift_down(0, end)",
        "sift_down(i, end): while i has a child:",
        "  c ← larger child; a[i] < a[c]? swap, i ← c",
    )

    def sift_down(self, s: SortState, i: int, end: int) -> Iterator[Step]:
        a = s.a
        while 2 * i + 1 < end:
            c = 2 * i + 1
            if c + 1 < end:
                if s.lt(c, c + 1):
                    yield 5, "children {} < {}: the right is larger", (a[c][0], a[c + 1][0])
                    c += 1
                else:
                    yield 5, "children {} ≥ {}: the left is larger", (a[c][0], a[c + 1][0])
            if not s.lt(i, c):
                yield 5, "{} ≥ child {}: in place", (a[i][0], a[c][0])
                return
            yield 5, "{} < child {}: swap down", (a[i][0], a[c][0])
            yield from s.swap(i, c, 5)
            i = c

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        n = s.n
        for i in range(n // 2 - 1, -1, -1):
            s.span = (i, n)
            yield from self.sift_down(s, i, n)
        for end in range(n - 1, 0, -1):
            s.span = (0, end + 1)
            yield from s.swap(0, end, 2)
            yield from self.sift_down(s, 0, end)
