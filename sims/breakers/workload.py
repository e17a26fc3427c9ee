"""The breakers workload: clients calling a backend that degrades, then recovers.

Events: ``{"t", "kind": "call", "id", "u", "z"}``, a client call (Poisson arrivals at ``rate``)
with its two draws, ``u`` uniform for the backend's error draw and ``z`` exponential (mean 1) for
its latency, so every panel that sends a call gets the same answer for it; and
``{"t", "kind": "health", "errors", "latency", "capacity", "fault"}`` whenever the backend's
health changes (one at t = 0, then at each edge of the fault; ``fault`` is 1 while degraded). The
fault, from ``fault_at`` for ``fault_for`` seconds, is one of:

- ``outage``: every call fails;
- ``partial``: calls fail with probability ``fault_errors`` (30% by default);
- ``latency``: the mean latency is ``spike_latency``, calls slow but successful;
- ``bursts``: every ``burst_every`` seconds a burst of ``burst_for`` seconds in which every call fails;
- ``overload``: the backend serves ``capacity`` calls per second and fails the rest: errors grow
  with the load it gets (retries included, shed calls excluded);
- ``none``: it stays healthy.

Each edge is marked (``stream.Mark``): the charts draw it, the views name it.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import exponential
from sims.core.limits import MAX_DURATION
from sims.core.registry import Param, workload
from sims.core.stream import Mark

FAULTS = ("outage", "partial", "latency", "bursts", "overload", "none")
_WORDS = {
    "outage": ("outage starts", "backend recovers"),
    "partial": ("errors start", "errors stop"),
    "latency": ("latency spike starts", "latency back to normal"),
    "bursts": ("error burst", "burst ends"),
    "overload": ("overload starts", "capacity restored"),
}


def _schedule(p: dict, duration: float) -> list[tuple[float, dict, str]]:
    """The health changes up to ``duration``: (t, health, mark label), in time order."""
    base = {"errors": p["errors"], "latency": p["latency"], "capacity": 0.0, "fault": 0}
    out = [(0.0, base, "")]
    fault, lo = p["fault"], p["fault_at"]
    hi = lo + p["fault_for"]
    if fault == "none" or not p["fault_for"] or lo > duration:
        return out
    bad = dict(base, fault=1)
    if fault == "outage":
        bad["errors"] = 1.0
    elif fault == "partial":
        bad["errors"] = p["fault_errors"]
    elif fault == "latency":
        bad["latency"] = p["spike_latency"]
    elif fault == "overload":
        bad["capacity"] = p["capacity"]
    else:  # bursts of errors
        bad["errors"] = 1.0
        start, words = lo, _WORDS["bursts"]
        while start < hi and start <= duration:
            end = min(start + p["burst_for"], hi)
            out += [(start, bad, words[0]), (end, base, words[1] if end < hi else "bursts stop")]
            start += p["burst_every"]
        return out
    words = _WORDS[fault]
    return out + [(lo, bad, words[0]), (hi, base, words[1])]


@workload(
    "breaker_calls",
    rate=Param(float, 50.0, "client calls per second (Poisson)", above=0.0, max=100_000.0),
    latency=Param(float, 0.02, "the healthy backend's mean latency, seconds (exponential)", above=0.0, max=600.0),
    errors=Param(float, 0.0, "the healthy backend's error probability", min=0.0, max=1.0),
    fault=Param(str, "outage", "outage | partial | latency | bursts | overload | none", choices=FAULTS),
    fault_at=Param(float, 10.0, "the fault starts here (seconds)", min=0.0, max=MAX_DURATION),
    fault_for=Param(float, 20.0, "the fault lasts this long (seconds; 0 = no fault)", min=0.0, max=MAX_DURATION),
    fault_errors=Param(float, 0.3, "partial: the error probability during the fault", min=0.0, max=1.0),
    spike_latency=Param(float, 2.0, "latency: the mean latency during the spike, seconds", above=0.0, max=600.0),
    burst_every=Param(float, 5.0, "bursts: seconds from one burst's start to the next", above=0.0, max=MAX_DURATION),
    burst_for=Param(float, 1.0, "bursts: seconds each burst of errors lasts", above=0.0, max=MAX_DURATION),
    capacity=Param(float, 20.0, "overload: calls per second the backend serves; the rest fail", above=0.0, max=1e6),
)
def breaker_calls(params: dict, rng: Random, duration: float) -> Iterator[dict | Mark]:
    """Client calls and the backend's health changes, in time order (a change first on a tie)."""
    if params["fault"] == "bursts" and not params["burst_for"] < params["burst_every"]:
        raise ValueError(
            f"workload.burst_for: a burst ({params['burst_for']!r} s) must end before the next begins "
            f"(burst_every {params['burst_every']!r} s)"
        )
    rate = params["rate"]
    changes = _schedule(params, duration)
    for t, _, label in changes:
        if label and t <= duration:
            yield Mark(t, label)
    i = 0  # the next health change
    n = 0
    t = 0.0
    while True:
        t += exponential(rng, rate)
        while i < len(changes) and changes[i][0] <= min(t, duration):
            at, health, _ = changes[i]
            yield {"t": at, "kind": "health", **health}
            i += 1
        if t > duration:
            return
        yield {"t": t, "kind": "call", "id": n, "u": rng.random(), "z": exponential(rng, 1.0)}
        n += 1
