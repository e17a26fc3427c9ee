"""The B-trees' mechanism: pages of keys, a page size that decides how many fit, and the rules
both trees keep (every leaf at the same depth; every page but the root at least half full).

A page is one node and one read: ``visit`` counts it in ``pages_read``. How many keys a page holds
follows from ``page_bytes`` and ``key_bytes``, with a 16-byte header and 8-byte child pointers and
values (a record id) in this model:

- B-tree page (CLRS ch. 18): keys with their values and one more child than keys:
  16 + m·(key + 8) + (m + 1)·8 ≤ page, and m = 2t − 1 for the minimum degree t;
- B+ tree inner page (Comer, 1979): keys and children only, no values, so more fit;
  16 + m·key + (m + 1)·8 ≤ page;
- B+ tree leaf: keys with their values and the pointer to the next leaf: 16 + m·(key + 8) + 8 ≤ page.
"""

from __future__ import annotations

from typing import Any

from sims.core.limits import InputError
from sims.core.registry import Param
from sims.trees.base import POINTER, Structure, log2

HEADER = 16
MAX_DRAWN = 255  # pages drawn at most: the top levels that fit, and the operation's path

PAGE_PARAMS = {
    "page_bytes": Param(int, 128, "B-trees: bytes in a page (decides how many keys fit)", min=96, max=65536),
    "key_bytes": Param(int, 8, "B-trees: bytes a key takes in a page", min=1, max=1024),
}


class Page:
    __slots__ = ("keys", "children", "next")

    def __init__(self, keys: list | None = None, children: list | None = None) -> None:
        self.keys: list = keys or []
        self.children: list[Page] = children or []  # empty: a leaf
        self.next: Page | None = None  # B+ tree leaves: the next leaf in key order

    @property
    def leaf(self) -> bool:
        return not self.children


def fit(page_bytes: int, per_key: int, fixed: int, what: str, least: int) -> int:
    """Keys that fit: the largest m with fixed + m·per_key ≤ page_bytes; InputError below ``least``."""
    m = (page_bytes - fixed) // per_key
    if m < least:
        raise InputError(
            f"page_bytes = {page_bytes}: a {what} holds {max(m, 0)} keys of this size; at least {least} must fit"
        )
    return m


