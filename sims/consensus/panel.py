"""One consensus protocol on a simulated network (``sims.net``), fed client operations and faults.

The panel resolves node references in faults (``"leader"``, marks), routes each client command
to the current leader (the up leader of the highest term; without one it waits for the next),
and checks the protocol's safety properties after every delivered message and fired timer.

Availability: the cluster is available while some leader is up and its side of any partition
holds a majority of the servers; ``unavailable_s`` integrates the rest, and each window without
one (the first election included) is one sample of ``time_to_elect``.
"""

from __future__ import annotations

from typing import Any

from sims.core.metrics import percentile
from sims.core.panel import Panel
from sims.net import Delay, Network
from sims.net.refs import resolve_fault

_VIEW_LOG = 24  # entries of each log the view shows (the newest)
_VIEW_MSGS = 80  # messages in flight the view shows (the earliest to arrive)


class ConsensusPanel(Panel):
    topic = "consensus"

    def __init__(self, name: str, params: dict, ctx, protocol) -> None:
        super().__init__(name, params, ctx)
        n = params["nodes"]
        self.n = n
        delay = Delay("uniform", lo=params["delay_lo"], hi=params["delay_hi"])
        self.net = Network(
            protocol.make_nodes(n, params),
            ctx.rng("net"),
            delay,
            loss=params["loss"],
            duplicate=params["duplicate"],
            reorder=params["reorder"],
            node_rngs=[ctx.rng(f"node{i}") for i in range(n)],
        )
        self.checker = protocol.make_checker()
        self.multicast = getattr(protocol, "multicast", False)  # the client sends to every server (PBFT)
        self.marks: dict[str, int] = {}
        self.changes: list[tuple[str, int]] = []  # membership requests waiting for a leader to finish them
        self.membership = hasattr(self.net.nodes[0], "change")  # Raft with a configuration
        self.pending: list[int] = []  # client commands waiting for a leader
        self.arrived: dict[int, float] = {}  # command -> arrival time, until committed
        self.latencies: list[float] = []  # arrival -> committed, per command
        self.t = 0.0
        self.ops = 0
        self.available = False
        self.since = 0.0  # start of the current window (available or not)
        self.down_s = 0.0
        self.windows: list[float] = []  # lengths of finished windows without a leader
        self.net.start(0.0)
        self._after(0.0)  # a protocol with a leader from the start (PBFT's view 0) is available from 0

    def record(self) -> None:
        """Keep a ``sims.net.trace.Trace`` of the run from now on (``self.net.trace``), for
        ``sims.consensus.diagram``; call it before feeding events. Metrics do not change."""
        from sims.net.trace import Trace

        self.net.trace = Trace()
        self.net.trace.adopt(self.net.clock)
        self.net.trace.states_of(self.net.nodes, self.t)

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
        if ev["kind"] == "op":
            self.ops += 1
            self.arrived[ev["id"]] = t
            if self.net.trace is not None:
                self.net.trace.ops[ev["id"]] = [ev["id"], t, None]
            self.pending.append(ev["id"])
        elif ev["kind"] == "fault":
            self._fault(ev, t)
        self._after(t)

    def _fault(self, ev: dict, t: float) -> None:
        fault = resolve_fault(ev, self.leader, self.marks, self.n)
        if fault is None:
            return
        if fault["fault"] in ("add", "remove"):
            self._membership(fault, t)
        else:
            self.net.apply(fault, t)

    def _membership(self, fault: dict, t: float) -> None:
        """A request to add or remove a server, handed to the leader until it is finished
        (``sims.consensus.membership``); ``add`` without a node: the lowest-numbered spare.
        Protocols without configurations ignore it."""
        if not self.membership:
            return
        if self.net.trace is not None:
            self.net.trace.fault(t, fault)
        j = fault.get("node")
        if j is None:
            leader = self.leader()
            config = self.net.nodes[leader if leader is not None else 0].config
            spares = [k for k in range(self.n) if k not in config and all(k != c[1] for c in self.changes)]
            if not spares:
                return
            j = spares[0]
        self.changes.append((fault["fault"], j))

    def leader(self) -> int | None:
        """The up leader of the highest term (the lowest id on a tie), or None."""
        best = None
        for node in self.net.nodes:
            if node.up and node.role == "leader" and (best is None or node.term > best.term):
                best = node
        return None if best is None else best.id

    def _hand_changes(self) -> None:
        leader = self.leader()
        if leader is None:
            return
        node = self.net.nodes[leader]
        while self.changes and node.change(*self.changes[0]):
            self.changes.pop(0)

    def _serving(self) -> bool:
        net = self.net
        for node in net.nodes:
            if node.up and node.role == "leader":
                side = 0
                members = node.config if self.membership else None
                for other in net.nodes:
                    if other.up and net.group[other.id] == net.group[node.id]:
                        side += 1 if members is None or other.id in members else 0
                if 2 * side > (self.n if members is None else len(members)):
                    return True
        return False

    def _after(self, t: float) -> None:
        nodes = self.net.nodes
        new = self.checker.check(nodes, t)
        if self.pending and self.multicast and any(node.up for node in nodes):
            for node in nodes:
                if node.up:
                    for op in self.pending:
                        node.propose(op)
            self.pending = []
            new += self.checker.check(nodes, t)
        if self.changes:
            self._hand_changes()
            new += self.checker.check(nodes, t)
        if self.pending:
            leader = self.leader()
            if leader is not None:
                node = nodes[leader]
                for op in self.pending:
                    node.propose(op)
                self.pending = []
                new += self.checker.check(nodes, t)
        trace = self.net.trace
        for i in new:
            start = self.arrived.pop(self.checker.chosen[i][1], None)
            if start is not None:
                self.latencies.append(t - start)
            if trace is not None and self.checker.chosen[i][1] in trace.ops:
                trace.ops[self.checker.chosen[i][1]][2] = t
        if trace is not None:
            trace.states_of(nodes, t)
        serving = self._serving()
        if serving != self.available:
            if serving:  # a window without a leader ends
                self.windows.append(t - self.since)
                self.down_s += t - self.since
            self.available = serving
            self.since = t

    # snapshots ------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        now = self.t
        nodes = self.net.nodes
        down = self.down_s + (0.0 if self.available else now - self.since)
        windows = sorted(self.windows + ([] if self.available else [now - self.since]))
        committed = len(self.checker.chosen)
        won = 0
        for node in nodes:
            won += node.won
        lat = sorted(self.latencies)
        return {
            "committed": committed,
            "ops": self.ops,
            "elections": sum(node.elections for node in nodes),
            "split_votes": sum(node.retries for node in nodes),
            "leader_changes": max(0, won - 1),
            "unavailable_s": down,
            "time_to_elect_p50": percentile(windows, 0.5, is_sorted=True),
            "time_to_elect_max": windows[-1] if windows else 0.0,
            "time_to_elect_p50_censored": 0 if self.available or not windows else 1,
            "commit_p50": percentile(lat, 0.5, is_sorted=True),
            "commit_p99": percentile(lat, 0.99, is_sorted=True),
            "messages": self.net.sent,
            "messages_per_commit": self.net.sent / committed if committed else 0.0,
            "max_term": max(node.term for node in nodes),
            "discarded": self.checker.discarded,
            "safety_violations": len(self.checker.violations),
        }

    def view(self) -> dict[str, Any]:
        now = self.t
        net = self.net
        out = []
        for node in net.nodes:
            log = node.log
            lo = max(0, len(log) - _VIEW_LOG)
            out.append(
                {
                    "id": node.id,
                    "up": node.up,
                    "role": node.role,
                    "term": node.term,
                    "vote": node.voted_for,
                    "commit": node.commit,
                    "log_from": lo + 1,
                    "log": [[term, value] for term, value in log[lo:]],
                    "group": net.group[node.id],
                    "slow": net.extra[node.id],
                }
            )
            if node.traitor:
                out[-1]["traitor"] = node.traitor
            if self.membership:
                out[-1]["member"] = node.id in node.config
        msgs = [
            {"src": s, "dst": d, "sent": sent, "arrives": arr, "type": m[0], "term": m[1]}
            for s, d, sent, arr, m in net.in_flight(now)[:_VIEW_MSGS]
        ]
        return {
            "kind": "consensus",
            "t": now,
            "nodes": out,
            "messages": msgs,
            "partitioned": net.partitioned,
            "leader": self.leader(),
            "committed": len(self.checker.chosen),
            "violations": sorted(self.checker.violations),
        }

    def check_invariants(self) -> None:
        for node in self.net.nodes:
            node.check_invariants()
