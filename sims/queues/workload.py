"""The queues workload: arrivals (poisson, bursty, diurnal; an optional surge) with a service
demand and a priority class drawn per request.

Events: ``{"t", "kind": "request", "id", "size"}`` (+ ``"cls"`` when there are several classes:
0 is the highest priority). ``size`` is work in seconds on a speed-1 server; a panel's servers
run at their own ``speed``, so panels at different utilizations share one stream. The surge's
start and end, the bursts and the end of arrivals are marked (``stream.Mark``).
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import exponential
from sims.core.limits import MAX_DURATION, MAX_RATE
from sims.core.registry import Param, workload
from sims.core.stream import Mark
from sims.workloads import arrivals
from sims.workloads.traffic import SIZE_DISTS, job_size

ARRIVALS = ("poisson", "bursty", "diurnal")


def _poisson_with_surge(p: dict, rng: Random, duration: float) -> Iterator[float]:
    """Poisson at ``rate``, and at ``surge_rate`` during [surge_at, surge_at + surge_for):
    piecewise constant, so a gap that crosses a boundary is redrawn from it (memoryless)."""
    rate, surge, lo = p["rate"], p["surge_rate"], p["surge_at"]
    hi = lo + p["surge_for"] if p["surge_for"] > 0 else lo
    t = 0.0
    while True:
        r = surge if lo <= t < hi else rate
        nxt = t + exponential(rng, r) if r > 0 else float("inf")
        edge = lo if t < lo else (hi if t < hi else float("inf"))
        if nxt >= edge:
            t = edge
            if t > duration:
                return
            continue
        t = nxt
        if t > duration:
            return
        yield t


def _arrival_times(p: dict, rng: Random, duration: float) -> Iterator[float | Mark]:
    kind = p["arrival"]
    if kind == "poisson":
        if p["surge_for"] > 0 and p["surge_rate"] != p["rate"]:
            for at, label in ((p["surge_at"], "surge starts"), (p["surge_at"] + p["surge_for"], "surge ends")):
                if at <= duration:
                    yield Mark(at, label)
        yield from _poisson_with_surge(p, rng, duration)
        return
    if kind == "bursty":
        gen = arrivals.bursty({k: p[k] for k in ("rate_on", "rate_off", "mean_on", "mean_off")}, rng, duration)
    else:
        gen = arrivals.diurnal(
            {"base_rate": p["rate"], "peak_rate": p["peak_rate"], "period": p["period"]}, rng, duration
        )
    for ev in gen:
        yield ev if isinstance(ev, Mark) else ev["t"]


@workload(
    "queueing",
    arrival=Param(str, "poisson", "poisson | bursty | diurnal", choices=("poisson", "bursty", "diurnal")),
    rate=Param(float, 800.0, "arrivals per second (poisson; the lowest rate for diurnal)", min=0.0, max=MAX_RATE),
    surge_at=Param(float, 0.0, "poisson: a surge starts here (seconds)", min=0.0, max=MAX_DURATION),
    surge_for=Param(float, 0.0, "poisson: the surge lasts this long (0 = no surge)", min=0.0, max=MAX_DURATION),
    surge_rate=Param(float, 0.0, "poisson: arrivals per second during the surge", min=0.0, max=MAX_RATE),
    rate_on=Param(float, 1500.0, "bursty: arrival rate while on", min=0.0, max=MAX_RATE),
    rate_off=Param(float, 300.0, "bursty: arrival rate while off", min=0.0, max=MAX_RATE),
    mean_on=Param(float, 0.5, "bursty: mean on-period, seconds", above=0.0, max=MAX_DURATION),
    mean_off=Param(float, 2.0, "bursty: mean off-period, seconds", above=0.0, max=MAX_DURATION),
    peak_rate=Param(float, 1200.0, "diurnal: the highest rate", min=0.0, max=MAX_RATE),
    period=Param(float, 60.0, "diurnal: seconds per simulated day", above=0.0, max=MAX_DURATION),
    service=Param(str, "exp", "service demand: exp | fixed | pareto | lognormal"),
    service_mean=Param(float, 0.001, "mean service demand, seconds on a speed-1 server", above=0.0, max=MAX_DURATION),
    alpha=Param(float, 1.5, "pareto shape (> 1)", above=0.0, max=100.0),
    sigma=Param(float, 1.5, "lognormal sigma", min=0.0, max=4.0),
    classes=Param(list, [1.0], "weight of each priority class, class 0 (highest) first", max_items=100),
    stop_at=Param(
        float,
        0.0,
        "no arrivals after this time, so the queue can drain (0 = arrivals to the end)",
        min=0.0,
        max=MAX_DURATION,
    ),
)
def queueing(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Arrivals of requests with a service demand and, with several classes, a priority class."""
    p = params
    if p["arrival"] not in ARRIVALS:
        raise ValueError(f"workload.arrival: expected one of {', '.join(ARRIVALS)}, got {p['arrival']!r}")
    if p["service"] not in SIZE_DISTS:
        raise ValueError(f"workload.service: expected one of {', '.join(SIZE_DISTS)}, got {p['service']!r}")
    if p["service"] == "pareto" and not p["alpha"] > 1.0:
        raise ValueError(f"workload.alpha: a pareto needs alpha > 1 for a finite mean, got {p['alpha']!r}")
    if not p["service_mean"] > 0:
        raise ValueError(f"workload.service_mean: expected > 0 seconds, got {p['service_mean']!r}")
    if p["arrival"] == "poisson" and not p["rate"] > 0:
        raise ValueError(f"workload.rate: expected > 0 arrivals per second, got {p['rate']!r}")
    weights = p["classes"]
    if not weights or any(isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0 for w in weights):
        raise ValueError(f"workload.classes: expected a list of non-negative weights, got {weights!r}")
    total = 0.0
    cdf = []
    for w in weights:
        total += w
        cdf.append(total)
    if not total > 0:
        raise ValueError("workload.classes: the weights must not all be 0")
    cdf = [c / total for c in cdf]
    dist, mean, alpha, sigma = p["service"], p["service_mean"], p["alpha"], p["sigma"]
    last = len(cdf) - 1
    if p["stop_at"] < 0:
        raise ValueError(f"workload.stop_at: expected >= 0 seconds, got {p['stop_at']!r}")
    end = min(duration, p["stop_at"]) if p["stop_at"] else duration
    if end < duration:
        yield Mark(end, "arrivals stop")
    i = -1
    for t in _arrival_times(p, rng, end):
        if isinstance(t, Mark):
            yield t
            continue
        i += 1
        ev = {"t": t, "kind": "request", "id": i, "size": job_size(rng, dist, mean, alpha, sigma)}
        if last:
            u = rng.random()
            c = 0
            while c < last and u >= cdf[c]:
                c += 1
            ev["cls"] = c
        yield ev
