"""The B+ tree (Comer, "The Ubiquitous B-Tree", ACM Computing Surveys, 1979): every key in a leaf,
the leaves chained left to right, the inner pages holding only copies of keys that route.

Inner pages carry no values, so more keys fit in a page than in a B-tree's and the tree is
shallower; a range scan goes down once to its first leaf and then along the chain, never back up
through the inner pages. Splits and merges work bottom-up: a leaf that overflows splits and copies
its right half's first key into the parent (an inner page that overflows moves its middle key up);
a page under half full borrows from a sibling or merges with it. This is the layout of
PostgreSQL's nbtree, SQLite's table b-trees and InnoDB's indexes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Any

from sims.core.registry import register_policy
from sims.trees.base import Step, Tree
from sims.trees.btree import show_page
from sims.trees.pages import PAGE_PARAMS, Page, Pages, bplus_pages

Path = list[tuple[Page, int]]  # (inner page, the child taken) from the root down


@register_policy("trees", "b_plus_tree")
class BPlusTree(Tree):
    """Comer's B+ tree (1979): keys in the leaves, chained; inner pages route. Splits and merges
    go bottom-up from the leaf. A visit is a page read."""

    OPS = frozenset({"insert", "delete", "search", "range", "pop"})
    PARAMS = PAGE_PARAMS
    PSEUDOCODE = (
        "search k: from the root follow the child whose range holds k, down to a leaf",
        "insert k: into its leaf; a full leaf splits, its right half's first key is copied up",
        "  a full inner page splits, its middle key moves up; a root split grows the tree",
        "delete k: from its leaf; a page under half full",
        "  borrows a key from a sibling, or merges with it (the parent loses a key)",
        "range a…b: down to a's leaf, then along the leaf chain until a key passes b",
        "pop: take the first key of the leftmost leaf",
    )

    def __init__(self, page_bytes: int = 128, key_bytes: int = 8) -> None:
        self.page_bytes, self.key_bytes = page_bytes, key_bytes

    def build(self, ev: dict) -> Pages:
        return bplus_pages(self.page_bytes, self.key_bytes)

    def down(self, d: Pages, k: Any, line: int, first: bool = False) -> Iterator[Step]:
        """Read pages from the root to k's leaf (the leftmost leaf when ``first``); returns the
        path of inner pages taken and the leaf."""
        x, path = d.root, []
        while True:
            d.visit(x)
            if x.leaf:
                yield line, "leaf {}", (show_page(x),)
                return path, x
            i = 0 if first else bisect_right(x.keys, k)
            yield line, "page {}: child {}", (show_page(x), i)
            path.append((x, i))
            x = x.children[i]

    def search(self, d: Pages, k: Any) -> Iterator[Step]:
        _, leaf = yield from self.down(d, k, 0)
        i = bisect_left(leaf.keys, k)
        hit = i < len(leaf.keys) and leaf.keys[i] == k
        yield 0, "search {}: {} ({} pages read)", (k, "found" if hit else "not held", len(d.path))
        return hit

    def insert(self, d: Pages, k: Any) -> Iterator[Step]:
        path, leaf = yield from self.down(d, k, 1)
        i = bisect_left(leaf.keys, k)
        if i < len(leaf.keys) and leaf.keys[i] == k:
            yield 1, "insert {}: already held", (k,)
            return False
        leaf.keys.insert(i, k)
        d.size += 1
        if len(leaf.keys) <= d.leaf_max:
            yield 1, "insert {}: into leaf {}", (k, show_page(leaf))
            return True
        yield from self.split(d, path, leaf)
        yield 1, "insert {}: done after {} splits", (k, d.splits)
        return True

    def split(self, d: Pages, path: Path, leaf: Page) -> Iterator[Step]:
        """Split the overflowing leaf, then every inner page above that overflows in turn."""
        mid = (len(leaf.keys) + 1) // 2
        right = Page(leaf.keys[mid:])
        leaf.keys = leaf.keys[:mid]
        right.next, leaf.next = leaf.next, right
        sep, node = right.keys[0], right
        d.splits += 1
        d.pages += 1
        yield 1, "leaf full: split it, {} is copied up", (sep,)
        while path:
            parent, i = path.pop()
            parent.keys.insert(i, sep)
            parent.children.insert(i + 1, node)
            if len(parent.keys) <= d.inner_max:
                return
            m = len(parent.keys) // 2
            sep, node = parent.keys[m], Page(parent.keys[m + 1 :], parent.children[m + 1 :])
            parent.keys, parent.children = parent.keys[:m], parent.children[: m + 1]
            d.splits += 1
            d.pages += 1
            yield 2, "inner page full: split it, {} moves up", (sep,)
        d.root = Page([sep], [d.root, node])
        d.pages += 1
        yield 2, "the root split: a new root [{}], the tree grows a level", (sep,)

    def delete(self, d: Pages, k: Any) -> Iterator[Step]:
        path, leaf = yield from self.down(d, k, 3)
        i = bisect_left(leaf.keys, k)
        if i == len(leaf.keys) or leaf.keys[i] != k:
            yield 3, "delete {}: not held", (k,)
            return False
        leaf.keys.pop(i)
        d.size -= 1
        yield from self.rebalance(d, path, leaf)
        yield 3, "delete {}: removed from its leaf", (k,)
        return True

    def pop(self, d: Pages) -> Iterator[Step]:
        path, leaf = yield from self.down(d, None, 6, first=True)
        if not leaf.keys:
            yield 6, "pop: the tree is empty", ()
            return None
        k = leaf.keys.pop(0)
        d.size -= 1
        yield from self.rebalance(d, path, leaf)
        yield 6, "pop: {} taken from the leftmost leaf", (k,)
        return k

    def rebalance(self, d: Pages, path: Path, node: Page) -> Iterator[Step]:
        """Bottom-up: a page under half full borrows from a sibling or merges with one; a merge
        takes a key from the parent, which may fall under half full in turn."""
        while path:
            least = d.leaf_min if node.leaf else d.inner_min
            if len(node.keys) >= least:
                return
            parent, i = path.pop()
            for j in (i - 1, i + 1):  # the left sibling first
                if 0 <= j < len(parent.children):
                    sib = parent.children[j]
                    d.visit(sib)
                    if len(sib.keys) > least:
                        self.borrow(parent, i, j)
                        d.borrows += 1
                        yield 4, "a page under half full borrows from its {} sibling", ("left" if j < i else "right",)
                        return
            j = i - 1 if i > 0 else i
            self.merge(d, parent, j)
            yield 4, "a page under half full merges with its sibling; the parent loses a key", ()
            node = parent
        if not d.root.leaf and not d.root.keys:
            d.root = d.root.children[0]
            d.pages -= 1
            yield 4, "the root is left with one child: the tree loses a level", ()

    def borrow(self, parent: Page, i: int, j: int) -> None:
        """Child i of ``parent`` takes one key from its sibling j (i ± 1), through the parent."""
        node, sib = parent.children[i], parent.children[j]
        if node.leaf:
            if j < i:
                node.keys.insert(0, sib.keys.pop())
                parent.keys[i - 1] = node.keys[0]
            else:
                node.keys.append(sib.keys.pop(0))
                parent.keys[i] = sib.keys[0]
        elif j < i:
            node.keys.insert(0, parent.keys[i - 1])
            parent.keys[i - 1] = sib.keys.pop()
            node.children.insert(0, sib.children.pop())
        else:
            node.keys.append(parent.keys[i])
            parent.keys[i] = sib.keys.pop(0)
            node.children.append(sib.children.pop(0))

    def merge(self, d: Pages, parent: Page, j: int) -> None:
        """Children j and j + 1 of ``parent`` become one page (a leaf keeps its place in the chain)."""
        a, b = parent.children[j], parent.children.pop(j + 1)
        sep = parent.keys.pop(j)
        if a.leaf:
            a.keys += b.keys
            a.next = b.next
        else:
            a.keys += [sep, *b.keys]
            a.children += b.children
        d.merges += 1
        d.pages -= 1

    def range(self, d: Pages, a: Any, b: Any) -> Iterator[Step]:
        _, leaf = yield from self.down(d, a, 5)
        count = 0
        while True:
            count += sum(1 for k in leaf.keys if a <= k <= b)
            if (leaf.keys and leaf.keys[-1] >= b) or leaf.next is None:
                break
            leaf = leaf.next
            d.visit(leaf)
            yield 5, "along the chain to leaf {}", (show_page(leaf),)
        yield 5, "range {}…{}: {} keys, {} pages read", (a, b, count, len(d.path))
        return count
