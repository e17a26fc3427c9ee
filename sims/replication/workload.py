"""The replication workload: clients reading and writing single-key registers.

Events: ``{"t", "kind": "write" | "read", "id", "key", "node"}``: operation ``id`` on register
``key``, sent by a client next to node ``node`` (its contact: the node it talks to). A write's
value is its ``id``, so every value is unique and a read names the write it saw. Faults come
from the preset's ``[[events]]`` as ``{"t", "kind": "fault", "fault": ...}`` (sims.net's faults),
so every panel sees the same operations and the same faults at the same instants.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import exponential
from sims.core.limits import MAX_DURATION, MAX_RATE
from sims.core.registry import Param, workload
from sims.core.stream import Mark


@workload(
    "registers",
    rate=Param(float, 100.0, "client operations per second (Poisson)", above=0, max=MAX_RATE),
    read_ratio=Param(float, 0.5, "share of operations that are reads", min=0, max=1),
    keys=Param(int, 4, "registers, chosen uniformly", min=1, max=1000),
    contacts=Param(int, 3, "clients sit next to nodes 0 .. contacts-1, chosen uniformly", min=1, max=64),
    stop_at=Param(float, 0.0, "no operations after this time (0 = to the end)", min=0, max=MAX_DURATION),
)
def registers(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Poisson reads and writes on a few registers from clients spread over the first nodes."""
    p = params
    end = min(duration, p["stop_at"]) if p["stop_at"] else duration
    if end < duration:
        yield Mark(end, "operations stop")
    rate, ratio, keys, contacts = p["rate"], p["read_ratio"], p["keys"], p["contacts"]
    t = 0.0
    i = 0
    while True:
        t += exponential(rng, rate)
        if t > end:
            return
        kind = "read" if rng.random() < ratio else "write"
        yield {"t": t, "kind": kind, "id": i, "key": rng.randrange(keys), "node": rng.randrange(contacts)}
        i += 1
