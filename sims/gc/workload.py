"""The mutator: a seeded stream of heap operations that every collector panel replays.

The program builds small structures: a head object and a chain of children (each child is
allocated, linked from the one before, and let go at once, so it lives as long as the chain).
A structure dies young with probability ``young_frac`` (mean lifetime ``young_life`` seconds),
else it lives ``old_life`` seconds on average (0: to the end). With ``cycle_p`` its last child
points back to the head (a cycle); with ``link_p`` a long-lived structure is made to point to the
new one, replacing its previous link (an old-to-young pointer, for the write barrier). A share
``large_p`` of structures is one large object. ``base_live`` bytes of long-lived structures are
built at t = 0 (a fixed live set, no large objects in it).

Events: ``{"t", "kind": "alloc", "id", "size"}`` (a new object, a root),
``{"kind": "ptr" | "unptr", "from", "to"}`` and ``{"kind": "drop", "id"}`` (no longer a root).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from random import Random

from sims.core.dists import exponential
from sims.core.limits import MAX_DURATION, MAX_RATE
from sims.core.registry import Param, workload


@workload(
    "mutator",
    rate=Param(float, 20000.0, "objects allocated per second", above=0.0, max=MAX_RATE),
    size_min=Param(int, 16, "smallest ordinary object, bytes", min=8, max=1 << 20),
    size_max=Param(int, 256, "largest ordinary object, bytes", min=8, max=1 << 20),
    children=Param(int, 4, "a structure has 0..children children, uniformly", min=0, max=64),
    young_frac=Param(float, 0.9, "share of structures that die young", min=0.0, max=1.0),
    young_life=Param(float, 0.01, "mean lifetime of a young structure, seconds", above=0.0, max=MAX_DURATION),
    old_life=Param(
        float, 0.0, "mean lifetime of a long-lived structure, seconds (0 = forever)", min=0.0, max=MAX_DURATION
    ),
    cycle_p=Param(float, 0.0, "chance a structure's last child points back to its head", min=0.0, max=1.0),
    link_p=Param(float, 0.0, "chance a long-lived structure is made to point to a new one", min=0.0, max=1.0),
    large_p=Param(float, 0.0, "chance a structure is one large object instead", min=0.0, max=1.0),
    large_size=Param(int, 65536, "bytes of a large object", min=8, max=1 << 30),
    large_life=Param(float, 0.005, "mean lifetime of a large object, seconds", above=0.0, max=MAX_DURATION),
    base_live=Param(int, 0, "bytes of long-lived structures built at t = 0", min=0, max=1 << 24),
)
def mutator(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Structures of objects with young and long lifetimes, cycles, links and large objects."""
    p = params
    if p["size_max"] < p["size_min"]:
        raise ValueError(f"workload.size_max: expected >= size_min ({p['size_min']}), got {p['size_max']}")
    lo, hi = p["size_min"] // 8, p["size_max"] // 8
    per = 1.0 + p["children"] / 2.0  # objects per structure, on average
    rate = p["rate"] / per
    ids = 0
    seq = 0
    deaths: list[tuple[float, int, int]] = []  # (time, seq, head id): drops still to come
    longs: list[int] = []  # heads of live long-lived structures, for links
    where: dict[int, int] = {}  # head -> its index in longs
    link_of: dict[int, int] = {}  # long-lived head -> the structure it points to now

    def build(t: float, out: list, large_ok: bool = True) -> tuple[int, bool]:
        """Append a structure's events to ``out``; returns (its head, whether it is one large object)."""
        nonlocal ids
        head = ids
        ids += 1
        if large_ok and rng.random() < p["large_p"]:
            out.append({"t": t, "kind": "alloc", "id": head, "size": p["large_size"]})
            return head, True
        out.append({"t": t, "kind": "alloc", "id": head, "size": 8 * rng.randint(lo, hi)})
        prev = head
        for _ in range(rng.randint(0, p["children"])):
            c = ids
            ids += 1
            out.append({"t": t, "kind": "alloc", "id": c, "size": 8 * rng.randint(lo, hi)})
            out.append({"t": t, "kind": "ptr", "from": prev, "to": c})
            out.append({"t": t, "kind": "drop", "id": c})
            prev = c
        if prev != head and rng.random() < p["cycle_p"]:
            out.append({"t": t, "kind": "ptr", "from": prev, "to": head})
        return head, False

    def schedule(t: float, head: int, life: float) -> None:
        nonlocal seq
        if life > 0:
            seq += 1
            heapq.heappush(deaths, (t + exponential(rng, 1.0 / life), seq, head))

    def die(t: float, head: int) -> dict:
        i = where.pop(head, None)
        if i is not None:
            last = longs.pop()
            if last != head:
                longs[i] = last
                where[last] = i
        return {"t": t, "kind": "drop", "id": head}

    built = 0
    while built < p["base_live"]:  # each structure yielded as built: a reader may stop early
        out: list[dict] = []
        head, _ = build(0.0, out, large_ok=False)
        built += sum(ev["size"] for ev in out if ev["kind"] == "alloc")
        where[head] = len(longs)
        longs.append(head)
        schedule(0.0, head, p["old_life"])
        yield from out
    t = 0.0
    while True:
        t += exponential(rng, rate)
        while deaths and deaths[0][0] <= t:
            when, _, head = heapq.heappop(deaths)
            if when > duration:
                return
            yield die(when, head)
            link_of.pop(head, None)
        if t > duration:
            return
        young = rng.random() < p["young_frac"]
        out = []
        head, large = build(t, out)
        yield from out
        if large:
            schedule(t, head, p["large_life"])
        elif young:
            schedule(t, head, p["young_life"])
        else:
            where[head] = len(longs)
            longs.append(head)
            schedule(t, head, p["old_life"])
        if longs and rng.random() < p["link_p"]:
            holder = longs[rng.randrange(len(longs))]
            if holder != head:
                prev = link_of.get(holder)
                yield {"t": t, "kind": "ptr", "from": holder, "to": head}
                if prev is not None:
                    yield {"t": t, "kind": "unptr", "from": holder, "to": prev}
                link_of[holder] = head
