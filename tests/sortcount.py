"""Timsort against the interpreter's own list.sort, comparison for comparison.

Run as a script (``python tests/sortcount.py`` with sims importable; Pyodide runs it through
tests/node/pyodide_py.mjs), it prints one JSON object: the interpreter's version, the rules it
compared (``cpython``: 3.13 from Python 3.13 on, else 3.11), how many cases, and the mismatches.
Cases: every input kind of the sorting workload at sizes up to 10,000, around minrun's edges.
"""

from __future__ import annotations

import json
import sys
from random import Random

from sims.sorting.array import SortState
from sims.sorting.timsort import Timsort
from sims.sorting.workload import INPUTS, keys_for

SIZES = (0, 1, 2, 3, 5, 8, 13, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000, 2112, 4096, 5000, 10000)


class Counted:
    """A key whose ``__lt__`` counts its calls: what list.sort does to it is what we measure."""

    __slots__ = ("key",)
    calls = 0

    def __init__(self, key) -> None:
        self.key = key

    def __lt__(self, other: Counted) -> bool:
        Counted.calls += 1
        return self.key < other.key


def rules() -> str:
    return "3.13" if sys.version_info >= (3, 13) else "3.11"


def list_sort_comparisons(keys: list) -> int:
    items = [Counted(k) for k in keys]
    Counted.calls = 0
    items.sort()
    return Counted.calls


def timsort_comparisons(keys: list, cpython: str | None = None) -> int:
    s = SortState(keys)
    for _ in Timsort(cpython or rules()).run(s, Random(0)):
        pass
    assert s.is_stable(), "timsort left the keys unsorted or unstable"
    return s.comparisons


def cases(seed: int = 0):
    rng = Random(seed)
    for n in SIZES:
        for kind in INPUTS:
            p = {"input": kind, "n": max(n, 1), "values": 0, "swaps": 3, "unique": 4, "runs": 5}
            keys, _ = keys_for(p, rng)
            yield f"{kind} n={n}", keys[:n]


def compare_all() -> dict:
    bad = []
    count = 0
    for name, keys in cases():
        count += 1
        want, got = list_sort_comparisons(keys), timsort_comparisons(keys)
        if want != got:
            bad.append({"case": name, "list_sort": want, "timsort": got})
    return {"python": sys.version.split()[0], "cpython": rules(), "cases": count, "mismatches": bad}


if __name__ == "__main__":
    print(json.dumps(compare_all()))
