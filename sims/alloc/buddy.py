"""Binary buddy allocation: power-of-two blocks that split in halves and merge with their buddy."""

from __future__ import annotations

from heapq import heappop, heappush

from sims.alloc.base import Allocator, _merge
from sims.core.registry import register_policy


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

    def where(self, oid: object) -> str:
        return f"at {self.blocks[oid][0] * self.align}"

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

    def explain(self, d, other=None) -> str:
        return self.say(
            d, "buddy rounds the size up to a power-of-two block, splitting the smallest larger free block in halves"
        )

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
