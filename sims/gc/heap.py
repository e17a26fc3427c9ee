"""The heap mechanism: objects, roots, pointers, address-ordered free lists, and the clock the
collector's work is charged to.

The heap owns the state and its invariants; a collector (``collectors.py``) decides only when to
collect and what to move or free, through these primitives. Pointers are object ids, so a move
changes one address and every pointer to the object follows it; "dangling after a move" then means
an object left at an address outside the space its collector allocates from (the old semispace).

Time: the mutator is paused while the collector works. ``pause(...)`` turns counted work into
seconds by the ``Costs`` constants, records the interval [now, now + d) and moves ``now`` on, so a
mutator event whose time has passed runs late, at ``now``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from sims.core.panel import Checkpointed, Shared


@dataclass(frozen=True)
class Costs(Shared):
    """Virtual seconds per unit of collector work (defaults in docs/gc.md): a few thousand live
    objects of ~100 bytes give full collections of a few milliseconds."""

    mark: float = 1e-6  # per object marked (traced: its header read, its pointers scanned)
    copy: float = 1e-9  # per byte copied or slid (1 GB/s)
    sweep: float = 1e-7  # per object swept (examined in address order) or freed by a count reaching 0
    pause: float = 1e-4  # fixed overhead of each stop-the-world pause (reach a safepoint, flip)


class Obj(Checkpointed):
    """One heap object. ``refs`` holds the ids it points to, a repeated id once per pointer."""

    __slots__ = ("id", "size", "addr", "refs", "rc", "age", "old", "mark")

    def __init__(self, oid, size: int) -> None:
        self.id = oid  # the mutator's name for it (an int from the workload, a string from a trace)
        self.size = size  # bytes
        self.addr = -1  # first byte; -1 until placed
        self.refs: list = []  # ids of the objects it points to
        self.rc = 0  # pointers to it from objects (reference counting keeps it; others leave it 0)
        self.age = 0  # collections survived in the nursery (generational)
        self.old = False  # in the old generation (generational), or allocated there directly
        self.mark = 0  # a collector's mark word: epoch-tagged, so no pass clears it


_FITS: list[re.Pattern] = [re.compile(b"[\\x%02x-\\xff]" % c) for c in range(256)]


def _cls(size: int) -> int:
    """A block's size class in ``FreeList.cls``: size // 8, capped at 255."""
    c = size >> 3
    return c if c < 255 else 255


class FreeList(Checkpointed):
    """Free blocks of one space [lo, hi), in address order, never adjacent (freeing coalesces).
    ``alloc`` is first fit: the lowest-addressed block that is large enough. ``cls`` holds each
    block's size class as one byte, so a regular expression finds the first candidate at C speed
    (a block of ``size`` bytes or more has class ``size // 8`` or more)."""

    __slots__ = ("lo", "hi", "starts", "sizes", "cls", "free", "big")

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi
        self.starts: list[int] = [lo] if hi > lo else []
        self.sizes: list[int] = [hi - lo] if hi > lo else []
        self.cls = bytearray(_cls(x) for x in self.sizes)
        self.free = hi - lo  # bytes in all blocks
        self.big = self.free  # no block is larger (an upper bound, exact after a failed scan)

    def reset(self, lo: int, hi: int, used_to: int | None = None) -> None:
        """The space is [lo, hi) again, with everything below ``used_to`` occupied (after a
        compaction or a copy): one free block [used_to, hi)."""
        top = lo if used_to is None else used_to
        self.lo, self.hi = lo, hi
        self.starts = [top] if hi > top else []
        self.sizes = [hi - top] if hi > top else []
        self.cls = bytearray(_cls(x) for x in self.sizes)
        self.free = self.big = hi - top

    def alloc(self, size: int) -> int | None:
        """The address of ``size`` bytes from the first block that fits, or None."""
        if size > self.big:
            return None
        sizes, cls = self.sizes, self.cls
        search = _FITS[_cls(size)].search
        pos = 0
        while (m := search(cls, pos)) is not None:
            i = m.start()
            s = sizes[i]
            if s >= size:
                addr = self.starts[i]
                if s == size:
                    del sizes[i], self.starts[i], cls[i]
                else:
                    sizes[i] = s - size
                    cls[i] = _cls(s - size)
                    self.starts[i] = addr + size
                self.free -= size
                return addr
            pos = i + 1
        self.big = max(sizes) if sizes else 0
        return None

    def release(self, addr: int, size: int) -> None:
        """Give [addr, addr + size) back, merged with the blocks it touches."""
        starts, sizes, cls = self.starts, self.sizes, self.cls
        i = bisect_right(starts, addr)
        self.free += size
        if i and starts[i - 1] + sizes[i - 1] == addr:  # joins the block below
            sizes[i - 1] += size
            if i < len(starts) and addr + size == starts[i]:
                sizes[i - 1] += sizes[i]
                del starts[i], sizes[i], cls[i]
            merged = sizes[i - 1]
            cls[i - 1] = _cls(merged)
        elif i < len(starts) and addr + size == starts[i]:  # joins the block above
            starts[i] = addr
            sizes[i] += size
            merged = sizes[i]
            cls[i] = _cls(merged)
        else:
            starts.insert(i, addr)
            sizes.insert(i, size)
            cls.insert(i, _cls(size))
            merged = size
        if merged > self.big:
            self.big = merged

    def largest(self) -> int:
        return max(self.sizes) if self.sizes else 0

    def check(self) -> None:
        total = 0
        end = self.lo - 1
        for a, s in zip(self.starts, self.sizes, strict=True):
            assert s > 0 and a > end and a >= self.lo and a + s <= self.hi, "free blocks overlap or touch"
            end = a + s
            total += s
        assert total == self.free, (total, self.free)
        assert self.big >= self.largest(), "the largest-block bound is too small"
        assert list(self.cls) == [_cls(x) for x in self.sizes], "size classes out of step"


