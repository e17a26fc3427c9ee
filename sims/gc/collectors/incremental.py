"""Incremental tri-colour mark-sweep, in slices, with Dijkstra's insertion barrier."""

from __future__ import annotations

from sims.core.registry import Param, register_policy
from sims.gc.collectors.base import Collector
from sims.gc.heap import Heap, Obj


@register_policy("gc", "incremental")
class Incremental(Collector):
    """Tri-colour mark-sweep in slices. A cycle starts when the heap is ``trigger`` full: the
    roots turn grey; every ``slice_every`` seconds a slice blackens grey objects (shading their
    white children) until its ``slice_budget`` is spent; then slices sweep. Objects allocated
    during a cycle are black. Dijkstra's insertion barrier shades the target of any pointer stored
    into a black object, so no black object ever points to a white one. An allocation that fails
    mid-cycle finishes the cycle in one pause."""

    PARAMS = {
        "trigger": Param(float, 0.6, "start a cycle when this share of the heap is in use", above=0.0, max=1.0),
        "slice_budget": Param(float, 0.001, "seconds of work per slice (the pause target)", above=0.0, max=1.0),
        "slice_every": Param(
            float, 0.004, "mutator seconds between slices (0: after every operation)", min=0.0, max=1.0, work=-1
        ),
    }

    def __init__(self, heap: Heap, trigger: float = 0.6, slice_budget: float = 0.001, slice_every: float = 0.004):
        super().__init__(heap)
        self.trigger = int(trigger * heap.size)
        self.budget = slice_budget
        self.every = slice_every
        self.phase = "idle"  # idle | mark | sweep
        self.grey: list = []  # ids marked grey, not yet scanned
        self.to_sweep: list = []  # ids to examine, in heap order
        self.swept_upto = 0
        self.pending: dict = {}  # ids not yet examined by the sweep
        self.next_slice = 0.0

    def _black(self, o: Obj) -> bool:
        return o.mark == 2 * self.epoch + 1

    def _shade(self, o: Obj) -> None:
        g = 2 * self.epoch
        if o.mark < g:
            o.mark = g
            self.grey.append(o.id)

    def alloc(self, obj: Obj) -> bool:
        if not super().alloc(obj):
            return False
        if self.phase != "idle":
            obj.mark = 2 * self.epoch + 1  # allocated black
        return True

    def on_ptr(self, src: Obj, dst: Obj) -> None:
        if self.phase == "mark" and self._black(src):
            self._shade(dst)

    def _start(self) -> None:
        self.epoch += 1
        self.phase = "mark"
        objects = self.heap.objects
        for oid in self.heap.roots:
            self._shade(objects[oid])
        self.heap.collections += 1

    def _mark_some(self, units: int) -> int:
        """Blacken up to ``units`` grey objects; returns how many."""
        objects = self.heap.objects
        grey = self.grey
        b = 2 * self.epoch + 1
        g = b - 1
        done = 0
        while grey and done < units:
            o = objects[grey.pop()]
            for r in o.refs:
                c = objects[r]
                if c.mark < g:
                    c.mark = g
                    grey.append(r)
            o.mark = b
            done += 1
        if not grey:
            self._marked()
        return done

    def _marked(self) -> None:
        """The grey set ran empty: the mark is complete, so the sweep begins."""
        self.phase = "sweep"
        self.to_sweep = list(self.heap.objects)
        self.pending = dict.fromkeys(self.to_sweep)
        self.swept_upto = 0

    def _sweep_some(self, units: int) -> int:
        heap, space = self.heap, self.space
        objects = heap.objects
        b = 2 * self.epoch + 1
        todo = self.to_sweep
        i = self.swept_upto
        end = min(len(todo), i + units)
        pending = self.pending
        while i < end:
            oid = todo[i]
            o = objects[oid]
            del pending[oid]
            if o.mark != b:
                heap.remove(o)
                space.release(o.addr, o.size)
            i += 1
        done = i - self.swept_upto
        self.swept_upto = i
        if i == len(todo):
            self.phase = "idle"
            self.to_sweep = []
            heap.full_collections += 1
        return done

    def tick(self) -> None:
        heap = self.heap
        if self.phase == "idle":
            if heap.used >= self.trigger:
                self._start()
                self.next_slice = heap.now
            else:
                return
        if heap.now < self.next_slice:
            return
        c = heap.costs
        left = self.budget - c.pause
        marked = swept = 0
        if self.phase == "mark":
            marked = self._mark_some(max(1, int(left / c.mark)))
            left -= marked * c.mark
        if self.phase == "sweep" and left > 0:
            swept = self._sweep_some(max(1, int(left / c.sweep)))
        heap.pause(marked=marked, swept=swept)
        self.next_slice = heap.now + self.every

    def _finish(self) -> tuple[int, int]:
        marked = swept = 0
        if self.phase == "mark":
            marked = self._mark_some(len(self.heap.objects) + 1)
        if self.phase == "sweep":
            swept = self._sweep_some(len(self.to_sweep))
        return marked, swept

    def collect(self, full: bool) -> bool:
        """Finish the cycle under way in one pause; when none was under way (or ``full``), run
        a whole cycle in that pause (a cycle under way leaves the garbage made during it)."""
        was = self.phase
        marked, swept = self._finish()
        complete = was == "idle" or full
        if complete:
            self._start()
            m, s = self._finish()
            marked, swept = marked + m, swept + s
        self.heap.pause(marked=marked, swept=swept)
        return complete

    def colour(self, obj: Obj) -> str:
        if self.phase != "mark":
            return ""
        g = 2 * self.epoch
        return "b" if obj.mark == g + 1 else ("g" if obj.mark == g else "w")

    def check_invariants(self) -> None:
        self.heap.check_invariants(self.spaces(), self.pending if self.phase == "sweep" else None)
        if self.phase == "mark":
            objects = self.heap.objects
            for oid, o in objects.items():
                if self._black(o) and not self._excused(oid):
                    for r in o.refs:
                        assert objects[r].mark >= 2 * self.epoch, f"black {oid} points to white {r}"

    def _excused(self, oid) -> bool:
        """Whether black ``oid`` may point to a white object (its barrier recorded it to rescan)."""
        return False
