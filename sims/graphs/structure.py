"""Whole-graph algorithms: topological sort (Kahn, DFS), minimum spanning trees (Kruskal, Prim)
and all pairs (Floyd-Warshall, Dijkstra from every source). MST reads every edge as undirected.
Union-Find, which Kruskal uses, is in ``unionfind.py``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from heapq import heapify

from sims.core.registry import register_policy
from sims.graphs.base import Algorithm, Query, Step
from sims.graphs.graph import INF, Entry, Graph, Search
from sims.graphs.search import Dijkstra
from sims.graphs.unionfind import UnionFind


@register_policy("graphs", "topo_kahn")
class TopoKahn(Algorithm):
    """In what order? Repeatedly take a node nothing still points at (Kahn, 1962)."""

    kind = "order"
    frontier_kind = "queue"
    needs_source = False
    PSEUDOCODE = (
        "indegree[v] ← edges into v; queue ← every node of indegree 0",
        "while the queue is not empty:",
        "  u ← dequeue; append u to the order",
        "  for each edge u→v: indegree[v] ← indegree[v] − 1",
        "    if indegree[v] = 0: enqueue v",
        "nodes left over lie on a cycle or behind one",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        indeg = [len(g.inn[v]) for v in range(g.n)]
        queue = deque(v for v in range(g.n) if indeg[v] == 0)
        s.frontier = queue
        s.grew()
        yield 0, "{} nodes have no incoming edge: queued", (len(queue),)
        while queue:
            u = queue.popleft()
            s.expand(u)
            s.order.append(u)
            yield 2, "{} is next in the order (position {})", (name[u], len(s.order))
            for v, _ in g.out[u]:
                s.edge = (u, v)
                s.relaxed += 1
                indeg[v] -= 1
                if indeg[v] == 0:
                    queue.append(v)
                    s.grew()
                    yield 4, "{}→{}: {} has no unmet dependency left, queued", (name[u], name[v], name[v])
                else:
                    yield 3, "{}→{}: {} still waits on {}", (name[u], name[v], name[v], indeg[v])
        s.edge = None
        if len(s.order) < g.n:
            s.cycle = _kahn_cycle(g, indeg)
            yield 5, "{} nodes never freed: cycle {}", (g.n - len(s.order), " → ".join(name[x] for x in s.cycle))
        else:
            s.found = 1
            yield 5, "all {} nodes ordered", (g.n,)


def _kahn_cycle(g: Graph, indeg: list[int]) -> list[int]:
    """A cycle among the nodes Kahn never freed: each has a predecessor that is also left."""
    left = [d > 0 for d in indeg]
    v = left.index(True)
    seen: dict[int, int] = {}
    walk = []
    while v not in seen:
        seen[v] = len(walk)
        walk.append(v)
        v = next(u for u, _ in g.inn[v] if left[u])
    cycle = walk[seen[v] :]
    cycle.reverse()  # walked backwards along edges
    return [*cycle, cycle[0]]


@register_policy("graphs", "topo_dfs")
class TopoDFS(Algorithm):
    """In what order? Depth first; a node is finished after everything it points at: the reversed
    finishing order is topological. Meeting a node still on the stack is a cycle."""

    kind = "order"
    frontier_kind = "stack"
    needs_source = False
    PSEUDOCODE = (
        "for each node s still white: dfs(s)",
        "dfs(u): colour u grey (on the stack)",
        "  for each edge u→v:",
        "    v grey ⇒ a back edge: a cycle",
        "    v white ⇒ dfs(v)",
        "  colour u black; put u in front of the order",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        colour = [0] * g.n  # 0 white, 1 grey, 2 black
        stack: list[tuple[int, int]] = []  # (node, index of its next edge)
        s.frontier = stack
        finished: list[int] = []
        for root in range(g.n):
            if colour[root]:
                continue
            colour[root] = 1
            s.expand(root)
            stack.append((root, 0))
            s.grew()
            yield 0, "start a depth-first walk at {}", (name[root],)
            while stack:
                u, i = stack[-1]
                if i == len(g.out[u]):
                    stack.pop()
                    colour[u] = 2
                    finished.append(u)
                    yield 5, "{} finished ({} of {})", (name[u], len(finished), g.n)
                    continue
                stack[-1] = (u, i + 1)
                v = g.out[u][i][0]
                s.edge = (u, v)
                s.relaxed += 1
                if colour[v] == 1:
                    at = next(k for k, (x, _) in enumerate(stack) if x == v)
                    s.cycle = [x for x, _ in stack[at:]] + [v]
                    s.order = []
                    s.edge = None
                    yield (
                        3,
                        "{}→{}: {} is on the stack, a cycle: {}",
                        (
                            name[u],
                            name[v],
                            name[v],
                            " → ".join(name[x] for x in s.cycle),
                        ),
                    )
                    return
                if colour[v] == 2:
                    yield 2, "{}→{}: {} already finished", (name[u], name[v], name[v])
                    continue
                colour[v] = 1
                s.expand(v)
                stack.append((v, 0))
                s.grew()
                yield 4, "{}→{}: descend into {}", (name[u], name[v], name[v])
        s.edge = None
        s.order = finished[::-1]
        s.found = 1
        yield 5, "all {} nodes finished: the order is the reverse finishing order", (g.n,)


@register_policy("graphs", "kruskal")
class Kruskal(Algorithm):
    """Connect everything for least cost: take edges lightest first, skipping any that would
    close a cycle (Union-Find). A binary heap of all edges, popped until the tree is complete."""

    kind = "tree"
    frontier_kind = "heap"
    needs_source = False
    PSEUDOCODE = (
        "heap ← every edge by weight (heapify); every node its own set",
        "while the tree has fewer than n − 1 edges and edges remain:",
        "  (w, u, v) ← pop the lightest edge",
        "  if find(u) ≠ find(v): union; add u–v to the tree",
        "  else: skip it, it would close a cycle",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        uf = UnionFind(s, rank=True, compress=True)
        heap = []
        for u, v, w in g.edges:
            s.seq += 1
            heap.append(Entry(w, s.seq, v, (u, v, w), s))
        heapify(heap)
        s.heap_ops += len(heap)
        s.frontier = heap
        s.grew()
        yield 0, "{} edges heapified", (len(heap),)
        while heap and len(s.tree) < g.n - 1:
            u, v, w = s.pop(heap).item
            s.edge = (u, v)
            s.relaxed += 1
            ru, rv = uf.find(u), uf.find(v)
            if ru == rv:
                yield 4, "{}–{} ({}): both ends already joined, skipped", (name[u], name[v], w)
                continue
            uf.link(ru, rv)
            _grow(s, u, v, w)
            yield 3, "{}–{} ({}) joins two trees: tree weight {}", (name[u], name[v], w, s.tree_weight)
        s.edge = None
        s.found = 1 if len(s.tree) == g.n - 1 else 0
        yield 1, "{} tree edges, weight {}", (len(s.tree), s.tree_weight)


def _grow(s: Search, u: int, v: int, w) -> None:
    s.tree.append((u, v, w))
    s.tree_weight += w
    for x in (u, v):
        if x not in s.visit:
            s.expand(x)


@register_policy("graphs", "prim")
class Prim(Algorithm):
    """Connect everything for least cost: grow one tree, always by the lightest edge leaving it
    (a binary heap of edges, lazy deletion). A disconnected graph gets a forest, one tree a part."""

    kind = "tree"
    frontier_kind = "heap"
    needs_source = False
    PSEUDOCODE = (
        "start at a node not yet in a tree: push its edges",
        "while the heap is not empty:",
        "  (w, u, v) ← pop the lightest edge; skip if v is already in the tree",
        "  add v and u–v to the tree",
        "  for each edge v→x with x outside the tree: push (w, v, x)",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        adj = [[] for _ in range(g.n)]
        for u, v, w in g.edges:
            adj[u].append((v, w))
            adj[v].append((u, w))
        heap: list = []
        s.frontier = heap
        inside = [False] * g.n
        for root in [q.source] + list(range(g.n)) if q.source >= 0 else range(g.n):
            if inside[root]:
                continue
            inside[root] = True
            s.expand(root)
            yield 0, "a tree starts at {}", (name[root],)
            for x, w in adj[root]:
                s.relaxed += 1
                s.push(heap, w, x, (root, x, w))
            while heap:
                u, v, w = s.pop(heap).item
                s.edge = (u, v)
                if inside[v]:
                    yield 2, "{}–{} ({}): {} is already in the tree, skipped", (name[u], name[v], w, name[v])
                    continue
                inside[v] = True
                _grow(s, u, v, w)
                yield (
                    3,
                    "{}–{} ({}) is the lightest edge out: {} joins, tree weight {}",
                    (
                        name[u],
                        name[v],
                        w,
                        name[v],
                        s.tree_weight,
                    ),
                )
                for x, wx in adj[v]:
                    s.relaxed += 1
                    if not inside[x]:
                        s.push(heap, wx, x, (v, x, wx))
        s.edge = None
        s.found = 1 if len(s.tree) == g.n - 1 else 0
        yield 1, "{} tree edges, weight {}", (len(s.tree), s.tree_weight)


@register_policy("graphs", "floyd_warshall")
class FloydWarshall(Algorithm):
    """Every pair at once: in round k, let paths pass through node k. Θ(n³) whatever the edges."""

    kind = "all_pairs"
    needs_source = False
    PSEUDOCODE = (
        "dist[i][j] ← w(i, j); dist[i][i] ← 0",
        "for k in nodes: (round k: paths may pass through k)",
        "  for i, for j:",
        "    if dist[i][k] + dist[k][j] < dist[i][j]: dist[i][j] ← dist[i][k] + dist[k][j]",
        "a negative dist[i][i] ⇒ a negative cycle",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name, n = g.names, g.n
        m = [[INF] * n for _ in range(n)]
        for i in range(n):
            m[i][i] = 0
        for u, v, w in g.arcs():
            if w < m[u][v]:
                m[u][v] = w
        s.matrix = m
        s.dist_peak = n * n
        yield 0, "{}×{} matrix from the edges", (n, n)
        for k in range(n):
            s.k = k
            s.expanded += 1
            s.rounds = k + 1
            mk = m[k]
            for i in range(n):
                mi = m[i]
                dik = mi[k]
                for j in range(n):
                    s.relaxed += 1
                    s.edge = (i, j)
                    via = dik + mk[j]
                    if via < mi[j]:
                        old = mi[j]
                        mi[j] = via
                        yield 3, "round {}: {}→{} via {}: {} < {}", (k + 1, name[i], name[j], name[k], via, old)
                    else:
                        yield 2, "round {}: {}→{} via {}: {} ≥ {}", (k + 1, name[i], name[j], name[k], via, mi[j])
        s.edge = None
        s.negative_cycle = 1 if any(m[i][i] < 0 for i in range(n)) else 0
        s.found = 1 - s.negative_cycle
        yield 4, "{} rounds done{}", (n, ": a negative cycle" if s.negative_cycle else "")


@register_policy("graphs", "dijkstra_all")
class DijkstraAll(Algorithm):
    """Every pair by Dijkstra from each source in turn: Θ(n (n + m) log n), far less than n³ on a
    sparse graph; wrong with negative weights."""

    kind = "all_pairs"
    frontier_kind = "heap"
    needs_source = False
    PSEUDOCODE = (
        "for each source s:",
        *("  " + line for line in Dijkstra.PSEUDOCODE),
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        n = g.n
        s.matrix = [[INF] * n for _ in range(n)]
        inner = Dijkstra()
        for src in range(n):
            s.k = src
            s.dist, s.settled, s.parent, s.visit = {}, {}, {}, {}
            yield 0, "Dijkstra from {} ({} of {})", (g.names[src], src + 1, n)
            for line, template, args in inner.run(g, s, Query(src, -1, False)):
                yield line + 1, template, args
            row = s.matrix[src]
            for v, d in s.dist.items():
                row[v] = d
            s.dist_peak = max(s.dist_peak, sum(1 for r in s.matrix for d in r if d != INF))
        s.found = 1
        yield 0, "{} sources done", (n,)
