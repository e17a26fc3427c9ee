"""The ``kinds`` shape of the graphs workload: one small seeded graph, drawn as each kind of graph.

Every kind starts from the same draws (for a seed, the same nodes on a circle, the same random
spanning tree plus extra edges, the same weights, ranks and directions), so the kinds' pages show
the same few graphs and what each kind allows:

- ``undirected``: every edge both ways, weight 1;
- ``directed``: each edge one way (a coin per edge, but every edge of the rank-0 node points away
  from it); the source is the node that reaches the most others along the arrows, which never
  includes that one;
- ``weighted``: undirected, weights 1 … max_weight; the source and target are the pair whose
  cheapest path has the most edges more than their shortest path in edges (if no pair has one,
  an edge that closes a cycle is made heavier than any path);
- ``unweighted``: the same graph, source and target with every weight 1;
- ``dag``: each edge from the lower to the higher of a random rank of the nodes;
- ``cyclic``: the DAG with one edge back from a node to one that reaches it, by a path of two or
  more arrows where there is one (and not to a rank-0 node, so Kahn's algorithm still orders
  something);
- ``complete``: every pair of nodes joined, n(n − 1)/2 edges;
- ``bipartite``: the spanning tree's two colour classes as the sides, only the edges between them
  (``odd_edge`` adds one edge inside a side: an odd cycle).
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from math import pi
from random import Random

from sims.core.portmath import cos, sin

KINDS = ("undirected", "directed", "weighted", "unweighted", "dag", "cyclic", "complete", "bipartite")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _reach(n: int, arcs: list[tuple[int, int]], s: int) -> set[int]:
    out: list[list[int]] = [[] for _ in range(n)]
    for u, v in arcs:
        out[u].append(v)
    seen, queue = {s}, deque([s])
    while queue:
        for v in out[queue.popleft()]:
            if v not in seen:
                seen.add(v)
                queue.append(v)
    return seen


def _cheapest(n: int, edges: list[tuple[int, int, int]], s: int) -> list[tuple[int, int]]:
    """(cost, fewest edges among the cheapest paths) from s to every node, undirected."""
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for u, v, w in edges:
        adj[u].append((v, w))
        adj[v].append((u, w))
    best = [(1 << 60, 1 << 60)] * n
    best[s] = (0, 0)
    heap = [(0, 0, s)]
    while heap:
        c, h, u = heappop(heap)
        if (c, h) > best[u]:
            continue
        for v, w in adj[u]:
            if (c + w, h + 1) < best[v]:
                best[v] = (c + w, h + 1)
                heappush(heap, (c + w, h + 1, v))
    return best


def _pick_pair(n: int, edges: list, extra: list) -> tuple[int, int, list]:
    """The (source, target) whose cheapest path has the most edges more than the fewest-edge path;
    ``edges`` is returned with one cycle edge made heavy when no pair has any."""
    hops = [_cheapest(n, [(u, v, 1) for u, v, _ in edges], s) for s in range(n)]
    best, pair = 0, None
    for s in range(n):
        cheap = _cheapest(n, edges, s)
        for t in range(s + 1, n):
            gap = cheap[t][1] - hops[s][t][1]
            if gap > best:
                best, pair = gap, (s, t)
    if pair is None and extra:
        u, v = extra[0]
        heavy = 1 + sum(w for _, _, w in edges)
        edges = [(a, b, heavy if (a, b) == (u, v) else w) for a, b, w in edges]
        pair = (u, v)
    return (*(pair or (0, n - 1)), edges)


def kinds_graph(p: dict, rng: Random) -> dict:
    n, kind = p["n"], p["graph_kind"]
    if kind not in KINDS:
        raise ValueError(f"workload.graph_kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    if not 3 <= n <= len(LETTERS):
        raise ValueError(f"workload.n: the kinds shape draws 3 … {len(LETTERS)} nodes, got {n}")
    nodes = [
        [LETTERS[k], 400 + round(300 * cos(2 * pi * k / n - pi / 2)), 400 + round(300 * sin(2 * pi * k / n - pi / 2))]
        for k in range(n)
    ]
    pairs = [(rng.randrange(v), v) for v in range(1, n)]  # a random spanning tree
    have = set(pairs)
    extra = []
    while len(pairs) < min(p["edges"], n * (n - 1) // 2):
        u, v = sorted((rng.randrange(n), rng.randrange(n)))
        if u != v and (u, v) not in have:
            have.add((u, v))
            pairs.append((u, v))
            extra.append((u, v))
    weights = [1 + rng.randrange(p["max_weight"]) for _ in pairs]
    rank = list(range(n))
    rng.shuffle(rank)
    flips = [rng.random() < 0.5 for _ in pairs]
    name = [nd[0] for nd in nodes]
    out = {"nodes": nodes, "directed": False, "source": name[0], "target": ""}
    if kind in ("undirected", "complete", "bipartite"):
        if kind == "complete":
            pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
        elif kind == "bipartite":
            pairs = _bipartite(n, pairs, n - 1, p["odd_edge"])
        out["edges"] = [[name[u], name[v], 1] for u, v in pairs]
    elif kind in ("weighted", "unweighted"):
        s, t, edges = _pick_pair(n, [(u, v, w) for (u, v), w in zip(pairs, weights, strict=True)], extra)
        one = kind == "unweighted"
        out.update(source=name[s], target=name[t], edges=[[name[u], name[v], 1 if one else w] for u, v, w in edges])
    else:
        out["directed"] = True
        if kind == "directed":
            y = rank.index(0)  # every edge of y points away from it, so no other node reaches y
            arcs = [(v, u) if (f and u != y) or v == y else (u, v) for (u, v), f in zip(pairs, flips, strict=True)]
            reach = [len(_reach(n, arcs, s)) for s in range(n)]
            out["source"] = name[max((s for s in range(n) if s != y), key=lambda s: (reach[s], -s))]
        else:
            arcs = [(u, v) if rank[u] < rank[v] else (v, u) for u, v in pairs]
            out["source"] = name[rank.index(0)]
            if kind == "cyclic":
                arcs.append(_back_edge(n, arcs, rank))
        out["edges"] = [[name[u], name[v], 1] for u, v in arcs]
    return out


def _bipartite(n: int, pairs: list, tree: int, odd: bool) -> list:
    """The first ``tree`` pairs (a spanning tree) 2-coloured from node 0; the other pairs kept
    only between the colours; with ``odd`` one pair inside a colour added."""
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v in pairs[:tree]:
        adj[u].append(v)
        adj[v].append(u)
    side = [-1] * n
    side[0], queue = 0, deque([0])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if side[v] < 0:
                side[v] = 1 - side[u]
                queue.append(v)
    kept = pairs[:tree] + [(u, v) for u, v in pairs[tree:] if side[u] != side[v]]
    if odd:
        same = [(u, v) for u in range(n) for v in range(u + 1, n) if side[u] == side[v] and (u, v) not in kept]
        kept += same[:1]
    return kept


def _back_edge(n: int, arcs: list, rank: list[int]) -> tuple[int, int]:
    """x → y closing a cycle: y is the lowest-ranked node above rank 0 that reaches another node,
    x the highest-ranked node it reaches, not by a single arrow if it can (no cycle of two)."""
    for y in sorted(range(n), key=rank.__getitem__)[1:]:
        reach = _reach(n, arcs, y) - {y}
        if reach:
            far = reach - {v for u, v in arcs if u == y} or reach
            return max(far, key=rank.__getitem__), y
    u, v = arcs[0]
    return v, u
