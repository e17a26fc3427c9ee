"""Portable math within 1 ulp of math.*, and distribution moments on 100k draws."""

from __future__ import annotations

import math
import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sims.core import dists, portmath


def ulps(a: float, b: float) -> int:
    ia = struct.unpack("<q", struct.pack("<d", a))[0]
    ib = struct.unpack("<q", struct.pack("<d", b))[0]
    return abs(ia - ib)


@given(st.floats(min_value=-745.0, max_value=709.0))
def test_exp_within_one_ulp(x):
    assert ulps(portmath.exp(x), math.exp(x)) <= 1


@given(st.floats(min_value=5e-324, max_value=1.7e308))
def test_log_within_one_ulp(x):
    assert ulps(portmath.log(x), math.log(x)) <= 1


@given(st.floats(min_value=1e-6, max_value=1e6), st.floats(min_value=-8.0, max_value=8.0))
def test_pow_within_one_ulp(x, y):
    expected = math.pow(x, y)
    if expected == 0.0 or math.isinf(expected) or expected < 2.3e-308:
        return  # underflow to subnormals: outside what the sims use
    assert ulps(portmath.pow(x, y), expected) <= 1


def test_special_values():
    assert portmath.exp(0.0) == 1.0
    assert portmath.log(1.0) == 0.0
    assert portmath.exp(1000.0) == math.inf
    assert portmath.exp(-1000.0) == 0.0
    assert portmath.log(0.0) == -math.inf
    assert math.isnan(portmath.log(-1.0))
    assert portmath.pow(2.0, 10.0) == 1024.0
    assert portmath.pow(0.0, 2.0) == 0.0
    with pytest.raises(ValueError, match="x >= 0"):
        portmath.pow(-2.0, 0.5)


def test_sin_cos_close_to_libm():
    for i in range(-2000, 2000):
        x = i * 0.01
        assert abs(portmath.sin(x) - math.sin(x)) < 1e-13
        assert abs(portmath.cos(x) - math.cos(x)) < 1e-13


N = 100_000


def _draws(fn):
    rng = random.Random(12345)
    return [fn(rng) for _ in range(N)]


def _mean_var(xs):
    m = sum(xs) / len(xs)
    return m, sum((x - m) ** 2 for x in xs) / len(xs)


def test_exponential_moments():
    m, v = _mean_var(_draws(lambda r: dists.exponential(r, 2.0)))
    assert m == pytest.approx(0.5, rel=0.02) and v == pytest.approx(0.25, rel=0.05)


def test_normal_moments():
    m, v = _mean_var(_draws(lambda r: dists.normal(r, 3.0, 2.0)))
    assert m == pytest.approx(3.0, abs=0.03) and v == pytest.approx(4.0, rel=0.03)


def test_lognormal_mean_parameterisation():
    m, _ = _mean_var(_draws(lambda r: dists.lognormal_mean(r, 161.0, 0.8)))
    assert m == pytest.approx(161.0, rel=0.03)


def test_pareto_mean():
    m, _ = _mean_var(_draws(lambda r: dists.pareto(r, 3.0, 1.0)))
    assert m == pytest.approx(1.5, rel=0.03)  # alpha xm / (alpha - 1)


@pytest.mark.parametrize("shape", [0.5, 2.0, 7.5])
def test_gamma_moments(shape):
    m, v = _mean_var(_draws(lambda r: dists.gamma(r, shape, 2.0)))
    assert m == pytest.approx(shape * 2.0, rel=0.03) and v == pytest.approx(shape * 4.0, rel=0.06)


def test_zipf_frequencies_match_pmf():
    z = dists.Zipf(50, 1.1)
    counts = [0] * 51
    for k in _draws(z.sample):
        counts[k] += 1
    for k in (1, 2, 5, 20):
        p = z.pmf(k)
        assert counts[k] / N == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / N))  # 4 sigma
    assert counts[0] == 0 and sum(counts) == N


def test_draws_are_seed_deterministic():
    a = [dists.gamma(random.Random(3), 0.7) for _ in range(3)]
    b = [dists.gamma(random.Random(3), 0.7) for _ in range(3)]
    assert a == b
