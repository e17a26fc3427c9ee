"""concurrent_mark_sweep: no reachable object is ever freed (checked at the end of every
concurrent cycle against a reachability computed from the program alone), the write barrier's
rescan, floating garbage and the concurrent mode failure on fixed small inputs, and the preset."""

from __future__ import annotations

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gc import Model

from sims.core import presets
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, resolve_params
from sims.core.scenario import Scenario
from sims.core.stream import generate
from sims.gc import make_panel
from sims.gc.collectors.concurrent import ConcurrentMarkSweep


def build(policy: str, heap: int, **extra):
    cls = get_policy("gc", policy)
    specs = dict(load_topic("gc").panel_params) | dict(cls.PARAMS)
    params = resolve_params(specs, {"heap": heap, **extra}, "test")
    return make_panel(policy, policy, params, PanelContext(0, 0.0, [], policy))


# Whole seconds for every cost, so the collector thread's credit is exact: with ``speed`` 1 each
# second of program time marks (or sweeps) exactly one object.
UNIT = {"mark_cost": 1.0, "sweep_cost": 1.0, "pause_cost": 0.0, "trigger": 0.25}


def alloc(t, i, size=64):
    return {"t": t, "kind": "alloc", "id": i, "size": size}


def ptr(t, a, b, kind="ptr"):
    return {"t": t, "kind": kind, "from": a, "to": b}


def drop(t, i):
    return {"t": t, "kind": "drop", "id": i}


def first_cycle(panel, evs):
    """Feed ``evs`` until the first concurrent cycle has swept its last object."""
    for k, ev in enumerate(evs):
        panel.feed(evs, k, k + 1, ev["t"])
        if panel.heap.full_collections:
            return panel
    raise AssertionError(f"the cycle is still in its {panel.collector.phase} phase")


def run(panel, evs):
    panel.feed(evs, 0, len(evs), evs[-1]["t"])
    panel.check_invariants()
    return panel


# The cycle starts on the fourth 64-byte allocation (25% of 1 KiB); the initial mark shades the
# roots 0, 2, 3 (3 s of pause at 1 s a root), and the thread pops grey objects last-in first.
START = [alloc(0, 0), alloc(0, 1), ptr(0, 0, 1), drop(0, 1), alloc(0, 2), alloc(0, 3)]


def lost_object(barrier: bool):
    """3 is marked black first; the program then stores 3 -> 1 and deletes 0 -> 1, the only
    path by which the thread would have reached 1."""
    p = build("concurrent_mark_sweep", 1024, **UNIT)
    if not barrier:
        p.collector.on_ptr = lambda src, dst: None
    evs = START + [alloc(4, 4, 8), ptr(4, 3, 1), ptr(4, 0, 1, "unptr")]
    evs += [alloc(t, 5 + t, 8) for t in range(5, 30)]  # the mark, the remark, the sweep
    return first_cycle(p, evs)


def test_the_barrier_rescans_a_black_object_that_was_given_a_white_one():
    p = lost_object(barrier=True)
    col = p.collector
    assert col.phase == "idle" and p.heap.full_collections == 1  # the cycle ran to its end
    assert 1 in p.heap.objects and p.heap.objects[3].refs == [1]
    p.check_invariants()
    without = lost_object(barrier=False)
    assert 1 not in without.heap.objects  # freed while 3 still points to it
    with pytest.raises(AssertionError, match="points to freed object 1"):
        without.check_invariants()


def test_an_object_that_dies_after_it_was_marked_floats_to_the_next_cycle():
    p = build("concurrent_mark_sweep", 1024, **UNIT)
    evs = START + [alloc(4, 4, 8), drop(4, 3)]  # 3 was blackened at t = 4, then let go
    evs += [alloc(t, 5 + t, 8) for t in range(5, 30)]
    first_cycle(p, evs)
    col = p.collector
    assert col.phase == "idle" and p.heap.full_collections == 1
    assert 3 in p.heap.objects and 3 not in p.heap.reachable()  # garbage, kept by this cycle
    assert p.metrics()["floating_garbage"] == 64 and col.floating_objects == 1
    col.collect(True)
    assert 3 not in p.heap.objects  # the next collection frees it


def test_a_heap_that_fills_mid_cycle_is_a_concurrent_mode_failure_with_a_full_pause():
    evs = START + [drop(0, 2), drop(0, 3)] + [alloc(4, 10 + i) for i in range(13)]
    cms = run(build("concurrent_mark_sweep", 1024, **UNIT, speed=0.01), evs)
    ms = run(build("mark_sweep", 1024, **{k: v for k, v in UNIT.items() if k != "trigger"}), evs)
    m = cms.metrics()
    assert m["concurrent_mode_failures"] == 1 and m["failed_allocs"] == 0
    initial, fallback = cms.heap.pause_len[:2]
    assert initial == 3.0  # the roots 0, 2, 3
    # the fallback marks and sweeps the whole heap in one pause: mark-sweep's own
    assert fallback == ms.heap.pause_len[-1] and fallback > 5 * initial
    assert {2, 3} & set(cms.heap.objects) == set()


