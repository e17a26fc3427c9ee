"""The trees workload: one seeded stream of operations, emitted as one event at t = 0.

Event: ``{"t": 0.0, "kind": "ops", "ops": [[op, ...], ...], "universe": U, "keys": "int" | "str"}``.
First ``n`` inserts of distinct keys, then the other operations shuffled (with ``interleave`` the
inserts are shuffled in among them too: a priority queue's pushes and pops). A model of the set
picks the keys: a delete takes a key held at that point, a search one held with probability
``hit`` (else any key), a pop takes the smallest. Keys:

- ``random``: integers drawn from 0 … universe − 1;
- ``sorted``, ``reversed``: the same keys, inserted in increasing or decreasing order;
- ``strings``: ``length`` letters drawn from the first ``alphabet`` letters.

``range a b`` spans ``width`` keys; ``add i d`` adds 1 … 9 to a[i]; ``prefix i`` sums a[0 … i].
"""

from __future__ import annotations

from collections.abc import Iterator
from heapq import heappop, heappush
from random import Random

from sims.core.params import State
from sims.core.registry import Param, workload

KEYS = ("random", "sorted", "reversed", "strings")
MAX_OPS = 20_000  # of each kind: a preset's stream (the trace command takes more)
LETTERS = "abcdefghijklmnopqrstuvwxyz"


class Held:
    """The keys held, for picking: a list with positions (a uniform pick and a removal in O(1))
    and a heap with lazy deletion for the smallest."""

    def __init__(self) -> None:
        self.keys: list = []
        self.at: dict = {}
        self.heap: list = []

    def add(self, k) -> None:
        if k not in self.at:
            self.at[k] = len(self.keys)
            self.keys.append(k)
            heappush(self.heap, k)

    def remove(self, k) -> None:
        i = self.at.pop(k, None)
        if i is None:
            return
        last = self.keys.pop()
        if i < len(self.keys):
            self.keys[i] = last
            self.at[last] = i

    def pick(self, rng: Random):
        return self.keys[rng.randrange(len(self.keys))] if self.keys else None

    def smallest(self):
        while self.heap and self.heap[0] not in self.at:
            heappop(self.heap)
        return self.heap[0] if self.heap else None


def fresh_keys(p: dict, rng: Random) -> list:
    """``n`` distinct keys in insertion order."""
    n = p["n"]
    seen: set = set()
    out: list = []
    if p["keys"] == "strings":
        letters = LETTERS[: p["alphabet"]]
        if p["alphabet"] ** p["length"] < 2 * n:
            raise ValueError(
                f"workload: {n} distinct strings of {p['length']} letters from {p['alphabet']} need "
                f"alphabet ** length ≥ {2 * n}"
            )
        while len(out) < n:
            s = "".join(letters[rng.randrange(len(letters))] for _ in range(p["length"]))
            if s not in seen:
                seen.add(s)
                out.append(s)
        return out
    if p["universe"] < 2 * n:
        raise ValueError(f"workload: {n} distinct keys need universe ≥ {2 * n}, got {p['universe']}")
    while len(out) < n:
        k = rng.randrange(p["universe"])
        if k not in seen:
            seen.add(k)
            out.append(k)
    if p["keys"] == "sorted":
        out.sort()
    elif p["keys"] == "reversed":
        out.sort(reverse=True)
    return out


def any_key(p: dict, rng: Random):
    if p["keys"] == "strings":
        letters = LETTERS[: p["alphabet"]]
        return "".join(letters[rng.randrange(len(letters))] for _ in range(p["length"]))
    return rng.randrange(p["universe"])


def operations(p: dict, rng: Random) -> list[list]:
    if p["keys"] not in KEYS:
        raise ValueError(f"workload.keys: expected one of {', '.join(KEYS)}, got {p['keys']!r}")
    strings = p["keys"] == "strings"
    for kind in ("ranges", "adds", "prefixes"):
        if strings and p[kind]:
            raise ValueError(f"workload.{kind}: needs integer keys (keys = 'random', 'sorted' or 'reversed')")
    inserts = fresh_keys(p, rng)
    rest = ["search"] * p["searches"] + ["delete"] * p["deletes"] + ["range"] * p["ranges"]
    rest += ["pop"] * p["pops"] + ["add"] * p["adds"] + ["prefix"] * p["prefixes"]
    if p["interleave"]:
        kinds = ["insert"] * len(inserts) + rest
        rng.shuffle(kinds)
    else:
        rng.shuffle(rest)
        kinds = ["insert"] * len(inserts) + rest
    held, fresh, ops = Held(), iter(inserts), []
    u, width = p["universe"], p["width"]
    for kind in kinds:
        if kind == "insert":
            k = next(fresh)
            held.add(k)
            ops.append(["insert", k])
        elif kind == "search":
            k = held.pick(rng) if held.keys and rng.random() < p["hit"] else any_key(p, rng)
            ops.append(["search", k])
        elif kind == "delete":
            k = held.pick(rng) if held.keys else any_key(p, rng)
            held.remove(k)
            ops.append(["delete", k])
        elif kind == "pop":
            held.remove(held.smallest())
            ops.append(["pop"])
        elif kind == "range":
            a = rng.randrange(max(1, u - width + 1))
            ops.append(["range", a, a + width - 1])
        elif kind == "add":
            ops.append(["add", rng.randrange(u), 1 + rng.randrange(9)])
        else:
            ops.append(["prefix", rng.randrange(u)])
    return ops


def count(help: str) -> Param:
    return Param(int, 0, help, min=0, max=MAX_OPS)


@workload(
    "ops",
    keys=Param(str, "random", " | ".join(KEYS), choices=KEYS),
    n=Param(int, 200, "distinct keys inserted (first, unless interleave)", min=0, max=MAX_OPS),
    universe=Param(
        int,
        1000,
        "integer keys are drawn from 0 … universe − 1 (Fenwick and segment trees hold arrays this long)",
        min=1,
        max=1_000_000,
        state=State(bytes=48),
    ),
    length=Param(int, 6, "strings: letters in a key", min=1, max=64),
    alphabet=Param(int, 4, "strings: letters drawn from (the first of a … z)", min=1, max=26),
    searches=count("searches after the inserts"),
    hit=Param(float, 0.5, "share of searches for a key held at the time", min=0, max=1),
    deletes=count("deletes of a key held at the time"),
    ranges=count("range queries (integer keys)"),
    width=Param(int, 10, "keys a range query spans", min=1, max=1_000_000),
    pops=count("pops of the smallest key"),
    adds=count("point updates a[i] += 1 … 9 (integer keys)"),
    prefixes=count("prefix sums a[0] + … + a[i] (integer keys)"),
    interleave=Param(bool, False, "shuffle the inserts in among the other operations"),
)
def ops(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """One seeded stream of tree operations, as one event at t = 0."""
    if duration <= 0:
        return
    keys = "str" if params["keys"] == "strings" else "int"
    yield {"t": 0.0, "kind": "ops", "ops": operations(params, rng), "universe": params["universe"], "keys": keys}
