"""Collectors: policies over the heap mechanism (``heap.py``). Each one decides where an object is
placed, when and how to collect, and what its write barrier records; the heap keeps the objects,
the roots and the pause log.

``alloc(obj)`` places an object or returns False (no collection); ``collect(full)`` runs a
collection and returns True when it was a complete one (every unreachable object found); the
panel calls ``collect(False)``, then ``collect(True)``, before it fails an allocation.
"""

from __future__ import annotations

from sims.core.panel import Checkpointed
from sims.core.registry import Param, register_policy
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

    def check_invariants(self) -> None:
        self.heap.check_invariants(self.spaces())


@register_policy("gc", "mark_sweep")
class MarkSweep(Collector):
    """Mark from the roots, then sweep the garbage onto the address-ordered free list. Objects
    never move, so the free space ends up in holes between survivors."""

    def collect(self, full: bool) -> bool:
        heap = self.heap
        live = self._mark_all()
        swept = self._sweep(live)
        heap.collections += 1
        heap.full_collections += 1
        heap.pause(marked=len(live), swept=swept)
        return True


@register_policy("gc", "mark_compact")
class MarkCompact(Collector):
    """Mark, then slide the survivors down to the bottom of the heap in address order (Lisp 2
    style: one pass computes forwarding addresses over every object, one moves). Allocation is a
    bump of the single free block above them."""

    def collect(self, full: bool) -> bool:
        heap = self.heap
        live = self._mark_all()
        examined = _drop_dead(heap, live)
        objects = heap.objects
        top, moved = _slide(self.space.lo, [objects[i] for i in live])
        heap.copied += moved
        self.space.reset(self.space.lo, self.space.hi, top)
        heap.collections += 1
        heap.full_collections += 1
        heap.pause(marked=len(live), copied=moved, swept=examined)
        return True


def _slide(lo: int, survivors: list[Obj]) -> tuple[int, int]:
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


def _drop_dead(heap: Heap, live: dict) -> int:
    """Forget every object not in ``live``; returns how many objects there were."""
    objects = heap.objects
    n = len(objects)
    for o in [o for oid, o in objects.items() if oid not in live]:
        heap.remove(o)
    return n


def _addr(o: Obj) -> int:
    return o.addr


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
        "promote_after": Param(int, 2, "minor collections an object survives before promotion", min=1),
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
        examined = _drop_dead(heap, live)
        objects = heap.objects
        self.young = {oid: None for oid in self.young if oid in objects}
        top, moved = _slide(0, [objects[i] for i in live if objects[i].old])
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
        heap = self.heap
        live = self._mark_all()
        swept = self._sweep(live)
        heap.collections += 1
        heap.full_collections += 1
        heap.pause(marked=len(live), swept=swept)
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
        "slice_budget": Param(float, 0.001, "seconds of work per slice (the pause target)", above=0.0),
        "slice_every": Param(float, 0.004, "mutator seconds between slices (0: after every operation)", min=0.0),
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
            self.phase = "sweep"
            self.to_sweep = list(objects)
            self.pending = dict.fromkeys(self.to_sweep)
            self.swept_upto = 0
        return done

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
                if self._black(o):
                    for r in o.refs:
                        assert objects[r].mark >= 2 * self.epoch, f"black {oid} points to white {r}"


COLLECTORS = ("mark_sweep", "mark_compact", "copying", "generational", "refcount", "incremental")
