"""sims.net: delivery order, faults, determinism and checkpoint copies."""

from __future__ import annotations

import copy
import random

import pytest

from sims.net import Delay, Network, Node


class Echo(Node):
    """Pings every other node each 10 ms; records what it hears."""

    def __init__(self, i: int, n: int) -> None:
        super().__init__(i, n)
        self.heard: list[tuple[float, int, int]] = []
        self.seq = 0

    def on_start(self, now: float) -> None:
        self.set_timer(0.01, "tick")

    def on_timer(self, name: str, now: float) -> None:
        self.seq += 1
        self.broadcast(self.seq)
        self.set_timer(0.01, "tick")

    def on_message(self, src: int, msg, now: float) -> None:
        self.heard.append((now, src, msg))


def make(n=3, seed=1, **kw) -> Network:
    net = Network([Echo(i, n) for i in range(n)], random.Random(seed), **kw)
    net.start()
    return net


def test_messages_arrive_after_their_delay_in_time_order():
    net = make(delay=Delay("uniform", lo=0.001, hi=0.004))
    seen = []
    net.advance(0.1, after=lambda t: seen.append(t))
    assert seen == sorted(seen) and len(seen) > 20
    for node in net.nodes:
        assert node.heard and all(0.01 < t for t, _, _ in node.heard)
    assert net.sent == net.delivered + len(net.in_flight(0.1))


def test_same_seed_same_run_and_checkpoint_copy_continues_identically():
    a = make(seed=5, loss=0.1, duplicate=0.1, reorder=0.2)
    a.advance(0.05)
    snap = copy.deepcopy(a)
    a.advance(0.2)
    snap.advance(0.2)
    assert [nd.heard for nd in a.nodes] == [nd.heard for nd in snap.nodes]
    assert snap.nodes[0].net is snap and snap.nodes[0].net is not a
    b = make(seed=5, loss=0.1, duplicate=0.1, reorder=0.2)
    b.advance(0.2)
    assert [nd.heard for nd in a.nodes] == [nd.heard for nd in b.nodes]
    assert a.duplicated > 0 and a.dropped > 0


def test_partition_cuts_messages_between_groups_and_heal_restores():
    net = make(n=5)
    net.apply({"fault": "partition", "groups": [[0, 1]]}, 0.0)
    net.advance(0.1)
    for i in (0, 1):
        assert {s for _, s, _ in net.nodes[i].heard} == {1 - i}
    for i in (2, 3, 4):
        assert {s for _, s, _ in net.nodes[i].heard} == {2, 3, 4} - {i}
    net.apply({"fault": "heal"}, 0.1)
    net.advance(0.2)
    assert {s for t, s, _ in net.nodes[0].heard if t > 0.12} == {1, 2, 3, 4}


def test_crash_silences_a_node_and_voids_its_timers_restart_boots_it():
    net = make()
    net.advance(0.05)
    net.apply({"fault": "crash", "node": 1}, 0.05)
    before = len(net.nodes[1].heard)
    net.advance(0.1)
    assert len(net.nodes[1].heard) == before
    assert all(s != 1 for t, s, _ in net.nodes[0].heard if t > 0.06)
    net.apply({"fault": "restart", "node": 1, "durable": False}, 0.1)
    net.advance(0.2)
    assert any(s == 1 for t, s, _ in net.nodes[0].heard if t > 0.11)


def test_slow_node_and_drift():
    net = make(delay=Delay("fixed", mean=0.002))
    net.apply({"fault": "slow", "node": 2, "extra": 0.05}, 0.0)
    net.apply({"fault": "drift", "node": 0, "rate": 2.0}, 0.0)
    net.advance(0.2)
    assert all(t >= 0.06 for t, s, _ in net.nodes[1].heard if s == 2)
    assert net.nodes[0].seq > 1.5 * net.nodes[1].seq  # its 10 ms ticks take 5 ms of real time
    assert net.local_time(0, 0.2) == pytest.approx(0.4)


def test_unknown_fault_and_delay_kind_are_value_errors():
    with pytest.raises(ValueError, match="unknown fault"):
        make().apply({"fault": "meteor"}, 0.0)
    with pytest.raises(ValueError, match="unknown delay kind"):
        Delay("gaussian")
