"""The atomic commit protocols as consensus panels: ``two_phase_commit`` and
``three_phase_commit`` (``sims.consensus.commit``), fed the ``transactions`` workload
(``sims.consensus.transactions``) on the same simulated network and faults as Raft and Paxos.

The panel is the client: it hands each transaction to the coordinator (node 0), or holds it while
the coordinator is down, and checks atomicity after every delivered message and fired timer
(``sims.consensus.atomicity``). Node references in faults resolve as in ``ConsensusPanel``, with
``"leader"`` naming the coordinator. A plain ``op`` event (the consensus workload's client command)
is a transaction over every participant in which all vote yes, so ``contention search consensus``
drives these panels too.
"""

from __future__ import annotations

from typing import Any

from sims.consensus.atomicity import AtomicityChecker
from sims.consensus.commit import COORDINATOR, Coordinator, Participant
from sims.consensus.panel import _VIEW_MSGS, ConsensusPanel
from sims.core.panel import Panel
from sims.core.registry import Param, register_policy
from sims.net import Delay, Network

_VIEW_TXNS = 12  # transactions the view shows (the latest begun)

PARAMS = {
    "txn_timeout": Param(
        float,
        0.2,
        "atomic commit: seconds a node waits for the next message of a transaction before its timeout "
        "action (2PC: ask around; 3PC: abort if uncertain, commit if pre-committed)",
        above=0.0,
        max=60.0,
        work=-1,
    ),
    "txn_work": Param(
        float, 0.01, "atomic commit: seconds a participant works on a transaction before it votes", min=0.0, max=60.0
    ),
}


class CommitPanel(ConsensusPanel):
    """A coordinator and ``nodes - 1`` participants; a ``ConsensusPanel`` whose client submits
    transactions (it inherits the network driving and the fault handling)."""

    def __init__(self, name: str, params: dict, ctx, three: bool) -> None:
        Panel.__init__(self, name, params, ctx)
        n = params["nodes"]
        if n < 2:
            raise ValueError("nodes: atomic commit needs a coordinator and at least one participant (nodes >= 2)")
        self.n = n
        timeout, work = params["txn_timeout"], params["txn_work"]
        nodes = [Coordinator(0, n, timeout, three)] + [Participant(i, n, timeout, work, three) for i in range(1, n)]
        self.net = Network(
            nodes,
            ctx.rng("net"),
            Delay("uniform", lo=params["delay_lo"], hi=params["delay_hi"]),
            loss=params["loss"],
            duplicate=params["duplicate"],
            reorder=params["reorder"],
            node_rngs=[ctx.rng(f"node{i}") for i in range(n)],
        )
        self.checker = AtomicityChecker()
        self.marks: dict[str, int] = {}
        self.pending: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []  # waiting for the coordinator
        self.t = 0.0
        self.txns = 0
        self.net.start(0.0)

    def on_event(self, ev: dict) -> None:
        t = ev["t"]
        self.t = t
        kind = ev["kind"]
        if kind in ("txn", "op"):
            self.txns += 1
            if kind == "txn":
                parts = tuple(p for p in ev["parts"] if 0 < p < self.n)
                no = tuple(ev.get("no", ()))
            else:
                parts, no = tuple(range(1, self.n)), ()
            self.pending.append((ev["id"], parts or tuple(range(1, self.n)), no))
        elif kind == "fault":
            self._fault(ev, t)
        self._after(t)

    def leader(self) -> int | None:
        """The coordinator while it is up (what ``"leader"`` names in a fault)."""
        return COORDINATOR if self.net.nodes[COORDINATOR].up else None

    def _after(self, t: float) -> None:
        nodes = self.net.nodes
        if self.pending and nodes[COORDINATOR].up:
            coordinator = nodes[COORDINATOR]
            for txn, parts, no in self.pending:
                coordinator.begin(txn, parts, no)
            self.pending = []
        self.checker.check(nodes, t)

    # snapshots ------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        now = self.t
        held = 0.0
        longest = 0.0
        blocked: set[int] = set()
        for node in self.net.nodes[1:]:
            held += node.held_s
            longest = max(longest, node.held_max)
            for start in node.since.values():
                held += now - start
                longest = max(longest, now - start)
            blocked.update(node.blocked)
        checker = self.checker
        decided = checker.committed + checker.aborted
        return {
            "txns": self.txns,
            "committed": checker.committed,
            "aborted": checker.aborted,
            "pending": len(self.pending),
            "blocked": len(blocked),
            "blocked_s": held,
            "blocked_max_s": longest,
            "messages": self.net.sent,
            "messages_per_txn": self.net.sent / decided if decided else 0.0,
            "atomicity_violations": len(checker.violations),
            "safety_violations": len(checker.violations),
        }

    def view(self) -> dict[str, Any]:
        now = self.t
        net = self.net
        coordinator = net.nodes[COORDINATOR]
        shown = list(coordinator.parts)[-_VIEW_TXNS:]
        out = []
        for node in net.nodes:
            states = []
            for txn in shown:
                member = node.id == COORDINATOR or node.id in coordinator.parts[txn]
                states.append(node.state_of(txn) if member else None)
            out.append({"id": node.id, "up": node.up, "role": node.role, "group": net.group[node.id], "states": states})
        msgs = [
            {"src": s, "dst": d, "sent": sent, "arrives": arr, "type": m[0], "txn": m[1]}
            for s, d, sent, arr, m in net.in_flight(now)[:_VIEW_MSGS]
        ]
        checker = self.checker
        return {
            "kind": "consensus",
            "protocol": "commit",
            "t": now,
            "nodes": out,
            "txns": shown,
            "messages": msgs,
            "partitioned": net.partitioned,
            "committed": checker.committed,
            "aborted": checker.aborted,
            "pending": len(self.pending),
            "violations": sorted(checker.violations),
        }

    def check_invariants(self) -> None:
        for node in self.net.nodes:
            node.check_invariants()


@register_policy("consensus", "two_phase_commit")
class TwoPhaseCommit:
    """Two-phase commit (Gray 1978): prepare, vote, decide; a prepared participant waits for the
    decision, asking the coordinator and the others, however long the coordinator is down."""

    PARAMS = PARAMS
    three = False

    def make_panel(self, name: str, params: dict, ctx) -> CommitPanel:
        return CommitPanel(name, params, ctx, self.three)


@register_policy("consensus", "three_phase_commit")
class ThreePhaseCommit(TwoPhaseCommit):
    """Three-phase commit (Skeen 1981): prepare, vote, pre-commit, commit; on a timeout an uncertain
    participant aborts and a pre-committed one commits, so nobody blocks, and a partition can split
    the outcome."""

    three = True
