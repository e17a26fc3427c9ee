"""The books: every client operation from issue to answer, and who holds every write.

Nodes report to one ``Books`` object (checkpoints copy it with the nodes, so it stays shared):
``reply(op, ok, value, now)`` when a client gets its answer, ``hold``/``drop`` when a node's
durable history gains or loses a write, ``applied`` for replication lag. Two counts are exact:

- ``lost``: acknowledged writes that no node holds any more (``holders[w] == 0``): a failover
  to a follower that never got them, a rejoin that truncated them, a crash that lost the disk;
- stale reads, judged by ``RegisterOracle`` when each read is answered.
"""

from __future__ import annotations

from bisect import insort

from sims.core.metrics import censored_percentile
from sims.core.panel import Checkpointed
from sims.replication.oracle import RegisterOracle


class Books(Checkpointed):
    """``pending`` maps an operation id to ``(kind, key, start, during_partition)`` until it is
    answered or its client gives up (``timeout`` seconds after it began); an answer after that is
    ignored, as the client has gone."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.pending: dict[int, tuple[str, int, float, bool]] = {}
        self.oracle = RegisterOracle()
        self.holders: dict[int, int] = {}  # write id -> nodes whose durable history holds it
        self.acked: set[int] = set()  # write ids acknowledged to their client
        self.lost = 0  # acknowledged writes held by no node
        self.first: dict[int, float] = {}  # write id -> when a node first applied it
        self.lag: list[float] = []  # sorted: seconds from a write's first application to each later one
        self.lat = {"write": [], "read": []}  # sorted latencies of answered operations
        self.failed = {"write": 0, "read": 0}  # given up: the client waited ``timeout`` in vain
        self.issued = {"write": 0, "read": 0}
        self.answered = 0
        self.stale = 0
        self.part_issued_done = 0  # operations issued during a partition and decided (answered or given up)
        self.part_answered = 0

    # operations ----------------------------------------------------------------------------
    def begin(self, ev: dict, partitioned: bool) -> None:
        self.issued[ev["kind"]] += 1
        self.pending[ev["id"]] = (ev["kind"], ev["key"], ev["t"], partitioned)

    def reply(self, op: int, value: int | None, now: float) -> None:
        """Operation ``op`` is answered: a write acknowledged (value = its id) or a read that
        returned write ``value`` (None: the initial value)."""
        entry = self.pending.get(op)
        if entry is None:
            return  # answered already (a duplicate) or given up
        kind, key, start, part = entry
        if now - start >= self.timeout:
            return  # the client's timeout fires first; expire() books it
        del self.pending[op]
        insort(self.lat[kind], now - start)
        self.answered += 1
        if part:
            self.part_issued_done += 1
            self.part_answered += 1
        if kind == "write":
            self.oracle.write_done(key, op, start, now)
            self.acked.add(op)
            if not self.holders.get(op, 0):
                self.lost += 1
        elif self.oracle.is_stale(key, value, start):
            self.stale += 1

    def expire(self, now: float) -> None:
        """Book the operations whose clients gave up by ``now``."""
        gone = [op for op, e in self.pending.items() if now - e[2] >= self.timeout]
        for op in gone:
            kind, _, _, part = self.pending.pop(op)
            self.failed[kind] += 1
            if part:
                self.part_issued_done += 1

    # durable histories ---------------------------------------------------------------------
    def hold(self, wid: int) -> None:
        c = self.holders.get(wid, 0)
        self.holders[wid] = c + 1
        if c == 0 and wid in self.acked:
            self.lost -= 1

    def drop(self, wid: int) -> None:
        c = self.holders[wid] - 1
        self.holders[wid] = c
        if c == 0 and wid in self.acked:
            self.lost += 1

    def applied(self, wid: int, now: float) -> None:
        """A node applied write ``wid`` as it replicated (not a snapshot it installed)."""
        first = self.first.get(wid)
        if first is None:
            self.first[wid] = now
        else:
            insort(self.lag, now - first)

    # figures -------------------------------------------------------------------------------
    def latency(self, kind: str, q: float, now: float) -> tuple[float, int]:
        """The q-quantile over every operation of ``kind`` and its censored flag
        (``sims.core.metrics.censored_percentile``): answered ones count by their latency, the
        pending by their age and the given-up by ``timeout``, both lower bounds. Answered
        latencies and ages are below the timeout, so the given-up sort last."""
        ages = sorted(min(now - e[2], self.timeout) for e in self.pending.values() if e[0] == kind)
        return censored_percentile(self.lat[kind], ages + [self.timeout] * self.failed[kind], q)

    def decided(self, now: float) -> tuple[int, int, int, int]:
        """(answered, decided, answered in a partition, decided in a partition) at ``now``,
        counting pending operations whose client has given up by now."""
        late = [e for e in self.pending.values() if now - e[2] >= self.timeout]
        gone = len(late) + self.failed["write"] + self.failed["read"]
        late_part = sum(1 for e in late if e[3])
        return (
            self.answered,
            self.answered + gone,
            self.part_answered,
            self.part_issued_done + late_part,
        )
