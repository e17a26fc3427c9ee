"""Mostly-concurrent mark-sweep: the tri-colour mark and the sweep of ``incremental`` run beside
the program instead of in slices that stop it."""

from __future__ import annotations

from sims.core.registry import Param, register_policy
from sims.gc.collectors.incremental import Incremental
from sims.gc.heap import Heap, Obj


@register_policy("gc", "concurrent_mark_sweep")
class ConcurrentMarkSweep(Incremental):
    """Mostly-concurrent mark-sweep, after HotSpot's CMS collector (Printezis & Detlefs, "A
    generational mostly-concurrent garbage collector", ISMM 2000; Jones, Hosking & Moss, The
    Garbage Collection Handbook, ch. 15-16). A cycle starts when the heap is ``trigger`` full
    with a short initial-mark pause that shades the roots; a collector thread then marks while
    the program runs, ``speed`` times as fast as a stop-the-world mark would. The write barrier is
    incremental update by card marking: a pointer stored into a black object records that object
    (dirties its card) instead of shading the target. When the grey set runs empty a remark pause
    rescans the recorded objects and marks what they reach; the sweep is concurrent too. Objects
    allocated during a cycle are black, and so is anything that dies after the collector marked
    it: that floating garbage waits for the next cycle. An allocation that fails while a cycle is
    under way is a concurrent mode failure: the cycle is abandoned and a stop-the-world mark-sweep
    of the whole heap runs in one long pause."""

    PARAMS = {
        "trigger": Param(float, 0.6, "start a cycle when this share of the heap is in use", above=0.0, max=1.0),
        "speed": Param(
            float, 1.0, "concurrent work per second, as a share of a stop-the-world collector's", above=0.0, max=64.0
        ),
    }

    def __init__(self, heap: Heap, trigger: float = 0.6, speed: float = 1.0) -> None:
        super().__init__(heap, trigger=trigger)
        self.speed = speed
        self.dirty: dict = {}  # ids of black objects a pointer was stored into during the mark
        self.remark_due = False  # the concurrent mark ran out of grey objects
        self.credit = 0.0  # collector-thread seconds not yet spent on work
        self.last = 0.0  # the clock when the collector thread last worked
        self.failures = 0  # concurrent mode failures
        self.floating = 0  # bytes marked live by a cycle but unreachable when its mark ended
        self.floating_objects = 0

    def on_ptr(self, src: Obj, dst: Obj) -> None:
        if self.phase == "mark" and self._black(src):
            self.dirty[src.id] = None

    def _excused(self, oid) -> bool:
        return oid in self.dirty

    def _marked(self) -> None:
        self.remark_due = True

    def _start(self) -> None:
        super()._start()
        self.heap.pause(marked=len(self.heap.roots))  # initial mark: the roots turn grey

    def _remark(self) -> None:
        """Stop the program, rescan every recorded object and mark what it reaches; then
        measure the floating garbage against a reachability computed from scratch."""
        heap = self.heap
        objects = heap.objects
        g = 2 * self.epoch
        rescanned = len(self.dirty)
        for oid in self.dirty:
            if oid in objects:
                objects[oid].mark = g
                self.grey.append(oid)
        self.dirty = {}
        self.remark_due = False
        marked = 0
        while self.grey:
            marked += self._mark_some(len(objects) + 1)
        self.remark_due = False  # set again by the mark that just completed
        heap.pause(marked=rescanned + marked)
        b = g + 1
        live = heap.reachable()
        for oid, o in objects.items():
            if o.mark == b and oid not in live:
                self.floating += o.size
                self.floating_objects += 1
        super()._marked()  # the sweep begins

    def tick(self) -> None:
        heap = self.heap
        if self.phase == "idle":
            self.last = heap.now
            if heap.used < self.trigger:
                return
            self._start()
            self.last = heap.now
        now = heap.now
        self.credit += (now - self.last) * self.speed
        self.last = now
        c = heap.costs
        if self.phase == "mark" and not self.remark_due:
            n = int(self.credit / c.mark)
            if n > 0:
                self.credit -= self._mark_some(n) * c.mark
        if self.remark_due:
            self._remark()
            self.last = heap.now  # the thread worked in the pause
        if self.phase == "sweep":
            n = int(self.credit / c.sweep)
            if n > 0:
                self.credit -= self._sweep_some(n) * c.sweep
        if self.phase == "idle":
            self.credit = 0.0

    def collect(self, full: bool) -> bool:
        """A stop-the-world mark-sweep of the whole heap; when a cycle was under way, that cycle
        is abandoned and the collection counts as a concurrent mode failure."""
        if self.phase != "idle":
            self.failures += 1
            self.phase = "idle"
            self.grey, self.to_sweep, self.pending, self.dirty = [], [], {}, {}
            self.remark_due = False
            self.credit = 0.0
        self._mark_sweep()
        self.last = self.heap.now
        return True

    def metrics(self) -> dict:
        return {
            "concurrent_mode_failures": self.failures,
            "floating_garbage": self.floating,
        }
