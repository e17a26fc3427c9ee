"""What every sort is: a stepping algorithm (``sims.steps``) over a ``SortState``.

``run(s, rng)`` yields one step per comparison, element write or count-table update, each with
its pseudocode line and a sentence; ``rng`` is the panel's own generator (a random pivot).
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random
from typing import ClassVar

from sims.sorting.array import SortState
from sims.steps import Step, StepAlgorithm

__all__ = ["Sort", "Step", "compare"]


class Sort(StepAlgorithm):
    """A policy: ``run`` yields the steps of one sort; the state it works on is the mechanism."""

    integer_keys: ClassVar[bool] = False  # True: keys must be integers (counting, radix)
    key_table: ClassVar[bool] = False  # True: a count table spans the key range lo … hi (counting)
    trace_max: ClassVar[int] = 50_000  # the most numbers ``contention trace`` sorts with it
    comparison_sort: ClassVar[bool] = True  # False: orders by key values, never comparing two keys
    stable: ClassVar[bool] = True  # equal keys always come out in input order (tests/test_sorting.py checks it)

    def run(self, s: SortState, rng: Random) -> Iterator[Step]:
        raise NotImplementedError


def compare(s: SortState, p: int, q: int, line: int, what: str) -> Iterator[Step]:
    """One comparison step, "what: is x < y? yes"; returns whether the item at p is less."""
    lt = s.lt(p, q)
    yield line, "{}: {} < {}? {}", (what, s.item(p)[0], s.item(q)[0], "yes" if lt else "no")
    return lt