class Pages(Structure):
    """A tree of pages. ``leaf_max``/``inner_max`` keys at most a page; every page but the root at
    least ``leaf_min``/``inner_min``; an inner root at least one key. ``linked``: the B+ tree's
    leaves hold every key and chain left to right, its inner keys only route."""

    PAGED = True

    def __init__(self, page_bytes: int, leaf: tuple[int, int], inner: tuple[int, int], linked: bool) -> None:
        super().__init__()
        self.page_bytes = page_bytes
        self.leaf_max, self.leaf_min = leaf
        self.inner_max, self.inner_min = inner
        self.linked = linked
        self.root = Page()
        self.pages = 1

    def levels(self) -> list[list[Page]]:
        """The pages level by level, left to right."""
        out, level = [], [self.root]
        while level:
            out.append(level)
            level = [c for p in level for c in p.children]
        return out

    def keys(self) -> list:
        if self.linked:
            x = self.root
            while x.children:
                x = x.children[0]
            out = []
            while x is not None:
                out += x.keys
                x = x.next
            return out
        out: list = []

        def walk(p: Page) -> None:
            if p.leaf:
                out.extend(p.keys)
                return
            for i, c in enumerate(p.children):
                walk(c)
                if i < len(p.keys):
                    out.append(p.keys[i])

        walk(self.root)
        return out

    # -- what it reports ----------------------------------------------------------------------------
    def height(self) -> int:
        if self.size == 0:
            return 0
        h, x = 1, self.root
        while x.children:
            h, x = h + 1, x.children[0]
        return h

    def height_bound(self) -> float:
        """CLRS Theorem 18.1 for the B-tree, 1 + log_t((n + 1)/2) levels; for the B+ tree the same
        argument over its leaves (at most n / leaf_min of them) and its inner fan-out."""
        n = self.size
        if n == 0:
            return 0.0
        if not self.linked:
            return 1 + log2((n + 1) / 2) / log2(self.inner_min + 1)
        if n <= self.leaf_max:
            return 1.0
        return 2 + max(0.0, log2(n / (2 * self.leaf_min)) / log2(self.inner_min + 1))

    def node_count(self) -> int:
        return self.pages

    def bytes_held(self) -> int:
        return self.pages * self.page_bytes

    # -- the invariants -----------------------------------------------------------------------------
    def check_invariants(self) -> None:
        super().check_invariants()
        levels = self.levels()
        assert sum(len(lv) for lv in levels) == self.pages, "pages reachable differ from pages allocated"
        for depth, level in enumerate(levels):
            for p in level:
                assert list(p.keys) == sorted(set(p.keys)), "a page's keys are out of order"
                if p.children:
                    assert depth < len(levels) - 1, "an inner page on the last level"
                    assert len(p.children) == len(p.keys) + 1, "an inner page needs one more child than keys"
                else:
                    assert depth == len(levels) - 1, "a leaf above the last level: leaves at different depths"
                cap, least = (self.inner_max, self.inner_min) if p.children else (self.leaf_max, self.leaf_min)
                assert len(p.keys) <= cap, f"a page holds {len(p.keys)} keys, at most {cap} fit"
                if p is self.root:
                    assert not p.children or p.keys, "an inner root without a key"
                else:
                    assert len(p.keys) >= least, f"a page holds {len(p.keys)} keys, less than half full ({least})"
        keys = self.keys()
        assert keys == sorted(set(keys)) and len(keys) == self.size, "keys out of order, or size wrong"
        if self.linked:
            leaves = levels[-1]
            for a, b in zip(leaves, leaves[1:], strict=False):
                assert a.next is b, "the leaf chain skips a leaf"
            assert leaves[-1].next is None, "the last leaf links on"
            self._check_routes(self.root, None, None)

    def _check_routes(self, p: Page, lo: Any, hi: Any) -> None:
        """B+ tree: child i of an inner page holds keys in [keys[i − 1], keys[i])."""
        for k in p.keys if p.leaf else ():
            assert (lo is None or k >= lo) and (hi is None or k < hi), f"{k} sits outside its page's range"
        for i, c in enumerate(p.children):
            self._check_routes(c, p.keys[i - 1] if i else lo, p.keys[i] if i < len(p.keys) else hi)

    # -- the view -----------------------------------------------------------------------------------
    def layout(self) -> dict[str, Any]:
        """Pages level by level: leaves side by side, an inner page over the leaves below it; the
        top levels that fit MAX_DRAWN, plus the pages the operation read."""
        levels = self.levels()
        leaves = levels[-1]
        span: dict[int, tuple[int, int]] = {id(p): (i, i + 1) for i, p in enumerate(leaves)}
        for level in reversed(levels[:-1]):
            for p in level:
                span[id(p)] = (span[id(p.children[0])][0], span[id(p.children[-1])][1])
        total, last = 0, -1
        for d, level in enumerate(levels):
            if total + len(level) > MAX_DRAWN:
                break
            total, last = total + len(level), d
        read = {id(p) for p in self.path}
        shown = [(d, p) for d, level in enumerate(levels) for p in level if d <= last or id(p) in read]
        index = {id(p): i for i, (_, p) in enumerate(shown)}
        parents = {id(c): p for level in levels for p in level for c in p.children}
        n = max(1, len(leaves))
        nodes = []
        for d, p in shown:
            a, b = span[id(p)]
            nodes.append([a / n, b / n, d, [str(k) for k in p.keys], "leaf" if p.leaf else ""])
        out = {
            "shape": "pages",
            "nodes": nodes,
            "parents": [index.get(id(parents[id(p)]), -1) if id(p) in parents else -1 for _, p in shown],
            "path": [index[id(p)] for p in self.path if id(p) in index],
            "hidden": self.pages - len(shown),
            "page_keys": [self.leaf_max, self.inner_max],
        }
        if self.linked:
            out["linked"] = True
        return out


def btree_pages(page_bytes: int, key_bytes: int) -> Pages:
    """CLRS's B-tree: t from the page; 2t − 1 keys at most, t − 1 at least (but the root)."""
    m = fit(page_bytes, key_bytes + POINTER + POINTER, HEADER + POINTER, "B-tree page", 3)
    t = (m + 1) // 2
    return Pages(page_bytes, (2 * t - 1, t - 1), (2 * t - 1, t - 1), linked=False)


def bplus_pages(page_bytes: int, key_bytes: int) -> Pages:
    """Comer's B+ tree: leaves at least half full, inner pages at least half their children."""
    inner = fit(page_bytes, key_bytes + POINTER, HEADER + POINTER, "B+ tree inner page", 3)
    leaf = fit(page_bytes, key_bytes + POINTER, HEADER + POINTER, "B+ tree leaf", 2)
    return Pages(page_bytes, (leaf, -(-leaf // 2)), (inner, -(-(inner + 1) // 2) - 1), linked=True)
