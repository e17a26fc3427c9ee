"""One election protocol on a simulated network (``sims.net``), fed the stream's faults.

The panel resolves node references in faults (``"leader"``, marks) as the consensus panel does,
and after every delivered message, fired timer and fault it counts the client nodes that act as
leader (up, not paused, role ``leader``: a paused node keeps its role but cannot act until it
resumes): none is time without a leader, two or more is split brain. A crash
of a node acting as leader opens a failover window that the next leader closes
(``time_to_leader``). Messages are counted by kind: the policy names its upkeep kinds
(heartbeats, renewals, session pings), and every other message is the election's. A protocol
that needs a coordination service (the lease's lock server, ZooKeeper) gets one more node, id n,
that the stream's faults never name.
"""

from __future__ import annotations

from typing import Any

from sims.core.diverge import Decision
from sims.core.metrics import percentile
from sims.core.panel import Panel
from sims.net import Delay, Network
from sims.net.refs import resolve_fault

_HISTORY = 64  # leader-over-time segments the view keeps (the newest)
_VIEW_MSGS = 80  # messages in flight the view shows (the earliest to arrive)


def _state(node) -> tuple:
    """What a recorded run notes of a node (sims/net/trace.py): up, role, Raft's term or None."""
    return node.up, node.role, getattr(node, "term", None)


class CountingNetwork(Network):
    """A ``Network`` that counts the messages it is handed by kind (a tuple's first item)."""

    def send(self, src: int, dst: int, msg: Any, hold: float = 0.0) -> None:
        kind = msg[0]
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        super().send(src, dst, msg, hold)


