"""Fault schedules for replication: what ``contention search replication`` varies.

A schedule is a list of steps, each with the wait after it: crash node i, cut node i off from
the others, restart every crashed node with its disk, or heal the network; when a lease policy
is searched, also pause node i (stop the world) and resume every paused node. The steps name nodes
by number (the replication faults do; node 0 leads at first), so a step means the same thing on
every panel. The client operations are not varied: they are the ``registers`` workload of
``OPS`` on the search's seed, the stream a preset with that ``[workload]`` table generates, and
the faults are its ``[[events]]``. A written preset therefore replays the candidate bit for bit.

The waits reach past the monitor's ``failover_after`` (1 s by default), so a crash can be
followed by a failover before the crashed leader returns: the order in which asynchronous
replication loses acknowledged writes (a write the old leader acknowledged, still on the wire to
its followers when it crashed, is truncated from its log when it rejoins the new leader's).
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache

from sims.core import stream

GAPS = (0.05, 0.3, 1.5)  # seconds after a step: shorter than a message's trip, than failover, longer
START = 1.0  # the first step (operations run from t = 0, so every node holds writes by then)
SETTLE = 3.0  # after the last step: a failover (1 s) and a rejoin finish
OPS = {"kind": "registers", "rate": 100.0, "read_ratio": 0.5, "keys": 4}  # contacts: every node


def steps(n: int, pauses: bool = False) -> list[tuple]:
    """The steps for ``n`` nodes: ("crash", i) and ("isolate", i) for each node, ("restart",),
    ("heal",); with ``pauses`` (a search of a lease policy, whose safety rests on time) also
    ("pause", i) for each node, a stop-the-world pause, and ("resume",) every paused node."""
    base = [("crash", i) for i in range(n)] + [("isolate", i) for i in range(n)] + [("restart",), ("heal",)]
    return base + ([("pause", i) for i in range(n)] + [("resume",)] if pauses else [])


def faults(genes: list[tuple[int, int]], n: int, pauses: bool = False) -> tuple[list[dict], float]:
    """The fault events of ``genes`` (each an index into ``steps(n, pauses)`` and one into GAPS:
    the wait after it) from t = START, and the run's duration (SETTLE after the last wait)."""
    table = steps(n, pauses)
    t = START
    out: list[dict] = []
    crashed: list[int] = []
    paused: list[int] = []
    for step_index, gap in genes:
        step = table[step_index]
        if step[0] == "pause":
            out.append({"t": t, "kind": "fault", "fault": "pause", "node": step[1]})
            if step[1] not in paused:
                paused.append(step[1])
        elif step[0] == "resume":
            for node in paused:
                out.append({"t": t, "kind": "fault", "fault": "resume", "node": node})
            paused = []
        elif step[0] == "crash":
            out.append({"t": t, "kind": "fault", "fault": "crash", "node": step[1]})
            if step[1] not in crashed:
                crashed.append(step[1])
        elif step[0] == "isolate":
            rest = [i for i in range(n) if i != step[1]]
            out.append({"t": t, "kind": "fault", "fault": "partition", "groups": [[step[1]], rest]})
        elif step[0] == "restart":
            for node in crashed:
                out.append({"t": t, "kind": "fault", "fault": "restart", "node": node, "durable": True})
            crashed = []
        else:
            out.append({"t": t, "kind": "fault", "fault": "heal"})
        t = round(t + GAPS[gap], 9)  # 2.6, not 2.5999999999999996, in the written preset
    return out, t + SETTLE


def workload(n: int) -> dict:
    """The preset's ``[workload]`` table: OPS, with clients next to every node."""
    return OPS | {"contacts": n}


@lru_cache(maxsize=8)
def _ops(n: int, seed: int, horizon: float) -> tuple[dict, ...]:
    return tuple(stream.generate(OPS["kind"], _params(n), seed, horizon))


def _params(n: int) -> dict:
    from sims.core import registry

    specs = registry.get_workload(OPS["kind"]).params
    raw = {k: v for k, v in workload(n).items() if k != "kind"}
    return registry.resolve_params(specs, raw, "workload")


def events(
    genes: list[tuple[int, int]], n: int, seed: int, longest: float, pauses: bool = False
) -> tuple[list[dict], float]:
    """The stream of a candidate and its duration: the operations up to the duration merged with
    the faults, a fault after the operations at the same instant (as ``stream.build`` does).
    ``longest``: the longest duration any candidate of this search has (operations are drawn
    once up to it, and each run takes its prefix)."""
    fault_events, duration = faults(genes, n, pauses)
    ops = _ops(n, seed, longest)
    cut = bisect_right([ev["t"] for ev in ops], duration)
    merged = [(ev["t"], 0, i, ev) for i, ev in enumerate(ops[:cut])]
    merged += [(ev["t"], 1, i, ev) for i, ev in enumerate(fault_events)]
    merged.sort(key=lambda x: (x[0], x[1], x[2]))
    return [dict(m[3]) for m in merged], duration
