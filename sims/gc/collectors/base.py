"""The collector base class, and the pieces of marking and compaction that several collectors
share: ``Collector`` is one space with a first-fit free list and no barrier.
"""

from __future__ import annotations

from sims.core.panel import Checkpointed
from sims.core.registry import Param
from sims.gc.heap import FreeList, Heap, Obj


class Collector(Checkpointed):
    """Base: a single space [0, heap) with a first-fit free list; no barrier."""

    PARAMS: dict[str, Param] = {}
    only_garbage_frees = True  # a collection makes room only by freeing garbage (not by promoting)

    def __init__(self, heap: Heap) -> None:
        self.heap = heap
        self.space = FreeList(0, heap.size)
        self.epoch = 0  # mark words equal to the current epoch are marked

    # -- the mutator's operations ----------------------------------------------------------------
    def alloc(self, obj: Obj) -> bool:
        addr = self.space.alloc(obj.size)
        if addr is None:
            return False
        obj.addr = addr
        return True

    def on_ptr(self, src: Obj, dst: Obj) -> None:
        """The write barrier: ``src`` now points to ``dst`` (the pointer is already stored)."""

    def on_unptr(self, src: Obj, dst: Obj) -> None:
        """``src`` no longer points to ``dst`` (once, of possibly several)."""

    def on_drop(self, obj: Obj) -> None:
        """The mutator let go of ``obj`` (it is no longer a root)."""

    def tick(self) -> None:
        """Called after every mutator operation: incremental work may run here."""

    def collect(self, full: bool) -> bool:
        raise NotImplementedError

    # -- shared pieces ---------------------------------------------------------------------------
    def _mark_all(self) -> dict:
        """Mark everything reachable from the roots (ids in breadth-first order)."""
        live = self.heap.reachable()
        self.epoch += 1
        objects = self.heap.objects
        e = self.epoch
        for oid in live:
            objects[oid].mark = e
        return live

    def _sweep(self, live: dict) -> int:
        """Free every object not in ``live`` back to the free list; returns objects examined."""
        heap, space = self.heap, self.space
        dead = [o for oid, o in heap.objects.items() if oid not in live]
        examined = len(heap.objects)
        for o in dead:
            self._free(o)
            space.release(o.addr, o.size)
        return examined

    def _mark_sweep(self) -> None:
        """One full mark and sweep of the whole heap, counted as a full collection."""
        heap = self.heap
        live = self._mark_all()
        swept = self._sweep(live)
        heap.collections += 1
        heap.full_collections += 1
        heap.pause(marked=len(live), swept=swept)

    def _free(self, o: Obj) -> None:
        self.heap.remove(o)

    def spaces(self) -> list[FreeList]:
        """The spaces objects may lie in, with their free lists (checked by the heap)."""
        return [self.space]

    def alloc_space(self) -> FreeList:
        """Where fragmentation is measured: the space ordinary allocations come from."""
        return self.space

    def regions(self) -> list[dict]:
        """Named address ranges for the view."""
        return [{"name": "heap", "lo": 0, "hi": self.heap.size}]

    def colour(self, obj: Obj) -> str:
        """Tri-colour for the view while a mark is in progress ('' when none is)."""
        return ""

    def leaked(self) -> dict:
        """Unreachable objects this collector will never free (only plain reference counting)."""
        return {}

    def metrics(self) -> dict:
        """Metrics only this collector reports (declared in topic.toml like the panel's)."""
        return {}

    def check_invariants(self) -> None:
        self.heap.check_invariants(self.spaces())


def slide(lo: int, survivors: list[Obj]) -> tuple[int, int]:
    """Slide ``survivors`` down to ``lo`` in address order, keeping that order (so a block never
    moves past another). Returns (first free address, bytes moved)."""
    survivors.sort(key=_addr)
    top = lo
    moved = 0
    for o in survivors:
        if o.addr != top:
            moved += o.size
            o.addr = top
        top += o.size
    return top, moved


def drop_dead(heap: Heap, live: dict) -> int:
    """Forget every object not in ``live``; returns how many objects there were."""
    objects = heap.objects
    n = len(objects)
    for o in [o for oid, o in objects.items() if oid not in live]:
        heap.remove(o)
    return n


def _addr(o: Obj) -> int:
    return o.addr
