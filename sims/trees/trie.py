"""The trie (de la Briandais, 1959; Fredkin, "Trie Memory", CACM 1960; Knuth, TAOCP vol. 3, §6.3):
one node per prefix of the keys held, one edge per character.

Finding a key of length L reads the root and at most L nodes, however many keys the trie holds;
a binary search tree reads about log2 n nodes, however long the keys are. The price is memory: a
node per distinct prefix. Integer keys are written in decimal, padded to the width of the largest
key the stream may hold, so their order is kept. SGLang's radix cache is this tree over blocks of
tokens, with chains of single children merged into one edge.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sims.core.registry import register_policy
from sims.trees.base import POINTER, Step, Structure, Tree

MAX_DRAWN = 511  # nodes drawn at most: the top levels that fit, and the operation's path
NODE_BYTES = 16  # a node: its end-of-key flag and the header of its child table
EDGE_BYTES = 1 + POINTER  # a child: its character and the pointer


class TrieNode:
    __slots__ = ("children", "end")

    def __init__(self) -> None:
        self.children: dict[str, TrieNode] = {}
        self.end = False  # a key ends here


class Trie(Structure):
    """Every node but the root is a prefix of a key held; a node without children ends a key."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.root = TrieNode()
        self.nodes = 1
        self.width = width  # integer keys: decimal digits, zero-padded
        self._height: int | None = 1

    def text(self, k: Any) -> str:
        return k if isinstance(k, str) else str(k).zfill(self.width)

    def walk(self) -> Iterator[tuple[TrieNode, str, int, TrieNode | None]]:
        """(node, its prefix, its depth, its parent), depth first, children in character order."""
        stack: list = [(self.root, "", 0, None)]
        while stack:
            x, s, d, p = stack.pop()
            yield x, s, d, p
            stack += [(x.children[c], s + c, d + 1, x) for c in sorted(x.children, reverse=True)]

    def keys(self) -> list[str]:
        return [s for x, s, _, _ in self.walk() if x.end]

    def height(self) -> int:
        if self.size == 0:
            return 0
        if self._height is None:
            self._height = 1 + max(d for _, _, d, _ in self.walk())
        return self._height

    def height_bound(self) -> float:
        return float(self.height())  # the root plus the longest key: exactly

    def node_count(self) -> int:
        return self.nodes

    def bytes_held(self) -> int:
        return self.nodes * NODE_BYTES + (self.nodes - 1) * EDGE_BYTES

    def check_invariants(self) -> None:
        super().check_invariants()
        seen = list(self.walk())
        assert len(seen) == self.nodes, f"{len(seen)} nodes reachable, {self.nodes} counted"
        assert sum(x.end for x, _, _, _ in seen) == self.size, "keys ending in the trie differ from size"
        for x, s, _, _ in seen:
            assert all(len(c) == 1 for c in x.children), "an edge that is not one character"
            assert x is self.root or x.end or x.children, f"node {s!r} leads to no key"

    def layout(self) -> dict[str, Any]:
        """Nodes at x = the middle of the leaves under them, y = depth; the edge's character."""
        seen = list(self.walk())
        on_path = {id(x) for x in self.path}
        per: dict[int, int] = {}
        for _, _, d, _ in seen:
            per[d] = per.get(d, 0) + 1
        total, last = 0, -1
        for d in sorted(per):
            if total + per[d] > MAX_DRAWN:
                break
            total, last = total + per[d], d
        leaves = [x for x, _, _, _ in seen if not x.children]
        place = {id(x): i for i, x in enumerate(leaves)}
        span: dict[int, tuple[int, int]] = {}
        for x, _, _, _ in reversed(seen):  # children before parents
            if x.children:
                kids = [span[id(c)] for c in x.children.values()]
                span[id(x)] = (min(a for a, _ in kids), max(b for _, b in kids))
            else:
                span[id(x)] = (place[id(x)], place[id(x)])
        shown = [(x, s, d, p) for x, s, d, p in seen if d <= last or id(x) in on_path]
        index = {id(x): i for i, (x, _, _, _) in enumerate(shown)}
        n = max(1, len(leaves))
        return {
            "shape": "nodes",
            "nodes": [
                [(span[id(x)][0] + span[id(x)][1] + 1) / (2 * n), d, s[-1:] or "·", "end" if x.end else "mid"]
                for x, s, d, _ in shown
            ],
            "parents": [index.get(id(p), -1) if p is not None else -1 for _, _, _, p in shown],
            "path": [index[id(x)] for x in self.path if id(x) in index],
            "hidden": len(seen) - len(shown),
        }


@register_policy("trees", "trie")
class TrieTree(Tree):
    """Fredkin's trie (1960): a node per prefix, an edge per character; a lookup reads one node
    a character, whatever the number of keys. A visit is a node read or made."""

    OPS = frozenset({"insert", "delete", "search"})
    PSEUDOCODE = (
        "search s: x ← root",
        "  for each character c of s: x ← x.child[c], or stop: not held",
        "  held iff x ends a key",
        "insert s: as search, making the missing children; mark the last node",
        "delete s: as search; unmark the last node",
        "  then remove nodes that end no key and have no child, going up",
    )

    def build(self, ev: dict) -> Trie:
        return Trie(len(str(max(0, ev.get("universe", 1) - 1))))

    def follow(self, t: Trie, s: str, make: bool, line: int) -> Iterator[Step]:
        """Read the root and one node a character of s (making missing ones when ``make``);
        returns the nodes read, the last None when s leaves the trie."""
        x = t.root
        t.visit(x)
        yield 0, "read the root", ()
        nodes = [x]
        for i, c in enumerate(s):
            nxt = x.children.get(c)
            if nxt is None:
                if not make:
                    yield line, "{}: no child {!r} after {!r}: not held", (s, c, s[:i])
                    return [*nodes, None]
                nxt = x.children[c] = TrieNode()
                t.nodes += 1
                t._height = None
                t.visit(nxt)
                yield line, "{}: make child {!r} after {!r}", (s, c, s[:i])
            else:
                t.visit(nxt)
                yield line, "{}: child {!r} after {!r}", (s, c, s[:i])
            x = nxt
            nodes.append(x)
        return nodes

    def search(self, t: Trie, k: Any) -> Iterator[Step]:
        s = t.text(k)
        nodes = yield from self.follow(t, s, False, 1)
        hit = nodes[-1] is not None and nodes[-1].end
        yield 2, "search {}: {} after {} nodes", (s, "found" if hit else "not held", len(t.path))
        return hit

    def insert(self, t: Trie, k: Any) -> Iterator[Step]:
        s = t.text(k)
        nodes = yield from self.follow(t, s, True, 3)
        x = nodes[-1]
        if x.end:
            yield 3, "insert {}: already held", (s,)
            return False
        x.end = True
        t.size += 1
        yield 3, "insert {}: its last node ends a key", (s,)
        return True

    def delete(self, t: Trie, k: Any) -> Iterator[Step]:
        s = t.text(k)
        nodes = yield from self.follow(t, s, False, 4)
        if nodes[-1] is None or not nodes[-1].end:
            yield 4, "delete {}: not held", (s,)
            return False
        nodes[-1].end = False
        t.size -= 1
        for i in range(len(s), 0, -1):  # nodes[i] is the node after s[:i]
            x = nodes[i]
            if x.end or x.children:
                break
            del nodes[i - 1].children[s[i - 1]]
            t.nodes -= 1
            t._height = None
            yield 5, "{}: node {!r} ends no key and has no child: removed", (s, s[:i])
        yield 4, "delete {}: done", (s,)
        return True
