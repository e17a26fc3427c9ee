"""The trees presets' exact statements beyond their [site.claim], on five seeds; every panel
finishing; the renderer drawing every preset's views under Node; the concept pages' content
(docs/concepts.md) with steps whose ``expect`` holds and quizzes whose ``answer`` wins."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from conceptcheck import check_concept

from sims.core import presets, registry
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
STRUCTURES = sorted(registry.policies("trees"))
TREES = [n for n in presets.preset_names() if presets.load(n).topic == "trees"]


def run(name: str, k: int = 0, **overrides) -> dict:
    p = presets.load(name)
    p = p.with_overrides(overrides) if overrides else p
    return Scenario(p, p.seed + k).run().metrics()


@pytest.mark.every_seed("k")
@pytest.mark.parametrize("k", range(5))
def test_presets_exact_statements(k):
    m = run("trees-sorted-keys", k)
    n = presets.load("trees-sorted-keys").workload["n"]
    assert m["bst"]["height"] == n  # a path: every key hangs to the right of the last
    assert m["avl"]["height"] <= 1.4405 * math.log2(n + 2) - 0.3277
    assert m["red_black"]["height"] <= 2 * math.log2(n + 1)
    m = run("trees-random-keys", k)
    n = presets.load("trees-random-keys").workload["n"]
    assert m["red_black"]["rotations"] / n < m["avl"]["rotations"] / n  # per insert, every insert taken
    assert m["avl"]["height"] < 1.4405 * math.log2(n + 2) - 0.3277 < m["bst"]["height"]
    assert m["red_black"]["height"] <= 2 * math.log2(n + 1)
    m = run("trees-range-scan", k)
    assert m["b_plus_tree"]["range_pages"] < m["b_tree"]["range_pages"]
    assert m["b_plus_tree"]["height"] <= m["b_tree"]["height"]
    m = run("trees-prefix-sums", k)
    assert m["fenwick"]["visits_max"] <= 2 * 9 and m["fenwick"]["visits_mean"] < m["segment_tree"]["visits_mean"]


@pytest.mark.every_seed("k")
@pytest.mark.parametrize("k", range(5))
def test_a_tries_cost_grows_with_key_length_not_with_the_number_of_keys(k):
    def cost(**o):
        m = run("trees-trie-keys", k, **o)
        return m["trie"]["visits_max"], m["avl"]["visits_max"]

    few, many = cost(**{"workload.n": 100}), cost(**{"workload.n": 1000})
    assert few[0] == many[0] == 5  # the root and four letters, for 100 words or 1,000
    assert many[1] > few[1]  # the AVL tree's path grows with log2 n
    longer = cost(**{"workload.length": 12, "workload.alphabet": 4})
    assert longer[0] == 13 > longer[1]  # twelve letters: now the trie reads more


@pytest.mark.parametrize("name", TREES)
def test_every_panel_takes_every_operation_by_the_end(name):
    p = presets.load(name)
    sc = Scenario(p).run()
    for panel, row in sc.metrics().items():
        assert row["done"] == 1, (name, panel)
        sc.panels[panel].check_invariants()


def test_the_renderer_draws_every_preset_view_under_node(tmp_path):
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    views = {}
    for name in TREES:
        p = presets.load(name)
        sc = Scenario(p)
        for t in (0.0, 0.43, 3.7, p.duration / 7, p.duration / 2, p.duration):
            sc.advance(t)
            views[f"{name}@{t}"] = sc.views()
    assert {v["shape"] for panels in views.values() for v in panels.values() if "shape" in v} == {
        "nodes",
        "pages",
        "ranges",
    }
    f = tmp_path / "views.json"
    f.write_text(json.dumps(views))
    res = subprocess.run(
        [node, str(ROOT / "tests" / "node" / "render_views.mjs"), "trees", "tree", str(f)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1])["calls"] > 10000


# -- the concept pages' content (docs/concepts.md) ---------------------------------------------------
@pytest.mark.parametrize("name", STRUCTURES)
def test_every_structure_has_concept_content_whose_steps_hold(name):
    check_concept("trees", name)
