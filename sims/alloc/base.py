"""The allocator interface every alloc policy implements, and the heap-map helper they share.

Every policy answers ``alloc(oid, size) -> ok``, ``free(oid)`` and ``grow(oid, size) -> ok``
(realloc to a larger total); running out of space is ``False``, never an exception. ``held`` is
the heap bytes live objects occupy, internal waste included; ``free_bytes()`` is counted from
the policy's own structure, so ``check_invariants`` can assert that no byte is lost.
"""

from __future__ import annotations

from sims.core.registry import Param

_MOVING = object()  # the key a block is allocated under while a grow moves it


class Allocator:
    """Base: objects by id, and realloc-by-copy for ``grow`` when a block cannot extend."""

    PARAMS: dict[str, Param] = {}

    def __init__(self, heap: int, align: int) -> None:
        if isinstance(heap, bool) or not isinstance(heap, int) or heap < 1:
            raise ValueError(f"heap must be a positive number of bytes, got {heap!r}")
        if isinstance(align, bool) or not isinstance(align, int) or align < 1:
            raise ValueError(f"align must be a positive number of bytes, got {align!r}")
        self.heap = heap
        self.align = align
        self.held = 0  # bytes occupied by live objects, internal waste included
        self.moves = 0  # grows that had to copy the object to a new block

    def round(self, size: int) -> int:
        a = self.align
        return -(-size // a) * a

    def alloc(self, oid: object, size: int) -> bool:
        raise NotImplementedError

    def free(self, oid: object) -> None:
        raise NotImplementedError

    def capacity(self, oid: object) -> int:
        """Bytes the object may use without moving."""
        raise NotImplementedError

    def extend(self, oid: object, size: int) -> bool:
        """Grow in place past ``capacity`` if the policy can; default: cannot."""
        return False

    def rename(self, old: object, new: object) -> None:
        raise NotImplementedError

    def grow(self, oid: object, size: int) -> bool:
        """Make room for ``size`` bytes: in place if possible, else allocate a new block, copy,
        free the old one. On failure the object keeps its old block."""
        if size <= self.capacity(oid) or self.extend(oid, size):
            return True
        if not self.alloc(_MOVING, size):
            return False
        self.free(oid)
        self.rename(_MOVING, oid)
        self.moves += 1
        return True

    def free_bytes(self) -> int:
        raise NotImplementedError

    def largest_free(self) -> int:
        """The largest single request that would succeed now."""
        raise NotImplementedError

    def ranges(self) -> list[list]:
        """The heap map: [start, length, owner] in address order, owner None for free space."""
        raise NotImplementedError

    def state(self) -> dict:
        return {}

    # -- recording mode (sims/core/diverge.py) ---------------------------------------------------
    def where(self, oid: object) -> str:
        """Where the object lives, for a decision: "at 4096", or its runs for a paged object."""
        return self.where_runs([s for s, _, owner in self.ranges() if owner == oid])

    @staticmethod
    def where_runs(starts: list[int]) -> str:
        if len(starts) == 1:
            return f"at {starts[0]}"
        return f"at {', '.join(map(str, starts[:3]))}" + (f" (+{len(starts) - 3} runs)" if len(starts) > 3 else "")

    def explain(self, d, other=None) -> str:
        """One sentence on a placement or a failure; every policy says its own (``say``)."""
        raise NotImplementedError(f"{type(self).__name__} does not explain its decisions")

    def say(self, d, how: str) -> str:
        """The sentence: ``how`` is the policy's rule for where a block goes."""
        f = d.facts
        if d.action == "fail":
            return (
                f"{self.policy_name} could not fit {d.subject} ({f['size']} B): the largest free block is "
                f"{f['largest']} B of {f['free']} B free, and {how}"
            )
        verb = "grew" if d.action == "grow" else "placed"
        return f"{self.policy_name} {verb} {d.subject} ({f['size']} B, holding {f['held']} B) {d.target}: {how}"

    def check_invariants(self) -> None:
        ranges = self.ranges()
        pos = 0
        for start, length, _ in ranges:
            assert start == pos and length > 0, f"gap or overlap at byte {start} (expected {pos})"
            pos += length
        assert pos == self.heap, f"heap map covers {pos} of {self.heap} bytes"
        free = sum(n for _, n, owner in ranges if owner is None)
        assert free == self.free_bytes() == self.heap - self.held, (free, self.free_bytes(), self.heap, self.held)


def _merge(items: list[list]) -> list[list]:
    """Sort [start, length, owner] ranges and join neighbours with the same owner."""
    items.sort(key=lambda r: r[0])
    out: list[list] = []
    for r in items:
        if out and out[-1][2] is r[2] and out[-1][0] + out[-1][1] == r[0]:
            out[-1][1] += r[1]
        else:
            out.append(list(r))
    return out
