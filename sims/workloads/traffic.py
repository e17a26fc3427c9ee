"""Traffic for the load balancers: jobs with sizes (work in seconds at speed 1).

Events: ``{"t", "kind": "request", "id", "size"}``, and ``"client"`` (uniform over ``clients``)
when ``clients`` > 0: drawn after the size, so with the default 0 the stream is the one it always
was. With ``stop_at`` a ``Mark`` says when
arrivals stop, so the servers can drain and every latency is exact. Heavy tails come from a pareto with shape
``alpha`` (infinite variance below 2), scaled so the mean is ``size_mean``.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import exponential, lognormal_mean, pareto
from sims.core.limits import MAX_DURATION, MAX_RATE
from sims.core.registry import Param, workload
from sims.core.stream import Mark

SIZE_DISTS = ("pareto", "exp", "lognormal", "fixed")
MAX_SIGMA = 4.0  # a lognormal mean with sigma past this overflows the portable exp


def job_size(rng: Random, dist: str, mean: float, alpha: float, sigma: float) -> float:
    """One job size with the given mean."""
    if dist == "pareto":
        return pareto(rng, alpha, mean * (alpha - 1.0) / alpha)
    if dist == "exp":
        return exponential(rng, 1.0 / mean)
    if dist == "lognormal":
        return lognormal_mean(rng, mean, sigma)
    return mean


@workload(
    "jobs",
    rate=Param(float, 100.0, "arrivals per second (poisson)", above=0.0, max=MAX_RATE),
    size_mean=Param(float, 0.05, "mean job size: seconds of work on a speed-1 server", above=0.0, max=MAX_DURATION),
    size_dist=Param(str, "pareto", "pareto | exp | lognormal | fixed", choices=SIZE_DISTS),
    alpha=Param(float, 1.8, "pareto shape (> 1; heavier tail when smaller)", above=0.0, max=100.0),
    sigma=Param(float, 1.0, "lognormal sigma", min=0.0, max=MAX_SIGMA),
    stop_at=Param(
        float,
        0.0,
        "no arrivals after this time, so the servers drain (0 = arrivals to the end)",
        min=0.0,
        max=MAX_DURATION,
    ),
    clients=Param(
        int, 0, "distinct clients, each request from one drawn uniformly (0 = no client ids)", min=0, max=1_000_000
    ),
)
def jobs(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Poisson arrivals of jobs with random sizes (heavy-tailed by default)."""
    dist, alpha = params["size_dist"], params["alpha"]
    if dist not in SIZE_DISTS:
        raise ValueError(f"workload.size_dist: expected one of {', '.join(SIZE_DISTS)}, got {dist!r}")
    if dist == "pareto" and not alpha > 1.0:
        raise ValueError(f"workload.alpha: a pareto needs alpha > 1 for a finite mean, got {alpha!r}")
    if not params["rate"] > 0 or not params["size_mean"] > 0:
        raise ValueError("workload.rate and workload.size_mean must be > 0")
    end = min(duration, params["stop_at"]) if params["stop_at"] > 0 else duration
    if end < duration:
        yield Mark(end, "arrivals stop")
    t, i = 0.0, 0
    rate, mean, sigma, clients = params["rate"], params["size_mean"], params["sigma"], params["clients"]
    while True:
        t += exponential(rng, rate)
        if t > end:
            return
        ev = {"t": t, "kind": "request", "id": i, "size": job_size(rng, dist, mean, alpha, sigma)}
        if clients:
            ev["client"] = int(rng.random() * clients)
        yield ev
        i += 1
