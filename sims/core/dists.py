"""Distributions built on portable math: bit-identical in CPython and Pyodide.

Each takes an explicit ``random.Random``. Only ``random()``, ``randrange``, ``choices`` and
``shuffle`` are used from it (those are portable); the transforms use ``portmath``.
"""

from __future__ import annotations

from bisect import bisect_right
from math import sqrt
from random import Random

from sims.core import portmath


def exponential(rng: Random, rate: float) -> float:
    """Exponential with the given rate (mean 1/rate)."""
    return -portmath.log(1.0 - rng.random()) / rate


def normal(rng: Random, mu: float = 0.0, sigma: float = 1.0) -> float:
    """Normal by Marsaglia's polar method (log and sqrt only; no sin/cos)."""
    while True:
        u = 2.0 * rng.random() - 1.0
        v = 2.0 * rng.random() - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            return mu + sigma * u * sqrt(-2.0 * portmath.log(s) / s)


def lognormal(rng: Random, mu: float, sigma: float) -> float:
    """exp(N(mu, sigma))."""
    return portmath.exp(normal(rng, mu, sigma))


def lognormal_mean(rng: Random, mean: float, sigma: float) -> float:
    """Lognormal parameterised by its mean: mu = ln(mean) - sigma^2 / 2."""
    return lognormal(rng, portmath.log(mean) - 0.5 * sigma * sigma, sigma)


def pareto(rng: Random, alpha: float, xm: float = 1.0) -> float:
    """Pareto with shape alpha and scale xm (support [xm, inf))."""
    return xm * portmath.exp(-portmath.log(1.0 - rng.random()) / alpha)


def gamma(rng: Random, shape: float, scale: float = 1.0) -> float:
    """Gamma by Marsaglia and Tsang; shape < 1 boosted by U**(1/shape)."""
    if shape <= 0:
        raise ValueError(f"gamma shape must be > 0, got {shape!r}")
    if shape < 1.0:
        g = gamma(rng, shape + 1.0, 1.0)
        u = 1.0 - rng.random()
        return scale * g * portmath.pow(u, 1.0 / shape)
    d = shape - 1.0 / 3.0
    c = 1.0 / sqrt(9.0 * d)
    while True:
        x = normal(rng)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - rng.random()
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2:
            return scale * d * v
        if portmath.log(u) < 0.5 * x2 + d * (1.0 - v + portmath.log(v)):
            return scale * d * v


_CDFS: dict[tuple[int, float], list[float]] = {}  # the last tables built, never mutated
_CDFS_KEPT = 2


def _zipf_cdf(n: int, s: float) -> list[float]:
    """The CDF of ranks 1..n, built with portable pow (the same bits in Pyodide). A table of a
    million ranks takes seconds, and a run builds its stream's up to three times (the budget's
    sample at load, again at start, then the run), so the last few are kept and shared."""
    key = (n, s)
    cdf = _CDFS.get(key)
    if cdf is None:
        total = 0.0
        sums = []
        for k in range(1, n + 1):
            total += portmath.pow(float(k), -s) if s else 1.0
            sums.append(total)
        cdf = [c / total for c in sums]
        while len(_CDFS) >= _CDFS_KEPT:
            del _CDFS[next(iter(_CDFS))]
        _CDFS[key] = cdf
    return cdf


class Zipf:
    """Bounded Zipf over ranks 1..n with exponent s: P(k) proportional to k**-s.

    The CDF is built once with portable pow; a draw is one ``random()`` and a bisection.
    """

    __slots__ = ("n", "s", "_cdf")

    def __init__(self, n: int, s: float) -> None:
        if n < 1:
            raise ValueError(f"zipf n must be >= 1, got {n!r}")
        self.n = n
        self.s = s
        self._cdf = _zipf_cdf(n, s)

    def sample(self, rng: Random) -> int:
        """A rank in 1..n."""
        i = bisect_right(self._cdf, rng.random())
        return min(i, self.n - 1) + 1

    def pmf(self, k: int) -> float:
        lo = self._cdf[k - 2] if k > 1 else 0.0
        return self._cdf[k - 1] - lo
