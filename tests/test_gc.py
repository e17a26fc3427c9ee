"""The gc topic: the heap's invariants under every collector (Hypothesis, checked after every
operation and every collection), exact MMU against a brute-force oracle, the trace command
against an independent reachability model, and the presets' mechanisms."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims.core import presets
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, policies, resolve_params
from sims.core.scenario import Scenario
from sims.gc import make_panel
from sims.gc.collectors import COLLECTORS
from sims.gc.heap import FreeList
from sims.gc.mmu import mmu, mmu_brute
from sims.gc.trace import replay

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = [(c, {}) for c in COLLECTORS] + [
    ("refcount", {"backup": True}),
    ("generational", {"promote_after": 1, "nursery": 0.5}),
    ("incremental", {"trigger": 0.2, "slice_budget": 0.0002, "slice_every": 0.0}),
]


def build(policy: str, heap: int, **extra):
    cls = get_policy("gc", policy)
    specs = dict(load_topic("gc").panel_params) | dict(cls.PARAMS)
    params = resolve_params(specs, {"heap": heap, **extra}, "test")
    return make_panel(policy, policy, params, PanelContext(0, 0.0, [], policy))


def test_the_design_names_are_registered():
    assert set(COLLECTORS) <= set(policies("gc"))
    with pytest.raises(ValueError, match="unknown gc policy 'nope'; valid: concurrent_mark_sweep, copying"):
        get_policy("gc", "nope")


# -- invariants under every collector -------------------------------------------------------------
class Model:
    """The program's own graph: what the mutator holds and what points to what."""

    def __init__(self) -> None:
        self.refs: dict[int, list[int]] = {}
        self.roots: dict[int, None] = {}

    def reachable(self) -> set[int]:
        seen = set(self.roots)
        stack = list(self.roots)
        while stack:
            for r in self.refs[stack.pop()]:
                if r not in seen:
                    seen.add(r)
                    stack.append(r)
        return seen


def checked(panel, model: Model, plain_rc: bool):
    """Wrap the collector's collect so that every collection is checked against the model."""
    col = panel.collector
    inner = col.collect

    def collect(full: bool) -> bool:
        before = model.reachable()
        complete = inner(full)
        objects = panel.heap.objects
        missing = [i for i in before if i not in objects]
        assert not missing, f"reachable objects freed: {missing[:5]}"
        for i in before:
            assert sorted(objects[i].refs) == sorted(model.refs[i]), f"object {i}'s pointers changed"
        if complete and not plain_rc:
            extra = set(objects) - before
            assert not extra, f"unreachable objects survived a complete collection: {sorted(extra)[:5]}"
        panel.check_invariants()
        return complete

    col.collect = collect


OPS = st.lists(st.tuples(st.sampled_from("aaaappuddg"), st.integers(0, 10**6), st.integers(0, 10**6)), max_size=160)


