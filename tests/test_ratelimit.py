"""Classic rate limiting: exact semantics, bounds under Hypothesis, and the ratelimit-burst claim."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import api
from sims.ratelimit import limiters

arrivals = st.lists(st.floats(min_value=0.0, max_value=50.0, allow_nan=False), min_size=1, max_size=300).map(sorted)


def _admitted(limiter, times):
    out = []
    for t in times:
        if limiter.admit(t):
            out.append(limiter.release_time(t))
        limiter.check_invariants()
    return out


def _max_in(times, span):
    """Most times in any half-open interval (s - span, s]."""
    best = 0
    j = 0
    for i, t in enumerate(times):
        while times[j] <= t - span:
            j += 1
        best = max(best, i - j + 1)
    return best


@settings(max_examples=150, deadline=None)
@given(arrivals, st.floats(min_value=0.5, max_value=20.0), st.integers(min_value=1, max_value=20))
def test_token_bucket_never_exceeds_burst_plus_rate(times, rate, burst):
    got = _admitted(limiters.TokenBucket(rate, burst), times)
    for span in (0.1, 0.5, 1.0, 3.0):
        assert _max_in(got, span) <= burst + rate * span + 1e-9


@settings(max_examples=150, deadline=None)
@given(arrivals, st.integers(min_value=1, max_value=15), st.floats(min_value=0.2, max_value=5.0))
def test_sliding_log_never_exceeds_limit(times, limit, window):
    got = _admitted(limiters.SlidingLog(limit, window), times)
    assert _max_in(got, window) <= limit


@settings(max_examples=150, deadline=None)
@given(arrivals, st.integers(min_value=1, max_value=15), st.floats(min_value=0.2, max_value=5.0))
def test_fixed_window_bounds(times, limit, window):
    got = _admitted(limiters.FixedWindow(limit, window), times)
    per_window: dict[int, int] = {}
    for t in got:
        per_window[int(t // window)] = per_window.get(int(t // window), 0) + 1
    assert max(per_window.values(), default=0) <= limit
    assert _max_in(got, window) <= 2 * limit


@settings(max_examples=150, deadline=None)
@given(arrivals, st.integers(min_value=1, max_value=15), st.floats(min_value=0.2, max_value=5.0))
def test_sliding_counter_bounds(times, limit, window):
    got = _admitted(limiters.SlidingCounter(limit, window), times)
    assert _max_in(got, window) <= 2 * limit


@settings(max_examples=150, deadline=None)
@given(arrivals, st.floats(min_value=0.5, max_value=20.0), st.integers(min_value=1, max_value=20))
def test_leaky_bucket_output_is_smooth(times, rate, burst):
    lim = limiters.LeakyBucket(rate, burst)
    got = _admitted(lim, times)
    assert got == sorted(got)
    for a, b in zip(got, got[1:]):
        assert b - a >= 1.0 / rate - 1e-9  # released one at a time at the drain rate


def test_token_bucket_exact_semantics():
    tb = limiters.TokenBucket(rate=2.0, burst=3.0)
    # starts full: 3 at t=0, then one token every 0.5 s
    assert [tb.admit(t) for t in (0, 0, 0, 0, 0.25, 0.5, 0.5, 2.0, 2.0, 2.0, 2.0)] == [
        True,
        True,
        True,
        False,
        False,
        True,
        False,
        True,
        True,
        True,
        False,
    ]


def test_sliding_log_counts_admitted_only_in_half_open_window():
    sl = limiters.SlidingLog(limit=2, window=1.0)
    assert [sl.admit(t) for t in (0.0, 0.1, 0.2, 1.0, 1.05, 1.1)] == [True, True, False, True, False, True]


def test_fixed_window_boundaries():
    fw = limiters.FixedWindow(limit=2, window=1.0)
    assert [fw.admit(t) for t in (0.0, 0.5, 0.99, 1.0, 1.0, 1.5)] == [True, True, False, True, True, False]


def test_ratelimit_burst_claim():
    r = api.run("ratelimit-burst")
    p = r["panels"]
    assert p["fixed_window"]["max_in_any_window"] == 20  # 2x its limit of 10
    assert p["sliding_log"]["max_in_any_window"] == 10  # never above
    for name, m in p.items():
        assert m["accepted"] + m["rejected"] == m["requests"]
        assert m["max_in_any_window"] <= 20, name


def test_burst_action_event_counts_requests():
    from sims.core.scenario import Scenario

    sc = Scenario("ratelimit-burst", duration=0.5)
    sc.events.insert(0, {"t": 0.0, "kind": "burst", "count": 30})
    sc._times.insert(0, 0.0)
    sc._end += 1
    sc.run()
    m = sc.metrics()["sliding_log"]
    assert m["accepted"] == 10 and m["requests"] >= 30


@pytest.mark.parametrize("cls", [limiters.TokenBucket, limiters.LeakyBucket])
def test_bad_bucket_arguments(cls):
    with pytest.raises(ValueError, match="burst >= 1"):
        cls(1.0, 0.0)
