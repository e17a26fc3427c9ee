"""The page's adversary search in chromium (docs/search.md): on paging-belady, "Find a workload
that breaks this" finds a Bélády anomaly from a random start in the worker, loads it into the
page (and its URL), and the panels then show FIFO with 4 frames faulting more than with 3;
the copied link reproduces it."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest
from conftest import screenshot, sim_eval, wait_live

from web.pyodide import bridge

pytestmark = pytest.mark.browser


def _faults_at_end(page) -> dict:
    snap = sim_eval(page, "await sim.seek(sim.meta.duration); return await sim.snapshot();")
    return {name: m["faults"] for name, m in snap["panels"].items()}


def _search_and_wait(page, server, preset: str, label: str, objective: str | None = None) -> None:
    """Open the preset's page, press its search button (checking its label and, given, the
    objective it starts with), and wait until the search has found something."""
    page.goto(f"{server}play/{preset}/")
    wait_live(page)
    go = page.locator("[data-search-go]")
    go.wait_for(timeout=60_000)
    assert go.inner_text() == label
    if objective is not None:
        assert page.locator(".cs-search-objective").input_value() == objective
    go.click()
    page.wait_for_function(
        "() => ['found', 'none', 'error'].includes(document.querySelector('[data-search]').dataset.searchState)",
        timeout=240_000,
    )
    slot = page.locator("[data-search]")
    assert slot.get_attribute("data-search-state") == "found", slot.inner_text()


def test_the_button_finds_a_belady_anomaly_and_loads_it(page, server):
    objective = "faults(fifo, k+1) - faults(fifo, k)"
    _search_and_wait(page, server, "paging-belady", "Find a workload that breaks this", objective)
    wait_live(page)
    faults = _faults_at_end(page)
    assert faults["fifo-4"] > faults["fifo-3"], faults  # more frames, more faults
    screenshot(page, "search-belady")

    # the URL carries the found workload; the same search in CPython finds the same one
    page.wait_for_function("() => location.hash.includes('o.workload=')")
    frag = parse_qs(urlparse(page.url).fragment)
    workload = json.loads(frag["o.workload"][0])
    assert workload["kind"] == "sequence" and len(workload["keys"]) <= 40
    expected = json.loads(bridge.call("search_start", json.dumps({"id": "py", "preset": "paging-belady"})))
    assert expected["ok"]
    bridge.call("search_run", json.dumps({"id": "py", "n": 20_000}))
    result = json.loads(bridge.call("search_result", json.dumps({"id": "py"})))["result"]
    assert result["overrides"]["workload"] == workload

    # a fresh page from the link shows the same anomaly
    link = page.url
    other = page.context.new_page()
    other.goto(link)
    wait_live(other)
    assert _faults_at_end(other) == faults
    other.close()
    assert not page.errors, page.errors


def test_a_found_workload_takes_its_generators_sliders_and_story_away(page, server):
    # ratelimit-burst's "Requests per burst" slider drives the generator a found workload replaces:
    # moving it would change nothing (or fail), so it must go, and the watch-for text must say the
    # preset's story may not apply; back on the preset's own stream, both return
    page.goto(f"{server}play/ratelimit-burst/")
    wait_live(page)
    slider = "input[data-target='workload.burst_count']"
    assert page.locator(slider).count() == 1
    found = {"kind": "arrival_times", "times": [0.5 + 0.01 * i for i in range(20)]}
    sim_eval(page, "await sim.restart({workload: arg, controls: []});", found)
    wait_live(page)
    assert page.locator(slider).count() == 0
    assert "replaces the preset's own generator" in page.locator(".cs-watch").inner_text()
    sim_eval(page, "await sim.restart({});")
    wait_live(page)
    assert page.locator(slider).count() == 1
    assert "replaces" not in page.locator(".cs-watch").inner_text()
    assert not page.errors, page.errors


def test_the_button_finds_a_schedule_that_loses_a_commit_on_figure8(page, server):
    # consensus-figure8: "Find a schedule that breaks this" searches fault schedules for a safety
    # violation of raft_broken_commit, lists the shrunk schedule and what the checker caught, and
    # plays it from t = 0 to its own end: the broken panel loses a commit, Raft does not
    objective = "safety_violations(raft_broken_commit)"
    _search_and_wait(page, server, "consensus-figure8", "Find a schedule that breaks this", objective)
    steps = page.locator("[data-search-schedule] li").all_inner_texts()
    why = page.locator("[data-search-why] li").all_inner_texts()
    assert steps and all(s.startswith("t ") for s in steps), steps
    assert why and all(w.startswith("raft_broken_commit: ") for w in why), why
    wait_live(page)
    snap = sim_eval(page, "await sim.seek(sim.meta.duration); return await sim.snapshot();")
    violations = {name: m["safety_violations"] for name, m in snap["panels"].items()}
    assert violations["raft_broken_commit"] > 0 and violations["raft"] == 0, violations
    screenshot(page, "search-figure8")

    # the link carries the schedule and its duration; the same search in CPython finds it
    page.wait_for_function("() => location.hash.includes('o.workload=')")
    frag = parse_qs(urlparse(page.url).fragment)
    workload = json.loads(frag["o.workload"][0])
    assert workload["op_rate"] == 0 and len(workload["schedule"]) == len(steps)
    expected = json.loads(bridge.call("search_start", json.dumps({"id": "py8", "preset": "consensus-figure8"})))
    assert expected["ok"]
    bridge.call("search_run", json.dumps({"id": "py8", "n": 2_000}))
    result = json.loads(bridge.call("search_result", json.dumps({"id": "py8"})))["result"]
    bridge.call("search_drop", json.dumps({"id": "py8"}))
    assert result["overrides"]["workload"] == workload
    assert float(frag["o.duration"][0]) == result["overrides"]["duration"] == pytest.approx(snap["t"])
    assert violations["raft_broken_commit"] == result["best_score"]
    assert not page.errors, page.errors


@pytest.mark.parametrize(
    "preset, metric, broken, sound",
    [
        ("election-gc-pause", "split_brain_s", "zookeeper", "lease"),
        ("replication-failover", "lost_acked_writes", "async", "sync"),
    ],
)
def test_the_schedule_button_on_election_and_replication_pages(page, server, preset, metric, broken, sound):
    # the same button on the other schedule topics: the page plays what it found to the end,
    # the broken panel shows it and the claim's sound one does not; a fresh page from the link too
    _search_and_wait(page, server, preset, "Find a schedule that breaks this")
    assert page.locator("[data-search-schedule] li").count() > 0
    wait_live(page)
    end = "await sim.seek(sim.meta.duration); return await sim.snapshot();"
    snap = sim_eval(page, end)
    assert snap["panels"][broken][metric] > 0 and snap["panels"][sound][metric] == 0, snap["panels"]
    page.wait_for_function("() => location.hash.includes('o.duration=')")
    other = page.context.new_page()
    other.goto(page.url)
    wait_live(other)
    assert sim_eval(other, end)["panels"][broken][metric] == snap["panels"][broken][metric]
    other.close()
    assert not page.errors, page.errors