@pytest.mark.parametrize("policy, extra", VARIANTS, ids=[f"{c}{'-' + '-'.join(e) if e else ''}" for c, e in VARIANTS])
@settings(max_examples=examples(60), deadline=None)
@given(ops=OPS, heap=st.sampled_from([512, 1024, 4096]))
def test_invariants_hold_after_every_operation_and_collection(policy, extra, ops, heap):
    panel = build(policy, heap, **extra)
    model = Model()
    plain_rc = policy == "refcount" and not extra.get("backup")
    checked(panel, model, plain_rc)
    nxt = 0
    for op, x, y in ops:
        held = sorted(model.reachable())
        ev = None
        if op == "a":
            ev = {"t": 0.0, "kind": "alloc", "id": nxt, "size": 8 + 8 * (x % 24)}
            nxt += 1
        elif op == "p" and held:
            ev = {"t": 0.0, "kind": "ptr", "from": held[x % len(held)], "to": held[y % len(held)]}
        elif op == "u" and held:
            src = held[x % len(held)]
            if model.refs[src]:
                ev = {"t": 0.0, "kind": "unptr", "from": src, "to": model.refs[src][y % len(model.refs[src])]}
        elif op == "d" and model.roots:
            roots = list(model.roots)
            ev = {"t": 0.0, "kind": "drop", "id": roots[x % len(roots)]}
        elif op == "g":
            panel.collector.collect(True)
        if ev is None:
            continue
        panel.feed([ev], 0, 1, 0.0)
        kind = ev["kind"]
        if kind == "alloc":
            if ev["id"] in panel.heap.objects:
                model.refs[ev["id"]] = []
                model.roots[ev["id"]] = None
        elif kind == "ptr":
            model.refs[ev["from"]].append(ev["to"])
        elif kind == "unptr":
            model.refs[ev["from"]].remove(ev["to"])
        else:
            del model.roots[ev["id"]]
        # the mutator never sees its objects change, whatever the collector does
        objects = panel.heap.objects
        for i in model.reachable():
            assert i in objects and sorted(objects[i].refs) == sorted(model.refs[i])
        panel.check_invariants()  # includes: every old-to-young pointer is remembered
    panel.collector.collect(True)
    left = set(panel.heap.objects)
    if not plain_rc:
        assert left == model.reachable()


def test_the_write_barrier_remembers_an_old_to_young_pointer():
    p = build("generational", 4096, promote_after=1)
    feed = [{"t": 0.0, "kind": "alloc", "id": 0, "size": 64}]
    p.feed(feed, 0, 1, 0.0)
    p.collector.collect(False)  # 0 survives once: promoted
    assert p.heap.objects[0].old and p.heap.promoted == 1
    evs = [
        {"t": 0.0, "kind": "alloc", "id": 1, "size": 64},
        {"t": 0.0, "kind": "ptr", "from": 0, "to": 1},
        {"t": 0.0, "kind": "drop", "id": 1},
    ]
    p.feed(evs, 0, 3, 0.0)
    assert 0 in p.collector.remembered
    p.collector.remembered.clear()
    with pytest.raises(AssertionError, match="missing from the remembered set"):
        p.collector.check_invariants()
    p.collector.remembered[0] = None
    p.collector.collect(False)  # 1 is reachable only through the old object: it survives
    assert 1 in p.heap.objects and p.heap.objects[1].old


def test_refcount_leaks_a_cycle_and_its_backup_frees_it():
    evs = [
        {"t": 0.0, "kind": "alloc", "id": 0, "size": 32},
        {"t": 0.0, "kind": "alloc", "id": 1, "size": 32},
        {"t": 0.0, "kind": "ptr", "from": 0, "to": 1},
        {"t": 0.0, "kind": "ptr", "from": 1, "to": 0},
        {"t": 0.0, "kind": "drop", "id": 0},
        {"t": 0.0, "kind": "drop", "id": 1},
    ]
    plain, backup = build("refcount", 1024), build("refcount", 1024, backup=True)
    for p in (plain, backup):
        p.feed(evs, 0, len(evs), 0.0)
        assert p.metrics()["leaked_bytes"] == 64
        p.collector.collect(True)
    assert plain.metrics()["leaked_bytes"] == 64 and set(plain.heap.objects) == {0, 1}
    assert backup.metrics()["leaked_bytes"] == 0 and not backup.heap.objects


def test_mark_sweep_refuses_a_block_the_free_bytes_could_hold_and_compaction_does_not():
    evs = []
    for i in range(16):  # 16 objects of 64 bytes fill 1 KiB; every other one dies
        evs.append({"t": 0.0, "kind": "alloc", "id": i, "size": 64})
    for i in range(0, 16, 2):
        evs.append({"t": 0.0, "kind": "drop", "id": i})
    evs.append({"t": 0.0, "kind": "alloc", "id": 99, "size": 256})
    out = {}
    for policy in ("mark_sweep", "mark_compact"):
        p = build(policy, 1024)
        p.feed(evs, 0, len(evs), 0.0)
        out[policy] = p
    ms = out["mark_sweep"]
    assert ms.failed == [99] and ms.collector.space.free == 512 and ms.metrics()["fragmentation"] == 0.875
    assert out["mark_compact"].failed == [] and 99 in out["mark_compact"].heap.objects


