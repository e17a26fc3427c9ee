"""Faults a reader draws on a node view (consensus, replication): a partition line dragged across
the servers, a click on a server, heal. Each is a compact key that a link records beside the
preset's numbered actions (``actions=0@3,p0.1-2.3.4@4.2,c2@5``; web/static/js/faults.js writes them):

- ``p0.1-2.3.4``: a partition, its groups separated by ``-``, the nodes of a group by ``.``;
- ``c2`` / ``r2``: crash node 2 / restart it with its disk;
- ``h``: heal every partition.

The bridge's ``inject`` (and a link's replay) turns a key into the stream event with
``event_of``; a key that names a node the panels do not have is a ValueError naming it.
"""

from __future__ import annotations

from typing import Any


def node_count(sc: Any) -> int:
    """Nodes every panel of the scenario has (the fewest); 0 when a panel has no network. An edited
    panel (``sims.core.editpanel.EditedPanel``) counts by the panel it wraps."""
    inner = [getattr(p, "inner", p) for p in sc.panels.values()]
    counts = [p.net.n for p in inner if getattr(p, "net", None) is not None]
    return min(counts) if counts and len(counts) == len(sc.panels) else 0


def _node(text: str, key: str, n: int) -> int:
    if not text.isdigit():
        raise ValueError(f"action {key!r}: {text!r} is not a node number")
    i = int(text)
    if i >= n:
        raise ValueError(f"action {key!r}: node {i} does not exist; the nodes are 0..{n - 1}")
    return i


def event_of(key: str, sc: Any) -> dict:
    """The stream event (without its time) of a drawn fault ``key`` on scenario ``sc``."""
    n = node_count(sc)
    if not n:
        raise ValueError(f"action {key!r}: drawn faults need panels with nodes (consensus, replication)")
    if key == "h":
        return {"kind": "fault", "fault": "heal"}
    if key[:1] in ("c", "r"):
        node = _node(key[1:], key, n)
        if key[0] == "c":
            return {"kind": "fault", "fault": "crash", "node": node}
        return {"kind": "fault", "fault": "restart", "node": node, "durable": True}
    if key[:1] == "p":
        groups = [[_node(i, key, n) for i in g.split(".")] for g in key[1:].split("-")]
        seen = [i for g in groups for i in g]
        if len(groups) < 2 or len(set(seen)) != len(seen):
            raise ValueError(f"action {key!r}: a partition needs two or more groups, each node in one")
        return {"kind": "fault", "fault": "partition", "groups": groups}
    raise ValueError(f"action {key!r}: expected an action number or a drawn fault (p0.1-2.3, c2, r2, h)")


OPS: dict = {}  # no operations of its own: the bridge's inject and create take these keys
