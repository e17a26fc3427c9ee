"""Single-source search: BFS, DFS, Dijkstra, Bellman-Ford and A* with four heuristics.

Each is one generator over ``Search``; the step it yields names the pseudocode line it ran.
Dijkstra keeps a binary heap with lazy deletion: a node is pushed again when its distance falls,
and an entry popped for a node already settled is skipped. Settled nodes are never relaxed again,
which is why a negative edge into a settled node leaves its distance wrong.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from math import sqrt

from sims.core.registry import Param, register_policy
from sims.graphs.base import Algorithm, Query, Step
from sims.graphs.graph import INF, Graph, Search


@register_policy("graphs", "bfs")
class BFS(Algorithm):
    """What can I reach, in the fewest edges? A FIFO queue: nodes leave in order of depth."""

    frontier_kind = "queue"
    PSEUDOCODE = (
        "queue ← [s]; depth[s] ← 0",
        "while the queue is not empty:",
        "  u ← dequeue (oldest first); stop if u = target",
        "  for each edge u→v:",
        "    if v unseen: depth[v] ← depth[u] + 1; enqueue v",
        "return depth (in edges) and the path",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        queue: deque[int] = deque([q.source])
        s.frontier = queue
        s.set_dist(q.source, 0)
        s.grew()
        yield 0, "depth[{}] = 0: {} is queued", (name[q.source], name[q.source])
        while queue:
            u = queue.popleft()
            s.expand(u)
            if u == q.target and q.stop_at_target:
                s.finish_path(q.source, u)
                yield 2, "dequeued {} at depth {}: the target, stop", (name[u], s.dist[u])
                return
            yield 2, "dequeued {} at depth {}", (name[u], s.dist[u])
            for v, _ in g.out[u]:
                s.edge = (u, v)
                s.relaxed += 1
                if v in s.dist:
                    yield 4, "{}→{}: {} already seen", (name[u], name[v], name[v])
                    continue
                s.set_dist(v, s.dist[u] + 1)
                s.parent[v] = u
                queue.append(v)
                s.grew()
                yield 4, "{}→{}: {} first seen at depth {}, queued", (name[u], name[v], name[v], s.dist[v])
        s.edge = None
        s.finish_path(q.source, q.target)
        yield 5, "queue empty: {} nodes reached", (len(s.dist),)


@register_policy("graphs", "dfs")
class DFS(Algorithm):
    """What can I reach, going deep first? A LIFO stack: the newest branch is followed first."""

    frontier_kind = "stack"
    PSEUDOCODE = (
        "stack ← [s]",
        "while the stack is not empty:",
        "  u ← pop (newest first); skip if visited",
        "  mark u visited; stop if u = target",
        "  for each edge u→v (pushed last first, so the first is explored first):",
        "    if v unvisited: push v (its parent: u)",
        "return depth (edges along the path found) and the path",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        stack: list[tuple[int, int]] = [(q.source, -1)]
        s.frontier = stack
        s.grew()
        yield 0, "{} is pushed", (name[q.source],)
        while stack:
            u, p = stack.pop()
            if u in s.visit:
                yield 2, "popped {}: already visited", (name[u],)
                continue
            s.expand(u)
            if p >= 0:
                s.parent[u] = p
            s.set_dist(u, s.dist[p] + 1 if p >= 0 else 0)
            if u == q.target and q.stop_at_target:
                s.finish_path(q.source, u)
                yield 3, "visited {} at depth {}: the target, stop", (name[u], s.dist[u])
                return
            yield 3, "visited {} at depth {}", (name[u], s.dist[u])
            for v, _ in reversed(g.out[u]):
                s.edge = (u, v)
                s.relaxed += 1
                if v in s.visit:
                    yield 5, "{}→{}: {} already visited", (name[u], name[v], name[v])
                    continue
                stack.append((v, u))
                s.grew()
                yield 5, "{}→{}: {} pushed", (name[u], name[v], name[v])
        s.edge = None
        s.finish_path(q.source, q.target)
        yield 6, "stack empty: {} nodes reached", (len(s.dist),)


@register_policy("graphs", "dijkstra")
class Dijkstra(Algorithm):
    """Cheapest route with non-negative weights: settle the nearest unsettled node, relax its edges."""

    frontier_kind = "heap"
    PSEUDOCODE = (
        "dist[s] ← 0; push (0, s)",
        "while the heap is not empty:",
        "  (d, u) ← pop the minimum; skip if u is settled (lazy deletion)",
        "  settle u: dist[u] is final; stop if u = target",
        "  for each edge u→v (w):",
        "    if v unsettled and d + w < dist[v]: dist[v] ← d + w; push (dist[v], v)",
        "return dist and the path",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        heap: list = []
        s.frontier = heap
        s.set_dist(q.source, 0)
        s.push(heap, 0, q.source)
        yield 0, "dist[{}] = 0: {} enters the heap", (name[q.source], name[q.source])
        while heap:
            u = s.pop(heap).node
            if u in s.settled:
                yield 2, "popped a stale entry for {}: already settled, skipped", (name[u],)
                continue
            d = s.dist[u]
            s.settled[u] = d
            s.expand(u)
            if u == q.target and q.stop_at_target:
                s.finish_path(q.source, u)
                yield 3, "settled {} at {}: the target, stop", (name[u], d)
                return
            yield 3, "settled {} at {}", (name[u], d)
            for v, w in g.out[u]:
                s.edge = (u, v)
                s.relaxed += 1
                if v in s.settled:
                    yield 5, "{}→{}: {} is settled, never relaxed again", (name[u], name[v], name[v])
                    continue
                old = s.dist.get(v, INF)
                if d + w < old:
                    s.set_dist(v, d + w)
                    s.parent[v] = u
                    s.push(heap, d + w, v)
                    yield 5, "relaxed {}→{}: {} < {}, {} enters the heap", (name[u], name[v], d + w, old, name[v])
                else:
                    yield 5, "{}→{}: {} ≥ {}, no change", (name[u], name[v], d + w, old)
        s.edge = None
        s.finish_path(q.source, q.target)
        yield 6, "heap empty: {} nodes settled", (len(s.settled),)


@register_policy("graphs", "bellman_ford")
class BellmanFord(Algorithm):
    """Cheapest route with negative weights: relax every edge, round after round; a relaxation
    in round n proves a negative cycle."""

    PSEUDOCODE = (
        "dist[s] ← 0",
        "repeat up to n − 1 rounds (stop early after a round that changes nothing):",
        "  for each edge u→v (w):",
        "    if dist[u] + w < dist[v]: dist[v] ← dist[u] + w",
        "round n: an edge that still relaxes ⇒ a negative cycle",
        "return dist and the path",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        s.monotone = True
        s.set_dist(q.source, 0)
        s.expand(q.source)
        yield 0, "dist[{}] = 0", (name[q.source],)
        arcs = g.arcs()
        for r in range(1, g.n + 1):
            s.rounds = r
            last = r == g.n
            changed = 0
            for u, v, w in arcs:
                s.edge = (u, v)
                s.relaxed += 1
                du = s.dist.get(u, INF)
                old = s.dist.get(v, INF)
                if du == INF or not du + w < old:
                    yield (
                        (4 if last else 3),
                        "round {}: {}→{}: {} + {} ≥ {}, no change",
                        (r, name[u], name[v], du, w, old),
                    )
                    continue
                if last:
                    s.negative_cycle = 1
                    s.parent[v] = u
                    s.cycle = _cycle_through(s, v, g.n)
                    s.edge = None
                    yield (
                        4,
                        "round {}: {}→{} still relaxes: a negative cycle ({})",
                        (
                            r,
                            name[u],
                            name[v],
                            " → ".join(name[x] for x in s.cycle),
                        ),
                    )
                    return
                changed += 1
                s.set_dist(v, du + w)
                s.parent[v] = u
                if v not in s.visit:
                    s.expand(v)
                yield 3, "round {}: relaxed {}→{}: {} < {}", (r, name[u], name[v], du + w, old)
            if not changed:
                break
        s.edge = None
        s.finish_path(q.source, q.target)
        yield 5, "no change in round {}: distances are final", (s.rounds,)


def _cycle_through(s: Search, v: int, n: int) -> list[int]:
    """The cycle on v's parent chain: walk back n steps to land on it, then go round once."""
    for _ in range(n):
        v = s.parent.get(v, v)
    cycle = [v]
    x = s.parent.get(v, v)
    while x != v and len(cycle) <= n:
        cycle.append(x)
        x = s.parent.get(x, v)
    cycle.append(v)
    cycle.reverse()
    return cycle


