"""The page's search (web/pyodide/ops_search.py, run here in CPython as the worker runs it): the
workload it finds, loaded as the page loads it (the bridge's create with its overrides), plays
to exactly the numbers the search saw."""

from __future__ import annotations

import json

import pytest

from sims.core import presets
from web.pyodide import bridge


def call(op: str, **args):
    reply = json.loads(bridge.call(op, json.dumps(args)))
    assert reply["ok"], reply
    return reply["result"]


def _search(preset: str, until_positive: bool = False, **args) -> dict:
    state = call("search_start", id="t", preset=preset, **args)
    while not state["done"] and not (until_positive and (state["best_score"] or 0) > 0):
        state = call("search_run", id="t", n=300)
    result = call("search_result", id="t")
    call("search_drop", id="t")
    return result


@pytest.mark.parametrize(
    "preset, budget",
    [
        ("paging-belady", 3000),
        ("cache-scan", 60),
        ("hashing-hot-key", 60),
        ("hashing-add-node", 40),
        ("ratelimit-burst", 400),
    ],
)
def test_the_found_workload_plays_on_the_page_to_the_numbers_the_search_saw(preset, budget):
    result = _search(preset, budget=budget)
    session = bridge.Session(preset, None, None, result["overrides"])
    session.sc.run()
    played = session.sc.metrics()
    for name, metrics in result["panels"].items():
        assert played[name] == metrics
    assert session.sc.duration == session.base.duration  # the page's clock needs no change


def test_paging_belady_asks_for_an_anomaly_and_finds_one():
    info = call("search_info", preset="paging-belady")
    assert info["supported"] and info["objective"] == "faults(fifo, k+1) - faults(fifo, k)" and info["size"] == 3
    result = _search("paging-belady", until_positive=True, budget=info["budget"])
    assert result["best_score"] > 0
    assert result["panels"]["fifo-4"]["faults"] > result["panels"]["fifo-3"]["faults"]
    assert len(result["overrides"]["workload"]["keys"]) <= info["length"]
    # the page shows it shrunk: Bélády's 12 references, found in the page's 40
    assert result["shrunk"]["from"] == 40 and result["shrunk"]["to"] == 12 and result["shrunk"]["minimal"]
    assert len(result["overrides"]["workload"]["keys"]) == 12 and result["best_score"] == 1


def test_the_page_can_keep_what_it_found_unshrunk():
    call("search_start", id="u", preset="paging-belady", budget=3000)
    call("search_run", id="u", n=3000)
    result = call("search_result", id="u", shrink=False)
    call("search_drop", id="u")
    assert result["shrunk"] is None and len(result["overrides"]["workload"]["keys"]) > 12


def test_without_site_search_the_objective_reverses_the_claim():
    info = call("search_info", preset="cache-scan")  # claim: arc beats lru on hit_ratio
    assert info["objective"] == "hit_ratio(lru, 100) - hit_ratio(arc, 100)"


def test_unsupported_pages_and_bad_objectives_say_why():
    assert call("search_info", preset="alloc-shred")["supported"] is False
    reply = json.loads(
        bridge.call("search_start", json.dumps({"id": "x", "preset": "paging-belady", "objective": "faults(fifo, 7)"}))
    )
    assert not reply["ok"] and "no fifo panel of size 7" in reply["error"]
    reply = json.loads(
        bridge.call("search_start", json.dumps({"id": "x", "preset": "paging-belady", "objective": "faults(fifo"}))
    )
    assert not reply["ok"] and "column 12" in reply["error"]


def test_sliders_of_the_replaced_generator_are_dropped():
    result = _search("cache-scan", budget=5)
    assert [c["target"] for c in result["overrides"]["controls"]] == ["defaults.size"]


