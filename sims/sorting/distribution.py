"""Sorts that never compare two keys: counting and radix sort; and bucket sort, which compares
only inside its buckets (CLRS, 3rd ed., §8.2–8.4; radix LSD as in Knuth, TAOCP vol. 3, §5.2.5).

They are told the key range ``lo … hi`` with the input (the workload declares it; ``contention
trace`` notes it while reading the file), as a counting sort is told its k. A count-table update
is a step of its own (``tallies``); placing an item and moving its slot on is one write.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.registry import Param, register_policy
from sims.sorting.array import SortState
from sims.sorting.base import Sort, Step
from sims.sorting.simple import insertion_sort

MAX_TABLE = 1_000_000  # the largest count table or number of buckets a sort may take


def distribute(s: SortState, digit, size: int, lines: tuple[int, int, int, int]) -> Iterator[Step]:
    """One stable counting pass on ``digit(key)`` in 0 … size − 1: count, prefix sums, place
    each item (last first) into aux, copy back. ``lines``: (count, sums, place, copy)."""
    a, n = s.a, s.n
    if not n:
        return
    s.use(n, size)
    counts = s.counts
    count, sums, place, back = lines
    for i in range(n):
        v = digit(a[i][0])
        s.tally(v, counts[v] + 1)
        yield count, "{}: count[{}] = {}", (a[i][0], v, counts[v])
    for v in range(1, size):
        s.tally(v, counts[v] + counts[v - 1])
        yield sums, "count[{}] = {}: where the items with {} end", (v, counts[v], v)
    for i in range(n - 1, -1, -1):
        v = digit(a[i][0])
        counts[v] -= 1
        s.write(~counts[v], a[i])
        yield place, "{} goes to out[{}]", (a[i][0], counts[v])
    for i in range(n):
        s.write(i, s.aux[i])
        yield back, "a[{}] ← {}", (i, a[i][0])
    s.release()


@register_policy("sorting", "counting")
class Counting(Sort):
    """Counting sort (Seward, 1954): count each key, turn the counts into positions, place every
    item at its key's position (last first, so equal keys keep their order). n + k table updates
    and 2n writes for k possible keys; no comparison."""

    integer_keys = True
    key_table = True
    comparison_sort = False
    trace_max = 100_000
    PSEUDOCODE = (
        "count[0 … hi − lo] ← 0",
        "for each x: count[x − lo] += 1",
        "for v in 1 …: count[v] += count[v − 1]",
        "each x, last first: out[−−count[x−lo]] ← x",
        "copy out back into a",
    )

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        lo = s.lo
        s.passes = 1
        return distribute(s, lambda k: k - lo, s.hi - lo + 1, (1, 2, 3, 4))


@register_policy("sorting", "radix")
class Radix(Sort):
    """LSD radix sort (Hollerith's card sorters; Knuth §5.2.5): a stable counting pass per digit of
    (key − lo) in the given base, least significant first. Passes = digits of hi − lo; each costs
    n + base table updates and 2n writes; no comparison."""

    integer_keys = True
    comparison_sort = False
    trace_max = 100_000
    PARAMS = {"base": Param(int, 10, "the radix: values per digit", min=2, max=65536)}
    PSEUDOCODE = (
        "for each digit, least significant first:",
        "  count each item's digit",
        "  prefix sums: where each digit's items end",
        "  place items, last first, into out",
        "  copy out back into a (stable)",
    )

    def __init__(self, base: int = 10) -> None:
        self.base = base

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        lo, b, place = s.lo, self.base, 1
        while True:
            s.passes += 1
            yield from distribute(s, lambda k, p=place: (k - lo) // p % b, b, (1, 2, 3, 4))
            place *= b
            if place > s.hi - lo:
                return


@register_policy("sorting", "bucket")
class Bucket(Sort):
    """Bucket sort (CLRS §8.4): items go to B buckets by where their key falls in lo … hi, each
    bucket is insertion-sorted, and the buckets are read out in order. Few comparisons when keys
    spread evenly; many when they crowd into one bucket."""

    PARAMS = {"buckets": Param(int, 0, "buckets (0: one per item)", min=0, max=MAX_TABLE)}
    PSEUDOCODE = (
        "B buckets, equal slices of lo … hi",
        "each x → bucket ⌊(x − lo)·B / (hi − lo + 1)⌋",
        "insertion-sort each bucket: compare …",
        "  … shift a larger item right …",
        "  … put the item down",
        "read the buckets back into a, in order",
    )

    def __init__(self, buckets: int = 0) -> None:
        self.buckets = buckets

    def which(self, s: SortState, nb: int):
        lo, hi = s.lo, s.hi
        if isinstance(lo, int) and isinstance(hi, int):
            return lambda k: (k - lo) * nb // (hi - lo + 1)
        return lambda k: min(nb - 1, int((k - lo) / (hi - lo) * nb)) if hi > lo else 0

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        a, n = s.a, s.n
        nb = min(self.buckets or n, MAX_TABLE) or 1
        which = self.which(s, nb)
        sizes = [0] * nb
        for x in a:  # reading is free: where each bucket starts, to draw them end to end
            sizes[which(x[0])] += 1
        starts = [0] * nb
        for b in range(1, nb):
            starts[b] = starts[b - 1] + sizes[b - 1]
        s.use(n)
        s.extra = max(s.extra, n + nb)
        s.cuts = [st for st in starts[1:] if 0 < st < n]
        fill = starts[:]
        for i in range(n):
            b = which(a[i][0])
            s.write(~fill[b], a[i])
            fill[b] += 1
            yield 1, "{} goes to bucket {}", (a[i][0], b)
        for b in range(nb):
            if sizes[b] > 1:
                yield from insertion_sort(s, starts[b], starts[b] + sizes[b], True, (2, 3, 4))
        for i in range(n):
            s.write(i, s.aux[i])
            yield 5, "a[{}] ← {}", (i, a[i][0])
        s.release()
