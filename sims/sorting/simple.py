"""The quadratic sorts: bubble, selection and insertion (Knuth, TAOCP vol. 3, §5.2.2, §5.2.3, §5.2.1).

Each compares neighbours or scans for a minimum; on n items they make up to n(n − 1)/2
comparisons. Insertion sort's work is n − 1 plus the number of inversions, which is why it wins
on nearly sorted input; its inner loop is also what bucket sort runs inside each bucket.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.registry import register_policy
from sims.sorting.array import SortState
from sims.sorting.base import Sort, Step

QUADRATIC_TRACE_MAX = 2_000  # n(n − 1)/2 = 2 million comparisons, plus as many writes


@register_policy("sorting", "bubble")
class Bubble(Sort):
    """Swap neighbours that are out of order; each pass ends where the previous one last swapped,
    since everything after that is in place (Knuth's bubble sort, TAOCP §5.2.2, algorithm B)."""

    trace_max = QUADRATIC_TRACE_MAX
    PSEUDOCODE = (
        "end ← n",
        "while end > 1:",
        "  last ← 0",
        "  for i in 1 … end − 1:",
        "    if a[i] < a[i − 1]: swap; last ← i",
        "  end ← last  (a[last:] is in place)",
    )

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        a, end = s.a, s.n
        while end > 1:
            s.passes += 1
            s.span = (0, end)
            last = 0
            for i in range(1, end):
                if s.lt(i, i - 1):
                    yield 4, "compare {} > {}: swap", (a[i - 1][0], a[i][0])
                    yield from s.swap(i - 1, i, 4)
                    last = i
                else:
                    yield 4, "compare {} ≤ {}: keep", (a[i - 1][0], a[i][0])
            end = last


@register_policy("sorting", "selection")
class Selection(Sort):
    """Find the smallest of what is left and swap it to the front (TAOCP §5.2.3, algorithm S).
    Always n(n − 1)/2 comparisons and at most n − 1 swaps; the long swaps make it unstable."""

    stable = False

    trace_max = QUADRATIC_TRACE_MAX
    PSEUDOCODE = (
        "for i in 0 … n − 2:",
        "  m ← i",
        "  for j in i + 1 … n − 1:",
        "    if a[j] < a[m]: m ← j",
        "  swap a[i], a[m]  (if m ≠ i)",
    )

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        a, n = s.a, s.n
        for i in range(n - 1):
            s.passes += 1
            s.span = (i, n)
            m = i
            for j in range(i + 1, n):
                if s.lt(j, m):
                    yield 3, "{} < {}: the smallest so far", (a[j][0], a[m][0])
                    m = j
                else:
                    yield 3, "{} ≥ {}: a[{}] stays the smallest", (a[j][0], a[m][0], m)
            if m != i:
                yield from s.swap(i, m, 4)


def insertion_sort(s: SortState, lo: int, hi: int, aux: bool, lines: tuple[int, int, int]) -> Iterator[Step]:
    """Sort slots lo … hi − 1 (of aux when ``aux``) by insertion: each item is taken in hand and
    the larger items before it shift right one slot; ``lines`` are (compare, shift, put down)."""

    def loc(i: int) -> int:
        return ~i if aux else i

    compare, shift, put = lines
    for i in range(lo + 1, hi):
        x = s.held = s.item(loc(i))
        j = i - 1
        while j >= lo:
            y = s.item(loc(j))
            if not s.less(x, y, (loc(j),)):
                yield compare, "{} ≥ {}: {} goes after it", (x[0], y[0], x[0])
                break
            yield compare, "{} < {}: shift {} right", (x[0], y[0], y[0])
            s.write(loc(j + 1), y)
            yield shift, "slot {} ← {}", (j + 1, y[0])
            j -= 1
        if j + 1 != i:
            s.write(loc(j + 1), x)
            yield put, "put {} down in slot {}", (x[0], j + 1)
        s.held = None


@register_policy("sorting", "insertion")
class Insertion(Sort):
    """Take each item in hand and shift the larger ones before it right (TAOCP §5.2.1, straight
    insertion): n − 1 comparisons plus one per inversion, so it is fast on nearly sorted input."""

    trace_max = QUADRATIC_TRACE_MAX
    PSEUDOCODE = (
        "for i in 1 … n − 1:",
        "  x ← a[i] (in hand); j ← i − 1",
        "  while j ≥ 0 and x < a[j]:",
        "    a[j + 1] ← a[j]; j ← j − 1",
        "  a[j + 1] ← x",
    )

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        return insertion_sort(s, 0, s.n, False, (2, 3, 4))
