"""Paged allocation: fixed pages, an object holds any free pages, contiguous or not."""

from __future__ import annotations

from sims.alloc.base import Allocator, _merge
from sims.core.registry import Param, register_policy


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

    PARAMS = {"page_size": Param(int, 4096, "bytes per page", min=1, max=1 << 30)}

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

    def where(self, oid: object) -> str:
        return self.where_runs([s for s, _ in self.objs[oid]])

    def free_bytes(self) -> int:
        return self.free_total

    def largest_free(self) -> int:
        return self.free_total

    def ranges(self) -> list[list]:
        items = [[s, n, oid] for oid, runs in self.objs.items() for s, n in runs]
        items += [[s, n, None] for s, n in self.runs.items()]
        return _merge(items)

    def explain(self, d, other=None) -> str:
        n = -(-d.facts["size"] // self.page)
        return self.say(
            d,
            f"paged gives it {n} pages of {self.page} B from any free runs, the shortest run that holds them all first",
        )

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
