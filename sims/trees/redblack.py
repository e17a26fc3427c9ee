"""The red-black tree (Guibas & Sedgewick, 1978), as CLRS, 3rd ed., ch. 13 writes it.

Every node is red or black; the root and ``nil`` are black, a red node has no red child, and
every path from a node down to ``nil`` passes the same number of black nodes. So the longest
path is at most twice the shortest, and the height at most 2·log2(n + 1). An insert recolours
up the tree and rotates at most twice; a delete rotates at most three times. Linux's rbtree
(lib/rbtree.c) and Java's TreeMap follow the same cases.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sims.core.registry import register_policy
from sims.trees.base import Step
from sims.trees.binary import BinaryTree, Node, SearchTree, found_for_delete, successor_walk
from sims.trees.searchtrees import where


def paint(t: BinaryTree, x: Node, red: bool) -> None:
    """Colour x; a change of colour is one recolouring."""
    if x.red != red:
        x.red = red
        t.recolourings += 1


@register_policy("trees", "red_black")
class RedBlack(SearchTree):
    """Guibas & Sedgewick (1978) in CLRS's form (ch. 13): a new node is red; a red node under a
    red parent is fixed by recolouring (uncle red: the problem moves up two levels) or by one or
    two rotations (uncle black: done). Delete fixes the black count with at most three rotations."""

    BALANCE = "rb"
    PSEUDOCODE = (
        *SearchTree.SHARED,
        "insert z: as BST, z red; while z.p is red:",
        "  uncle red → p, uncle black; grandparent red; z ← grandparent",
        "  uncle black → rotate (twice at a zig-zag) and recolour; done",
        "delete z: as BST; if a black node left the path, fix the extra black at x:",
        "  sibling red → rotate it up; its children both black → sibling red, x ← parent",
        "  else rotate at the sibling (twice if needed), recolour; done",
        "root ← black",
    )

    def insert(self, t: BinaryTree, k: Any) -> Iterator[Step]:
        z = yield from self.place(t, k, 4)
        if z is None:
            return False
        at = where(t, z)
        while z.parent.red:
            p = z.parent
            g = p.parent
            left = p is g.left
            uncle = g.right if left else g.left
            if uncle.red:
                paint(t, p, False)
                paint(t, uncle, False)
                paint(t, g, True)
                yield (
                    5,
                    "{} and its uncle {} are red: both black, {} red; look again at {}",
                    (
                        p.key,
                        uncle.key,
                        g.key,
                        g.key,
                    ),
                )
                z = g
                continue
            if z is (p.right if left else p.left):  # zig-zag: straighten it first
                z = p
                t.rotate(z, left=left)
                yield 6, "zig-zag under {}: rotate {} at {}", (g.key, "left" if left else "right", z.key)
            paint(t, z.parent, False)
            paint(t, z.parent.parent, True)
            g = z.parent.parent
            t.rotate(g, left=not left)
            yield (
                6,
                "uncle black: rotate {} at {}; {} is black over two red children",
                (
                    "right" if left else "left",
                    g.key,
                    z.parent.key,
                ),
            )
        if t.root.red:
            paint(t, t.root, False)
            yield 10, "the root {} turns black", (t.root.key,)
        yield 4, "insert {}: a new leaf, {}; no red node has a red child", (k, at)
        return True

    def delete(self, t: BinaryTree, k: Any, found: Node | None = None) -> Iterator[Step]:
        """CLRS's RB-DELETE: y is the node that leaves its place (z, or z's successor), x the
        node that moves into y's; if y was black, x carries an extra black to fix."""
        z = yield from found_for_delete(self, t, k, found, 7)
        if z is None:
            return False
        nil = t.nil
        y, black_left = z, not z.red
        if z.left is nil:
            x = z.right
            t.transplant(z, z.right)
        elif z.right is nil:
            x = z.left
            t.transplant(z, z.left)
        else:
            yield from successor_walk(t, z, 7)
            y = t.minimum(z.right)
            black_left = not y.red
            x = y.right
            if y.parent is z:
                x.parent = y
            else:
                t.transplant(y, y.right)
                y.right = z.right
                y.right.parent = y
            t.transplant(z, y)
            y.left = z.left
            y.left.parent = y
            paint(t, y, z.red)
        t.dropped(z)
        yield (
            7,
            "delete {}: {} takes its place{}",
            (
                k,
                "nothing" if y is z and x is nil else (x.key if y is z else f"its successor {y.key}"),
                "; a black node left that path" if black_left else "",
            ),
        )
        if black_left:
            yield from self.fixup(t, x)
        return True

    def fixup(self, t: BinaryTree, x: Node) -> Iterator[Step]:
        """CLRS's RB-DELETE-FIXUP: x carries an extra black up the tree until a red node or a
        rotation absorbs it."""
        while x is not t.root and not x.red:
            p = x.parent
            left = x is p.left
            w = p.right if left else p.left
            if w.red:
                paint(t, w, False)
                paint(t, p, True)
                t.rotate(p, left=left)
                yield 8, "sibling {} is red: rotate it up over {}", (w.key, p.key)
                w = p.right if left else p.left
            near, far = (w.left, w.right) if left else (w.right, w.left)
            if not near.red and not far.red:
                paint(t, w, True)
                x = p
                yield (
                    8,
                    "sibling {}'s children are black: {} turns red, the extra black moves up to {}",
                    (
                        w.key,
                        w.key,
                        p.key,
                    ),
                )
                continue
            if not far.red:
                paint(t, near, False)
                paint(t, w, True)
                t.rotate(w, left=not left)
                yield 9, "sibling {}'s near child {} is red: rotate it up", (w.key, near.key)
                w = p.right if left else p.left
                far = w.right if left else w.left
            paint(t, w, p.red)
            paint(t, p, False)
            paint(t, far, False)
            t.rotate(p, left=left)
            yield 9, "rotate {} at {}: the extra black is absorbed", ("left" if left else "right", p.key)
            x = t.root
        if x.red:
            paint(t, x, False)
            yield 10, "{} turns black", (x.key,)
