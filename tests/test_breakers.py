"""Circuit breakers: the windows against brute force, the state machine's invariants after every
operation over every policy, each source's semantics on fixed inputs (Resilience4j's thresholds and
half-open, Hystrix's volume and strict sleep window, gobreaker's consecutive count, the SRE
formula), the closed forms of the refused fraction, the presets' statements on five seeds, seeking
back, editing, bad input and the renderer. Concept pages: tests/test_breakers_concepts.py."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from random import Random

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.breakers.machine import CLOSED, HALF_OPEN, OPEN, Breaker
from sims.breakers.windows import CountWindow, TimeWindow
from sims.core import presets, registry
from sims.core.presets import PresetError
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
POLICIES = sorted(registry.policies("breakers"))
PRESETS = [n for n in presets.preset_names() if n.startswith("breakers-")]
# parameters that make every transition likely within a short random run
BRISK = {
    "count_based": {"window": 6, "min_calls": 3, "wait": 0.5, "trials": 2},
    "time_based": {"window": 2, "min_calls": 3, "wait": 0.5, "trials": 2},
    "slow_call_rate": {"window": 6, "min_calls": 3, "wait": 0.5, "trials": 2, "slow_call": 0.3},
    "error_percentage": {"volume": 3, "sleep": 0.5, "window": 2.0},
    "consecutive": {"max_failures": 2, "wait": 0.5, "trials": 2},
    "adaptive": {"window": 3},
}


def policy(name: str, **params):
    cls = registry.get_policy("breakers", name)
    full = registry.resolve_params(cls.PARAMS, {**BRISK.get(name, {}), **params}, "test")
    return cls(**full)


# -- the windows against brute force -------------------------------------------------------------
OUTCOMES = st.lists(st.tuples(st.floats(0, 1.5), st.booleans(), st.booleans()), max_size=150)


@settings(max_examples=examples(100), deadline=None)
@given(OUTCOMES, st.integers(1, 12))
def test_count_window_holds_the_last_n_outcomes(ops, size):
    w, seen = CountWindow(size), []
    for _, failed, slow in ops:
        w.outcome(0.0, failed, slow)
        seen.append((failed, slow))
        w.check_invariants()
        last = seen[-size:]
        assert w.totals(0.0) == (len(last), sum(f for f, _ in last), sum(s for _, s in last))


@settings(max_examples=examples(100), deadline=None)
@given(OUTCOMES, st.sampled_from([0.5, 1.0, 2.0]), st.integers(1, 8))
def test_time_window_holds_the_outcomes_of_its_buckets(ops, width, n):
    w, log, t = TimeWindow(width, n), [], 0.0
    for gap, failed, slow in ops:
        t += gap
        w.outcome(t, failed, slow)
        log.append((t, failed, slow))
        w.check_invariants()
        k = int(t // width)
        inside = [x for x in log if int(x[0] // width) > k - n]
        assert w.totals(t) == (len(inside), sum(x[1] for x in inside), sum(x[2] for x in inside))


# -- the state machine over every policy ---------------------------------------------------------
OPS = st.lists(st.tuples(st.floats(0, 0.4), st.sampled_from(["call", "ok", "fail", "slow"])), max_size=120)


@pytest.mark.parametrize("name", POLICIES)
@settings(max_examples=examples(60), deadline=None)
@given(ops=OPS, seed=st.integers(0, 3))
def test_the_breaker_keeps_its_invariants_and_its_promises(name, ops, seed):
    """After every operation: ``check_invariants``; an open breaker refuses until its wait is over,
    half-open lets exactly ``trials`` calls through, a closed one lets every call through."""
    p = policy(name)
    b, rng, t, out = Breaker(p), Random(seed), 0.0, []
    granted = 0  # calls let through since the breaker last became half-open
    for gap, op in ops:
        t += gap
        if op == "call":
            before, since = b.state, b.since
            b.tick(t)
            ok = b.permit(t, rng)
            if p.stateful and before == CLOSED and b.state == CLOSED:
                assert ok
            if before == OPEN and not p.wait_over(t, since):
                assert not ok and b.state == OPEN
            if b.state == HALF_OPEN:
                granted = granted + ok if before == HALF_OPEN else int(ok)
                assert granted <= p.trials
            if ok:
                out.append(t)
        elif out:
            out.pop(0)
            b.outcome(t, op == "fail", 0.5 if op == "slow" else 0.01)
        b.check_invariants()


def _random_preset(draw_fault, rate, retries, timeout, backoff):
    raw = {
        "name": "breakers-random",
        "topic": "breakers",
        "title": "t",
        "watch_for": "w",
        "seed": 1,
        "duration": 8.0,
        "workload": {
            "kind": "breaker_calls",
            "rate": rate,
            "fault": draw_fault,
            "fault_at": 2.0,
            "fault_for": 4.0,
            "burst_every": 1.0,
            "burst_for": 0.3,
            "capacity": rate / 3,
            "spike_latency": 0.5,
        },
        "defaults": {"retries": retries, "timeout": timeout, "backoff": backoff},
        "panels": [{"policy": n, **BRISK.get(n, {})} for n in POLICIES],
    }
    return presets.parse_preset(raw, "breakers-random.toml")


@settings(max_examples=examples(25), deadline=None)
@given(
    st.sampled_from(["outage", "partial", "latency", "bursts", "overload", "none"]),
    st.floats(2.0, 120.0),
    st.integers(0, 3),
    st.sampled_from([0.0, 0.05, 0.4]),
    st.sampled_from([0.0, 0.02, 0.2]),
)
def test_every_panel_keeps_its_invariants_after_every_event(fault, rate, retries, timeout, backoff):
    sc = Scenario(_random_preset(fault, rate, retries, timeout, backoff))
    events = sc.run_events()
    for panel in sc.panels.values():
        for k, ev in enumerate(events):
            panel.feed(events, k, k + 1, ev["t"])
            panel.check_invariants()
        panel.feed(events, len(events), len(events), sc.duration)
        panel.check_invariants()
        m = panel.metrics()
        assert m["attempts"] == m["backend_calls"] + m["refused"]
        assert 0 <= m["goodput"] <= 1 and 0 <= m["open_level"] <= 1


# -- each source's semantics on fixed inputs -------------------------------------------------------
def _feed(p, outcomes, t=1.0):
    for failed in outcomes:
        p.record(t, failed, 0.01)
    return p.tripped(t)


def test_resilience4j_trips_at_the_threshold_from_the_minimum_number_of_calls():
    assert not _feed(policy("count_based", window=10, min_calls=5), [True] * 4)  # 4 calls: below the minimum
    assert _feed(policy("count_based", window=10, min_calls=5), [True] * 5)
    assert not _feed(policy("count_based", window=10, min_calls=5), [False, True, False, True, False])  # 40%
    assert _feed(policy("count_based", window=10, min_calls=5), [False, True, False, True, False, True])  # 50%: >=
    assert policy("count_based", window=5, min_calls=100).min_calls == 5  # capped at the window, as Resilience4j does
    assert policy("time_based", window=5, min_calls=100).min_calls == 100  # not for a time window
    slow = policy("slow_call_rate", window=4, min_calls=4, slow_call=1.0)  # 50% of calls over 1 s
    for seconds in (0.5, 1.5, 0.2, 1.0):
        slow.record(1.0, False, seconds)
    assert not slow.tripped(1.0)  # 1.0 s is not over 1 s: one slow call of four
    slow.record(1.0, False, 1.01)
    assert slow.tripped(1.0)  # the last four: 1.5, 0.2, 1.0, 1.01: two slow
    assert not _feed(policy("count_based", window=4, min_calls=4, slow_call=1.0), [False] * 4)


def test_resilience4j_judges_half_open_on_all_its_trial_calls():
    p = policy("count_based", trials=4)
    assert p.verdict([(True, 0.01)] * 3) is None
    assert p.verdict([(True, 0.01), (True, 0.01), (False, 0.01), (False, 0.01)]) is True  # 50% >= 50%
    assert p.verdict([(True, 0.01), (False, 0.01), (False, 0.01), (False, 0.01)]) is False


def test_hystrix_needs_the_request_volume_and_waits_strictly_past_its_sleep_window():
    def hystrix(n, errors):
        p = policy("error_percentage", volume=20, window=10.0)
        for i in range(n):
            p.record(0.1 + i * 0.001, i < errors, 0.01)
        return p.tripped(1.0)

    assert not hystrix(19, 19)  # every call failed, but fewer than 20 of them
    assert hystrix(20, 10)  # 50%
    assert not hystrix(20, 9)  # 45%
    assert not hystrix(400, 199)  # 49.75% rounds down to 49
    p = policy("error_percentage", sleep=5.0)
    assert not p.wait_over(15.0, 10.0) and p.wait_over(15.000001, 10.0)
    assert policy("count_based", wait=5.0).wait_over(15.0, 10.0)  # Resilience4j: at the wait itself
    assert p.verdict([(False, 0.01)]) is False and p.verdict([(True, 0.01)]) is True  # one trial decides


def test_hystrix_counts_the_last_window_of_complete_buckets_at_each_snapshot():
    b = Breaker(policy("error_percentage", volume=4, window=2.0, snapshot=0.5))
    rng = Random(0)
    for t in (0.1, 0.2, 0.3, 0.4):  # four failures in the first bucket
        assert b.permit(t, rng)
        b.outcome(t, True, 0.01)
    assert b.state == CLOSED  # no snapshot yet
    b.tick(0.5)
    assert b.state == OPEN and b.since == 0.5  # the snapshot at 0.5 s trips it
    b2 = Breaker(policy("error_percentage", volume=4, window=2.0, snapshot=0.5))
    for t in (0.1, 0.2, 0.3, 0.4):
        b2.permit(t, rng)
        b2.outcome(t, True, 0.01)
    b2.policy.record(0.45, False, 0.01)  # a fifth call, a success: 4 of 5 failed is still 80%
    b2.tick(3.0)  # by 2.5 s the first bucket has left the 2 s window
    assert b2.state == OPEN and b2.since == 0.5


def test_gobreaker_trips_on_more_than_five_failures_in_a_row():
    p = policy("consecutive", max_failures=5)
    assert not _feed(p, [True] * 5) and _feed(p, [True])
    p = policy("consecutive", max_failures=5)
    assert not _feed(p, [True] * 5 + [False] + [True] * 5)  # a success starts the count again


def test_adaptive_throttling_follows_the_sre_formula():
    p = policy("adaptive", k=2.0, window=120)
    for i in range(10):
        p.admit(float(i), Random(i))
    for _ in range(3):
        p.record(10.0, False, 0.01)
    p.record(10.0, True, 0.01)  # a failure is no accept
    assert p.level(10.0) == (10 - 2 * 3) / (10 + 1)
    assert p.level(131.0) == 0.0  # two minutes later the history is gone


def test_a_breaker_opens_waits_then_lets_its_trials_through():
    b, rng = Breaker(policy("consecutive", max_failures=1, wait=2.0, trials=2)), Random(0)
    for t in (1.0, 1.1):
        assert b.permit(t, rng)
        b.outcome(t + 0.01, True, 0.01)
    assert b.state == OPEN and b.opens == 1
    assert not b.permit(3.0, rng)  # 1.11 + 2 s is not over
    assert b.permit(3.2, rng) and b.state == HALF_OPEN and b.permit(3.3, rng) and not b.permit(3.4, rng)
    b.outcome(3.5, False, 0.01)
    assert b.state == HALF_OPEN
    b.outcome(3.6, False, 0.01)
    assert b.state == CLOSED and b.flaps == 1 and b.time_open(4.0) == pytest.approx(3.6 - 1.11)


# -- closed forms of the refused fraction ---------------------------------------------------------
@pytest.mark.every_seed("k")
@pytest.mark.parametrize("k", range(5))
def test_adaptive_throttling_refuses_one_minus_k_capacity_over_the_offered_rate(k):
    """Offered lambda calls per second to a backend that serves C and fails the rest, the client
    sends about K * C a second and refuses 1 - K * C / lambda of its calls: 0.6 for lambda = 100,
    C = 20, K = 2. (The backend fails 1 - C / load of what it gets, load counted over the last
    second; a Poisson load's spread adds about 1/load to the mean of C / load: 2.5% here.)"""
    p = presets.load("breakers-overload")
    sc = Scenario(p, p.seed + k, panels=["adaptive"])
    sc.advance(20.0)
    a = sc.metrics()["adaptive"]
    sc.advance(90.0)
    b = sc.metrics()["adaptive"]
    lam, cap = p.workload["rate"], p.workload["capacity"]
    refused = (b["refused"] - a["refused"]) / (b["attempts"] - a["attempts"])
    assert refused == pytest.approx(1 - 2 * cap * 1.025 / lam, abs=0.02)
    assert (b["backend_calls"] - a["backend_calls"]) / 70.0 == pytest.approx(2 * cap * 1.025, rel=0.06)


@pytest.mark.every_seed("k")
@pytest.mark.parametrize("k", range(5))
def test_in_a_long_outage_a_consecutive_breaker_sends_one_call_per_cycle(k):
    """Renewal-reward: open for w, the next Poisson call comes 1/lambda later on average and is the
    one trial, whose failure comes back after the mean latency l and opens it again. One call sent
    per cycle of w + 1/lambda + l seconds: a fraction 1 / (lambda w + 1 + lambda l) of the calls."""
    p = presets.load("breakers-outage").with_overrides(
        {"duration": 400.0, "workload.fault_for": 390.0, "defaults.retries": 0}
    )
    sc = Scenario(p, p.seed + k, panels=["consecutive"])
    sc.advance(20.0)
    a = sc.metrics()["consecutive"]
    sc.advance(400.0)
    b = sc.metrics()["consecutive"]
    lam, w, lat = p.workload["rate"], 5.0, p.workload["latency"]
    cycle = w + 1 / lam + lat
    assert b["backend_calls"] - a["backend_calls"] == pytest.approx(380.0 / cycle, abs=2)
    sent = (b["backend_calls"] - a["backend_calls"]) / (b["calls"] - a["calls"])
    assert sent == pytest.approx(1 / (lam * w + 1 + lam * lat), rel=0.03)


# -- the presets' statements on five seeds ---------------------------------------------------------
def _at(name: str, seed: int, t: float) -> dict:
    sc = Scenario(presets.load(name), seed)
    sc.advance(t)
    return sc.metrics()


@pytest.mark.every_seed("k")
@pytest.mark.parametrize("k", range(5))
def test_presets_exact_statements(k):
    p = presets.load("breakers-outage")
    m = _at(p.name, p.seed + k, 40.0)
    assert m["count_based"]["backend_calls"] < 0.12 * m["none"]["backend_calls"]
    assert m["consecutive"]["backend_calls"] < 0.12 * m["none"]["backend_calls"]
    p = presets.load("breakers-low-traffic")
    m = _at(p.name, p.seed + k, 50.0)
    assert m["error_percentage"]["opens"] == 0 and m["error_percentage"]["backend_failures"] >= 25
    assert m["volume_5"]["opens"] >= 1
    p = presets.load("breakers-latency-spike")
    m = _at(p.name, p.seed + k, 30.0)
    assert m["count_based"]["opens"] == m["error_percentage"]["opens"] == 0 < m["slow_call_rate"]["opens"]
    assert m["count_based"]["backend_failures"] == 0  # every call of the spike succeeded, slowly
    p = presets.load("breakers-overload")
    early, m = _at(p.name, p.seed + k, 5.0), _at(p.name, p.seed + k, 60.0)
    assert m["adaptive"]["flaps"] == early["adaptive"]["flaps"]  # all in the cold start's first calls
    assert m["count_based"]["flaps"] >= 6
    p = presets.load("breakers-partial")
    early, m = _at(p.name, p.seed + k, 5.0), _at(p.name, p.seed + k, 60.0)
    assert m["count_based"]["opens"] == 0 and m["consecutive"]["opens"] >= 1
    assert m["adaptive"]["refused"] == early["adaptive"]["refused"]  # 30% < 1 - 1/K: it refuses nothing


# -- the panel on the virtual clock, editing, bad input -------------------------------------------
def test_seek_back_replays_to_the_same_state():
    sc = Scenario(presets.load("breakers-overload"), checkpoint_every=5.0)
    sc.advance(23.7)
    want = (sc.metrics(), sc.views())
    sc.advance(50.0)
    sc.seek(23.7)
    assert (sc.metrics(), sc.views()) == want
    twin = copy.deepcopy(sc.panels["adaptive"])
    assert twin.metrics() == sc.panels["adaptive"].metrics() and twin.view() == sc.panels["adaptive"].view()


@pytest.mark.parametrize("name", PRESETS)
def test_an_unedited_copy_of_each_policy_gives_the_same_numbers(name):
    from sims.core import editpanel, userpolicy
    from sims.core.policysource import policy_source

    p = presets.load(name)
    sc = Scenario(p, duration=min(p.duration, 30.0))
    added = [
        (s.name, editpanel.add_edited(sc, userpolicy.load(policy_source("breakers", s.policy), "breakers"), p, s.name))
        for s in p.panels
    ]
    sc.run()
    assert not editpanel.stops(sc)
    for base, edited in added:
        assert sc.metrics()[edited] == sc.metrics()[base], base


def test_every_policy_is_in_a_preset():
    used = {s.policy for n in PRESETS for s in presets.load(n).panels}
    assert used == set(POLICIES)


def test_bad_workload_values_name_the_field():
    p = presets.load("breakers-outage")
    with pytest.raises(PresetError, match="workload.burst_for"):
        p.with_overrides({"workload.fault": "bursts", "workload.burst_for": 5.0, "workload.burst_every": 5.0})
    with pytest.raises(PresetError, match="workload.fault"):
        p.with_overrides({"workload.fault": "meteor"})
    with pytest.raises(PresetError, match="wait"):
        p.with_overrides({"panels.count_based.wait": 0.0})


def test_the_renderer_draws_every_preset_view_under_node(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    views = {}
    for name in PRESETS:
        p = presets.load(name)
        sc = Scenario(p)
        for t in (0.0, 0.3, 11.0, p.duration / 2, p.duration):
            sc.advance(t)
            views[f"{name}@{t}"] = sc.views()
    f = tmp_path / "views.json"
    f.write_text(json.dumps(views))
    res = subprocess.run(
        [node, str(ROOT / "tests" / "node" / "render_views.mjs"), "breakers", "breaker", str(f)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1])["calls"] > 10000
