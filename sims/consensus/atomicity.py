"""Atomic commit's safety property, checked after every delivered message and fired timer: no
participant commits a transaction that another participant aborts (Gray 1978; Skeen 1981 calls it
"all sites reach the same decision").

Each participant appends ``(txn, "commit" | "abort")`` to its ``decided`` list when it decides;
the checker drains the lists, keeps the first outcome of every transaction and counts a
transaction once, at the first participant that contradicts it. The coordinator's own decision is
not a participant's: a coordinator that logged commit while every participant aborted (they never
heard it) has lost nothing.
"""

from __future__ import annotations

from sims.core.panel import Checkpointed


class AtomicityChecker(Checkpointed):
    def __init__(self) -> None:
        self.outcome: dict[int, str] = {}  # txn -> the first outcome a participant reached
        self.violations: dict[str, float] = {}  # "atomicity:txn" -> the time it was first seen
        self.committed = 0  # transactions whose first outcome was commit
        self.aborted = 0  # ... abort

    def check(self, nodes: list, t: float) -> list[int]:
        """Drain every participant's decisions; returns the transactions decided for the first time."""
        new: list[int] = []
        for node in nodes:
            decided = getattr(node, "decided", None)
            if not decided:
                continue
            for txn, outcome in decided:
                first = self.outcome.get(txn)
                if first is None:
                    self.outcome[txn] = outcome
                    new.append(txn)
                    if outcome == "commit":
                        self.committed += 1
                    else:
                        self.aborted += 1
                elif first != outcome:
                    self.violations.setdefault(f"atomicity:{txn}", t)
            node.decided = []
        return new