class AStar(Algorithm):
    """Fastest path to that goal: Dijkstra ordered by g + h, where h estimates what is left.
    An admissible h (never above the true remainder) keeps the path optimal."""

    frontier_kind = "heap"
    needs_target = True
    needs_coords = True
    PARAMS = {
        "h_scale": Param(float, 1.0, "cost per unit of coordinate distance (the least weight per unit)", min=0, max=1e6)
    }
    PSEUDOCODE = (
        "g[s] ← 0; push (h(s), s)",
        "while the open heap is not empty:",
        "  u ← pop the lowest f = g + h; skip if closed (lazy deletion)",
        "  close u; stop if u = target",
        "  for each edge u→v (w):",
        "    if v not closed and g[u] + w < g[v]: g[v] ← g[u] + w; push (g[v] + h(v), v)",
        "return g and the path",
    )

    def __init__(self, h_scale: float = 1.0) -> None:
        self.h_scale = h_scale

    def h(self, g: Graph, v: int, t: int) -> float:
        raise NotImplementedError

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name, t = g.names, q.target
        heap: list = []
        s.frontier = heap
        s.set_dist(q.source, 0)
        s.push(heap, self.h(g, q.source, t), q.source)
        yield 0, "g[{}] = 0, h = {}: {} enters the heap", (name[q.source], self.h(g, q.source, t), name[q.source])
        while heap:
            u = s.pop(heap).node
            if u in s.visit:
                yield 2, "popped a stale entry for {}: already closed, skipped", (name[u],)
                continue
            d = s.dist[u]
            s.expand(u)
            if u == t:
                s.finish_path(q.source, u)
                yield 3, "closed {} at g = {}: the target, stop", (name[u], d)
                return
            yield 3, "closed {} at g = {} (f = {})", (name[u], d, d + self.h(g, u, t))
            for v, w in g.out[u]:
                s.edge = (u, v)
                s.relaxed += 1
                if v in s.visit:
                    yield 5, "{}→{}: {} is closed", (name[u], name[v], name[v])
                    continue
                old = s.dist.get(v, INF)
                if d + w < old:
                    s.set_dist(v, d + w)
                    s.parent[v] = u
                    hv = self.h(g, v, t)
                    s.push(heap, d + w + hv, v)
                    yield (
                        5,
                        "relaxed {}→{}: g = {} < {}, f = {}: {} enters the heap",
                        (
                            name[u],
                            name[v],
                            d + w,
                            old,
                            d + w + hv,
                            name[v],
                        ),
                    )
                else:
                    yield 5, "{}→{}: {} ≥ {}, no change", (name[u], name[v], d + w, old)
        s.edge = None
        s.finish_path(q.source, t)
        yield 6, "open heap empty: {} unreachable", (name[t],)


