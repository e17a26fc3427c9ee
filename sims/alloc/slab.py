"""Slab allocation: power-of-two size classes served from fixed-size slabs."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from sims.alloc.base import Allocator, _merge
from sims.alloc.freelist import FreeList
from sims.core.registry import Param, register_policy


@dataclass(slots=True)
class Slab:
    """One slab of ``slab_size`` bytes cut into equal slots of one size class."""

    start: int  # byte address
    size_class: int  # bytes per slot
    free: list[int] = field(default_factory=list)  # free slot indices; the next one handed out last
    live: int = 0  # slots in use


@register_policy("alloc", "slab")
class SlabAllocator(Allocator):
    """Size classes (powers of two from ``align`` to ``slab_size / 2``), each served from slabs of
    ``slab_size`` bytes; a request rounds up to its class. Slabs, and objects too large for any
    class, come from a first-fit free list; an empty slab goes back to it. ``partial[c]`` holds
    class c's slabs with a free slot, the most recently used last."""

    PARAMS = {"slab_size": Param(int, 4096, "bytes per slab (a power of two)", min=1, max=1 << 30)}

    def __init__(self, heap: int, align: int, slab_size: int = 4096, **_: object) -> None:
        super().__init__(heap, align)
        if slab_size < 2 * align or slab_size & (slab_size - 1) or align & (align - 1):
            raise ValueError(f"slab needs power-of-two align and slab_size >= 2*align, got {align}, {slab_size}")
        self.slab_size = slab_size
        self.fl = FreeList(heap, align)
        self.max_class = slab_size // 2
        self.partial: dict[int, OrderedDict[int, Slab]] = {}
        self.slabs: dict[int, Slab] = {}  # start -> slab
        self.objs: dict[object, tuple[Slab | None, int]] = {}  # oid -> (slab, slot) or (None, start)
        self.large: dict[object, int] = {}  # oid -> block length, for objects above every class

    def size_class(self, size: int) -> int:
        c = self.align
        while c < size:
            c <<= 1
        return c

    def alloc(self, oid: object, size: int) -> bool:
        if size > self.max_class:
            need = self.round(size)
            start = self.fl.first_fit(need)
            if start is None:
                return False
            self.fl.take(start, need)
            self.objs[oid] = (None, start)
            self.large[oid] = need
            self.held += need
            return True
        c = self.size_class(size)
        part = self.partial.setdefault(c, OrderedDict())
        if part:
            slab = part[next(reversed(part))]
        else:
            start = self.fl.first_fit(self.slab_size)
            if start is None:
                return False
            self.fl.take(start, self.slab_size)
            slab = Slab(start, c, list(range(self.slab_size // c - 1, -1, -1)))
            self.slabs[start] = slab
            part[start] = slab
        slot = slab.free.pop()
        slab.live += 1
        if not slab.free:
            del part[slab.start]
        self.objs[oid] = (slab, slot)
        self.held += c
        return True

    def free(self, oid: object) -> None:
        slab, where = self.objs.pop(oid)
        if slab is None:
            length = self.large.pop(oid)
            self.fl.release(where, length)
            self.held -= length
            return
        c = slab.size_class
        self.held -= c
        slab.free.append(where)
        slab.live -= 1
        part = self.partial[c]
        if slab.live == 0:
            part.pop(slab.start, None)
            del self.slabs[slab.start]
            self.fl.release(slab.start, self.slab_size)
        else:
            part[slab.start] = slab
            part.move_to_end(slab.start)

    def capacity(self, oid: object) -> int:
        slab, _ = self.objs[oid]
        return self.large[oid] if slab is None else slab.size_class

    def rename(self, old: object, new: object) -> None:
        self.objs[new] = self.objs.pop(old)
        if old in self.large:
            self.large[new] = self.large.pop(old)

    def where(self, oid: object) -> str:
        slab, at = self.objs[oid]
        return f"at {at}" if slab is None else f"at {slab.start + at * slab.size_class}"

    def free_bytes(self) -> int:
        return self.fl.total + sum(len(s.free) * s.size_class for s in self.slabs.values())

    def largest_free(self) -> int:
        best = self.fl.largest()
        for c, part in self.partial.items():
            if part and c > best:
                best = c
        return best

    def ranges(self) -> list[list]:
        items = [[s, n, None] for s, n in self.fl.starts.items()]
        for oid, (slab, where) in self.objs.items():
            if slab is None:
                items.append([where, self.large[oid], oid])
            else:
                items.append([slab.start + where * slab.size_class, slab.size_class, oid])
        for slab in self.slabs.values():
            items += [[slab.start + i * slab.size_class, slab.size_class, None] for i in slab.free]
        return _merge(items)

    def explain(self, d, other=None) -> str:
        size = d.facts["size"]
        if size > self.max_class:
            return self.say(
                d, f"slab serves objects above its largest class ({self.max_class} B) first fit from the free list"
            )
        c = self.size_class(size)
        return self.say(
            d,
            f"slab rounds it up to the {c} B size class and takes a slot of that class's most recently used partial slab, or a new {self.slab_size} B slab",
        )

    def state(self) -> dict:
        return {"slabs": [[s.start, s.size_class, s.live] for s in sorted(self.slabs.values(), key=lambda s: s.start)]}

    def check_invariants(self) -> None:
        self.fl.check_invariants()
        for slab in self.slabs.values():
            n = self.slab_size // slab.size_class
            assert slab.live + len(slab.free) == n and slab.live > 0
            assert len(set(slab.free)) == len(slab.free)
            assert (slab.start in self.partial.get(slab.size_class, {})) == bool(slab.free)
        super().check_invariants()
