"""The atomic commit workload: transactions arriving over time, each over several participants,
and the consensus workload's faults (``sims.consensus.workload``), one stream for every panel.

Events: ``{"t", "kind": "txn", "id", "parts": [participants], "no": [those that vote no]}`` and
the faults of ``sims.net`` (``"leader"`` names the coordinator, node 0). Every draw (the
participants, the no votes, the random faults) comes from the stream's generator, so 2PC and 3PC
see the same transactions, the same votes and the same faults. ``schedule`` takes the consensus
workload's fault tables and transaction tables ``{t, kind = "txn", parts = [...], no = [...]}``
(``parts`` defaults to every participant, ``no`` to nobody).
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.consensus.workload import _check_schedule, _random_faults
from sims.core.dists import exponential
from sims.core.limits import MAX_DURATION
from sims.core.registry import Param, workload


def _check_txn(ev: dict, k: int, n: int) -> dict:
    where = f"workload.schedule[{k}]"
    out = {"t": float(ev["t"]), "kind": "txn"}
    for key, default in (("parts", list(range(1, n))), ("no", [])):
        value = ev.get(key, default)
        if not (isinstance(value, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in value)):
            raise ValueError(f"{where}.{key}: expected a list of participants (1 .. {n - 1}), got {value!r}")
        if any(not 0 < p < n for p in value):
            raise ValueError(f"{where}.{key}: participants are 1 .. {n - 1} (node 0 coordinates), got {value!r}")
        out[key] = sorted(set(value))
    if not out["parts"]:
        raise ValueError(f"{where}.parts: a transaction needs at least one participant")
    return out


def _schedule(p: dict) -> list[dict]:
    """The schedule's faults checked by the consensus workload, its transactions here."""
    raw = p["schedule"]
    plain = [{"t": ev["t"], "kind": "op"} if isinstance(ev, dict) and ev.get("kind") == "txn" else ev for ev in raw]
    checked = _check_schedule(plain)  # a bad t or fault names its index
    return [_check_txn(ev, k, p["nodes"]) if ev.get("kind") == "txn" else checked[k] for k, ev in enumerate(raw)]


@workload(
    "transactions",
    nodes=Param(int, 5, "servers: node 0 coordinates, 1 .. nodes-1 take part", min=2, max=9),
    txn_rate=Param(float, 5.0, "transactions per second (Poisson; 0 = only the schedule's)", min=0.0, max=10_000.0),
    txn_start=Param(float, 1.0, "no transactions before this time", min=0.0, max=MAX_DURATION),
    span=Param(int, 3, "participants in each transaction (at most nodes - 1)", min=1, max=8),
    no_prob=Param(float, 0.0, "probability a participant votes no", min=0.0, max=1.0),
    schedule=Param(list, [], "explicit events: fault tables, and transactions {t, kind = 'txn'}", max_items=10_000),
    crash_every=Param(
        float, 0.0, "mean seconds between crashes of a random node (0 = none)", min=0.0, max=MAX_DURATION
    ),
    leader_crash_every=Param(
        float, 0.0, "mean seconds between crashes of the coordinator (0 = none)", min=0.0, max=MAX_DURATION
    ),
    partition_every=Param(
        float, 0.0, "mean seconds between partitions of a random minority (0 = none)", min=0.0, max=MAX_DURATION
    ),
    down_for=Param(
        float, 1.0, "a crashed node restarts, a partition heals, after this long", above=0.0, max=MAX_DURATION
    ),
    faults_from=Param(float, 1.0, "random faults start after this time", min=0.0, max=MAX_DURATION),
    durable=Param(bool, True, "a restarted node keeps its disk (2PC and 3PC keep their logs regardless)"),
)
def transactions(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Transactions (Poisson), each over ``span`` random participants, and faults."""
    p = params
    fixed = _schedule(p)
    fixed.extend(e for e in _random_faults(p, rng, duration) if e["t"] <= duration)
    fixed = [e for e in fixed if e["t"] <= duration]
    fixed = [fixed[k] for k in sorted(range(len(fixed)), key=lambda k: (fixed[k]["t"], k))]
    txn, i = 0, 0
    for t, parts, no in _txns(p, rng, duration):
        while i < len(fixed) and fixed[i]["t"] <= t:  # at equal times the schedule goes first
            ev = fixed[i]
            i += 1
            if ev["kind"] == "txn":
                txn += 1
                ev = {**ev, "id": txn}
            yield ev
        txn += 1
        yield {"t": t, "kind": "txn", "id": txn, "parts": parts, "no": no}
    for ev in fixed[i:]:
        if ev["kind"] == "txn":
            txn += 1
            ev = {**ev, "id": txn}
        yield ev


def _txns(p: dict, rng: Random, duration: float) -> Iterator[tuple[float, list[int], list[int]]]:
    """Poisson arrivals from ``txn_start``, each with its participants and its no votes."""
    if p["txn_rate"] <= 0:
        return
    members = list(range(1, p["nodes"]))
    span = min(p["span"], len(members))
    t = p["txn_start"]
    while True:
        t += exponential(rng, p["txn_rate"])
        if t > duration:
            return
        rng.shuffle(members)
        parts = sorted(members[:span])
        no = [q for q in parts if p["no_prob"] > 0.0 and rng.random() < p["no_prob"]]
        yield t, parts, no
