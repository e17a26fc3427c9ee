"""The GC panel: one collector replaying the mutator's heap operations.

An operation whose stream time has already passed (the collector held the mutator up) runs at
the panel's own clock, ``heap.now``: pauses delay the program, so a collector that thrashes
falls behind and its MMU goes to zero. An allocation that does not fit triggers a collection,
then a complete one; if it still does not fit, it fails (the object is never created, and later
operations naming it, or anything it alone kept alive, are skipped and counted).
"""

from __future__ import annotations

from sims.core.metrics import percentile, ratio
from sims.core.panel import Panel
from sims.gc.heap import Costs, Heap, Obj
from sims.gc.mmu import MMU

WINDOWS = (("mmu_1ms", 0.001), ("mmu_10ms", 0.01), ("mmu_100ms", 0.1))
CELLS = 240  # cells of the heap strip in the view
TIMELINE = 1.0  # seconds of pauses the view's timeline shows


class GCPanel(Panel):
    topic = "gc"

    def __init__(self, name: str, params: dict, ctx, make_collector) -> None:
        super().__init__(name, params, ctx)
        costs = Costs(
            mark=params["mark_cost"],
            copy=params["copy_cost"],
            sweep=params["sweep_cost"],
            pause=params["pause_cost"],
        )
        self.heap = Heap(params["heap"], costs)
        self.collector = make_collector(self.heap)
        self.failed: list = []  # ids whose allocation failed, in order
        self.skipped = 0  # operations naming an object that is not there (after a failure)
        self.clean = False  # a complete collection ran and nothing was dropped or unlinked since:
        # another one could free nothing, so an allocation that fails then fails without one
        self.ops = 0  # heap operations done
        self.sched = 0.0  # the program's own schedule: the latest stream time reached
        self.mmus = [MMU(w) for _, w in WINDOWS]
        self.sorted_lens: list[float] = []  # the pause lengths, sorted when metrics are read

    # -- replaying the mutator -------------------------------------------------------------------
    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        heap = self.heap
        col = self.collector
        objects = heap.objects
        roots = heap.roots
        tick = col.tick
        for k in range(lo, hi):
            ev = events[k]
            t = ev["t"]
            if t > heap.now:
                heap.now = t
            if t > self.sched:
                self.sched = t
            kind = ev["kind"]
            if kind == "alloc":
                self.alloc(ev["id"], ev["size"])
                objects = heap.objects  # a copying collection replaces the dict
            elif kind == "ptr":
                a = objects.get(ev["from"])
                b = objects.get(ev["to"])
                if a is not None and b is not None:
                    a.refs.append(b.id)
                    col.on_ptr(a, b)
                else:
                    self.skipped += 1
            elif kind == "unptr":
                self.unptr(ev["from"], ev["to"])
                objects = heap.objects
            elif kind == "drop":
                oid = ev["id"]
                if oid in roots:
                    self.clean = False
                    del roots[oid]
                    col.on_drop(objects[oid])
                else:
                    self.skipped += 1
            self.ops += 1
            tick()
            objects = heap.objects
        self.advance(until)

    def alloc(self, oid, size: int) -> bool:
        heap, col = self.heap, self.collector
        obj = Obj(oid, size)
        if not col.alloc(obj):
            complete = self.clean and col.only_garbage_frees
            if not complete:
                complete = self.clean = col.collect(False)
            if not col.alloc(obj):
                if not complete:
                    self.clean = col.collect(True)
                if not col.alloc(obj):
                    self.failed.append(oid)
                    return False
        heap.add(obj)
        return True

    def unptr(self, src, dst) -> None:
        objects = self.heap.objects
        a = objects.get(src)
        if a is None or dst not in objects or dst not in a.refs:
            self.skipped += 1
            return
        a.refs.remove(dst)
        self.clean = False
        self.collector.on_unptr(a, objects[dst])

    def on_event(self, ev: dict) -> None:
        self.feed([ev], 0, 1, ev["t"])

    def advance(self, until: float) -> None:
        if until > self.heap.now:
            self.heap.now = until
        if until > self.sched:
            self.sched = until

    # -- reading ---------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        heap, col = self.heap, self.collector
        lens = self.sorted_lens
        if len(lens) != len(heap.pause_len):
            lens.extend(heap.pause_len[len(lens) :])
            lens.sort()  # a sorted run and a short tail: timsort merges them in linear time
        end = heap.now
        space = col.alloc_space()
        leaked = col.leaked()
        objects = heap.objects
        leaked_bytes = 0
        for oid in leaked:
            leaked_bytes += objects[oid].size
        free = space.free
        m = {
            "ops": self.ops,
            "pauses": len(lens),
            "collections": heap.collections,
            "full_collections": heap.full_collections,
            "pause_p50": percentile(lens, 0.5, is_sorted=True),
            "pause_p99": percentile(lens, 0.99, is_sorted=True),
            "pause_max": lens[-1] if lens else 0.0,
            "gc_time": heap.gc_time,
            "mutator_utilization": 1.0 - ratio(heap.gc_time, end) if end > 0 else 1.0,
            "lag": end - self.sched if end > self.sched else 0.0,
            "heap_used": heap.used,
            "peak_heap": heap.peak,
            "fragmentation": 1.0 - ratio(space.largest(), free) if free else 0.0,
            "bytes_copied": heap.copied,
            "promoted": heap.promoted,
            "leaked_bytes": leaked_bytes,
            "failed_allocs": len(self.failed),
            "skipped_ops": self.skipped,
        }
        m.update(col.metrics())
        for (label, _), tracker in zip(WINDOWS, self.mmus, strict=True):
            m[label] = tracker.value(heap.pause_at, heap.pause_len, heap.pause_before, end)
        return m

    def view(self) -> dict:
        heap, col = self.heap, self.collector
        size = heap.size or 1
        cell = size / CELLS
        live = heap.reachable()
        byte = {"L": [0.0] * CELLS, "G": [0.0] * CELLS, "w": [0.0] * CELLS, "g": [0.0] * CELLS, "b": [0.0] * CELLS}
        marking = False
        for oid, o in heap.objects.items():
            c = col.colour(o)
            if c:
                marking = True
            state = c or ("L" if oid in live else "G")
            bins = byte[state]
            a, end = o.addr, o.addr + o.size
            while a < end:
                i = int(a / cell)
                if i >= CELLS:
                    i = CELLS - 1
                nxt = (i + 1) * cell
                take = (nxt if nxt < end else end) - a
                bins[i] += take
                a += take if take > 0 else end - a
        strip = []
        for i in range(CELLS):
            best, code = cell / 2, "."
            for k in ("L", "G", "w", "g", "b"):
                if byte[k][i] > best:
                    best, code = byte[k][i], k
            strip.append(code)
        now = heap.now
        pauses = []
        for s, d in zip(reversed(heap.pause_at), reversed(heap.pause_len), strict=True):
            if s + d < now - TIMELINE or len(pauses) >= 400:
                break
            pauses.append([s, d])
        pauses.reverse()
        return {
            "kind": "gc",
            "t": now,
            "heap": heap.size,
            "used": heap.used,
            "strip": "".join(strip),
            "regions": col.regions(),
            "marking": marking,
            "pauses": pauses,
            "window": TIMELINE,
            "failed": len(self.failed),
        }

    def check_invariants(self) -> None:
        self.collector.check_invariants()