class Heap(Checkpointed):
    """Objects by id (insertion order), the roots (the mutator's own references), the bytes in use
    and the pause log. ``size`` is the whole heap; collectors carve their spaces out of it."""

    __slots__ = (
        "size",
        "costs",
        "objects",
        "roots",
        "used",
        "peak",
        "now",
        "pause_at",
        "pause_len",
        "pause_before",
        "gc_time",
        "copied",
        "promoted",
        "collections",
        "full_collections",
    )

    def __init__(self, size: int, costs: Costs) -> None:
        self.size = size
        self.costs = costs
        self.objects: dict = {}  # id -> Obj, every object not yet freed (reachable or not)
        self.roots: dict = {}  # id -> None: objects the mutator holds (allocated, not dropped)
        self.used = 0  # bytes in objects
        self.peak = 0  # most bytes ever in objects at once
        self.now = 0.0  # the panel's clock: mutator time plus every pause so far
        self.pause_at: list[float] = []  # start of each pause, increasing
        self.pause_len: list[float] = []  # its length in seconds
        self.pause_before: list[float] = [0.0]  # [k]: the first k pauses together (mmu.prefix)
        self.gc_time = 0.0  # all pauses together, summed in order
        self.copied = 0  # bytes copied or slid by the collector
        self.promoted = 0  # objects moved into the old generation
        self.collections = 0
        self.full_collections = 0

    # -- the mutator's side ----------------------------------------------------------------------
    def add(self, obj: Obj) -> None:
        """A placed object becomes part of the heap, held by the mutator as a root."""
        self.objects[obj.id] = obj
        self.roots[obj.id] = None
        self.used += obj.size
        if self.used > self.peak:
            self.peak = self.used

    def remove(self, obj: Obj) -> None:
        """Forget a freed object (its collector gives its bytes back to a free list)."""
        del self.objects[obj.id]
        self.used -= obj.size

    # -- the collector's side --------------------------------------------------------------------
    def reachable(self, start=None) -> dict:
        """Ids reachable from ``start`` (default: the roots), in breadth-first order."""
        objects = self.objects
        seen = dict.fromkeys(self.roots if start is None else start)
        queue = list(seen)
        for oid in queue:
            for r in objects[oid].refs:
                if r not in seen:
                    seen[r] = None
                    queue.append(r)
        return seen

    def pause(self, marked: int = 0, copied: int = 0, swept: int = 0, fixed: bool = True) -> float:
        """Stop the mutator for the work counted, in ``Costs`` seconds; returns the pause length."""
        c = self.costs
        d = (c.pause if fixed else 0.0) + marked * c.mark + copied * c.copy + swept * c.sweep
        if d > 0:
            self.pause_at.append(self.now)
            self.pause_len.append(d)
            self.now += d
            self.gc_time += d
            self.pause_before.append(self.gc_time)
        return d

    def check_invariants(self, spaces: list[FreeList], pending: dict | None = None) -> None:
        """Objects and free blocks tile each space without overlap; every object lies inside a
        space (none left behind by a move); every pointer names an object (``pending``: objects an
        incremental sweep has yet to reach, whose pointers may name freed garbage)."""
        for fl in spaces:
            fl.check()
        spans = [(o.addr, o.size) for o in self.objects.values()]
        spans.extend((a, s) for fl in spaces for a, s in zip(fl.starts, fl.sizes, strict=True))
        spans.sort()
        end = -1
        total_used = 0
        for a, s in spans:
            assert a >= 0 and a >= end, f"overlap at address {a}"
            end = a + s
        for o in self.objects.values():
            total_used += o.size
            assert any(fl.lo <= o.addr and o.addr + o.size <= fl.hi for fl in spaces), (
                f"object {o.id} at {o.addr} lies outside every space its collector uses"
            )
            if pending is None or o.id not in pending:
                for r in o.refs:
                    assert r in self.objects, f"object {o.id} points to freed object {r}"
        assert total_used == self.used, (total_used, self.used)
        for r in self.roots:
            assert r in self.objects, f"root {r} was freed"
