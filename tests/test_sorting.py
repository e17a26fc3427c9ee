"""Sorting: every sort against ``sorted`` (and the stable ones against a stable reference) on
Hypothesis inputs, the invariants after every step, the counts each algorithm must make, the
presets' exact statements beyond their [site.claim], the panel's clock and checkpoints, the
renderer and the concept pages' steps. Timsort against list.sort: tests/test_sorting_timsort.py;
``contention trace sorting``: tests/test_sorting_trace.py."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from random import Random

import pytest
from budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sims.core import presets, registry
from sims.core.panel import PanelContext
from sims.core.scenario import Scenario
from sims.sorting.array import SortState
from sims.sorting.trace import replay

ROOT = Path(__file__).resolve().parents[1]
ALGOS = sorted(registry.policies("sorting"))
VARIANTS = [
    (name, {k: v}) for name in ALGOS for k, p in registry.get_policy("sorting", name).PARAMS.items() for v in p.choices
] + [("radix", {"base": 2}), ("radix", {"base": 256}), ("bucket", {"buckets": 3})]
KEYS = st.lists(st.integers(-50, 50), max_size=60) | st.lists(st.integers(0, 3), max_size=60)


def make(algo: str, keys: list, **params):
    """A panel of ``algo`` that has received ``keys`` (its range as the workload declares it)."""
    topic = registry.load_topic("sorting")
    cls = registry.get_policy("sorting", algo)
    full = registry.resolve_params(dict(topic.panel_params) | dict(cls.PARAMS), params, "test")
    ev = {"t": 0.0, "kind": "array", "keys": keys, "lo": min(keys, default=0), "hi": max(keys, default=0)}
    panel = topic.make_panel(algo, algo, full, PanelContext(3, 60.0, [ev], algo))
    panel.on_event(ev)
    return panel


def stable_order(keys: list) -> list[int]:
    """The tags (input positions) in the order a stable sort leaves them."""
    return sorted(range(len(keys)), key=keys.__getitem__)


def inversions(keys: list) -> int:
    return sum(1 for i in range(len(keys)) for j in range(i + 1, len(keys)) if keys[j] < keys[i])


# -- differential tests ------------------------------------------------------------------------------
@settings(max_examples=examples(60), deadline=None)
@given(KEYS)
@example([2, 1, 2, 1, 2, 1])
@example(list(range(30, 0, -1)))
def test_every_sort_sorts_and_the_stable_ones_keep_equal_keys_in_order(keys):
    for algo, params in VARIANTS:
        panel = make(algo, keys, **params)
        panel.run_to_end()
        s = panel.s
        assert [k for k, _ in s.a] == sorted(keys), (algo, params)
        tags = [t for _, t in s.a]
        assert s.is_stable() == (tags == stable_order(keys)), (algo, params)  # the metric measures it
        if panel.algo.stable:
            assert tags == stable_order(keys), (algo, params)
        m = panel.metrics()
        assert m["sorted"] == 1 and m["done"] == 1 and m["stable"] == int(s.is_stable())
        if not panel.algo.comparison_sort:
            assert m["comparisons"] == 0, (algo, params)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=40))
def test_the_comparison_sorts_and_bucket_sort_decimal_keys(keys):
    for algo in ALGOS:
        if registry.get_policy("sorting", algo).integer_keys:
            continue
        panel = make(algo, keys)
        panel.run_to_end()
        assert [k for k, _ in panel.s.a] == sorted(keys), algo


@pytest.mark.parametrize(("algo", "params"), VARIANTS)
def test_the_invariants_hold_after_every_step(algo, params):
    keys = [Random(k).randrange(6) for k in range(23)] + [9, 0, 9]
    panel = make(algo, keys, **params)
    lines = len(panel.algo.PSEUDOCODE)
    seen = set()
    while (t := panel.next_time()) is not None:
        panel.advance(t)
        panel.check_invariants()
        view = panel.view()
        assert view["kind"] == "bars" and view["narration"], view
        assert 0 <= view["line"] < lines, view
        seen.add(view["line"])
        json.dumps(view)
    assert panel.done and len(seen) >= 2 and panel.metrics()["sorted"] == 1


def test_the_invariants_catch_a_lost_item_and_a_step_that_is_no_comparison_or_write():
    panel = make("insertion", [3, 1, 2])
    panel.run_to_end()
    panel.s.a[0] = panel.s.a[1]
    with pytest.raises(AssertionError, match="lost or copied"):
        panel.check_invariants()
    panel = make("heap", [3, 1, 2])
    panel.run_to_end()
    panel.steps += 1
    with pytest.raises(AssertionError, match="no comparison, write or tally"):
        panel.check_invariants()
    s = SortState([5, 6])
    s.a[0] = (7, 0)
    with pytest.raises(AssertionError, match="no input item"):
        s.check_invariants()


# -- what each algorithm costs, exactly --------------------------------------------------------------
@settings(max_examples=examples(60), deadline=None)
@given(KEYS)
def test_the_counts_each_algorithm_must_make(keys):
    n = len(keys)
    run = {}
    for algo in ALGOS:
        panel = make(algo, keys)
        panel.run_to_end()
        run[algo] = panel.metrics()
    assert run["selection"]["comparisons"] == n * (n - 1) // 2
    assert run["insertion"]["comparisons"] == (n - 1 if n else 0) + inversions(keys) - _kept_at_front(keys)
    assert run["bubble"]["swaps"] == inversions(keys)  # one swap per inversion
    for algo in ("merge", "heap", "quick", "timsort", "bubble", "selection", "insertion"):
        assert run[algo]["tallies"] == 0, algo
    for algo in ("counting", "radix"):
        assert run[algo]["comparisons"] == 0 and run[algo]["swaps"] == 0, algo
    span = max(keys, default=0) - min(keys, default=0)
    assert run["radix"]["passes"] == max(1, len(str(span)) if span else 1)  # one per decimal digit
    assert run["counting"]["extra"] == (n + span + 1 if n else 0)
    if n > 1:
        log = (n - 1).bit_length()  # ⌈log2 n⌉
        assert run["merge"]["comparisons"] <= n * log
        assert run["merge"]["extra"] == n // 2


def _kept_at_front(keys: list) -> int:
    """Insertion sort makes no comparison for an item that must go to the very front after
    everything before it has shifted: its loop ends on j < 0. One fewer per such item."""
    return sum(1 for i in range(1, len(keys)) if all(keys[i] < k for k in keys[:i]))


@pytest.mark.parametrize("n", [1, 2, 50, 333])
def test_sorted_input_costs_n_minus_1_for_the_adaptive_sorts(n):
    keys = sorted(Random(n).randrange(n) for _ in range(n))
    for algo in ("timsort", "insertion", "bubble"):
        m = replay(algo, keys)
        assert m["comparisons"] == n - 1 and m["writes"] == 0, (algo, m)


def test_first_element_quicksort_on_distinct_sorted_keys_makes_n_squared_over_2_comparisons():
    n = 120
    first = make("quick", list(range(n)), pivot="first")
    first.run_to_end()
    assert first.metrics()["depth"] == n - 1
    # a range of m: i stops at once (1 compare), j walks down to the pivot (m compares)
    assert first.metrics()["comparisons"] == sum(m + 1 for m in range(2, n + 1))
    median = make("quick", list(range(n)), pivot="median3")
    median.run_to_end()
    assert median.metrics()["depth"] <= 8 and median.metrics()["comparisons"] < n * 8


def test_comparison_steps_say_which_way_they_went():
    panel = make("bubble", [7, 3])
    said = []
    while (t := panel.next_time()) is not None:
        panel.advance(t)
        if not panel.done:
            said.append(panel.view()["narration"])
    assert said == ["compare 7 > 3: swap", "swap: a[0] ← 3, holding 7", "a[1] ← 7: swapped"]
    assert panel.view()["cmp"] == [] and panel.view()["wrote"] == 1


# -- the presets' statements on five seeds -----------------------------------------------------------
@pytest.mark.every_seed("k")
@pytest.mark.parametrize("k", range(5))
def test_presets_exact_statements(k):
    p = presets.load("sorting-timsort-sorted")
    m = Scenario(p, p.seed + k).run().metrics()
    n = p.workload["n"]
    assert m["timsort"]["comparisons"] == n - 1 and m["timsort"]["writes"] == 0
    p = presets.load("sorting-no-comparisons")
    m = Scenario(p, p.seed + k).run().metrics()
    assert m["counting"]["comparisons"] == m["radix"]["comparisons"] == 0
    assert m["counting"]["sorted"] == m["radix"]["sorted"] == 1
    p = presets.load("sorting-quick-pivots")
    m = Scenario(p, p.seed + k).run().metrics()
    assert m["quick_first"]["depth"] > 10 * m["quick_median3"]["depth"]


@pytest.mark.parametrize("name", [n for n in presets.preset_names() if n.startswith("sorting-")])
def test_every_panel_finishes_sorted_by_the_end(name):
    m = Scenario(presets.load(name)).run().metrics()
    for panel, row in m.items():
        assert row["done"] == row["sorted"] == 1, (name, panel)


# -- the panel on the virtual clock ------------------------------------------------------------------
def test_seek_back_replays_to_the_same_state():
    sc = Scenario(presets.load("sorting-nearly-sorted"), checkpoint_every=2.0)
    sc.advance(7.3)
    want = (sc.metrics(), sc.views())
    sc.advance(30.0)
    sc.seek(7.3)
    assert (sc.metrics(), sc.views()) == want
    twin = copy.deepcopy(sc.panels["quick"])
    assert twin.metrics() == sc.panels["quick"].metrics() and twin.view() == sc.panels["quick"].view()


def test_a_random_pivot_replays_the_same_draws():
    p = presets.load("sorting-quick-pivots")
    a = Scenario(p).run().metrics()["quick_random"]
    sc = Scenario(p, checkpoint_every=1.0)
    sc.advance(1.5)
    sc.seek(0.7)
    assert sc.run().metrics()["quick_random"] == a


def test_step_stops_at_every_comparison_or_write():
    sc = Scenario(presets.load("sorting-race"))
    sc.advance(1.0)
    before = sc.metrics()["merge"]["steps"]
    sc.step()
    assert sc.metrics()["merge"]["steps"] == before + 1


def test_an_unedited_copy_of_a_sort_gives_the_same_numbers():
    from sims.core import editpanel, userpolicy
    from sims.core.policysource import policy_source

    p = presets.load("sorting-race")
    sc = Scenario(p, duration=30.0)
    added = [
        (
            spec.name,
            editpanel.add_edited(sc, userpolicy.load(policy_source("sorting", spec.policy), "sorting"), p, spec.name),
        )
        for spec in p.panels
    ]
    sc.run()
    assert not editpanel.stops(sc)
    for base, edited in added:
        assert sc.metrics()[edited] == sc.metrics()[base], base


def test_the_renderer_draws_every_preset_view_under_node(tmp_path):
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    views = {}
    for name in presets.preset_names():
        p = presets.load(name)
        if p.topic != "sorting":
            continue
        sc = Scenario(p)
        for t in (0.0, 0.43, 3.7, p.duration / 7, p.duration):
            sc.advance(t)
            views[f"{name}@{t}"] = sc.views()
    f = tmp_path / "views.json"
    f.write_text(json.dumps(views))
    res = subprocess.run(
        [node, str(ROOT / "tests" / "node" / "render_views.mjs"), "sorting", "bars", str(f)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1])["calls"] > 10000


# -- the concept pages' content (docs/concepts.md) ---------------------------------------------------
CONCEPTS = ROOT / "sims" / "sorting" / "concepts"


@pytest.mark.parametrize("name", ALGOS)
def test_every_sort_has_concept_content_whose_steps_hold(name):
    import tomllib

    c = tomllib.loads((CONCEPTS / f"{name}.toml").read_text(encoding="utf-8"))
    for key in ("title", "summary", "tags", "what", "how", "when", "pros", "cons", "figure"):
        assert c.get(key), (name, key)
    assert c["real"] and c["quiz"] and c["reading"] and len(c["steps"]) >= 3, name
    p = presets.load(c["figure"]["preset"])
    own = c["figure"]["panels"][0]
    assert set(c["figure"]["panels"]) <= set(p.panel_names()) and p.panels[p.panel_names().index(own)].policy == name
    for step in c["steps"]:
        action, expect = step["action"], step.get("expect")
        if expect is None:
            continue
        t = action["seek"] if "seek" in action else action["at"]
        sc = Scenario(p.with_overrides(action.get("set", {})))
        sc.advance(t)
        values = [sc.metrics()[q][expect["metric"]] for q in expect["panels"]]
        sign = 1 if expect["higher_is_better"] else -1
        assert all(sign * (a - b) >= expect.get("margin", 0) for a, b in zip(values, values[1:], strict=False)), (
            step["text"],
            values,
        )
