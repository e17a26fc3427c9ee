"""Means and confidence intervals over seeds: Student's t, two-sided, with the quantile computed
here (no SciPy), so the summary says exactly what it is."""

from __future__ import annotations

import math
from statistics import NormalDist


def _t_cdf(t: float, df: int) -> float:
    """Student's t CDF by the regularized incomplete beta function (continued fraction)."""
    x = df / (df + t * t)
    a, b = df / 2.0, 0.5
    lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    front = math.exp(a * math.log(x) + b * math.log(1.0 - x) - lbeta) / a
    # Lentz's continued fraction for I_x(a, b)
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + num / c if abs(c) > 1e-300 else 1.0 + num / 1e-300
        f *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    ibeta = front * (f - 1.0)
    tail = 0.5 * ibeta
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on the CDF)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"quantile level must lie in (0, 1), got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, max(10.0, 2.0 * NormalDist().inv_cdf(p))
    while _t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def mean_ci(values: list[float], confidence: float = 0.95) -> dict:
    """``{"n", "mean", "lo", "hi", "sd", "method"}``: a two-sided t interval over the seeds."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return {"n": 0, "mean": None, "lo": None, "hi": None, "sd": None, "method": "t"}
    mean = math.fsum(xs) / n
    if n == 1:
        return {"n": 1, "mean": mean, "lo": None, "hi": None, "sd": None, "method": "t"}
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "lo": mean - half, "hi": mean + half, "sd": sd, "method": "t"}


def one_sided_bound(values: list[float], confidence: float, upper: bool) -> float | None:
    """The one-sided ``confidence`` bound on the mean: upper for a "<" target, lower for ">"."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n < 2:
        return None
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
    return mean + half if upper else mean - half
