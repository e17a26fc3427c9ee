"""The workload's own moments (``sims.core.stream.Mark``): each generator marks where it starts a
phase, the marks sit exactly there in the stream it built (several seeds), and they are not
events: the stream, its hash and every metric are the same with or without them."""

from __future__ import annotations

import pytest

from sims.core import presets, stream
from sims.core.scenario import Scenario
from web.pyodide import bridge

SEEDS = range(1, 6)
SCAN_BASE = 1_000_000  # scan_mix's cold keys start here


def _marks(name: str, seed: int, **workload) -> tuple[list[dict], list[dict], presets.Preset]:
    p = presets.load(name)
    if workload:
        p = p.with_overrides({f"workload.{k}": v for k, v in workload.items()})
    sc = Scenario(p, seed)
    return sc.marks(), sc.run_events(), p


@pytest.mark.parametrize("seed", SEEDS)
def test_a_scan_mark_sits_at_the_first_key_of_every_scan(seed):
    marks, events, p = _marks("cache-scan", seed)
    starts = [
        ev["t"]
        for i, ev in enumerate(events)
        if ev["key"] >= SCAN_BASE and (i == 0 or events[i - 1]["key"] < SCAN_BASE)
    ]
    assert starts and [m["t"] for m in marks] == starts
    assert {m["label"] for m in marks} == {"scan starts"}
    refs, cycle = int(p.duration * p.workload["rate"]), p.workload["scan_every"] + p.workload["scan_len"]
    assert len(starts) == (refs - p.workload["scan_every"] - 1) // cycle + 1  # the scans begun by the end


def test_a_workload_without_scans_marks_none():
    marks, _, _ = _marks("cache-scan", 3, scan_len=0)
    assert marks == []


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("name", ["paging-locality", "cache-shift"])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_phase_mark_sits_where_the_working_set_moves(name, seed):
    marks, events, p = _marks(name, seed)
    w = p.workload
    times = [ev["t"] for ev in events]
    bounds = [0] + [times.index(m["t"]) for m in marks] + [len(events)]
    assert [m["label"] for m in marks] == [f"phase {k}: new working set" for k in range(2, len(marks) + 2)]
    for k, (lo, hi) in enumerate(zip(bounds, bounds[1:], strict=False)):
        keys = {ev["key"] for ev in events[lo:hi]}
        assert len(keys) <= w["ws"]  # one working set per phase
        if hi < len(events):
            assert hi - lo == w["phase_refs"], k
            nxt = {ev["key"] for ev in events[hi : hi + w["phase_refs"]]}
            assert nxt != keys  # and the next one is another
    assert len(marks) == (len(events) - 1) // w["phase_refs"]


@pytest.mark.parametrize("seed", SEEDS)
def test_burst_and_surge_marks_open_the_busy_stretches(seed):
    marks, events, p = _marks("ratelimit-burst", seed)
    w = p.workload
    assert [m["t"] for m in marks] == [k * w["period"] + w["burst_at"] for k in range(len(marks))]
    for m in [m for m in marks if m["t"] + w["burst_width"] <= p.duration]:  # burst_count requests follow
        inside = [ev for ev in events if m["t"] <= ev["t"] < m["t"] + w["burst_width"]]
        assert len(inside) >= w["burst_count"]
    marks, events, p = _marks("queues-bufferbloat", seed)
    w = p.workload
    assert marks == [
        {"t": w["surge_at"], "label": "surge starts"},
        {"t": w["surge_at"] + w["surge_for"], "label": "surge ends"},
    ]
    inside = sum(1 for ev in events if w["surge_at"] <= ev["t"] < w["surge_at"] + w["surge_for"])
    before = sum(1 for ev in events if w["surge_at"] - w["surge_for"] <= ev["t"] < w["surge_at"])
    assert inside > 2 * before


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", SEEDS)
def test_a_bursty_mark_opens_each_on_period(seed):
    marks, events, p = _marks("queues-priority-starvation", seed)
    w = p.workload
    assert {"t": w["stop_at"], "label": "arrivals stop"} in marks
    marks = [m for m in marks if m["label"] != "arrivals stop"]
    assert marks and all(m["label"] == "burst starts" for m in marks)
    assert marks != _marks("queues-priority-starvation", seed + 10)[0]  # drawn from the seed's stream
    rate = 0.0
    for m in marks:  # right after a mark the arrivals run at about rate_on, far above rate_off
        rate += sum(1 for ev in events if m["t"] <= ev["t"] < m["t"] + 0.1) / 0.1
    assert rate / len(marks) > (w["rate_on"] + w["rate_off"]) / 2


def test_ladder_steps_and_the_end_of_arrivals_are_marked():
    marks, _, p = _marks("routing-llmd-short", 7)
    assert marks == [{"t": float(t), "label": f"load → {r:g} req/s"} for t, r in p.workload["ladder"]]
    marks, events, p = _marks("queues-hockey-stick", 7)
    assert marks == [{"t": p.workload["stop_at"], "label": "arrivals stop"}]
    assert max(ev["t"] for ev in events) <= p.workload["stop_at"]


def test_marks_follow_the_run_duration_and_a_stream_given_in_has_none():
    p = presets.load("paging-locality")
    short = Scenario(p, 11, 1.0)
    assert short.marks() and all(m["t"] <= 1.0 for m in short.marks())
    assert short.marks() == [m for m in Scenario(p, 11).marks() if m["t"] <= 1.0]
    assert Scenario(p, 11, events=list(short.events)).marks() == []


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", presets.preset_names())
def test_marks_are_not_events(name):
    """The stream is the same list with or without collecting marks: no Mark reaches a panel, the
    hash cannot move (tests/test_golden.py holds the hashes and metrics themselves)."""
    p = presets.load(name)
    h = stream.horizon(p, min(p.duration, 30.0))
    found: list[dict] = []
    with_marks = stream.build(p, p.seed, h, found)
    assert with_marks == stream.build(p, p.seed, h)
    assert not any(isinstance(ev, stream.Mark) for ev in with_marks)
    assert all(isinstance(m["t"], float) and m["label"] for m in found)
    assert [m["t"] for m in found] == sorted(m["t"] for m in found)


def test_the_bridge_hands_the_marks_to_the_page():
    s = bridge.Session("cache-scan", seed=3)
    assert s.info()["marks"] == s.sc.marks() and s.info()["marks"]
