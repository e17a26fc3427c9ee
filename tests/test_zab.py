"""Zab (sims/consensus/zab.py): a leader crash moves every server to a new epoch with primary order
held, a stale server's epoch is refused, the checker catches the broken variant and forged
deliveries, and random fault schedules keep primary and total order."""

from __future__ import annotations

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims.consensus.trials import run_events
from sims.core.scenario import Scenario

OPS = [{"t": 1.0 + 0.05 * k, "kind": "op", "id": k + 1} for k in range(60)]


def _with(*faults):
    return sorted([*OPS, *faults], key=lambda e: e["t"])


def test_zxids_count_within_an_epoch_and_every_server_delivers_all():
    panel = run_events("zab", OPS, 5.0)
    m = panel.metrics()
    assert m["committed"] == 60 and m["safety_violations"] == 0 and m["max_term"] == 1
    for node in panel.net.nodes:
        assert [zxid for zxid, _ in node.history] == [(1, k) for k in range(1, 61)]
        assert node.commit == 60


def test_a_leader_crash_starts_epoch_2_and_the_old_leader_rejoins_with_its_history():
    crash = {"t": 2.0, "kind": "fault", "fault": "crash", "node": "leader", "mark": "old"}
    back = {"t": 3.0, "kind": "fault", "fault": "restart", "node": "old", "durable": True}
    panel = run_events("zab", _with(crash, back), 5.0)
    m = panel.metrics()
    assert m["committed"] == 60 and m["safety_violations"] == 0 and m["leader_changes"] == 1
    first = panel.net.nodes[0].history
    assert first[-1][0][0] == 2  # the last transactions carry epoch 2
    for node in panel.net.nodes:
        assert node.current_epoch == 2 and node.history == first and node.commit == 60
        node.check_invariants()


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_preset_changes_epoch_with_primary_order_held_and_the_broken_sync_loses_it(seed):
    sc = Scenario("consensus-zab-leader-crash", seed=seed)
    sc.advance(sc.duration)
    m = sc.metrics()
    assert m["zab"]["safety_violations"] == 0 and m["zab"]["leader_changes"] == 1 and m["zab"]["max_term"] == 2
    assert m["zab"]["committed"] >= m["zab"]["ops"] - 1
    broken = sc.panels["zab_broken_sync"].checker.violations
    assert broken and all(k.startswith("total_order:") for k in broken), broken


def test_the_checker_sees_an_epoch_delivered_out_of_order_and_a_different_transaction():
    panel = run_events("zab", OPS[:3], 2.0)
    checker, nodes = panel.checker, panel.net.nodes
    assert checker.chosen[3] == ((1, 3), 3) and not checker.violations
    node = nodes[0]
    node.history.append(((0, 9), 99))  # an epoch-0 transaction after epoch 1's
    node.commit += 1
    checker.check(nodes, 2.0)
    assert "primary_order:4" in checker.violations
    other = nodes[1]
    other.history[0] = ((1, 1), 42)  # a NEWLEADER that rewrote a delivered position
    other.current_epoch += 1
    checker.check(nodes, 2.0)
    assert "total_order:1" in checker.violations


@st.composite
def schedules(draw):
    """Crashes (of any server or the leader), durable restarts, partitions, heals, lossy links and
    client transactions over a few seconds, on five servers."""
    n = 5
    events, t, crashed = [], 0.2, set()
    for _ in range(draw(st.integers(3, 16))):
        t += draw(st.sampled_from([0.005, 0.02, 0.1, 0.3, 0.6]))
        kind = draw(st.sampled_from(["op", "op", "crash", "restart", "partition", "heal", "link", "leader"]))
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
        elif kind == "link":
            ev |= {"fault": "link", "loss": draw(st.sampled_from([0.0, 0.1, 0.4])), "duplicate": 0.1, "reorder": 0.2}
        else:
            ev |= {"fault": "crash", "node": "leader", "mark": f"c{len(events)}"}
        events.append(ev)
    return events, t + 1.0, draw(st.integers(0, 2**32))


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedules())
def test_zab_keeps_primary_and_total_order_on_random_fault_schedules(case):
    events, duration, seed = case
    panel = run_events("zab", events, duration, seed=seed)
    assert not panel.checker.violations, (panel.checker.violations, events)
    panel.check_invariants()