class ElectionPanel(Panel):
    topic = "election"

    def __init__(self, name: str, params: dict, ctx, protocol) -> None:
        super().__init__(name, params, ctx)
        n = params["nodes"]
        self.n = n
        self.protocol = protocol
        nodes = protocol.make_nodes(n, params)
        delay = Delay("uniform", lo=params["delay_lo"], hi=max(params["delay_lo"], params["delay_hi"]))
        self.net = CountingNetwork(
            nodes, ctx.rng("net"), delay, node_rngs=[ctx.rng(f"node{i}") for i in range(len(nodes))]
        )
        self.net.kinds = {}
        self.marks: dict[str, int] = {}
        self.t = 0.0
        self.leaders: tuple[int, ...] = ()  # client nodes acting as leader now
        self.since = 0.0  # when ``leaders`` last changed
        self.no_leader_s = 0.0
        self.split_s = 0.0
        self.max_leaders = 0
        self.elections = 0  # times a node began to act as leader
        self.failed_at: float | None = None  # a leader crashed then, and no leader since
        self.failovers: list[float] = []
        self.history: list[list] = [[0.0, []]]  # [since, leaders] segments, newest last
        self.net.start(0.0)
        self._after(0.0)

    def record(self) -> None:
        """Keep a ``sims.net.trace.Trace`` of the run from now on (``self.net.trace``): messages,
        faults, each node's role (and Raft's term) and who acts as leader when, for
        ``sims.net.diagram``; call it before feeding events. Metrics do not change."""
        from sims.net.trace import Trace

        trace = self.net.trace = Trace()
        trace.kind = "election"
        trace.adopt(self.net.clock)
        trace.states_of(self.net.nodes, self.t, _state)
        trace.leaders.append([self.t, list(self.leaders)])

    # driving --------------------------------------------------------------------------------
    def advance(self, until: float) -> None:
        if until > self.t:
            self.net.advance(until, self._after)
            self.t = until

    def next_time(self) -> float | None:
        return self.net.next_time()

    def on_event(self, ev: dict) -> None:
        t = ev["t"]
        self.t = t
        if ev["kind"] == "fault":
            self._fault(ev, t)
            self._after(t)

    def _lead(self) -> int | None:
        return self.leaders[0] if self.leaders else None

    def _fault(self, ev: dict, t: float) -> None:
        fault = resolve_fault(ev, self._lead, self.marks, self.n)
        if fault is None:
            return
        if fault["fault"] == "crash" and fault.get("node") in self.leaders and self.failed_at is None:
            self.failed_at = t
        self.net.apply(fault, t)

    def _after(self, t: float) -> None:
        nodes = self.net.nodes
        trace = self.net.trace
        if trace is not None:
            trace.states_of(nodes, t, _state)
        now = tuple(i for i in range(self.n) if nodes[i].up and nodes[i].role == "leader" and not nodes[i].paused)
        if now == self.leaders:
            return
        if trace is not None:
            if trace.leaders and trace.leaders[-1][0] == t:
                trace.leaders[-1][1] = list(now)
            else:
                trace.leaders.append([t, list(now)])
        self._close(t)
        for i in now:
            if i not in self.leaders:
                self.elections += 1
        if now and self.failed_at is not None:
            self.failovers.append(t - self.failed_at)
            self.failed_at = None
        self.leaders = now
        self.max_leaders = max(self.max_leaders, len(now))
        if self.history[-1][0] == t:
            self.history[-1][1] = list(now)
        else:
            self.history.append([t, list(now)])
            del self.history[:-_HISTORY]

    def _close(self, t: float) -> None:
        """Account the segment since the last change up to ``t``."""
        span = t - self.since
        if not self.leaders:
            self.no_leader_s += span
        elif len(self.leaders) > 1:
            self.split_s += span
        self.since = t

    # snapshots ------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        span = self.t - self.since
        kinds = self.net.kinds
        upkeep = self.protocol.UPKEEP
        election = 0
        for kind in sorted(kinds):
            if kind not in upkeep:
                election += kinds[kind]
        notes = kinds.get("NOTIFY", 0)
        windows = sorted(self.failovers + ([self.t - self.failed_at] if self.failed_at is not None else []))
        changes = max(0, self.elections - 1)
        return {
            "elections": self.elections,
            "leader_changes": changes,
            "leaders": len(self.leaders),
            "messages": self.net.sent,
            "election_messages": election,
            "messages_per_election": election / self.elections if self.elections else 0.0,
            "no_leader_s": self.no_leader_s + (span if not self.leaders else 0.0),
            "split_brain_s": self.split_s + (span if len(self.leaders) > 1 else 0.0),
            "max_leaders": self.max_leaders,
            "time_to_leader_p50": percentile(windows, 0.5, is_sorted=True),
            "time_to_leader_max": windows[-1] if windows else 0.0,
            "time_to_leader_p50_censored": 1 if self.failed_at is not None else 0,
            "notifications": notes,
            "notifications_per_change": notes / changes if changes else 0.0,
        }

    def view(self) -> dict[str, Any]:
        now = self.t
        net = self.net
        out = []
        for node in net.nodes:
            out.append(
                {
                    "id": node.id,
                    "up": node.up,
                    "role": node.role,
                    "leader": node.leader,
                    "group": net.group[node.id],
                    "slow": net.extra[node.id],
                    "rate": net.rate[node.id],
                    "note": node.note(now) if hasattr(node, "note") else "",
                }
            )
        msgs = [
            {"src": s, "dst": d, "sent": sent, "arrives": arr, "type": str(m[0])}
            for s, d, sent, arr, m in net.in_flight(now)[:_VIEW_MSGS]
        ]
        return {
            "kind": "election",
            "t": now,
            "n": self.n,
            "nodes": out,
            "messages": msgs,
            "partitioned": net.partitioned,
            "leaders": list(self.leaders),
            "history": [list(h) for h in self.history],
        }

    # -- recording mode (sims/core/diverge.py) -----------------------------------------------
    def decide(self, events: list[dict], k: int) -> Decision:
        """``feed(events, k, k + 1, t)``, recording who acted as leader just before the event:
        the outcome of the elections since the previous one (a fault decides nothing at once)."""
        ev = events[k]
        t = ev["t"]
        self.advance(t)
        leaders, since = self.leaders, self.since
        self.on_event(ev)
        self.advance(t)
        if not leaders:
            target = "no leader"
        else:
            target = ("node " if len(leaders) == 1 else "nodes ") + ", ".join(map(str, leaders))
        return Decision("lead", f"before t={t:.3f} s", target, facts={"t": t, "since": since, "leaders": leaders})

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        f, p = decision.facts, self.protocol
        name, leaders = p.policy_name, f["leaders"]
        when = f"{decision.subject} (since t={f['since']:.3f} s)"
        if not leaders:
            return f"{name}: no node acts as leader {when}: {p.NONE}."
        if len(leaders) > 1:
            split = getattr(p, "SPLIT", "a node that was replaced has not heard of its successor yet")
            return f"{name}: nodes {', '.join(map(str, leaders))} all act as leader {when}, split brain: {split}."
        return f"{name}: node {leaders[0]} leads {when}: {p.WHY}."

    def check_invariants(self) -> None:
        for node in self.net.nodes:
            node.check_invariants()
        nodes = self.net.nodes
        assert self.leaders == tuple(
            i for i in range(self.n) if nodes[i].up and nodes[i].role == "leader" and not nodes[i].paused
        )
        assert self.no_leader_s >= 0.0 and self.split_s >= 0.0 and self.elections >= len(self.leaders)