@register_policy("graphs", "astar_manhattan")
class AStarManhattan(AStar):
    """h = |dx| + |dy|: exact on an open 4-neighbour grid of unit cost, admissible on any such grid."""

    def h(self, g: Graph, v: int, t: int) -> float:
        return (abs(g.xs[v] - g.xs[t]) + abs(g.ys[v] - g.ys[t])) * self.h_scale


@register_policy("graphs", "astar_euclidean")
class AStarEuclidean(AStar):
    """h = straight-line distance: admissible wherever an edge costs at least its length."""

    def h(self, g: Graph, v: int, t: int) -> float:
        dx, dy = g.xs[v] - g.xs[t], g.ys[v] - g.ys[t]
        return sqrt(dx * dx + dy * dy) * self.h_scale


@register_policy("graphs", "astar_zero")
class AStarZero(AStar):
    """h = 0: A* becomes Dijkstra, node for node."""

    needs_coords = False

    def h(self, g: Graph, v: int, t: int) -> float:
        return 0


@register_policy("graphs", "astar_inadmissible")
class AStarInadmissible(AStar):
    """h = inflate × Manhattan: overestimates, so A* rushes at the goal and may miss the cheap route."""

    PARAMS = {
        **AStar.PARAMS,
        "inflate": Param(float, 3.0, "factor over the Manhattan distance (> 1 overestimates)", min=0, max=1e6),
    }

    def __init__(self, h_scale: float = 1.0, inflate: float = 3.0) -> None:
        super().__init__(h_scale)
        self.inflate = inflate

    def h(self, g: Graph, v: int, t: int) -> float:
        return (abs(g.xs[v] - g.xs[t]) + abs(g.ys[v] - g.ys[t])) * self.h_scale * self.inflate
