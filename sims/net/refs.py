"""Node references in a stream's faults, resolved by each panel in its own run.

A fault may name a node by number, or relative to the panel's run: ``"leader"`` (whoever leads
there at that instant), a name an earlier ``mark`` fault or a crash's ``mark`` gave, and an
offset (``"A+1"``); a ``oneway`` block's (and a one-link ``link`` fault's) ``from`` and ``to`` likewise. One schedule thus exercises every protocol alike (the consensus and election
panels both read their faults through ``resolve_fault``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Leader = Callable[[], "int | None"]


def resolve(ref: Any, leader: Leader, marks: dict[str, int], n: int) -> int | None:
    """The node ``ref`` names (None: nobody, e.g. no leader now or an unknown mark)."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        return ref % n
    if not isinstance(ref, str):
        return None
    name, _, off = ref.partition("+")
    base = leader() if name == "leader" else marks.get(name)
    if base is None:
        return None
    return (base + (int(off) if off else 0)) % n


def resolve_fault(ev: dict, leader: Leader, marks: dict[str, int], n: int) -> dict | None:
    """The fault of stream event ``ev`` with its node references resolved, recording the names
    it gives in ``marks``; None when there is nothing to apply (a ``mark`` fault, or a node
    reference that names nobody)."""
    kind = ev["fault"]
    if kind == "mark":
        node = resolve(ev.get("node", "leader"), leader, marks, n)
        if node is not None:
            marks[ev["name"]] = node
        return None
    fault = dict(ev)
    if "node" in ev:
        node = resolve(ev["node"], leader, marks, n)
        if node is None:
            return None
        fault["node"] = node
        if ev.get("mark"):
            marks[ev["mark"]] = node
    if kind == "oneway" or (kind == "link" and "from" in ev):
        for end in ("from", "to"):
            node = resolve(ev.get(end), leader, marks, n)
            if node is None:
                return None
            fault[end] = node
    elif kind == "partition":
        groups = []
        for members in ev["groups"]:
            group = []
            for m in members:
                node = resolve(m, leader, marks, n)
                if node is not None and node not in group:
                    group.append(node)
            groups.append(group)
        fault["groups"] = groups
    return fault
