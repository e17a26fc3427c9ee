"""Trees: every structure against a plain model (a set and sorted() for the search trees and
B-trees, heapq for the heap, a set of strings for the trie, a plain array for Fenwick and the
segment tree) on Hypothesis streams, with the invariants checked after every operation; the exact
costs some of them must show; the panel's clock, checkpoints and view. The presets' statements,
the renderer and the concept pages: tests/test_trees_presets.py; ``contention trace trees``:
tests/test_trees_trace.py."""

from __future__ import annotations

import copy
import heapq
import json
from random import Random

import pytest
from budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sims.core import presets, registry
from sims.core.panel import PanelContext
from sims.core.scenario import Scenario
from sims.trees.workload import operations

STRUCTURES = sorted(registry.policies("trees"))
ORDERED = ["avl", "b_plus_tree", "b_tree", "bst", "red_black"]
PAGES = [96, 128, 200]  # t = 2, 2, 3 for the B-tree; 4, 6, 11 keys a B+ tree page
U = 40  # the key universe of the Hypothesis streams


def algo_of(name: str, **params):
    cls = registry.get_policy("trees", name)
    return cls(**{k: params.get(k, p.default) for k, p in cls.PARAMS.items()})


def drive(name: str, ops: list, keys: str = "int", universe: int = U, **params):
    """Take ``ops`` one at a time, checking the invariants after each; yields (op, answer, d)."""
    algo = algo_of(name, **params)
    ev = {"t": 0.0, "kind": "ops", "ops": ops, "universe": universe, "keys": keys}
    d = algo.build(ev)
    for op in ops:
        if not algo.takes(op, ev):
            continue
        steps = list(algo.run(d, [op], ev))
        assert steps and not d.busy, (name, op)
        d.check_invariants()
        yield op, d.answer, d


def reference(op: list, model) -> object:
    """What a set (or a sorted list of it) answers."""
    name = op[0]
    if name == "insert":
        new = op[1] not in model
        model.add(op[1])
        return new
    if name == "delete":
        held = op[1] in model
        model.discard(op[1])
        return held
    if name == "search":
        return op[1] in model
    if name == "range":
        return sum(1 for k in model if op[1] <= k <= op[2])
    if name == "pop":
        if not model:
            return None
        k = min(model)
        model.discard(k)
        return k
    raise AssertionError(op)


OP = st.one_of(
    st.tuples(st.sampled_from(["insert", "insert", "delete", "search"]), st.integers(0, U - 1)).map(list),
    st.tuples(st.just("range"), st.integers(0, U - 1), st.integers(0, U - 1)).map(list),
    st.just(["pop"]),
)
OPS = st.lists(OP, max_size=120)


# -- differential tests ------------------------------------------------------------------------------
@settings(max_examples=examples(80), deadline=None)
@given(OPS, st.sampled_from(PAGES))
@example([["insert", k] for k in range(30)] + [["delete", k] for k in range(0, 30, 2)] + [["range", 3, 25]], 96)
@example([["insert", k] for k in range(30, 0, -1)] + [["pop"]] * 31, 96)
def test_search_trees_and_b_trees_answer_as_a_set_does(ops, page):
    for name in ORDERED:
        model: set = set()
        for op, answer, d in drive(name, ops, page_bytes=page):
            assert answer == reference(op, model), (name, op)
            assert d.keys() == sorted(model) and d.size == len(model), (name, op)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.one_of(st.tuples(st.just("insert"), st.integers(-20, 20)).map(list), st.just(["pop"])), max_size=150)
)
def test_the_heap_pops_what_heapq_pops(ops):
    h: list = []
    for op, answer, d in drive("binary_heap", ops):
        if op[0] == "insert":
            heapq.heappush(h, op[1])
            assert answer is True
        else:
            assert answer == (heapq.heappop(h) if h else None), op
        assert d.keys() == sorted(h)


WORDS = st.text(alphabet="abc", min_size=0, max_size=6)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["insert", "insert", "delete", "search"]), WORDS).map(list), max_size=120))
@example([["insert", "ab"], ["insert", "abc"], ["delete", "ab"], ["search", "abc"], ["delete", "abc"]])
def test_the_trie_answers_as_a_set_of_strings_does(ops):
    model: set = set()
    for op, answer, d in drive("trie", ops, keys="str"):
        assert answer == reference(op, model), op
        assert d.keys() == sorted(model)


