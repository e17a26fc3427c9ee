"""The plain binary search tree (CLRS, 3rd ed., ch. 12) and the AVL tree (Adelson-Velsky & Landis,
1962; Knuth, TAOCP vol. 3, §6.2.3).

Both insert by walking down from the root and hanging the key where the walk fell off. The BST
does nothing more, so keys that arrive in order build a path n nodes long. AVL then walks back up
the path, updating each node's height, and rotates where two siblings' heights differ by 2: at
most one (single or double) rotation per insert, and the height stays under
1.4405·log2(n + 2) − 0.3277.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sims.core.registry import register_policy
from sims.trees.base import Step
from sims.trees.binary import BinaryTree, Node, SearchTree, found_for_delete, successor_walk, unlink


def where(t: BinaryTree, z: Node) -> str:
    """Where a new leaf hangs: "the root", "left of 37"."""
    if z.parent is t.nil:
        return "the root"
    return f"{'left' if z is z.parent.left else 'right'} of {z.parent.key}"


def bst_delete(self: SearchTree, t: BinaryTree, k: Any, found: Node | None, lines: tuple[int, int]) -> Iterator[Step]:
    """Find k (unless ``found``) and take it out as CLRS 12.3 does; returns (the lowest node whose
    subtree changed, or None when k is not held). ``lines``: (one child or none, two children)."""
    z = yield from found_for_delete(self, t, k, found, lines[0])
    if z is None:
        return None
    if z.left is not t.nil and z.right is not t.nil:
        yield from successor_walk(t, z, lines[1])
        y = t.minimum(z.right)
        low = unlink(t, z)
        yield lines[1], "delete {}: its successor {} takes its place", (z.key, y.key)
    else:
        child = z.right if z.left is t.nil else z.left
        low = unlink(t, z)
        said = "nothing" if child is t.nil else f"its child {child.key}"
        yield lines[0], "delete {}: {} takes its place", (z.key, said)
    return low


@register_policy("trees", "bst")
class BST(SearchTree):
    """A binary search tree with no balancing (CLRS ch. 12): O(height) per operation, and the
    height is whatever the order of the keys makes it: n for sorted keys; on random ones an average
    path of about 2·ln n ≈ 1.39·log2 n nodes (Knuth, §6.2.2)."""

    BALANCE = "none"
    PSEUDOCODE = (
        *SearchTree.SHARED,
        "insert k: walk down as search; k hangs where the walk fell off",
        "delete z: at most one child → that child takes z's place",
        "  two children → y ← min(z.right); y takes z's place",
    )

    def insert(self, t: BinaryTree, k: Any) -> Iterator[Step]:
        z = yield from self.place(t, k, 4)
        if z is None:
            return False
        yield 4, "insert {}: a new leaf, {}", (k, where(t, z))
        return True

    def delete(self, t: BinaryTree, k: Any, found: Node | None = None) -> Iterator[Step]:
        low = yield from bst_delete(self, t, k, found, (5, 6))
        return low is not None


@register_policy("trees", "avl")
class AVL(SearchTree):
    """Adelson-Velsky & Landis (1962): every node stores its height, and siblings' heights differ
    by at most one. After an insert or delete the walk back up rotates where they differ by 2
    (twice at a zig-zag); an insert needs at most one such fix, a delete up to one per level."""

    BALANCE = "avl"
    PSEUDOCODE = (
        *SearchTree.SHARED,
        "insert k: as BST, then walk back up the path:",
        "  h ← 1 + max(children's h); |left.h − right.h| = 2 → rotate (twice if zig-zag)",
        "  stop when a subtree's height did not change",
        "delete k: as BST (a successor takes a two-child node's place), then walk back up",
    )

    def insert(self, t: BinaryTree, k: Any) -> Iterator[Step]:
        z = yield from self.place(t, k, 4)
        if z is None:
            return False
        at = where(t, z)
        yield from self.retrace(t, z.parent)
        yield 4, "insert {}: a new leaf, {}; heights fixed on the way up", (k, at)
        return True

    def delete(self, t: BinaryTree, k: Any, found: Node | None = None) -> Iterator[Step]:
        low = yield from bst_delete(self, t, k, found, (7, 7))
        if low is None:
            return False
        yield from self.retrace(t, low)
        yield 7, "delete {}: done, heights fixed on the way up", (k,)
        return True

    def retrace(self, t: BinaryTree, x: Node) -> Iterator[Step]:
        """Walk up from x fixing heights; rotate where a node is out of balance; stop where a
        subtree's height came out as it was."""
        while x is not t.nil:
            old = x.h
            t.fix_h(x)
            if abs(x.left.h - x.right.h) == 2:
                x = yield from self.rebalance(t, x)
            if x.h == old:
                return
            x = x.parent

    def rebalance(self, t: BinaryTree, x: Node) -> Iterator[Step]:
        """The rotation (or two) that brings x's taller side up; returns the subtree's new root."""
        left = x.left.h > x.right.h
        c = x.left if left else x.right
        inner, outer = (c.right, c.left) if left else (c.left, c.right)
        if inner.h > outer.h:  # zig-zag: first bring the inner grandchild up
            t.rotate(c, left=left)
            yield (
                5,
                "{} leans {} under a {}-heavy {}: rotate {} at {} first",
                (
                    c.key,
                    "right" if left else "left",
                    "left" if left else "right",
                    x.key,
                    "left" if left else "right",
                    c.key,
                ),
            )
        top = t.rotate(x, left=not left)
        yield (
            5,
            "{} is out of balance: rotate {} at {}, {} comes up",
            (
                x.key,
                "right" if left else "left",
                x.key,
                top.key,
            ),
        )
        return top
