"""Free-block queues: which free block a ``BlockPool`` hands out (evicts) next.

``LRUFree`` (vLLM's order: unhashed blocks first, then the least recently freed cached one) and
``CostAwareFree`` (GreedyDual: long, expensive prefixes outlive cheap ones). Both keep the same
interface: ``fill``, ``push``, ``pop``, ``take``, ``remove`` (a cache hit takes a free block out),
``__len__`` and ``order`` (the whole queue, front first, for invariants and tests). Checkpoints
copy them field by field (``Checkpointed``).
"""

from __future__ import annotations

import heapq

from sims.core.panel import Checkpointed


class LRUFree(Checkpointed):
    """Free blocks, least recently freed at the front (evicted first); blocks that hold no cached
    hash go to the very front, since reusing them loses nothing.

    So the queue is two parts: a stack of unhashed blocks (the most recently freed on top, taken
    first), then a FIFO of hashed ones (the least recently freed first). A block keeps its
    hashedness while free, and only hashed blocks are taken out by a cache hit: such a removal
    leaves a stale entry in the FIFO, always before any later entry of the same block, so the
    first entry met of a block with stale entries is skipped. The FIFO is a list read from
    ``_head`` on (taking n blocks is one slice), compacted when its dead front outgrows the rest."""

    name = "lru"

    def __init__(self) -> None:
        self._stack: list[int] = []  # unhashed, the front of the queue at the end
        self._fifo: list[int] = []  # hashed, the front of the queue at _fifo[_head]
        self._head = 0
        self._gone: dict[int, int] = {}  # block -> stale FIFO entries still ahead of its live one
        self._stale = 0

    def fill(self, n: int) -> None:
        """Blocks 0..n-1, none hashed: as if pushed in that order (each to the front)."""
        self._stack = list(range(n))

    def push(self, block: int, hashed: bool, cost: float) -> None:
        if hashed:
            self.push_freed([block], [])
        else:
            self._stack.append(block)

    def push_freed(self, hashed: list[int], unhashed: list[int]) -> None:
        """Push ``hashed`` then ``unhashed`` blocks, each list in push order (``push`` in bulk)."""
        fifo = self._fifo
        h = self._head
        if h > 1024 and h > len(fifo) - h:  # the dead front is the larger part: drop it
            del fifo[:h]
            self._head = 0
        fifo += hashed
        self._stack += unhashed

    def pop(self) -> int:
        if self._stack:
            return self._stack.pop()
        fifo = self._fifo
        gone = self._gone
        while True:
            b = fifo[self._head]
            self._head += 1
            if gone and b in gone:
                self._stale -= 1
                if gone[b] == 1:
                    del gone[b]
                else:
                    gone[b] -= 1
                continue
            return b

    def take(self, n: int) -> list[int]:
        """The first ``n`` blocks of the queue, taken out (``pop`` n times)."""
        return self.take_split(n)[0]

    def take_split(self, n: int) -> tuple[list[int], int]:
        """``take(n)``, and how many of the blocks came from the unhashed stack (they come first:
        every block after them holds a hash or a lazy mark)."""
        stack = self._stack
        k = n if n < len(stack) else len(stack)
        out = stack[len(stack) - k :]
        out.reverse()
        del stack[len(stack) - k :]
        if k < n:
            if self._gone:
                pop = self.pop
                out += [pop() for _ in range(n - k)]
            else:
                h = self._head
                self._head = h + n - k
                out += self._fifo[h : h + n - k]
        return out, k

    def remove(self, block: int) -> None:
        """Take a free block out (a cache hit: it is hashed, so it sits in the FIFO)."""
        self._gone[block] = self._gone.get(block, 0) + 1
        self._stale += 1

    def __len__(self) -> int:
        return len(self._stack) + len(self._fifo) - self._head - self._stale

    def order(self) -> list[int]:
        out = self._stack[::-1]
        gone = dict(self._gone)
        for b in self._fifo[self._head :]:
            if gone.get(b):
                gone[b] -= 1
                continue
            out.append(b)
        return out


class CostAwareFree(Checkpointed):
    """GreedyDual over free blocks: a block freed with recompute cost c gets credit L + c; the block
    with the least credit is evicted and L rises to it. Long, expensive prefixes outlive cheap ones;
    within one freed chain the tail goes first (it is pushed first). Uncached blocks go first."""

    name = "cost_aware"

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int]] = []  # (credit, push order, block)
        self._live: dict[int, int] = {}  # block -> its valid push order
        self._inflation = 0.0
        self._n = 0

    def fill(self, n: int) -> None:
        for b in range(n):
            self.push(b, False, 0.0)

    def push(self, block: int, hashed: bool, cost: float) -> None:
        self._n += 1
        credit = self._inflation + cost if hashed else float("-inf")
        self._live[block] = self._n
        heapq.heappush(self._heap, (credit, self._n, block))

    def pop(self) -> int:
        while True:
            credit, n, block = heapq.heappop(self._heap)
            if self._live.get(block) == n:
                del self._live[block]
                if credit > self._inflation:
                    self._inflation = credit
                return block

    def take(self, n: int) -> list[int]:
        pop = self.pop
        return [pop() for _ in range(n)]

    def remove(self, block: int) -> None:
        del self._live[block]
        if len(self._heap) > 4 * len(self._live) + 64:
            self._heap = [e for e in self._heap if self._live.get(e[2]) == e[1]]
            heapq.heapify(self._heap)

    def __len__(self) -> int:
        return len(self._live)

    def order(self) -> list[int]:
        return [b for _, n, b in sorted(self._heap) if self._live.get(b) == n]


EVICTORS = {"lru": LRUFree, "cost_aware": CostAwareFree}
