"""An approximate radix tree of prompts, one per worker, as SGLang's cache-aware router keeps.

The router never sees a worker's real cache: it inserts every prompt it routes to a worker into
that worker's tree and evicts least-recently-inserted leaves when the tree outgrows ``max_tokens``.
Prompts are lists of segments ``[content_id, tokens]`` (see sims/workloads/llm.py); an edge is a
span ``[lo, hi)`` of one content's tokens, so two prompts share exactly their common segments.
Invariant: ``size`` equals the sum of edge lengths, and children are keyed by the content id of
their first token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush


@dataclass(slots=True, eq=False)
class _Node:
    content: str  # content id of this edge's tokens ("" for the root)
    lo: int  # first token offset within the content
    hi: int  # one past the last token offset
    parent: _Node | None
    children: dict[str, _Node] = field(default_factory=dict)  # keyed by the child's content
    tick: int = 0  # last insert through this edge, on the tree's logical clock


class RadixTree:
    """Token-counting radix tree with LRU leaf eviction: the leaf least recently inserted
    through goes first (ties in depth-first order); a parent left childless then competes as a
    leaf with its own recency."""

    __slots__ = ("root", "size", "max_tokens", "tick", "evicted")

    def __init__(self, max_tokens: int = 1 << 24) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens!r}")
        self.root = _Node("", 0, 0, None)
        self.size = 0  # tokens held, summed over edges
        self.max_tokens = max_tokens
        self.tick = 0  # logical clock: one tick per insert
        self.evicted = 0  # tokens evicted so far

    def match(self, segments: list) -> int:
        """Tokens of the longest prefix of ``segments`` in the tree (a peek: recency is only
        refreshed by ``insert``, i.e. by the worker the prompt is routed to)."""
        node = self.root
        matched = 0
        for content, tokens in segments:
            off = 0
            while off < tokens:
                child = node.children.get(content)
                if child is None or child.lo != off:
                    return matched
                end = child.hi if child.hi < tokens else tokens
                matched += end - off
                if end < child.hi:
                    return matched  # the prompt ends inside this edge
                off = end
                node = child
        return matched

    def insert(self, segments: list) -> None:
        """Add a prompt; evict LRU leaves if the tree then holds more than ``max_tokens``."""
        self.tick += 1
        tick = self.tick
        node = self.root
        for content, tokens in segments:
            off = 0
            while off < tokens:
                child = node.children.get(content)
                if child is None:
                    child = _Node(content, off, tokens, node, tick=tick)
                    node.children[content] = child
                    self.size += tokens - off
                elif child.lo != off:  # the same content at another offset: stop sharing here
                    self._trim()
                    return
                else:
                    if child.hi > tokens:  # the segment ends inside this edge: split it
                        child = self._split(child, tokens)  # the lower part keeps its recency
                    child.tick = tick
                node = child
                off = child.hi
        self._trim()

    def _split(self, child: _Node, at: int) -> _Node:
        """Cut ``child`` at token offset ``at``; returns the new upper part, ending at ``at``."""
        upper = _Node(child.content, child.lo, at, child.parent, tick=child.tick)
        child.parent.children[child.content] = upper
        child.lo = at
        child.parent = upper
        upper.children[child.content] = child
        return upper

    def _trim(self) -> None:
        if self.size > self.max_tokens:
            self.evict(self.size - self.max_tokens)

    def evict(self, tokens: int) -> int:
        """Remove least-recently-used leaves until ``tokens`` are freed; returns tokens freed."""
        heap = []
        seq = 0
        stack = [self.root]
        while stack:
            n = stack.pop()
            if not n.children and n is not self.root:
                heap.append((n.tick, seq, n))
                seq += 1
            stack.extend(n.children.values())
        heapify(heap)
        freed = 0
        while freed < tokens and heap:
            leaf = heappop(heap)[2]
            parent = leaf.parent
            del parent.children[leaf.content]
            leaf.parent = None
            freed += leaf.hi - leaf.lo
            if parent is not self.root and not parent.children:
                heappush(heap, (parent.tick, seq, parent))  # a new leaf, ranked by its own use
                seq += 1
        self.size -= freed
        self.evicted += freed
        return freed

    def __len__(self) -> int:
        return self.size

    def check_invariants(self) -> None:
        total = 0
        stack = [self.root]
        while stack:
            n = stack.pop()
            for key, c in n.children.items():
                assert key == c.content and c.parent is n, (key, c.content)
                assert 0 <= c.lo < c.hi, (c.lo, c.hi)
                total += c.hi - c.lo
                stack.append(c)
        assert total == self.size, (total, self.size)
        assert self.size <= self.max_tokens, (self.size, self.max_tokens)
