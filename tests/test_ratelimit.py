"""Classic rate limiting: exact semantics, bounds under Hypothesis, and the ratelimit-burst claim."""

from __future__ import annotations

from fractions import Fraction

import pytest
from budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sims.core import api
from sims.ratelimit import limiters
from sims.ratelimit.exact import UNIT

# trace times are decimals (here: microseconds), rates and windows tenths; the oracles are exact
arrivals = st.lists(st.integers(0, 50_000_000).map(lambda us: us / 1e6), min_size=1, max_size=300).map(sorted)
tenths = st.integers(min_value=2, max_value=200).map(lambda x: x / 10)


def _dec(x: float) -> Fraction:
    return Fraction(repr(x))


def _admitted(limiter, times):
    out = []
    for t in times:
        if limiter.admit(t):
            out.append(limiter.release_time(t))
        limiter.check_invariants()
    return out


def _max_in(times, span):
    """Most times in any half-open interval (s - span, s], in exact decimal arithmetic."""
    times = [_dec(t) for t in times]
    span = _dec(span)
    best = 0
    j = 0
    for i, t in enumerate(times):
        while times[j] <= t - span:
            j += 1
        best = max(best, i - j + 1)
    return best


@settings(max_examples=examples(150), deadline=None)
@given(arrivals, tenths, st.integers(min_value=1, max_value=20))
@example([0.1, 0.3, 0.5, 0.7], 5.0, 1)
def test_token_bucket_never_exceeds_burst_plus_rate(times, rate, burst):
    got = _admitted(limiters.TokenBucket(rate, burst), times)
    for span in (0.1, 0.5, 1.0, 3.0):
        assert _max_in(got, span) <= burst + _dec(rate) * _dec(span)


@settings(max_examples=examples(150), deadline=None)
@given(arrivals, st.integers(min_value=1, max_value=15), tenths)
def test_sliding_log_never_exceeds_limit(times, limit, window):
    got = _admitted(limiters.SlidingLog(limit, window), times)
    assert _max_in(got, window) <= limit


