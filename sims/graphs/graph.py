"""The mechanism: the graph (read-only), and the search state every algorithm works on — the
frontier, the distance table, the visit order, the tree or path — which owns the invariants.

Nodes are numbered 0..n-1 in the order the graph event lists them; names are strings and appear
only in narration and output. ``out[u]`` lists ``(v, w)`` in edge order (an undirected edge is
listed in both directions), so every walk of the graph is deterministic.
"""

from __future__ import annotations

from heapq import heappop, heappush

from sims.core.panel import Shared

INF = float("inf")


class Graph(Shared):
    """Named nodes with optional coordinates, weighted directed edges. Never changes once built."""

    __slots__ = ("names", "index", "xs", "ys", "edges", "out", "inn", "directed", "source", "target", "layout")

    def __init__(self, ev: dict) -> None:
        self.names: list[str] = [str(nd[0]) for nd in ev["nodes"]]
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        if len(self.index) != len(self.names):
            raise ValueError("graph: a node name appears twice")
        self.xs = [nd[1] for nd in ev["nodes"]]  # coordinates: A*'s heuristics and the drawing
        self.ys = [nd[2] for nd in ev["nodes"]]
        self.directed = bool(ev.get("directed", True))
        n = len(self.names)
        self.edges: list[tuple[int, int, int | float]] = []  # as given: an undirected edge once
        self.out: list[list[tuple[int, int | float]]] = [[] for _ in range(n)]
        self.inn: list[list[tuple[int, int | float]]] = [[] for _ in range(n)]
        for u, v, w in ev["edges"]:
            a, b = self.index[str(u)], self.index[str(v)]
            self.edges.append((a, b, w))
            self.out[a].append((b, w))
            self.inn[b].append((a, w))
            if not self.directed:
                self.out[b].append((a, w))
                self.inn[a].append((b, w))
        self.source = self.index.get(str(ev.get("source", "")), 0 if n else -1)
        self.target = self.index.get(str(ev.get("target", "")), -1)
        self.layout = ev.get("layout", "points")  # "grid": one cell per node (the renderer's hint)

    @property
    def n(self) -> int:
        return len(self.names)

    def arcs(self) -> list[tuple[int, int, int | float]]:
        """Every directed arc u→v in adjacency order (an undirected edge twice)."""
        return [(u, v, w) for u in range(self.n) for v, w in self.out[u]]

    def node(self, name: str, what: str) -> int:
        if name not in self.index:
            shown = ", ".join(self.names[:5]) + (", ..." if self.n > 5 else "")
            raise ValueError(f"{what} {name!r} is not a node of the graph (nodes: {shown})")
        return self.index[name]


class Entry:
    """A heap entry ordered by (key, seq): the sequence number breaks ties in push order. Every
    comparison is counted, so heap and sort costs are measured rather than estimated."""

    __slots__ = ("key", "seq", "node", "item", "s")

    def __init__(self, key, seq: int, node: int, item, s: Search) -> None:
        self.key = key
        self.seq = seq
        self.node = node  # the node this entry would settle
        self.item = item  # what else the algorithm needs back (an edge for Prim and Kruskal)
        self.s = s

    def __lt__(self, other: Entry) -> bool:
        self.s.comparisons += 1
        return self.key < other.key or (self.key == other.key and self.seq < other.seq)


