"""Trees over an array a[0 … U − 1] of integers: the Fenwick tree (Fenwick, "A New Data Structure for
Cumulative Frequency Tables", Software: Practice and Experience, 1994) and the segment tree
(Bentley, 1977; the sum form in de Berg et al., Computational Geometry, §10.3).

Both answer a prefix sum a[0] + … + a[i] and apply a point update a[i] += d in O(log U) nodes.
The set operations are kept on the same array: ``insert k`` makes a[k] = 1 when it is 0, ``delete
k`` makes it 0, ``search k`` asks whether a[k] ≠ 0, and ``range a b`` sums a[a … b], the number of
keys between a and b. Keys outside 0 … U − 1 and string keys are not taken. The plain array is
kept beside each tree for the view and the ``size`` count; the bytes held are the tree's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from sims.core.registry import register_policy
from sims.trees.base import WORD, Op, Step, Structure, Tree

MAX_DRAWN = 256  # array slots drawn at most: larger trees show their upper levels and the path


class Sums(Structure):
    """The plain array ``a``, and ``size``, its non-zero slots."""

    def __init__(self, universe: int) -> None:
        super().__init__()
        self.n = universe
        self.a = [0] * universe

    def set_plain(self, i: int, value: int) -> None:
        self.size += (value != 0) - (self.a[i] != 0)
        self.a[i] = value

    def keys(self) -> list[int]:
        return [i for i, v in enumerate(self.a) if v]

    def height_bound(self) -> float:
        return float(self.height())

    def ranges_view(self, spans: list[tuple[int, int, int, int, Any]], parents: list[int]) -> dict[str, Any]:
        """``spans``: (node id, lo, hi (exclusive), depth, value); the widest drawn first. With more
        than MAX_DRAWN slots only ranges at least U / MAX_DRAWN wide, and the path, are drawn."""
        read = set(self.path)
        wide = max(1, self.n // MAX_DRAWN) if self.n > MAX_DRAWN else 1
        keep = [k for k, (j, lo, hi, _, _) in enumerate(spans) if hi - lo >= wide or j in read]
        index = {spans[k][0]: i for i, k in enumerate(keep)}
        n = max(1, self.n)
        out = {
            "shape": "ranges",
            "nodes": [[lo / n, hi / n, d, str(v), ""] for j, lo, hi, d, v in (spans[k] for k in keep)],
            "parents": [index.get(parents[k], -1) for k in keep],
            "path": [index[j] for j in self.path if j in index],
            "hidden": len(spans) - len(keep),
        }
        if self.n <= MAX_DRAWN:
            out["array"] = list(self.a)
        return out


class SumTree(Tree):
    """What both trees share: the set operations and ``range`` built on ``point``, ``change`` (a[i]
    += d) and ``total`` (a[lo … hi]), which each tree writes."""

    OPS = frozenset({"insert", "delete", "search", "range", "add", "prefix"})
    KEYS = "int"
    SET_LINES: ClassVar[tuple[int, int]] = (0, 0)  # (point read, update) lines of PSEUDOCODE

    def takes(self, op: Op, ev: dict) -> bool:
        if not super().takes(op, ev):
            return False
        u = ev.get("universe", 0)
        return all(isinstance(x, int) and 0 <= x < u for x in op[1:2]) and all(isinstance(x, int) for x in op[2:])

    def point(self, d: Sums, i: int) -> Iterator[Step]:
        raise NotImplementedError

    def change(self, d: Sums, i: int, delta: int) -> Iterator[Step]:
        raise NotImplementedError

    def total(self, d: Sums, lo: int, hi: int) -> Iterator[Step]:
        raise NotImplementedError

    def insert(self, d: Sums, k: int) -> Iterator[Step]:
        v = yield from self.point(d, k)
        if v:
            yield self.SET_LINES[1], "insert {}: a[{}] = {} already", (k, k, v)
            return False
        yield from self.change(d, k, 1)
        d.set_plain(k, 1)
        yield self.SET_LINES[1], "insert {}: a[{}] ← 1", (k, k)
        return True

    def delete(self, d: Sums, k: int) -> Iterator[Step]:
        v = yield from self.point(d, k)
        if not v:
            yield self.SET_LINES[1], "delete {}: a[{}] is 0 already", (k, k)
            return False
        yield from self.change(d, k, -v)
        d.set_plain(k, 0)
        yield self.SET_LINES[1], "delete {}: a[{}] ← 0", (k, k)
        return True

    def search(self, d: Sums, k: int) -> Iterator[Step]:
        v = yield from self.point(d, k)
        yield self.SET_LINES[0], "search {}: a[{}] = {}", (k, k, v)
        return v != 0

    def add(self, d: Sums, i: int, delta: int) -> Iterator[Step]:
        yield from self.change(d, i, delta)
        d.set_plain(i, d.a[i] + delta)
        yield self.SET_LINES[1], "add {} to a[{}]: now {}", (delta, i, d.a[i])
        return d.a[i]

    def prefix(self, d: Sums, i: int) -> Iterator[Step]:
        s = yield from self.total(d, 0, i)
        yield self.SET_LINES[0], "a[0] + … + a[{}] = {}", (i, s)
        return s

    def range(self, d: Sums, a: int, b: int) -> Iterator[Step]:
        lo, hi = max(a, 0), min(b, d.n - 1)
        s = (yield from self.total(d, lo, hi)) if lo <= hi else 0
        yield self.SET_LINES[0], "range {}…{}: the sum is {}", (a, b, s)
        return s


class FenwickArray(Sums):
    """t[j] (1-based) holds a[j − lowbit(j)] + … + a[j − 1], lowbit(j) = j & −j."""

    def __init__(self, universe: int) -> None:
        super().__init__(universe)
        self.t = [0] * (universe + 1)

    def height(self) -> int:
        return self.n.bit_length()  # a query or an update reads at most this many entries

    def node_count(self) -> int:
        return self.n

    def bytes_held(self) -> int:
        return WORD * (self.n + 1)

    def check_invariants(self) -> None:
        super().check_invariants()
        for j in range(1, self.n + 1):
            lo = j - (j & -j)
            assert self.t[j] == sum(self.a[lo:j]), f"t[{j}] ≠ a[{lo}] + … + a[{j - 1}]"

    def layout(self) -> dict[str, Any]:
        top = self.n.bit_length()
        spans = []
        for j in range(1, self.n + 1):
            low = j & -j
            spans.append((j, j - low, j, top - low.bit_length(), self.t[j]))
        spans.sort(key=lambda s: (s[3], s[1]))
        return self.ranges_view(spans, [-1] * len(spans))


@register_policy("trees", "fenwick")
class Fenwick(SumTree):
    """Fenwick (1994): t[j] sums the lowbit(j) slots ending at j; a prefix sum adds the t[j] met by
    clearing j's lowest bit, an update adds d to the t[j] met by adding it. A visit is an entry read."""

    SET_LINES = (0, 2)
    PSEUDOCODE = (
        "prefix i: s ← 0; j ← i + 1; while j > 0: s ← s + t[j]; j ← j − lowbit(j)",
        "point i: s ← t[i + 1], minus the t[j] of i's prefix below it (Fenwick's shortcut)",
        "add d to a[i]: j ← i + 1; while j ≤ U: t[j] ← t[j] + d; j ← j + lowbit(j)",
        "range a b: prefix(b) − prefix(a − 1)",
        "insert, delete, search k: point k, then add when a[k] must change",
    )

    def build(self, ev: dict) -> FenwickArray:
        return FenwickArray(ev.get("universe", 0))

    def point(self, d: FenwickArray, i: int) -> Iterator[Step]:
        """a[i] from t alone: t[i + 1] minus the entries between i + 1's parent and i."""
        j = i + 1
        s = d.t[j]
        d.visit(j)
        yield 1, "point {}: t[{}] = {}", (i, j, s)
        stop, j = j - (j & -j), j - 1
        while j != stop:
            d.visit(j)
            s -= d.t[j]
            yield 1, "point {}: minus t[{}] = {}", (i, j, d.t[j])
            j -= j & -j
        return s

    def change(self, d: FenwickArray, i: int, delta: int) -> Iterator[Step]:
        j = i + 1
        while j <= d.n:
            d.visit(j)
            d.t[j] += delta
            yield 2, "t[{}] += {}: now {}", (j, delta, d.t[j])
            j += j & -j

    def total(self, d: FenwickArray, lo: int, hi: int) -> Iterator[Step]:
        s = yield from self._prefix(d, hi)
        if lo > 0:
            below = yield from self._prefix(d, lo - 1)
            s -= below
            yield 3, "minus the prefix below {}: {}", (lo, s)
        return s

    def _prefix(self, d: FenwickArray, i: int) -> Iterator[Step]:
        s, j = 0, i + 1
        while j > 0:
            d.visit(j)
            s += d.t[j]
            yield 0, "prefix {}: + t[{}] = {}, sum {}", (i, j, d.t[j], s)
            j -= j & -j
        return s


