"""Percentiles over every arrival: finished values plus the ages of those still waiting.

An age is a lower bound on the value it stands for, so a percentile that an age could still
move is a lower bound too, and flagged censored (DESIGN.md's rule for unfinished requests).
"""

from __future__ import annotations

from sims.core.metrics import censored_percentile
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
        """The q-quantile of the values and ``ages`` (sorted, lower bounds) together, and its
        censored flag (``sims.core.metrics.censored_percentile``)."""
        return censored_percentile(self.values(), ages, q)
