"""The graph panel: one algorithm stepping over the stream's graph on the virtual clock.

The graph arrives as one stream event (``kind = "graph"``); from its time on the algorithm takes
one step every ``1 / speed`` virtual seconds, so play, step (``next_time``) and seek work as in
every topic. The algorithm is a generator, which cannot be copied: a checkpoint records how many
steps were taken, and the copy replays them (deterministically) the first time it is used.
"""

from __future__ import annotations

from typing import Any

from sims.core.panel import Panel
from sims.graphs.base import Query, narrate
from sims.graphs.graph import INF, Graph, Search

MAX_DRAWN_EDGES = 2500  # above this the view leaves the edges out
MAX_MATRIX = 40  # all-pairs matrices up to this many nodes are drawn


class GraphPanel(Panel):
    topic = "graphs"

    def __init__(self, name: str, params: dict, ctx, algo) -> None:
        super().__init__(name, params, ctx)
        if not params["speed"] > 0:
            raise ValueError(f"speed must be > 0 steps per second, got {params['speed']!r}")
        self.algo = algo
        self.speed = params["speed"]
        self.g: Graph | None = None
        self.s: Search | None = None
        self.gen = None
        self.ev: dict | None = None
        self.t0 = 0.0
        self.steps = 0
        self.done = False
        self.last = None  # the latest step: (line, template, args)
        self._pending = 0  # steps a checkpoint copy still has to replay

    # -- checkpoints --------------------------------------------------------------------------------
    def __deepcopy__(self, memo: dict) -> GraphPanel:
        new = GraphPanel(self.name, self.params, self.ctx, self.algo)
        memo[id(self)] = new
        if self.ev is not None:
            new.ev, new.t0 = self.ev, self.t0
            new._pending = self.steps + self._pending
        return new

    def _ready(self) -> None:
        if self.ev is not None and self.gen is None:
            n = self._pending
            self._pending = 0
            self._start(self.ev)
            for _ in range(n):
                self._step()

    # -- driving ------------------------------------------------------------------------------------
    def _start(self, ev: dict) -> None:
        g = self.g = Graph(ev)
        self.s = Search(g)
        a, p = self.algo, self.params
        src = g.node(p["source"], "source") if p["source"] else g.source
        dst = g.node(p["target"], "target") if p["target"] else g.target
        if a.needs_target and dst < 0:
            raise ValueError(f"{a.policy_name} needs a target node")
        if a.needs_source and src < 0:
            raise ValueError(f"{a.policy_name} needs a source node")
        self.s.frontier_kind = a.frontier_kind
        self.gen = a.run(g, self.s, Query(src, dst, p["stop_at_target"]))
        self.steps, self.done, self.last = 0, False, None

    def _step(self) -> None:
        try:
            self.last = next(self.gen)
            self.steps += 1
        except StopIteration:
            self.done = True

    def on_event(self, ev: dict) -> None:
        if ev.get("kind") == "graph":
            self.ev, self.t0 = ev, ev["t"]
            self._pending = 0
            self._start(ev)

    def advance(self, until: float) -> None:
        self._ready()
        while self.gen is not None and not self.done and self.t0 + (self.steps + 1) / self.speed <= until:
            self._step()

    def next_time(self) -> float | None:
        self._ready()
        if self.gen is None or self.done:
            return None
        return self.t0 + (self.steps + 1) / self.speed

    def run_to_end(self) -> None:
        """Every remaining step at once (``contention trace``)."""
        self._ready()
        while self.gen is not None and not self.done:
            self._step()

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
        self._ready()
        a = self.algo
        out: dict[str, Any] = {
            "kind": "graph",
            "algorithm": a.policy_name,
            "pseudocode": list(a.PSEUDOCODE),
            "line": self.last[0] if self.last else -1,
            "narration": narrate(self.last),
            "steps": self.steps,
            "done": self.done,
        }
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
