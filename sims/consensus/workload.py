"""The consensus workload: client operations and faults, one stream for every panel.

Events: ``{"t", "kind": "op", "id"}`` (a client command whose value is ``id``) and
``{"t", "kind": "fault", "fault": ..., ...}`` (see ``sims.net``: partition, heal, oneway, crash,
restart, pause, resume, slow, drift, link, byzantine; plus ``mark``, which names a node for
later faults, and ``add`` / ``remove``, a request to change a Raft cluster's membership,
``sims.consensus.membership``; a ``link`` may name one direction and end at ``until``). A node may be written as a number or as a reference each panel resolves in its
own run: ``"leader"`` (its current leader), a name given by ``mark`` or by a crash's
``"mark"``, and either plus an offset (``"A+1"``).

``schedule`` lists explicit events (tables with ``t`` and either ``kind = "op"`` or ``fault``);
the random faults (crashes of any node or of the leader, partitions of a random minority) are
drawn from the stream's generator, so every panel sees the same schedule.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import exponential
from sims.core.limits import MAX_DURATION
from sims.core.registry import Param, workload

FAULTS = (
    "partition",
    "heal",
    "oneway",
    "crash",
    "restart",
    "pause",
    "resume",
    "slow",
    "drift",
    "link",
    "mark",
    "byzantine",
    "add",
    "remove",
)


def _is_ref(node) -> bool:
    return (isinstance(node, int) and not isinstance(node, bool) and node >= 0) or isinstance(node, str)


def _check_schedule(schedule: list) -> list[dict]:
    out = []
    for k, ev in enumerate(schedule):
        where = f"workload.schedule[{k}]"
        if not isinstance(ev, dict) or not isinstance(ev.get("t"), (int, float)) or isinstance(ev.get("t"), bool):
            raise ValueError(f"{where}: expected a table with a time t")
        if ev.get("kind") == "op":
            out.append({"t": float(ev["t"]), "kind": "op"})
            continue
        if ev.get("fault") not in FAULTS:
            raise ValueError(f"{where}.fault: expected one of {', '.join(FAULTS)}, got {ev.get('fault')!r}")
        if "node" in ev and not _is_ref(ev["node"]):
            raise ValueError(f"{where}.node: expected a node number or a name such as 'leader', got {ev['node']!r}")
        for end in ("from", "to") if ev["fault"] == "oneway" else ():
            if not _is_ref(ev.get(end)):
                raise ValueError(f"{where}.{end}: a one-way block names a node at each end, got {ev.get(end)!r}")
        if ev["fault"] == "mark" and not (isinstance(ev.get("name"), str) and ev["name"]):
            raise ValueError(f"{where}.name: a mark names its node for later faults, got {ev.get('name')!r}")
        if "mark" in ev and not (isinstance(ev["mark"], str) and ev["mark"]):
            raise ValueError(f"{where}.mark: expected a name for the node, got {ev['mark']!r}")
        if ev["fault"] == "partition":
            groups = ev.get("groups")
            if not isinstance(groups, list) or not all(
                isinstance(g, list) and all(_is_ref(m) for m in g) for g in groups
            ):
                raise ValueError(f"{where}.groups: expected a list of lists of nodes, got {groups!r}")
        if ev["fault"] == "link":
            _check_link(ev, where)
        for key in ("loss", "duplicate", "reorder"):
            if key in ev and not (isinstance(ev[key], (int, float)) and 0 <= ev[key] <= 1):
                raise ValueError(f"{where}.{key}: expected a probability in [0, 1], got {ev[key]!r}")
        out.append({**ev, "t": float(ev["t"]), "kind": "fault"})
    return out


def _check_link(ev: dict, where: str) -> None:
    """A ``link`` fault may name one direction (``from`` and ``to``) and end (``until``)."""
    if ("from" in ev) != ("to" in ev):
        raise ValueError(f"{where}.{'to' if 'from' in ev else 'from'}: a link names both ends or neither")
    for end in ("from", "to") if "from" in ev else ():
        if not _is_ref(ev[end]):
            raise ValueError(f"{where}.{end}: expected a node number or a name such as 'leader', got {ev[end]!r}")
    until = ev.get("until")
    if until is not None and not (isinstance(until, (int, float)) and not isinstance(until, bool) and until > ev["t"]):
        raise ValueError(f"{where}.until: expected a time after t = {ev['t']:g}, got {until!r}")


def _check_members(events: list[dict], p: dict) -> None:
    """``add`` and ``remove`` name a server 0 .. nodes-1 (``add`` may omit it: the lowest spare);
    followed in time order from the first configuration, a numbered server is added only when it is
    not a member and removed only when it is (a removal by reference, e.g. ``"leader"``, ends the
    bookkeeping: who it names depends on the run)."""
    n = p["nodes"]
    members: set[int] | None = set(range(p["members"] or n))
    for k, ev in events:
        if ev.get("fault") not in ("add", "remove"):
            continue
        where = f"workload.schedule[{k}].node"
        j = ev.get("node")
        if isinstance(j, int) and not j < n:
            raise ValueError(f"{where}: expected a server 0 .. {n - 1}, got {j!r}")
        if not isinstance(j, int):
            if ev["fault"] == "add" and j is not None:
                raise ValueError(
                    f"{where}: an added server is a number 0 .. {n - 1} (or none: the lowest spare), got {j!r}"
                )
            members = None if ev["fault"] == "remove" else members
            continue
        if members is None:
            continue
        if ev["fault"] == "add" and j in members:
            raise ValueError(f"{where}: server {j} is already a member at t = {ev['t']:g} (added twice?)")
        if ev["fault"] == "remove" and j not in members:
            raise ValueError(f"{where}: server {j} is not a member at t = {ev['t']:g}")
        (members.add if ev["fault"] == "add" else members.discard)(j)


def _random_faults(p: dict, rng: Random, duration: float) -> Iterator[dict]:
    n = p["nodes"]
    streams = []
    if p["crash_every"] > 0:
        streams.append(("crash", p["crash_every"]))
    if p["leader_crash_every"] > 0:
        streams.append(("leader", p["leader_crash_every"]))
    if p["partition_every"] > 0:
        streams.append(("partition", p["partition_every"]))
    k = 0
    for what, every in streams:
        t = p["faults_from"]
        while True:
            t += exponential(rng, 1.0 / every)
            if t > duration:
                break
            back = t + p["down_for"]
            if what == "partition":
                members = list(range(n))
                rng.shuffle(members)
                size = 1 + rng.randrange(max(1, (n - 1) // 2))
                yield {"t": t, "kind": "fault", "fault": "partition", "groups": [sorted(members[:size])]}
                yield {"t": back, "kind": "fault", "fault": "heal"}
            else:
                mark = f"c{k}"
                k += 1
                node = "leader" if what == "leader" else rng.randrange(n)
                yield {"t": t, "kind": "fault", "fault": "crash", "node": node, "mark": mark}
                yield {"t": back, "kind": "fault", "fault": "restart", "node": mark, "durable": p["durable"]}


@workload(
    "consensus",
    nodes=Param(int, 5, "servers (node references in faults are 0 .. nodes-1)", min=1, max=9),
    op_rate=Param(float, 5.0, "client operations per second (Poisson; 0 = only the schedule's)", min=0.0, max=10_000.0),
    op_start=Param(float, 1.0, "no client operations before this time", min=0.0, max=MAX_DURATION),
    schedule=Param(list, [], "explicit events: tables with t and kind = 'op' or a fault", max_items=10_000),
    crash_every=Param(
        float, 0.0, "mean seconds between crashes of a random node (0 = none)", min=0.0, max=MAX_DURATION
    ),
    leader_crash_every=Param(
        float, 0.0, "mean seconds between crashes of the leader (0 = none)", min=0.0, max=MAX_DURATION
    ),
    partition_every=Param(
        float, 0.0, "mean seconds between partitions of a random minority (0 = none)", min=0.0, max=MAX_DURATION
    ),
    down_for=Param(
        float, 1.0, "a crashed node restarts, a partition heals, after this long", above=0.0, max=MAX_DURATION
    ),
    faults_from=Param(float, 1.0, "random faults start after this time", min=0.0, max=MAX_DURATION),
    durable=Param(bool, True, "a restarted node keeps its disk (term, vote, log)"),
    members=Param(
        int,
        0,
        "Raft: servers 0 .. members-1 form the first configuration (0: all; the panels' `members` should match)",
        min=0,
        max=9,
    ),
)
def consensus(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Client operations (Poisson) and faults: an explicit schedule plus random crashes and partitions."""
    p = params
    fixed = _check_schedule(p["schedule"])
    order = sorted(range(len(fixed)), key=lambda k: (fixed[k]["t"], k))
    _check_members([(k, fixed[k]) for k in order], p)
    fixed.extend(e for e in _random_faults(p, rng, duration) if e["t"] <= duration)
    fixed = [e for e in fixed if e["t"] <= duration]
    fixed = [fixed[k] for k in sorted(range(len(fixed)), key=lambda k: (fixed[k]["t"], k))]
    # the client operations, drawn after every fault (as they always were) but one at a time, so
    # a long run's first events cost no more than a short run's; at equal times the schedule and
    # the faults go first
    op, i = 0, 0
    for t in _op_times(p, rng, duration):
        while i < len(fixed) and fixed[i]["t"] <= t:
            ev = fixed[i]
            i += 1
            if ev["kind"] == "op":
                op += 1
                ev = {"t": ev["t"], "kind": "op", "id": op}
            yield ev
        op += 1
        yield {"t": t, "kind": "op", "id": op}
    for ev in fixed[i:]:
        if ev["kind"] == "op":
            op += 1
            ev = {"t": ev["t"], "kind": "op", "id": op}
        yield ev


def _op_times(p: dict, rng: Random, duration: float) -> Iterator[float]:
    """Poisson client operations from ``op_start`` to ``duration``."""
    if p["op_rate"] <= 0:
        return
    t = p["op_start"]
    while True:
        t += exponential(rng, p["op_rate"])
        if t > duration:
            return
        yield t
