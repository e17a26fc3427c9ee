"""The four fits: first, next, best and worst fit share ``FreeList`` (address-ordered,
coalescing) and differ only in ``place``."""

from __future__ import annotations

from sims.alloc.base import Allocator, _merge
from sims.alloc.freelist import FreeList
from sims.core.registry import register_policy


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

    def where(self, oid: object) -> str:
        return f"at {self.blocks[oid][0]}"

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

    def explain(self, d, other=None) -> str:
        return self.say(d, "first fit takes the lowest-addressed free block that holds it")


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

    def explain(self, d, other=None) -> str:
        return self.say(
            d, f"next fit searches from the last allocation's block (the rover, now {self.rover}) and wraps once"
        )


@register_policy("alloc", "best_fit")
class BestFit(Fit):
    """The smallest free block that fits; the lowest address among equals."""

    BY_SIZE = True

    def place(self, need: int) -> int | None:
        return self.fl.best_fit(need)

    def explain(self, d, other=None) -> str:
        return self.say(d, "best fit takes the smallest free block that holds it (the lowest address among equals)")


@register_policy("alloc", "worst_fit")
class WorstFit(Fit):
    """The largest free block, so the leftover stays usable."""

    def place(self, need: int) -> int | None:
        return self.fl.worst_fit(need)

    def explain(self, d, other=None) -> str:
        return self.say(d, "worst fit takes the largest free block, so the leftover stays usable")
