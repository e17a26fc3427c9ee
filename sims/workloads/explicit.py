"""Explicit arrival lists: a request at each given time, e.g. the workload a search found
(``contention search ratelimit ... --out F``). Events: ``{"t", "kind": "request", "id": i}``,
exactly what the arrival processes (``arrivals.py``) emit."""

from __future__ import annotations

import math
from collections.abc import Iterator
from random import Random

from sims.core.limits import MAX_STREAM_EVENTS, show
from sims.core.registry import Param, workload


@workload(
    "arrival_times",
    times=Param(list, None, "arrival times in seconds, non-decreasing, each >= 0", required=True, max_items=1_000_000),
)
def arrival_times(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """One request at each time of ``times`` (seconds; written as decimals, e.g. 0.95, which the
    rate limiters read exactly)."""
    times = params["times"]
    if len(times) > MAX_STREAM_EVENTS:
        raise ValueError(f"workload.times: over {MAX_STREAM_EVENTS} arrivals")
    last = 0.0
    for i, t in enumerate(times):
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            raise ValueError(f"workload.times[{i}]: expected a finite number of seconds, got {show(t)}")
        if t < last:
            raise ValueError(f"workload.times[{i}]: {t!r} is before the previous time ({last!r}) or below 0")
        last = t
    for i, t in enumerate(times):
        if t > duration:
            return
        yield {"t": float(t), "kind": "request", "id": i}
