"""Traffic for the load balancers: jobs with sizes (work in seconds at speed 1).

Events: ``{"t", "kind": "request", "id", "size"}``. Heavy tails come from a pareto with shape
``alpha`` (infinite variance below 2), scaled so the mean is ``size_mean``.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import exponential, lognormal_mean, pareto
from sims.core.limits import MAX_RATE
from sims.core.registry import Param, workload

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
    size_mean=Param(float, 0.05, "mean job size: seconds of work on a speed-1 server", above=0.0),
    size_dist=Param(str, "pareto", "pareto | exp | lognormal | fixed", choices=SIZE_DISTS),
    alpha=Param(float, 1.8, "pareto shape (> 1; heavier tail when smaller)", above=0.0),
    sigma=Param(float, 1.0, "lognormal sigma", min=0.0, max=MAX_SIGMA),
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
    t, i = 0.0, 0
    rate, mean, sigma = params["rate"], params["size_mean"], params["sigma"]
    while True:
        t += exponential(rng, rate)
        if t > duration:
            return
        yield {"t": t, "kind": "request", "id": i, "size": job_size(rng, dist, mean, alpha, sigma)}
        i += 1
