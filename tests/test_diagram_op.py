"""The worker's space-time diagram (web/pyodide/ops_diagram.py): a replay of one consensus panel
of the page's own run, with its injected faults, drawing every message it sent."""

from __future__ import annotations

import json

from sims.core.scenario import Scenario
from web.pyodide import bridge


def _call(op: str, **args):
    r = json.loads(bridge.call(op, json.dumps(args)))
    return r["result"] if r["ok"] else r["error"]


def test_the_diagram_draws_every_message_the_live_panel_sent():
    _call("create", id="d1", preset="consensus-figure8")
    assert _call("diagram_info", id="d1")["panels"] == ["raft", "raft_broken_commit"]
    got = _call("diagram", id="d1", panel="raft_broken_commit", t=5.0)
    sc = Scenario("consensus-figure8")
    sc.advance(5.0)
    assert got["messages"] == sc.metrics()["raft_broken_commit"]["messages"] > 100
    assert got["svg"].count("data-msg=") == got["messages"] and got["svg"].startswith("<svg")


def test_an_injected_crash_is_in_the_picture_and_time_is_bounded():
    _call("create", id="d2", preset="consensus-leader-partition")
    _call("advance", id="d2", t=1.0)
    _call("inject", id="d2", action=0)  # crash the leader
    _call("advance", id="d2", t=2.0)
    drawn = _call("diagram", id="d2", panel="raft", t=2.0)["svg"]
    assert "crashed" in drawn  # the schedule's own fault comes at 3 s: this is the injected crash
    assert _call("diagram", id="d2", panel="raft", t=1e9)["t"] <= 20.0
    assert "cannot be drawn" in _call("diagram", id="d2", panel="nope")
    assert "play the simulation first" in _call("diagram", id="d2", panel="raft", t=0.0)


def test_pages_of_other_topics_have_nothing_to_draw():
    _call("create", id="d3", preset="cache-scan")
    assert _call("diagram_info", id="d3")["panels"] == []
