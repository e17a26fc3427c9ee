"""Second chance, aging and NRU: second chance makes CLOCK's decisions one for one, aging and NRU
equal brute-force models of the textbook's rules, and writes reach NRU's M bit on every path."""

from __future__ import annotations

import random

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import registry
from sims.core.panel import PanelContext
from sims.core.scenario import Scenario
from sims.paging.panel import PagingPanel

refs_st = st.lists(st.tuples(st.integers(0, 9), st.booleans()), max_size=150)  # (page, is a write)


def decisions(policy: str, pages: list, k: int, **params) -> tuple[list, list]:
    """Each reference's hit or fault and the victims in order."""
    p = registry.get_policy("paging", policy)(k, [], random.Random(0), **params)
    victims: list = []
    p.on_evict = victims.append
    hits = [p.access(x) for x in pages]
    p.check_invariants()
    return hits, victims


@pytest.mark.parametrize("seed", range(6))
def test_second_chance_makes_clocks_decisions_on_seeded_streams(seed):
    rng = random.Random(seed)
    pages = [rng.randrange(4 + seed * 3) for _ in range(3000)]
    for k in (1, 2, 3, 5, 8, 13):
        assert decisions("second_chance", pages, k) == decisions("clock", pages, k), (seed, k)


@settings(max_examples=examples(200), deadline=None)
@given(pages=st.lists(st.integers(0, 9), max_size=200), k=st.integers(1, 6))
def test_second_chance_makes_clocks_decisions_on_any_string(pages, k):
    assert decisions("second_chance", pages, k) == decisions("clock", pages, k)


def test_second_chance_equals_clock_on_the_presets_stream_on_five_seeds():
    """Through the panels and the scenario (scans and the tight loops included), victim for victim."""
    for seed in range(11, 16):
        sc = Scenario("paging-aging-nru", seed, panels=["second_chance", "clock"], duration=1.0)
        seen: dict = {"second_chance": [], "clock": []}
        for name, out in seen.items():
            sc.panels[name].policy.on_evict = out.append
        sc.run()
        assert len(seen["clock"]) > 1000 and seen["second_chance"] == seen["clock"], seed
        m = sc.metrics()
        assert m["second_chance"] == m["clock"]


def aging_model(refs: list, k: int, tick: int) -> tuple[int, list]:
    """The textbook's aging, by brute force: pages [page, counter, r] in load order."""
    mem: list = []
    faults = 0
    for n, page in enumerate(refs, 1):
        hit = [e for e in mem if e[0] == page]
        if hit:
            hit[0][2] = 1
        else:
            faults += 1
            if len(mem) == k:
                mem.remove(min(mem, key=lambda e: e[2] * 256 + e[1]))
            mem.append([page, 0, 1])
        if n % tick == 0:
            for e in mem:
                e[1] = (e[1] >> 1) | (e[2] << 7)
                e[2] = 0
    return faults, [[p, c, r] for p, c, r in mem]


@settings(max_examples=examples(150), deadline=None)
@given(pages=st.lists(st.integers(0, 9), max_size=200), k=st.integers(1, 6), tick=st.integers(1, 12))
def test_aging_equals_its_model(pages, k, tick):
    p = registry.get_policy("paging", "aging")(k, [], None, tick=tick)
    faults = sum(not p.access(x) for x in pages)
    p.check_invariants()
    assert (faults, p.state()["counters"]) == aging_model(pages, k, tick)


def test_aging_counter_is_an_8_bit_shift_register():
    p = registry.get_policy("paging", "aging")(4, [], None, tick=1)
    p.access(1)  # tick: 1000_0000
    p.access(2)  # tick: 0100_0000 for page 1
    p.access(1)  # tick: 1010_0000
    for _ in range(3):
        p.access(2)
    assert p.age[1] == [0b0001_0100, 0] and p.age[2] == [0b1110_1000, 0]
    for _ in range(8):
        p.access(2)
    assert p.age[1] == [0, 0], "eight ticks without a reference forget the page"


def nru_model(refs: list, k: int, tick: int, rng: random.Random) -> tuple[int, list]:
    """The textbook's NRU, by brute force: frames [page, r, m]; a victim drawn from the lowest class."""
    mem: list = []
    faults = 0
    for n, (page, write) in enumerate(refs, 1):
        hit = [e for e in mem if e[0] == page]
        if hit:
            e = hit[0]
            e[1] = 1
        else:
            faults += 1
            e = [page, 1, 0]
            if len(mem) == k:
                low = min(2 * f[1] + f[2] for f in mem)
                lowest = [i for i, f in enumerate(mem) if 2 * f[1] + f[2] == low]
                mem[lowest[rng.randrange(len(lowest))]] = e
            else:
                mem.append(e)
        if write:
            e[2] = 1
        if n % tick == 0:
            for f in mem:
                f[1] = 0
    return faults, mem


def write_stream(refs: list) -> list[dict]:
    return [{"t": float(i), "kind": "ref", "key": p, **({"op": "w"} if w else {})} for i, (p, w) in enumerate(refs, 1)]


def nru_panel(events: list, k: int, tick: int) -> PagingPanel:
    ctx = PanelContext(seed=3, duration=float(len(events) + 1), events=events, panel_name="nru")
    return PagingPanel("nru", {"frames": k, "tick": tick}, ctx, registry.get_policy("paging", "nru"))


@settings(max_examples=examples(150), deadline=None)
@given(refs=refs_st, k=st.integers(1, 6), tick=st.integers(1, 12))
def test_nru_equals_its_model_with_writes_on_every_path(refs, k, tick):
    events = write_stream(refs)
    whole, single = nru_panel(events, k, tick), nru_panel(events, k, tick)
    whole.feed(events, 0, len(events), float(len(events)))  # the tight loop (serve), then the last 48 one by one
    for i in range(len(events)):
        single.feed(events, i, i + 1, events[i]["t"])
        single.check_invariants()
    model_rng = PanelContext(seed=3, duration=1.0, events=[], panel_name="nru").rng("evict")
    faults, mem = nru_model(refs, k, tick, model_rng)
    for p in (whole, single):
        assert p.metrics()["faults"] == faults
        assert p.policy.state()["bits"] == mem


def test_nru_keeps_modified_pages_over_clean_ones():
    p = registry.get_policy("paging", "nru")(2, [], random.Random(0), tick=1)
    p.access(1)
    p.wrote(1)
    p.access(2)  # the tick clears both R bits: 1 is class 1 (modified), 2 class 0 (clean)
    victims: list = []
    p.on_evict = victims.append
    p.access(3)
    assert victims == [2] and p.chose == 0


@pytest.mark.parametrize("policy", ["aging", "nru"])
@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_tick_is_a_value_error(policy, bad):
    with pytest.raises(ValueError, match="tick"):
        registry.get_policy("paging", policy)(3, [], random.Random(0), tick=bad)
