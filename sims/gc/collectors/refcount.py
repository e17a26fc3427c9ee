"""Reference counting, with an optional backup tracer for the cycles it cannot free."""

from __future__ import annotations

from sims.core.registry import Param, register_policy
from sims.gc.collectors.base import Collector
from sims.gc.heap import Heap, Obj


@register_policy("gc", "refcount")
class RefCount(Collector):
    """Each object counts the pointers to it; when the count reaches zero and the mutator no
    longer holds it, it is freed at once, and what it pointed to loses a count (a cascade: its
    cost is a pause). A cycle keeps its own counts above zero and is never freed, unless
    ``backup`` runs a tracing cycle collector (mark-sweep) when an allocation fails."""

    PARAMS = {"backup": Param(bool, False, "run a backup tracing collector when an allocation fails")}

    def __init__(self, heap: Heap, backup: bool = False) -> None:
        super().__init__(heap)
        self.backup = backup

    def on_ptr(self, src: Obj, dst: Obj) -> None:
        dst.rc += 1

    def on_unptr(self, src: Obj, dst: Obj) -> None:
        dst.rc -= 1
        if dst.rc == 0 and dst.id not in self.heap.roots:
            self._cascade(dst)

    def on_drop(self, obj: Obj) -> None:
        if obj.rc == 0:
            self._cascade(obj)

    def _cascade(self, first: Obj) -> None:
        heap, space = self.heap, self.space
        objects, roots = heap.objects, heap.roots
        stack = [first]
        freed = 0
        while stack:
            o = stack.pop()
            for r in o.refs:
                c = objects[r]
                c.rc -= 1
                if c.rc == 0 and r not in roots:
                    stack.append(c)
            heap.remove(o)
            space.release(o.addr, o.size)
            freed += 1
        heap.pause(swept=freed, fixed=False)

    def _free(self, o: Obj) -> None:
        objects = self.heap.objects
        for r in o.refs:
            c = objects.get(r)
            if c is not None:
                c.rc -= 1
        self.heap.remove(o)

    def collect(self, full: bool) -> bool:
        if not self.backup:
            return True  # nothing to do: a count that never reached zero stays
        self._mark_sweep()
        return True

    def leaked(self) -> dict:
        live = self.heap.reachable()
        return {oid: None for oid in self.heap.objects if oid not in live}

    def check_invariants(self) -> None:
        super().check_invariants()
        objects = self.heap.objects
        counts = dict.fromkeys(objects, 0)
        for o in objects.values():
            for r in o.refs:
                counts[r] += 1
        for oid, o in objects.items():
            assert o.rc == counts[oid], f"object {oid}: count {o.rc}, pointers {counts[oid]}"
            assert o.rc > 0 or oid in self.heap.roots, f"object {oid}: count 0 and not a root, but not freed"
