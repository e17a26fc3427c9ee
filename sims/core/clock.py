"""The virtual clock: a heap of (time, sequence, item) and a counter (SimPy's ``schedule``).

Every timed thing a panel does goes through one: server completions (balance), retries and
responses (tpm), KV transfers (disaggregation). Ties at the same time pop in the order they were
scheduled (the sequence number breaks them), so a run is deterministic. There is no wall clock
here: a driver decides how far to advance.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

from sims.core.panel import Checkpointed


class Clock(Checkpointed):
    """``heap`` holds ``(time, seq, item)``, earliest first; a hot loop may test
    ``heap and heap[0][0] <= until`` before ``pop()``, but only ``schedule`` adds to it."""

    __slots__ = ("now", "heap", "_seq")

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.heap: list[tuple[float, int, Any]] = []
        self._seq = 0

    def __len__(self) -> int:
        return len(self.heap)

    def __iter__(self):
        """The scheduled items, in no particular order."""
        return (entry[2] for entry in self.heap)

    def schedule(self, t: float, item: Any) -> None:
        """Queue ``item`` at virtual time ``t`` (never before now)."""
        if t < self.now:
            raise ValueError(f"cannot schedule at t={t!r}, before now={self.now!r}")
        heappush(self.heap, (t, self._seq, item))
        self._seq += 1

    def schedule_in(self, delay: float, item: Any) -> None:
        self.schedule(self.now + delay, item)

    def peek(self) -> float | None:
        """Time of the next item, or None when empty."""
        return self.heap[0][0] if self.heap else None

    def pop(self) -> tuple[float, Any]:
        """Remove the next item and move now to its time."""
        t, _, item = heappop(self.heap)
        self.now = t
        return t, item

    def advance(self, until: float, handle: Callable[[float, Any], None] | None = None) -> int:
        """Pop every item with time <= until, in order, calling ``handle(t, item)`` (or
        ``item(t)`` when no handler is given); items scheduled meanwhile are honoured.
        Ends with now = until. Returns the number of items handled."""
        n = 0
        heap = self.heap
        while heap and heap[0][0] <= until:
            t, _, item = heappop(heap)
            self.now = t
            if handle is None:
                item(t)
            else:
                handle(t, item)
            n += 1
        if until > self.now:
            self.now = until
        return n
