"""Allocation policies over a heap of ``heap`` bytes.

Every policy answers ``alloc(oid, size) -> ok``, ``free(oid)`` and ``grow(oid, size) -> ok``
(realloc to a larger total); running out of space is ``False``, never an exception. ``held`` is
the heap bytes live objects occupy, internal waste included; ``free_bytes()`` is counted from
the policy's own structure, so ``check_invariants`` can assert that no byte is lost.

The four fits share ``FreeList`` (address-ordered, coalescing) and differ only in ``place``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from heapq import heappop, heappush

from sims.alloc.freelist import FreeList
from sims.core.registry import Param, register_policy

_MOVING = object()  # the key a block is allocated under while a grow moves it


class Allocator:
    """Base: objects by id, and realloc-by-copy for ``grow`` when a block cannot extend."""

    PARAMS: dict[str, Param] = {}

    def __init__(self, heap: int, align: int) -> None:
        if isinstance(heap, bool) or not isinstance(heap, int) or heap < 1:
            raise ValueError(f"heap must be a positive number of bytes, got {heap!r}")
        if isinstance(align, bool) or not isinstance(align, int) or align < 1:
            raise ValueError(f"align must be a positive number of bytes, got {align!r}")
        self.heap = heap
        self.align = align
        self.held = 0  # bytes occupied by live objects, internal waste included
        self.moves = 0  # grows that had to copy the object to a new block

    def round(self, size: int) -> int:
        a = self.align
        return -(-size // a) * a

    def alloc(self, oid: object, size: int) -> bool:
        raise NotImplementedError

    def free(self, oid: object) -> None:
        raise NotImplementedError

    def capacity(self, oid: object) -> int:
        """Bytes the object may use without moving."""
        raise NotImplementedError

    def extend(self, oid: object, size: int) -> bool:
        """Grow in place past ``capacity`` if the policy can; default: cannot."""
        return False

    def rename(self, old: object, new: object) -> None:
        raise NotImplementedError

    def grow(self, oid: object, size: int) -> bool:
        """Make room for ``size`` bytes: in place if possible, else allocate a new block, copy,
        free the old one. On failure the object keeps its old block."""
        if size <= self.capacity(oid) or self.extend(oid, size):
            return True
        if not self.alloc(_MOVING, size):
            return False
        self.free(oid)
        self.rename(_MOVING, oid)
        self.moves += 1
        return True

    def free_bytes(self) -> int:
        raise NotImplementedError

    def largest_free(self) -> int:
        """The largest single request that would succeed now."""
        raise NotImplementedError

    def ranges(self) -> list[list]:
        """The heap map: [start, length, owner] in address order, owner None for free space."""
        raise NotImplementedError

    def state(self) -> dict:
        return {}

    def check_invariants(self) -> None:
        ranges = self.ranges()
        pos = 0
        for start, length, _ in ranges:
            assert start == pos and length > 0, f"gap or overlap at byte {start} (expected {pos})"
            pos += length
        assert pos == self.heap, f"heap map covers {pos} of {self.heap} bytes"
        free = sum(n for _, n, owner in ranges if owner is None)
        assert free == self.free_bytes() == self.heap - self.held, (free, self.free_bytes(), self.heap, self.held)


def _merge(items: list[list]) -> list[list]:
    """Sort [start, length, owner] ranges and join neighbours with the same owner."""
    items.sort(key=lambda r: r[0])
    out: list[list] = []
    for r in items:
        if out and out[-1][2] is r[2] and out[-1][0] + out[-1][1] == r[0]:
            out[-1][1] += r[1]
        else:
            out.append(list(r))
    return out


class Fit(Allocator):
    """A contiguous block per object from an address-ordered, coalescing free list."""

    BY_SIZE = False

    def __init__(self, heap: int, align: int, **_: object) -> None:
        super().__init__(heap, align)
        self.fl = FreeList(heap, align, by_size=self.BY_SIZE)
        self.blocks: dict[object, tuple[int, int]] = {}  # oid -> (start, length)

    def place(self, need: int) -> int | None:
        """The policy: where a block of ``need`` bytes goes, or None."""
        raise NotImplementedError

    def alloc(self, oid: object, size: int) -> bool:
        need = self.round(size)
        start = self.place(need)
        if start is None:
            return False
        self.fl.take(start, need)
        self.blocks[oid] = (start, need)
        self.held += need
        return True

    def free(self, oid: object) -> None:
        start, length = self.blocks.pop(oid)
        self.fl.release(start, length)
        self.held -= length

    def capacity(self, oid: object) -> int:
        return self.blocks[oid][1]

    def extend(self, oid: object, size: int) -> bool:
        start, length = self.blocks[oid]
        need = self.round(size)
        if not self.fl.extend(start, length, need):
            return False
        self.blocks[oid] = (start, need)
        self.held += need - length
        return True

    def rename(self, old: object, new: object) -> None:
        self.blocks[new] = self.blocks.pop(old)

    def free_bytes(self) -> int:
        return self.fl.total

    def largest_free(self) -> int:
        return self.fl.largest()

    def ranges(self) -> list[list]:
        items = [[s, n, oid] for oid, (s, n) in self.blocks.items()]
        items += [[s, n, None] for s, n in self.fl.starts.items()]
        return _merge(items)

    def check_invariants(self) -> None:
        self.fl.check_invariants()
        assert self.held == sum(n for _, n in self.blocks.values())
        super().check_invariants()


@register_policy("alloc", "first_fit")
class FirstFit(Fit):
    """The lowest-addressed free block that fits."""

    def place(self, need: int) -> int | None:
        return self.fl.first_fit(need)


@register_policy("alloc", "next_fit")
class NextFit(Fit):
    """First fit, but the search starts at the free block holding or following the address of
    the last allocation, and wraps to the bottom once."""

    def __init__(self, heap: int, align: int, **kw: object) -> None:
        super().__init__(heap, align, **kw)
        self.rover = 0

    def place(self, need: int) -> int | None:
        start = self.fl.fit_from(self.rover, need)
        if start is None:
            start = self.fl.first_fit(need)
        if start is not None:
            self.rover = start
        return start

    def state(self) -> dict:
        return {"rover": self.rover}


@register_policy("alloc", "best_fit")
class BestFit(Fit):
    """The smallest free block that fits; the lowest address among equals."""

    BY_SIZE = True

    def place(self, need: int) -> int | None:
        return self.fl.best_fit(need)


@register_policy("alloc", "worst_fit")
class WorstFit(Fit):
    """The largest free block, so the leftover stays usable."""

    def place(self, need: int) -> int | None:
        return self.fl.worst_fit(need)


@register_policy("alloc", "buddy")
class Buddy(Allocator):
    """Binary buddy: blocks of align * 2^k bytes at multiples of their own size; a block splits
    in halves and merges with its buddy (address XOR size) when both are free. A heap that is not
    a power of two is several top blocks, largest first. ``free_sets[k]`` holds free blocks of
    order k (in units); ``free_heaps[k]`` hands out the lowest address first (lazy deletion)."""

    def __init__(self, heap: int, align: int, **_: object) -> None:
        super().__init__(heap, align)
        if heap % align:
            raise ValueError(f"heap ({heap} bytes) must be a multiple of align ({align})")
        units = heap // align
        self.top = units.bit_length() - 1
        self.free_sets: list[dict[int, None]] = [{} for _ in range(self.top + 1)]
        self.free_heaps: list[list[int]] = [[] for _ in range(self.top + 1)]
        self.blocks: dict[object, tuple[int, int]] = {}  # oid -> (unit start, order)
        self.free_units = 0
        start = 0
        for k in range(self.top, -1, -1):
            if units >> k & 1:
                self._push(start, k)
                start += 1 << k

    def _push(self, u: int, k: int) -> None:
        self.free_sets[k][u] = None
        heappush(self.free_heaps[k], u)
        self.free_units += 1 << k

    def _pop(self, k: int) -> int:
        s, h = self.free_sets[k], self.free_heaps[k]
        while True:
            u = heappop(h)
            if u in s:
                del s[u]
                self.free_units -= 1 << k
                return u

    def alloc(self, oid: object, size: int) -> bool:
        units = -(-size // self.align)
        k = (units - 1).bit_length()
        j = k
        while j <= self.top and not self.free_sets[j]:
            j += 1
        if j > self.top:
            return False
        u = self._pop(j)
        while j > k:
            j -= 1
            self._push(u + (1 << j), j)
        self.blocks[oid] = (u, k)
        self.held += self.align << k
        return True

    def free(self, oid: object) -> None:
        u, k = self.blocks.pop(oid)
        self.held -= self.align << k
        while k < self.top:
            b = u ^ (1 << k)
            s = self.free_sets[k]
            if b not in s:
                break
            del s[b]  # its heap entry goes stale
            self.free_units -= 1 << k
            u = u if u < b else b
            k += 1
        self._push(u, k)

    def capacity(self, oid: object) -> int:
        return self.align << self.blocks[oid][1]

    def rename(self, old: object, new: object) -> None:
        self.blocks[new] = self.blocks.pop(old)

    def free_bytes(self) -> int:
        return self.free_units * self.align

    def largest_free(self) -> int:
        for k in range(self.top, -1, -1):
            if self.free_sets[k]:
                return self.align << k
        return 0

    def ranges(self) -> list[list]:
        a = self.align
        items = [[u * a, a << k, oid] for oid, (u, k) in self.blocks.items()]
        items += [[u * a, a << k, None] for k, s in enumerate(self.free_sets) for u in s]
        return _merge(items)

    def state(self) -> dict:
        return {"free_by_order": [[self.align << k, len(s)] for k, s in enumerate(self.free_sets) if s]}

    def check_invariants(self) -> None:
        for k, s in enumerate(self.free_sets):
            for u in s:
                assert u % (1 << k) == 0, f"free block {u} not aligned to order {k}"
                if k < self.top:
                    assert (u ^ (1 << k)) not in s, f"free buddies {u} and {u ^ (1 << k)} not merged"
        for u, k in self.blocks.values():
            assert u % (1 << k) == 0
        assert self.held == sum(self.align << k for _, k in self.blocks.values())
        super().check_invariants()


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

    PARAMS = {"slab_size": Param(int, 4096, "bytes per slab (a power of two)")}

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


@register_policy("alloc", "paged")
class Paged(Allocator):
    """Fixed pages of ``page_size`` bytes; an object holds any free pages, contiguous or not, so
    there is no external fragmentation and internal waste only in each object's last page.

    Free pages are runs, coalesced on free like the fits' free list: ``runs`` (start -> bytes)
    and ``ends`` (end -> start) find a freed run's neighbours in O(1). ``bins[k]`` holds the runs
    of 2^(k-1) to 2^k - 1 pages, the most recently freed last. An object of n pages takes one run
    from the shortest bin whose runs all hold it, keeping long runs whole for long objects; when
    no such run is left it takes pieces from the longest runs down. An object is a list of
    [start, bytes] runs."""

    PARAMS = {"page_size": Param(int, 4096, "bytes per page")}

    def __init__(self, heap: int, align: int, page_size: int = 4096, **_: object) -> None:
        super().__init__(heap, align)
        if page_size < 1 or heap % page_size:
            raise ValueError(f"heap ({heap} bytes) must be a multiple of page_size ({page_size})")
        self.page = page_size
        self.runs: dict[int, int] = {}  # free runs, start -> bytes
        self.ends: dict[int, int] = {}  # free runs, end -> start
        self.bins: list[dict[int, None]] = [{} for _ in range((heap // page_size).bit_length() + 1)]
        self._put(0, heap)
        self.free_total = heap  # free bytes
        self.objs: dict[object, list[list[int]]] = {}  # oid -> runs [start, bytes]
        self.pages: dict[object, int] = {}  # oid -> pages held

    def _put(self, start: int, length: int) -> None:
        self.runs[start] = length
        self.ends[start + length] = start
        self.bins[(length // self.page).bit_length()][start] = None

    def _drop(self, start: int) -> int:
        length = self.runs.pop(start)
        del self.ends[start + length]
        del self.bins[(length // self.page).bit_length()][start]
        return length

    def _take(self, n: int, held: list[list[int]]) -> None:
        page, runs, ends, bins = self.page, self.runs, self.ends, self.bins
        want = n * page
        self.held += want
        self.free_total -= want
        k = n.bit_length() + 1  # the shortest bin whose runs all hold n pages
        while k < len(bins) and not bins[k]:
            k += 1
        if k == len(bins):
            k -= 1
        while want:
            while not bins[k]:
                k -= 1
            start, _ = bins[k].popitem()
            length = runs.pop(start)
            del ends[start + length]
            if length > want:
                rest = length - want
                runs[start + want] = rest
                ends[start + length] = start + want
                bins[(rest // page).bit_length()][start + want] = None
                length = want
            if held and held[-1][0] + held[-1][1] == start:
                held[-1][1] += length
            else:
                held.append([start, length])
            want -= length

    def _release(self, start: int, length: int) -> None:
        prev = self.ends.get(start)
        if prev is not None:
            length += self._drop(prev)
            start = prev
        if start + length in self.runs:
            length += self._drop(start + length)
        self._put(start, length)

    def alloc(self, oid: object, size: int) -> bool:
        n = -(-size // self.page)
        if n * self.page > self.free_total:
            return False
        held: list[list[int]] = []
        self._take(n, held)
        self.objs[oid] = held
        self.pages[oid] = n
        return True

    def free(self, oid: object) -> None:
        n = self.pages.pop(oid)
        self.held -= n * self.page
        self.free_total += n * self.page
        for start, length in reversed(self.objs.pop(oid)):
            self._release(start, length)

    def capacity(self, oid: object) -> int:
        return self.pages[oid] * self.page

    def extend(self, oid: object, size: int) -> bool:
        n = -(-size // self.page) - self.pages[oid]
        if n * self.page > self.free_total:
            return False
        self._take(n, self.objs[oid])
        self.pages[oid] += n
        return True

    def rename(self, old: object, new: object) -> None:
        self.objs[new] = self.objs.pop(old)
        self.pages[new] = self.pages.pop(old)

    def free_bytes(self) -> int:
        return self.free_total

    def largest_free(self) -> int:
        return self.free_total

    def ranges(self) -> list[list]:
        items = [[s, n, oid] for oid, runs in self.objs.items() for s, n in runs]
        items += [[s, n, None] for s, n in self.runs.items()]
        return _merge(items)

    def state(self) -> dict:
        return {"page_size": self.page, "free_pages": self.free_total // self.page, "free_runs": len(self.runs)}

    def check_invariants(self) -> None:
        assert self.free_total == sum(self.runs.values())
        assert len(self.ends) == len(self.runs) == sum(len(b) for b in self.bins)
        for k, b in enumerate(self.bins):
            assert all((self.runs[r] // self.page).bit_length() == k for r in b)
        for start, length in self.runs.items():
            assert length > 0 and start % self.page == 0 and length % self.page == 0
            assert self.ends[start + length] == start
            assert start + length not in self.runs, f"free runs at {start} not coalesced"
        for oid, runs in self.objs.items():
            assert self.pages[oid] * self.page == sum(n for _, n in runs) > 0
        super().check_invariants()