SUM_OP = st.one_of(
    st.tuples(st.sampled_from(["insert", "delete", "search", "prefix"]), st.integers(0, U - 1)).map(list),
    st.tuples(st.just("add"), st.integers(0, U - 1), st.integers(-5, 9)).map(list),
    st.tuples(st.just("range"), st.integers(0, U - 1), st.integers(-3, U + 5)).map(list),
)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(SUM_OP, max_size=120), st.integers(1, U))
def test_fenwick_and_segment_tree_sum_as_a_plain_array_does(ops, universe):
    for name in ("fenwick", "segment_tree"):
        a = [0] * universe
        taken = 0
        for op, answer, d in drive(name, ops, universe=universe):
            taken += 1
            name_, i = op[0], op[1]
            if name_ == "insert":
                want, a[i] = a[i] == 0, a[i] or 1
            elif name_ == "delete":
                want, a[i] = a[i] != 0, 0
            elif name_ == "search":
                want = a[i] != 0
            elif name_ == "prefix":
                want = sum(a[: i + 1])
            elif name_ == "add":
                a[i] += op[2]
                want = a[i]
            else:
                want = sum(a[max(i, 0) : max(0, op[2] + 1)])
            assert answer == want, (name, op)
            assert d.a == a and d.size == sum(1 for x in a if x)
        assert taken == sum(1 for op in ops if op[1] < universe), name


def test_structures_skip_what_they_do_not_take():
    ops = [["insert", 5], ["search", 5], ["range", 1, 9], ["pop"], ["add", 3, 2], ["prefix", 4], ["insert", 99]]
    taken = {name: [op[0] for op, _, _ in drive(name, ops, universe=50)] for name in STRUCTURES}
    assert taken["binary_heap"] == ["insert", "pop", "insert"]
    assert taken["trie"] == ["insert", "search", "insert"]
    assert taken["fenwick"] == taken["segment_tree"] == ["insert", "search", "range", "add", "prefix"]  # 99 ≥ 50
    for name in ORDERED:
        assert taken[name] == ["insert", "search", "range", "pop", "insert"], name
    assert [op[0] for op, _, _ in drive("fenwick", [["insert", "abc"]], keys="str")] == []


def test_the_invariants_catch_a_broken_structure():
    def built(name: str, n: int = 20, **params):
        *_, (_, _, d) = drive(name, [["insert", k] for k in range(n)], **params)
        return d

    d = built("bst")
    d.root.key = 99
    with pytest.raises(AssertionError, match="symmetric order"):
        d.check_invariants()
    d = built("avl")
    d.root.h += 1
    with pytest.raises(AssertionError, match="stores height"):
        d.check_invariants()
    d = built("red_black")
    d.root.left.red = not d.root.left.red
    with pytest.raises(AssertionError, match="black nodes|red child"):
        d.check_invariants()
    d = built("b_tree", page_bytes=96)
    d.levels()[-1][0].keys.pop()
    with pytest.raises(AssertionError, match="half full|out of order|size wrong"):
        d.check_invariants()
    d = built("b_plus_tree", page_bytes=96)
    leaves = d.levels()[-1]
    leaves[0].next = leaves[2]
    with pytest.raises(AssertionError, match="chain|size wrong"):
        d.check_invariants()
    d = built("binary_heap")
    d.a[0], d.a[5] = d.a[5], d.a[0]
    with pytest.raises(AssertionError, match="less than its parent"):
        d.check_invariants()
    d = built("fenwick")
    d.t[4] += 1
    with pytest.raises(AssertionError, match=r"t\[4\]"):
        d.check_invariants()
    d = built("segment_tree")
    d.t[1] += 1
    with pytest.raises(AssertionError, match="sum of its halves"):
        d.check_invariants()
    *_, (_, _, d) = drive("trie", [["insert", "abc"]], keys="str")
    d.root.children["a"].children["b"].children["c"].end = False
    with pytest.raises(AssertionError, match="leads to no key|differ from size"):
        d.check_invariants()


# -- exact costs -------------------------------------------------------------------------------------
def test_sorted_keys_make_a_bst_a_path_and_balanced_trees_stay_under_their_bounds():
    n = 200
    ops = [["insert", k] for k in range(n)]
    *_, (_, _, bst) = drive("bst", ops, universe=n)
    assert bst.height() == n and bst.visits == n * (n - 1) // 2  # insert k walks past k nodes
    for name, bound in (("avl", lambda m: 1.4405 * _log2(m + 2) - 0.3277), ("red_black", lambda m: 2 * _log2(m + 1))):
        for _, _, d in drive(name, ops, universe=n):
            assert d.height() <= bound(d.size), (name, d.size)


def _log2(x: float) -> float:
    import math

    return math.log2(x)


def test_avl_rotates_at_most_once_per_insert_and_red_black_at_most_twice():
    rng = Random(5)
    keys = rng.sample(range(10_000), 500)
    for name, most in (("avl", 2), ("red_black", 2)):
        before = 0
        for _, _, d in drive(name, [["insert", k] for k in keys], universe=10_000):
            assert d.rotations - before <= most, name  # AVL: one fix (a double rotation is two)
            before = d.rotations


