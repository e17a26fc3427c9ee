"""Router decisions on plain data: the radix tree, the KV index and its event bus, GIE's LRU
index, and each router's rule (SGLang's balance/match/smallest-tree, GIE's weighted scorers,
llm-d's filter-then-balance)."""

from __future__ import annotations

import random

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.cluster.kvindex import EventBus, KVIndex, LRUIndex
from sims.cluster.radix import RadixTree
from sims.cluster.routers import HashRing, PodLoad
from sims.core.registry import get_policy, policies, resolve_params


def make(name: str, n: int = 4, **params):
    cls = get_policy("cluster", name)
    return cls(n, resolve_params(cls.PARAMS, params, "panel"), random.Random(1))


def req(*segments, rid=0):
    segs = [list(s) for s in segments]
    return {"id": rid, "segments": segs, "prompt_len": sum(s[1] for s in segs)}


def idle(n=4):
    return [PodLoad() for _ in range(n)]


# -- radix tree ---------------------------------------------------------------------------------


def test_radix_matches_shared_segments_and_splits_edges():
    tree = RadixTree()
    tree.insert([["sys", 100], ["u1", 20]])
    assert tree.match([["sys", 100], ["u2", 30]]) == 100
    assert tree.match([["sys", 60]]) == 60  # ends inside an edge
    tree.insert([["sys", 60], ["u3", 10]])  # splits "sys" at 60
    assert tree.size == 130
    assert tree.match([["sys", 60], ["u3", 10]]) == 70
    assert tree.match([["sys", 100], ["u1", 20]]) == 120
    tree.check_invariants()


def test_radix_evicts_least_recently_inserted_leaves_first():
    tree = RadixTree(max_tokens=300)
    tree.insert([["a", 100]])
    tree.insert([["b", 100]])
    tree.insert([["c", 100]])
    tree.insert([["a", 100]])  # refresh a
    tree.insert([["d", 100]])  # over by 100: b is the oldest leaf
    assert tree.match([["b", 100]]) == 0
    assert tree.match([["a", 100]]) == 100
    assert tree.size == 300 and tree.evicted == 100
    tree.check_invariants()


def test_radix_eviction_reaches_inner_nodes_once_they_become_leaves():
    tree = RadixTree(max_tokens=1000)
    tree.insert([["p", 50], ["x", 10]])
    tree.insert([["q", 50]])
    assert tree.evict(61) == 110  # x (10), then p (50) as a new leaf, then q (50)... until >= 61
    assert tree.size == 0 or tree.match([["q", 50]]) == 50
    tree.check_invariants()


_prompt = st.lists(st.tuples(st.sampled_from("abcd"), st.integers(1, 40)), min_size=1, max_size=4)


def _dedup(p):
    """Each content at most once per prompt: a prompt that repeats a content at a new offset
    is not shared past that point (the tree keeps the older edge)."""
    seen, out = set(), []
    for c, t in p:
        if c not in seen:
            seen.add(c)
            out.append([c, t])
    return out


def _common(a, b):
    n = 0
    for (ca, ta), (cb, tb) in zip(a, b, strict=False):
        if ca != cb:
            return n
        n += min(ta, tb)
        if ta != tb:
            return n
    return n


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_prompt, min_size=1, max_size=12), _prompt)
def test_radix_match_equals_longest_common_prefix_with_anything_inserted(prompts, probe):
    prompts = [_dedup(p) for p in prompts]
    probe = _dedup(probe)
    tree = RadixTree()
    for p in prompts:
        tree.insert(p)
        tree.check_invariants()
    assert tree.match(probe) == max(_common(probe, p) for p in prompts)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(_prompt, min_size=1, max_size=25), st.integers(1, 120))
def test_radix_under_eviction_keeps_its_invariants_and_the_newest_prompt(prompts, cap):
    tree = RadixTree(max_tokens=cap)
    for p in prompts:
        p = _dedup(p)
        tree.insert(p)
        tree.check_invariants()  # size == sum of edges <= cap
        total = sum(t for _, t in p)
        if total <= cap:
            assert tree.match(p) == total  # the prompt just inserted is the last to go


# -- KV index and event bus ---------------------------------------------------------------------


