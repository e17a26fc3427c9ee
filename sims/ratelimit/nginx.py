"""nginx's ``limit_req``, as ngx_http_limit_req_module.c computes it (nginx 1.22, one zone, one key).

It is a leaky bucket kept in integer milli-requests on nginx's millisecond clock:
- state: ``excess`` (milli-requests) and ``last`` (the ms of the last accepted request);
- a request at ms ``now`` computes ``excess - rate_milli * (now - last) // 1000 + 1000``, floored at
  0; above ``burst * 1000`` it is rejected (503) and the state is left as it was; otherwise the
  state takes the new excess (and ``last = now`` when any time passed);
- the first request of a key finds no state: it is admitted with excess 0, so ``burst = B``
  lets B + 1 requests through at one instant, where a token bucket of capacity B lets B;
- without ``nodelay`` an admitted request with excess above ``delay * 1000`` (0 by default) waits
  ``(excess - delay * 1000) * 1000 // rate_milli`` ms before it reaches the backend; ``nodelay``
  passes it at once. Rejection is the same in both.

Times: nginx reads its cached clock in whole milliseconds. A stream time ``t`` (virtual seconds) is
``floor(t * 1000 / speed)`` ms, exactly, from its decimal form: at ``speed`` virtual seconds per wall
second, which is how ``contention replay --speed`` plays the stream.
"""

from __future__ import annotations

from fractions import Fraction

from sims.core.limits import MAX_RATE
from sims.core.registry import Param, register_policy
from sims.ratelimit.exact import ticks
from sims.ratelimit.limiters import Limiter

_PARAMS = {
    "rate": Param(
        float, 10.0, "requests per second; nginx takes whole r/s or r/m (rate x speed)", above=0.0, max=MAX_RATE
    ),
    "burst": Param(
        float, 10.0, "nginx's burst=: requests beyond the rate held (delayed) or passed (nodelay)", min=0.0, max=1e9
    ),
    "delay": Param(float, 0.0, "nginx's delay=: the first requests of a burst that are not delayed", min=0.0, max=1e9),
    "speed": Param(
        float,
        1.0,
        "virtual seconds per wall second of nginx's clock (contention replay --speed)",
        above=0.0,
        max=1000.0,
    ),
}


def nginx_rate(rate: float, speed: float) -> tuple[str, int]:
    """The ``rate=`` nginx is configured with for ``rate`` virtual requests/s played at ``speed``,
    and the milli-requests per second nginx then computes (r/m divides by 60 in integers)."""
    wall = Fraction(repr(rate)) * Fraction(repr(speed))
    if wall.denominator == 1:
        return f"{wall.numerator}r/s", wall.numerator * 1000
    if (wall * 60).denominator == 1:
        per_min = (wall * 60).numerator
        return f"{per_min}r/m", per_min * 1000 // 60
    raise ValueError(
        f"nginx takes whole requests per second or per minute; {rate} r/s at speed {speed} is {float(wall)} r/s"
    )


def to_ms(t: float, speed: float) -> int:
    """``floor(t * 1000 / speed)`` from ``t``'s shortest decimal form: 0.3 is 300 ms, not 299."""
    return int(Fraction(repr(t)) * 1000 / Fraction(repr(speed)) // 1)


class NginxLimitReq(Limiter):
    """``limit_req zone=... burst=B [delay=D]``: excess in milli-requests on a ms clock."""

    PARAMS = _PARAMS
    nodelay = False

    def __init__(self, rate: float, burst: float, delay: float = 0.0, speed: float = 1.0, **_: object) -> None:
        for name, v, lo in (
            ("rate", rate, 0.001),
            ("burst", burst, 0.0),
            ("delay", delay, 0.0),
            ("speed", speed, 1e-9),
        ):
            if not (v == v and lo <= v < float("inf")):
                raise ValueError(f"{self.policy_name}: {name} must be a finite number >= {lo}, got {v!r}")
        self.conf_rate, self.rate_milli = nginx_rate(rate, speed)  # on nginx's wall clock
        if self.rate_milli < 1:
            raise ValueError(f"{self.policy_name}: rate {rate} is below what nginx can express")
        self.burst_milli = int(burst * 1000)
        self.delay_milli = int(delay * 1000) if not self.nodelay else None
        self.speed = speed
        self.excess = 0
        self.last: int | None = None  # None: no node for the key yet
        self.wait_ms = 0  # the delay given to the last admitted request

    def admit(self, t: float) -> bool:
        now = to_ms(t, self.speed)
        if self.last is None:
            self.last, self.excess, self.wait_ms = now, 0, 0
            return True
        ms = max(0, now - self.last)
        excess = self.excess - self.rate_milli * ms // 1000 + 1000
        if excess < 0:
            excess = 0
        if excess > self.burst_milli:
            return False  # NGX_BUSY: nothing is written back
        self.excess = excess
        if ms:
            self.last = now
        if self.delay_milli is None or excess <= self.delay_milli:
            self.wait_ms = 0
        else:
            self.wait_ms = (excess - self.delay_milli) * 1000 // self.rate_milli
        return True

    def release_ticks(self, t: float) -> int:
        return ticks(t) + ticks(self.speed) * self.wait_ms // 1000

    def bound(self, span: float) -> float:
        return self.rate_milli / 1000 / self.speed * span + self.burst_milli / 1000 + 1

    def state(self) -> dict:
        return {"excess": self.excess / 1000, "burst": self.burst_milli / 1000, "wait_ms": self.wait_ms}

    def explain(self, d, other=None) -> str:
        s = d.facts["state"]
        if d.action == "reject":
            return f"{self.policy_name} rejected {d.subject}: one more request would push the excess past burst={s['burst']:g} (503, NGX_BUSY)"
        late = f", delayed {s['wait_ms']} ms to keep the rate" if s["wait_ms"] else " at once"
        return f"{self.policy_name} admitted {d.subject}{late}: the excess is {s['excess']:g} of burst={s['burst']:g}"

    def check_invariants(self) -> None:
        assert 0 <= self.excess <= self.burst_milli, (self.excess, self.burst_milli)


@register_policy("ratelimit", "nginx_limit_req")
class NginxLimitReqDelay(NginxLimitReq):
    """Without ``nodelay``: requests inside the burst are admitted late, spaced at the rate."""

    def explain(self, d, other=None) -> str:
        return NginxLimitReq.explain(self, d, other) + " (without nodelay, requests inside the burst wait)"


@register_policy("ratelimit", "nginx_limit_req_nodelay")
class NginxLimitReqNodelay(NginxLimitReq):
    """``nodelay``: requests inside the burst pass at once; the bucket still drains at the rate."""

    nodelay = True

    def explain(self, d, other=None) -> str:
        return NginxLimitReq.explain(self, d, other) + " (nodelay: requests inside the burst pass at once)"
