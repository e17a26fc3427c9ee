"""Load balancing: the presets' claims in numbers, and "every request reaches a live server"."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.balance import make_panel
from sims.core import api, presets, stream
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, policies, resolve_params
from sims.core.scenario import Scenario

POLICIES = sorted(policies("balance"))


def _panel(policy: str, **params):
    cls = get_policy("balance", policy)
    specs = dict(load_topic("balance").panel_params) | dict(cls.PARAMS)
    return make_panel(policy, policy, resolve_params(specs, params, "panel"), PanelContext(1, 10.0, [], policy))


# -- the presets' claims -------------------------------------------------------------------------
def test_skewed_random_and_round_robin_build_queues_and_p2c_tracks_least_connections():
    m = api.run("balance-skewed")["panels"]
    for name in ("random", "round_robin"):
        assert m[name]["max_queue"] > 300 and m[name]["p99_latency"] > 2.0, (name, m[name])
    lc, p2c = m["least_connections"], m["p2c"]
    assert lc["max_queue"] <= 20 and p2c["max_queue"] <= 30
    assert p2c["p99_latency"] < 3 * lc["p99_latency"]
    assert p2c["p99_latency"] < 0.05 * m["random"]["p99_latency"]
    assert m["weighted_round_robin"]["imbalance"] < m["random"]["imbalance"]


def test_ewma_routes_around_the_slow_server():
    sc = Scenario("balance-slow-server")
    sc.advance(10.0)
    before = {name: v["servers"][3]["routed"] for name, v in sc.views().items()}
    sc.run()
    after = {name: v["servers"][3]["routed"] - before[name] for name, v in sc.views().items()}
    total = {name: m["requests"] for name, m in sc.metrics().items()}
    m = sc.metrics()
    assert after["round_robin"] > 0.12 * (total["round_robin"] * 0.75)  # still one in eight
    assert after["ewma"] < 0.5 * after["least_connections"], after
    assert m["ewma"]["p99_latency"] < m["least_connections"]["p99_latency"] < m["round_robin"]["p99_latency"]
    assert m["round_robin"]["max_queue"] > 500
    assert m["ewma"]["max_queue"] <= 20


def test_stale_load_reports_make_least_connections_herd():
    m = api.run("balance-herd")["panels"]
    lc, p2c = m["lc_stale"], m["p2c_stale"]
    assert lc["max_queue"] > 100 and lc["p99_latency"] > 1.0
    assert p2c["p99_latency"] < 0.25 * lc["p99_latency"]
    assert m["lc_live"]["p99_latency"] < p2c["p99_latency"]
    assert m["lc_live"]["max_queue"] < 10


def test_snapshot_at_t_equals_a_run_to_t_with_a_kill():
    p = presets.load("balance-slow-server").with_overrides(
        {  # server 3 is busy in every panel at t = 1.0, so its requests are rerouted
            "events": [{"t": 1.0, "kind": "kill_server", "server": 3}, {"t": 2.0, "kind": "slow_server", "server": 2}],
            "duration": 4.0,
        }
    )
    sc = Scenario(p)
    for t in (0.7, 1.0, 2.5, 4.0):
        sc.advance(t)
        assert sc.metrics() == Scenario(p, duration=t).run().metrics()
        sc.check_invariants()
    assert any(m["rerouted"] > 0 for m in sc.metrics().values())
    views = json.loads(json.dumps(sc.views()))
    assert views["ewma"]["servers"][3]["alive"] is False


def test_seeking_back_through_checkpoints_replays_exactly():
    p = presets.load("balance-slow-server").with_overrides(
        {
            "events": [{"t": 1.0, "kind": "kill_server", "server": 0}, {"t": 2.0, "kind": "slow_server", "server": 2}],
            "duration": 4.0,
        }
    )
    sc = Scenario(p, checkpoint_every=0.5)
    sc.advance(3.7)
    late = sc.metrics()
    for t in (1.2, 0.3, 2.6):
        sc.seek(t)
        assert sc.metrics() == Scenario(p, duration=t).run().metrics()
    sc.advance(3.7)
    assert sc.metrics() == late


def test_latency_percentiles_count_the_backlog_by_its_age():
    panel = _panel("round_robin", speeds=[1.0, 0.001])  # server 1 takes 10 s per 0.01 s job
    for i in range(200):
        panel.on_event({"t": i * 0.01, "kind": "request", "id": i, "size": 0.01})
    panel.advance(3.0)
    m = panel.metrics()
    assert m["completed"] == 100 and m["in_system"] == 100  # server 1 has finished nothing
    assert m["p99_latency"] > 0.9 and m["p99_latency_censored"] == 1, m  # completed ones alone: 0.01 s
    assert m["p50_latency"] > 0.4 and m["mean_latency_censored"] == 1  # half the arrivals are waiting
    assert m["mean_latency_completed"] < 0.02 < m["mean_latency"]


def test_arrivals_stop_and_the_servers_drain_so_latencies_are_exact():
    m = api.run("balance-herd", panels=["lc_live"])["panels"]["lc_live"]
    assert m["in_system"] == 0 and m["p99_latency_censored"] == 0 and m["mean_latency_censored"] == 0
    p = presets.load("balance-herd")
    assert max(e["t"] for e in stream.generate("jobs", p.workload, p.seed, p.duration)) <= 28.0


def test_least_connections_rotates_among_tied_servers_as_nginx_does():
    lc = get_policy("balance", "least_connections")([1.0] * 4, None)
    assert [lc.pick([0, 1, 2, 3], [0, 0, 0, 0], 0.0) for _ in range(8)] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert [lc.pick([0, 1, 2, 3], [2, 1, 5, 1], 0.0) for _ in range(4)] == [1, 3, 1, 3]  # ties only
    assert lc.pick([0, 1, 2, 3], [3, 1, 0, 1], 0.0) == 2  # a unique minimum needs no turn
    assert [lc.pick([1, 3], [0, 0, 0, 0], 0.0) for _ in range(2)] == [1, 3]  # live servers only


def test_stale_least_connections_uses_every_server():
    m = api.run("balance-herd", panels=["lc_stale"])["panels"]["lc_stale"]
    assert m["imbalance"] < 0.5, m  # ties to the lowest index left server 7 idle for 30 s (imbalance 1.0)


def test_peak_ewma_counts_its_own_requests_so_stale_reports_do_not_herd_it():
    p = presets.load("balance-herd").with_overrides(
        {"panels": [{"name": "ewma_stale", "policy": "ewma"}, {"name": "p2c_stale", "policy": "p2c"}]}
    )
    m = Scenario(p).run().metrics()
    assert m["ewma_stale"]["max_queue"] < 20, m  # on the stale reports it herded: max_queue 276, p99 2.5 s
    assert m["ewma_stale"]["p99_latency"] < m["p2c_stale"]["p99_latency"]


# -- properties ----------------------------------------------------------------------------------
_REQUEST = st.tuples(st.just("request"), st.floats(0.001, 0.3))
_EVENT = st.one_of(
    _REQUEST,
    _REQUEST,
    _REQUEST,
    st.tuples(st.sampled_from(["kill_server", "revive_server", "slow_server"]), st.integers(0, 3)),
)


@settings(max_examples=30, deadline=None)
@given(
    evs=st.lists(st.tuples(st.floats(0.0, 0.05), _EVENT), min_size=1, max_size=120),
    stale=st.sampled_from([0.0, 0.2]),
    clients=st.sampled_from([0, 3]),
)
def test_every_request_reaches_a_live_server_and_none_is_lost(evs, stale, clients):
    for policy in POLICIES:
        panel = _panel(policy, speeds=[1.0, 2.0, 0.5, 1.0], stale=stale)
        t = 0.0
        for i, (gap, (kind, x)) in enumerate(evs):
            t += gap
            ev = {"t": t, "kind": kind, "id": i}
            if kind == "request":
                ev["size"] = x
                if clients:
                    ev["client"] = i % clients
            else:
                ev["server"] = x
            panel.advance(t)
            before = list(panel.routed)
            panel.on_event(ev)  # the panel itself raises if it routes to a dead server
            for s, (a, b) in enumerate(zip(before, panel.routed, strict=True)):
                if b > a:
                    assert panel.alive[s], f"{policy} routed to dead server {s}"
            panel.check_invariants()
        panel.advance(1e300)  # repeated 10x slowdowns make some jobs very long
        panel.check_invariants()
        m = panel.metrics()
        assert m["requests"] == m["completed"] + m["dropped"]  # all finished or had nowhere to go


def test_jobs_workload_has_the_requested_mean_and_a_heavy_tail():
    p = presets.load("balance-skewed")
    sizes = [e["size"] for e in stream.generate("jobs", p.workload, 3, 20.0)]
    mean = sum(sizes) / len(sizes)
    assert 0.0085 < mean < 0.0115
    assert max(sizes) > 20 * mean  # pareto 1.8: the tail is long


def test_bad_parameters_are_value_errors():
    with pytest.raises(ValueError, match="speeds"):
        _panel("random", speeds=[])
    with pytest.raises(ValueError, match="tau"):
        _panel("ewma", tau=0.0)
    panel = _panel("random", speeds=[1.0, 1.0])
    with pytest.raises(ValueError, match="server"):
        panel.on_event({"t": 0.0, "kind": "kill_server", "server": 5})
    with pytest.raises(ValueError, match="size_dist"):
        list(
            stream.generate(
                "jobs", {"rate": 1.0, "size_mean": 1.0, "size_dist": "zipf", "alpha": 2.0, "sigma": 1.0}, 1, 5.0
            )
        )
