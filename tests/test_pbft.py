"""PBFT (sims/consensus/pbft.py): the normal case's message count against a count by hand, its growth
as n² beside Raft's n, safety with up to f traitors and its loss beyond f, the checker's agreement
and validity, random fault schedules, and the network's Byzantine fault leaving honest nodes alone."""

from __future__ import annotations

import math
from random import Random

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims.consensus.trials import run_events
from sims.core import presets
from sims.core.scenario import Scenario


def _ops(rate: float, until: float, seed: int) -> list[dict]:
    """Client requests from t = 1 s, gaps uniform on [0, 2/rate]."""
    rng, t, out = Random(seed), 1.0, []
    while True:
        t += rng.random() * 2 / rate
        if t > until:
            return out
        out.append({"t": t, "kind": "op", "id": len(out) + 1})


def _hand_count(n: int) -> int:
    """PBFT's normal case per request, counted by hand from the paper's Figure 1: the primary's
    pre-prepare to n - 1 backups, each backup's prepare to the n - 1 others, each replica's commit
    to the n - 1 others (the client's request and the replies are not replica messages here)."""
    return (n - 1) + (n - 1) * (n - 1) + n * (n - 1)


def _exponent(ns, counts) -> float:
    """The least-squares slope of log(count) against log(n)."""
    xs, ys = [math.log(n) for n in ns], [math.log(c) for c in counts]
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / math.fsum((x - mx) ** 2 for x in xs)


@pytest.mark.parametrize("n", [4, 7, 10])
def test_the_normal_case_sends_exactly_the_hand_counted_messages(n):
    events = _ops(10.0, 6.0, 1)
    panel = run_events("pbft", events, 8.0, nodes=n)  # 2 s after the last request: all committed
    m = panel.metrics()
    assert m["committed"] == len(events) and m["safety_violations"] == 0
    assert _hand_count(n) == 2 * n * (n - 1)
    assert m["messages"] == len(events) * _hand_count(n)
    assert m["messages_per_commit"] == _hand_count(n)


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_messages_per_commit_grow_as_n_squared_for_pbft_and_n_for_raft(seed):
    """The fitted exponent of messages per commit in n: PBFT's over n = 4, 7, 10 is the exponent of
    2n(n - 1) (2.20 over those n: the (n - 1) steepens it above 2); Raft's over 3, 5, 7 that of
    2(n - 1) (1.30; its heartbeats also go to n - 1 followers), about one power of n apart."""
    events = _ops(20.0, 8.0, seed)
    pbft = [run_events("pbft", events, 8.0, seed=seed, nodes=n).metrics()["messages_per_commit"] for n in (4, 7, 10)]
    raft = [run_events("raft", events, 8.0, seed=seed, nodes=n).metrics()["messages_per_commit"] for n in (3, 5, 7)]
    k_pbft, k_raft = _exponent((4, 7, 10), pbft), _exponent((3, 5, 7), raft)
    assert abs(k_pbft - _exponent((4, 7, 10), [_hand_count(n) for n in (4, 7, 10)])) < 0.02, pbft
    assert abs(k_raft - _exponent((3, 5, 7), [2 * (n - 1) for n in (3, 5, 7)])) < 0.15, raft
    assert 0.7 < k_pbft - k_raft < 1.2, (k_pbft, k_raft)


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_one_traitor_primary_forces_a_view_change_and_breaks_nothing_two_break_agreement(seed):
    m = Scenario("consensus-pbft-traitors", seed=seed).run().metrics()
    assert m["pbft_honest"]["leader_changes"] == 0 and m["pbft_honest"]["safety_violations"] == 0
    assert m["pbft"]["leader_changes"] >= 1 and m["pbft"]["max_term"] >= 1
    assert m["pbft"]["safety_violations"] == 0
    assert m["pbft"]["committed"] >= m["pbft"]["ops"] - 2  # every request but the last few
    assert m["pbft_2_traitors_broken"]["safety_violations"] >= 1


@pytest.mark.parametrize("n, f", [(4, 1), (7, 2), (10, 3)])
def test_safety_holds_up_to_f_traitors_and_breaks_one_beyond(n, f):
    events = _ops(10.0, 5.0, n)
    for traitors in range(f + 1):
        panel = run_events("pbft", events, 6.0, seed=2, nodes=n, traitors=traitors)
        assert not panel.checker.violations, (n, traitors, panel.checker.violations)
        panel.check_invariants()
    broken = run_events("pbft", events, 6.0, seed=2, nodes=n, traitors=f + 1)
    assert any(k.startswith("agreement:") for k in broken.checker.violations), broken.checker.violations


