"""A record of one run's messages, faults and node states, for drawing it (``sims.net.diagram``).

Off by default: a network's ``trace`` is None and costs one test per send and delivery. A panel
that turns it on (``record()`` of a consensus, replication or election panel) before the run
gets, in time order:

- ``messages``: one ``[sent, src, dst, type, term, delivered, fate]`` per copy put on the wire
  (``delivered`` the arrival time or None; ``fate`` "delivered", "loss" (dropped when sent),
  "partition" or "crash" (dropped on arrival), or "in flight" when the run ended first);
- ``faults``: ``[t, fault dict]`` as the network applied it (node references resolved);
- ``states``: ``[t, node, up, role, term]`` whenever one of the three changed (``term``: the
  consensus term, replication's epoch, None where a protocol has none; ``term_word`` names it);
- ``ops``: per client operation: consensus ``[id, arrived, committed or None]``; replication
  ``[id, kind, key, node, start, end or None, value, stale, gave up at or None]``
  (``sims.replication.record``);
- ``lost``: replication, ``[t, write id, lost]`` whenever an acknowledged write became held by
  no node (True) or by one again (False);
- ``leaders``: election, ``[t, leaders]`` whenever the set of nodes acting as leader changed.

Recording draws no random numbers and changes no state the run reads, so metrics are the same.
"""

from __future__ import annotations

from typing import Any

from sims.core.panel import Checkpointed


class Trace(Checkpointed):
    def __init__(self) -> None:
        self.messages: list[list] = []
        self.faults: list[list] = []
        self.states: list[list] = []
        self.ops: dict[int, list] = {}
        self.lost: list[list] = []
        self.leaders: list[list] = []
        self.term_word = "term"
        self._last: dict[int, tuple] = {}

    def sent(self, t: float, src: int, dst: int, msg: Any, fate: str = "in flight") -> int:
        kind = msg[0] if isinstance(msg, tuple) and msg else type(msg).__name__
        term = msg[1] if isinstance(msg, tuple) and len(msg) > 1 and isinstance(msg[1], int) else None
        self.messages.append([t, src, dst, str(kind), term, None, fate])
        return len(self.messages) - 1

    def adopt(self, clock) -> None:
        """Give each message already on the wire when recording starts (a protocol that sends
        from ``on_start``) its record, as if it had been recorded when sent."""
        heap = clock.heap
        flying = [k for k, e in enumerate(heap) if e[2][0] == 0 and len(e[2]) == 5]  # sims.net.network._MSG
        for k in sorted(flying, key=lambda k: (heap[k][2][3], heap[k][1])):
            t, seq, item = heap[k]
            heap[k] = (t, seq, (*item, self.sent(item[3], item[1], item[2], item[4])))  # same (t, seq): same order

    def arrived(self, index: int, t: float, fate: str) -> None:
        record = self.messages[index]
        record[5] = t if fate == "delivered" else None
        record[6] = fate
        if fate != "delivered":
            record.append(t)  # when it was dropped

    def fault(self, t: float, fault: dict) -> None:
        self.faults.append([t, dict(fault)])

    def states_of(self, nodes: list, t: float, read=None) -> None:
        """Note each node whose (up, role, term) changed; ``read(node)`` gives the three where
        the node's own ``up``, ``role`` and ``term`` attributes do not."""
        last = self._last
        for node in nodes:
            now = (node.up, node.role, node.term) if read is None else read(node)
            if last.get(node.id) != now:
                last[node.id] = now
                self.states.append([t, node.id, *now])
