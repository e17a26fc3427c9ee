"""The load-balancing panel: a policy routes each request to one of N FIFO servers.

Each server works on one job at a time at its speed (work units per second); the others wait
in its FIFO queue. Completions sit on one heap ordered by (time, sequence); a heap entry whose
server ``version`` changed since (the server was slowed or killed) is stale and skipped.
Requests on a killed server go back through the balancer, keeping their arrival time and their
client (the stream's ``client``, None when the workload has no clients), which a policy that
declares ``by_client`` reads as ``policy.client`` when it picks.
Latency figures count every arrival that reached a server: a request still queued or in service
counts with its age, a lower bound flagged ``<metric>_censored`` (DESIGN.md); one that found no
live server is only counted in ``dropped``.
"""

from __future__ import annotations

from collections import deque
from math import fsum

from sims.core.clock import Clock
from sims.core.diverge import Decision
from sims.core.metrics import censored_percentile, ratio
from sims.core.panel import Panel


class BalancePanel(Panel):
    topic = "balance"

    def __init__(self, name: str, params: dict, ctx, policy) -> None:
        super().__init__(name, params, ctx)
        speeds = [float(s) for s in params["speeds"]]
        if not speeds or any(not s > 0 for s in speeds):
            raise ValueError(f"speeds: expected a non-empty list of positive numbers, got {params['speeds']!r}")
        if params["stale"] < 0:
            raise ValueError(f"stale must be >= 0 seconds, got {params['stale']!r}")
        n = len(speeds)
        self.policy = policy
        self.policy_name = getattr(policy, "policy_name", type(policy).__name__)
        self.pick = policy.pick
        self.speed = speeds
        self.alive = [True] * n
        self.live = list(range(n))  # live servers, ascending
        self.active = [0] * n  # outstanding requests per server (queued + in service)
        self.queue: list[deque] = [deque() for _ in range(n)]  # waiting (arrival, size, client), FIFO
        self.cur: list[tuple | None] = [None] * n  # in service: (arrival, size, start, done, client)
        self.by_client = getattr(policy, "by_client", False)  # it reads policy.client: no fast path
        self.version = [0] * n
        self.busy = [0.0] * n  # seconds of service completed per server
        self.routed = [0] * n
        # seconds between load reports; a policy that counts its own requests in flight needs none
        self.stale = 0.0 if getattr(policy, "own_load", False) else params["stale"]
        self.seen = [0] * n  # the load the balancer believes (a copy when stale > 0)
        self.next_refresh = 0.0
        self.clock = Clock()  # completions: (server, its version when the job started)
        self.latencies: list[float] = []  # completed requests; sorted lazily for percentiles
        self._sorted = 0  # latencies[:_sorted] is sorted
        self.lat_total = 0.0  # summed in completion order: builtin sum() of floats differs by version
        self.requests = self.completed = self.rerouted = self.dropped = 0
        self.max_queue = 0
        self.now = 0.0  # how far the panel has run: the ages of unfinished requests count from it

    # -- routing ------------------------------------------------------------------------------
    def _route(self, t: float, arrival: float, size: float, client=None) -> None:
        live = self.live
        if not live:
            self.dropped += 1
            return
        active = self.active
        if self.by_client:
            self.policy.client = client
        if self.stale:
            if t >= self.next_refresh:
                self.seen = active[:]
                self.next_refresh = t - t % self.stale + self.stale
            s = self.pick(live, self.seen, t)
        else:
            s = self.pick(live, active, t)
        if not self.alive[s]:
            raise AssertionError(f"{self.policy_name} routed to dead server {s}")
        self.routed[s] += 1
        a = active[s] = active[s] + 1
        if a > self.max_queue:
            self.max_queue = a
        if self.cur[s] is None:
            done = t + size / self.speed[s]
            self.cur[s] = (arrival, size, t, done, client)
            self.clock.schedule(done, (s, self.version[s]))
        else:
            self.queue[s].append((arrival, size, client))

    def _start(self, s: int, t: float, arrival: float, size: float, client=None) -> None:
        done = t + size / self.speed[s]
        self.cur[s] = (arrival, size, t, done, client)
        self.clock.schedule(done, (s, self.version[s]))

    def _run(self, until: float) -> None:
        heap, pop, schedule = self.clock.heap, self.clock.pop, self.clock.schedule
        if until > self.now:
            self.now = until
        if not heap or heap[0][0] > until:
            return
        observe = self.policy.observe if self.policy.observes else None
        cur, version, queue, speed = self.cur, self.version, self.queue, self.speed
        active, busy, lat = self.active, self.busy, self.latencies
        done_n = 0
        while heap and heap[0][0] <= until:
            t, (s, v) = pop()
            if v != version[s]:
                continue  # the server was slowed or killed since
            arrival, size, start, done, _ = cur[s]
            busy[s] += t - start
            active[s] -= 1
            done_n += 1
            lat.append(t - arrival)
            self.lat_total += t - arrival
            if observe is not None:
                observe(s, t - arrival, t)
            q = queue[s]
            if q:  # start the next job: self._start(s, t, *q.popleft()), written out
                a, z, c = q.popleft()
                d = t + z / speed[s]
                cur[s] = (a, z, t, d, c)
                schedule(d, (s, v))
            else:
                cur[s] = None
        self.completed += done_n

    # -- events -------------------------------------------------------------------------------
    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        heap, schedule = self.clock.heap, self.clock.schedule
        route = self._route
        run = self._run
        pick, live, alive = self.pick, self.live, self.alive
        slow = self.stale or self.by_client  # routes through _route
        active, routed, cur, speed, version, queue = (
            self.active,
            self.routed,
            self.cur,
            self.speed,
            self.version,
            self.queue,
        )
        for k in range(lo, hi):
            ev = events[k]
            t = ev["t"]
            if heap and heap[0][0] <= t:
                run(t)
            kind = ev["kind"]
            if kind == "request":  # self._route(t, t, size), written out for the common case
                self.requests += 1
                if slow or not live or live is not self.live:
                    route(t, t, ev["size"], ev.get("client"))
                    live = self.live
                    continue
                s = pick(live, active, t)
                if not alive[s]:
                    raise AssertionError(f"{self.policy_name} routed to dead server {s}")
                routed[s] += 1
                a = active[s] = active[s] + 1
                if a > self.max_queue:
                    self.max_queue = a
                if cur[s] is None:
                    done = t + ev["size"] / speed[s]
                    cur[s] = (t, ev["size"], t, done, None)
                    schedule(done, (s, version[s]))
                else:
                    queue[s].append((t, ev["size"], None))
            elif kind == "burst":  # a "send a burst" action
                for _ in range(ev.get("count", 1)):
                    self.requests += 1
                    route(t, t, ev.get("size", 0.05), ev.get("client"))
            elif kind in ("kill_server", "revive_server", "slow_server"):
                self._server_event(t, ev)
                live = self.live
        run(until)

    def advance(self, until: float) -> None:
        self._run(until)

    def on_event(self, ev: dict) -> None:
        self.feed([ev], 0, 1, ev["t"])

    def next_time(self) -> float | None:
        return self.clock.peek()

    def _server(self, ev: dict) -> int:
        s = ev.get("server", 0)
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < len(self.speed):
            raise ValueError(f"{ev['kind']}: server must be an index in 0..{len(self.speed) - 1}, got {s!r}")
        return s

    def _server_event(self, t: float, ev: dict) -> None:
        s = self._server(ev)
        kind = ev["kind"]
        if kind == "slow_server":
            new = ev["speed"] if "speed" in ev else self.speed[s] / ev.get("factor", 10.0)
            if not new > 0:
                raise ValueError(f"slow_server: speed must be > 0, got {new!r}")
            cur = self.cur[s]
            if cur is not None:  # the job in service finishes its remaining work at the new speed
                arrival, size, start, done, client = cur
                left = (done - t) * self.speed[s]
                self.busy[s] += t - start
                self.version[s] += 1
                self.speed[s] = new
                self._start(s, t, arrival, left, client)
                self.cur[s] = (arrival, size, t, self.cur[s][3], client)
            else:
                self.speed[s] = new
        elif kind == "kill_server":
            if not self.alive[s]:
                return
            self.alive[s] = False
            self.live = [i for i in self.live if i != s]
            self.version[s] += 1
            orphans = list(self.queue[s])
            if self.cur[s] is not None:
                arrival, size, start, done, client = self.cur[s]
                self.busy[s] += t - start
                orphans.insert(0, (arrival, size, client))  # restarts from scratch elsewhere
            self.queue[s].clear()
            self.cur[s] = None
            self.active[s] = 0
            self.seen[s] = 0
            for arrival, size, client in orphans:
                self.rerouted += 1
                self._route(t, arrival, size, client)
        elif not self.alive[s]:  # revive_server
            self.alive[s] = True
            self.live = sorted(self.live + [s])

    # -- recording mode (sims/core/diverge.py) -----------------------------------------------
    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        picks: list[tuple[int, list[int], list[int]]] = []
        pick = self.pick

        def recorded(live: list[int], load: list[int], t: float) -> int:
            seen = list(load)
            s = pick(live, load, t)
            picks.append((s, seen, list(live)))
            return s

        self.pick = recorded
        try:
            self.feed(events, k, k + 1, ev["t"])
        finally:
            self.pick = pick
        if not picks:
            return None
        s, load, live = picks[0]
        if ev["kind"] == "request":
            facts = {"load": load, "live": live}
            if self.by_client:
                facts["client"] = ev.get("client")
            return Decision("route", f"request #{k}", f"server {s}", facts=facts)
        servers = tuple(p[0] for p in picks)
        return Decision("reroute", f"{len(picks)} requests", f"server {s}", servers, {"load": load, "live": live})

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        return self.policy.explain(decision, other)

    # -- reading ------------------------------------------------------------------------------
    def _latencies(self) -> list[float]:
        lat = self.latencies
        if self._sorted != len(lat):
            lat.sort()  # the sorted prefix is one run for timsort: cheap to redo
            self._sorted = len(lat)
        return lat

    def imbalance(self) -> float:
        """1 - least busy / busiest live server, by completed service seconds (0 = even)."""
        busy = [self.busy[s] for s in self.live]
        top = max(busy, default=0.0)
        return 1.0 - min(busy) / top if top > 0 else 0.0

    def ages(self) -> list[float]:
        """How long each request still queued or in service has waited so far, sorted."""
        now = self.now
        ages = [now - job[0] for job in self.cur if job is not None]
        for q in self.queue:
            ages.extend([now - job[0] for job in q])
        ages.sort()
        return ages

    def metrics(self) -> dict[str, float]:
        lat, ages = self._latencies(), self.ages()
        p50, p50_cens = censored_percentile(lat, ages, 0.5)
        p99, p99_cens = censored_percentile(lat, ages, 0.99)
        return {
            "requests": self.requests,
            "completed": self.completed,
            "p50_latency": p50,
            "p50_latency_censored": p50_cens,
            "p99_latency": p99,
            "p99_latency_censored": p99_cens,
            "mean_latency": ratio(self.lat_total + fsum(ages), len(lat) + len(ages)),
            "mean_latency_censored": int(bool(ages)),  # an age taking part can only grow
            "mean_latency_completed": ratio(self.lat_total, len(lat)),
            "max_queue": self.max_queue,
            "imbalance": self.imbalance(),
            "in_system": sum(self.active),
            "rerouted": self.rerouted,
            "dropped": self.dropped,
        }

    def view(self) -> dict:
        return {
            "kind": "balance",
            "servers": [
                {
                    "speed": self.speed[s],
                    "alive": self.alive[s],
                    "active": self.active[s],
                    "seen": self.seen[s],
                    "routed": self.routed[s],
                    "busy": self.busy[s],
                }
                for s in range(len(self.speed))
            ],
            "policy": self.policy.state(),
        }

    def check_invariants(self) -> None:
        for s in range(len(self.speed)):
            in_service = self.cur[s] is not None
            assert self.active[s] == len(self.queue[s]) + in_service, s
            assert not self.queue[s] or in_service, "a queue waits behind an idle server"
            if not self.alive[s]:
                assert self.active[s] == 0, "a dead server holds requests"
        assert self.live == [s for s in range(len(self.speed)) if self.alive[s]]
        assert self.requests == self.completed + sum(self.active) + self.dropped, "a request was lost"
