"""What every tree is: a stepping algorithm (``sims.steps``) over its own mechanism, fed one
stream of operations.

An operation is a list: ``["insert", k]``, ``["delete", k]``, ``["search", k]``, ``["range", a, b]``
(keys in a … b), ``["pop"]`` (take the smallest key out), ``["add", i, d]`` (a[i] += d) and
``["prefix", i]`` (a[0] + … + a[i]). A structure takes the operations in its ``OPS`` and skips the
others without a step. Each operation it takes is a run of steps, one per node visited (a page
read, for the B-trees) and one per structural change (a rotation, a split, a merge), and ends with
one step that says its outcome.

``Structure`` is the mechanism's base: the counters the metrics read and the operation in hand
(the nodes it visited, which the view highlights). Each structure's mechanism owns its nodes and
its invariants (``check_invariants``), which hold between operations (halfway through a
rebalancing they need not); its policy class, a ``Tree``, holds the algorithms.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from sims.core.portmath import log
from sims.steps import Step, StepAlgorithm

__all__ = ["Op", "Step", "Structure", "Tree", "log2", "op_text"]

Op = list  # ["insert", 42], ["range", 10, 20], ["pop"]
LN2 = log(2.0)
POINTER = 8  # bytes of a child, parent or next pointer (a page number for the B-trees)
WORD = 8  # bytes of an integer key, a count or a sum


def log2(x: float) -> float:
    """log2 with the portable log (sims.core.portmath): the same bits in CPython and Pyodide."""
    return log(x) / LN2


def op_text(op: Op) -> str:
    """``insert 42``, ``range 10 20``, ``pop``."""
    return " ".join(str(x) for x in op)


def key_bytes(k: Any) -> int:
    """What a key costs to hold: a word for an integer, its UTF-8 length for a string."""
    return len(k.encode()) if isinstance(k, str) else WORD


class Structure:
    """The counters every structure keeps and the operation in hand. ``visit(node)`` is one node
    visited (one page read for a B-tree: ``PAGED``); ``begin``/``end`` bracket each operation."""

    PAGED: ClassVar[bool] = False  # a visit reads a page (B-tree, B+ tree)

    def __init__(self) -> None:
        self.size = 0  # keys held (the heap: items; Fenwick and segment tree: non-zero slots)
        self.ops = 0  # operations taken
        self.visits = 0
        self.visits_max = 0  # the most nodes one operation visited
        self.rotations = 0  # a double rotation is two
        self.recolourings = 0  # nodes whose colour changed (red-black)
        self.splits = 0  # pages split (B-trees)
        self.merges = 0  # pages merged into a sibling (B-trees)
        self.borrows = 0  # keys moved through the parent from a sibling (B-trees)
        self.pages_read = 0
        self.ranges = 0  # range queries taken
        self.range_visits = 0  # nodes (pages) they visited
        self.found = 0  # searches that found their key
        self.op: Op | None = None  # the operation in hand
        self.path: list = []  # the nodes it visited, in order
        self.answer: Any = None  # the last operation's answer
        self.answers: list | None = None  # every answer, when recorded (``contention trace``)
        self.busy = False  # an operation is under way: the invariants may not hold yet
        self._op_visits = 0

    # -- one operation ------------------------------------------------------------------------------
    def begin(self, op: Op) -> None:
        self.op, self.path, self._op_visits, self.busy = op, [], 0, True

    def visit(self, node: Any) -> None:
        self.visits += 1
        self._op_visits += 1
        self.path.append(node)
        if self.PAGED:
            self.pages_read += 1

    def end(self, answer: Any) -> None:
        self.busy = False
        self.ops += 1
        self.visits_max = max(self.visits_max, self._op_visits)
        if self.op[0] == "range":
            self.ranges += 1
            self.range_visits += self._op_visits
        elif self.op[0] == "search" and answer:
            self.found += 1
        self.answer = answer
        if self.answers is not None:
            self.answers.append(answer)

    # -- what a structure reports -------------------------------------------------------------------
    def height(self) -> int:
        """Nodes (pages, levels) on the longest path from the root down: 0 when empty."""
        raise NotImplementedError

    def height_bound(self) -> float:
        """The most ``height`` may be for this many keys, by the structure's proof (0 when empty)."""
        raise NotImplementedError

    def node_count(self) -> int:
        raise NotImplementedError

    def bytes_held(self) -> int:
        raise NotImplementedError

    def check_invariants(self) -> None:
        assert self.visits_max <= self.visits, "one operation visited more than all of them"
        assert self.ranges <= self.ops and self.found <= self.ops, "more ranges or hits than operations"

    def layout(self) -> dict[str, Any]:
        """What the view draws: ``tree.js`` reads ``nodes``, ``parents``, ``path`` (see panel.py)."""
        raise NotImplementedError


class Tree(StepAlgorithm):
    """A policy: the algorithms of one structure over its mechanism (``build``). ``run`` takes the
    operations in order; each operation ``name`` it lists in ``OPS`` is its generator method
    ``name(d, *args)``, which yields steps and returns the answer (found, a count, a sum, a key)."""

    OPS: ClassVar[frozenset[str]] = frozenset()
    KEYS: ClassVar[str] = "any"  # "any": integers or strings; "int": integers in 0 … universe − 1

    def build(self, ev: dict) -> Structure:
        """A fresh, empty mechanism for the input event (its ``universe``, its kind of keys)."""
        raise NotImplementedError

    def takes(self, op: Op, ev: dict) -> bool:
        """Whether this structure takes ``op`` of this stream."""
        if op[0] not in self.OPS:
            return False
        return self.KEYS == "any" or ev.get("keys", "int") == "int"

    def run(self, d: Structure, ops: list[Op], ev: dict | None = None) -> Iterator[Step]:
        ev = ev or {}
        for op in ops:
            if not self.takes(op, ev):
                continue
            d.begin(op)
            answer = yield from getattr(self, op[0])(d, *op[1:])
            d.end(answer)
