"""Page replacement: every registered policy against reference models and its own invariants, OPT
against every policy, each preset's claim, and ``contention trace paging``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sims.core import api, registry
from sims.core.panel import PanelContext
from sims.paging.panel import PagingPanel

ROOT = Path(__file__).resolve().parents[1]

POLICIES = sorted(registry.policies("paging"))
BELADY = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]
traces = st.lists(st.integers(0, 9), max_size=120)
frames = st.integers(1, 6)


def stream(pages: list[int]) -> list[dict]:
    return [{"t": float(i), "kind": "ref", "key": p} for i, p in enumerate(pages, 1)]


def panel(policy: str, events: list[dict], k: int) -> PagingPanel:
    ctx = PanelContext(seed=1, duration=float(len(events) + 1), events=events, panel_name=policy)
    return PagingPanel(policy, {"frames": k}, ctx, registry.get_policy("paging", policy))


def faults_fast(policy: str, pages: list[int], k: int) -> int:
    """Through ``feed``: the tight loops the scenario uses."""
    events = stream(pages)
    p = panel(policy, events, k)
    p.feed(events, 0, len(events), float(len(events)))
    p.check_invariants()
    return p.metrics()["faults"]


def lru_model(pages: list[int], k: int) -> int:
    mem: list[int] = []  # least recently used first
    faults = 0
    for p in pages:
        if p in mem:
            mem.remove(p)
        else:
            faults += 1
            if len(mem) == k:
                mem.pop(0)
        mem.append(p)
    return faults


def fifo_model(pages: list[int], k: int) -> int:
    mem: list[int] = []  # loaded longest ago first
    faults = 0
    for p in pages:
        if p not in mem:
            faults += 1
            if len(mem) == k:
                mem.pop(0)
            mem.append(p)
    return faults


def opt_model(pages: list[int], k: int) -> int:
    """Bélády by brute force: on a fault with memory full, evict the page whose next use is
    farthest (never used again counts as farthest)."""
    mem: list[int] = []
    faults = 0
    for i, p in enumerate(pages):
        if p in mem:
            continue
        faults += 1
        if len(mem) == k:
            rest = pages[i + 1 :]
            mem.remove(max(mem, key=lambda q: rest.index(q) if q in rest else len(rest)))
        mem.append(p)
    return faults


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=examples(60), deadline=None)
@given(pages=traces, k=frames)
def test_capacity_and_invariants_after_every_reference(policy, pages, k):
    events = stream(pages)
    p = panel(policy, events, k)
    for i in range(len(events)):
        p.feed(events, i, i + 1, events[i]["t"])
        p.check_invariants()
        assert len(p.policy.resident()) <= k
        assert pages[i] in p.policy.resident()  # the page just referenced is in memory
    assert p.metrics()["refs"] == len(pages)
    # one feed over the whole stream gives the same count as one reference at a time
    assert faults_fast(policy, pages, k) == p.metrics()["faults"]


@settings(max_examples=examples(150), deadline=None)
@given(pages=traces, k=frames)
@example(pages=BELADY, k=3)
@example(pages=BELADY, k=4)
def test_lru_fifo_opt_equal_reference_models(pages, k):
    assert faults_fast("lru", pages, k) == lru_model(pages, k)
    assert faults_fast("fifo", pages, k) == fifo_model(pages, k)
    assert faults_fast("opt", pages, k) == opt_model(pages, k)


@settings(max_examples=examples(150), deadline=None)
@given(pages=traces, k=frames)
def test_opt_never_faults_more_than_any_policy(pages, k):
    best = faults_fast("opt", pages, k)
    for policy in POLICIES:
        assert best <= faults_fast(policy, pages, k), policy


@settings(max_examples=examples(100), deadline=None)
@given(
    items=st.lists(st.one_of(st.integers(0, 9), st.tuples(st.integers(0, 12), st.integers(0, 4))), max_size=60),
    k=frames,
)
def test_opt_sees_scans_in_the_stream(items, k):
    """A scan event in the stream is part of OPT's look-ahead: OPT still equals the brute-force
    model on the expanded reference string, and every policy counts the scan's references."""
    events, pages = [], []
    for i, it in enumerate(items, 1):
        if isinstance(it, tuple):
            events.append({"t": float(i), "kind": "scan", "start": it[0], "length": it[1]})
            pages.extend(range(it[0], it[0] + it[1]))
        else:
            events.append({"t": float(i), "kind": "ref", "key": it})
            pages.append(it)
    for policy in POLICIES:
        p = panel(policy, events, k)
        p.feed(events, 0, len(events), float(len(events)))
        p.check_invariants()
        assert p.metrics()["refs"] == len(pages)
        if policy in ("opt", "lru", "fifo"):
            model = {"opt": opt_model, "lru": lru_model, "fifo": fifo_model}[policy]
            assert p.metrics()["faults"] == model(pages, k), policy


def test_opt_evicts_the_page_used_farthest_ahead():
    # with 2 frames at the reference to 3: page 1 is used next at position 4, page 2 never again
    events = stream([1, 2, 3, 1, 3])
    p = panel("opt", events, 2)
    p.feed(events, 0, 3, 3.0)
    assert sorted(p.policy.resident()) == [1, 3]