@settings(max_examples=examples(150), deadline=None)
@given(arrivals, st.integers(min_value=1, max_value=15), tenths)
def test_fixed_window_bounds(times, limit, window):
    got = _admitted(limiters.FixedWindow(limit, window), times)
    per_window: dict[int, int] = {}
    for t in got:
        k = int(_dec(t) // _dec(window))
        per_window[k] = per_window.get(k, 0) + 1
    assert max(per_window.values(), default=0) <= limit
    assert _max_in(got, window) <= 2 * limit


@settings(max_examples=examples(150), deadline=None)
@given(arrivals, st.integers(min_value=1, max_value=15), tenths)
def test_sliding_counter_bounds(times, limit, window):
    got = _admitted(limiters.SlidingCounter(limit, window), times)
    assert _max_in(got, window) <= 2 * limit


@settings(max_examples=examples(150), deadline=None)
@given(arrivals, tenths, st.integers(min_value=1, max_value=20))
def test_leaky_bucket_output_is_smooth(times, rate, burst):
    lim = limiters.LeakyBucket(rate, burst)
    got = _admitted(lim, times)
    assert got == sorted(got)
    for a, b in zip(got, got[1:], strict=False):
        assert b - a >= 1.0 / rate - 1e-9  # released one at a time at the drain rate


@settings(max_examples=examples(100), deadline=None)
@given(arrivals, st.integers(min_value=1, max_value=20), st.integers(min_value=1, max_value=20))
def test_leaky_bucket_releases_are_exact_so_one_second_holds_at_most_rate(times, rate, burst):
    lim = limiters.LeakyBucket(float(rate), float(burst))
    scale = UNIT * lim.time_scale
    got = [Fraction(lim.release_ticks(t), scale) for t in times if lim.admit(t)]
    for a, b in zip(got, got[1:], strict=False):
        assert b - a >= Fraction(1, rate)  # exactly 1/rate apart at least, no float slack
    j = 0
    for i, t in enumerate(got):  # releases in (t - 1, t]
        while got[j] <= t - 1:
            j += 1
        assert i - j + 1 <= rate


def test_leaky_bucket_max_in_any_window_is_its_rate_on_ratelimit_burst():
    m = api.run("ratelimit-burst", panels=["leaky_bucket"])["panels"]["leaky_bucket"]
    assert m["max_in_any_window"] == 10  # float releases said 11: 3.6500000000000004 and 4.65 share a window


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


@pytest.mark.parametrize(
    "make, times, want",
    [
        # 0.2 s at 5/s is one whole token; in floats (0.3 - 0.1) * 5 = 0.9999999999999999
        (lambda: limiters.TokenBucket(5.0, 1.0), [0.1, 0.3, 0.5, 0.69, 0.7], [True, True, True, False, True]),
        (lambda: limiters.TokenBucket(0.1, 1.0), [0.0, 9.99, 10.0], [True, False, True]),
        (lambda: limiters.LeakyBucket(5.0, 1.0), [0.1, 0.3, 0.5, 0.69, 0.7], [True, True, True, False, True]),
        # windows of 0.1 s: 0.3 starts window 3 (in floats 0.3 // 0.1 == 2.0)
        (lambda: limiters.FixedWindow(1, 0.1), [0.2, 0.3, 0.3], [True, True, False]),
        # (t - 0.2, t]: at 0.3 the admission at 0.1 is out (0.3 - 0.2 rounds to 0.09999999999999998)
        (lambda: limiters.SlidingLog(1, 0.2), [0.1, 0.3], [True, True]),
        # 0.3 and 0.31 share window 3 (floats put 0.3 in window 2 and admit both)
        (lambda: limiters.SlidingCounter(1, 0.1), [0.0, 0.3, 0.31], [True, True, False]),
    ],
)
def test_decimal_boundaries_are_exact(make, times, want):
    lim = make()
    got = []
    for t in times:
        got.append(lim.admit(t))
        lim.check_invariants()
    assert got == want


def test_leaky_bucket_is_a_gcra_meter_at_its_boundary():
    """Capacity ``burst``, drained at ``rate``/s; admitted iff the bucket holds <= burst - 1 after
    draining. Burst 3 at 2/s: three at once fill it; it holds exactly 2 again 0.5 s later."""
    lb = limiters.LeakyBucket(rate=2.0, burst=3.0)
    assert [lb.admit(0.0) for _ in range(4)] == [True, True, True, False]
    assert [lb.admit(0.4999), lb.admit(0.5), lb.admit(0.5)] == [False, True, False]
    assert lb.state() == {"queued": 3, "capacity": 3.0}
    assert lb.release_time(0.5) == 2.0  # the request admitted at 0.5 leaves when the bucket is empty
    lb.check_invariants()
    half = limiters.LeakyBucket(rate=1.0, burst=2.5)  # a meter, not a queue: room for 1.5 more
    assert [half.admit(0.0), half.admit(0.0), half.admit(0.0)] == [True, True, False]
    assert [half.admit(0.4), half.admit(0.5)] == [False, True]


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


def test_trace_replay_reads_decimal_times(tmp_path):
    import json
    import subprocess
    import sys

    from conftest import ROOT

    trace = tmp_path / "times.txt"
    trace.write_text("0.1\n0.3\n0.35\n")
    cmd = [sys.executable, "-m", "sims", "trace", "ratelimit", "--policy", "token_bucket"]
    out = subprocess.run(
        [*cmd, "--rate", "5", "--burst", "1", "--trace", str(trace), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(out.stdout) == {"policy": "token_bucket", "accepted": [0, 1], "accepted_count": 2}


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(
        st.integers(0, 10**15).map(lambda n: n / 1e9),  # trace times: at most 9 decimals
        st.floats(min_value=0.0, max_value=1e6, allow_nan=False),  # generated times
    )
)
def test_ticks_is_the_decimal_repr_exactly(t):
    from sims.ratelimit.exact import UNIT, ticks

    assert ticks(t) == round(Fraction(repr(t)) * UNIT)
