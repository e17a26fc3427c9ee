"""Checks of what kind a graph is: two-colouring by BFS (bipartite, or the odd cycle that proves it
is not) and the pair check of a complete graph. Both read every edge as undirected; the DAG's
check is a topological sort and the cyclic graph's the cycle it reports (``structure.py``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from sims.core.registry import register_policy
from sims.graphs.base import Algorithm, Query, Step
from sims.graphs.graph import Graph, Search


def undirected(g: Graph) -> list[list[int]]:
    """Each node's neighbours along edges read both ways, in edge order, each once."""
    adj: list[list[int]] = [[] for _ in range(g.n)]
    seen: set[tuple[int, int]] = set()
    for u, v, _ in g.edges:
        if u != v and (u, v) not in seen:
            seen.update(((u, v), (v, u)))
            adj[u].append(v)
            adj[v].append(u)
    return adj


@register_policy("graphs", "bipartite_bfs")
class BipartiteBFS(Algorithm):
    """Is the graph bipartite? Colour each BFS layer the opposite of the one before (Kleinberg &
    Tardos, Algorithm Design, §3.4): an edge between two nodes of one colour closes an odd cycle,
    which proves no two-colouring exists."""

    kind = "sides"
    frontier_kind = "queue"
    needs_source = False
    PSEUDOCODE = (
        "for each node s not yet coloured: colour s 0; queue ← [s]",
        "  u ← dequeue",
        "  for each neighbour v of u:",
        "    v not coloured: colour v the opposite of u; enqueue v",
        "    v the same colour as u: an odd cycle, not bipartite",
        "every edge joins the two colours: bipartite",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name, adj = g.names, undirected(g)
        side = s.side = [-1] * g.n
        depth = [0] * g.n
        queue: deque[int] = deque()
        s.frontier = queue
        for root in range(g.n):
            if side[root] >= 0:
                continue
            side[root] = 0
            queue.append(root)
            s.grew()
            yield 0, "{} gets colour 0", (name[root],)
            while queue:
                u = queue.popleft()
                s.expand(u)
                yield 1, "dequeue {} (colour {})", (name[u], side[u])
                for v in adj[u]:
                    s.edge = (u, v)
                    s.relaxed += 1
                    if side[v] < 0:
                        side[v], depth[v] = 1 - side[u], depth[u] + 1
                        s.parent[v] = u
                        queue.append(v)
                        s.grew()
                        yield 3, "{}–{}: {} gets colour {}", (name[u], name[v], name[v], side[v])
                    elif side[v] == side[u]:
                        s.cycle = self.odd_cycle(s, u, v, depth)
                        s.edge = None
                        yield (
                            4,
                            "{}–{} joins two nodes of colour {}: odd cycle {}",
                            (
                                name[u],
                                name[v],
                                side[u],
                                " – ".join(name[x] for x in s.cycle),
                            ),
                        )
                        return
                    else:
                        yield 2, "{}–{}: {} has the other colour already", (name[u], name[v], name[v])
        s.edge = None
        s.found = 1
        yield (
            5,
            "every edge joins colour 0 to colour 1: bipartite, sides of {} and {}",
            (
                side.count(0),
                side.count(1),
            ),
        )

    @staticmethod
    def odd_cycle(s: Search, u: int, v: int, depth: list[int]) -> list[int]:
        """u and v, one colour, joined by an edge: their BFS-tree paths up to the nearest common
        ancestor plus that edge close a cycle of odd length."""
        a, b = [u], [v]
        while a[-1] != b[-1]:
            if depth[a[-1]] >= depth[b[-1]]:
                a.append(s.parent[a[-1]])
            else:
                b.append(s.parent[b[-1]])
        return a + b[-2::-1] + [u]


@register_policy("graphs", "complete_check")
class CompleteCheck(Algorithm):
    """Is the graph complete? Check every pair of nodes for an edge: n(n − 1)/2 checks, one a step;
    complete iff none is missing (edges read both ways)."""

    kind = "pairs"
    needs_source = False
    PSEUDOCODE = (
        "for each pair u < v of nodes:",
        "  an edge u–v? count it",
        "  no edge: the pair is missing",
        "complete iff no pair is missing: n(n − 1)/2 edges",
    )

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        name, adj = g.names, undirected(g)
        joined = {(u, v) for u in range(g.n) for v in adj[u]}
        for u in range(g.n):
            s.expand(u)
            for v in range(u + 1, g.n):
                s.edge = (u, v)
                s.relaxed += 1
                if (u, v) in joined:
                    yield 1, "{}–{}: joined ({} pairs checked)", (name[u], name[v], s.relaxed)
                else:
                    s.missing.append((u, v))
                    yield 2, "{}–{}: no edge ({} missing so far)", (name[u], name[v], len(s.missing))
        s.edge = None
        pairs = g.n * (g.n - 1) // 2
        s.found = 1 if not s.missing else 0
        yield 3, "{} of {} pairs joined: {}", (pairs - len(s.missing), pairs, "complete" if s.found else "not complete")
