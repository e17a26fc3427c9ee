"""The cluster panel: N engine replicas behind one router.

At each request's arrival every replica is advanced to that instant, the router reads their
load (and, for llm-d's scheduler, the KV events that have reached it by then), and the request
is submitted to the replica it picks. Replicas do not interact between arrivals, so advancing
each one to the next arrival in turn is exact.
"""

from __future__ import annotations

from typing import Any

from sims.cluster.kvindex import BusTap, prompt_hashes
from sims.cluster.routers import PodLoad, Router
from sims.core.diverge import Decision
from sims.core.metrics import ratio
from sims.core.panel import Panel, PanelContext
from sims.core.registry import get_policy
from sims.engine.bill import bill
from sims.engine.config import EngineConfig
from sims.engine.engine import Engine
from sims.engine.metrics import Accumulator, EngineStats, Slo, in_flight, last_completion
from sims.engine.users import Users


class ClusterPanel(Panel):
    topic = "cluster"

    def __init__(self, name: str, params: dict, ctx: PanelContext, policy: str) -> None:
        super().__init__(name, params, ctx)
        n = params["replicas"]
        if n < 1:
            raise ValueError(f"replicas must be >= 1, got {n!r}")
        cls = get_policy("cluster", policy)
        self.router: Router = cls(n, {k: params[k] for k in cls.PARAMS}, ctx.rng("router"))
        self.config = EngineConfig.from_params(params)
        self.engines = [Engine(self.config, rng=ctx.rng(f"replica:{i}")) for i in range(n)]
        self.block_size = self.engines[0].block_size
        self._wire()
        self.routed = [0] * n  # requests sent to each replica
        self.peak_waiting = 0  # the longest queue any replica had at an arrival
        self.t = 0.0
        self._acc = Accumulator(Slo.from_params(params))  # completed requests of every replica, in any order
        self._taken = [0] * n  # records of replica i already in _acc
        self.users: Users | None = None  # a closed loop's users (a ``users`` event made it)

    def _wire(self) -> None:
        """Point each replica's KV events at the router's bus (llm-d's precise scheduler)."""
        if self.router.needs_kv_events:
            for i, e in enumerate(self.engines):
                e.kv_listener = BusTap(self.router.bus, i)

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        engines = self.engines
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] != "request":
                if ev["kind"] in ("users", "user"):
                    self._user_event(ev)
                continue
            t = ev["t"]
            if self.users is not None:
                self.users.run(t, self._route, self._advance, engines)
            self._route(ev, t)
        self.advance(until)

    def _route(self, ev: dict, t: float) -> None:
        """One request at ``t``: every replica advanced to ``t``, then the router's pick."""
        engines = self.engines
        loads = []
        for e in engines:
            e.advance(t)
            loads.append(PodLoad(e.num_waiting, e.num_running, e.outstanding_tokens, e.kv_usage))
        w = max(x.waiting for x in loads)
        if w > self.peak_waiting:
            self.peak_waiting = w
        router = self.router
        hashes = prompt_hashes(ev["segments"], self.block_size) if router.needs_hashes else []
        i = router.route(t, ev, hashes, loads)
        self.routed[i] += 1
        engines[i].submit(ev, t)

    def _advance(self, until: float) -> None:
        for e in self.engines:
            e.advance(until)

    def _user_event(self, ev: dict) -> None:
        if self.users is not None:
            self.users.run(ev["t"], self._route, self._advance, self.engines)
        if ev["kind"] == "users":
            self.users = Users(ev)
        elif self.users is None:
            raise ValueError(f"user {ev.get('id')!r} at t={ev['t']:g}: no users event came first")
        else:
            self.users.join(ev)

    def on_event(self, ev: dict) -> None:
        self.feed([ev], 0, 1, ev["t"])

    def advance(self, until: float) -> None:
        if self.users is not None:
            self.users.run(until, self._route, self._advance, self.engines)
        for e in self.engines:
            e.advance(until)
        self.t = until

    def drain(self) -> None:
        """``run --drain``: no more arrivals (closed-loop users send no further turns); every
        replica finishes, the window ends at the last completion."""
        if self.users is not None:
            self.users.closed = True
        for e in self.engines:
            e.advance(float("inf"))
        self.t = last_completion([r for e in self.engines for r in e.records], self.t)

    def next_time(self) -> float | None:
        times = [t for t in (e.next_time() for e in self.engines) if t is not None]
        if self.users is not None and self.users.next_time() is not None:
            times.append(self.users.next_time())
        return min(times) if times else None

    # -- recording mode (sims/core/diverge.py) -----------------------------------------------
    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        router, seen = self.router, {}
        route = router.route

        def recorded(t: float, req: dict, hashes: list[int], loads: list[PodLoad]) -> int:
            before = dict(router.decisions)
            i = route(t, req, hashes, loads)
            branch = next((b for b, n in router.decisions.items() if n != before.get(b, 0)), "")
            seen.update(pick=i, loads=loads, branch=branch)
            return i

        router.route = recorded
        try:
            self.feed(events, k, k + 1, ev["t"])
        finally:
            del router.route
        if not seen:
            return None
        return Decision("route", f"request {ev.get('id', k)}", f"pod {seen['pick']}", facts=seen)

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        return self.router.explain(decision, other)

    def metrics(self) -> dict[str, float]:
        acc = self._acc
        stats = EngineStats()
        for i, e in enumerate(self.engines):
            recs = e.records
            for k in range(self._taken[i], len(recs)):
                acc.add(recs[k])
            self._taken[i] = len(recs)
            stats = stats.merge(e.stats)
        m = acc.result(self.t, stats, in_flight(self.engines), self.t)  # order-free, over every arrival
        routed = self.routed
        m["load_imbalance"] = ratio(max(routed) * len(routed), sum(routed))  # 1 = perfectly even
        m["peak_waiting"] = self.peak_waiting
        m.update(self.router.metrics())
        cost = self.engines[0].cost
        m.update(bill(acc, stats, self.t, len(self.engines), cost.tp, cost.gpu, self.params))
        return m

    def view(self) -> dict[str, Any]:
        """Each replica's load and cache occupancy, and what the router knows."""
        reps = []
        for i, e in enumerate(self.engines):
            cached = e.alloc.num_cached
            reps.append(
                {
                    "waiting": e.num_waiting,
                    "running": e.num_running,
                    "outstanding_tokens": e.outstanding_tokens,
                    "kv_usage": e.kv_usage,
                    "cached_blocks": cached,
                    "cache_occupancy": ratio(cached, e.num_blocks),
                    "routed": self.routed[i],
                }
            )
        return {"kind": "cluster", "router": self.router.policy_name, "replicas": reps, "state": self.router.state()}

    def check_invariants(self) -> None:
        for e in self.engines:
            e.check_invariants()
        self.router.check_invariants()
        if self.users is not None:
            self.users.check_invariants()
        assert sum(self.routed) == sum(e.submitted for e in self.engines), "a request went missing"
