"""Metric helpers: exact percentiles (censored ones too) and sliding-window counts."""

from __future__ import annotations


def percentile(values: list[float], q: float, *, is_sorted: bool = False) -> float:
    """Exact q-quantile (q in [0, 1]) with linear interpolation between closest ranks
    (numpy's default). Empty input gives 0.0. Basic operations only: portable."""
    if not values:
        return 0.0
    v = values if is_sorted else sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = lo + 1 if lo + 1 < len(v) else lo
    frac = pos - lo
    return v[lo] + (v[hi] - v[lo]) * frac


def kth(a: list[float], b: list[float], k: int) -> float:
    """The k-th smallest (0-based) of two sorted lists together, in O(log len(b))."""
    lo, hi = max(0, k + 1 - len(a)), min(k + 1, len(b))
    while lo < hi:  # j = how many of b are among the k + 1 smallest
        j = (lo + hi) // 2
        if b[j] < a[k - j]:
            lo = j + 1
        else:
            hi = j
    j = lo
    if j == 0:
        return a[k]
    if j == k + 1:
        return b[j - 1]
    return max(a[k - j], b[j - 1])


def censored_percentile(exact: list[float], cens: list[float], q: float) -> tuple[float, int]:
    """The q-quantile of ``exact`` and ``cens`` together (both sorted), and its censored flag.

    ``exact`` are finished values; ``cens`` are lower bounds (the age of a request still
    waiting, a timeout a client gave up at). The value interpolates between closest ranks exactly
    as ``percentile`` does on the merged list, without building it (``kth``: a read per frame stays
    cheap). The flag is 1 when a censored value takes part in the figure, so raising it could
    raise the figure (a lower bound), else 0: the figure reads rank ``ceil(q * (n - 1))`` at the
    highest, and a censored value takes part iff that rank holds one or a value tied with one
    (DESIGN.md: latency percentiles count every arrival)."""
    if not cens:
        return percentile(exact, q, is_sorted=True), 0
    n = len(exact) + len(cens)
    pos = q * (n - 1)
    lo = int(pos)
    hi = lo + 1 if lo + 1 < n else lo
    frac = pos - lo
    a, b = kth(exact, cens, lo), kth(exact, cens, hi)
    return a + (b - a) * frac, int(cens[0] <= (b if frac else a))


def ratio(num: float, den: float) -> float:
    """num / den, 0.0 when den is 0."""
    return num / den if den else 0.0


class SlidingMax:
    """Most events in any window of length w: feed event times in order (events at (t-w, t])."""

    __slots__ = ("w", "_times", "_head", "best")

    def __init__(self, w: float) -> None:
        self.w = w
        self._times: list[float] = []
        self._head = 0
        self.best = 0

    def add(self, t: float, n: int = 1) -> None:
        times = self._times
        for _ in range(n):
            times.append(t)
        head = self._head
        while times[head] <= t - self.w:
            head += 1
        if head > 4096:
            del times[:head]
            head = 0
        self._head = head
        count = len(times) - head
        if count > self.best:
            self.best = count
