"""The B-tree (Bayer & McCreight, 1972), as CLRS, 3rd ed., ch. 18 writes it: one pass down the tree
for every operation, each page read once.

Every page holds t − 1 to 2t − 1 keys (the root at least one), an inner page one child more than
keys, and every leaf lies at the same depth. An insert splits any full page it is about to enter,
so the split never has to climb back up; a delete makes sure every page it enters holds at least
t keys, by borrowing a key through the parent from a sibling or merging with one. Keys live on
every level, so a range scan must visit the inner pages as well as the leaves.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from sims.core.registry import register_policy
from sims.trees.base import Step, Tree
from sims.trees.pages import PAGE_PARAMS, Page, Pages, btree_pages


def show_page(p: Page) -> str:
    keys = p.keys
    inner = " ".join(str(k) for k in keys) if len(keys) <= 5 else f"{keys[0]} {keys[1]} … {keys[-1]}"
    return f"[{inner}]"


@register_policy("trees", "b_tree")
class BTree(Tree):
    """Bayer & McCreight (1972) in CLRS's single-pass form (ch. 18): splits on the way down,
    borrows and merges on the way down. A visit is a page read."""

    OPS = frozenset({"insert", "delete", "search", "range", "pop"})
    PARAMS = PAGE_PARAMS
    PSEUDOCODE = (
        "search k: read the root; find k among its keys, or the child between them",
        "insert k: a full root splits first (the tree grows a level)",
        "  going down, split a full child before entering it; put k in the leaf",
        "delete k: going down, a child with t − 1 keys first borrows or merges",
        "  k in a leaf: remove it; in an inner page: the predecessor or successor replaces it",
        "range a…b: in order from a, entering only children that can hold keys in range",
        "pop: delete the leftmost key",
    )

    def __init__(self, page_bytes: int = 128, key_bytes: int = 8) -> None:
        self.page_bytes, self.key_bytes = page_bytes, key_bytes

    def build(self, ev: dict) -> Pages:
        return btree_pages(self.page_bytes, self.key_bytes)

    def search(self, d: Pages, k: Any) -> Iterator[Step]:
        x = d.root
        while True:
            d.visit(x)
            i = bisect_left(x.keys, k)
            if i < len(x.keys) and x.keys[i] == k:
                yield 0, "page {}: {} is here", (show_page(x), k)
                yield 0, "search {}: found after {} pages", (k, len(d.path))
                return True
            if x.leaf:
                yield 0, "leaf {}: no {}", (show_page(x), k)
                yield 0, "search {}: not held ({} pages read)", (k, len(d.path))
                return False
            yield 0, "page {}: {} lies in child {}", (show_page(x), k, i)
            x = x.children[i]

    def split(self, d: Pages, x: Page, i: int) -> None:
        """CLRS B-TREE-SPLIT-CHILD: x's full child i gives its median key to x and its upper half to
        a new page."""
        y = x.children[i]
        t = (d.inner_max + 1) // 2
        z = Page(y.keys[t:], y.children[t:])
        x.keys.insert(i, y.keys[t - 1])
        x.children.insert(i + 1, z)
        y.keys, y.children = y.keys[: t - 1], y.children[:t]
        d.splits += 1
        d.pages += 1

    def insert(self, d: Pages, k: Any) -> Iterator[Step]:
        x = d.root
        d.visit(x)
        fresh = False  # the next page down is already in hand (the old root, or a new half)
        if len(x.keys) == d.inner_max:
            if k in x.keys:
                yield 2, "insert {}: already held", (k,)
                return False
            d.root = Page([], [x])
            d.pages += 1
            self.split(d, d.root, 0)
            yield 1, "the root {} is full: split it, the tree grows to {} levels", (show_page(x), d.height())
            x, fresh = d.root, True
        else:
            yield 0, "read the root {}", (show_page(x),)
        while True:
            i = bisect_left(x.keys, k)
            if i < len(x.keys) and x.keys[i] == k:
                yield 2, "insert {}: already held", (k,)
                return False
            if x.leaf:
                x.keys.insert(i, k)
                d.size += 1
                yield 2, "insert {}: into leaf {}", (k, show_page(x))
                return True
            c = x.children[i]
            if not fresh:
                d.visit(c)
            fresh = False
            if len(c.keys) == d.inner_max:
                self.split(d, x, i)
                yield 2, "child {} is full: split it, {} moves up", (i, x.keys[i])
                if x.keys[i] == k:
                    yield 2, "insert {}: already held", (k,)
                    return False
                c = x.children[i + 1] if k > x.keys[i] else c
            else:
                yield 0, "{} lies in child {}: read {}", (k, i, show_page(c))
            x = c

    def pop(self, d: Pages) -> Iterator[Step]:
        if d.size == 0:
            yield 6, "pop: the tree is empty", ()
            return None
        return (yield from self.delete(d, None, mode="min"))

    def delete(self, d: Pages, k: Any, mode: str = "key") -> Iterator[Step]:
        """CLRS B-TREE-DELETE in one pass down. ``mode`` is "key", or "max"/"min" while taking the
        predecessor (successor) out of a subtree to replace a key in an inner page."""
        t = (d.inner_max + 1) // 2
        x = d.root
        d.visit(x)
        yield 3, "delete {}: read the root {}", (k if mode == "key" else "the smallest", show_page(x))
        held = None  # (page, index) that the predecessor or successor will replace
        while True:
            if mode == "key":
                i = bisect_left(x.keys, k)
                hit = i < len(x.keys) and x.keys[i] == k
            else:
                i, hit = (len(x.keys), False) if mode == "max" else (0, False)
            if x.leaf:
                if mode == "key" and not hit:
                    yield 3, "delete {}: not held", (k,)
                    return False
                j = i if mode == "key" else (len(x.keys) - 1 if mode == "max" else 0)
                gone = x.keys.pop(j)
                d.size -= 1
                if held is not None:
                    page, at = held
                    page.keys[at] = gone
                    yield 4, "{} leaves leaf {} and takes the deleted key's place above", (gone, show_page(x))
                    return True
                yield 4, "delete {}: removed from leaf {}", (gone, show_page(x))
                return gone if mode == "min" else True
            if hit:
                y, z = x.children[i], x.children[i + 1]
                d.visit(y)
                if len(y.keys) >= t:
                    held, x, mode = (x, i), y, "max"
                    yield 4, "{} is in an inner page: its predecessor from {} will replace it", (k, show_page(y))
                    continue
                d.visit(z)
                if len(z.keys) >= t:
                    held, x, mode = (x, i), z, "min"
                    yield 4, "{} is in an inner page: its successor from {} will replace it", (k, show_page(z))
                    continue
                self.merge(d, x, i)
                yield 4, "both children of {} hold t − 1 keys: merge them around it", (k,)
                x = self.shrink(d, x, y)
                continue
            c = x.children[i]
            d.visit(c)
            if len(c.keys) >= t:
                yield 3, "go down to child {} {}", (i, show_page(c))
                x = c
                continue
            x = yield from self.fill(d, x, i, t)

    def fill(self, d: Pages, x: Page, i: int, t: int) -> Iterator[Step]:
        """x's child i holds t − 1 keys: borrow one through x from a sibling with t or more, or
        merge with a sibling; returns the page to go on to."""
        c = x.children[i]
        left = x.children[i - 1] if i > 0 else None
        right = x.children[i + 1] if i + 1 < len(x.children) else None
        if left is not None:
            d.visit(left)
            if len(left.keys) >= t:
                c.keys.insert(0, x.keys[i - 1])
                x.keys[i - 1] = left.keys.pop()
                if left.children:
                    c.children.insert(0, left.children.pop())
                d.borrows += 1
                yield 3, "child {} holds t − 1 keys: borrow through the parent from its left sibling", (i,)
                return c
        if right is not None:
            d.visit(right)
            if len(right.keys) >= t:
                c.keys.append(x.keys[i])
                x.keys[i] = right.keys.pop(0)
                if right.children:
                    c.children.append(right.children.pop(0))
                d.borrows += 1
                yield 3, "child {} holds t − 1 keys: borrow through the parent from its right sibling", (i,)
                return c
        j = i if right is not None else i - 1
        self.merge(d, x, j)
        yield 3, "child {} and its sibling hold t − 1 keys each: merge them", (i,)
        return self.shrink(d, x, x.children[j])

    def merge(self, d: Pages, x: Page, i: int) -> None:
        """Children i and i + 1 of x become one page around x's key i."""
        y, z = x.children[i], x.children.pop(i + 1)
        y.keys += [x.keys.pop(i), *z.keys]
        y.children += z.children
        d.merges += 1
        d.pages -= 1

    def shrink(self, d: Pages, x: Page, y: Page) -> Page:
        """After a merge under the root: a root left with no key gives its place to its child."""
        if x is d.root and not x.keys:
            d.root = y
            d.pages -= 1
        return y

    def range(self, d: Pages, a: Any, b: Any) -> Iterator[Step]:
        count = [0]
        d.visit(d.root)
        yield 5, "range {}…{}: read the root {}", (a, b, show_page(d.root))
        yield from self.scan(d, d.root, a, b, count)
        yield 5, "range {}…{}: {} keys, {} pages read", (a, b, count[0], len(d.path))
        return count[0]

    def scan(self, d: Pages, x: Page, a: Any, b: Any, count: list) -> Iterator[Step]:
        """In order over x's keys in [a, b]; child i is entered only when it can hold one."""
        keys = x.keys
        i = bisect_left(keys, a)
        while True:
            if x.children and (i == 0 or keys[i - 1] < b) and (i == len(keys) or keys[i] > a):
                c = x.children[i]
                d.visit(c)
                yield 5, "read child {} {}", (i, show_page(c))
                yield from self.scan(d, c, a, b, count)
            if i < len(keys) and keys[i] <= b:
                count[0] += 1
                i += 1
                continue
            return
