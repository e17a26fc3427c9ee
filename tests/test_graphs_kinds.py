"""Graph kinds: the two-colouring and the pair check against networkx on Hypothesis graphs, the
``kinds`` workload drawing each kind with its defining property, the ``undirected`` panel
parameter, the kind presets' statements on five seeds, and the new algorithms' concept content."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from random import Random

import networkx as nx
import pytest
from budget import examples
from conceptcheck import check_concept
from hypothesis import given, settings
from hypothesis import strategies as st
from test_graphs import random_graph, sizes, to_nx

from sims.core import presets
from sims.core.scenario import Scenario
from sims.graphs.kindgraphs import KINDS, kinds_graph
from sims.graphs.trace import replay

ROOT = Path(__file__).resolve().parents[1]
KIND_PRESETS = [f"graphs-kind-{k}" for k in KINDS]


def simple(ev: dict) -> nx.Graph:
    """The event's graph with every edge read both ways and loops dropped, as both checks read it."""
    g = nx.Graph()
    g.add_nodes_from(nd[0] for nd in ev["nodes"])
    g.add_edges_from((u, v) for u, v, _ in ev["edges"] if u != v)
    return g


@settings(max_examples=examples(150), deadline=None)
@given(sizes((1, 16)))
def test_the_two_colouring_agrees_with_networkx_and_proves_its_answer(case):
    seed, n, m, directed = case
    ev = random_graph(seed, n, min(m, n * (n - 1) // 2), directed=directed)
    g = simple(ev)
    res = replay("bipartite_bfs", ev)
    assert res["bipartite"] == nx.is_bipartite(g)
    if res["bipartite"]:
        a, b = (set(s) for s in res["sides"])
        assert a | b == set(g) and not a & b and all((u in a) != (v in a) for u, v in g.edges)
    else:
        cyc = res["cycle"]
        assert cyc[0] == cyc[-1] and (len(cyc) - 1) % 2 == 1 and len(set(cyc[:-1])) == len(cyc) - 1
        assert all(g.has_edge(u, v) for u, v in zip(cyc, cyc[1:], strict=False))


@settings(max_examples=examples(100), deadline=None)
@given(sizes((1, 12)), st.booleans())
def test_the_pair_check_names_exactly_the_missing_pairs(case, full):
    seed, n, m, directed = case
    ev = random_graph(seed, n, n * (n - 1) // 2 if full else min(m, n * (n - 1) // 2), directed=False)
    g = simple(ev)
    res = replay("complete_check", ev)
    missing = {frozenset(p) for p in nx.complement(g).edges}
    assert {frozenset(p) for p in res["missing"]} == missing
    assert res["pairs"] == n * (n - 1) // 2 and res["complete"] == (not missing)


@pytest.mark.parametrize("seed", range(20))
def test_each_kind_is_drawn_with_its_defining_property(seed):
    drawn = {}
    for kind in KINDS:
        p = {"n": 3 + seed % 10, "graph_kind": kind, "edges": 4 + seed % 12, "max_weight": 9, "odd_edge": False}
        ev = {"t": 0.0, "kind": "graph", **kinds_graph(p, Random(seed))}
        drawn[kind] = ev
        g = to_nx(ev)
        n = len(ev["nodes"])
        if kind == "directed":
            assert len(nx.descendants(g, ev["source"])) + 1 < n  # some node out of reach along the arrows
            assert nx.is_connected(g.to_undirected())
        elif kind == "dag":
            assert nx.is_directed_acyclic_graph(g) and g.in_degree(ev["source"]) == 0
        elif kind == "cyclic":
            assert not nx.is_directed_acyclic_graph(g)
            assert any(d == 0 for _, d in g.in_degree)  # Kahn's algorithm still orders something
        elif kind == "complete":
            assert g.number_of_edges() == n * (n - 1) // 2
        elif kind == "bipartite":
            assert nx.is_bipartite(g) and nx.is_connected(g)
        elif kind in ("weighted", "unweighted") and ev["target"]:
            hops = nx.shortest_path_length(g, ev["source"], ev["target"])
            cheap = nx.dijkstra_path(g, ev["source"], ev["target"])
            if kind == "weighted" and g.number_of_edges() >= n:  # a cycle: a cheaper longer route exists
                assert (
                    min(len(p) - 1 for p in nx.all_shortest_paths(g, ev["source"], ev["target"], weight="weight"))
                    > hops
                )
            if kind == "unweighted":
                assert len(cheap) - 1 == hops and {w for *_, w in ev["edges"]} == {1}
    assert [nd[:3] for nd in drawn["directed"]["nodes"]] == [nd[:3] for nd in drawn["complete"]["nodes"]]
    odd = {"n": 6, "graph_kind": "bipartite", "edges": 8, "max_weight": 9, "odd_edge": True}
    assert not nx.is_bipartite(to_nx({**kinds_graph(odd, Random(seed)), "directed": False}))


def test_the_undirected_parameter_reads_every_edge_both_ways():
    p = presets.load("graphs-kind-directed")
    sc = Scenario(p).run()
    ev = sc.events[0]
    g = to_nx(ev)
    m = sc.metrics()
    assert m["bfs"]["expanded"] == len(nx.descendants(g, ev["source"])) + 1
    assert m["both_ways"]["expanded"] == len(nx.node_connected_component(g.to_undirected(), ev["source"]))


@pytest.mark.every_seed("k")
@pytest.mark.parametrize("k", range(5))
def test_kind_presets_exact_statements(k):
    def run(name: str) -> dict:
        p = presets.load(name)
        return Scenario(p, p.seed + k).run().metrics()

    m = run("graphs-kind-weighted")
    assert m["dijkstra"]["path_len"] > m["bfs"]["path_len"]
    m = run("graphs-kind-unweighted")
    assert m["dijkstra"]["path_len"] == m["bfs"]["path_len"] and m["bfs"]["heap_ops"] == 0
    m = run("graphs-kind-complete")
    assert m["complete_check"]["relaxed"] == 8 * 7 // 2 and m["bipartite_bfs"]["cycle_len"] == 3
    m = run("graphs-kind-dag")
    assert m["topo_kahn"]["order_len"] == 8 and m["both_ways"]["order_len"] == 0
    m = run("graphs-kind-cyclic")
    assert m["topo_dfs"]["cycle_len"] >= 2 and 1 <= m["topo_kahn"]["order_len"] < 8
    m = run("graphs-kind-undirected")
    assert m["bfs"]["expanded"] == 8 and m["topo_kahn"]["order_len"] == 0


@pytest.mark.parametrize("name", ["bipartite_bfs", "complete_check"])
def test_the_new_algorithms_have_concept_content_whose_steps_hold(name):
    check_concept("graphs", name)


def test_trace_shapes_of_the_checks(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("a b 1\nb c 1\nc a 1\n")

    def cli(algo: str) -> dict:
        out = subprocess.run(
            [sys.executable, "-m", "sims", "trace", "graphs", "--algorithm", algo, "--trace", str(f), "--json"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    assert cli("bipartite_bfs") == {"algorithm": "bipartite_bfs", "bipartite": False, "cycle": ["b", "a", "c", "b"]}
    assert cli("complete_check") == {"algorithm": "complete_check", "complete": True, "pairs": 3, "missing": []}
    f.write_text("a b 1\nb c 1\n")
    assert cli("bipartite_bfs")["sides"] == [["a", "c"], ["b"]]
    assert cli("complete_check")["missing"] == [["a", "c"]]