def test_prefix_hits_count_only_the_unbroken_run_from_the_start():
    idx = KVIndex(3)
    idx.stored(0, [1, 2, 3, 4])
    idx.stored(1, [1, 2, 4])  # a hole at 3
    idx.stored(2, [2, 3, 4])  # misses the first block
    assert idx.prefix_hits([1, 2, 3, 4]) == [4, 2, 0]
    idx.removed(0, [2])
    assert idx.prefix_hits([1, 2, 3, 4]) == [1, 2, 0]
    idx.check_invariants()
    assert idx.blocks == [3, 3, 3]


def test_event_bus_delays_events_per_pod_in_order():
    idx = KVIndex(2)
    bus = EventBus(2, delay=0.5)
    bus.publish(0, 1.0, "stored", [7, 8])
    bus.publish(0, 1.2, "removed", [8])
    bus.publish(1, 1.1, "stored", [7])
    bus.deliver(1.4, idx)
    assert idx.prefix_hits([7, 8]) == [0, 0]  # nothing has arrived yet
    bus.deliver(1.6, idx)
    assert idx.prefix_hits([7, 8]) == [2, 1]
    bus.deliver(1.7, idx)
    assert idx.prefix_hits([7, 8]) == [1, 1]
    assert bus.in_flight() == 0
    with pytest.raises(ValueError, match="kind"):
        bus.publish(0, 2.0, "evicted", [1])


# -- simple routers -----------------------------------------------------------------------------


def test_every_router_is_registered():
    assert set(policies("cluster")) >= {
        "random",
        "round_robin",
        "least_loaded",
        "p2c",
        "load_only",
        "prefix_hash",
        "sglang_cache_aware",
        "approx_prefix",
        "estimated_prefix",
        "precise_prefix",
    }
    with pytest.raises(ValueError, match="valid: .*precise_prefix"):
        get_policy("cluster", "sticky")


