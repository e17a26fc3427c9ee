"""The binary search trees' mechanism: nodes in symmetric order, and what BST, AVL and red-black
share (search, range, pop and the walk down), after CLRS, 3rd ed., ch. 12.

Keys are in symmetric order: every key in a node's left subtree is smaller than its key, every key
in its right subtree larger (a set: inserting a key already held changes nothing). ``nil`` is
CLRS's sentinel ``T.nil``: one shared black leaf that every missing child points to, so the
red-black fix-ups read as in the book. A rotation keeps the order and changes two links of depth.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from sims.trees.base import POINTER, Step, Structure, Tree, key_bytes, log2

MAX_DRAWN = 511  # nodes drawn at most: the top levels that fit, and the path of the operation


class Node:
    __slots__ = ("key", "left", "right", "parent", "h", "red")

    def __init__(self, key: Any, nil: Node | None = None) -> None:
        self.key = key
        self.left = self.right = self.parent = nil if nil is not None else self
        self.h = 1  # AVL: the subtree's height in nodes (nil: 0)
        self.red = False  # red-black: the colour (nil and the root are black)


class BinaryTree(Structure):
    """A binary search tree; ``balance`` is the promise its invariants check: ``none`` (BST),
    ``avl`` (heights of siblings differ by at most 1, ``h`` stored) or ``rb`` (red-black)."""

    NODE_BYTES: ClassVar[dict[str, int]] = {"none": 3 * POINTER, "avl": 3 * POINTER + 8, "rb": 3 * POINTER}
    # a key and three pointers; AVL adds a height word, red-black keeps its colour bit inside the
    # parent pointer, as Linux's rbtree does (__rb_parent_color)

    def __init__(self, balance: str) -> None:
        super().__init__()
        self.balance = balance
        self.nil = Node(None)
        self.nil.h = 0
        self.root = self.nil
        self._height: int | None = 0
        self._bytes = 0

    def new(self, key: Any) -> Node:
        n = Node(key, self.nil)
        n.red = self.balance == "rb"
        self.size += 1
        self._bytes += key_bytes(key) + self.NODE_BYTES[self.balance]
        self.changed()
        return n

    def dropped(self, z: Node) -> None:
        self.size -= 1
        self._bytes -= key_bytes(z.key) + self.NODE_BYTES[self.balance]
        self.changed()

    def changed(self) -> None:
        self._height = None

    # -- links (CLRS 12.3 TRANSPLANT, 13.2 LEFT-ROTATE) -------------------------------------------
    def hang(self, parent: Node, z: Node) -> None:
        """Attach z as a leaf under ``parent`` (nil: z becomes the root), on the side its key says."""
        z.parent = parent
        if parent is self.nil:
            self.root = z
        elif z.key < parent.key:
            parent.left = z
        else:
            parent.right = z

    def transplant(self, u: Node, v: Node) -> None:
        """Put the subtree v where u was (v's parent is set even when v is nil, as CLRS does)."""
        if u.parent is self.nil:
            self.root = v
        elif u is u.parent.left:
            u.parent.left = v
        else:
            u.parent.right = v
        v.parent = u.parent
        self.changed()

    def rotate(self, x: Node, left: bool) -> Node:
        """Rotate at x: its right child (left rotation) or left child comes up; returns it."""
        y = x.right if left else x.left
        inner = y.left if left else y.right
        if left:
            x.right = inner
        else:
            x.left = inner
        if inner is not self.nil:
            inner.parent = x
        self.transplant(x, y)
        if left:
            y.left = x
        else:
            y.right = x
        x.parent = y
        self.rotations += 1
        if self.balance == "avl":
            self.fix_h(x)
            self.fix_h(y)
        return y

    def fix_h(self, x: Node) -> None:
        x.h = 1 + max(x.left.h, x.right.h)

    def minimum(self, x: Node) -> Node:
        while x.left is not self.nil:
            x = x.left
        return x

    # -- reading --------------------------------------------------------------------------------------
    def inorder(self) -> list[Node]:
        out, stack, x = [], [], self.root
        while stack or x is not self.nil:
            while x is not self.nil:
                stack.append(x)
                x = x.left
            x = stack.pop()
            out.append(x)
            x = x.right
        return out

    def keys(self) -> list:
        return [x.key for x in self.inorder()]

    def height(self) -> int:
        if self._height is None:
            best, stack = 0, [(self.root, 1)] if self.root is not self.nil else []
            while stack:
                x, d = stack.pop()
                best = max(best, d)
                stack += [(c, d + 1) for c in (x.left, x.right) if c is not self.nil]
            self._height = best
        return self._height

    def height_bound(self) -> float:
        n = self.size
        if n == 0:
            return 0.0
        if self.balance == "avl":  # Knuth, TAOCP vol. 3, §6.2.3, (8)
            return 1.4405 * log2(n + 2) - 0.3277
        if self.balance == "rb":  # CLRS Lemma 13.1
            return 2 * log2(n + 1)
        return float(n)

    def node_count(self) -> int:
        return self.size

    def bytes_held(self) -> int:
        return self._bytes

    # -- the invariants -------------------------------------------------------------------------------
    def check_invariants(self) -> None:
        super().check_invariants()
        nil = self.nil
        assert self.root.parent is nil or self.root is nil, "the root has a parent"
        nodes = self.inorder()
        assert len(nodes) == self.size, f"{len(nodes)} nodes reachable, size says {self.size}"
        assert all(a.key < b.key for a, b in zip(nodes, nodes[1:], strict=False)), "keys out of symmetric order"
        for x in nodes:
            for c in (x.left, x.right):
                assert c is nil or c.parent is x, f"{c.key}'s parent pointer skips {x.key}"
        assert self.height() <= self.height_bound() + 1e-9, f"height {self.height()} over its bound"
        if self.balance == "avl":
            for x in nodes:
                assert x.h == 1 + max(x.left.h, x.right.h), f"{x.key} stores height {x.h}"
                assert abs(x.left.h - x.right.h) <= 1, f"{x.key} is out of balance"
        if self.balance == "rb":
            assert not self.root.red and not nil.red, "the root (or nil) is red"
            blacks = set()
            for x in nodes:
                if x.red:
                    assert not x.left.red and not x.right.red, f"red {x.key} has a red child"
                if x.left is nil or x.right is nil:  # count black nodes from here up to the root
                    b, y = 0, x
                    while y is not nil:
                        b += not y.red
                        y = y.parent
                    blacks.add(b)
            assert len(blacks) <= 1, f"paths to nil hold different numbers of black nodes: {sorted(blacks)}"

    # -- the view -------------------------------------------------------------------------------------
    def layout(self) -> dict[str, Any]:
        """Nodes at x = their rank in key order, y = depth; when there are more than MAX_DRAWN,
        the top levels that fit plus the operation's path."""
        nodes = self.inorder()
        depth: dict[int, int] = {}
        order = []
        stack = [(self.root, 0)] if self.root is not self.nil else []
        while stack:  # breadth-ish: depth of every node
            x, d = stack.pop()
            depth[id(x)] = d
            order.append(x)
            stack += [(c, d + 1) for c in (x.left, x.right) if c is not self.nil]
        keep = _top_levels(order, depth, self.path, MAX_DRAWN)
        rank = {id(x): i for i, x in enumerate(nodes)}
        shown = [x for x in nodes if id(x) in keep]
        index = {id(x): i for i, x in enumerate(shown)}
        n = max(1, len(nodes))
        return {
            "shape": "nodes",
            "nodes": [[(rank[id(x)] + 0.5) / n, depth[id(x)], _label(x.key), self._style(x)] for x in shown],
            "parents": [index.get(id(x.parent), -1) for x in shown],
            "path": [index[id(x)] for x in self.path if id(x) in index],
            "hidden": len(nodes) - len(shown),
        }

    def _style(self, x: Node) -> str:
        if self.balance != "rb":
            return ""
        return "red" if x.red else "black"


def _label(k: Any) -> str:
    s = str(k)
    return s if len(s) <= 8 else s[:7] + "…"


def _top_levels(nodes: list, depth: dict[int, int], path: list, cap: int) -> set[int]:
    """ids of the nodes to draw: every node when they fit, else the deepest full levels that fit
    and the nodes on ``path``."""
    if len(nodes) <= cap:
        return {id(x) for x in nodes}
    per: dict[int, int] = {}
    for x in nodes:
        per[depth[id(x)]] = per.get(depth[id(x)], 0) + 1
    total, last = 0, -1
    for d in sorted(per):
        if total + per[d] > cap:
            break
        total += per[d]
        last = d
    keep = {id(x) for x in nodes if depth[id(x)] <= last}
    keep.update(id(x) for x in path if id(x) in depth)
    return keep


class SearchTree(Tree):
    """What BST, AVL and red-black share: search, range, pop and the walk down. Subclasses write
    ``insert`` and ``delete`` (their rebalancing) and append their lines to ``SHARED``."""

    OPS = frozenset({"insert", "delete", "search", "range", "pop"})
    BALANCE: ClassVar[str] = "none"
    SHARED: ClassVar[tuple[str, ...]] = (
        "search k: x ← root",
        "  while x ≠ nil and k ≠ x.key: x ← x.left if k < x.key else x.right",
        "range a…b: in order, skipping subtrees left of a or right of b",
        "pop: walk left to the smallest key, delete it",
    )

    def build(self, ev: dict) -> BinaryTree:
        return BinaryTree(self.BALANCE)

    def descend(self, t: BinaryTree, k: Any, line: int = 1) -> Iterator[Step]:
        """Walk down from the root towards k, one step a node; returns (the node holding k or nil,
        the last node visited)."""
        x, last = t.root, t.nil
        while x is not t.nil:
            t.visit(x)
            last = x
            if k == x.key:
                yield line, "{} = {}: here", (k, x.key)
                return x, last
            go = "left" if k < x.key else "right"
            yield line, "{} {} {}: go {}", (k, "<" if go == "left" else ">", x.key, go)
            x = x.left if go == "left" else x.right
        return t.nil, last

    def search(self, t: BinaryTree, k: Any) -> Iterator[Step]:
        x, _ = yield from self.descend(t, k)
        hit = x is not t.nil
        yield 0, "search {}: {} after {} nodes", (k, "found" if hit else "not found", len(t.path))
        return hit

    def range(self, t: BinaryTree, a: Any, b: Any) -> Iterator[Step]:
        """In order over [a, b]: a subtree is entered only when it can hold a key in range."""
        count, stack, x = 0, [], t.root
        while stack or x is not t.nil:
            while x is not t.nil:
                t.visit(x)
                stack.append(x)
                if a < x.key:
                    yield 2, "{} > {}: keys in range may lie left", (x.key, a)
                    x = x.left
                else:
                    yield 2, "{} ≤ {}: nothing in range lies left", (x.key, a)
                    x = t.nil
            x = stack.pop()
            if a <= x.key <= b:
                count += 1
            x = x.right if x.key < b else t.nil
        yield 2, "range {}…{}: {} keys, {} nodes visited", (a, b, count, len(t.path))
        return count

    def pop(self, t: BinaryTree) -> Iterator[Step]:
        if t.root is t.nil:
            yield 3, "pop: the tree is empty", ()
            return None
        x = t.root
        t.visit(x)
        yield 3, "pop: start at the root {}", (x.key,)
        while x.left is not t.nil:
            x = x.left
            t.visit(x)
            yield 3, "go left to {}", (x.key,)
        k = x.key
        yield from self.delete(t, k, found=x)
        return k

    def insert(self, t: BinaryTree, k: Any) -> Iterator[Step]:
        raise NotImplementedError

    def delete(self, t: BinaryTree, k: Any, found: Node | None = None) -> Iterator[Step]:
        raise NotImplementedError

    def place(self, t: BinaryTree, k: Any, line: int) -> Iterator[Step]:
        """The walk down for an insert: the new leaf hung under the last node visited, or None
        (k is held already, and the last step says so)."""
        x, last = yield from self.descend(t, k, 1)
        if x is not t.nil:
            yield line, "insert {}: already held", (k,)
            return None
        z = t.new(k)
        t.hang(last, z)
        return z


def unlink(t: BinaryTree, z: Node) -> Node:
    """Take z out as CLRS's TREE-DELETE does (12.3); returns the lowest node whose subtree
    changed (where an AVL walk back up starts; nil when the tree is now empty)."""
    nil = t.nil
    if z.left is nil or z.right is nil:
        child = z.right if z.left is nil else z.left
        low = z.parent
        t.transplant(z, child)
    else:
        y = t.minimum(z.right)
        low = y if y.parent is z else y.parent
        if y.parent is not z:
            t.transplant(y, y.right)
            y.right = z.right
            y.right.parent = y
        t.transplant(z, y)
        y.left = z.left
        y.left.parent = y
        y.h = z.h  # y stands where z stood: the walk back up compares against z's height
    t.dropped(z)
    return low


def successor_walk(t: BinaryTree, z: Node, line: int) -> Iterator[Step]:
    """The steps of finding z's successor (the minimum of z.right), one a node visited."""
    y = z.right
    t.visit(y)
    yield line, "{} has two children: its successor is in its right subtree, at {}", (z.key, y.key)
    while y.left is not t.nil:
        y = y.left
        t.visit(y)
        yield line, "go left to {}", (y.key,)


def found_for_delete(self: SearchTree, t: BinaryTree, k: Any, found: Node | None, line: int) -> Iterator[Step]:
    """The node to delete: ``found`` (pop found it), else a walk down; None (with a step that says
    so) when k is not held."""
    if found is not None:
        return found
    z, _ = yield from self.descend(t, k)
    if z is t.nil:
        yield line, "delete {}: not held", (k,)
        return None
    return z
