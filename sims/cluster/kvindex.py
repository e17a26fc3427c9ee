"""llm-d's view of the cluster's KV caches: an index from block hash to pods, fed by KV events.

Each replica publishes ``stored`` and ``removed`` events for its prefix-cache blocks; they reach
the router over an ``EventBus`` after ``delay`` seconds, so the index the router scores against
can be stale. Pods are bits of an int mask (pod i is bit i): updates for different pods commute,
so the bus only has to keep each pod's events in order.
"""

from __future__ import annotations

from collections import deque


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