def test_figure8_page_finds_a_schedule_that_loses_a_commit_and_plays_it():
    """The consensus page's "Find a schedule that breaks this": the broken panel's safety checker
    counts, the shrunk schedule replaces the page's, and the page's run of it (from t = 0, to the
    schedule's own end) breaks raft_broken_commit exactly as the search scored it, and not Raft."""
    info = call("search_info", preset="consensus-figure8")
    assert info["supported"] and info["searches"] == "schedule"
    assert info["objective"] == "safety_violations(raft_broken_commit)" and info["size"] == 5
    result = _search("consensus-figure8")  # the search itself stops at the first violation
    assert result["best_score"] > 0 and result["evaluations"] == result["found_at"] < info["budget"]
    assert result["shrunk"]["minimal"] and result["steps"] == result["shrunk"]["to"] < result["shrunk"]["from"]
    assert result["why"] and all(line.startswith("raft_broken_commit: ") for line in result["why"])
    workload = result["overrides"]["workload"]
    assert workload["op_rate"] == 0 and workload["schedule"] == result["schedule"]
    session = bridge.Session("consensus-figure8", None, None, result["overrides"])
    assert session.sc.duration == result["overrides"]["duration"] != presets.load("consensus-figure8").duration
    session.sc.run()
    played = session.sc.metrics()
    assert played["raft_broken_commit"] == result["panels"]["raft_broken_commit"]
    assert played["raft_broken_commit"]["safety_violations"] == result["best_score"] > 0
    assert played["raft"]["safety_violations"] == 0


def test_consensus_pages_without_site_search_are_not_searched():
    info = call("search_info", preset="consensus-paxos")
    assert info["supported"] is False and "[site.search]" in info["reason"]


def test_gc_pause_page_finds_a_schedule_with_two_leaders_under_zookeeper_and_plays_it():
    """The election page's schedule search (pauses and clock skew among its steps): a schedule on
    which ZooKeeper's recipe has two leaders at once, replayed on the page to the same split-brain
    seconds, while the lease with its guard has none (the page's claim)."""
    info = call("search_info", preset="election-gc-pause")
    assert info["supported"] and info["searches"] == "schedule" and info["objective"] == "split_brain_s(zookeeper)"
    result = _search("election-gc-pause")
    assert result["best_score"] > 0 and result["evaluations"] == result["found_at"] < info["budget"]
    assert result["why"] == []  # no safety checker: the metric is the finding
    session = bridge.Session("election-gc-pause", None, None, result["overrides"])
    assert session.sc.duration == result["overrides"]["duration"]
    session.sc.run()
    played = session.sc.metrics()
    assert played["zookeeper"] == result["panels"]["zookeeper"]
    assert played["zookeeper"]["split_brain_s"] == result["best_score"] > 0
    assert played["lease"]["split_brain_s"] == 0


def test_failover_page_finds_a_schedule_that_loses_acked_writes_and_plays_it():
    """The replication page's schedule search: its faults come back as the preset's ``events``
    and its clients as the workload (the CLI's --out), so the page's async panel loses the same
    acknowledged writes the search counted, and sync none."""
    info = call("search_info", preset="replication-failover")
    assert info["objective"] == "lost_acked_writes(async)" and info["size"] == 3
    result = _search("replication-failover")
    assert result["best_score"] > 0 and result["evaluations"] == result["found_at"]
    assert result["overrides"]["events"] == result["schedule"] and result["schedule"]
    assert all(ev["kind"] == "fault" for ev in result["schedule"])
    session = bridge.Session("replication-failover", None, None, result["overrides"])
    assert session.sc.duration == result["overrides"]["duration"]
    session.sc.run()
    played = session.sc.metrics()
    assert played["async"] == result["panels"]["async"]
    assert played["async"]["lost_acked_writes"] == result["best_score"] > 0
    assert played["sync"]["lost_acked_writes"] == 0


@pytest.mark.parametrize(
    "preset, policy, metric",
    [
        ("consensus-three-phase-commit-split", "three_phase_commit", "safety_violations"),
        ("consensus-zab-leader-crash", "zab_broken_sync", "safety_violations"),
    ],
)
def test_more_protocol_pages_find_a_schedule_that_breaks_their_broken_panel(preset, policy, metric):
    """The other pages whose ``[site.search]`` names a broken policy: the search breaks it within
    the page's budget, and the page's run of the shrunk schedule counts what the search counted."""
    info = call("search_info", preset=preset)
    assert info["supported"] and info["searches"] == "schedule" and info["objective"] == f"{metric}({policy})"
    result = _search(preset)
    assert result["best_score"] > 0 and result["evaluations"] == result["found_at"] < info["budget"]
    assert result["shrunk"]["minimal"] and result["steps"] == result["shrunk"]["to"]
    session = bridge.Session(preset, None, None, result["overrides"])
    session.sc.run()
    played = session.sc.metrics()
    panel = next(p.name for p in session.base.panels if p.policy == policy)
    assert played[panel] == result["panels"][panel]
    assert played[panel][metric] == result["best_score"] > 0
