"""Arrival processes: poisson, bursty (on/off MMPP), periodic bursts at window edges, diurnal.
Each marks its own moments (``stream.Mark``): a burst starts, the daily peak."""

from __future__ import annotations

from collections.abc import Iterator
from heapq import merge
from random import Random

from sims.core import portmath
from sims.core.dists import exponential
from sims.core.limits import MAX_DURATION, MAX_RATE, MAX_STREAM_EVENTS
from sims.core.registry import Param, workload
from sims.core.stream import Mark


@workload("poisson", rate=Param(float, 10.0, "arrivals per virtual second", above=0.0, max=MAX_RATE))
def poisson(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Poisson arrivals: exponential gaps at ``rate``."""
    t, i, rate = 0.0, 0, params["rate"]
    while True:
        t += exponential(rng, rate)
        if t > duration:
            return
        yield {"t": t, "kind": "request", "id": i}
        i += 1


@workload(
    "bursty",
    rate_on=Param(float, 50.0, "arrival rate while on", min=0.0, max=MAX_RATE),
    rate_off=Param(float, 2.0, "arrival rate while off", min=0.0, max=MAX_RATE),
    mean_on=Param(float, 1.0, "mean on-period, seconds", above=0.0, max=MAX_DURATION),
    mean_off=Param(float, 4.0, "mean off-period, seconds", above=0.0, max=MAX_DURATION),
)
def bursty(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Two-state Markov-modulated Poisson process: exponential on/off periods."""
    t, i, on = 0.0, 0, False
    switch = exponential(rng, 1.0 / params["mean_off"])
    while t <= duration:
        rate = params["rate_on"] if on else params["rate_off"]
        gap = exponential(rng, rate) if rate > 0 else float("inf")
        if t + gap >= switch:
            t = switch
            on = not on
            if on and t <= duration:
                yield Mark(t, "burst starts")
            switch = t + exponential(rng, 1.0 / (params["mean_on"] if on else params["mean_off"]))
            continue
        t += gap
        if t > duration:
            return
        yield {"t": t, "kind": "request", "id": i}
        i += 1


@workload(
    "periodic_burst",
    base_rate=Param(float, 2.0, "background poisson rate", min=0.0, max=MAX_RATE),
    period=Param(float, 1.0, "seconds between bursts", above=0.0, max=MAX_DURATION),
    burst_at=Param(float, 0.95, "offset of each burst's start within its period", min=0.0, max=MAX_DURATION),
    burst_width=Param(float, 0.1, "seconds each burst lasts", min=0.0, max=MAX_DURATION),
    burst_count=Param(int, 20, "requests per burst, evenly spread", min=1, max=100_000),
)
def periodic_burst(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Background poisson traffic plus evenly spaced bursts, e.g. straddling window edges."""
    period, at, width, count = params["period"], params["burst_at"], params["burst_width"], params["burst_count"]
    if (duration / period + 1) * count > MAX_STREAM_EVENTS:
        raise ValueError(
            f"workload.period: {period:g} s bursts of {count} make over {MAX_STREAM_EVENTS} events in {duration:g} s"
        )
    i = 0
    # bursts and background merged in time order, both generated as they are needed (a day's
    # stream costs nothing up front); a burst's mark comes just before its first request
    bursts = _bursts(period, at, width, count, duration)
    for t in merge(bursts, _poisson_times(rng, params["base_rate"], duration), key=_when):
        if isinstance(t, Mark):
            yield t
            continue
        if t > duration:
            return
        yield {"t": t, "kind": "request", "id": i}
        i += 1


def _when(x: float | Mark) -> float:
    return x.t if isinstance(x, Mark) else x


def _bursts(period: float, at: float, width: float, count: int, duration: float) -> Iterator[float | Mark]:
    """Each burst's mark, then its ``count`` request times, burst after burst."""
    k = 0
    while k * period + at <= duration:
        start = k * period + at
        yield Mark(start, "burst")
        yield from (start + width * j / count for j in range(count))
        k += 1


def _poisson_times(rng: Random, rate: float, duration: float) -> Iterator[float]:
    t = 0.0
    while rate > 0:
        t += exponential(rng, rate)
        if t > duration:
            return
        yield t


@workload(
    "diurnal",
    base_rate=Param(float, 5.0, "lowest rate", min=0.0, max=MAX_RATE),
    peak_rate=Param(float, 50.0, "highest rate", above=0.0, max=MAX_RATE),
    period=Param(float, 60.0, "seconds per simulated day", above=0.0, max=MAX_DURATION),
)
def diurnal(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Rate follows base + (peak - base)(1 - cos(2 pi t / period)) / 2; sampled by thinning."""
    base, peak, period = params["base_rate"], params["peak_rate"], params["period"]
    if base > peak:
        raise ValueError(f"workload.base_rate: expected <= peak_rate ({peak:g}), got {base:g}")
    k = 0
    while (k + 0.5) * period <= duration:
        yield Mark((k + 0.5) * period, "peak rate")
        k += 1
    t, i = 0.0, 0
    two_pi = 6.283185307179586
    while True:
        t += exponential(rng, peak)
        if t > duration:
            return
        rate = base + (peak - base) * (1.0 - portmath.cos(two_pi * t / period)) / 2.0
        if rng.random() * peak <= rate:
            yield {"t": t, "kind": "request", "id": i}
            i += 1