def test_round_robin_cycles_and_random_covers_every_replica():
    rr = make("round_robin", 3)
    assert [rr.route(0.0, req(("a", 1)), [], idle(3)) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    rnd = make("random", 4)
    assert {rnd.route(0.0, req(("a", 1)), [], idle()) for _ in range(200)} == {0, 1, 2, 3}


def test_least_loaded_and_p2c_prefer_fewer_outstanding_tokens():
    loads = [PodLoad(outstanding_tokens=x) for x in (500, 20, 900, 300)]
    assert make("least_loaded").route(0.0, req(("a", 1)), [], loads) == 1
    p2c = make("p2c")
    picks = [p2c.route(0.0, req(("a", 1)), [], loads) for _ in range(400)]
    assert 2 not in picks  # the most loaded replica always loses its pairing
    assert picks.count(1) > picks.count(3) > picks.count(0)


def test_load_only_weighs_queue_and_kv_usage():
    lo = make("load_only")
    loads = [
        PodLoad(waiting=5, kv_usage=0.1),
        PodLoad(waiting=0, kv_usage=0.9),
        PodLoad(waiting=0, kv_usage=0.2),
        PodLoad(waiting=5, kv_usage=0.0),
    ]
    assert lo.route(0.0, req(("a", 1)), [], loads) == 2


def test_prefix_hash_is_sticky_per_prefix_and_consistent_when_a_replica_joins():
    ph = make("prefix_hash", 8, prefix_blocks=2)
    # the chained hash of block 2 decides: same first two blocks -> same replica
    a = ph.route(0.0, req(("a", 64)), [11, 12, 99], idle(8))
    assert all(ph.route(0.0, req(("a", 64)), [11, 12, k], idle(8)) == a for k in range(50))
    keys = [random.Random(k).getrandbits(64) for k in range(4000)]
    r10, r11 = HashRing(10, 64), HashRing(11, 64)
    moved = sum(r10.owner(k) != r11.owner(k) for k in keys) / len(keys)
    assert 0.04 < moved < 0.16  # ~1/11, not ~90% as with hash mod N


# -- SGLang's cache-aware router ----------------------------------------------------------------


def inflight(*xs):
    return [PodLoad(running=x) for x in xs]


def test_sglang_cache_aware_balanced_best_match_above_threshold():
    r = make("sglang_cache_aware")
    r.trees[2].insert([["sys", 600], ["u0", 100]])
    r.trees[1].insert([["zzz", 5000]])
    # match rate 600 / 1000 > 0.3 -> worker 2 even though it is busier
    assert r.route(0.0, req(("sys", 600), ("u1", 400)), [], inflight(0, 0, 30, 0)) == 2


def test_sglang_cache_aware_low_match_goes_to_smallest_tree():
    r = make("sglang_cache_aware")
    r.trees[0].insert([["x", 300]])
    r.trees[1].insert([["y", 100]])
    r.trees[2].insert([["sys", 200]])
    r.trees[3].insert([["w", 200]])
    # match 200 / 1000 = 0.2 <= 0.3 -> the smallest tree (worker 1), not the match
    assert r.route(0.0, req(("sys", 200), ("u", 800)), [], inflight(0, 0, 0, 0)) == 1
    assert r.decisions["smallest_tree"] == 1


def test_sglang_cache_aware_imbalance_needs_both_thresholds():
    prompt = req(("sys", 600), ("u1", 400))

    def pick(*loads):
        r = make("sglang_cache_aware")
        r.trees[2].insert([["sys", 600]])
        return r.route(0.0, prompt, [], inflight(*loads))

    assert pick(10, 80, 90, 40) == 0  # 90 - 10 > 64 and 90 > 15: shortest queue
    assert pick(26, 80, 90, 40) == 2  # 90 - 26 = 64 is not > 64: cache wins
    assert pick(150, 220, 200, 180) == 2  # 220 - 150 > 64 but 220 <= 1.5 * 150: cache wins
    assert pick(100, 180, 151, 200) == 0  # 200 - 100 > 64 and 200 > 150: shortest queue


def test_sglang_cache_aware_learns_from_what_it_routed():
    r = make("sglang_cache_aware")
    first = r.route(0.0, req(("g1", 6000), ("q1", 1200)), [], inflight(0, 0, 0, 0))
    again = r.route(0.0, req(("g1", 6000), ("q2", 1200)), [], inflight(0, 0, 0, 0))
    assert again == first
    r.check_invariants()


def test_approx_prefix_is_the_old_name_of_sglang_cache_aware():
    old, new = make("approx_prefix"), make("sglang_cache_aware")
    assert isinstance(old, type(new)) and old.params == new.params
    assert old.policy_name == "approx_prefix"  # the view names what the preset asked for
    for k in range(20):
        prompt = req((f"g{k % 3}", 600), (f"q{k}", 400))
        loads = inflight(k % 5, 2, 70 * (k % 2), 1)
        assert old.route(0.0, prompt, [], loads) == new.route(0.0, prompt, [], loads)


def test_sglang_cache_aware_split_over_router_replicas_learns_each_group_twice():
    r = make("sglang_cache_aware", router_replicas=2)
    r.rng = random.Random(5)
    homes = set()
    for k in range(40):
        homes.add(r.route(0.0, req(("g1", 6000), (f"q{k}", 1200)), [], inflight(0, 0, 0, 0)))
    assert len(homes) == 2  # each router process placed the group on its own
    assert r.state()["router_replicas"] == 2


# -- GIE's approximate prefix scorer (llm-d "estimated") ----------------------------------------


def test_lru_index_matches_like_gie_and_evicts_the_oldest_entries_first():
    idx = LRUIndex(3, capacity=4)
    idx.add(0, [1, 2, 3])
    idx.add(1, [1, 2])
    assert idx.match_counts([1, 2, 3, 9]) == [3, 2, 0]
    idx.add(2, [3])
    assert idx.match_counts([1, 2, 3]) == [3, 2, 1]  # a pod's own hole does not stop it
    assert idx.match_counts([7, 1, 2]) == [0, 0, 0]  # a block nobody has ends the walk
    idx.add(0, [1])  # refresh 1: pod 0's order is now 2, 3, 1
    idx.add(0, [5, 6])  # over capacity by one: 2 goes
    assert idx.match_counts([1, 2, 3]) == [2, 2, 1]  # pod 0 lost 2 but still counts 1 and 3
    assert idx.evicted == 1
    idx.check_invariants()


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.lists(st.integers(0, 9), max_size=6)), max_size=25),
    st.lists(st.integers(0, 9), max_size=8),
    st.integers(1, 6),
)
def test_lru_index_equals_a_list_model(ops, probe, cap):
    idx = LRUIndex(3, cap)
    lrus = [[], [], []]  # oldest first
    for pod, hashes in ops:
        idx.add(pod, hashes)
        for h in hashes:
            if h in lrus[pod]:
                lrus[pod].remove(h)
            lrus[pod].append(h)
            del lrus[pod][:-cap]
        idx.check_invariants()
    want = [0, 0, 0]
    for h in probe:
        holders = [i for i in range(3) if h in lrus[i]]
        if not holders:
            break
        for i in holders:
            want[i] += 1
    assert idx.match_counts(probe) == want


