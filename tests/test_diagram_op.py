"""The worker's space-time diagram (web/pyodide/ops_diagram.py): a replay of one consensus, replication or election panel
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


def _fresh(preset: str, panel: str, t: float) -> dict:
    """What a session that never drew before returns at ``t``."""
    sid = f"fresh-{preset}-{panel}-{t}"
    _call("create", id=sid, preset=preset)
    got = _call("diagram", id=sid, panel=panel, t=t)
    _call("drop", id=sid)
    return got


def test_scrubbing_replication_and_election_pages_draws_what_a_fresh_replay_draws():
    for preset, panel in (("replication-failover", "async"), ("election-lease-drift", "lease_guard_5")):
        sid = f"scrub-{preset}"
        _call("create", id=sid, preset=preset)
        assert panel in _call("diagram_info", id=sid)["panels"]
        seen = []
        for t in (6.0, 2.5, 8.0):  # on, back, on again: one recording, cut or fed on
            got = _call("diagram", id=sid, panel=panel, t=t)
            assert got == _fresh(preset, panel, t)
            assert got["svg"].count("data-msg=") == got["messages"] > 0 and f'data-now="{t:g}"' in got["svg"]
            seen.append(got["messages"])
        assert seen[1] < seen[0] < seen[2]
        kept = bridge._session({"id": sid}).diagrams[panel][0]
        assert _call("diagram", id=sid, panel=panel, t=3.0) and bridge._session({"id": sid}).diagrams[panel][0] is kept


def test_a_fault_injected_before_the_recording_replays_it_from_the_start():
    _call("create", id="d4", preset="election-lease-drift")
    _call("advance", id="d4", t=3.0)
    before = _call("diagram", id="d4", panel="lease_guard_5", t=8.0)  # recorded ahead of the live run
    kept = bridge._session({"id": "d4"}).diagrams["lease_guard_5"][0]
    _call("inject", id="d4", action=1)  # cut the leader off at 3 s: before where the recording stands
    after = _call("diagram", id="d4", panel="lease_guard_5", t=8.0)
    assert bridge._session({"id": "d4"}).diagrams["lease_guard_5"][0] is not kept
    assert after["messages"] != before["messages"]
    sc = Scenario("election-lease-drift", events=bridge._session({"id": "d4"}).sc.events)
    sc.advance(8.0)
    assert after["messages"] == sc.metrics()["lease_guard_5"]["messages"]
