"""Reference streams for cache write policies. Events: ``{"t", "kind": "ref", "key": int}`` with
``"op": "w"`` for writes."""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import Zipf
from sims.core.limits import MAX_RATE
from sims.core.registry import Param, workload
from sims.workloads.keys import MAX_KEYS, MAX_ZIPF_S

LOG_BASE = 10_000_000  # log keys: LOG_BASE, LOG_BASE + 1, ... never read back


@workload(
    "rw_mix",
    rate=Param(float, 1000.0, "references per virtual second (evenly spaced)", above=0.0, max=MAX_RATE),
    hot_n=Param(int, 200, "hot keys (0..hot_n-1), read and rewritten", min=1, max=MAX_KEYS),
    hot_s=Param(float, 0.9, "zipf exponent within the hot set", min=0.0, max=MAX_ZIPF_S),
    hot_write_ratio=Param(float, 0.3, "fraction of hot references that are writes", min=0.0, max=1.0),
    log_ratio=Param(
        float,
        0.2,
        "fraction of all references that append a fresh log key (a write never read back)",
        min=0.0,
        max=1.0,
    ),
)
def rw_mix(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Hot keys read and rewritten (zipf), mixed with append-only writes of fresh keys."""
    z = Zipf(params["hot_n"], params["hot_s"])
    dt = 1.0 / params["rate"]
    log_ratio, hot_wr = params["log_ratio"], params["hot_write_ratio"]
    log_next = LOG_BASE
    i = 0
    while True:
        i += 1
        t = i * dt
        if t > duration:
            return
        if rng.random() < log_ratio:
            yield {"t": t, "kind": "ref", "key": log_next, "op": "w"}
            log_next += 1
            continue
        key = z.sample(rng) - 1
        if rng.random() < hot_wr:
            yield {"t": t, "kind": "ref", "key": key, "op": "w"}
        else:
            yield {"t": t, "kind": "ref", "key": key}
