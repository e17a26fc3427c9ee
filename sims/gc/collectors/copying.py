"""Copying collectors: Cheney's semi-spaces, and a generational heap whose copying nursery sits
above a mark-compact old space.
"""

from __future__ import annotations

from sims.core.registry import Param, register_policy
from sims.gc.collectors.base import Collector, drop_dead, slide
from sims.gc.heap import FreeList, Heap, Obj


@register_policy("gc", "copying")
class Copying(Collector):
    """Cheney's semi-space copying: allocate by bumping through one half; a collection copies what
    is reachable, breadth first, into the other half and flips. Garbage costs nothing, but only
    half the heap ever holds objects."""

    def __init__(self, heap: Heap) -> None:
        super().__init__(heap)
        self.half = heap.size // 2
        self.space = FreeList(0, self.half)

    def collect(self, full: bool) -> bool:
        heap = self.heap
        lo = self.half if self.space.lo == 0 else 0
        objects = heap.objects
        live = heap.reachable()  # Cheney's scan pointer walks the to-space in this order
        new = {}
        top = lo
        for oid in live:
            o = objects[oid]
            o.addr = top
            top += o.size
            new[oid] = o
        copied = top - lo
        heap.objects = new
        heap.used = copied
        self.space.reset(lo, lo + self.half, top)
        heap.copied += copied
        heap.collections += 1
        heap.full_collections += 1
        heap.pause(marked=len(live), copied=copied)
        return True

    def regions(self) -> list[dict]:
        low_in_use = self.space.lo == 0
        return [
            {"name": "semispace in use" if low_in_use else "reserve", "lo": 0, "hi": self.half},
            {"name": "reserve" if low_in_use else "semispace in use", "lo": self.half, "hi": 2 * self.half},
        ]


@register_policy("gc", "generational")
class Generational(Collector):
    """A copying nursery (two halves) above a mark-compact old space. A minor collection traces
    the nursery from the roots and the remembered set, copies survivors to the other half and
    promotes those that survived ``promote_after`` collections. The write barrier remembers every
    old object that gets a pointer to a young one. A major collection (when the old space could
    not take a nursery's worth of promotions) marks everything and compacts the old space."""

    PARAMS = {
        "nursery": Param(float, 0.25, "share of the heap for the nursery (both halves)", above=0.0, max=0.9),
        "promote_after": Param(int, 2, "minor collections an object survives before promotion", min=1, max=1000),
    }
    only_garbage_frees = False  # promoting survivors empties the nursery even when nothing died

    def __init__(self, heap: Heap, nursery: float = 0.25, promote_after: int = 2) -> None:
        super().__init__(heap)
        half = int(heap.size * nursery) // 2
        self.old_end = heap.size - 2 * half
        self.half = half
        self.space = FreeList(0, self.old_end)  # the old space
        self.eden = FreeList(self.old_end, self.old_end + half)  # the nursery half in use
        self.promote_after = promote_after
        self.young: dict = {}  # ids of objects in the nursery
        self.remembered: dict = {}  # ids of old objects that may point into the nursery
        self.large = max(1, half // 4)  # bigger objects are allocated in the old space directly

    def alloc(self, obj: Obj) -> bool:
        if obj.size > self.large:
            addr = self.space.alloc(obj.size)
            if addr is None:
                return False
            obj.addr, obj.old = addr, True
            return True
        addr = self.eden.alloc(obj.size)
        if addr is None:
            return False
        obj.addr = addr
        self.young[obj.id] = None
        return True

    def on_ptr(self, src: Obj, dst: Obj) -> None:
        if src.old and not dst.old:
            self.remembered[src.id] = None

    def collect(self, full: bool) -> bool:
        if full or self.space.free < self.half - self.eden.free:
            self._major()
            return True
        self._minor(0)
        return False

    def _minor(self, marked_before: int, swept: int = 0, moved: int = 0, tenure: bool = False) -> None:
        """Evacuate the nursery; ``tenure`` (after a major) promotes every survivor that fits."""
        heap = self.heap
        objects = heap.objects
        young = self.young
        to_lo = self.old_end + self.half if self.eden.lo == self.old_end else self.old_end
        top = to_lo
        survivors: list[Obj] = []
        promoted: list[Obj] = []
        seen: dict = {}
        n = 0 if tenure else self.promote_after

        def evacuate(oid) -> None:
            nonlocal top
            seen[oid] = None
            o = objects[oid]
            o.age += 1
            addr = self.space.alloc(o.size) if o.age >= n else None
            if addr is not None:
                o.addr, o.old = addr, True
                promoted.append(o)
            else:
                o.addr = top
                top += o.size
            survivors.append(o)

        for oid in heap.roots:
            if oid in young and oid not in seen:
                evacuate(oid)
        for oid in self.remembered:
            for r in objects[oid].refs:
                if r in young and r not in seen:
                    evacuate(r)
        i = 0
        while i < len(survivors):  # Cheney's scan over what was copied
            for r in survivors[i].refs:
                if r in young and r not in seen:
                    evacuate(r)
            i += 1
        copied = 0
        for o in survivors:
            copied += o.size
        for oid in young:
            if oid not in seen:
                heap.remove(objects[oid])
        self.young = {o.id: None for o in survivors if not o.old}
        rem = {}
        for oid in self.remembered:
            if oid in objects and self._points_young(objects[oid]):
                rem[oid] = None
        for o in promoted:
            if self._points_young(o):
                rem[o.id] = None
        self.remembered = rem
        self.eden.reset(to_lo, to_lo + self.half, top)
        heap.copied += copied + moved
        heap.promoted += len(promoted)
        heap.collections += 1
        heap.pause(marked=marked_before + len(survivors), copied=copied + moved, swept=swept)

    def _points_young(self, o: Obj) -> bool:
        young = self.young
        for r in o.refs:
            if r in young:
                return True
        return False

    def _major(self) -> None:
        """Mark everything, free the garbage, slide the old survivors down, then evacuate the
        nursery as a minor collection would; one pause for all of it."""
        heap = self.heap
        live = heap.reachable()
        examined = drop_dead(heap, live)
        objects = heap.objects
        self.young = {oid: None for oid in self.young if oid in objects}
        top, moved = slide(0, [objects[i] for i in live if objects[i].old])
        self.space.reset(0, self.old_end, top)
        self.remembered = {oid: None for oid in live if objects[oid].old and self._points_young(objects[oid])}
        heap.full_collections += 1
        self._minor(len(live), swept=examined, moved=moved, tenure=True)

    def spaces(self) -> list[FreeList]:
        return [self.space, self.eden]

    def regions(self) -> list[dict]:
        h = self.half
        return [
            {"name": "old", "lo": 0, "hi": self.old_end},
            {"name": "nursery", "lo": self.old_end, "hi": self.old_end + h},
            {"name": "nursery", "lo": self.old_end + h, "hi": self.old_end + 2 * h},
        ]

    def check_invariants(self) -> None:
        super().check_invariants()
        objects = self.heap.objects
        for oid, o in objects.items():
            assert (oid in self.young) == (not o.old), f"object {oid}: young set and old flag disagree"
            assert o.old or self.eden.lo <= o.addr < self.eden.hi, f"young object {oid} outside the nursery"
            if o.old and oid not in self.remembered:
                for r in o.refs:
                    assert objects[r].old, f"old {oid} -> young {r} is missing from the remembered set"
