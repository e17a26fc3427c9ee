"""The graph panel: one algorithm stepping over the stream's graph on the virtual clock.

The graph arrives as one stream event (``kind = "graph"``); ``sims.steps.StepPanel`` takes one
step of the algorithm every ``1 / speed`` virtual seconds from its time on, and replays steps for
checkpoints. This panel builds the search state and reads it out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sims.graphs.base import Query
from sims.graphs.graph import INF, Graph, Search
from sims.steps import Step, StepPanel

MAX_DRAWN_EDGES = 2500  # above this the view leaves the edges out
MAX_MATRIX = 40  # all-pairs matrices up to this many nodes are drawn
MAX_WEIGHTED_EDGES = 30  # edges up to this many are drawn with their weights


class GraphPanel(StepPanel):
    topic = "graphs"
    INPUT = "graph"

    def __init__(self, name: str, params: dict, ctx, algo) -> None:
        super().__init__(name, params, ctx, algo)
        self.g: Graph | None = None
        self.s: Search | None = None

    def start(self, ev: dict) -> Iterator[Step]:
        g = self.g = Graph({**ev, "directed": False} if self.params.get("undirected") else ev)
        self.s = Search(g)
        a, p = self.algo, self.params
        src = g.node(p["source"], "source") if p["source"] else g.source
        dst = g.node(p["target"], "target") if p["target"] else g.target
        if a.needs_target and dst < 0:
            raise ValueError(f"{a.policy_name} needs a target node")
        if a.needs_source and src < 0:
            raise ValueError(f"{a.policy_name} needs a source node")
        self.s.frontier_kind = a.frontier_kind
        return a.run(g, self.s, Query(src, dst, p["stop_at_target"]))

    # -- reading ------------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        self._ready()
        s = self.s
        if s is None:
            return dict.fromkeys(METRICS, 0)
        comps = s.components() if s.uf_parent is not None else []
        return {
            "expanded": s.expanded,
            "relaxed": s.relaxed,
            "max_frontier": s.max_frontier,
            "path_cost": s.path_cost,
            "path_len": max(0, len(s.path) - 1),
            "heap_ops": s.heap_ops,
            "comparisons": s.comparisons,
            "dist_peak": s.dist_peak,
            "found": s.found,
            "negative_cycle": s.negative_cycle,
            "steps": self.steps,
            "done": 1 if self.done else 0,
            "rounds": s.rounds,
            "tree_weight": s.tree_weight,
            "tree_edges": len(s.tree),
            "order_len": len(s.order),
            "cycle_len": max(0, len(s.cycle) - 1),
            "components": len(comps),
            "finds": s.finds,
            "ops_per_find": s.find_hops / s.finds if s.finds else 0.0,
            "max_depth": s.uf_depth(),
        }

    def view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "graph", **self.step_view()}
        g, s = self.g, self.s
        if g is None or s is None:
            return out
        out.update(
            n=g.n,
            names=g.names if g.n <= 60 else [],
            xs=g.xs,
            ys=g.ys,
            layout=g.layout,
            directed=g.directed,
            frontier_kind=s.frontier_kind,
            visit=[s.visit.get(v, -1) for v in range(g.n)],
            frontier=s.frontier_nodes(),
            edge=list(s.edge) if s.edge else None,
            path=s.path,
            tree=[[u, v] for u, v, _ in s.tree],
            order=s.order,
            cycle=s.cycle,
            source=self._source(),
            target=self._target(),
        )
        if g.layout != "grid" and len(g.edges) <= MAX_DRAWN_EDGES:  # a grid's cells say enough
            out["edges"] = [[u, v] for u, v, _ in g.edges]
            if len(g.edges) <= MAX_WEIGHTED_EDGES and any(w != 1 for _, _, w in g.edges):
                out["weights"] = [w for _, _, w in g.edges]
        if s.side is not None:
            out["sides"] = s.side
        if s.missing:
            out["missing"] = [list(pair) for pair in s.missing]
        if s.uf_parent is not None:
            out["parents"] = s.uf_parent
        if s.matrix is not None and g.n <= MAX_MATRIX:
            out["matrix"] = [[None if d == INF else d for d in row] for row in s.matrix]
            out["k"] = s.k
        return out

    def _source(self) -> int:
        p, g = self.params, self.g
        return g.index.get(p["source"], -1) if p["source"] else g.source

    def _target(self) -> int:
        p, g = self.params, self.g
        return g.index.get(p["target"], -1) if p["target"] else g.target

    def check_invariants(self) -> None:
        self._ready()
        if self.s is not None:
            self.s.check_invariants()


METRICS = (
    "expanded relaxed max_frontier path_cost path_len heap_ops comparisons dist_peak found negative_cycle "
    "steps done rounds tree_weight tree_edges order_len cycle_len components finds ops_per_find max_depth"
).split()