def test_the_checker_sees_a_forged_commit_and_a_request_no_client_sent():
    ops = [{"t": 1.0, "kind": "op", "id": 1}, {"t": 1.5, "kind": "op", "id": 2}]
    panel = run_events("pbft", ops, 2.0, nodes=4)
    assert panel.metrics()["committed"] == 2 and not panel.checker.violations
    nodes = panel.net.nodes
    nodes[2].new_commits.append((1, 0, 2))  # the other request at sequence number 1
    nodes[3].new_commits.append((3, 0, 99))  # a request no client issued, at a new number
    panel.checker.check(nodes, 2.0)
    assert set(panel.checker.violations) == {"agreement:1", "validity:3"}
    nodes[0].traitor = "equivocate"  # what a traitor claims to commit proves nothing
    nodes[0].new_commits.append((1, 0, 8))
    panel.checker.check(nodes, 2.0)
    assert set(panel.checker.violations) == {"agreement:1", "validity:3"}


def test_the_byzantine_fault_turns_a_replica_at_run_time_and_leaves_raft_alone():
    events = _ops(10.0, 4.0, 3)
    turn = {"t": 0.5, "kind": "fault", "fault": "byzantine", "node": "leader"}
    pbft = run_events("pbft", sorted([*events, turn], key=lambda e: e["t"]), 5.0, nodes=4).metrics()
    assert pbft["leader_changes"] >= 1 and pbft["safety_violations"] == 0
    plain = run_events("raft", events, 5.0).metrics()
    lying = run_events("raft", sorted([*events, turn], key=lambda e: e["t"]), 5.0).metrics()
    assert plain == lying  # Node.forge tells the truth unless a protocol says how to lie


@st.composite
def schedules(draw):
    """Crashes, restarts (durable), partitions, heals, lossy links and requests over 4 s, on 4 or 7
    replicas with up to f traitors."""
    n = draw(st.sampled_from([4, 7]))
    events, t, crashed = [], 0.2, set()
    for _ in range(draw(st.integers(3, 16))):
        t += draw(st.sampled_from([0.005, 0.02, 0.1, 0.3, 0.6]))
        kind = draw(st.sampled_from(["op", "op", "op", "crash", "restart", "partition", "heal", "link"]))
        ev = {"t": t, "kind": "fault"}
        if kind == "op":
            ev = {"t": t, "kind": "op", "id": len(events) + 1}
        elif kind == "crash":
            node = draw(st.integers(0, n - 1))
            crashed.add(node)
            ev |= {"fault": "crash", "node": node}
        elif kind == "restart":
            if not crashed:
                continue
            node = draw(st.sampled_from(sorted(crashed)))
            crashed.discard(node)
            ev |= {"fault": "restart", "node": node, "durable": True}
        elif kind == "partition":
            side = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n - 1, unique=True))
            ev |= {"fault": "partition", "groups": [side]}
        elif kind == "heal":
            ev |= {"fault": "heal"}
        else:
            ev |= {"fault": "link", "loss": draw(st.sampled_from([0.0, 0.1, 0.3])), "duplicate": 0.1, "reorder": 0.2}
        events.append(ev)
    params = {"nodes": n, "traitors": draw(st.integers(0, (n - 1) // 3)), "view_timeout": 0.3}
    return events, t + 2.0, draw(st.integers(0, 2**32)), params


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedules())
def test_pbft_is_safe_with_up_to_f_traitors_on_random_fault_schedules(case):
    events, duration, seed, params = case
    panel = run_events("pbft", events, duration, seed=seed, **params)
    assert not panel.checker.violations, (panel.checker.violations, events, params)
    panel.check_invariants()


def test_the_messages_preset_reads_the_hand_count():
    m = Scenario("consensus-pbft-messages", seed=1).run().metrics()
    assert m["pbft"]["messages_per_commit"] == _hand_count(7) and m["pbft_4"]["messages_per_commit"] == _hand_count(4)
    assert m["raft"]["messages_per_commit"] < 40
    assert presets.load("consensus-pbft-messages").site["claim"]["panels"] == ["raft", "pbft"]
