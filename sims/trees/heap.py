"""The binary heap (Williams, "Algorithm 232: Heapsort", CACM 1964), a min-heap in an array as
CLRS, 3rd ed., ch. 6 writes the priority queue: the children of slot i are slots 2i + 1 and 2i + 2,
and no item is smaller than its parent, so the smallest is at slot 0.

A push appends and sifts the item up (one comparison a level, usually few: on random keys most
new items stay near the bottom); a pop moves the last item to the root and sifts it down (two
children read a level, all the way down). It holds no pointers and keeps duplicates (a multiset).
It answers nothing but "the smallest": no search, no range, no delete by key.
Python's heapq, Go's container/heap and Java's PriorityQueue are this array.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sims.core.registry import register_policy
from sims.trees.base import Step, Structure, Tree, key_bytes

MAX_LEVELS = 8  # levels drawn at most (255 slots), plus the slots the operation read


class ArrayHeap(Structure):
    """The array ``a``: a[(i − 1) // 2] ≤ a[i] for every i > 0."""

    def __init__(self) -> None:
        super().__init__()
        self.a: list = []
        self._bytes = 0

    def height(self) -> int:
        return len(self.a).bit_length()

    def height_bound(self) -> float:
        return float(len(self.a).bit_length())  # a complete tree: ⌊log2 n⌋ + 1 levels, exactly

    def node_count(self) -> int:
        return len(self.a)

    def bytes_held(self) -> int:
        return self._bytes

    def keys(self) -> list:
        return sorted(self.a)

    def check_invariants(self) -> None:
        super().check_invariants()
        a = self.a
        assert self.size == len(a), "size differs from the array's length"
        for i in range(1, len(a)):
            assert not a[i] < a[(i - 1) // 2], f"slot {i} holds {a[i]}, less than its parent {a[(i - 1) // 2]}"

    def layout(self) -> dict[str, Any]:
        """Slot i at level ⌊log2(i + 1)⌋, spread evenly along its level."""
        a = self.a
        read = set(self.path)
        shown = [i for i in range(len(a)) if i < (1 << MAX_LEVELS) - 1 or i in read]
        index = {i: k for k, i in enumerate(shown)}
        nodes = []
        for i in shown:
            d = (i + 1).bit_length() - 1
            x = (i + 1 - (1 << d) + 0.5) / (1 << d)
            nodes.append([x, d, str(a[i]), ""])
        return {
            "shape": "nodes",
            "nodes": nodes,
            "parents": [index.get((i - 1) // 2, -1) if i else -1 for i in shown],
            "path": [index[i] for i in self.path if i in index],
            "hidden": len(a) - len(shown),
        }


@register_policy("trees", "binary_heap")
class BinaryHeap(Tree):
    """Williams (1964): a min-heap in an array (CLRS ch. 6). Push sifts up, pop sifts down; a
    visit is a slot compared."""

    OPS = frozenset({"insert", "pop"})
    PSEUDOCODE = (
        "push k: a[n] ← k; i ← n",
        "  while i > 0 and a[i] < a[parent(i)]: swap them; i ← parent(i)",
        "pop: top ← a[0]; a[0] ← the last item; i ← 0",
        "  while a child is smaller: swap a[i] with the smaller child; go down",
        "return top",
    )

    def build(self, ev: dict) -> ArrayHeap:
        return ArrayHeap()

    def insert(self, h: ArrayHeap, k: Any) -> Iterator[Step]:
        a = h.a
        a.append(k)
        h.size += 1
        h._bytes += key_bytes(k)
        i = len(a) - 1
        while i > 0:
            p = (i - 1) // 2
            h.visit(p)
            if not a[i] < a[p]:
                yield 1, "{} ≥ parent {}: it stays at slot {}", (k, a[p], i)
                break
            a[i], a[p] = a[p], a[i]
            yield 1, "{} < parent {}: swap, up to slot {}", (k, a[i], p)
            i = p
        yield 0, "push {}: at slot {} of {}", (k, i, len(a))
        return True

    def pop(self, h: ArrayHeap) -> Iterator[Step]:
        a = h.a
        if not a:
            yield 2, "pop: the heap is empty", ()
            return None
        top, last = a[0], a.pop()
        h.size -= 1
        h._bytes -= key_bytes(top)
        if a:
            a[0] = last
            yield 2, "pop {}: the last item {} moves to the root", (top, last)
            i, n = 0, len(a)
            while 2 * i + 1 < n:
                m = 2 * i + 1
                h.visit(m)
                if m + 1 < n:
                    h.visit(m + 1)
                    if a[m + 1] < a[m]:
                        m += 1
                if not a[m] < a[i]:
                    yield 3, "{} ≤ its smaller child {}: it stays", (a[i], a[m])
                    break
                a[i], a[m] = a[m], a[i]
                yield 3, "smaller child {} < {}: swap, down to slot {}", (a[i], a[m], m)
                i = m
        yield 4, "pop: {} was the smallest", (top,)
        return top
