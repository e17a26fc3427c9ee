"""The sorting workload: one seeded array, emitted as one stream event at t = 0.

Event: ``{"t": 0.0, "kind": "array", "keys": [...], "lo": 1, "hi": H}``: integer keys, all in
``lo … hi``, the range the input declares (a counting sort's table spans it). Inputs:

- ``random``: keys drawn uniformly from 1 … ``values`` (0: n), so some repeat;
- ``sorted``, ``reversed``: the same keys in order, or in reverse order;
- ``nearly_sorted``: the sorted keys with ``swaps`` random pairs exchanged;
- ``few_unique``: keys drawn from 1 … ``unique``;
- ``sawtooth``: ``runs`` ascending runs of random keys, one after another.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.registry import Param, workload

INPUTS = ("random", "sorted", "nearly_sorted", "reversed", "few_unique", "sawtooth")
MAX_N = 20_000  # items in a preset's array (the trace command takes more)


def keys_for(p: dict, rng: Random) -> tuple[list[int], int]:
    """The keys of input ``p["input"]`` and the largest key it may hold."""
    n, kind = p["n"], p["input"]
    if kind == "few_unique":
        return [1 + rng.randrange(p["unique"]) for _ in range(n)], p["unique"]
    hi = p["values"] or n
    keys = [1 + rng.randrange(hi) for _ in range(n)]
    if kind in ("sorted", "nearly_sorted"):
        keys.sort()
    elif kind == "reversed":
        keys.sort(reverse=True)
    elif kind == "sawtooth":
        runs = min(p["runs"], n)
        cuts = [n * r // runs for r in range(runs + 1)]
        keys = [k for r in range(runs) for k in sorted(keys[cuts[r] : cuts[r + 1]])]
    if kind == "nearly_sorted":
        for _ in range(p["swaps"]):
            i, j = rng.randrange(n), rng.randrange(n)
            keys[i], keys[j] = keys[j], keys[i]
    return keys, hi


@workload(
    "array",
    input=Param(str, "random", " | ".join(INPUTS), choices=INPUTS),
    n=Param(int, 100, "items to sort", min=1, max=MAX_N),
    values=Param(int, 0, "keys are drawn from 1 … values (0: n)", min=0, max=1_000_000),
    swaps=Param(int, 3, "nearly_sorted: random pairs exchanged", min=0, max=MAX_N),
    unique=Param(int, 5, "few_unique: distinct keys", min=1, max=1000),
    runs=Param(int, 4, "sawtooth: ascending runs", min=1, max=MAX_N),
)
def array(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """One seeded array of the named input kind, as one event at t = 0."""
    if params["input"] not in INPUTS:
        raise ValueError(f"workload.input: expected one of {', '.join(INPUTS)}, got {params['input']!r}")
    if duration <= 0:
        return
    keys, hi = keys_for(params, rng)
    yield {"t": 0.0, "kind": "array", "keys": keys, "lo": 1, "hi": hi}