class Search:
    """The state of one run: what the panel shows and the metrics count.

    ``dist`` is the distance table (its peak size is ``dist_peak``); ``visit[v]`` is v's place
    in the visit order; ``frontier`` is the algorithm's open container (queue, stack or heap of
    ``Entry``); ``settled`` holds each settled node's final distance, which must never change.
    """

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.dist: dict[int, int | float] = {}
        self.parent: dict[int, int] = {}
        self.visit: dict[int, int] = {}  # node -> its place in the visit (expansion) order
        self.frontier: list | None = None  # a list used as a queue, stack or heap
        self.frontier_kind = ""  # "queue" | "stack" | "heap"
        self.edge: tuple[int, int] | None = None  # the edge being considered now
        self.path: list[int] = []
        self.tree: list[tuple[int, int, int | float]] = []  # MST edges, in the order accepted
        self.settled: dict[int, int | float] = {}  # Dijkstra: node -> distance when settled
        self.monotone = False  # Bellman-Ford: distances may only fall
        self._last: dict[int, int | float] = {}
        self.matrix: list[list] | None = None  # all-pairs algorithms: dist[i][j]
        self.k = -1  # Floyd-Warshall's round (intermediate node allowed), or the current source
        self.order: list[int] = []  # topological order
        self.cycle: list[int] = []  # a cycle found (topological sort, Bellman-Ford)
        self.side: list[int] | None = None  # two-colouring: each node's colour (0, 1; -1: not yet)
        self.missing: list[tuple[int, int]] = []  # the complete check: pairs of nodes with no edge
        self.uf_parent: list[int] | None = None  # Union-Find's parent pointers
        self.uf_rank: list[int] | None = None
        self.finds = 0
        self.find_hops = 0  # parent pointers followed, summed over finds
        self.unions = 0
        self.seq = 0
        self.expanded = 0
        self.relaxed = 0
        self.heap_ops = 0
        self.comparisons = 0
        self.max_frontier = 0
        self.dist_peak = 0
        self.rounds = 0
        self.found = 0
        self.negative_cycle = 0
        self.path_cost: int | float = 0
        self.tree_weight: int | float = 0

    # -- the distance table and the frontier -----------------------------------------------------
    def set_dist(self, v: int, d) -> None:
        self.dist[v] = d
        if len(self.dist) > self.dist_peak:
            self.dist_peak = len(self.dist)

    def expand(self, u: int) -> None:
        self.visit[u] = len(self.visit)
        self.expanded += 1

    def grew(self) -> None:
        """Note the frontier's size after a push."""
        if self.frontier is not None and len(self.frontier) > self.max_frontier:
            self.max_frontier = len(self.frontier)

    def push(self, heap: list, key, node: int, item=None) -> None:
        self.seq += 1
        heappush(heap, Entry(key, self.seq, node, item, self))
        self.heap_ops += 1
        self.grew()

    def pop(self, heap: list) -> Entry:
        self.heap_ops += 1
        return heappop(heap)

    def trace_path(self, src: int, dst: int) -> list[int]:
        """The path src … dst along parent pointers (empty when dst was not reached)."""
        if dst not in self.dist and dst != src:
            return []
        path = [dst]
        while path[-1] != src:
            p = self.parent.get(path[-1])
            if p is None or len(path) > self.g.n:
                return []
            path.append(p)
        path.reverse()
        return path

    def finish_path(self, src: int, dst: int) -> None:
        if dst < 0:
            return
        self.path = self.trace_path(src, dst)
        self.found = 1 if self.path else 0
        self.path_cost = self.dist[dst] if self.path else 0

    # -- the invariants ---------------------------------------------------------------------------
    def check_invariants(self) -> None:
        n = self.g.n
        assert sorted(self.visit.values()) == list(range(len(self.visit))), "visit order has gaps"
        assert all(0 <= v < n for v in self.visit), "a visited node outside the graph"
        assert len(self.dist) <= self.dist_peak, "the distance table outgrew its recorded peak"
        if self.frontier is not None:
            assert len(self.frontier) <= self.max_frontier, "frontier larger than its recorded peak"
        for v, d in self.settled.items():
            assert self.dist[v] == d, f"settled {self.g.names[v]} changed from {d} to {self.dist[v]}"
        if self.monotone:
            for v, d in self.dist.items():
                assert d <= self._last.get(v, INF), f"dist[{self.g.names[v]}] rose to {d}"
            self._last = dict(self.dist)
        assert len(self.tree) <= max(0, n - 1), "a spanning tree with n or more edges"
        if self.tree:
            roots = list(range(n))

            def root(x: int) -> int:
                while roots[x] != x:
                    x = roots[x]
                return x

            for u, v, _ in self.tree:
                ru, rv = root(u), root(v)
                assert ru != rv, "the tree closes a cycle"
                roots[ru] = rv
        if self.side is not None and not self.cycle:  # no odd cycle found yet: a proper colouring so far
            adj = {(u, v) for u, v, _ in self.g.edges}
            for u, v in adj:
                if self.side[u] >= 0 and self.side[u] == self.side[v] and u in self.visit and v in self.visit:
                    raise AssertionError(f"{self.g.names[u]}–{self.g.names[v]}: one colour on both ends, unreported")
        if self.uf_parent is not None:
            parent, rank = self.uf_parent, self.uf_rank
            for v in range(n):
                x, hops = v, 0
                while parent[x] != x:
                    x = parent[x]
                    hops += 1
                    assert hops <= n, "Union-Find's parent pointers form a cycle"
                if rank is not None and parent[v] != v:
                    assert rank[parent[v]] > rank[v], "a child's rank is not below its parent's"

    # -- reading ----------------------------------------------------------------------------------
    def uf_depth(self) -> int:
        """The deepest node's number of parent hops to its root."""
        if self.uf_parent is None:
            return 0
        parent, depth = self.uf_parent, [-1] * self.g.n
        best = 0
        for v in range(self.g.n):
            chain = []
            x = v
            while depth[x] < 0 and parent[x] != x:
                chain.append(x)
                x = parent[x]
            d = 0 if parent[x] == x and depth[x] < 0 else depth[x]
            depth[x] = d
            for y in reversed(chain):
                d += 1
                depth[y] = d
            best = max(best, depth[v])
        return best

    def components(self) -> list[list[int]]:
        """Union-Find's sets (node numbers), each sorted, in order of their first member."""
        if self.uf_parent is None:
            return []
        groups: dict[int, list[int]] = {}
        for v in range(self.g.n):
            x = v
            while self.uf_parent[x] != x:
                x = self.uf_parent[x]
            groups.setdefault(x, []).append(v)
        return sorted(groups.values())

    def frontier_nodes(self) -> list[int]:
        """The nodes in the frontier now (heap entries already settled are left out)."""
        if not self.frontier:
            return []
        out = []
        for item in self.frontier:
            v = item.node if isinstance(item, Entry) else (item[0] if isinstance(item, tuple) else item)
            if v not in self.settled and (self.frontier_kind != "heap" or v not in self.visit):
                out.append(v)
        return out
