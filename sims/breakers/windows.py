"""The windows a breaker judges by: the last N outcomes, or the outcomes of the last few seconds.

``CountWindow`` is Resilience4j's COUNT_BASED sliding window (``FixedSizeSlidingWindowMetrics``): a
ring of the last ``size`` outcomes with running totals, O(1) per call. ``TimeWindow`` is a time
window aggregated in buckets, as Resilience4j's TIME_BASED window (one bucket per second), Hystrix's
rolling statistics (buckets of the 0.5 s health-snapshot interval over 10 s) and Google SRE's
adaptive throttling (two minutes of history) keep theirs: at time t it holds the buckets k with
floor(t / width) - n < k <= floor(t / width), oldest first, with running totals per counter.
"""

from __future__ import annotations

from collections import deque

from sims.core.panel import Checkpointed


class CountWindow(Checkpointed):
    """The last ``size`` outcomes, each (failed, slow); ``calls``, ``failures`` and ``slow`` are
    their totals. ``ring[head]`` is the oldest once the ring is full."""

    __slots__ = ("size", "ring", "head", "calls", "failures", "slow")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a count window needs at least 1 call, got {size!r}")
        self.size = size
        self.ring: list[tuple[bool, bool]] = []
        self.head = 0  # the next slot to overwrite once the ring is full
        self.calls = self.failures = self.slow = 0

    def outcome(self, t: float, failed: bool, slow: bool) -> None:
        """Record one call's outcome (``t`` is for the time window's sake)."""
        ring = self.ring
        if len(ring) < self.size:
            ring.append((failed, slow))
            self.calls += 1
        else:
            old_failed, old_slow = ring[self.head]
            self.failures -= old_failed
            self.slow -= old_slow
            ring[self.head] = (failed, slow)
            self.head = (self.head + 1) % self.size
        self.failures += failed
        self.slow += slow

    def totals(self, t: float) -> tuple[int, int, int]:
        """(calls, failures, slow calls) in the window (``t`` is for the time window's sake)."""
        return self.calls, self.failures, self.slow

    def clear(self) -> None:
        self.ring.clear()
        self.head = 0
        self.calls = self.failures = self.slow = 0

    def check_invariants(self) -> None:
        ring = self.ring
        assert len(ring) == self.calls <= self.size, (len(ring), self.calls, self.size)
        assert self.failures == sum(f for f, _ in ring) and self.slow == sum(s for _, s in ring)
        assert 0 <= self.head < self.size and (self.head == 0 or len(ring) == self.size)


class TimeWindow(Checkpointed):
    """``fields`` counters summed per bucket of ``width`` seconds over the last ``n`` buckets.

    ``buckets`` holds ``[k, c0, c1, ...]`` for bucket k (time [k * width, (k + 1) * width)),
    ascending in k, none older than the window; ``sums`` are the counters' totals over them."""

    __slots__ = ("width", "n", "fields", "buckets", "sums")

    def __init__(self, width: float, n: int, fields: int = 3) -> None:
        if not width > 0 or n < 1:
            raise ValueError(f"a time window needs width > 0 and n >= 1 buckets, got {width!r}, {n!r}")
        self.width = width
        self.n = n
        self.fields = fields
        self.buckets: deque[list] = deque()
        self.sums = [0] * fields

    def _roll(self, k: int) -> None:
        """Drop the buckets that are out of the window ending in bucket ``k``."""
        buckets, sums = self.buckets, self.sums
        edge = k - self.n
        while buckets and buckets[0][0] <= edge:
            old = buckets.popleft()
            for i in range(self.fields):
                sums[i] -= old[i + 1]

    def add(self, t: float, field: int, amount: int = 1) -> None:
        """Count ``amount`` on counter ``field`` at time ``t`` (non-decreasing across calls)."""
        k = int(t // self.width)
        self._roll(k)
        buckets = self.buckets
        if not buckets or buckets[-1][0] != k:
            buckets.append([k] + [0] * self.fields)
        buckets[-1][field + 1] += amount
        self.sums[field] += amount

    def outcome(self, t: float, failed: bool, slow: bool) -> None:
        """Record one call's outcome: counters 0, 1 and 2 are calls, failures and slow calls."""
        self.add(t, 0)
        if failed:
            self.add(t, 1)
        if slow:
            self.add(t, 2)

    def totals(self, t: float) -> tuple[int, ...]:
        """The counters' totals over the window that ends at ``t``."""
        self._roll(int(t // self.width))
        return tuple(self.sums)

    def clear(self) -> None:
        self.buckets.clear()
        self.sums = [0] * self.fields

    def check_invariants(self) -> None:
        ks = [b[0] for b in self.buckets]
        assert ks == sorted(set(ks)), ks
        assert not ks or ks[-1] - ks[0] < self.n, (ks[0], ks[-1], self.n)
        for i in range(self.fields):
            assert self.sums[i] == sum(b[i + 1] for b in self.buckets) >= 0, (i, self.sums)
