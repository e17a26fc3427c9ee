"""Recording a replication panel for its space-time diagram (``sims.net.diagram``).

``record(panel)`` (what ``ReplicationPanel.record()`` calls, before any event is fed) turns on
the network's ``sims.net.trace.Trace`` and adds what replication draws: each node's role and
epoch whenever they change (after every delivery, fired timer, monitor tick and stream event),
each client operation from start to answer with the write it returned and the oracle's verdict,
and when an acknowledged write became held by no node. The books gain these hooks by becoming a
``RecordingBooks`` (same object, same state: the nodes keep their reference), so a run that is
not recorded runs the plain ``Books`` code and pays nothing. Recording draws no random numbers
and changes nothing the run reads: metrics are the same (``tests/test_net_diagram.py``).
"""

from __future__ import annotations

from sims.core.panel import Checkpointed
from sims.replication.books import Books


def _state(node) -> tuple:
    return node.up, node.role(), getattr(node, "epoch", None)


class States(Checkpointed):
    """Called with the time after each step of the run: notes every node whose state changed."""

    def __init__(self, trace, nodes: list) -> None:
        self.trace = trace
        self.nodes = nodes

    def __call__(self, t: float) -> None:
        self.trace.states_of(self.nodes, t, _state)


class RecordingBooks(Books):
    """``Books`` that also write each operation's course into ``trace.ops`` and each loss of an
    acknowledged write into ``trace.lost`` (``trace`` and ``clock`` are set by ``record``)."""

    def begin(self, ev: dict, partitioned: bool) -> None:
        super().begin(ev, partitioned)
        self.trace.ops[ev["id"]] = [ev["id"], ev["kind"], ev["key"], ev["node"], ev["t"], None, None, False, None]

    def reply(self, op: int, value: int | None, now: float) -> None:
        waiting, stale, lost = op in self.pending, self.stale, self.lost
        super().reply(op, value, now)
        if waiting and op not in self.pending:
            rec = self.trace.ops[op]
            rec[5], rec[6], rec[7] = now, value, self.stale > stale
            if self.lost > lost:  # acknowledged, and no node holds it (any more)
                self.trace.lost.append([now, op, True])

    def expire(self, now: float) -> None:
        gone = [op for op, e in self.pending.items() if now - e[2] >= self.timeout]
        super().expire(now)
        for op in gone:
            self.trace.ops[op][8] = now

    def hold(self, wid: int) -> None:
        lost = self.lost
        super().hold(wid)
        if self.lost < lost:
            self.trace.lost.append([self.clock.now, wid, False])

    def drop(self, wid: int) -> None:
        lost = self.lost
        super().drop(wid)
        if self.lost > lost:
            self.trace.lost.append([self.clock.now, wid, True])


def record(panel) -> None:
    from sims.net.trace import Trace

    net = panel.net
    trace = net.trace = Trace()
    trace.kind, trace.term_word = "replication", "epoch"
    trace.adopt(net.clock)
    books = panel.books
    books.__class__ = RecordingBooks  # the nodes share this object: they report to it unchanged
    books.trace, books.clock = trace, net.clock
    panel.observe = States(trace, net.nodes)
    panel.observe(panel.now)