def test_scan_action_touches_pages_and_respects_capacity():
    pages = [1, 2, 3, 1, 2, 3] * 5
    events = stream(pages)
    events.insert(10, {"t": 10.0, "kind": "scan", "start": 100, "length": 5})
    for policy in POLICIES:
        p = panel(policy, events, 3)
        p.feed(events, 0, len(events), 40.0)
        p.check_invariants()
        assert p.metrics()["refs"] == len(pages) + 5
        p.on_event({"t": 40.0, "kind": "scan", "start": 200, "length": 4})
        p.check_invariants()
        assert p.metrics()["refs"] == len(pages) + 9
        assert set(p.policy.resident()) <= {1, 2, 3, 100, 101, 102, 103, 104, 200, 201, 202, 203}
    with pytest.raises(ValueError, match="'length'"):
        p.on_event({"t": 41.0, "kind": "scan", "start": 1, "length": "many"})


def test_random_policy_is_seeded_per_panel():
    pages = [i % 7 for i in range(200)]
    assert faults_fast("random", pages, 4) == faults_fast("random", pages, 4)


def test_unknown_policy_and_bad_frames():
    with pytest.raises(ValueError, match="valid: aging, clock, fifo"):
        registry.get_policy("paging", "nope")
    with pytest.raises(ValueError, match="frames"):
        panel("lru", stream([1]), 0)


# -- the presets show what their titles claim ----------------------------------------------------
def test_belady_preset_fifo_anomaly():
    m = api.run("paging-belady")["panels"]
    faults = {name: v["faults"] for name, v in m.items()}
    assert faults == {"fifo-3": 9, "fifo-4": 10, "lru-3": 10, "lru-4": 8, "opt-3": 7, "opt-4": 6}


def test_loop_preset_lru_faults_on_every_reference_opt_does_not():
    m = api.run("paging-loop")["panels"]
    for policy in ("lru", "fifo", "clock"):
        assert m[policy]["fault_rate"] == 1.0, policy
    assert m["opt"]["fault_rate"] < 0.02
    assert all(m["opt"]["faults"] <= v["faults"] for v in m.values())


def test_locality_preset_phase_faults_and_lfu_clinging():
    r = api.run("paging-locality")
    m = r["panels"]
    phases = int(r["duration"] * 10000 / 2000)
    for policy in ("lru", "fifo", "clock", "opt"):
        # a good policy faults about once per working-set page per phase, hardly anywhere else
        assert m[policy]["faults"] < 2.5 * 40 * phases, policy
    assert m["lfu"]["fault_rate"] > 0.5 > 20 * m["lru"]["fault_rate"]
    assert all(m["opt"]["faults"] <= v["faults"] for v in m.values())


# -- contention trace paging ---------------------------------------------------------------------
def cli(*args):
    return subprocess.run([sys.executable, "-m", "sims", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_trace_paging_belady(tmp_path):
    f = tmp_path / "refs.txt"
    f.write_text("1 2 3 4\n1 2 5\n# a comment\n1 2 3 4 5\n")
    for k, faults in ((3, 9), (4, 10)):
        out = cli("trace", "paging", "--policy", "fifo", "--frames", str(k), "--trace", str(f), "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == {"policy": "fifo", "faults": faults, "hits": 12 - faults}
    out = cli("trace", "paging", "--policy", "opt", "--frames", "3", "--trace", str(f))
    assert out.returncode == 0 and "faults: 7" in out.stdout


def test_trace_paging_malformed_line_exits_2_with_file_and_line(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_text("1 2 3\n4 five 6\n")
    out = cli("trace", "paging", "--policy", "lru", "--frames", "2", "--trace", str(f))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{f}:2:" in lines[0] and "'five'" in lines[0]
    out = cli("trace", "paging", "--policy", "belady", "--frames", "2", "--trace", str(f))
    assert out.returncode == 2 and "valid:" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_views_are_json_and_checkpoints_share_the_stream():
    import copy

    from sims.core.scenario import Scenario

    sc = Scenario("paging-locality", duration=2.0, checkpoint_every=1.0)
    sc.run()
    views = json.loads(json.dumps(sc.views()))
    for name, v in views.items():
        assert v["kind"] == "frames" and len(v["resident"]) <= v["frames"] and v["recent"], name
    opt = sc.panels["opt"]
    clone = copy.deepcopy(opt)
    assert clone.policy.ahead is opt.policy.ahead and clone.scans is opt.scans
    before = sc.metrics()
    sc.seek(0.5)
    sc.advance(2.0)
    assert sc.metrics() == before


@pytest.mark.parametrize("name", ["paging-loop", "paging-locality"])
def test_preset_buttons_work_on_every_panel(name):
    from sims.core.scenario import Scenario

    sc = Scenario(name, duration=1.0).run()
    for action in sc.preset.actions:
        for panel in sc.panels.values():
            before = panel.metrics()["refs"]
            panel.on_event({"t": 1.0, **action["event"]})
            panel.check_invariants()
            assert panel.metrics()["refs"] == before + action["event"]["length"]