def test_first_fit_is_the_lowest_block_that_fits_and_frees_coalesce():
    fl = FreeList(0, 100)
    assert [fl.alloc(10) for _ in range(5)] == [0, 10, 20, 30, 40]
    fl.release(10, 10)
    fl.release(30, 10)
    assert fl.alloc(12) == 50 and fl.alloc(10) == 10
    fl.release(20, 10)
    fl.release(10, 10)
    assert fl.starts[:1] == [10] and fl.sizes[:1] == [30]  # 10..40 merged
    fl.check()
    big = FreeList(0, 10000)
    # blocks over 2040 bytes share class 255: sizes are still compared exactly
    assert big.alloc(3000) == 0 and big.alloc(7001) is None and big.alloc(7000) == 3000


# -- MMU -----------------------------------------------------------------------------------------
def test_mmu_of_one_pause():
    starts, lens = [0.050], [0.005]
    assert mmu(starts, lens, 0.1, 0.010) == pytest.approx(0.5)
    assert mmu(starts, lens, 0.1, 0.001) == 0.0
    assert mmu(starts, lens, 0.1, 0.1) == pytest.approx(0.95)
    assert mmu([], [], 1.0, 0.01) == 1.0


@settings(max_examples=examples(200), deadline=None)
@given(
    gaps=st.lists(st.tuples(st.integers(0, 40), st.integers(1, 20)), min_size=1, max_size=8),
    w=st.integers(1, 60),
    tail=st.integers(0, 40),
)
def test_mmu_is_exact_against_a_brute_force_scan(gaps, w, tail):
    """Integer milliseconds: the brute force's grid then hits every corner exactly."""
    starts, lens = [], []
    t = 0
    for gap, d in gaps:
        t += gap
        starts.append(t / 1000)
        lens.append(d / 1000)
        t += d
    end = (t + tail) / 1000
    if end <= w / 1000:
        return
    steps = t + tail - w  # one window start per millisecond
    assert mmu(starts, lens, end, w / 1000) == pytest.approx(mmu_brute(starts, lens, end, w / 1000, steps), abs=1e-9)


