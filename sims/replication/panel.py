"""``ReplicationPanel``: one strategy's nodes on ``sims.net``, fed the stream's client operations
and faults, with the books that judge them.

Order of work: the monitor ticks every ``TICK`` seconds (between deliveries at that instant and
the stream's events there); each stream operation goes to its contact node if that node is up
(a client whose node is down simply waits until it gives up).
"""

from __future__ import annotations

from typing import Any

from sims.core.metrics import percentile
from sims.core.panel import Panel
from sims.net import Delay, Network
from sims.replication.books import Books
from sims.replication.monitor import TICK

VIEW_KEYS = 6  # registers shown per node
VIEW_MESSAGES = 200  # messages in flight shown at most


class ReplicationPanel(Panel):
    topic = "replication"
    observe = None  # while recorded: called with the time after each step (sims/replication/record.py)

    def __init__(self, name: str, params: dict, ctx, strategy: str, node_cls, cfg, monitor) -> None:
        super().__init__(name, params, ctx)
        n = cfg.n
        self.strategy = strategy
        self.books = Books(cfg.timeout)
        nodes = [node_cls(i, n, cfg, self.books) for i in range(n)]
        delay = Delay("uniform", lo=params["delay_lo"], hi=params["delay_hi"])
        rngs = [ctx.rng(f"node:{i}") for i in range(n)]
        self.net = Network(nodes, ctx.rng("net"), delay=delay, loss=params["loss"], node_rngs=rngs)
        self.net.start(0.0)
        self.monitor = monitor
        self.now = 0.0
        self.ticks = 1  # the next tick is at ticks * TICK

    def record(self) -> None:
        """Keep a ``sims.net.trace.Trace`` of the run from now on (``self.net.trace``), for
        ``sims.net.diagram``; call it before feeding events. Metrics do not change."""
        from sims.replication.record import record

        record(self)

    def advance(self, until: float) -> None:
        net = self.net
        while self.ticks * TICK <= until:
            t = self.ticks * TICK
            net.advance(t, self.observe)
            self.monitor.tick(net, t)
            self.books.expire(t)
            if self.observe is not None:
                self.observe(t)
            self.ticks += 1
        net.advance(until, self.observe)
        if until > self.now:
            self.now = until

    def next_time(self) -> float | None:
        t = self.net.next_time()
        tick = self.ticks * TICK
        return tick if t is None or tick < t else t

    def on_event(self, ev: dict) -> None:
        kind = ev["kind"]
        net = self.net
        if kind == "fault":
            node = ev.get("node")
            if node is not None and not 0 <= int(node) < net.n:
                raise ValueError(f"fault {ev['fault']!r} at t={ev['t']:g}: node {node} is not one of 0..{net.n - 1}")
            net.apply(ev, ev["t"])
        elif kind in ("write", "read"):
            i = ev["node"]
            if not 0 <= i < net.n:
                raise ValueError(f"{kind} {ev['id']}: contact node {i} is not one of 0..{net.n - 1}")
            self.books.begin(ev, net.partitioned)
            net.request(i, ev, ev["t"])  # a paused contact takes it at its resume
        if self.observe is not None:
            self.observe(ev["t"])

    def metrics(self) -> dict[str, float]:
        b, now = self.books, self.now
        m: dict[str, float] = {"writes": b.issued["write"], "reads": b.issued["read"]}
        for name, kind, q in (
            ("write_p50", "write", 0.5),
            ("write_p99", "write", 0.99),
            ("read_p50", "read", 0.5),
            ("read_p99", "read", 0.99),
        ):
            m[name], m[f"{name}_censored"] = b.latency(kind, q, now)
        answered, decided, part_answered, part_decided = b.decided(now)
        reads_answered = len(b.lat["read"])
        m["stale_reads"] = b.stale
        m["stale_read_ratio"] = b.stale / reads_answered if reads_answered else 0.0
        m["acked_writes"] = len(b.lat["write"])
        m["lost_acked_writes"] = b.lost
        m["availability"] = answered / decided if decided else 1.0
        m["partition_availability"] = part_answered / part_decided if part_decided else 1.0
        m["replication_lag_p99"] = percentile(b.lag, 0.99, is_sorted=True)
        m["messages"] = self.net.sent
        m["failovers"] = getattr(self.monitor, "failovers", 0)
        return m

    def view(self) -> dict[str, Any]:
        net = self.net
        nodes = []
        for node in net.nodes:
            values = []
            for key in sorted(node.store)[:VIEW_KEYS]:
                version, wid = node.store[key]
                values.append([key, wid, list(version) if isinstance(version, tuple) else version])
            nodes.append(
                {
                    "id": node.id,
                    "up": node.up,
                    "group": net.group[node.id],
                    "role": node.role(),
                    "held": len(node.hist),
                    "values": values,
                    **node.describe(),
                }
            )
        flying = [
            [src, dst, sent, arrives, msg[0]]
            for src, dst, sent, arrives, msg in net.in_flight(self.now)[:VIEW_MESSAGES]
        ]
        return {
            "kind": "replication",
            "t": self.now,
            "strategy": self.strategy,
            "nodes": nodes,
            "messages": flying,
            "partitioned": net.partitioned,
            "monitor": self.monitor.describe(),
        }

    def check_invariants(self) -> None:
        b = self.books
        for wid, c in b.holders.items():
            assert c >= 0, f"write {wid} held by {c} nodes"
        held = {}
        for node in self.net.nodes:
            for wid in node.hist:
                held[wid] = held.get(wid, 0) + 1
        for wid, c in b.holders.items():
            assert held.get(wid, 0) == c, f"write {wid}: books say {c} holders, nodes {held.get(wid, 0)}"
        lost = sum(1 for wid in b.acked if not b.holders.get(wid, 0))
        assert lost == b.lost, f"lost acked writes: counted {b.lost}, recount {lost}"
