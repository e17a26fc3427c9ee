"""Leader election: each algorithm's message count against a count worked out by hand (the bully's
(n − 1)² + n − 2 on a leader crash, the ring's 2n − 1 .. 3n − 2 with one initiator), the growth
of both with n fitted on n = 4, 8, 16, ZooKeeper's notifications per change (1, and n − 1 for the
herd), the lease's split-brain threshold at a clock rate of 1 − guard / lease, the invariants after
every event under random faults, and the presets' statements on seeds 1-5."""

from __future__ import annotations

import copy
import math
from random import Random

import pytest

from sims.core import presets, registry
from sims.core.panel import PanelContext
from sims.core.scenario import Scenario
from sims.election import PANEL_PARAMS
from sims.election.panel import ElectionPanel

POLICIES = sorted(registry.policies("election"))
SEEDS = range(1, 6)


def panel(policy: str, seed: int = 1, **params) -> ElectionPanel:
    full = {k: v.default for k, v in PANEL_PARAMS.items()} | params
    ctx = PanelContext(seed=seed, duration=60.0, events=[], panel_name=policy)
    return ElectionPanel(policy, full, ctx, registry.get_policy("election", policy)())


def fault(p: ElectionPanel, t: float, **ev) -> None:
    p.advance(t)
    p.on_event({"t": t, "kind": "fault", **ev})


def kinds_between(p: ElectionPanel, t: float, action) -> dict[str, int]:
    """Messages by kind sent from now to ``t`` after ``action(p)``, upkeep left out."""
    before = dict(p.net.kinds)
    action(p)
    p.advance(t)
    return {
        k: v - before.get(k, 0) for k, v in p.net.kinds.items() if k not in p.protocol.UPKEEP and v - before.get(k, 0)
    }


def failover_messages(policy: str, n: int, seed: int) -> int:
    p = panel(policy, seed, nodes=n)
    p.advance(2.0)
    sent = kinds_between(p, 5.0, lambda p: fault(p, 2.0, fault="crash", node=p.leaders[0]))
    assert len(p.leaders) == 1
    return sum(sent.values())


# -- bully ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [4, 8, 16])
def test_bully_failover_costs_what_the_hand_count_says(n):
    """Leader n − 1 crashes; nodes 0 .. n − 2 all notice. Node i sends ELECTION to the n − 1 − i
    above it, and the up ones among those (n − 2 − i) answer; n − 2 wins and tells the n − 2 below.
    n = 4: ELECTIONs 3 + 2 + 1 = 6, ANSWERs 2 + 1 = 3, COORDINATORs 2: 11."""
    p = panel("bully", nodes=n)
    p.advance(2.0)
    assert p.leaders == (n - 1,)
    sent = kinds_between(p, 5.0, lambda p: fault(p, 2.0, fault="crash", node=n - 1))
    assert sent == {
        "ELECTION": n * (n - 1) // 2,
        "ANSWER": (n - 1) * (n - 2) // 2,
        "COORDINATOR": n - 2,
    }
    assert sum(sent.values()) == (n - 1) ** 2 + n - 2
    assert p.leaders == (n - 2,)
    p.check_invariants()


def test_bully_restarted_highest_takes_over_at_once():
    p = panel("bully", nodes=5)
    fault(p, 2.0, fault="crash", node=4)
    p.advance(4.0)
    assert p.leaders == (3,)
    sent = kinds_between(p, 4.5, lambda p: fault(p, 4.0, fault="restart", node=4))
    assert p.leaders == (4,)
    assert sent == {"COORDINATOR": 4}  # no one above it: it wins without asking


# -- ring ----------------------------------------------------------------------------------------
def ring_round(n: int, initiator: int) -> dict[str, int]:
    """One initiator on a ring whose leader n − 1 has just crashed (the others never time out)."""
    p = panel("ring", nodes=n, detect=1000.0)
    p.advance(2.0)
    assert p.leaders == (n - 1,)
    fault(p, 2.0, fault="crash", node=n - 1)
    sent = kinds_between(p, 4.0, lambda p: p.net.nodes[initiator]._initiate())
    assert p.leaders == (n - 2,)
    p.check_invariants()
    return sent


