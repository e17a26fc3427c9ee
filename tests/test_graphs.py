"""Graphs: every algorithm against networkx on many seeded random graphs, the presets' claims
beyond their [site.claim], step narration, invariants after every step, and the trace command."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from random import Random

import networkx as nx
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import presets, registry
from sims.core.panel import PanelContext
from sims.core.scenario import Scenario
from sims.graphs.panel import GraphPanel
from sims.graphs.trace import replay

ROOT = Path(__file__).resolve().parents[1]
SEEDS = st.integers(0, 2**32 - 1)


def random_graph(seed: int, n: int, m: int, *, directed: bool, lo: int = 1, hi: int = 9, distinct=False) -> dict:
    """A graph event: n nodes with coordinates, m random edges (no self-loops or repeats)."""
    rng = Random(seed)
    nodes = [[f"n{i}", rng.randrange(100), rng.randrange(100)] for i in range(n)]
    pairs = set()
    edges = []
    while len(edges) < m:
        u, v = rng.randrange(n), rng.randrange(n)
        key = (u, v) if directed else (min(u, v), max(u, v))
        if u == v or key in pairs:
            continue
        pairs.add(key)
        edges.append([f"n{u}", f"n{v}", rng.randint(lo, hi)])
    if distinct:
        ws = list(range(1, m + 1))
        rng.shuffle(ws)
        for e, w in zip(edges, ws, strict=True):
            e[2] = w
    return {"t": 0.0, "kind": "graph", "nodes": nodes, "edges": edges, "directed": directed}


def to_nx(ev: dict):
    g = nx.DiGraph() if ev["directed"] else nx.Graph()
    g.add_nodes_from(nd[0] for nd in ev["nodes"])
    for u, v, w in ev["edges"]:
        g.add_edge(u, v, weight=w)
    return g


def sizes(draw_n=(2, 25)):
    return st.tuples(SEEDS, st.integers(*draw_n), st.integers(0, 60), st.booleans())


def _edges(n: int, m: int, directed: bool) -> int:
    return min(m, n * (n - 1) // (1 if directed else 2))


# -- differential tests against networkx ------------------------------------------------------------
@settings(max_examples=examples(150), deadline=None)
@given(sizes())
def test_shortest_distances_match_networkx(case):
    seed, n, m, directed = case
    ev = random_graph(seed, n, _edges(n, m, directed), directed=directed)
    g = to_nx(ev)
    want = nx.single_source_dijkstra_path_length(g, "n0")
    for algo in ("dijkstra", "bellman_ford"):
        assert replay(algo, ev, "n0")["dist"] == want, algo
    hops = nx.single_source_shortest_path_length(g, "n0")
    assert replay("bfs", ev, "n0")["dist"] == hops
    dfs = replay("dfs", ev, "n0")["dist"]
    assert set(dfs) == set(hops) and all(dfs[v] >= hops[v] for v in hops)
    target = f"n{n - 1}"
    res = replay("dijkstra", ev, "n0", target)
    if target in want:
        path = res["path"]
        assert path[0] == "n0" and path[-1] == target
        assert nx.path_weight(g, path, "weight") == want[target]
    for h in ("astar_zero", "astar_manhattan", "astar_euclidean"):
        # coordinates in 0..99 and weights >= 1: scale the heuristic so it cannot overestimate
        ev_h = {**ev, "nodes": [[nd[0], nd[1] // 100, nd[2] // 100] for nd in ev["nodes"]]}
        r = replay(h, ev_h, "n0", target)
        if target in want:
            assert nx.path_weight(g, r["path"], "weight") == want[target], h
        else:
            assert "path" not in r or r["path"] == []


@settings(max_examples=examples(100), deadline=None)
@given(sizes((2, 15)), st.booleans())
def test_bellman_ford_with_negative_edges_matches_networkx(case, plant_cycle):
    seed, n, m, _ = case
    ev = random_graph(seed, n, _edges(n, m, True), directed=True, lo=-4, hi=9)
    if plant_cycle and n >= 3:
        ev["edges"] += [["n0", "n1", 1], ["n1", "n2", 1], ["n2", "n0", -9]]
        ev["edges"] = list({(u, v): [u, v, w] for u, v, w in ev["edges"]}.values())
    g = to_nx(ev)
    res = replay("bellman_ford", ev, "n0")
    reach = nx.descendants(g, "n0") | {"n0"}
    negative = nx.negative_edge_cycle(g.subgraph(reach).copy(), weight="weight")
    assert bool(res.get("negative_cycle")) == negative
    if negative:
        cyc = res["cycle"]
        assert cyc[0] == cyc[-1] and nx.path_weight(g, cyc, "weight") < 0
    else:
        assert res["dist"] == nx.single_source_bellman_ford_path_length(g, "n0")
    fw = replay("floyd_warshall", ev)
    if not nx.negative_edge_cycle(g, weight="weight"):
        want = dict(nx.floyd_warshall(g))
        assert fw["dist"] == {u: {v: d for v, d in row.items() if d != float("inf")} for u, row in want.items()}
    else:
        assert fw.get("negative_cycle")


@settings(max_examples=examples(150), deadline=None)
@given(sizes((1, 30)), st.booleans())
def test_spanning_trees_and_components_match_networkx(case, distinct):
    seed, n, m, _ = case
    ev = random_graph(seed, n, _edges(n, m, False), directed=False, distinct=distinct)
    g = to_nx(ev)
    want = nx.minimum_spanning_tree(g).size(weight="weight")
    k, p = replay("kruskal", ev), replay("prim", ev)
    assert k["weight"] == p["weight"] == want
    assert len(k["edges"]) == len(p["edges"]) == n - nx.number_connected_components(g)
    if distinct:
        assert {frozenset(e[:2]) for e in k["edges"]} == {frozenset(e[:2]) for e in p["edges"]}
    comps = sorted(sorted(c) for c in nx.connected_components(g))
    for rank in (True, False):
        for compress in (True, False):
            res = _run_uf(ev, rank, compress)
            assert res == comps


def _run_uf(ev: dict, rank: bool, compress: bool) -> list[list[str]]:
    panel = _panel("union_find", ev, rank=rank, compress=compress)
    panel.run_to_end()
    names = panel.g.names
    return sorted(sorted(names[v] for v in c) for c in panel.s.components())


@settings(max_examples=examples(150), deadline=None)
@given(sizes((1, 25)), st.booleans())
def test_topological_sorts_match_networkx(case, acyclic):
    seed, n, m, _ = case
    ev = random_graph(seed, n, _edges(n, m, True), directed=True)
    if acyclic:  # keep only edges that go up the node numbering
        ev["edges"] = [e for e in ev["edges"] if int(e[0][1:]) < int(e[1][1:])]
    g = to_nx(ev)
    dag = nx.is_directed_acyclic_graph(g)
    for algo in ("topo_kahn", "topo_dfs"):
        res = replay(algo, ev)
        if dag:
            order = res["order"]
            assert sorted(order) == sorted(g.nodes)
            pos = {v: i for i, v in enumerate(order)}
            assert all(pos[u] < pos[v] for u, v in g.edges), algo
        else:
            cyc = res["cycle"]
            assert cyc[0] == cyc[-1] and len(cyc) >= 2
            assert all(g.has_edge(a, b) for a, b in zip(cyc, cyc[1:], strict=False)), (algo, cyc)


@settings(max_examples=examples(60), deadline=None)
@given(sizes((1, 14)))
def test_floyd_warshall_and_repeated_dijkstra_match_networkx(case):
    seed, n, m, directed = case
    ev = random_graph(seed, n, _edges(n, m, directed), directed=directed)
    want = {u: {v: d for v, d in row.items() if d != float("inf")} for u, row in nx.floyd_warshall(to_nx(ev)).items()}
    assert replay("floyd_warshall", ev)["dist"] == want
    assert replay("dijkstra_all", ev)["dist"] == want


# -- the presets' claims beyond their [site.claim] --------------------------------------------------
def _final(name: str, seed_offset: int = 0) -> Scenario:
    p = presets.load(name)
    sc = Scenario(p, p.seed + seed_offset)
    sc.run()
    return sc


@pytest.mark.parametrize("k", range(5))
def test_astar_zero_is_dijkstra_node_for_node(k):
    sc = _final("graphs-grid-astar", k)
    d, z = sc.panels["dijkstra"], sc.panels["astar_zero"]
    assert d.s.visit == z.s.visit and d.s.path == z.s.path
    costs = {name: p.s.path_cost for name, p in sc.panels.items()}
    assert len(set(costs.values())) == 1, costs  # admissible heuristics: the same cost
    assert sc.panels["astar_manhattan"].s.expanded < d.s.expanded


@pytest.mark.parametrize("k", range(5))
def test_inadmissible_heuristic_returns_a_costlier_path(k):
    m = _final("graphs-inadmissible", k).metrics()
    assert m["astar_inadmissible"]["path_cost"] > m["astar_manhattan"]["path_cost"]
    assert m["astar_inadmissible"]["expanded"] < m["astar_manhattan"]["expanded"]


@pytest.mark.parametrize("name", ["graphs-mst-sparse", "graphs-mst-dense"])
def test_kruskal_and_prim_build_the_same_tree(name):
    for k in range(5):
        sc = _final(name, k)
        trees = [{frozenset((u, v)) for u, v, _ in p.s.tree} for p in sc.panels.values()]
        assert trees[0] == trees[1]
        m = sc.metrics()
        assert m["kruskal"]["tree_weight"] == m["prim"]["tree_weight"]
        assert m["kruskal"]["comparisons"] != m["prim"]["comparisons"]


def test_floyd_warshall_and_repeated_dijkstra_fill_the_same_matrix():
    for k in range(5):
        sc = _final("graphs-all-pairs", k)
        assert sc.panels["dijkstra_all"].s.matrix == sc.panels["floyd_warshall"].s.matrix


def test_negative_edges_fool_dijkstra_by_the_trap():
    for k in range(5):
        m = _final("graphs-negative-edges", k).metrics()
        assert m["dijkstra"]["path_cost"] > m["bellman_ford"]["path_cost"]
        assert m["bellman_ford"]["negative_cycle"] == 0
        mc = _final("graphs-negative-cycle", k).metrics()
        assert mc["bellman_ford"]["negative_cycle"] == 1 and mc["dijkstra"]["negative_cycle"] == 0


def test_union_find_without_rank_or_compression_builds_deep_trees():
    m = _final("graphs-union-find").metrics()
    assert m["naive"]["max_depth"] > 10 * m["rank_compress"]["max_depth"]
    assert len({v["components"] for v in m.values()}) == 1


def test_bfs_finds_the_shortest_way_out_of_the_maze():
    for k in range(5):
        sc = _final("graphs-maze", k)
        ev = sc.events[0]
        want = nx.shortest_path_length(to_nx(ev), ev["source"], ev["target"])
        m = sc.metrics()
        assert m["bfs"]["path_len"] == want <= m["dfs"]["path_len"]
        assert m["bfs"]["found"] == m["dfs"]["found"] == 1


# -- every algorithm steps with narration; invariants after every step -----------------------------
def _panel(algo: str, ev: dict, **params) -> GraphPanel:
    topic = registry.load_topic("graphs")
    cls = registry.get_policy("graphs", algo)
    given = {"source": ev.get("source", ""), "target": ev.get("target", "")} | params
    full = registry.resolve_params(dict(topic.panel_params) | dict(cls.PARAMS), given, "test")
    panel = topic.make_panel(algo, algo, full, PanelContext(0, 60.0, [ev], algo))
    panel.on_event(ev)
    return panel


@pytest.mark.parametrize("algo", sorted(registry.policies("graphs")))
def test_every_step_has_narration_and_a_pseudocode_line(algo):
    ev = random_graph(7, 12, 30, directed=algo not in ("kruskal", "prim", "union_find"))
    ev["source"], ev["target"] = "n0", "n11"
    panel = _panel(algo, ev)
    lines = len(type(panel.algo).PSEUDOCODE)
    seen = set()
    while (t := panel.next_time()) is not None:
        panel.advance(t)
        view = panel.view()
        assert view["narration"] and view["kind"] == "graph"
        assert 0 <= view["line"] < lines, view
        seen.add(view["line"])
        panel.check_invariants()
        json.dumps(view)
    assert panel.done and len(seen) >= 3
    assert panel.metrics()["done"] == 1


def test_dijkstra_narrates_a_relaxation():
    ev = {
        "t": 0.0,
        "kind": "graph",
        "nodes": [["A", 0, 0], ["B", 1, 0], ["D", 2, 0]],
        "edges": [["A", "B", 3], ["B", "D", 4]],
        "source": "A",
        "target": "D",
    }
    panel = _panel("dijkstra", ev)
    said = []
    while (t := panel.next_time()) is not None:
        panel.advance(t)
        said.append(panel.view()["narration"])
    assert "relaxed B→D: 7 < ∞, D enters the heap" in said
    assert said[-1] == "settled D at 7: the target, stop"


def test_the_invariants_catch_a_settled_distance_that_changes():
    ev = random_graph(3, 8, 20, directed=True)
    panel = _panel("dijkstra", ev, target="")
    panel.run_to_end()
    v = next(iter(panel.s.settled))
    panel.s.dist[v] += 1
    with pytest.raises(AssertionError, match="settled"):
        panel.check_invariants()
    uf = _panel("union_find", random_graph(3, 8, 10, directed=False))
    uf.run_to_end()
    uf.s.uf_parent[0], uf.s.uf_parent[1] = 1, 0
    with pytest.raises(AssertionError):
        uf.check_invariants()


def test_seek_back_replays_to_the_same_state():
    p = presets.load("graphs-grid-astar")
    sc = Scenario(p, checkpoint_every=2.0)
    sc.advance(9.3)
    want = (sc.metrics(), sc.views())
    sc.advance(20.0)
    sc.seek(9.3)
    assert (sc.metrics(), sc.views()) == want
    twin = copy.deepcopy(sc.panels["dijkstra"])
    assert twin.metrics() == sc.panels["dijkstra"].metrics()


def test_step_stops_at_every_algorithm_step():
    sc = Scenario(presets.load("graphs-maze"))
    sc.advance(1.0)
    before = sc.metrics()["bfs"]["steps"]
    sc.step()
    assert sc.metrics()["bfs"]["steps"] == before + 1


# -- contention trace graphs -----------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sims", "trace", "graphs", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_trace_command_shapes(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("# roads\nA B 1\nB C 2\nA C 5\nnode A 0 0\nnode B 1 0\nnode C 2 0\n")
    out = json.loads(
        _cli("--algorithm", "dijkstra", "--source", "A", "--target", "C", "--trace", str(f), "--json").stdout
    )
    assert out == {
        "algorithm": "dijkstra",
        "dist": {"A": 0, "B": 1, "C": 3},
        "path": ["A", "B", "C"],
        "expanded": 3,
        "relaxed": 3,
    }
    bfs = json.loads(_cli("--algorithm", "bfs", "--source", "A", "--trace", str(f), "--json").stdout)
    assert bfs["dist"] == {"A": 0, "B": 1, "C": 1} and "path" not in bfs
    mst = json.loads(_cli("--algorithm", "kruskal", "--trace", str(f), "--json").stdout)
    assert mst == {"algorithm": "kruskal", "weight": 3, "edges": [["A", "B", 1], ["B", "C", 2]]}
    topo = json.loads(_cli("--algorithm", "topo_kahn", "--trace", str(f), "--json").stdout)
    assert topo == {"algorithm": "topo_kahn", "order": ["A", "B", "C"]}
    f2 = tmp_path / "cyc.txt"
    f2.write_text("A B 1\nB A 1\nC D 1\n")
    assert json.loads(_cli("--algorithm", "topo_dfs", "--trace", str(f2), "--json").stdout)["cycle"] == ["A", "B", "A"]
    uf = json.loads(_cli("--algorithm", "union_find", "--trace", str(f2), "--json").stdout)
    assert uf == {"algorithm": "union_find", "components": [["A", "B"], ["C", "D"]]}
    fw = json.loads(_cli("--algorithm", "floyd_warshall", "--undirected", "--trace", str(f2), "--json").stdout)
    assert fw["dist"]["A"] == {"A": 0, "B": 1} and fw["dist"]["D"] == {"C": 1, "D": 0}


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("A B 1\nA B\n", ("--algorithm", "bfs", "--source", "A"), "g.txt:2: expected U V W"),
        ("A B x\n", ("--algorithm", "bfs", "--source", "A"), "g.txt:1: expected a finite weight W"),
        ("A B 1\nnode A 0\n", ("--algorithm", "bfs", "--source", "A"), "g.txt:2: expected node NAME X Y"),
        ("A B 1\n", ("--algorithm", "bfs"), "needs --source"),
        ("A B 1\n", ("--algorithm", "bfs", "--source", "Z"), "--source 'Z' is not a node"),
        ("A B 1\n", ("--algorithm", "astar_manhattan", "--source", "A", "--target", "B"), "no 'node NAME X Y' line"),
        ("A B 1\n", ("--algorithm", "nope"), "unknown graphs policy 'nope'"),
    ],
)
def test_trace_command_refuses_bad_input_in_one_line(tmp_path, text, args, message):
    f = tmp_path / "g.txt"
    f.write_text(text)
    res = _cli(*args, "--trace", str(f))
    assert res.returncode == 2, res
    assert message in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@settings(max_examples=examples(80), deadline=None)
@given(
    st.lists(st.text(alphabet="ABn ode0123456789.-e\t#x", max_size=14), max_size=8),
    st.sampled_from(sorted(registry.policies("graphs"))),
)
def test_random_lines_exit_0_or_2_in_one_line(rows, algo):
    import tempfile

    from sims import cli as cli_mod

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "g.txt"
        f.write_text("\n".join(rows))
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = cli_mod.main(
                ["trace", "graphs", "--algorithm", algo, "--source", "A", "--target", "B", "--trace", str(f)]
            )
        assert rc in (0, 2)
        if rc == 2:
            assert len(err.getvalue().strip().splitlines()) == 1 and "Traceback" not in err.getvalue()


def test_dev_zero_is_refused_with_its_line():
    res = _cli("--algorithm", "bfs", "--source", "A", "--trace", "/dev/zero")
    assert res.returncode == 2 and "/dev/zero:1: line longer than" in res.stderr


def test_the_invariants_catch_a_bellman_ford_distance_that_rises():
    ev = random_graph(5, 10, 30, directed=True)
    panel = _panel("bellman_ford", ev, target="")
    for _ in range(40):
        panel.advance(panel.next_time())
        panel.check_invariants()
    v = next(iter(panel.s.dist))
    panel.s.dist[v] += 1
    with pytest.raises(AssertionError, match="rose"):
        panel.check_invariants()


def test_the_renderer_draws_every_preset_view_under_node(tmp_path):
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    views = {}
    for name in presets.preset_names():
        p = presets.load(name)
        if p.topic != "graphs":
            continue
        sc = Scenario(p)
        for t in (0.0, p.duration / 7, p.duration):
            sc.advance(t)
            views[f"{name}@{t}"] = sc.views()
    f = tmp_path / "views.json"
    f.write_text(json.dumps(views))
    res = subprocess.run(
        [node, str(ROOT / "tests" / "node" / "render_views.mjs"), "graphs", "graph", str(f)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1])["calls"] > 1000
