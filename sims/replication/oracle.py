"""The stale-read oracle for single-key registers.

A read of key k that returned the value of write ``w`` (``None``: the initial value) is stale iff
some write ``w'`` to k *completed before the read began* and *began after w completed*: every
linearization must then order w before w' before the read, so the read should have seen w' or
something newer. Writes never acknowledged (pending, timed out) have no completion, so they may
be linearized anywhere after they began: a read may see them and is never stale because of them.

This is the real-time rule for registers (Herlihy & Wing 1990, restricted to one reader's
obligation to the writes it must see); reads that see a value older than one an earlier read
returned (a new-old inversion between two reads) are not counted here.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from sims.core.panel import Checkpointed


class RegisterOracle(Checkpointed):
    """Per key, the completed writes in order of completion: ``ends[k]`` (non-decreasing) and
    ``latest[k][j]`` = the latest start among the first j + 1 of them. Completions must be
    reported in time order (they are: the virtual clock only moves forward)."""

    __slots__ = ("ends", "latest", "done_at")

    def __init__(self) -> None:
        self.ends: dict[int, list[float]] = {}
        self.latest: dict[int, list[float]] = {}
        self.done_at: dict[tuple[int, int], float] = {}  # (key, write id) -> when its client got the ack

    def write_done(self, key: int, wid: int, start: float, end: float) -> None:
        ends = self.ends.setdefault(key, [])
        latest = self.latest.setdefault(key, [])
        if ends and end < ends[-1]:
            raise ValueError(f"write {wid} completed at {end!r}, before an earlier completion {ends[-1]!r}")
        ends.append(end)
        latest.append(start if not latest or start > latest[-1] else latest[-1])
        self.done_at[(key, wid)] = end

    def is_stale(self, key: int, wid: int | None, start: float) -> bool:
        """Would a read of ``key`` that began at ``start`` be stale returning write ``wid``?"""
        ends = self.ends.get(key)
        if not ends:
            return False
        j = bisect_left(ends, start)  # ends[:j] completed strictly before the read began
        if j == 0:
            return False
        if wid is None:
            return True
        seen = self.done_at.get((key, wid))
        return seen is not None and self.latest[key][j - 1] > seen


def stale_reads(history: Iterable[dict]) -> list[int]:
    """Indices of the stale reads in a finished history of operations
    ``{"op": "w" | "r", "key", "value", "start", "end"}`` (``end`` None: never completed; a
    write's value is its id, unique per key; a read's value None is the initial value)."""
    ops = list(history)
    oracle = RegisterOracle()
    writes = sorted(
        (i for i, o in enumerate(ops) if o["op"] == "w" and o["end"] is not None),
        key=lambda i: (ops[i]["end"], i),
    )
    for i in writes:
        o = ops[i]
        oracle.write_done(o["key"], o["value"], o["start"], o["end"])
    return [
        i
        for i, o in enumerate(ops)
        if o["op"] == "r" and o["end"] is not None and oracle.is_stale(o["key"], o["value"], o["start"])
    ]
