"""The ``link`` fault's windows and single links (``sims.net``): loss, duplication and reordering
for a while (``until``) or on one direction of one link (``from``, ``to``); the setting in force
before comes back when the window ends, and a ``link`` without either still changes the whole
network for good."""

from __future__ import annotations

import random

import pytest

from sims import cli as cli_mod
from sims.core import presets
from sims.core.preset_schema import parse_preset
from sims.core.scenario import Scenario
from sims.net import Delay, Network, Node
from sims.net.refs import resolve_fault


class Sink(Node):
    def __init__(self, i: int, n: int) -> None:
        super().__init__(i, n)
        self.got: list[tuple] = []

    def on_message(self, src: int, msg, now: float) -> None:
        self.got.append((src, msg, round(now, 6)))


def _net(n: int = 2) -> Network:
    net = Network([Sink(i, n) for i in range(n)], random.Random(1), Delay("fixed", mean=0.01))
    net.start(0.0)
    return net


def _send_at(net: Network, t: float, src: int, dst: int, msg) -> None:
    net.advance(t)
    net.nodes[src].send(dst, msg)


def test_a_duplication_window_ends_at_until_and_the_old_setting_returns():
    net = _net()
    net.apply({"fault": "link", "duplicate": 1.0, "until": 1.0}, 0.0)
    _send_at(net, 0.5, 0, 1, "in")
    _send_at(net, 0.99, 0, 1, "last")
    _send_at(net, 1.0, 0, 1, "after")
    _send_at(net, 2.0, 0, 1, "later")
    net.advance(3.0)
    assert [m for _, m, _ in net.nodes[1].got] == ["in", "in", "last", "last", "after", "later"]
    assert net.duplicated == 2 and (net.loss, net.duplicate, net.reorder) == (0.0, 0.0, 0.0)
    assert net.windows == []


def test_a_link_without_until_lasts_for_good_as_before():
    net = _net()
    net.apply({"fault": "link", "duplicate": 1.0}, 0.0)
    _send_at(net, 5.0, 0, 1, "x")
    net.advance(6.0)
    assert net.duplicated == 1 and net.duplicate == 1.0


def test_a_reordering_window_holds_messages_back_only_inside_it():
    net = _net()
    net.apply({"fault": "link", "reorder": 1.0, "until": 1.0}, 0.0)
    _send_at(net, 0.5, 0, 1, "held")  # 0.01 + another 0.01
    _send_at(net, 1.5, 0, 1, "plain")
    net.advance(3.0)
    assert net.nodes[1].got == [(0, "held", 0.52), (0, "plain", 1.51)]


def test_one_direction_of_one_link_loses_while_the_rest_of_the_network_does_not():
    net = _net(3)
    net.apply({"fault": "link", "from": 0, "to": 1, "loss": 1.0, "until": 2.0}, 0.0)
    _send_at(net, 0.1, 0, 1, "0->1")
    net.nodes[1].send(0, "1->0")
    net.nodes[0].send(2, "0->2")
    _send_at(net, 2.5, 0, 1, "0->1 after")
    net.advance(3.0)
    assert [m for _, m, _ in net.nodes[1].got] == ["0->1 after"]
    assert [m for _, m, _ in net.nodes[0].got] == ["1->0"] and [m for _, m, _ in net.nodes[2].got] == ["0->2"]
    assert net.dropped == 1 and net.links == {}


def test_overlapping_windows_each_restore_the_fields_they_set():
    net = _net()
    net.apply({"fault": "link", "loss": 0.5}, 0.0)  # for good
    net.apply({"fault": "link", "duplicate": 0.3, "until": 2.0}, 1.0)
    assert (net.loss, net.duplicate) == (0.5, 0.3)
    net.apply({"fault": "link", "loss": 0.1, "until": 3.0}, 1.5)
    assert (net.loss, net.duplicate) == (0.1, 0.3)
    net.advance(2.5)
    net.nodes[0].send(1, "x")  # a send notices the first window has ended
    assert (net.loss, net.duplicate) == (0.1, 0.0)  # duplication back to 0; the loss window still on
    net.apply({"fault": "link", "reorder": 0.2}, 3.5)  # a later link fault closes the second one first
    assert (net.loss, net.duplicate, net.reorder) == (0.5, 0.0, 0.2) and net.windows == []


def test_link_ends_are_node_references():
    fault = resolve_fault({"fault": "link", "from": "leader", "to": "A+1", "loss": 1.0}, lambda: 2, {"A": 4}, 5)
    assert fault == {"fault": "link", "from": 2, "to": 0, "loss": 1.0}
    assert resolve_fault({"fault": "link", "loss": 0.5}, lambda: None, {}, 5) == {"fault": "link", "loss": 0.5}


def test_a_duplication_window_in_a_consensus_schedule_stops_duplicating_at_its_end():
    p = presets.load("consensus-oneway")
    wl = dict(p.raw["workload"])
    wl["schedule"] = [{"t": 1.0, "fault": "link", "duplicate": 0.5, "reorder": 0.5, "until": 2.0}]
    raw = dict(p.raw) | {"workload": wl, "panels": [{"name": "raft", "policy": "raft"}]}
    sc = Scenario(parse_preset(raw, p.path), duration=4.0)
    sc.advance(1.0)
    net = sc.panels["raft"].net
    assert net.duplicated == 0
    sc.advance(2.0)
    during = net.duplicated
    assert during > 10 and net.duplicate == 0.5
    sc.advance(4.0)
    assert net.duplicated == during and (net.duplicate, net.reorder) == (0.0, 0.0)
    assert net.sent > 2 * during and sc.metrics()["raft"]["safety_violations"] == 0


@pytest.mark.parametrize(
    "entry, says",
    [
        (
            '{ t = 1.0, fault = "link", loss = 0.5, until = 0.5 }',
            "workload.schedule[0].until: expected a time after t = 1",
        ),
        (
            '{ t = 1.0, fault = "link", from = 0, loss = 0.5 }',
            "workload.schedule[0].to: a link names both ends or neither",
        ),
        ('{ t = 1.0, fault = "link", from = 0, to = -2 }', "workload.schedule[0].to: expected a node number"),
    ],
)
def test_bad_link_entries_are_one_line_naming_the_field(tmp_path, capsys, entry, says):
    src = open(presets.load("consensus-oneway").path).read().replace('name = "consensus-oneway"', 'name = "bad"')
    head, rest = src.split("schedule = [", 1)
    src = head + "schedule = [\n  " + entry + ",\n" + rest.split("\n", 1)[1]
    f = tmp_path / "bad.toml"
    f.write_text(src)
    rc = cli_mod.main(["run", str(f), "--duration", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert says in err, err