def test_estimated_prefix_hashes_64_character_blocks_and_matches_only_the_first_256():
    r = make("estimated_prefix")
    assert r.block_tokens({"prompt_len": 7200, "prompt_chars": 28800}) == 16  # 64 chars at 4 a token
    a = req(("sys", 4096), ("q1", 1000))
    b = req(("sys", 4096), ("q2", 1000))
    first = r.route(0.0, a, [], idle())
    assert r.route(0.0, b, [], idle()) == first  # 256 x 16 = 4096 tokens: a and b look the same
    assert r.index.match_counts(r.index.lrus[first])[first] == 256


def test_estimated_prefix_returns_to_its_guess_until_the_load_scorers_outvote_it():
    r = make("estimated_prefix")
    prompt = req(("g1", 6000), ("q1", 1200))
    home = r.route(0.0, prompt, [], idle())
    busy = [PodLoad(waiting=2, kv_usage=0.5) for _ in range(4)]
    busy[home] = PodLoad(waiting=3, kv_usage=0.3)  # 1 + 0.7 + 0 beats 0 + 0.5 + 1
    assert r.route(1.0, prompt, [], busy) == home
    busy[home] = PodLoad(waiting=3, kv_usage=0.9)  # 1 + 0.1 + 0 loses to 0 + 0.5 + 1
    other = r.route(2.0, prompt, [], busy)
    assert other != home
    assert r.decisions == {"cold": 1, "affine": 1, "outvoted": 1}
    # its own decision is its evidence: the group now has two homes
    assert sorted(i for i, c in enumerate(r.index.match_counts(r.index.lrus[home])) if c) == sorted({home, other})
    r.check_invariants()


# -- llm-d's precise prefix scheduler -----------------------------------------------------------


def precise(n=4, **kw):
    kw.setdefault("event_delay", 0.0)
    return make("precise_prefix", n, **kw)


def test_precise_prefix_follows_kv_events_and_picks_least_loaded_affine_pod():
    r = precise()
    hashes = list(range(100, 110))
    r.bus.publish(1, 0.0, "stored", hashes[:9])
    r.bus.publish(3, 0.0, "stored", hashes[:8])
    r.bus.publish(0, 0.0, "stored", hashes[:2])  # below the affinity threshold
    loads = [PodLoad(), PodLoad(waiting=3, kv_usage=0.5), PodLoad(), PodLoad(waiting=1, kv_usage=0.4)]
    # pods 1 and 3 pass the filter; 3 is less loaded and its prefix score is close
    assert r.route(1.0, req(("g", 640)), hashes, loads) == 3
    assert r.decisions["affinity"] == 1


def test_precise_prefix_spills_when_every_affine_pod_is_overloaded():
    r = precise(max_waiting=8)
    hashes = [1, 2, 3, 4]
    r.bus.publish(2, 0.0, "stored", hashes)
    busy = [PodLoad(waiting=2), PodLoad(waiting=0), PodLoad(waiting=8, kv_usage=0.9), PodLoad(waiting=2)]
    assert r.route(1.0, req(("g", 256)), hashes, busy) == 1
    assert r.decisions["spill"] == 1
    calm = [PodLoad(waiting=2), PodLoad(waiting=0), PodLoad(waiting=7, kv_usage=0.9), PodLoad(waiting=2)]
    assert r.route(1.0, req(("g", 256)), hashes, calm) == 2


