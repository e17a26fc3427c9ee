"""Classic rate limiters: the mechanism of each is a few numbers of state and ``admit(t)``.

Semantics (DESIGN.md): the token bucket starts full with ``burst`` tokens, refills continuously
at ``rate``/s capped at ``burst``, each request costs 1 and is admitted iff >= 1 token; the leaky
bucket is a meter equivalent to GCRA (capacity ``burst``, drained at ``rate``/s, a request admitted
iff the bucket holds <= burst - 1 after draining); the fixed window counts per [kW, (k+1)W); the
sliding log admits iff fewer than ``limit`` *admitted* requests lie in (t-W, t]. Every limiter's
``check_invariants`` asserts its own bound. Arithmetic is exact (``exact.py``): times as the
decimals their repr shows, in integer ticks of 1e-20 s; rates, capacities and windows likewise.
"""

from __future__ import annotations

from collections import deque

from sims.core.limits import MAX_DURATION, MAX_RATE
from sims.core.registry import Param, register_policy
from sims.ratelimit.exact import UNIT, decimal, ticks

_RATE = Param(float, 10.0, "refill or drain rate, per second", above=0.0, max=MAX_RATE)
_BURST = Param(float, 10.0, "bucket capacity (token bucket) or queue length (leaky bucket)", min=0.0, max=1e9)
_LIMIT = Param(int, 10, "requests allowed per window", min=1, max=10**9)
_WINDOW = Param(float, 1.0, "window length, seconds", above=0.0, max=MAX_DURATION)


def _window_ticks(window: float) -> int:
    w = ticks(window)
    if w < 1:
        raise ValueError(f"window must be positive, got {window!r}")
    return w


class Limiter:
    """A policy that decides admit or reject for a request at time t (non-decreasing)."""

    PARAMS: dict[str, Param] = {}
    time_scale = 1  # release_ticks counts ticks x time_scale: a delay that is no whole tick stays exact

    def admit(self, t: float) -> bool:
        raise NotImplementedError

    def release_ticks(self, t: float) -> int:
        """When the request just admitted at t passes to the backend (the leaky bucket delays it),
        exactly: in ``exact.ticks`` x ``time_scale``, so a window boundary lands where the decimals
        say (a float would put two releases 1 s apart at 3.6500000000000004 and 4.65)."""
        return ticks(t)

    def release_time(self, t: float) -> float:
        """``release_ticks`` in seconds, for reading (rounded to a float)."""
        return self.release_ticks(t) / (UNIT * self.time_scale)

    def bound(self, span: float) -> float:
        """The most requests this limiter may pass in any interval of length ``span``."""
        raise NotImplementedError

    def state(self) -> dict:
        return {}

    def explain(self, d, other=None) -> str:
        """One sentence on an admit or reject (``d.facts["state"]``: ``state()`` right after)."""
        raise NotImplementedError(f"{type(self).__name__} does not explain its decisions")

    def check_invariants(self) -> None:
        pass


@register_policy("ratelimit", "token_bucket")
class TokenBucket(Limiter):
    """Tokens are counted in integer units: one token is ``_one`` units and ``_fill`` units arrive
    per time tick (``exact.ticks``), so a refill never rounds a boundary away."""

    PARAMS = {"rate": _RATE, "burst": _BURST}

    def __init__(self, rate: float, burst: float, **_: object) -> None:
        if rate < 0 or burst < 1:
            raise ValueError(f"token_bucket needs rate >= 0 and burst >= 1, got rate={rate!r} burst={burst!r}")
        self.rate, self.burst = rate, burst
        r, b = decimal(rate), decimal(burst)
        self._one = UNIT * r.denominator * b.denominator  # units per token
        self._fill = r.numerator * b.denominator  # units per time tick
        self._cap = b.numerator * UNIT * r.denominator  # burst tokens, in units
        self._units = self._cap  # starts full
        self._last = 0  # time (ticks) of the last refill

    @property
    def tokens(self) -> float:
        return self._units / self._one

    def admit(self, t: float) -> bool:
        tn = ticks(t)
        have = self._units + (tn - self._last) * self._fill
        if have > self._cap:
            have = self._cap
        self._last = tn
        if have >= self._one:
            self._units = have - self._one
            return True
        self._units = have
        return False

    def bound(self, span: float) -> float:
        return self.burst + self.rate * span

    def state(self) -> dict:
        return {"tokens": self.tokens, "capacity": self.burst}

    def explain(self, d, other=None) -> str:
        left = d.facts["state"]["tokens"]
        if d.action == "admit":
            return f"token_bucket admitted {d.subject}: the bucket held a whole token ({left:.2f} left of {self.burst:g}, refilling at {self.rate:g}/s)"
        return f"token_bucket rejected {d.subject}: the bucket held {left:.2f} tokens, less than the 1 a request costs (refilling at {self.rate:g}/s)"

    def check_invariants(self) -> None:
        assert 0 <= self._units <= self._cap, self._units


