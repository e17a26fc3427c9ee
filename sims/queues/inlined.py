"""The queue panel's hot loop: ``QueuePanel.feed_plain`` without preemption, written out.

``QueuePanel`` inherits it; every step names the method of ``panel.py`` it inlines, and
``tests/test_queues.py`` checks that both loops give the same state on every preset and
discipline. The loop keeps the panel's counters in locals, read once at the start and written
back once at the end: every path, drops and retries included, is written out here, so no method
runs in between that would need them in ``self``.
"""

from __future__ import annotations

from heapq import heappop, heappush

from sims.queues.jobs import BUDGET_CAP, Job

_INF = float("inf")


class InlinedFeed:
    """``_feed_one``: ``feed_plain`` without preemption, as one loop."""

    def _feed_one(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        """``feed_plain`` without preemption, written out. Each turn of the loop takes the
        earliest of: a heap entry (a completion, or a retry after its backoff), a client deadline,
        the next stream event; ties in that order, as ``feed_plain`` has them. Then the arrivals
        and drops that turn causes at the same instant, depth first as the methods call each other:
        an arrival (from the stream or a retry) the discipline refuses is dropped, a drop may retry
        at once, and the jobs a discipline shed at a completion are dropped one after another."""
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
        n, area, last, seq, rr = self.n, self.area, self.last, self._seq, self._rr
        arrivals, served, good, wasted, dropped = self.arrivals, self.served, self.good, self.wasted, self.dropped
        busy_s, ssum, wsum, max_queue = self.busy_s, self.served_sojourn, self.wait_sum, self.max_queue
        requests, retries, timeouts, tokens = self.requests, self.retries, self.timeouts, self.tokens
        shed: list = []  # jobs a discipline shed at this instant, still to drop, the last first
        again = None  # a job whose client may retry at this instant
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
                    job = None
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
                    if pop is not None or not disc.shed:
                        continue
                    shed = disc.shed[::-1]  # self._drain(disc, t): each dropped below, in shed order
                    disc.shed.clear()
            elif d <= te:  # a client gives up: self._expire(job, d), written out
                t = d
                job = None
                again = timers.popleft()
                again.gone = True
                timeouts += 1
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
            # what that set off at t, depth first as the methods call each other: a retry may
            # arrive at once, a refused arrival is dropped, a dropped job's client may retry
            while True:
                if job is not None:  # an arrival: self._arrive(job, t), written out
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
                    if len(busy) < servers:  # self._start(g, job, t), written out
                        if job.start < 0:
                            w = t - job.arrival
                            waits.append(w)
                            wsum += w
                            (low if job.cls else high).append(w)
                        job.start = t
                        busy.append(job)
                        heappush(heap, (t + job.remaining / speed, seq, job, job.ver))
                        seq += 1
                        if not shed:  # it stays; on to the next shed job, if any
                            break
                        job = None
                        continue
                    if disc.append_only:
                        push(job)
                        if len(q) > max_queue:
                            max_queue = len(q)
                        if not shed:
                            break
                        job = None
                        continue
                    if push(job, t):
                        if len(disc) > max_queue:
                            max_queue = len(disc)
                        if not shed:
                            break
                        job = None
                        continue
                    gone = job  # refused: dropped below
                    job = None
                elif again is not None:  # self._retry(again, t), written out
                    old, again = again, None
                    if old.attempt < limit and not (budget and tokens < 1.0):
                        if budget:
                            tokens -= 1.0
                        delay = backoff * (1 << old.attempt) * rng.random() if backoff else 0.0
                        if not delay:
                            retries += 1  # self._resend(old, t): it arrives now
                            job = Job(arrivals, old.client, old.attempt + 1, t, old.size, old.cls)
                            continue
                        heappush(heap, (t + delay, seq, old, -1))  # full jitter: uniform over [0, backoff * 2**attempt)
                        seq += 1
                    if not shed:
                        break
                    continue
                elif shed:
                    gone = shed.pop()
                else:
                    break
                area += n * (t - last)  # self._drop(gone, t), written out
                last = t
                n -= 1
                dropped += 1
                gone.done = True
                if gone.start < 0:
                    w = t - gone.arrival
                    waits.append(w)
                    wsum += w
                    (low if gone.cls else high).append(w)
                soj.append(t - gone.arrival)
                if not gone.gone:
                    again = gone
        self.n, self.area, self.last, self._seq, self._rr = n, area, last, seq, rr
        self.arrivals, self.served, self.good, self.wasted, self.dropped = arrivals, served, good, wasted, dropped
        self.busy_s, self.served_sojourn, self.wait_sum, self.max_queue = busy_s, ssum, wsum, max_queue
        self.requests, self.retries, self.timeouts, self.tokens = requests, retries, timeouts, tokens
        self.t = until
