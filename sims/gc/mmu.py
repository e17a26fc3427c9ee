"""Minimum mutator utilization (Cheng & Blelloch, PLDI 2001): for a window length w, the least
share of any window [t, t + w] inside the run during which the mutator ran, not the collector.

Computed exactly from the pause intervals: the collector's time inside [t, t + w] is piecewise
linear in t, with corners only where a window edge meets a pause edge, so the minimum is at a
window that starts where a pause starts or ends where a pause ends (or at the run's ends).
"""

from __future__ import annotations

from bisect import bisect_right

from sims.core.panel import Checkpointed


def _busy_before(starts: list[float], lens: list[float], before: list[float], x: float) -> float:
    """Collector seconds in [0, x]: ``before[k]`` is the total of the first k pauses."""
    k = bisect_right(starts, x)
    if k == 0:
        return 0.0
    d = x - starts[k - 1]
    return before[k - 1] + (d if d < lens[k - 1] else lens[k - 1])


def prefix(lens: list[float]) -> list[float]:
    """before[k] = lens[0] + ... + lens[k - 1], summed in order (portable, unlike sum())."""
    out = [0.0]
    acc = 0.0
    for x in lens:
        acc += x
        out.append(acc)
    return out


class MMU(Checkpointed):
    """MMU for one window length ``w``, read as pauses are appended. A window that ends at or
    before the clock is final (a later pause starts at the clock or after), so each pause's two
    candidate windows are folded into ``worst`` once; each reading evaluates again only the
    candidates of the last ``w`` seconds and the run's two ends. Same candidates, same arithmetic:
    the same result as evaluating every candidate afresh."""

    __slots__ = ("w", "k", "worst")

    def __init__(self, w: float) -> None:
        self.w = w
        self.k = 0  # pauses whose candidate windows are folded into worst
        self.worst = 0.0  # the most collector time in any final candidate window

    def value(self, starts: list[float], lens: list[float], before: list[float], end: float) -> float:
        """MMU over [0, end]; ``before`` as ``prefix(lens)``; ``end`` never decreases between calls."""
        w = self.w
        if end <= 0:
            return 1.0
        if end <= w:
            return 1.0 - before[-1] / end
        k, worst = self.k, self.worst
        n = len(starts)
        while k < n and starts[k] + w <= end:
            for t in (starts[k], starts[k] + lens[k] - w):
                busy = _window(starts, lens, before, t if t > 0.0 else 0.0, w)
                if busy > worst:
                    worst = busy
            k += 1
        self.k, self.worst = k, worst
        hi = end - w
        cands = [0.0, hi]
        for i in range(k, n):
            cands.append(starts[i])
            cands.append(starts[i] + lens[i] - w)
        for t in cands:
            if t < 0.0:
                t = 0.0
            elif t > hi:
                t = hi
            busy = _window(starts, lens, before, t, w)
            if busy > worst:
                worst = busy
        u = 1.0 - worst / w
        return u if u > 1e-9 else 0.0  # a window inside back-to-back pauses: 0, not a rounding residue


def _window(starts: list[float], lens: list[float], before: list[float], t: float, w: float) -> float:
    """Collector seconds in [t, t + w]."""
    return _busy_before(starts, lens, before, t + w) - _busy_before(starts, lens, before, t)


def mmu(starts: list[float], lens: list[float], end: float, w: float, before: list[float] | None = None) -> float:
    """MMU for windows of ``w`` seconds over [0, end]; pauses are [starts[i], starts[i] + lens[i])
    in increasing, non-overlapping order. A run shorter than ``w`` is one window: its utilization."""
    return MMU(w).value(starts, lens, prefix(lens) if before is None else before, end)


def mmu_brute(starts: list[float], lens: list[float], end: float, w: float, steps: int = 2000) -> float:
    """The same by sampling window starts on a grid (a test oracle: never below ``mmu``)."""
    if end <= w:
        return mmu(starts, lens, end, w)
    best = 1.0
    for i in range(steps + 1):
        t = (end - w) * i / steps
        busy = 0.0
        for s, d in zip(starts, lens, strict=True):
            lo, hi = max(s, t), min(s + d, t + w)
            if hi > lo:
                busy += hi - lo
        best = min(best, 1.0 - busy / w)
    return max(best, 0.0)
