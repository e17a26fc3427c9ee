"""The routers' views of the cluster's KV caches: block hash -> pods.

``KVIndex`` is llm-d's precise index, fed by KV events. ``LRUIndex`` is the Gateway API Inference
Extension's approximate one, fed only by the router's own decisions. ``prompt_hashes`` names a
prompt's blocks for both (memoised: benchmark prompts repeat).

For ``KVIndex``, each replica publishes ``stored`` and ``removed`` events for its prefix-cache blocks; they reach
the router over an ``EventBus`` after ``delay`` seconds, so the index the router scores against
can be stale. Pods are bits of an int mask (pod i is bit i): updates for different pods commute,
so the bus only has to keep each pod's events in order.
"""

from __future__ import annotations

from collections import OrderedDict, deque

from sims.engine.blocks import block_hashes

_HASHES: dict[tuple, list[int]] = {}  # (block size, prompt segments) -> block hashes: a pure memo
_HASHES_MAX = 50_000


def prompt_hashes(segments: list, block_size: int) -> list[int]:
    """``block_hashes`` of a prompt, memoised: benchmark prompts repeat, and hashing is the
    costliest part of a prefix-aware routing decision."""
    key = (block_size, *(tuple(s) for s in segments))
    hashes = _HASHES.get(key)
    if hashes is None:
        if len(_HASHES) >= _HASHES_MAX:
            _HASHES.clear()
        hashes = _HASHES[key] = block_hashes(segments, block_size)
    return hashes


class KVIndex:
    """Block hash -> mask of the pods holding that block. Invariant: no zero masks are stored,
    and ``blocks[i]`` counts the hashes whose mask has bit i."""

    __slots__ = ("pods", "n", "blocks")

    def __init__(self, n: int) -> None:
        self.n = n
        self.pods: dict[int, int] = {}  # block hash -> pod mask (never 0)
        self.blocks = [0] * n  # indexed blocks per pod

    def stored(self, pod: int, hashes: list[int]) -> None:
        bit = 1 << pod
        pods = self.pods
        added = 0
        for h in hashes:
            m = pods.get(h, 0)
            if not m & bit:
                pods[h] = m | bit
                added += 1
        self.blocks[pod] += added

    def removed(self, pod: int, hashes: list[int]) -> None:
        bit = 1 << pod
        pods = self.pods
        gone = 0
        for h in hashes:
            m = pods.get(h, 0)
            if m & bit:
                m &= ~bit
                if m:
                    pods[h] = m
                else:
                    del pods[h]
                gone += 1
        self.blocks[pod] -= gone

    def prefix_hits(self, hashes: list[int]) -> list[int]:
        """For each pod, how many of ``hashes`` it holds as one consecutive run from the first
        (llm-d's longest-prefix scorer: a hole ends the run)."""
        n = self.n
        hits = [0] * n
        alive = (1 << n) - 1
        pods = self.pods
        depth = 0
        for h in hashes:
            now = alive & pods.get(h, 0)
            if now != alive:
                dropped = alive & ~now
                for i in range(n):
                    if dropped >> i & 1:
                        hits[i] = depth
                alive = now
                if not alive:
                    return hits
            depth += 1
        for i in range(n):
            if alive >> i & 1:
                hits[i] = depth
        return hits

    def check_invariants(self) -> None:
        counts = [0] * self.n
        for m in self.pods.values():
            assert m, "zero mask stored"
            assert m >> self.n == 0, f"mask {m:b} names a pod beyond {self.n}"
            for i in range(self.n):
                counts[i] += m >> i & 1
        assert counts == self.blocks, (counts, self.blocks)


