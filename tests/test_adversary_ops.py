"""The page's search (web/pyodide/ops_search.py, run here in CPython as the worker runs it): the
workload it finds, loaded as the page loads it (the bridge's create with its overrides), plays
to exactly the numbers the search saw."""

from __future__ import annotations

import json

import pytest

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
