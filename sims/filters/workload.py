"""The filters workload: a seeded stream of inserts, lookups and deletes on a set of integer keys.

Events ``{"t", "kind", "key"}`` at ``rate`` operations a second (evenly spaced, so a preset's
n at a time is known), each one of:

- ``insert``: a key never inserted before (0, 2, 4, ...: the filters hash every key through
  ``mix64``, so consecutive keys land as far apart as random ones);
- ``lookup`` with ``present`` 1: a key inserted and not deleted, drawn uniformly;
- ``lookup`` with ``present`` 0: a key never inserted (an odd number: inserted keys are even),
  the lookups whose "maybe" is a false positive;
- ``delete``: a key inserted and not yet deleted, drawn uniformly, removed from the set.

``lookups`` is the share of operations that are lookups, ``present`` the share of those that ask
for a key in the set, ``deletes`` the share of operations that delete; the rest insert. Before
``insert_for`` seconds every operation inserts. A delete that finds the set empty inserts instead,
a present lookup then asks for an absent key. From ``stop_inserts`` seconds (0: never) operations
only look up and delete; that moment is marked. Both are times, not counts, so that a stream's
size is its rate times its duration (what the budget's refusal names).
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.limits import MAX_DURATION
from sims.core.registry import Param, workload
from sims.core.stream import Mark

_MAX_RATE = 100_000.0


@workload(
    "filter_ops",
    rate=Param(float, 1000.0, "operations per second (evenly spaced)", above=0.0, max=_MAX_RATE),
    lookups=Param(float, 0.5, "share of operations that look a key up", min=0.0, max=1.0),
    present=Param(float, 0.2, "share of lookups that ask for a key in the set", min=0.0, max=1.0),
    deletes=Param(float, 0.0, "share of operations that delete a key of the set", min=0.0, max=1.0),
    insert_for=Param(float, 0.0, "every operation before this time (seconds) inserts", min=0.0, max=MAX_DURATION),
    stop_inserts=Param(
        float,
        0.0,
        "from this time (seconds) no operation inserts: lookups and deletes only; 0 = never",
        min=0.0,
        max=MAX_DURATION,
    ),
    start=Param(float, 0.0, "the first operation comes at this time (seconds)", min=0.0, max=MAX_DURATION),
)
def filter_ops(params: dict, rng: Random, duration: float) -> Iterator[dict | Mark]:
    """Inserts, lookups of present and absent keys and deletes, in time order."""
    lookups, deletes = params["lookups"], params["deletes"]
    if lookups + deletes > 1.0:
        raise ValueError(f"workload.deletes: lookups ({lookups!r}) + deletes ({deletes!r}) must be at most 1")
    dt = 1.0 / params["rate"]
    present, warmup, stop = params["present"], params["insert_for"], params["stop_inserts"]
    live: list[int] = []  # keys in the set (swap-remove on delete)
    inserted = 0
    if stop and stop <= duration:
        yield Mark(stop, f"{stop:g} s: no more inserts")
    i = 0
    while (t := params["start"] + i * dt) <= duration:
        i += 1
        u = rng.random()
        full = stop and t >= stop
        if t < warmup and not full:
            kind = "insert"
        elif u < lookups:
            kind = "lookup"
        elif u < lookups + deletes and live:
            kind = "delete"
        else:
            kind = "lookup" if full else "insert"
        if kind == "insert":
            key = 2 * inserted
            live.append(key)
            inserted += 1
            yield {"t": t, "kind": "insert", "key": key}
        elif kind == "delete":
            k = int(rng.random() * len(live))
            key = live[k]
            last = live.pop()
            if last != key:
                live[k] = last
            yield {"t": t, "kind": "delete", "key": key}
        elif live and rng.random() < present:
            yield {"t": t, "kind": "lookup", "key": live[int(rng.random() * len(live))], "present": 1}
        else:
            yield {"t": t, "kind": "lookup", "key": 2 * rng.getrandbits(40) + 1, "present": 0}