def test_no_cycle_ever_frees_an_object_the_program_can_reach():
    """A busy linked workload, a cycle every few milliseconds: at the end of each, every object
    the program can reach (from its own events) is still there, with its pointers."""
    p = presets.load("gc-concurrent")
    wl = dict(p.workload) | {"link_p": 0.5, "cycle_p": 0.3, "rate": 20000.0}
    evs = list(generate("mutator", wl, 3, 0.4))
    panel = build("concurrent_mark_sweep", 1 << 19, trigger=0.2, speed=0.02)
    refs: dict = {}
    roots: dict = {}
    cycles = 0
    dirtied = 0
    for k, ev in enumerate(evs):
        panel.feed(evs, k, k + 1, ev["t"])
        kind = ev["kind"]
        if kind == "alloc":
            refs[ev["id"]], roots[ev["id"]] = [], None
        elif kind == "ptr":
            refs[ev["from"]].append(ev["to"])
        elif kind == "unptr":
            refs[ev["from"]].remove(ev["to"])
        else:
            del roots[ev["id"]]
        dirtied = max(dirtied, len(panel.collector.dirty))
        if panel.heap.full_collections > cycles:
            cycles = panel.heap.full_collections
            seen, stack = set(roots), list(roots)
            while stack:
                for r in refs[stack.pop()]:
                    if r not in seen:
                        seen.add(r)
                        stack.append(r)
            objects = panel.heap.objects
            for i in seen:
                assert i in objects and sorted(objects[i].refs) == sorted(refs[i]), f"cycle {cycles}: {i}"
            panel.check_invariants()
    assert panel.failed == [] and cycles >= 5 and dirtied > 0
    assert panel.collector.floating > 0


@settings(max_examples=examples(80), deadline=None)
@given(
    ops=st.lists(st.tuples(st.sampled_from("aaappuudd"), st.integers(0, 10**6), st.integers(0, 10**6)), max_size=200),
    speed=st.sampled_from([0.5, 1.0, 3.0]),
)
def test_random_pointer_stores_and_deletions_never_lose_a_reachable_object(ops, speed):
    """One operation a second, the thread marking or sweeping about one object per second: any
    interleaving of stores and deletions with the concurrent mark keeps every reachable object."""
    panel = build("concurrent_mark_sweep", 2048, **UNIT, speed=speed)
    model = Model()
    nxt = 0
    for t, (op, x, y) in enumerate(ops):
        held = sorted(model.reachable())
        ev = None
        if op == "a":
            ev = alloc(t, nxt, 8 + 8 * (x % 16))
            nxt += 1
        elif op == "p" and held:
            ev = ptr(t, held[x % len(held)], held[y % len(held)])
        elif op == "u" and held and model.refs[held[x % len(held)]]:
            src = held[x % len(held)]
            ev = ptr(t, src, model.refs[src][y % len(model.refs[src])], "unptr")
        elif op == "d" and model.roots:
            ev = drop(t, list(model.roots)[x % len(model.roots)])
        if ev is None:
            continue
        panel.feed([ev], 0, 1, float(t))
        kind = ev["kind"]
        if kind == "alloc":
            if ev["id"] in panel.heap.objects:
                model.refs[ev["id"]], model.roots[ev["id"]] = [], None
        elif kind == "ptr":
            model.refs[ev["from"]].append(ev["to"])
        elif kind == "unptr":
            model.refs[ev["from"]].remove(ev["to"])
        else:
            del model.roots[ev["id"]]
        objects = panel.heap.objects
        for i in model.reachable():
            assert i in objects and sorted(objects[i].refs) == sorted(model.refs[i]), f"{i} lost at t = {t}"
        panel.check_invariants()


def test_preset_late_start_fails_over_to_mark_sweeps_pause():
    p = presets.load("gc-concurrent")
    sc = Scenario(p)
    sc.advance(p.duration)
    sc.check_invariants()
    m = sc.metrics()
    assert m["late_start"]["concurrent_mode_failures"] >= 1
    assert m["late_start"]["pause_max"] == m["mark_sweep"]["pause_max"]
    assert m["concurrent_mark_sweep"]["concurrent_mode_failures"] == 0
    assert m["concurrent_mark_sweep"]["pause_max"] < m["mark_sweep"]["pause_max"] / 3
    assert m["concurrent_mark_sweep"]["floating_garbage"] > 0
    assert isinstance(sc.panels["late_start"].collector, ConcurrentMarkSweep)
