"""A record of one run's messages, faults and node states, for drawing it (``sims.consensus.diagram``).

Off by default: a network's ``trace`` is None and costs one test per send and delivery. A panel
that turns it on (``ConsensusPanel.record()``) before the run gets, in time order:

- ``messages``: one ``[sent, src, dst, type, term, delivered, fate]`` per copy put on the wire
  (``delivered`` the arrival time or None; ``fate`` "delivered", "loss" (dropped when sent),
  "partition" or "crash" (dropped on arrival), or "in flight" when the run ended first);
- ``faults``: ``[t, fault dict]`` as the network applied it (node references resolved);
- ``states``: ``[t, node, up, role, term]`` whenever one of the three changed;
- ``ops``: ``[id, arrived, committed or None]`` per client command.

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
        self._last: dict[int, tuple] = {}

    def sent(self, t: float, src: int, dst: int, msg: Any, fate: str = "in flight") -> int:
        kind = msg[0] if isinstance(msg, tuple) and msg else type(msg).__name__
        term = msg[1] if isinstance(msg, tuple) and len(msg) > 1 and isinstance(msg[1], int) else None
        self.messages.append([t, src, dst, str(kind), term, None, fate])
        return len(self.messages) - 1

    def arrived(self, index: int, t: float, fate: str) -> None:
        record = self.messages[index]
        record[5] = t if fate == "delivered" else None
        record[6] = fate
        if fate != "delivered":
            record.append(t)  # when it was dropped

    def fault(self, t: float, fault: dict) -> None:
        self.faults.append([t, dict(fault)])

    def states_of(self, nodes: list, t: float) -> None:
        last = self._last
        for node in nodes:
            now = (node.up, node.role, node.term)
            if last.get(node.id) != now:
                last[node.id] = now
                self.states.append([t, node.id, *now])