# -- the trace command ---------------------------------------------------------------------------
def cli(*args):
    return subprocess.run([sys.executable, "-m", "sims", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def _reference(lines: list[str]) -> tuple[set, set]:
    """(reachable ids, ids that plain reference counting leaks) computed from the program alone:
    the unreachable objects on a cycle, and everything they reach."""
    refs: dict[str, list[str]] = {}
    roots: set[str] = set()
    for line in lines:
        op, *args = line.split()
        if op == "alloc":
            refs[args[0]] = []
            roots.add(args[0])
        elif op == "ptr":
            refs[args[0]].append(args[1])
        elif op == "unptr":
            refs[args[0]].remove(args[1])
        elif op == "drop":
            roots.discard(args[0])

    def reach(start):
        seen, stack = set(start), list(start)
        while stack:
            for r in refs[stack.pop()]:
                if r not in seen:
                    seen.add(r)
                    stack.append(r)
        return seen

    live = reach(roots)
    # a cycle under RC: every count kept above 0 by the unreachable graph itself. Acyclic
    # unreachable garbage reaches 0 and is freed; objects reachable from a cycle keep a count.
    dead = set(refs) - live
    on_cycle = {x for x in dead if x in reach(refs[x])}
    leaked = reach(on_cycle) - live
    return live, leaked


def _random_trace(rng, n: int) -> list[str]:
    lines, roots, refs, nxt = [], [], {}, 0
    for _ in range(n):
        r = rng.random()
        if r < 0.35 or not roots:
            lines.append(f"alloc {nxt} {8 * rng.randint(1, 8)}")
            roots.append(str(nxt))
            refs[str(nxt)] = []
            nxt += 1
        elif r < 0.7:
            a, b = rng.choice(roots), rng.choice(roots)
            lines.append(f"ptr {a} {b}")
            refs[a].append(b)
        elif r < 0.8:
            a = rng.choice(roots)
            if refs[a]:
                b = rng.choice(refs[a])
                refs[a].remove(b)
                lines.append(f"unptr {a} {b}")
        elif r < 0.97:
            a = roots.pop(rng.randrange(len(roots)))
            lines.append(f"drop {a}")
        else:
            lines.append("gc")
    return lines


@pytest.mark.parametrize("seed", range(6))
def test_trace_live_is_the_reachable_set_and_refcount_leaks_exactly_the_cycles(tmp_path, seed):
    import random

    lines = _random_trace(random.Random(seed), 300)
    f = tmp_path / "t.txt"
    f.write_text("\n".join(lines) + "\n")
    live, leaked = _reference(lines)
    from sims.gc.trace import read

    events = read(f)
    for c in COLLECTORS:
        res = replay(c, 1 << 20, events)
        assert res["failed"] == []
        if c == "refcount":
            assert set(res["leaked"]) == leaked
            assert set(res["live"]) == live | leaked
        else:
            assert set(res["live"]) == live and res["leaked"] == [], c


def test_trace_cli_output_shape(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text(
        "# a cycle, a chain and a survivor\nalloc 1 64\nalloc 2 64\nptr 1 2\nptr 2 1\ndrop 1\ndrop 2\n"
        "alloc 3 32\nalloc 10 16\nptr 3 10\ndrop 10\ngc\nalloc 4 900\n"
    )
    out = cli("trace", "gc", "--collector", "refcount", "--heap", "1024", "--trace", str(f), "--json")
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert list(obj) == ["collector", "failed", "live", "leaked", "pauses", "peak_heap"]
    assert obj["leaked"] == ["1", "2"] and obj["live"] == ["1", "2", "3", "10"] and obj["failed"] == ["4"]
    out = cli("trace", "gc", "--collector", "mark_sweep", "--heap", "1024", "--trace", str(f), "--json")
    obj = json.loads(out.stdout)  # 976 bytes free after the gc, but in holes of 128 and 848
    assert obj["live"] == ["3", "10"] and obj["leaked"] == [] and obj["failed"] == ["4"]
    out = cli("trace", "gc", "--collector", "mark_compact", "--heap", "1024", "--trace", str(f), "--json")
    obj = json.loads(out.stdout)
    assert obj["live"] == ["3", "4", "10"] and obj["leaked"] == [] and obj["failed"] == []
    assert obj["peak_heap"] == 32 + 16 + 900 and all(p > 0 for p in obj["pauses"])


@pytest.mark.parametrize(
    "text, line",
    [
        ("alloc 1 64\nalloc 1 8\n", 2),
        ("alloc 1 0\n", 1),
        ("alloc 1 big\n", 1),
        ("alloc 1 8\nptr 1 2\n", 2),
        ("alloc 1 8\ndrop 1\nptr 1 1\n", 3),
        ("alloc 1 8\nalloc 2 8\nunptr 1 2\n", 3),
        ("alloc 1 8\ndrop 1\ndrop 1\n", 3),
        ("alloc 1 8\nfree 1\n", 2),
        ("gc now\n", 1),
    ],
)
def test_trace_cli_bad_lines_name_file_and_line(tmp_path, text, line):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    out = cli("trace", "gc", "--collector", "mark_sweep", "--heap", "4096", "--trace", str(f))
    assert out.returncode == 2 and f"{f}:{line}:" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_trace_cli_bad_flags_exit_2(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("alloc 1 8\n")
    for args in (["--collector", "nope", "--heap", "64"], ["--collector", "copying", "--heap", "0"]):
        out = cli("trace", "gc", *args, "--trace", str(f))
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr


# -- the presets' mechanisms ---------------------------------------------------------------------
def _run(name: str, at: float | None = None) -> dict:
    p = presets.load(name)
    sc = Scenario(p)
    sc.advance(at or p.site["claim"]["at"])
    sc.check_invariants()
    return sc


def test_young_die_generational_promotes_few_and_copies_little():
    sc = _run("gc-young-die")
    m = sc.metrics()
    g, mc = m["generational"], m["mark_compact"]
    assert g["promoted"] > 0 and g["pause_p50"] * 3 < mc["pause_p50"]
    assert g["collections"] > 3 * mc["collections"]


def test_fragmented_mark_sweep_fails_with_enough_free_bytes():
    sc = _run("gc-fragmented")
    ms = sc.panels["mark_sweep"]
    assert ms.failed and ms.metrics()["fragmentation"] > 0.9
    assert ms.collector.space.free >= presets.load("gc-fragmented").workload["large_size"]
    assert sc.metrics()["mark_compact"]["failed_allocs"] == 0


def test_incremental_pauses_stay_within_the_budget_but_cost_more_in_all():
    m = _run("gc-incremental").metrics()
    budget = next(s for s in presets.load("gc-incremental").panels if s.name == "incremental").params["slice_budget"]
    assert m["incremental"]["pause_max"] <= budget + 1e-12
    assert m["incremental"]["gc_time"] > m["mark_sweep"]["gc_time"]


def test_thrash_tight_heap_collects_all_the_time():
    m = _run("gc-thrash").metrics()
    assert m["tight"]["mmu_100ms"] < 0.15 and m["tight"]["mutator_utilization"] < 0.3
    assert m["tight"]["collections"] > 20 * m["roomy"]["collections"] and m["tight"]["failed_allocs"] == 0


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", ["gc-cycles", "gc-incremental", "gc-concurrent"])
def test_seeking_back_through_checkpoints_replays_the_same_run(name):
    p = presets.load(name)
    sc = Scenario(p, duration=2.0, checkpoint_every=0.5)  # four checkpoints; 4 s took minutes under load
    sc.advance(2.0)
    end = sc.metrics()
    sc.seek(1.3)
    fresh = Scenario(p, duration=2.0)
    fresh.advance(1.3)
    assert sc.metrics() == fresh.metrics() and sc.views() == fresh.views()
    sc.advance(2.0)
    assert sc.metrics() == end
    sc.check_invariants()


def test_view_strip_and_timeline():
    sc = _run("gc-incremental", at=3.0)
    v = sc.views()["incremental"]
    assert v["kind"] == "gc" and len(v["strip"]) == 240 and set(v["strip"]) <= set(".LGwgb")
    assert all(s + d <= v["t"] + 1e-9 for s, d in v["pauses"])
    json.dumps(sc.views())


WORDS = ["alloc", "ptr", "unptr", "drop", "gc", "1", "2", "3", "8", "-4", "0", "x" * 60, "é"]


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(st.sampled_from(WORDS), max_size=4), max_size=12))
def test_any_trace_gives_a_result_or_one_line_naming_file_and_line(capsys, tmp_path_factory, rows):
    from sims import cli as cli_mod

    f = tmp_path_factory.mktemp("t") / "t.txt"
    f.write_text("\n".join(" ".join(r) for r in rows) + "\n")
    rc = cli_mod.main(["trace", "gc", "--collector", "generational", "--heap", "256", "--trace", str(f), "--json"])
    out = capsys.readouterr()  # read (and so reset) after every example
    if rc == 0:
        assert set(json.loads(out.out)) == {"collector", "failed", "live", "leaked", "pauses", "peak_heap"}
    else:
        assert rc == 2 and len(out.err.strip().splitlines()) == 1 and f"{f}:" in out.err, out.err
        assert len(out.err) < 300 and "Traceback" not in out.err


def test_lag_is_how_far_pauses_pushed_the_program_behind():
    p = build("mark_sweep", 128)
    evs = [{"t": 0.001 * i, "kind": "alloc", "id": i, "size": 64} for i in range(2)]
    evs += [{"t": 0.002, "kind": "drop", "id": 0}, {"t": 0.002, "kind": "alloc", "id": 2, "size": 64}]
    p.feed(evs, 0, len(evs), 0.002)
    m = p.metrics()
    assert m["pauses"] == 1 and m["lag"] == pytest.approx(m["gc_time"])  # the pause came last
    p.advance(1.0)
    assert p.metrics()["lag"] == 0.0


SMOKE = """
import fs from "node:fs";
const { RENDERERS } = await import(process.argv[2] + "/web/static/js/render.js");
await import(process.argv[2] + "/web/static/js/topics/gc.js");
const views = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
let calls = 0, bad = 0;
const ctx = new Proxy({}, {
  get(t, k) {
    if (k === "measureText") return (s) => ({ width: s.length * 6 });
    if (k in t) return t[k];
    return (...a) => { calls++; for (const x of a) if (typeof x === "number" && !Number.isFinite(x)) bad++; };
  },
  set(t, k, v) { t[k] = v; return true; },
});
const theme = { good: "g", bad: "b", muted: "m", accent: "a", fg: "f", track: "t", palette: ["p"], keys: ["k"] };
for (const v of views) RENDERERS[v.kind](ctx, v, { w: 600, h: 260 }, theme);
console.log(JSON.stringify({ calls, bad }));
"""


def test_the_renderer_draws_every_gc_view_with_finite_coordinates(tmp_path):
    import shutil

    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed")
    views = []
    for name, t in (("gc-incremental", 2.05), ("gc-young-die", 2.0), ("gc-thrash", 1.0), ("gc-cycles", 0.0)):
        sc = Scenario(presets.load(name))
        sc.advance(t) if t else None
        views += list(sc.views().values())
    assert any(v["marking"] for v in views), "no view caught an incremental mark under way"
    (tmp_path / "views.json").write_text(json.dumps(views))
    (tmp_path / "smoke.mjs").write_text(SMOKE)
    r = subprocess.run(
        [node, str(tmp_path / "smoke.mjs"), "file://" + str(ROOT), str(tmp_path / "views.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["calls"] > 100 and out["bad"] == 0


@settings(max_examples=examples(100), deadline=None)
@given(
    gaps=st.lists(st.tuples(st.integers(0, 30), st.integers(1, 20)), max_size=20),
    reads=st.lists(st.integers(0, 400), max_size=6),
    w=st.sampled_from([1, 5, 10, 50]),
)
def test_mmu_read_as_the_run_goes_equals_a_fresh_evaluation(gaps, reads, w):
    """The running tracker folds final windows in once: read at any times, it agrees exactly."""
    from sims.gc.mmu import MMU, prefix

    starts, lens, t = [], [], 0
    for gap, d in gaps:
        t += gap
        starts.append(t / 1000)
        lens.append(d / 1000)
        t += d
    tracker = MMU(w / 1000)
    last = 0
    for r in sorted(reads) + [t + 50]:
        # a panel reads its metrics between pauses, as its clock goes: a reading inside a pause
        # waits for its end
        r = max(r, last)
        k = sum(1 for x in starts if x * 1000 < r)
        if k and (starts[k - 1] + lens[k - 1]) * 1000 > r:
            r = round((starts[k - 1] + lens[k - 1]) * 1000)
        end, last = r / 1000, r
        got = tracker.value(starts[:k], lens[:k], prefix(lens[:k]), end)
        assert got == mmu(starts[:k], lens[:k], end, w / 1000)


def test_a_full_nursery_of_survivors_is_promoted_not_refused():
    """Nothing died since the last major collection, yet a minor one makes room by promoting."""
    p = build("generational", 4096, nursery=0.25)  # two nursery halves of 512 bytes
    evs = [{"t": 0.0, "kind": "alloc", "id": i, "size": 64} for i in range(40)]
    p.feed(evs[:1], 0, 1, 0.0)
    p.collector.collect(True)
    p.clean = True  # as after an allocation that needed a complete collection
    p.feed(evs, 1, 40, 0.0)
    assert p.failed == [] and p.heap.promoted > 0
