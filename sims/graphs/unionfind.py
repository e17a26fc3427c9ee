"""Union-Find with switchable union by rank and path compression: the structure (``UnionFind``,
which Kruskal also uses) and the ``union_find`` algorithm that shows it. Every edge reads as
undirected.
"""

from __future__ import annotations

from collections.abc import Iterator

from sims.core.registry import Param, register_policy
from sims.graphs.base import Algorithm, Query, Step
from sims.graphs.graph import Graph, Search


class UnionFind:
    """Disjoint sets over parent pointers (``Search.uf_parent``): each root is its own parent.
    With ``rank`` the shorter tree goes under the taller; with ``compress`` every node a find
    passes is pointed straight at the root."""

    def __init__(self, s: Search, rank: bool = True, compress: bool = True) -> None:
        n = s.g.n
        self.s = s
        s.uf_parent = list(range(n))
        s.uf_rank = [0] * n if rank else None
        self.compress = compress

    def find(self, x: int) -> int:
        s, parent = self.s, self.s.uf_parent
        s.finds += 1
        root = x
        while parent[root] != root:
            root = parent[root]
            s.find_hops += 1
        if self.compress:
            while parent[x] != root:
                parent[x], x = root, parent[x]
        return root

    def link(self, ru: int, rv: int) -> None:
        """Join two roots; without rank, ru goes under rv."""
        s, parent, rank = self.s, self.s.uf_parent, self.s.uf_rank
        s.unions += 1
        if rank is not None:
            if rank[ru] > rank[rv]:
                ru, rv = rv, ru
            if rank[ru] == rank[rv]:
                rank[rv] += 1
        parent[ru] = rv


@register_policy("graphs", "union_find")
class UnionFindPolicy(Algorithm):
    """Which nodes are connected? Union the endpoints of every edge, in stream order."""

    kind = "sets"
    needs_source = False
    PARAMS = {
        "rank": Param(bool, True, "union by rank: the shorter tree goes under the taller"),
        "compress": Param(bool, True, "path compression: a find points every node it passes at the root"),
    }
    PSEUDOCODE = (
        "every node its own set: parent[v] ← v",
        "for each edge u–v: ru ← find(u); rv ← find(v)",
        "  find(x): follow parent pointers to the root (compression: point each at the root)",
        "  if ru = rv: already connected",
        "  else link: by rank, the shorter tree under the taller (no rank: ru under rv)",
    )

    def __init__(self, rank: bool = True, compress: bool = True) -> None:
        self.rank, self.compress = rank, compress

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name = g.names
        uf = UnionFind(s, self.rank, self.compress)
        yield 0, "{} nodes, each its own set", (g.n,)
        for u, v, _ in g.edges:
            s.edge = (u, v)
            s.relaxed += 1
            hops = s.find_hops
            ru, rv = uf.find(u), uf.find(v)
            hops = s.find_hops - hops
            if ru == rv:
                yield 3, "{}–{}: both finds reach {} ({} hops): already connected", (name[u], name[v], name[ru], hops)
                continue
            uf.link(ru, rv)
            child = ru if s.uf_parent[ru] != ru else rv
            yield (
                4,
                "{}–{}: {} hops to the roots; {} now under {}",
                (name[u], name[v], hops, name[child], name[s.uf_parent[child]]),
            )
        s.edge = None
        s.found = 1
        yield 1, "every edge done: {} sets, deepest node {} hops from its root", (len(s.components()), s.uf_depth())
