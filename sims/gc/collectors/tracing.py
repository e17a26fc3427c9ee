"""Stop-the-world tracing over one space: mark-sweep frees in place, mark-compact slides the
survivors down.
"""

from __future__ import annotations

from sims.core.registry import register_policy
from sims.gc.collectors.base import Collector, drop_dead, slide


@register_policy("gc", "mark_sweep")
class MarkSweep(Collector):
    """Mark from the roots, then sweep the garbage onto the address-ordered free list. Objects
    never move, so the free space ends up in holes between survivors."""

    def collect(self, full: bool) -> bool:
        self._mark_sweep()
        return True


@register_policy("gc", "mark_compact")
class MarkCompact(Collector):
    """Mark, then slide the survivors down to the bottom of the heap in address order (Lisp 2
    style: one pass computes forwarding addresses over every object, one moves). Allocation is a
    bump of the single free block above them."""

    def collect(self, full: bool) -> bool:
        heap = self.heap
        live = self._mark_all()
        examined = drop_dead(heap, live)
        objects = heap.objects
        top, moved = slide(self.space.lo, [objects[i] for i in live])
        heap.copied += moved
        self.space.reset(self.space.lo, self.space.hi, top)
        heap.collections += 1
        heap.full_collections += 1
        heap.pause(marked=len(live), copied=moved, swept=examined)
        return True