@pytest.mark.parametrize("n", [4, 8, 16])
def test_ring_with_one_initiator_is_linear(n):
    """m = n − 1 nodes are up. Initiator n − 2 (the largest): its id goes round, m ELECTIONs plus
    one into the dead node, and ELECTED stops before it comes back, m − 1: 2m − 1 + 1. Initiator 0
    (the smallest): 0 .. n − 3 each replace the id, m − 1 hops to reach n − 2, then m + 1 more:
    3m − 2 + 1. Every delivered hop is acknowledged once."""
    m = n - 1
    best = ring_round(n, n - 2)
    assert best["ELECTION"] + best["ELECTED"] == 2 * m - 1 + 1
    assert best["ACK"] == 2 * m - 1  # the hop into the dead node is never acknowledged
    worst = ring_round(n, 0)
    assert worst["ELECTION"] + worst["ELECTED"] == 3 * m - 2 + 1
    assert worst["ACK"] == 3 * m - 2


def slope(ns: list[int], counts: list[float]) -> float:
    xs = [math.log(n) for n in ns]
    ys = [math.log(c) for c in counts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def test_bully_grows_with_n_squared_and_the_ring_with_n():
    """Failover messages averaged over seeds 1-5 at n = 4, 8, 16, fitted to c × n^k: the bully's
    k is 2.2 (its count is (n − 1)² + n − 2), the ring's about 1.3 (several nodes may notice before
    the first id reaches them, and the dead leader's hop costs a fixed timeout)."""
    ns = [4, 8, 16]
    bully = [sum(failover_messages("bully", n, s) for s in SEEDS) / 5 for n in ns]
    ring = [sum(failover_messages("ring", n, s) for s in SEEDS) / 5 for n in ns]
    assert 1.9 <= slope(ns, bully) <= 2.4, bully
    assert 0.8 <= slope(ns, ring) <= 1.5, ring


# -- ZooKeeper -----------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [3, 5, 8])
@pytest.mark.parametrize(("policy", "woken"), [("zookeeper", lambda n: 1), ("zookeeper_herd", lambda n: n - 1)])
def test_zookeeper_wakes_one_node_per_change_and_the_herd_n_minus_1(policy, woken, n):
    p = panel(policy, nodes=n)
    for k in range(3):
        t = 2.0 + 4.0 * k
        p.advance(t)
        leader = p.leaders[0]
        sent = kinds_between(p, t + 2.5, lambda p, t=t, leader=leader: fault(p, t, fault="crash", node=leader))
        assert sent["NOTIFY"] == woken(n)
        assert len(p.leaders) == 1 and p.leaders[0] != leader
        fault(p, t + 2.5, fault="restart", node=leader)  # its old session has expired by now
    m = p.metrics()
    assert m["notifications_per_change"] == woken(n)
    assert m["split_brain_s"] == 0.0


def test_zookeeper_leadership_passes_in_znode_order():
    p = panel("zookeeper", nodes=5)
    p.advance(2.0)
    order = [z[1] for z in p.net.nodes[5].znodes]
    assert p.leaders == (order[0],)
    fault(p, 2.0, fault="crash", node=order[0])
    p.advance(4.0)
    assert p.leaders == (order[1],)


# -- lease ---------------------------------------------------------------------------------------
def lease_split(rate: float, guard: float, seed: int = 1) -> float:
    """The leader's clock runs at ``rate`` from 2 s; at 4 s it is cut off alone until 9 s."""
    p = panel("lease", seed, lease=2.0, guard=guard)
    p.advance(2.0)
    leader = p.leaders[0]
    fault(p, 2.0, fault="drift", node=leader, rate=rate)
    fault(p, 4.0, fault="partition", groups=[[leader]])
    fault(p, 9.0, fault="heal")
    p.advance(12.0)
    p.check_invariants()
    return p.metrics()["split_brain_s"]


@pytest.mark.parametrize("guard", [0.2, 0.5])
def test_lease_split_brain_starts_where_drift_exceeds_the_guard(guard):
    """The holder believes in its lease for (lease − guard) / rate real seconds from its request;
    the service gives it away lease seconds after granting it: two leaders iff rate < 1 − guard / lease."""
    threshold = 1.0 - guard / 2.0
    for seed in SEEDS:
        for rate in (1.0, 1.02, threshold + 0.02, threshold + 0.005):
            assert lease_split(rate, guard, seed) == 0.0, (rate, seed)
        for rate in (threshold - 0.05, threshold - 0.1):
            assert lease_split(rate, guard, seed) > 0.0, (rate, seed)


def test_lease_drift_preset_within_guard_zero_beyond_positive():
    p = presets.load("election-lease-drift")
    for seed in SEEDS:
        sc = Scenario(p, seed)
        sc.advance(p.duration)
        m = sc.metrics()
        assert m["lease_guard_25"]["split_brain_s"] == 0.0
        assert m["lease_guard_5"]["split_brain_s"] > 0.3


# -- every policy --------------------------------------------------------------------------------
def random_faults(rng: Random, n: int, drift: bool) -> list[dict]:
    out, t = [], 1.0
    while t < 25.0:
        t += 0.2 + 2.0 * rng.random()
        what = rng.choice(["crash", "restart", "partition", "heal", "slow"] + (["drift"] if drift else []))
        ev = {"t": t, "kind": "fault", "fault": what}
        if what in ("crash", "restart", "slow", "drift"):
            ev["node"] = rng.randrange(n)
        if what == "slow":
            ev["extra"] = rng.choice([0.0, 0.05, 0.3])
        if what == "drift":
            ev["rate"] = rng.choice([0.9, 1.0, 1.1])
        if what == "partition":
            members = list(range(n))
            rng.shuffle(members)
            ev["groups"] = [members[: 1 + rng.randrange(n - 1)]]
        out.append(ev)
    return out


@pytest.mark.parametrize("policy", POLICIES)
def test_invariants_hold_after_every_event_under_random_faults(policy):
    for seed in range(3):
        p = panel(policy, seed, nodes=5)
        events = random_faults(Random(seed), 5, drift=True)

        def check(t: float, p: ElectionPanel = p) -> None:
            p._after(t)  # the panel's own hook, then the check
            p.check_invariants()

        for ev in events:
            p.net.advance(ev["t"], check)
            p.t = ev["t"]
            p.on_event(ev)
            p.check_invariants()
        p.advance(30.0)
        p.check_invariants()
        m = p.metrics()
        assert m["no_leader_s"] + m["split_brain_s"] <= 30.0 + 1e-9
        assert m["elections"] >= 1


@pytest.mark.parametrize("policy", ["zookeeper", "zookeeper_herd", "lease"])
def test_services_never_give_two_leaders_without_drift(policy):
    for seed in range(5):
        p = panel(policy, seed, nodes=5)
        for ev in random_faults(Random(100 + seed), 5, drift=False):
            p.advance(ev["t"])
            p.on_event(ev)
        p.advance(30.0)
        assert p.metrics()["max_leaders"] <= 1, seed


@pytest.mark.parametrize("policy", POLICIES)
def test_a_checkpoint_replays_exactly(policy):
    events = random_faults(Random(7), 5, drift=True)
    p = panel(policy, 3, nodes=5)
    for ev in events[:4]:
        p.advance(ev["t"])
        p.on_event(ev)
    twin = copy.deepcopy(p)
    for q in (p, twin):
        for ev in events[4:]:
            q.advance(ev["t"])
            q.on_event(ev)
        q.advance(30.0)
    assert p.metrics() == twin.metrics()
    assert p.view() == twin.view()


def test_partition_preset_bully_keeps_two_leaders_zookeeper_none():
    p = presets.load("election-partition")
    for seed in SEEDS:
        sc = Scenario(p, seed)
        sc.advance(p.duration)
        m = sc.metrics()
        assert m["zookeeper"]["split_brain_s"] == m["lease"]["split_brain_s"] == 0.0
        for name in ("bully", "ring", "raft_election"):
            assert m[name]["split_brain_s"] > 5.0, (seed, name)
        assert m["raft_check_quorum"]["split_brain_s"] < 0.1


def test_view_names_the_leaders_and_the_service():
    p = panel("zookeeper", nodes=4)
    p.advance(2.0)
    v = p.view()
    assert v["kind"] == "election" and v["n"] == 4 and len(v["nodes"]) == 5
    assert v["nodes"][4]["role"] == "service"
    assert v["leaders"] == list(p.leaders) and v["history"][-1][1] == list(p.leaders)


def test_diff_finds_where_two_elections_part_and_says_why():
    """``contention diff``'s recording mode: the decision at each fault is who led just before
    it. In election-partition bully and zookeeper part at the first fault (each has its own
    leader), and by the heal bully has two leaders (split brain) where zookeeper has one."""
    from sims.core.diverge import Diverge

    engine = Diverge("election-partition", "bully", "zookeeper")
    found = engine.take(20)
    assert [d.t for d in found] == [4.0, 10.0], found
    last = found[-1]
    assert last.a.target == "nodes 3, 4" and last.b.target == "node 3", (last.a, last.b)
    assert "split brain" in last.reason_a and last.reason_a.startswith("bully:"), last.reason_a
