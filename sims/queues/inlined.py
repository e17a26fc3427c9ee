"""The queue panel's hot loop: ``QueuePanel.feed_plain`` without preemption, written out.

``QueuePanel`` inherits it; every step names the method of ``panel.py`` it inlines, and
``tests/test_queues.py`` checks that both loops give the same state on every preset and
discipline.
"""

from __future__ import annotations

from heapq import heappop, heappush

from sims.queues.jobs import BUDGET_CAP, Job

_INF = float("inf")


class InlinedFeed:
    """``_feed_one``, with the counters it keeps in locals (``_load``/``_save``)."""

    def _load(self) -> tuple:
        """The counters ``_feed_one`` keeps in locals (``_save`` puts them back)."""
        return (
            self.n,
            self.area,
            self.last,
            self.arrivals,
            self.served,
            self.good,
            self.wasted,
            self.busy_s,
            self.served_sojourn,
            self._seq,
            self.max_queue,
            self.wait_sum,
            self.requests,
            self.retries,
            self.timeouts,
            self.tokens,
            self._rr,
        )

    def _save(self, *v) -> None:
        (
            self.n,
            self.area,
            self.last,
            self.arrivals,
            self.served,
            self.good,
            self.wasted,
            self.busy_s,
            self.served_sojourn,
            self._seq,
            self.max_queue,
            self.wait_sum,
            self.requests,
            self.retries,
            self.timeouts,
            self.tokens,
            self._rr,
        ) = v

    def _feed_one(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        """``feed_plain`` without preemption, written out. Each turn of the loop
        takes the earliest of: a heap entry (a completion, or a retry after its backoff), a
        client deadline, the next stream event; ties in that order, as ``feed_plain`` has them.
        Stream arrivals and retries share the arrival code below. Only a drop goes through the
        methods, with the counters saved before and loaded after."""
        speed = self.speed
        gs = []  # per queue: (busy, servers, discipline, its deque or None, push, pop or None)
        for g in self.groups:
            disc = g.disc
            q = disc.q if disc.append_only or disc.pop_end else None  # the deque behind push and pop
            pop = (q.popleft if disc.pop_end == "left" else q.pop) if disc.pop_end else None
            gs.append((g.busy, g.servers, disc, q, q.append if disc.append_only else disc.push, pop))
        ng, split = len(gs), self.split
        sizes = [(g[0], g[3].__len__ if g[3] is not None else g[2].__len__) for g in gs]  # for "shortest"
        busy, servers, disc, q, push, pop = gs[0]
        heap, timers, timeout = self._heap, self._timers, self.timeout
        limit, backoff, budget, rng = self.retry_limit, self.backoff, self.budget, self.rng
        waits, low, high, soj = self.waits.v, self.low_waits.v, self.high_waits.v, self.sojourns.v
        good_times = self.good_times
        (
            n,
            area,
            last,
            arrivals,
            served,
            good,
            wasted,
            busy_s,
            ssum,
            seq,
            max_queue,
            wsum,
            requests,
            retries,
            timeouts,
            tokens,
            rr,
        ) = self._load()
        k = lo
        te = events[k]["t"] if k < hi else until
        while True:
            if timers:
                while timers and timers[0].done:
                    timers.popleft()
                d = timers[0].arrival + timeout if timers else _INF
            else:
                d = _INF
            h = heap[0][0] if heap else _INF
            if h <= d and h <= te:
                t, _, job, ver = heappop(heap)
                if ver < 0:  # a retry after its backoff: self._resend(job, t)
                    old = job
                    retries += 1
                    job = Job(arrivals, old.client, old.attempt + 1, t, old.size, old.cls)
                else:  # a completion: self._complete(job, t), written out
                    if ng > 1:
                        busy, servers, disc, q, push, pop = gs[job.group]
                    busy.remove(job)
                    busy_s += t - job.start
                    area += n * (t - last)
                    last = t
                    n -= 1
                    job.done = True
                    served += 1
                    s = t - job.arrival
                    soj.append(s)
                    ssum += s
                    if job.gone:
                        wasted += 1
                    else:
                        good += 1
                        good_times.append(t)
                    if pop is None:
                        nxt = disc.pop(t)
                    else:
                        nxt = pop() if q else None
                    if nxt is not None:  # self._start(g, nxt, t), written out
                        if nxt.start < 0:
                            w = t - nxt.arrival
                            waits.append(w)
                            wsum += w
                            (low if nxt.cls else high).append(w)
                        nxt.start = t
                        busy.append(nxt)
                        heappush(heap, (t + nxt.remaining / speed, seq, nxt, nxt.ver))
                        seq += 1
                    if pop is None and disc.shed:
                        self._save(
                            n,
                            area,
                            last,
                            arrivals,
                            served,
                            good,
                            wasted,
                            busy_s,
                            ssum,
                            seq,
                            max_queue,
                            wsum,
                            requests,
                            retries,
                            timeouts,
                            tokens,
                            rr,
                        )
                        self._drain(disc, t)
                        (
                            n,
                            area,
                            last,
                            arrivals,
                            served,
                            good,
                            wasted,
                            busy_s,
                            ssum,
                            seq,
                            max_queue,
                            wsum,
                            requests,
                            retries,
                            timeouts,
                            tokens,
                            rr,
                        ) = self._load()
                    continue
            elif d <= te:  # a client gives up: self._expire(job, d), written out with _retry
                t = d
                old = timers.popleft()
                old.gone = True
                timeouts += 1
                if old.attempt >= limit:
                    continue
                if budget:
                    if tokens < 1.0:
                        continue
                    tokens -= 1.0
                delay = backoff * (1 << old.attempt) * rng.random() if backoff else 0.0
                if delay:
                    heappush(heap, (t + delay, seq, old, -1))
                    seq += 1
                    continue
                retries += 1
                job = Job(arrivals, old.client, old.attempt + 1, t, old.size, old.cls)
            elif k < hi:  # the next stream event
                ev = events[k]
                k += 1
                t = te
                te = events[k]["t"] if k < hi else until
                if ev["kind"] != "request":
                    continue
                self.t = t
                requests += 1
                if budget:
                    tokens = min(BUDGET_CAP, tokens + budget)
                job = Job(arrivals, ev["id"], 0, t, ev["size"], ev.get("cls", 0))
            else:
                break
            # an arrival at t (from the stream or a retry): self._arrive(job, t), written out
            arrivals += 1
            area += n * (t - last)
            last = t
            n += 1
            if timeout:
                timers.append(job)
            if ng > 1:  # self._pick(job), written out
                if split == "random":
                    i = int(rng.random() * ng)
                elif split == "round_robin":
                    rr = i = (rr + 1) % ng
                else:
                    loads = [len(b) + size() for b, size in sizes]
                    i = loads.index(min(loads))
                job.group = i
                busy, servers, disc, q, push, pop = gs[i]
            if len(busy) < servers:
                if job.start < 0:
                    w = t - job.arrival
                    waits.append(w)
                    wsum += w
                    (low if job.cls else high).append(w)
                job.start = t
                busy.append(job)
                heappush(heap, (t + job.remaining / speed, seq, job, job.ver))
                seq += 1
            elif disc.append_only:
                push(job)
                if len(q) > max_queue:
                    max_queue = len(q)
            elif push(job, t):
                if len(disc) > max_queue:
                    max_queue = len(disc)
            else:
                self._save(
                    n,
                    area,
                    last,
                    arrivals,
                    served,
                    good,
                    wasted,
                    busy_s,
                    ssum,
                    seq,
                    max_queue,
                    wsum,
                    requests,
                    retries,
                    timeouts,
                    tokens,
                    rr,
                )
                self._drop(job, t)
                (
                    n,
                    area,
                    last,
                    arrivals,
                    served,
                    good,
                    wasted,
                    busy_s,
                    ssum,
                    seq,
                    max_queue,
                    wsum,
                    requests,
                    retries,
                    timeouts,
                    tokens,
                    rr,
                ) = self._load()
        self._save(
            n,
            area,
            last,
            arrivals,
            served,
            good,
            wasted,
            busy_s,
            ssum,
            seq,
            max_queue,
            wsum,
            requests,
            retries,
            timeouts,
            tokens,
            rr,
        )
        self.t = until
