"""Percentiles over every arrival: finished values plus the ages of those still waiting.

An age is a lower bound on the value it stands for, so a percentile that an age could still
move is a lower bound too, and flagged censored (DESIGN.md's rule for unfinished requests).
"""

from __future__ import annotations

from sims.core.metrics import kth, percentile
from sims.core.panel import Checkpointed


class Tally(Checkpointed):
    """A growing list of finished values, sorted lazily when a percentile is read."""

    __slots__ = ("v", "_sorted")

    def __init__(self) -> None:
        self.v: list[float] = []
        self._sorted = 0  # v[:_sorted] is sorted

    def add(self, x: float) -> None:
        self.v.append(x)

    def __len__(self) -> int:
        return len(self.v)

    def values(self) -> list[float]:
        v = self.v
        if self._sorted != len(v):
            v.sort()  # the sorted prefix is one run for timsort: cheap to redo
            self._sorted = len(v)
        return v

    def percentile(self, q: float, ages: list[float]) -> tuple[float, int]:
        """(the q-quantile of the values and ``ages`` (sorted) together, 1 if an age could raise it).

        Interpolates between closest ranks exactly as ``sims.core.metrics.percentile`` does on
        the merged list, without building it: a read per animation frame stays cheap."""
        v = self.values()
        if not ages:
            return percentile(v, q, is_sorted=True), 0
        n = len(v) + len(ages)
        pos = q * (n - 1)
        lo = int(pos)
        hi = lo + 1 if lo + 1 < n else lo
        a, b = kth(v, ages, lo), kth(v, ages, hi)
        return a + (b - a) * (pos - lo), int(ages[0] <= b)
