"""The replacement library written once (``sims.replace``): FIFO, LRU, LFU, CLOCK and OPT serve
the paging and the cache topics alike; every fast path equals one ``access`` per reference."""

from __future__ import annotations

import copy

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims import replace
from sims.cache import classic as cache_classic
from sims.cache import opt as cache_opt
from sims.core import registry
from sims.paging import policies as paging

CLASSES = {"fifo": replace.FIFO, "lru": replace.LRU, "lfu": replace.LFU, "clock": replace.Clock, "opt": replace.OPT}

events_st = st.lists(
    st.one_of(
        st.builds(lambda k: {"kind": "ref", "key": k}, st.integers(0, 20)),
        st.builds(lambda a, n: {"kind": "scan", "start": a, "length": n}, st.integers(0, 30), st.integers(0, 8)),
        st.just({"kind": "noise"}),
    ),
    max_size=150,
)


def build(name: str, size: int, events: list[dict]) -> replace.Replacement:
    cls = CLASSES[name]
    return cls(size, replace.Lookahead.of_events(events)) if cls is replace.OPT else cls(size)


def test_both_topics_use_the_one_implementation():
    for name, cls in CLASSES.items():
        assert issubclass(registry.get_policy("paging", name), cls), name
        assert issubclass(registry.get_policy("cache", name), cls), name
    assert cache_classic.LRU.serve is paging.Lru.serve is replace.LRU.serve
    assert cache_opt.OPT.access is paging.Opt.access is replace.OPT.access


@pytest.mark.parametrize("name", sorted(CLASSES))
@settings(max_examples=examples(60), deadline=None)
@given(size=st.integers(1, 8), events=events_st)
def test_serve_equals_one_access_per_reference(name, size, events):
    events = [dict(ev, t=float(i)) for i, ev in enumerate(events)]
    refs = list(replace.references(events))
    fast, slow = build(name, size, events), build(name, size, events)
    gone_fast, gone_slow = [], []
    fast.on_evict, slow.on_evict = gone_fast.append, gone_slow.append
    mid = len(events) // 2
    r1, h1 = fast.serve(events, 0, mid)
    r2, h2 = fast.serve(events, mid, len(events))
    hits = 0
    for k in refs:
        was = k in slow
        hit = slow.access(k)
        assert hit == was and k in slow
        hits += hit
        slow.check_invariants()
    assert (r1 + r2, h1 + h2) == (len(refs), hits)
    assert gone_fast == gone_slow and fast.resident() == slow.resident()
    fast.check_invariants()


def test_clock_loads_with_the_reference_bit_set():
    """One definition for paging and cache: a load is a reference (R = 1). With 2 frames, 1 2 3
    sweeps both bits clear and evicts 1; 3 loads with its bit set. After a hit on 2 every bit is
    set, so 4 sweeps a full circle and evicts the slot the hand started at (2's)."""
    c = replace.Clock(2)
    for k in (1, 2, 3):
        c.access(k)
    assert c.resident() == [2, 3] and list(c.ref) == [1, 0]  # 3 took slot 0 with its bit set
    c.access(2)
    c.access(4)
    assert (c.keys, list(c.ref), c.hand) == ([3, 4], [0, 1], 0)


def test_opt_evicts_the_oldest_never_used_page_first_and_shares_its_lookahead():
    keys = [1, 2, 3, 4, 1]
    o = replace.OPT(2, keys)
    assert [o.access(k) for k in keys] == [False, False, False, False, True]  # 2 and 3 go, 1 stays
    o2 = replace.OPT(3, [5, 6, 7, 8])
    for k in (5, 6, 7):
        o2.access(k)
    assert o2.resident() == [5, 6, 7]  # all doomed: the one referenced longest ago goes first
    o2.access(8)
    assert sorted(o2.resident()) == [6, 7, 8]
    assert copy.deepcopy(o2).ahead is o2.ahead
