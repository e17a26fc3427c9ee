"""Allocation streams for the allocator topic: churn of mixed sizes and lifetimes, and objects
that grow after they are allocated (a KV cache). Events, in time order (a free before an alloc
at the same instant): ``{"t", "kind": "alloc", "id", "size"[, "max"]}``,
``{"t", "kind": "grow", "id", "size"}`` (new total bytes) and ``{"t", "kind": "free", "id"}``."""

from __future__ import annotations

from collections.abc import Iterator
from heapq import heappop, heappush
from random import Random

from sims.core.dists import exponential
from sims.core.limits import MAX_DURATION, MAX_RATE, show
from sims.core.registry import Param, workload


def _pair(raw: list, name: str) -> tuple[int, int]:
    if not (len(raw) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in raw)):
        raise ValueError(f"workload.{name}: expected [min, max] integers, got {show(raw)}")
    return raw[0], raw[1]


def _classes(raw: list) -> list[tuple[int, int, float, float]]:
    out = []
    for c in raw:
        if not (isinstance(c, list) and len(c) == 4):
            raise ValueError(f"workload.classes: expected [min_bytes, max_bytes, weight, mean_life_s], got {show(c)}")
        lo, hi, w, life = c
        if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
            raise ValueError(f"workload.classes: sizes must be integers with 1 <= min <= max, got {show(c)}")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x < 1e300 for x in (w, life)):
            raise ValueError(f"workload.classes: weight and mean life must be positive and finite, got {show(c)}")
        out.append((lo, hi, float(w), float(life)))
    if not out:
        raise ValueError("workload.classes: expected at least one class")
    return out


@workload(
    "alloc_churn",
    rate=Param(float, 50.0, "allocations per virtual second (evenly spaced)", above=0.0, max=MAX_RATE),
    classes=Param(
        list,
        [[32, 256, 0.8, 30.0], [8192, 32768, 0.2, 3.0]],
        "size classes [min_bytes, max_bytes, weight, mean_life_s]: size uniform, life exponential",
        max_items=100,
    ),
)
def alloc_churn(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Mixed-size churn: each allocation picks a class by weight, a size uniformly in the class
    and an exponential lifetime; it is freed when that runs out."""
    classes = _classes(params["classes"])
    total_w = sum(c[2] for c in classes)
    dt = 1.0 / params["rate"]
    frees: list[tuple[float, int]] = []  # (time, id): min-heap
    i = 0
    while True:
        t = (i + 1) * dt
        while frees and frees[0][0] <= t:
            ft, oid = heappop(frees)
            yield {"t": ft, "kind": "free", "id": oid}
        if t > duration:
            return
        x = rng.random() * total_w
        pick = classes[-1]
        for c in classes:
            x -= c[2]
            if x < 0:
                pick = c
                break
        lo, hi, _, life = pick
        yield {"t": t, "kind": "alloc", "id": i, "size": rng.randint(lo, hi)}
        heappush(frees, (t + exponential(rng, 1.0 / life), i))
        i += 1


@workload(
    "alloc_grow",
    rate=Param(float, 1.0, "new objects per virtual second (exponential gaps)", above=0.0, max=MAX_RATE),
    token_bytes=Param(int, 256, "bytes per token", min=1, max=1 << 20),
    prompt=Param(list, [20, 200], "initial tokens [min, max], uniform", max_items=2),
    output=Param(list, [50, 400], "tokens added after the alloc [min, max], uniform", max_items=2),
    max_output=Param(int, 512, "the most tokens an object may add: its 'max' (reservation)", min=1, max=1 << 20),
    token_dt=Param(float, 0.05, "seconds between an object's growth steps", above=0.0, max=MAX_DURATION),
    step=Param(int, 1, "tokens added per growth step", min=1, max=1 << 20),
)
def alloc_grow(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Objects that grow after allocation, like a sequence's KV cache during decoding: alloc
    with the prompt, grow by ``step`` tokens every ``token_dt`` until its output is done, free.
    Each alloc carries ``max`` = prompt + max_output tokens, what a reservation must set aside."""
    tb, step, dt = params["token_bytes"], params["step"], params["token_dt"]
    (plo, phi), (olo, ohi) = _pair(params["prompt"], "prompt"), _pair(params["output"], "output")
    if not (1 <= plo <= phi and 1 <= olo <= ohi <= params["max_output"] and step >= 1 and tb >= 1):
        raise ValueError("workload: need 1 <= prompt min <= max, 1 <= output min <= max <= max_output, step >= 1")
    # one heap entry per live object, its next step: (time, id, step number, prompt, done, out).
    # (time, id, step) orders events as pushing every step at the alloc would, with less heap.
    pending: list[tuple[float, int, int, int, int, int]] = []
    t, oid = 0.0, 0
    while True:
        t += exponential(rng, params["rate"])
        while pending and pending[0][0] <= t:
            at, i, k, prompt, done, out = heappop(pending)
            if done >= out:
                yield {"t": at, "kind": "free", "id": i}
                continue
            done = min(out, done + step)
            yield {"t": at, "kind": "grow", "id": i, "size": (prompt + done) * tb}
            heappush(pending, (at + dt if done < out else at, i, k + 1, prompt, done, out))
        if t > duration:
            return
        prompt, out = rng.randint(plo, phi), rng.randint(olo, ohi)
        yield {"t": t, "kind": "alloc", "id": oid, "size": prompt * tb, "max": (prompt + params["max_output"]) * tb}
        heappush(pending, (t + dt, oid, 0, prompt, 0, out))
        oid += 1
