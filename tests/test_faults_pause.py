"""The ``pause``/``resume`` and ``oneway`` faults of ``sims.net``."""

from __future__ import annotations

import random

import pytest

from sims.net import Delay, Network, Node
from sims.net.refs import resolve_fault


class Echo(Node):
    """Logs what it hears and every timer it fires, as (kind, what, when)."""

    def __init__(self, i: int, n: int) -> None:
        super().__init__(i, n)
        self.log: list[tuple] = []
        self.role = "follower"

    def on_message(self, src: int, msg, now: float) -> None:
        self.log.append(("msg", (src, msg), now))

    def on_timer(self, name: str, now: float) -> None:
        self.log.append(("timer", name, now))


def _net(n: int = 3) -> Network:
    net = Network([Echo(i, n) for i in range(n)], random.Random(1), Delay("fixed", mean=0.01))
    net.start(0.0)
    return net


def test_a_paused_node_takes_its_messages_and_overdue_timers_at_resume_in_the_order_they_came_due():
    net = _net()
    a, b = net.nodes[0], net.nodes[1]
    b.set_timer(0.5, "watch")
    b.set_timer(2.0, "later")
    net.apply({"fault": "pause", "node": 1}, 0.0)
    for k in range(3):  # arrive at 0.11, 0.31, 0.51 (fixed 10 ms delay)
        net.advance(0.1 + 0.2 * k)
        a.send(1, ("M", k))
    net.advance(1.0)
    assert b.log == [] and b.up and b.paused  # silent: nothing ran
    assert net.delivered == 0 and net.dropped == 0
    net.apply({"fault": "resume", "node": 1}, 1.0)
    net.advance(1.0)
    assert b.log == [
        ("msg", (0, ("M", 0)), 1.0),
        ("msg", (0, ("M", 1)), 1.0),
        ("timer", "watch", 1.0),  # due at 0.5, between the second message and the third
        ("msg", (0, ("M", 2)), 1.0),
    ]
    net.advance(3.0)
    assert b.log[-1] == ("timer", "later", 2.0)  # a timer due after the resume keeps its time
    assert net.delivered == 3


def test_a_paused_node_sends_nothing_its_peers_hear_it_silent_and_a_crash_drops_what_waited():
    net = _net()
    net.apply({"fault": "pause", "node": 2}, 0.0)
    net.nodes[0].send(2, ("M", 0))
    net.advance(0.5)
    net.apply({"fault": "crash", "node": 2}, 0.5)
    assert not net.nodes[2].paused and net.dropped == 1
    net.apply({"fault": "resume", "node": 2}, 0.6)  # not paused any more: nothing to do
    net.apply({"fault": "restart", "node": 2}, 0.7)
    net.advance(1.0)
    assert net.nodes[2].log == []


def test_oneway_drops_one_direction_only_and_heal_clears_it():
    net = _net()
    net.apply({"fault": "oneway", "from": 0, "to": 1}, 0.0)
    net.nodes[0].send(1, ("A->B",))
    net.nodes[1].send(0, ("B->A",))
    net.advance(0.5)
    assert net.nodes[1].log == [] and net.nodes[0].log == [("msg", (1, ("B->A",)), 0.01)]
    assert not net.can_reach(0, 1) and net.can_reach(1, 0) and net.dropped == 1
    net.apply({"fault": "heal"}, 0.5)
    net.nodes[0].send(1, ("again",))
    net.advance(1.0)
    assert net.nodes[1].log == [("msg", (0, ("again",)), 0.51)] and net.can_reach(0, 1)


def test_oneway_ends_are_node_references_and_unknown_faults_list_the_new_ones():
    marks = {"m0": 3}
    fault = resolve_fault({"fault": "oneway", "from": "leader", "to": "m0+1"}, lambda: 2, marks, 5)
    assert fault == {"fault": "oneway", "from": 2, "to": 4}
    assert resolve_fault({"fault": "oneway", "from": "leader", "to": 1}, lambda: None, marks, 5) is None
    with pytest.raises(ValueError, match="oneway, crash, restart, pause, resume"):
        _net().apply({"fault": "nap", "node": 0}, 0.0)
