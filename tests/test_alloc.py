"""Allocators: every registered policy keeps the heap whole (no overlap, no lost byte) after every
operation; the four fits match a plain list model exactly; each preset's claim; ``trace alloc``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.alloc import build_policy
from sims.alloc.panel import AllocPanel
from sims.core import api, registry, stream
from sims.core.panel import PanelContext
from sims.core.presets import load

ROOT = Path(__file__).resolve().parents[1]

POLICIES = sorted(registry.policies("alloc"))
FITS = ["best_fit", "first_fit", "next_fit", "worst_fit"]
PARAMS = {"heap": 2048, "align": 16, "reserve": False, "page_size": 128, "slab_size": 256}

ops = st.lists(
    st.tuples(st.sampled_from("aafg"), st.integers(0, 9), st.integers(1, 700)),
    max_size=60,
)


def make(policy: str, **over) -> AllocPanel:
    params = PARAMS | over
    ctx = PanelContext(seed=0, duration=1.0, events=[], panel_name=policy)
    return AllocPanel(policy, params, ctx, build_policy(policy, params))


def apply(p: AllocPanel, op: str, oid: int, size: int) -> bool | None:
    """One operation through the panel; None when it does not apply (dead or live id)."""
    if op == "a" and oid not in p.sizes:
        return p.alloc(oid, size)
    if op == "f" and oid in p.sizes:
        p.free(oid)
        return True
    if op == "g" and oid in p.sizes:
        return p.grow(oid, p.sizes[oid] + size)
    return None


def check_heap(p: AllocPanel) -> None:
    p.check_invariants()
    ranges = p.policy.ranges()
    held: dict = {}
    for _, length, owner in ranges:
        if owner is not None:
            held[owner] = held.get(owner, 0) + length
    assert set(held) == set(p.sizes), "a live object is missing from the heap map, or a dead one is in it"
    for oid, size in p.sizes.items():
        assert held[oid] == p.policy.capacity(oid) >= size
    free = sum(n for _, n, owner in ranges if owner is None)
    internal = p.policy.held - p.used
    assert free + p.used + internal == p.policy.heap  # no byte lost


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=examples(80), deadline=None)
@given(seq=ops, odd_heap=st.booleans())
def test_heap_stays_whole_after_every_operation(policy, seq, odd_heap):
    # an odd heap: not a power of two (buddy keeps several top blocks)
    p = make(policy, heap=3072 if odd_heap else 2048)
    for op in seq:
        apply(p, *op)
        check_heap(p)
    for oid in list(p.sizes):
        p.free(oid)
        check_heap(p)
    assert p.policy.held == 0 and p.policy.free_bytes() == p.policy.heap
    assert p.policy.largest_free() == p.policy.heap or policy == "buddy" and odd_heap


class ListModel:
    """The fits spelled out over a plain address-ordered list of [start, size] free blocks."""

    def __init__(self, policy: str, heap: int, align: int) -> None:
        self.policy, self.align = policy, align
        self.free: list[list[int]] = [[0, heap]]
        self.blocks: dict[int, tuple[int, int]] = {}
        self.rover = 0

    def place(self, need: int) -> int | None:
        fits = [b for b in self.free if b[1] >= need]
        if not fits:
            return None
        if self.policy == "first_fit":
            return fits[0][0]
        if self.policy == "best_fit":
            return min(fits, key=lambda b: (b[1], b[0]))[0]
        if self.policy == "worst_fit":
            return min(fits, key=lambda b: (-b[1], b[0]))[0]
        after = [b for b in fits if b[0] + b[1] > self.rover]  # holding the rover, or after it
        self.rover = (after or fits)[0][0]
        return self.rover

    def take(self, start: int, need: int) -> None:
        i = next(i for i, b in enumerate(self.free) if b[0] == start)
        if self.free[i][1] == need:
            del self.free[i]
        else:
            self.free[i] = [start + need, self.free[i][1] - need]

    def release(self, start: int, size: int) -> None:
        self.free.append([start, size])
        self.free.sort()
        merged: list[list[int]] = []
        for b in self.free:
            if merged and merged[-1][0] + merged[-1][1] == b[0]:
                merged[-1][1] += b[1]
            else:
                merged.append(b)
        self.free = merged

    def alloc(self, oid: int, size: int) -> bool:
        need = -(-size // self.align) * self.align
        start = self.place(need)
        if start is None:
            return False
        self.take(start, need)
        self.blocks[oid] = (start, need)
        return True

    def grow(self, oid: int, size: int) -> bool:
        start, have = self.blocks[oid]
        need = -(-size // self.align) * self.align
        if need <= have:
            return True
        nxt = next((b for b in self.free if b[0] == start + have), None)
        if nxt and nxt[1] >= need - have:
            self.take(start + have, need - have)
            self.blocks[oid] = (start, need)
            return True
        new = self.place(need)
        if new is None:
            self.release(start, have)  # the panel drops an object whose grow fails
            del self.blocks[oid]
            return False
        self.take(new, need)
        self.release(start, have)
        self.blocks[oid] = (new, need)
        return True


@pytest.mark.parametrize("policy", FITS)
@settings(max_examples=examples(150), deadline=None)
@given(seq=ops)
def test_fits_place_exactly_like_the_list_model(policy, seq):
    p = make(policy)
    model = ListModel(policy, PARAMS["heap"], PARAMS["align"])
    for op, oid, size in seq:
        if op == "a" and oid not in p.sizes:
            assert p.alloc(oid, size) == model.alloc(oid, size)
        elif op == "f" and oid in p.sizes:
            p.free(oid)
            model.release(*model.blocks.pop(oid))
        elif op == "g" and oid in p.sizes:
            new = p.sizes[oid] + size
            assert p.grow(oid, new) == model.grow(oid, new)
        assert dict(p.policy.blocks) == model.blocks
        assert [list(b) for b in p.policy.fl.blocks()] == model.free


def test_first_fit_takes_the_lowest_hole_and_coalesces_on_free():
    p = make("first_fit", heap=1024, align=1)
    for oid, size in enumerate([100, 50, 100, 50]):
        assert p.alloc(oid, size)
    p.free(1)  # hole [100, 150)
    p.free(3)  # hole [250, 1024)
    assert p.alloc("x", 40) and p.policy.blocks["x"] == (100, 40)
    p.free(2)  # [150, 250) joins [140, 150) before it and [250, 1024) after it
    assert p.policy.fl.blocks() == [(140, 884)]


def test_buddy_rounds_up_to_powers_of_two_and_merges():
    p = make("buddy", heap=1024, align=16)
    assert p.alloc(1, 100) and p.policy.capacity(1) == 128
    assert p.alloc(2, 129) and p.policy.capacity(2) == 256
    assert p.metrics()["internal_frag"] == pytest.approx((384 - 229) / 384)
    p.free(1)
    p.free(2)
    assert p.policy.largest_free() == 1024


def test_paged_fails_only_when_memory_is_short():
    p = make("paged", heap=1024, page_size=128)
    for oid in range(8):
        assert p.alloc(oid, 100)
    for oid in range(0, 8, 2):
        p.free(oid)  # four separate free pages
    assert p.alloc("big", 512)  # no contiguous run needed
    assert not p.alloc("more", 1)
    m = p.metrics()
    assert m["frag_failed"] == 0 and m["external_frag"] == 0.0


def test_bad_sizes_and_params_raise_value_error():
    with pytest.raises(ValueError, match="size must be a positive integer"):
        make("first_fit").alloc(1, 0)
    with pytest.raises(ValueError, match="multiple of page_size"):
        make("paged", heap=1000)
    with pytest.raises(ValueError, match="multiple of align"):
        make("first_fit", heap=1000, align=16)
    with pytest.raises(ValueError, match="valid: best_fit, buddy"):
        registry.get_policy("alloc", "nope")


# -- workloads -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["alloc-shred", "alloc-growing"])
def test_workload_events_are_ordered_and_consistent(name):
    preset = load(name)
    events = stream.build(preset, preset.seed, 60.0)
    live: dict[int, int] = {}
    seen: set[int] = set()
    last = 0.0
    for ev in events:
        assert ev["t"] >= last
        last = ev["t"]
        if ev["kind"] == "alloc":
            assert ev["id"] not in seen and ev["size"] >= 1
            seen.add(ev["id"])
            live[ev["id"]] = ev["size"]
            assert ev.get("max", ev["size"]) >= ev["size"]
        elif ev["kind"] == "grow":
            assert ev["size"] > live[ev["id"]]
            live[ev["id"]] = ev["size"]
        else:
            assert ev["kind"] == "free"
            del live[ev["id"]]


# -- the presets show what their titles claim ----------------------------------------------------
def test_shred_preset_fits_fail_what_free_space_could_hold():
    m = api.run("alloc-shred")["panels"]
    for policy in ("first_fit", "best_fit"):
        assert m[policy]["frag_failed"] > 0 and m[policy]["external_frag"] > 0.2, policy
    assert m["best_fit"]["frag_failed"] > 10 * m["first_fit"]["frag_failed"]
    for policy in ("next_fit", "worst_fit"):  # spreading small survivors shreds everything
        assert m[policy]["fail_rate"] > 0.2, policy
    assert m["buddy"]["internal_frag"] > 0.2 > 5 * m["first_fit"]["internal_frag"]
    assert m["paged"]["failed"] == 0 and m["paged"]["external_frag"] == 0.0


def test_shred_description_states_the_workloads_size_classes():
    p = load("alloc-shred")
    small, large = p.workload["classes"]
    text = p.description
    assert f"{p.workload['rate']:g} allocations per second" in text
    assert f"half are small ({small[0]}-{small[1]} bytes) and live {small[3]:g} s on average" in text
    assert f"half are large ({large[0] // 1024}-{large[1] // 1024} KiB) and live {large[3]:g} s on average" in text
    assert small[2] == large[2]  # "half" and "half"


def test_growing_preset_reservations_waste_pages_do_not():
    m = api.run("alloc-growing")["panels"]
    reserve, ff, paged = m["reserve"], m["first_fit"], m["paged"]
    assert reserve["internal_frag"] > 0.4 and reserve["fail_rate"] > 0.4
    assert ff["moves"] > 1000 and ff["fail_rate"] > 0.1
    assert paged["internal_frag"] < 0.05 and paged["frag_failed"] == 0
    assert paged["fail_rate"] < min(v["fail_rate"] for k, v in m.items() if k != "paged") / 5


# -- contention trace alloc ----------------------------------------------------------------------
TRACE = "a 1 100\na 2 50\na 3 100\nf 2\na 4 60\na 5 40\nf 1\nf 3\na 6 250\na 7 10\n"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "sims", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_trace_alloc_first_fit(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text(TRACE)
    out = cli("trace", "alloc", "--policy", "first_fit", "--heap", "256", "--trace", str(f), "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    # holes at the end: [10, 100) and [140, 256): the largest is 116 of 206 free bytes
    assert got == {
        "policy": "first_fit",
        "failed": ["4", "6"],
        "peak_used": 250,
        "external_frag": 1 - 116 / 206,
        "internal_frag": 0.0,
    }
    out = cli("trace", "alloc", "--policy", "paged", "--heap", "256", "--page-size", "16", "--trace", str(f), "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["failed"] == ["3", "6"]


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("a 1 100\na 2\n", 2, "expected 'a ID SIZE'"),
        ("a 1 100\n\na 2 -5\n", 3, "positive integer"),
        ("a 1 10\na 1 10\n", 2, "already allocated"),
        ("f 9\n", 1, "never allocated"),
    ],
)
def test_trace_alloc_malformed_line_exits_2_with_file_and_line(tmp_path, text, line, words):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    out = cli("trace", "alloc", "--policy", "best_fit", "--heap", "1024", "--trace", str(f))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{f}:{line}:" in lines[0] and words in lines[0], lines


def test_trace_alloc_bad_flags_exit_2(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text(TRACE)
    out = cli("trace", "alloc", "--policy", "paged", "--heap", "1000", "--trace", str(f))
    assert out.returncode == 2 and "page_size" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_views_are_json_heap_maps():
    from sims.core.scenario import Scenario

    sc = Scenario("alloc-shred", duration=20.0)
    sc.run()
    for name, v in json.loads(json.dumps(sc.views())).items():
        assert v["kind"] == "heap" and v["heap"] == 1048576, name
        assert sum(r[1] for r in v["ranges"]) == v["heap"] or v["truncated"]
        assert any(r[2] is not None for r in v["ranges"]) and v["recent"]


def test_checkpoints_copy_the_heap_and_seek_back_exactly():
    from sims.core.scenario import Scenario

    sc = Scenario("alloc-shred", duration=60.0, checkpoint_every=20.0)
    sc.run()
    end = sc.metrics()
    sc.seek(30.0)
    sc.check_invariants()
    sc.advance(60.0)
    assert sc.metrics() == end
    sc.check_invariants()


@pytest.mark.parametrize("name", ["alloc-shred", "alloc-growing"])
def test_preset_buttons_work_on_every_panel(name):
    from sims.core.scenario import Scenario

    sc = Scenario(name, duration=20.0).run()
    for action in sc.preset.actions:
        for panel in sc.panels.values():
            before = panel.metrics()["requests"]
            panel.on_event({"t": 20.0, **action["event"]})
            panel.on_event({"t": 20.0, **action["event"]})  # twice: each press is a new object
            panel.check_invariants()
            assert panel.metrics()["requests"] == before + 2
