"""Classic rate limiters: the mechanism of each is a few numbers of state and ``admit(t)``.

Semantics (DESIGN.md): the token bucket starts full with ``burst`` tokens, refills continuously
at ``rate``/s capped at ``burst``, each request costs 1 and is admitted iff >= 1 token; the fixed
window counts per [kW, (k+1)W); the sliding log admits iff fewer than ``limit`` *admitted*
requests lie in (t-W, t]. Every limiter's ``check_invariants`` asserts its own bound.
"""

from __future__ import annotations

from collections import deque

from sims.core.registry import Param, register_policy

_RATE = Param(float, 10.0, "refill or drain rate, per second")
_BURST = Param(float, 10.0, "bucket capacity (token bucket) or queue length (leaky bucket)")
_LIMIT = Param(int, 10, "requests allowed per window")
_WINDOW = Param(float, 1.0, "window length, seconds")


class Limiter:
    """A policy that decides admit or reject for a request at time t (non-decreasing)."""

    PARAMS: dict[str, Param] = {}

    def admit(self, t: float) -> bool:
        raise NotImplementedError

    def release_time(self, t: float) -> float:
        """When an admitted request at t passes to the backend (the leaky bucket delays it)."""
        return t

    def bound(self, span: float) -> float:
        """The most requests this limiter may pass in any interval of length ``span``."""
        raise NotImplementedError

    def state(self) -> dict:
        return {}

    def check_invariants(self) -> None:
        pass


@register_policy("ratelimit", "token_bucket")
class TokenBucket(Limiter):
    PARAMS = {"rate": _RATE, "burst": _BURST}

    def __init__(self, rate: float, burst: float, **_: object) -> None:
        if rate < 0 or burst < 1:
            raise ValueError(f"token_bucket needs rate >= 0 and burst >= 1, got rate={rate!r} burst={burst!r}")
        self.rate, self.burst = rate, burst
        self.tokens = burst  # starts full
        self.last = 0.0

    def admit(self, t: float) -> bool:
        tokens = self.tokens + (t - self.last) * self.rate
        self.tokens = tokens if tokens < self.burst else self.burst
        self.last = t
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def bound(self, span: float) -> float:
        return self.burst + self.rate * span

    def state(self) -> dict:
        return {"tokens": self.tokens, "capacity": self.burst}

    def check_invariants(self) -> None:
        assert -1e-9 <= self.tokens <= self.burst + 1e-9, self.tokens


@register_policy("ratelimit", "leaky_bucket")
class LeakyBucket(Limiter):
    """A FIFO queue of capacity ``burst`` drained at ``rate``/s; a full queue rejects."""

    PARAMS = {"rate": _RATE, "burst": _BURST}

    def __init__(self, rate: float, burst: float, **_: object) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"leaky_bucket needs rate > 0 and burst >= 1, got rate={rate!r} burst={burst!r}")
        self.rate, self.capacity = rate, burst
        self.departures: deque[float] = deque()  # release times of queued requests
        self.next_free = 0.0

    def admit(self, t: float) -> bool:
        q = self.departures
        while q and q[0] <= t:
            q.popleft()
        if len(q) >= self.capacity:
            return False
        self.next_free = max(t, self.next_free) + 1.0 / self.rate
        q.append(self.next_free)
        return True

    def release_time(self, t: float) -> float:
        return self.departures[-1]

    def bound(self, span: float) -> float:
        return self.rate * span + 1.0

    def state(self) -> dict:
        return {"queued": len(self.departures), "capacity": self.capacity}

    def check_invariants(self) -> None:
        assert len(self.departures) <= self.capacity


@register_policy("ratelimit", "fixed_window")
class FixedWindow(Limiter):
    PARAMS = {"limit": _LIMIT, "window": _WINDOW}

    def __init__(self, limit: int, window: float, **_: object) -> None:
        if limit < 0 or window <= 0:
            raise ValueError(f"fixed_window needs limit >= 0 and window > 0, got {limit!r}, {window!r}")
        self.limit, self.window = limit, window
        self.k = 0  # current window index: [kW, (k+1)W)
        self.count = 0

    def admit(self, t: float) -> bool:
        k = int(t // self.window)
        if k != self.k:
            self.k, self.count = k, 0
        if self.count < self.limit:
            self.count += 1
            return True
        return False

    def bound(self, span: float) -> float:
        return self.limit * (int(span // self.window) + 2) if span >= self.window else 2 * self.limit

    def state(self) -> dict:
        return {"count": self.count, "limit": self.limit, "window_start": self.k * self.window}

    def check_invariants(self) -> None:
        assert 0 <= self.count <= self.limit


@register_policy("ratelimit", "sliding_log")
class SlidingLog(Limiter):
    PARAMS = {"limit": _LIMIT, "window": _WINDOW}

    def __init__(self, limit: int, window: float, **_: object) -> None:
        if limit < 0 or window <= 0:
            raise ValueError(f"sliding_log needs limit >= 0 and window > 0, got {limit!r}, {window!r}")
        self.limit, self.window = limit, window
        self.log: deque[float] = deque()  # admitted times in (t - W, t]

    def admit(self, t: float) -> bool:
        log = self.log
        while log and log[0] <= t - self.window:
            log.popleft()
        if len(log) < self.limit:
            log.append(t)
            return True
        return False

    def bound(self, span: float) -> float:
        return self.limit * (int(span // self.window) + 1)

    def state(self) -> dict:
        return {"in_window": len(self.log), "limit": self.limit}

    def check_invariants(self) -> None:
        assert len(self.log) <= self.limit


@register_policy("ratelimit", "sliding_counter")
class SlidingCounter(Limiter):
    """Cloudflare-style estimate: previous window's count weighted by its overlap, plus the
    current count; admit iff the estimate is below ``limit``."""

    PARAMS = {"limit": _LIMIT, "window": _WINDOW}

    def __init__(self, limit: int, window: float, **_: object) -> None:
        if limit < 0 or window <= 0:
            raise ValueError(f"sliding_counter needs limit >= 0 and window > 0, got {limit!r}, {window!r}")
        self.limit, self.window = limit, window
        self.k = 0
        self.prev = 0
        self.curr = 0

    def admit(self, t: float) -> bool:
        k = int(t // self.window)
        if k != self.k:
            self.prev = self.curr if k == self.k + 1 else 0
            self.k, self.curr = k, 0
        weight = 1.0 - (t - k * self.window) / self.window
        if self.prev * weight + self.curr < self.limit:
            self.curr += 1
            return True
        return False

    def bound(self, span: float) -> float:
        return self.limit * (int(span // self.window) + 2)

    def state(self) -> dict:
        return {"prev": self.prev, "curr": self.curr, "limit": self.limit}

    def check_invariants(self) -> None:
        assert 0 <= self.curr <= self.limit
