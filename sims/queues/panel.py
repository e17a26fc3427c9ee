"""The queue panel: requests wait in one or more queues for identical servers.

The mechanism owns the servers, the clock and the books; the discipline (``policies.py``) owns
only the order of the waiting line. Timed work sits on one heap of (time, seq, job, version):
service completions, and client retries after a backoff. Client timeouts need no heap: every
attempt's deadline is its arrival + ``timeout``, so deadlines expire in arrival order from a deque.

A client that times out stops waiting, but its request stays queued (the server cannot know),
so a server may later spend its time on a request nobody waits for (``wasted``). Each timeout or
drop may be followed by a retry, which is a new arrival at the queue.

``feed`` runs the methods here one by one (``feed_plain``) when the discipline preempts, and
otherwise the same steps written out as one loop (``inlined.py``), which must match it exactly.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from heapq import heappop, heappush
from math import fsum

from sims.core.metrics import ratio
from sims.core.panel import Panel
from sims.queues import retry
from sims.queues.inlined import InlinedFeed
from sims.queues.jobs import BUDGET_CAP, Group, Job
from sims.queues.stats import Tally

__all__ = ["Group", "Job", "QueuePanel"]

_INF = float("inf")
SPLITS = ("random", "round_robin", "shortest")


class QueuePanel(InlinedFeed, Panel):
    topic = "queues"

    def __init__(self, name: str, params: dict, ctx, make_disc) -> None:
        super().__init__(name, params, ctx)
        servers, queues = params["servers"], params["queues"]
        if servers < 1 or queues < 1 or servers % queues:
            raise ValueError(f"servers ({servers!r}) must be a positive multiple of queues ({queues!r})")
        if params["split"] not in SPLITS:
            raise ValueError(f"split: expected one of {', '.join(SPLITS)}, got {params['split']!r}")
        if not params["speed"] > 0:
            raise ValueError(f"speed must be > 0, got {params['speed']!r}")
        for key in ("timeout", "backoff"):
            if not params[key] >= 0:
                raise ValueError(f"{key} must be >= 0 seconds, got {params[key]!r}")
        if not params["retry_budget"] >= 0:
            raise ValueError(f"retry_budget must be >= 0, got {params['retry_budget']!r}")
        if params["retries"] < 0:
            raise ValueError(f"retries must be >= 0, got {params['retries']!r}")
        self.groups = []
        for _ in range(queues):
            disc = make_disc()
            self.groups.append(Group(disc, servers // queues))
        self.preemptive = self.groups[0].disc.preemptive
        self.servers = servers
        self.speed = params["speed"]
        self.timeout = params["timeout"]
        self.retry_limit = params["retries"]
        self.backoff = params["backoff"]
        self.budget = params["retry_budget"]  # retry tokens earned per request; 0 = unlimited
        self.tokens = BUDGET_CAP if self.budget else 0.0
        self.split = params["split"]
        self.rng = ctx.rng("queues")  # queue choice and retry jitter; never the stream's
        self._rr = -1
        self._heap: list[tuple] = []  # (time, seq, job, version): completions (version >= 0) and retries (-1)
        self._seq = 0
        self._timers: deque[Job] = deque()  # attempts with a deadline, in arrival order
        self.t = 0.0
        self.n = 0  # in the system: waiting or in service
        self.area = 0.0  # integral of n over [0, last]
        self.last = 0.0
        self.busy_s = 0.0  # server-seconds of service finished (or cut by preemption)
        self.waits = Tally()  # time before service starts (or before a drop)
        self.sojourns = Tally()  # time in the system, until served or dropped
        self.low_waits = Tally()  # waits of classes > 0
        self.high_waits = Tally()  # waits of class 0
        self.served_sojourn = 0.0  # summed in completion order (portable, unlike sum())
        self.wait_sum = 0.0  # of the finished waits, in the order they ended
        self.good_times: list[float] = []  # when each answer in time was given, ascending
        self.requests = self.arrivals = self.served = self.dropped = 0
        self.timeouts = self.retries = self.good = self.wasted = self.preemptions = 0
        self.max_queue = 0

    # -- the mechanism ------------------------------------------------------------------------
    def _mark(self, t: float, dn: int) -> None:
        self.area += self.n * (t - self.last)
        self.last = t
        self.n += dn

    def _pick(self, job: Job) -> Group:
        groups = self.groups
        k = len(groups)
        if k == 1:
            return groups[0]
        if self.split == "random":
            i = int(self.rng.random() * k)
        elif self.split == "round_robin":
            self._rr = i = (self._rr + 1) % k
        else:
            loads = [len(g.busy) + len(g.disc) for g in groups]
            i = loads.index(min(loads))
        job.group = i
        return groups[i]

    def _start(self, g: Group, job: Job, t: float) -> None:
        if job.start < 0:
            w = t - job.arrival
            self.waits.add(w)
            self.wait_sum += w
            (self.low_waits if job.cls else self.high_waits).add(w)
        job.start = t
        g.busy.append(job)
        heappush(self._heap, (t + job.remaining / self.speed, self._seq, job, job.ver))
        self._seq += 1

    def _arrive(self, job: Job, t: float) -> None:
        self.arrivals += 1
        self._mark(t, 1)
        if self.timeout:
            self._timers.append(job)
        g = self._pick(job)
        if len(g.busy) < g.servers:
            self._start(g, job, t)
            return
        if self.preemptive and self._preempt(g, job, t):
            return
        if not g.disc.push(job, t):
            self._drop(job, t)
            return
        q = len(g.disc)
        if q > self.max_queue:
            self.max_queue = q

    def _preempt(self, g: Group, job: Job, t: float) -> bool:
        """SRPT: ``job`` takes the server of the busy job with the most work left, if that is more."""
        speed = self.speed
        worst, left = None, job.remaining
        for b in g.busy:
            r = b.remaining - (t - b.start) * speed
            if r > left:
                worst, left = b, r
        if worst is None:
            return False
        self.busy_s += t - worst.start
        worst.remaining = left
        worst.ver += 1
        g.busy.remove(worst)
        self.preemptions += 1
        self._start(g, job, t)
        g.disc.push(worst, t)
        return True

    def _drop(self, job: Job, t: float) -> None:
        """A discipline refused or shed ``job``: it leaves now, and its client may retry."""
        self._mark(t, -1)
        self.dropped += 1
        job.done = True
        if job.start < 0:
            w = t - job.arrival
            self.waits.add(w)
            self.wait_sum += w
            (self.low_waits if job.cls else self.high_waits).add(w)
        self.sojourns.add(t - job.arrival)
        if not job.gone:
            self._retry(job, t)

    def _retry(self, job: Job, t: float) -> None:
        left = retry.spend(job.attempt, self.retry_limit, self.budget, self.tokens)
        if left is None:
            return
        self.tokens = left
        delay = retry.delay(self.backoff, job.attempt, self.rng)
        if delay:  # full jitter: uniform over [0, backoff * 2**attempt)
            heappush(self._heap, (t + delay, self._seq, job, -1))
            self._seq += 1
        else:
            self._resend(job, t)

    def _resend(self, old: Job, t: float) -> None:
        self.retries += 1
        job = Job(self.arrivals, old.client, old.attempt + 1, t, old.size, old.cls)
        self._arrive(job, t)

    def _complete(self, job: Job, t: float) -> None:
        g = self.groups[job.group]
        g.busy.remove(job)
        self.busy_s += t - job.start
        self._mark(t, -1)
        job.done = True
        self.served += 1
        s = t - job.arrival
        self.sojourns.add(s)
        self.served_sojourn += s
        if job.gone:
            self.wasted += 1
        else:
            self.good += 1
            self.good_times.append(t)
        disc = g.disc
        nxt = disc.pop(t)
        if nxt is not None:
            self._start(g, nxt, t)
        if disc.shed:
            self._drain(disc, t)

    def _drain(self, disc, t: float) -> None:
        """Drop what the discipline shed at its last pop (after the freed server took a job)."""
        victims = disc.shed[:]
        disc.shed.clear()
        for job in victims:
            self._drop(job, t)

    def _expire(self, job: Job, t: float) -> None:
        job.gone = True
        self.timeouts += 1
        self._retry(job, t)

    def _run(self, until: float) -> None:
        heap, timers, timeout = self._heap, self._timers, self.timeout
        while True:
            while timers and timers[0].done:
                timers.popleft()
            h = heap[0][0] if heap else _INF
            d = timers[0].arrival + timeout if timers else _INF
            if h <= d:
                if h > until:
                    return
                t, _, job, ver = heappop(heap)
                if ver < 0:
                    self._resend(job, t)
                elif ver == job.ver:
                    self._complete(job, t)
            else:
                if d > until:
                    return
                self._expire(timers.popleft(), d)

    # -- the panel interface -------------------------------------------------------------------
    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        if self.preemptive:
            self.feed_plain(events, lo, hi, until)
        else:
            self._feed_one(events, lo, hi, until)

    def feed_plain(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        """The reference loop, one method per step; ``_feed_one`` must match it exactly."""
        run = self._run
        for k in range(lo, hi):
            ev = events[k]
            if ev["kind"] != "request":
                continue
            t = ev["t"]
            run(t)
            self.t = t
            self.requests += 1
            self.tokens = retry.earn(self.tokens, self.budget)
            self._arrive(Job(self.arrivals, ev["id"], 0, t, ev["size"], ev.get("cls", 0)), t)
        run(until)
        self.t = until

    def on_event(self, ev: dict) -> None:
        self.feed([ev], 0, 1, ev["t"])

    def advance(self, until: float) -> None:
        self._run(until)
        self.t = until

    def next_time(self) -> float | None:
        h = self._heap[0][0] if self._heap else _INF
        live = next((j for j in self._timers if not j.done), None)
        d = live.arrival + self.timeout if live is not None else _INF
        m = min(h, d)
        return None if m == _INF else m

    # -- reading -------------------------------------------------------------------------------
    def waiting(self) -> list[Job]:
        return [j for g in self.groups for j in g.disc.waiting()]

    def metrics(self) -> dict[str, float]:
        now = self.t
        waiting = self.waiting()
        in_service = [j for g in self.groups for j in g.busy]
        wait_ages = sorted([now - j.arrival for j in waiting])
        ages = sorted(wait_ages + [now - j.arrival for j in in_service])
        busy = self.busy_s
        for j in in_service:
            busy += now - j.start
        area = self.area + self.n * (now - self.last)
        m = {
            "requests": self.requests,
            "arrivals": self.arrivals,
            "served": self.served,
            "dropped": self.dropped,
            "timeouts": self.timeouts,
            "retries": self.retries,
            "wasted": self.wasted,
            "preemptions": self.preemptions,
        }
        for name, tally, extra in (
            ("wait", self.waits, wait_ages),
            ("sojourn", self.sojourns, ages),
        ):
            for q, label in ((0.5, "p50"), (0.99, "p99")):
                value, censored = tally.percentile(q, extra)
                m[f"{name}_{label}"] = value
                m[f"{name}_{label}_censored"] = censored
        low_ages = sorted([now - j.arrival for j in waiting if j.cls])
        high_ages = sorted([now - j.arrival for j in waiting if not j.cls])
        m["low_wait_p99"], m["low_wait_p99_censored"] = self.low_waits.percentile(0.99, low_ages)
        m["high_wait_p99"], m["high_wait_p99_censored"] = self.high_waits.percentile(0.99, high_ages)
        m["utilization"] = ratio(busy, self.servers * now)
        m["goodput"] = ratio(self.good, self.requests)
        m["goodput_rps"] = ratio(self.good, now)
        recent = len(self.good_times) - bisect_right(self.good_times, now - 1.0)
        m["goodput_1s"] = ratio(recent, min(1.0, now))  # answers in time over the last second, per second
        m["mean_in_system"] = ratio(area, now)
        m["wait_mean"] = ratio(self.wait_sum + fsum(wait_ages), len(self.waits) + len(wait_ages))
        m["wait_mean_censored"] = int(bool(wait_ages))  # an age taking part can only grow
        m["sojourn_mean_completed"] = ratio(self.served_sojourn, self.served)
        m["in_system"] = self.n
        m["queue_len"] = len(waiting)
        m["max_queue"] = self.max_queue
        return m

    def view(self) -> dict:
        now = self.t
        out = []
        for g in self.groups:
            jobs = g.disc.head(64)
            out.append(
                {
                    "servers": g.servers,
                    "busy": [
                        {
                            "id": j.id,
                            "cls": j.cls,
                            "age": now - j.arrival,
                            "gone": j.gone,
                            "left": j.remaining - (now - j.start) * self.speed,
                        }
                        for j in g.busy
                    ],
                    "waiting": len(g.disc),
                    "head": [{"id": j.id, "cls": j.cls, "age": now - j.arrival, "gone": j.gone} for j in jobs],
                    "policy": g.disc.state(),
                }
            )
        return {"kind": "queues", "t": now, "timeout": self.timeout, "queues": out}

    def check_invariants(self) -> None:
        waiting = 0
        for g in self.groups:
            assert len(g.busy) <= g.servers, "more jobs in service than servers"
            assert len(g.disc) == 0 or len(g.busy) == g.servers, "a server idles while its queue waits"
            assert all(not j.done for j in g.busy), "a finished job is still in service"
            waiting += len(g.disc)
        in_service = sum(len(g.busy) for g in self.groups)
        assert self.n == waiting + in_service, (self.n, waiting, in_service)
        assert self.arrivals == self.served + self.dropped + self.n, "a request was lost"
        assert self.arrivals == self.requests + self.retries
        assert self.good + self.wasted == self.served