class SegmentArray(Sums):
    """t[1] covers slots 0 … size − 1 (size: U rounded up to a power of 2); node v's children 2v and
    2v + 1 cover its halves; t[v] is the sum over its range."""

    def __init__(self, universe: int) -> None:
        super().__init__(universe)
        self.width = 1 << max(0, universe - 1).bit_length()
        self.t = [0] * (2 * self.width)

    def height(self) -> int:
        return self.width.bit_length()

    def node_count(self) -> int:
        return 2 * self.width - 1

    def bytes_held(self) -> int:
        return WORD * 2 * self.width

    def span(self, v: int) -> tuple[int, int]:
        """Node v's slots lo … hi − 1."""
        d = v.bit_length() - 1
        size = self.width >> d
        lo = (v - (1 << d)) * size
        return lo, lo + size

    def check_invariants(self) -> None:
        super().check_invariants()
        w = self.width
        for v in range(1, w):
            assert self.t[v] == self.t[2 * v] + self.t[2 * v + 1], f"t[{v}] is not the sum of its halves"
        assert self.t[w : w + self.n] == self.a and not any(self.t[w + self.n :]), "a leaf differs from the array"

    def layout(self) -> dict[str, Any]:
        spans, parents = [], []
        for v in range(1, 2 * self.width):
            lo, hi = self.span(v)
            if lo < self.n:
                spans.append((v, lo, min(hi, self.n), v.bit_length() - 1, self.t[v]))
                parents.append(v // 2)
        index = {s[0]: k for k, s in enumerate(spans)}
        return self.ranges_view(spans, [spans[index[p]][0] if p in index else -1 for p in parents])


@register_policy("trees", "segment_tree")
class SegmentTree(SumTree):
    """A segment tree of sums (Bentley, 1977): each node sums a power-of-two range, its children its
    halves. An update goes down to the leaf and fixes the sums on the way back; a range query
    enters only the nodes that overlap it and stops at those inside it. A visit is a node entered."""

    SET_LINES = (0, 1)
    PSEUDOCODE = (
        "sum lo hi from node v: v inside [lo, hi] → t[v]; else the sums of the children that overlap",
        "update a[i]: go down from the root to i's leaf, change it, re-add each node's halves going up",
        "prefix i: sum 0 i; point i: the leaf, reached from the root",
    )

    def build(self, ev: dict) -> SegmentArray:
        return SegmentArray(ev.get("universe", 0))

    def down(self, d: SegmentArray, i: int, line: int) -> Iterator[Step]:
        """Enter the nodes from the root to slot i's leaf; returns the leaf's number."""
        v = 1
        while True:
            d.visit(v)
            lo, hi = d.span(v)
            if v >= d.width:
                yield line, "leaf {}: a[{}] = {}", (v, i, d.t[v])
                return v
            yield line, "node {} covers {}…{}: go to the half holding {}", (v, lo, hi - 1, i)
            v = 2 * v + (i >= (lo + hi) // 2)

    def point(self, d: SegmentArray, i: int) -> Iterator[Step]:
        v = yield from self.down(d, i, 2)
        return d.t[v]

    def change(self, d: SegmentArray, i: int, delta: int) -> Iterator[Step]:
        v = yield from self.down(d, i, 1)
        d.t[v] += delta
        while v > 1:
            v //= 2
            d.t[v] = d.t[2 * v] + d.t[2 * v + 1]

    def total(self, d: SegmentArray, lo: int, hi: int) -> Iterator[Step]:
        s, stack = 0, [1]
        while stack:
            v = stack.pop()
            d.visit(v)
            a, b = d.span(v)
            if lo <= a and b - 1 <= hi:
                s += d.t[v]
                yield 0, "node {} covers {}…{}, inside: + {}", (v, a, b - 1, d.t[v])
                continue
            yield 0, "node {} covers {}…{}: split", (v, a, b - 1)
            mid = (a + b) // 2
            if hi >= mid:
                stack.append(2 * v + 1)
            if lo < mid:
                stack.append(2 * v)
        return s
