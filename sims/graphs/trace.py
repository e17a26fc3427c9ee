"""``contention trace graphs``: run one algorithm to the end over a graph file.

Lines: ``U V W`` (an edge U→V of weight W; ``--undirected`` adds V→U) and ``node NAME X Y``
(coordinates, which A*'s heuristics read). Blank lines and ``#`` comments are skipped. Nodes are
numbered in order of first mention. Single-source searches run over the whole graph (``dist``
holds every reachable node) except A*, which stops at its target: its ``dist`` holds the nodes
it closed.
"""

from __future__ import annotations

from pathlib import Path

from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, resolve_params
from sims.core.trace import InputError, TraceArg, TraceError, TraceSpec, bad_token, lines
from sims.graphs.graph import INF


def _number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        x = float(text)
    except ValueError:
        return None
    return x if x - x == 0 else None  # rejects inf and nan


def read(path: Path, undirected: bool = False) -> dict:
    """The file as a graph event; TraceError names the file and line of a bad one."""
    order: dict[str, list] = {}
    placed: set[str] = set()
    edges = []
    for n, text in lines(path):
        fields = text.split()
        if fields[0] == "node":
            if len(fields) != 4:
                raise TraceError(f"{path}:{n}: expected node NAME X Y, got {text[:40]!r}")
            x, y = _number(fields[2]), _number(fields[3])
            if x is None or y is None:
                raise bad_token(path, n, "finite coordinates X Y", f"{fields[2]} {fields[3]}")
            order.setdefault(fields[1], [fields[1], 0, 0])[1:] = [x, y]
            placed.add(fields[1])
            continue
        if len(fields) != 3:
            raise TraceError(f"{path}:{n}: expected U V W or node NAME X Y, got {text[:40]!r}")
        w = _number(fields[2])
        if w is None:
            raise bad_token(path, n, "a finite weight W", fields[2])
        for name in fields[:2]:
            order.setdefault(name, [name, 0, 0])
        edges.append([fields[0], fields[1], w])
    return {
        "t": 0.0,
        "kind": "graph",
        "nodes": list(order.values()),
        "edges": edges,
        "directed": not undirected,
        "placed": sorted(placed),
    }


def replay(algorithm: str, ev: dict, source: str | None = None, target: str | None = None) -> dict:
    """Run ``algorithm`` over the graph event ``ev`` to the end; the result in DESIGN.md's shapes."""
    topic = load_topic("graphs")
    cls = get_policy("graphs", algorithm)
    names = [nd[0] for nd in ev["nodes"]]
    for flag, value in (("--source", source), ("--target", target)):
        if value is not None and value not in names:
            raise InputError(f"{flag} {value!r} is not a node of the graph")
    if cls.needs_source and cls.kind == "path" and source is None:
        raise InputError(f"--algorithm {algorithm} needs --source")
    if cls.needs_target and target is None:
        raise InputError(f"--algorithm {algorithm} needs --target")
    if cls.needs_coords:
        missing = [nm for nm in names if nm not in set(ev.get("placed", names))]
        if missing:
            raise InputError(
                f"--algorithm {algorithm} reads coordinates: node {missing[0]!r} has no 'node NAME X Y' line"
            )
    if not names:
        raise InputError("the graph has no edges")
    given = {"source": source or "", "target": target or "", "stop_at_target": cls.needs_target}
    params = resolve_params(dict(topic.panel_params) | dict(cls.PARAMS), given, "trace")
    panel = topic.make_panel(algorithm, algorithm, params, PanelContext(0, 0.0, [ev], algorithm))
    panel.on_event(ev)
    panel.run_to_end()
    panel.check_invariants()
    return shape(algorithm, cls.kind, panel.s, target is not None)


def shape(algorithm: str, kind: str, s, with_path: bool) -> dict:
    names = s.g.names
    if kind == "tree":
        return {
            "algorithm": algorithm,
            "weight": s.tree_weight,
            "edges": [[names[u], names[v], w] for u, v, w in s.tree],
        }
    if kind == "order":
        if s.cycle:
            return {"algorithm": algorithm, "cycle": [names[v] for v in s.cycle]}
        return {"algorithm": algorithm, "order": [names[v] for v in s.order]}
    if kind == "sides":
        if s.cycle:
            return {"algorithm": algorithm, "bipartite": False, "cycle": [names[v] for v in s.cycle]}
        sides = [sorted(names[v] for v in range(len(names)) if s.side[v] == c) for c in (0, 1)]
        return {"algorithm": algorithm, "bipartite": True, "sides": sides}
    if kind == "pairs":
        return {
            "algorithm": algorithm,
            "complete": not s.missing,
            "pairs": s.relaxed,
            "missing": [[names[u], names[v]] for u, v in s.missing],
        }
    if kind == "sets":
        comps = sorted(sorted(names[v] for v in c) for c in s.components())
        return {"algorithm": algorithm, "components": comps}
    if kind == "all_pairs":
        m = s.matrix
        out = {
            "algorithm": algorithm,
            "dist": {names[i]: {names[j]: d for j, d in enumerate(row) if d != INF} for i, row in enumerate(m)},
        }
        if s.negative_cycle:
            out["negative_cycle"] = True
        return out
    out = {"algorithm": algorithm, "dist": {names[v]: d for v, d in sorted(s.dist.items())}}
    if s.negative_cycle:
        out["negative_cycle"] = True
        out["cycle"] = [names[v] for v in s.cycle]
    elif with_path:
        out["path"] = [names[v] for v in s.path]
    out["expanded"] = s.expanded
    out["relaxed"] = s.relaxed
    return out


def _run(algorithm: str, args: dict, path: Path) -> dict:
    get_policy("graphs", algorithm)  # an unknown algorithm is named before the file is read
    ev = read(path, bool(args.get("undirected")))
    return replay(algorithm, ev, args.get("source"), args.get("target"))


TRACE = TraceSpec(
    help="run one graph algorithm over U V W edge lines (and node NAME X Y coordinates)",
    args=(
        TraceArg("--source", str, "the start node (single-source searches)", required=False, positive=False),
        TraceArg("--target", str, "the goal node (A*; others add the path to it)", required=False, positive=False),
        TraceArg("--undirected", bool, "each line U V W is an edge both ways", required=False),
    ),
    run=_run,
    policy_flag="--algorithm",
)