def test_precise_prefix_with_a_stale_index_cannot_see_a_fresh_prefix():
    r = precise(event_delay=0.5)
    hashes = [5, 6, 7]
    r.bus.publish(2, 1.0, "stored", hashes)
    loads = [PodLoad(waiting=1), PodLoad(waiting=1), PodLoad(waiting=4), PodLoad(waiting=1)]
    assert r.route(1.2, req(("g", 192)), hashes, loads) != 2  # event still on the bus
    assert r.route(1.6, req(("g", 192)), hashes, loads) == 2
    r.check_invariants()


def test_bad_router_params_raise_value_error():
    with pytest.raises(ValueError, match="affinity_threshold"):
        precise(affinity_threshold=1.5)
    with pytest.raises(ValueError, match="prefix_blocks"):
        make("prefix_hash", prefix_blocks=0)
    with pytest.raises(ValueError, match="at least one replica"):
        make("random", 0)
    with pytest.raises(ValueError, match="lru_capacity_per_server"):
        make("estimated_prefix", lru_capacity_per_server=0)
    with pytest.raises(ValueError, match="max_prefix_blocks"):
        make("estimated_prefix", max_prefix_blocks=0)


# -- properties over every router ---------------------------------------------------------------

_load = st.builds(
    PodLoad,
    waiting=st.integers(0, 300),
    running=st.integers(0, 300),
    outstanding_tokens=st.integers(0, 10**6),
    kv_usage=st.floats(0.0, 1.0),
)


@settings(max_examples=examples(60), deadline=None)
@given(st.data(), st.integers(1, 9))
def test_every_router_returns_a_replica_in_range(data, n):
    for name in sorted(policies("cluster")):
        r = make(name, n)
        for _ in range(5):
            loads = data.draw(st.lists(_load, min_size=n, max_size=n))
            blocks = data.draw(st.lists(st.integers(0, 5), max_size=6))
            hashes = [1000 + b for b in blocks]
            if r.needs_kv_events:
                pod = data.draw(st.integers(0, n - 1))
                r.bus.publish(pod, 0.0, "stored", hashes[: data.draw(st.integers(0, len(hashes)))])
            i = r.route(1.0, req(("g", 64 * max(1, len(hashes)))), hashes, loads)
            assert 0 <= i < n, (name, i)
        r.check_invariants()


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.booleans(), st.lists(st.integers(0, 7), max_size=5)), max_size=30),
    st.lists(st.integers(0, 7), max_size=8),
)
def test_kv_index_prefix_hits_match_a_set_model(ops, probe):
    idx = KVIndex(3)
    held = [set(), set(), set()]
    for pod, store, hashes in ops:
        if store:
            idx.stored(pod, hashes)
            held[pod].update(hashes)
        else:
            idx.removed(pod, hashes)
            held[pod].difference_update(hashes)
        idx.check_invariants()
    expected = []
    for pod in range(3):
        run = 0
        while run < len(probe) and probe[run] in held[pod]:
            run += 1
        expected.append(run)
    assert idx.prefix_hits(probe) == expected


@pytest.mark.parametrize(
    "name, branch, default",
    [
        ("precise_prefix", "affinity", "prefix 3 : kv 2 : queue 2"),
        ("estimated_prefix", "affine", "prefix 1 : kv 1 : queue 1"),
    ],
)
def test_a_prefix_routers_explanation_names_the_weights_it_was_given(name, branch, default):
    from sims.core.diverge import Decision

    d = Decision("route", "request 3", "pod 1", facts={"branch": branch, "pick": 1, "loads": idle()})
    assert f"({default})" in make(name).explain(d)
    said = make(name, prefix_weight=5.0, kv_weight=0.5, queue_weight=1.0).explain(d)
    assert "(prefix 5 : kv 0.5 : queue 1)" in said, said


def test_a_key_on_a_ring_point_goes_to_the_next_point():
    ring = HashRing(3, 4)
    for i, p in enumerate(ring.points):
        assert ring.owner(p) == ring.owners[(i + 1) % len(ring.owners)]  # strictly after
        assert ring.owner(p - 1) == ring.owners[i]