def test_a_trie_reads_one_node_a_character_whatever_it_holds():
    for n in (10, 300):
        rng = Random(n)
        words = {"".join(rng.choice("abcdefgh") for _ in range(5)) for _ in range(n)}
        ops = [["insert", w] for w in sorted(words)] + [["search", w] for w in sorted(words)]
        for op, _, d in drive("trie", ops, keys="str"):
            assert len(d.path) == 6, op  # the root and five characters


def test_a_fenwick_prefix_reads_one_entry_a_set_bit():
    d = None
    for i in range(100):
        *_, (_, answer, d) = drive("fenwick", [["prefix", i]], universe=100)
        assert len(d.path) == bin(i + 1).count("1") and answer == 0


def test_b_tree_pages_fit_the_page_size():
    *_, (_, _, d) = drive("b_tree", [["insert", 1]], page_bytes=4096)
    assert (d.inner_max, d.inner_min) == (169, 84)  # (4096 − 24) // 24 = 169 = 2t − 1, t = 85
    *_, (_, _, d) = drive("b_plus_tree", [["insert", 1]], page_bytes=4096)
    assert (d.inner_max, d.leaf_max) == (254, 254)  # (4096 − 24) // 16: no values in inner pages
    from sims.core.limits import InputError

    with pytest.raises(InputError, match="page_bytes = 96"):
        list(drive("b_tree", [["insert", 1]], page_bytes=96, key_bytes=64))


# -- the panel on the virtual clock ------------------------------------------------------------------
def make(name: str, ops: list, **params):
    topic = registry.load_topic("trees")
    cls = registry.get_policy("trees", name)
    full = registry.resolve_params(dict(topic.panel_params) | dict(cls.PARAMS), params, "test")
    ev = {"t": 0.0, "kind": "ops", "ops": ops, "universe": 100, "keys": "int"}
    panel = topic.make_panel(name, name, full, PanelContext(3, 60.0, [ev], name))
    panel.on_event(ev)
    return panel


@pytest.mark.parametrize("name", STRUCTURES)
def test_every_step_has_a_line_a_sentence_and_a_view(name):
    p = {
        "keys": "random",
        "n": 40,
        "universe": 100,
        "length": 4,
        "alphabet": 4,
        "searches": 20,
        "hit": 0.5,
        "deletes": 30,
        "ranges": 5,
        "width": 20,
        "pops": 5,
        "adds": 5,
        "prefixes": 5,
        "interleave": True,
    }
    panel = make(name, operations(p, Random(2)))
    lines, seen = len(panel.algo.PSEUDOCODE), set()
    while (t := panel.next_time()) is not None:
        panel.advance(t)
        panel.check_invariants()
        view = panel.view()
        if panel.done:
            break
        assert view["kind"] == "tree" and view["narration"] and view["op"], view
        assert 0 <= view["line"] < lines, view
        assert all(0 <= i < len(view["nodes"]) for i in view["path"]), view
        seen.add(view["line"])
        json.dumps(view)
    assert panel.done and len(seen) >= 3, seen
    m = panel.metrics()
    assert m["visits_max"] <= m["visits"] and m["done"] == 1


def test_steps_say_which_way_they_went():
    panel = make("bst", [["insert", 5], ["insert", 3], ["search", 3]])
    said = []
    while (t := panel.next_time()) is not None:
        panel.advance(t)
        if not panel.done:
            said.append(panel.view()["narration"])
    assert said == [
        "insert 5: a new leaf, the root",
        "3 < 5: go left",
        "insert 3: a new leaf, left of 5",
        "3 < 5: go left",
        "3 = 3: here",
        "search 3: found after 2 nodes",
    ]


def test_seek_back_replays_to_the_same_state():
    sc = Scenario(presets.load("trees-random-keys"), checkpoint_every=2.0)
    sc.advance(7.3)
    want = (sc.metrics(), sc.views())
    sc.advance(20.0)
    sc.seek(7.3)
    assert (sc.metrics(), sc.views()) == want
    twin = copy.deepcopy(sc.panels["avl"])
    assert twin.metrics() == sc.panels["avl"].metrics() and twin.view() == sc.panels["avl"].view()


def test_an_unedited_copy_of_a_structure_gives_the_same_numbers():
    from sims.core import editpanel, userpolicy
    from sims.core.policysource import policy_source

    for name in ("trees-random-keys", "trees-range-scan"):
        p = presets.load(name)
        sc = Scenario(p, duration=10.0)
        added = [
            (s.name, editpanel.add_edited(sc, userpolicy.load(policy_source("trees", s.policy), "trees"), p, s.name))
            for s in p.panels
        ]
        sc.run()
        assert not editpanel.stops(sc)
        for base, edited in added:
            assert sc.metrics()[edited] == sc.metrics()[base], base