class LRUIndex:
    """GIE's approximate prefix index: per pod an LRU of the block hashes the router sent there,
    ``capacity`` entries each (the least recently added goes first), and hash -> pod mask for
    lookups. Invariant: bit i of ``pods[h]`` is set iff ``h`` is in pod i's LRU."""

    __slots__ = ("n", "capacity", "pods", "lrus", "evicted")

    def __init__(self, n: int, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"lru_capacity_per_server must be >= 1, got {capacity!r}")
        self.n = n
        self.capacity = capacity
        self.pods: dict[int, int] = {}  # block hash -> pod mask (never 0)
        self.lrus = [OrderedDict() for _ in range(n)]  # per pod: hash -> None, oldest first
        self.evicted = 0  # entries dropped for capacity

    def add(self, pod: int, hashes: list[int]) -> None:
        """Record that ``hashes`` were routed to ``pod``: each becomes its most recent entry."""
        bit = 1 << pod
        pods = self.pods
        lru = self.lrus[pod]
        for h in hashes:
            if h in lru:
                lru.move_to_end(h)
                continue
            lru[h] = None
            pods[h] = pods.get(h, 0) | bit
            if len(lru) > self.capacity:
                old = lru.popitem(last=False)[0]
                m = pods[old] & ~bit
                if m:
                    pods[old] = m
                else:
                    del pods[old]
                self.evicted += 1

    def match_counts(self, hashes: list[int]) -> list[int]:
        """GIE's longest-prefix match: walk the blocks until one that no pod has; each pod
        scores the number of those blocks it has (a hole of its own does not stop it)."""
        counts = [0] * self.n
        pods = self.pods
        run_mask = 0
        run = 0
        for h in hashes:
            m = pods.get(h, 0)
            if not m:
                break
            if m != run_mask:  # masks come in runs (a prompt's blocks are added together)
                self._credit(counts, run_mask, run)
                run_mask, run = m, 0
            run += 1
        self._credit(counts, run_mask, run)
        return counts

    def _credit(self, counts: list[int], mask: int, run: int) -> None:
        i = 0
        while mask:
            if mask & 1:
                counts[i] += run
            mask >>= 1
            i += 1

    def check_invariants(self) -> None:
        for i, lru in enumerate(self.lrus):
            assert len(lru) <= self.capacity, (i, len(lru), self.capacity)
            for h in lru:
                assert self.pods.get(h, 0) >> i & 1, f"pod {i}'s LRU holds {h} but the map does not"
        entries = 0
        for m in self.pods.values():
            assert m and m >> self.n == 0, f"bad mask {m:b}"
            entries += m.bit_count()
        assert entries == sum(len(lru) for lru in self.lrus), "map and LRUs disagree"


class EventBus:
    """KV events in flight: per pod, a FIFO of (arrival time, kind, hashes) in publish order.
    An event published at t reaches the index at t + delay."""

    __slots__ = ("delay", "queues", "published", "delivered")

    def __init__(self, n: int, delay: float) -> None:
        if delay < 0:
            raise ValueError(f"event delay must be >= 0 seconds, got {delay!r}")
        self.delay = delay
        self.queues: list[deque] = [deque() for _ in range(n)]
        self.published = 0
        self.delivered = 0

    def publish(self, pod: int, t: float, kind: str, hashes: list[int]) -> None:
        if kind != "stored" and kind != "removed":
            raise ValueError(f"KV event kind must be 'stored' or 'removed', got {kind!r}")
        self.queues[pod].append((t + self.delay, kind, list(hashes)))
        self.published += 1

    def deliver(self, until: float, index: KVIndex) -> None:
        """Apply every event that has arrived by ``until`` to ``index``, each pod in order."""
        for pod, q in enumerate(self.queues):
            while q and q[0][0] <= until:
                _, kind, hashes = q.popleft()
                if kind == "stored":
                    index.stored(pod, hashes)
                else:
                    index.removed(pod, hashes)
                self.delivered += 1

    def in_flight(self) -> int:
        return self.published - self.delivered


class BusTap:
    """The callable a replica's engine gets as its ``kv_listener``: publishes for one pod.
    A class, not a closure, so a deep-copied checkpoint taps its own copy of the bus."""

    __slots__ = ("bus", "pod")

    def __init__(self, bus: EventBus, pod: int) -> None:
        self.bus = bus
        self.pod = pod

    def __call__(self, t: float, kind: str, hashes: list[int]) -> None:
        self.bus.publish(self.pod, t, kind, hashes)