@register_policy("ratelimit", "leaky_bucket")
class LeakyBucket(Limiter):
    """The leaky bucket as a meter, equivalent to GCRA: the bucket holds ``_level`` units (one
    request is ``_one``), drains ``_drain`` units per time tick, and admits a request iff it
    holds at most burst - 1 requests after draining; an admitted request adds one. As a queue:
    an admitted request leaves (``release_time``) when the bucket it topped up has drained, so
    the output is spaced 1/rate apart."""

    PARAMS = {"rate": _RATE, "burst": _BURST}

    def __init__(self, rate: float, burst: float, **_: object) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"leaky_bucket needs rate > 0 and burst >= 1, got rate={rate!r} burst={burst!r}")
        self.rate, self.capacity = rate, burst
        r, b = decimal(rate), decimal(burst)
        self._one = UNIT * r.denominator * b.denominator  # units per request
        self._drain = r.numerator * b.denominator  # units drained per time tick
        self._room = (b.numerator - b.denominator) * UNIT * r.denominator  # burst - 1 requests, in units
        self._level = 0
        self._last = 0  # time (ticks) of the last drain
        self.time_scale = self._drain  # a release lies _level / _drain ticks after _last

    def admit(self, t: float) -> bool:
        tn = ticks(t)
        level = self._level - (tn - self._last) * self._drain
        if level < 0:
            level = 0
        self._last = tn
        if level <= self._room:
            self._level = level + self._one
            return True
        self._level = level
        return False

    def release_ticks(self, t: float) -> int:
        return self._last * self._drain + self._level

    def bound(self, span: float) -> float:
        return self.rate * span + 1.0

    def state(self) -> dict:
        return {"queued": -(-self._level // self._one), "capacity": self.capacity}

    def explain(self, d, other=None) -> str:
        q = d.facts["state"]["queued"]
        if d.action == "admit":
            return f"leaky_bucket admitted {d.subject}: after draining at {self.rate:g}/s the bucket had room ({q} of {self.capacity:g} now queued)"
        return f"leaky_bucket rejected {d.subject}: the bucket was full ({q} of {self.capacity:g} queued, draining at {self.rate:g}/s)"

    def check_invariants(self) -> None:
        assert 0 <= self._level <= self._room + self._one, self._level


@register_policy("ratelimit", "fixed_window")
class FixedWindow(Limiter):
    PARAMS = {"limit": _LIMIT, "window": _WINDOW}

    def __init__(self, limit: int, window: float, **_: object) -> None:
        if limit < 0 or window <= 0:
            raise ValueError(f"fixed_window needs limit >= 0 and window > 0, got {limit!r}, {window!r}")
        self.limit, self.window = limit, window
        self._w = _window_ticks(window)
        self.k = 0  # current window index: [kW, (k+1)W)
        self.count = 0

    def admit(self, t: float) -> bool:
        k = ticks(t) // self._w
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

    def explain(self, d, other=None) -> str:
        s = d.facts["state"]
        start = f"the window [{s['window_start']:g} s, {s['window_start'] + self.window:g} s)"
        if d.action == "admit":
            return f"fixed_window admitted {d.subject}: request {s['count']} of {self.limit} in {start}"
        return f"fixed_window rejected {d.subject}: {start} had already admitted its {self.limit}"

    def check_invariants(self) -> None:
        assert 0 <= self.count <= self.limit


@register_policy("ratelimit", "sliding_log")
class SlidingLog(Limiter):
    PARAMS = {"limit": _LIMIT, "window": _WINDOW}

    def __init__(self, limit: int, window: float, **_: object) -> None:
        if limit < 0 or window <= 0:
            raise ValueError(f"sliding_log needs limit >= 0 and window > 0, got {limit!r}, {window!r}")
        self.limit, self.window = limit, window
        self._w = _window_ticks(window)
        self.log: deque[int] = deque()  # admitted times (ticks) in (t - W, t]

    def admit(self, t: float) -> bool:
        log = self.log
        tn = ticks(t)
        edge = tn - self._w
        while log and log[0] <= edge:
            log.popleft()
        if len(log) < self.limit:
            log.append(tn)
            return True
        return False

    def bound(self, span: float) -> float:
        return self.limit * (int(span // self.window) + 1)

    def state(self) -> dict:
        return {"in_window": len(self.log), "limit": self.limit}

    def explain(self, d, other=None) -> str:
        n = d.facts["state"]["in_window"]
        if d.action == "admit":
            return f"sliding_log admitted {d.subject}: {n - 1} admitted requests lay in the last {self.window:g} s, fewer than {self.limit}"
        return f"sliding_log rejected {d.subject}: {n} admitted requests already lay in the last {self.window:g} s (limit {self.limit})"

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
        self._w = _window_ticks(window)
        self.k = 0
        self.prev = 0
        self.curr = 0

    def admit(self, t: float) -> bool:
        tn = ticks(t)
        w = self._w
        k = tn // w
        if k != self.k:
            self.prev = self.curr if k == self.k + 1 else 0
            self.k, self.curr = k, 0
        # prev * (1 - elapsed / W) + curr < limit, multiplied through by W
        if self.prev * (w - (tn - k * w)) + self.curr * w < self.limit * w:
            self.curr += 1
            return True
        return False

    def bound(self, span: float) -> float:
        return self.limit * (int(span // self.window) + 2)

    def state(self) -> dict:
        return {"prev": self.prev, "curr": self.curr, "limit": self.limit}

    def explain(self, d, other=None) -> str:
        s = d.facts["state"]
        est = f"previous window's {s['prev']} weighted by its overlap plus this window's {s['curr']}"
        verb = "admitted" if d.action == "admit" else "rejected"
        cmp = "below" if d.action == "admit" else "at or above"
        return f"sliding_counter {verb} {d.subject}: the estimate ({est}) was {cmp} the limit {self.limit}"

    def check_invariants(self) -> None:
        assert 0 <= self.curr <= self.limit
