"""The graphs workload: one seeded graph, emitted as one stream event at t = 0.

Event: ``{"t": 0.0, "kind": "graph", "nodes": [[name, x, y], ...], "edges": [[u, v, w], ...],
"directed", "source", "target", "layout"}``. Coordinates and weights are integers, so the stream
hash is the same everywhere and no float rounds a distance. Shapes:

- ``grid``: a 4-neighbour grid with walls; stepping into a cell costs its terrain (1 on the
  plain, more on hills), so Manhattan distance is admissible. A staircase from corner to corner
  is kept free of walls, so the target is always reachable.
  ``ridge`` adds a band of the costliest terrain down the middle with a pass in the top three rows.
- ``maze``: a perfect maze (randomized depth-first carving) with ``loops`` of its walls knocked out.
- ``road``: random towns joined to their nearest neighbours; a road costs at least its length
  (rounded up), so straight-line distance is admissible.
- ``random``: a random spanning tree plus random edges (``edges`` in all), weights 1..max_weight
  (``distinct``: every weight different, so the minimum spanning tree is unique).
- ``dag``: build tasks in layers, each depending on tasks of earlier layers; ``cycle`` adds one
  dependency that points backwards.
- ``negative``: a trap for Dijkstra (s→a 1, s→b B, b→a −B) in front of a random graph whose
  weights are shifted by node potentials, so edges go negative while every cycle stays positive;
  ``cycle`` adds a reachable cycle of negative total weight.
- ``unions``: nodes joined one at a time to a random earlier one, the old set's node named first
  (the order that makes Union-Find without rank build long chains), plus redundant edges.
- ``kinds``: a small graph on a circle, drawn as the kind of graph ``graph_kind`` names (directed,
  undirected, weighted, unweighted, dag, cyclic, complete, bipartite): see ``kindgraphs.py``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from math import isqrt
from random import Random

from sims.core.registry import Param, workload
from sims.graphs.kindgraphs import KINDS, kinds_graph

SHAPES = ("grid", "maze", "road", "random", "dag", "negative", "unions", "kinds")


def _grid(p: dict, rng: Random) -> dict:
    w, h = p["width"], p["height"]
    keep = {(0, 0)}
    x = y = 0
    while (x, y) != (w - 1, h - 1):  # a random staircase: the target stays reachable
        if y == h - 1 or (x < w - 1 and rng.random() < 0.5):
            x += 1
        else:
            y += 1
        keep.add((x, y))
    wall = {(x, y) for y in range(h) for x in range(w) if (x, y) not in keep and rng.random() < p["walls"]}
    cost = {}
    hills = [(rng.randrange(w), rng.randrange(h), 1 + rng.randrange(max(1, min(w, h) // 4))) for _ in range(p["hills"])]
    for y in range(h):
        for x in range(w):
            c = 1
            for hx, hy, r in hills:
                if abs(x - hx) + abs(y - hy) <= r:
                    c += p["max_weight"] - 1
            cost[x, y] = min(c, p["max_weight"])
    lo = (w - p["ridge"]) // 2  # a ridge down the middle, with a pass in the top three rows
    for y in range(3, h):
        for x in range(lo, lo + p["ridge"]):
            cost[x, y] = p["max_weight"]
    nodes, edges = [], []
    for y in range(h):
        for x in range(w):
            if (x, y) not in wall:
                nodes.append([f"{x},{y}", x, y])
    for y in range(h):
        for x in range(w):
            if (x, y) in wall:
                continue
            for dx, dy in ((1, 0), (0, 1), (-1, 0), (0, -1)):
                nx, ny = x + dx, y + dy
                if 0 <= nx < w and 0 <= ny < h and (nx, ny) not in wall:
                    edges.append([f"{x},{y}", f"{nx},{ny}", cost[nx, ny]])
    return {
        "nodes": nodes,
        "edges": edges,
        "directed": True,
        "source": "0,0",
        "target": f"{w - 1},{h - 1}",
        "layout": "grid",
    }


def _maze(p: dict, rng: Random) -> dict:
    w, h = p["width"], p["height"]
    seen = {(0, 0)}
    stack = [(0, 0)]
    passages = set()
    while stack:
        x, y = stack[-1]
        nbrs = [
            (x + dx, y + dy)
            for dx, dy in ((1, 0), (0, 1), (-1, 0), (0, -1))
            if 0 <= x + dx < w and 0 <= y + dy < h and (x + dx, y + dy) not in seen
        ]
        if not nbrs:
            stack.pop()
            continue
        nx, ny = nbrs[rng.randrange(len(nbrs))]
        passages.add(((x, y), (nx, ny)) if (x, y) < (nx, ny) else ((nx, ny), (x, y)))
        seen.add((nx, ny))
        stack.append((nx, ny))
    for y in range(h):  # knock out walls: loops, so routes differ in length
        for x in range(w):
            for nx, ny in ((x + 1, y), (x, y + 1)):
                if nx < w and ny < h and ((x, y), (nx, ny)) not in passages and rng.random() < p["loops"]:
                    passages.add(((x, y), (nx, ny)))
    nodes = [[f"{x},{y}", x, y] for y in range(h) for x in range(w)]
    edges = [[f"{a[0]},{a[1]}", f"{b[0]},{b[1]}", 1] for a, b in sorted(passages)]
    return {
        "nodes": nodes,
        "edges": edges,
        "directed": False,
        "source": "0,0",
        "target": f"{w - 1},{h - 1}",
        "layout": "grid",
    }


def _length(a: list, b: list) -> int:
    """The distance between two points, rounded up: a road is never shorter than the crow flies."""
    d2 = (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2
    r = isqrt(d2)
    return r if r * r == d2 else r + 1


def _points(n: int, rng: Random, size: int = 1000) -> list[list]:
    return [[f"v{i}", rng.randrange(size), rng.randrange(size)] for i in range(n)]


def _connect(n: int, edges: list, rng: Random, weight) -> None:
    """Join the components of ``edges`` into one: each later component to a random node of the first."""
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u, v, _ in edges:
        parent[root(u)] = root(v)
    comps: dict[int, list[int]] = {}
    for v in range(n):
        comps.setdefault(root(v), []).append(v)
    groups = sorted(comps.values())
    for group in groups[1:]:
        a = groups[0][rng.randrange(len(groups[0]))]
        b = group[rng.randrange(len(group))]
        edges.append((a, b, weight(a, b)))


def _nearest(pts: list[list], k: int, size: int = 1000) -> list[list[int]]:
    """For each point, the indices of the ``k`` points nearest to it (itself included), ordered by
    (squared distance, index), as sorting every point would give, in O(n k): points go into square
    cells about two to a cell, and rings of cells are searched outward until every point not yet
    seen is farther than the k-th found. Coordinates are integers in [0, size)."""
    n = len(pts)
    side = max(1, int(size / max(1.0, (n / 2) ** 0.5)))
    cells: dict[tuple[int, int], list[int]] = {}
    for j, (_, x, y) in enumerate(pts):
        cells.setdefault((x // side, y // side), []).append(j)
    span = size // side + 1
    out = []
    for _, x, y in pts:
        cx, cy = x // side, y // side
        found: list[tuple[int, int]] = []
        r = 0
        while True:
            for gx in range(cx - r, cx + r + 1):
                for gy in range(cy - r, cy + r + 1) if gx in (cx - r, cx + r) else (cy - r, cy + r):
                    for j in cells.get((gx, gy), ()):
                        found.append(((x - pts[j][1]) ** 2 + (y - pts[j][2]) ** 2, j))
            # a point in a cell r + 1 rings out is more than r * side away on one axis
            if len(found) >= n or r > span:
                break
            if len(found) >= k:
                found.sort()
                if found[k - 1][0] <= (r * side) ** 2:
                    break
            r += 1
        found.sort()
        out.append([j for _, j in found[:k]])
    return out


def _road(p: dict, rng: Random) -> dict:
    n = p["n"]
    pts = _points(n, rng)
    pairs = set()
    for i, near in enumerate(_nearest(pts, p["degree"] + 1)):
        for j in near[1:]:
            pairs.add((min(i, j), max(i, j)))

    def weight(a: int, b: int) -> int:
        return _length(pts[a], pts[b]) * (1 if rng.random() < 0.7 else 2)  # highways and back roads

    edges = [(a, b, weight(a, b)) for a, b in sorted(pairs)]
    _connect(n, edges, rng, weight)
    src = min(range(n), key=lambda i: (pts[i][1] + pts[i][2], i))
    dst = max(range(n), key=lambda i: (pts[i][1] + pts[i][2], -i))
    return {
        "nodes": pts,
        "edges": [[pts[a][0], pts[b][0], w] for a, b, w in edges],
        "directed": False,
        "source": pts[src][0],
        "target": pts[dst][0],
    }


def _random(p: dict, rng: Random) -> dict:
    n, m = p["n"], p["edges"]
    pts = _points(n, rng)
    pairs = []
    have = set()
    for v in range(1, n):  # a random spanning tree: the graph is connected
        u = rng.randrange(v)
        pairs.append((u, v))
        have.add((u, v))
    room = n * (n - 1) // 2
    while len(pairs) < min(m, room):
        u, v = rng.randrange(n), rng.randrange(n)
        key = (min(u, v), max(u, v))
        if u != v and key not in have:
            have.add(key)
            pairs.append(key if rng.random() < 0.5 else (key[1], key[0]))
    if p["distinct"]:
        weights = list(range(1, len(pairs) + 1))
        rng.shuffle(weights)
    else:
        weights = [1 + rng.randrange(p["max_weight"]) for _ in pairs]
    edges = [[pts[u][0], pts[v][0], w] for (u, v), w in zip(pairs, weights, strict=True)]
    return {"nodes": pts, "edges": edges, "directed": p["directed"], "source": "v0", "target": pts[n - 1][0]}


def _dag(p: dict, rng: Random) -> dict:
    n, layers = p["n"], max(2, p["layers"])
    layer = sorted(rng.randrange(layers) for _ in range(n))
    nodes = [[f"task{i}", layer[i] * 100, 0] for i in range(n)]
    row: dict[int, int] = {}
    for nd, lay in zip(nodes, layer, strict=True):
        nd[2] = row.get(lay, 0) * 60
        row[lay] = row.get(lay, 0) + 1
    edges, have = [], set()
    for v in range(n):
        earlier = bisect_left(layer, layer[v])  # layers are sorted: the earlier layers are a prefix
        for _ in range(min(earlier, 1 + rng.randrange(3))):
            u = rng.randrange(earlier)
            if (u, v) not in have:
                have.add((u, v))
                edges.append([nodes[u][0], nodes[v][0], 1 + rng.randrange(p["max_weight"])])
    if p["cycle"] and edges:
        u, v = edges[rng.randrange(len(edges))][:2]  # a dependency back from v's side to u
        late = [e[1] for e in edges if e[0] == v] or [v]
        edges.append([late[rng.randrange(len(late))], u, 1])
    return {"nodes": nodes, "edges": edges, "directed": True, "source": nodes[0][0], "target": nodes[-1][0]}


def _negative(p: dict, rng: Random) -> dict:
    n, big = p["n"], 10 * p["max_weight"]
    rest = _random({**p, "n": n, "edges": p["edges"], "distinct": False, "directed": True}, rng)
    pot = {nd[0]: rng.randrange(p["max_weight"] * 2) for nd in rest["nodes"]}
    edges = [[u, v, w + pot[u] - pot[v]] for u, v, w in rest["edges"]]  # cycles keep their weight
    entry = rest["nodes"][0][0]
    nodes = [["s", -150, 500], ["a", -60, 420], ["b", -60, 580], *rest["nodes"]]
    # the trap: Dijkstra settles a at 1 before b is popped; via b, a costs 0
    edges = [["s", "a", 1], ["s", "b", big], ["b", "a", -big], ["a", entry, 1], *edges]
    target = max(rest["nodes"][1:], key=lambda nd: (nd[1] + nd[2], nd[0]))[0]
    if p["cycle"]:
        x, y, z = (nd[0] for nd in rest["nodes"][1:4])
        edges += [[entry, x, 1], [x, y, 1], [y, z, 1], [z, x, -5]]
    return {"nodes": nodes, "edges": edges, "directed": True, "source": "s", "target": target}


def _unions(p: dict, rng: Random) -> dict:
    n = p["n"]
    nodes = _points(n, rng)
    edges = []
    for v in range(1, n):
        u = rng.randrange(v)
        edges.append([nodes[u][0], nodes[v][0], 1])  # the old set first: no rank puts it under v
        if rng.random() < p["redundant"]:
            a, b = rng.randrange(v + 1), rng.randrange(v + 1)
            edges.append([nodes[a][0], nodes[b][0], 1])
    return {"nodes": nodes, "edges": edges, "directed": False, "source": "v0", "target": ""}


BUILDERS = {
    "grid": _grid,
    "maze": _maze,
    "road": _road,
    "random": _random,
    "dag": _dag,
    "negative": _negative,
    "unions": _unions,
    "kinds": kinds_graph,
}


@workload(
    "graph",
    shape=Param(str, "grid", " | ".join(SHAPES), choices=SHAPES),
    width=Param(int, 24, "grid and maze: columns", min=2, max=200),
    height=Param(int, 16, "grid and maze: rows", min=2, max=200),
    walls=Param(float, 0.25, "grid: share of cells that are walls", min=0, max=0.9),
    hills=Param(int, 4, "grid: patches of expensive terrain", min=0, max=100),
    ridge=Param(int, 0, "grid: columns of a costly ridge down the middle, passable in the top rows", min=0, max=200),
    loops=Param(float, 0.1, "maze: share of the remaining walls knocked out", min=0, max=1),
    n=Param(int, 40, "road, random, dag, negative, unions, kinds (at most 26): nodes", min=2, max=5000),
    edges=Param(int, 80, "random, negative, kinds: edges in all (at least n - 1)", min=1, max=100000),
    degree=Param(int, 3, "road: roads from each town to its nearest towns", min=1, max=10),
    layers=Param(int, 6, "dag: layers of build tasks", min=2, max=100),
    max_weight=Param(int, 9, "largest weight (grid: the costliest terrain)", min=1, max=1000000),
    distinct=Param(bool, False, "random: every weight different (a unique minimum spanning tree)"),
    directed=Param(bool, False, "random: edges one way only"),
    cycle=Param(bool, False, "dag: one dependency backwards; negative: a negative cycle"),
    redundant=Param(float, 0.3, "unions: chance of an extra edge inside a set after each join", min=0, max=1),
    graph_kind=Param(str, "undirected", "kinds: " + " | ".join(KINDS), choices=KINDS),
    odd_edge=Param(bool, False, "kinds, bipartite: add one edge inside a side (an odd cycle)"),
)
def graph(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """One seeded graph of the named shape, as one event at t = 0."""
    p = params
    if p["shape"] not in BUILDERS:
        raise ValueError(f"workload.shape: expected one of {', '.join(SHAPES)}, got {p['shape']!r}")
    if duration <= 0:
        return
    yield {"t": 0.0, "kind": "graph", **BUILDERS[p["shape"]](p, rng)}
