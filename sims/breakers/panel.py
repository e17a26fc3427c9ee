"""The breakers panel: clients call the backend through one breaker, and retry what fails.

Each stream call is a client request. Its attempt asks the breaker (``machine.Breaker``): refused,
the request ends at once (refused fast; a client does not retry a refusal); let through, it reaches
the backend (``backend.Backend``), whose answer comes back after the call's latency, or after the
client's ``timeout`` (then a failure). The breaker records every answer. A failed attempt is
retried by the queues topic's retry model (``sims.queues.retry``: at most ``retries`` times, full
jitter backoff, an optional budget); a retry's draws come from the panel's own generator. Answers
and retries wait on one ``Clock``.

Latency percentiles count every request: one still waiting counts with its age, as a lower bound
(``*_censored``). Time to open runs from the latest fault's start to the breaker's first opening
after it; time to close from the latest recovery to its first closing after it (0 when it already
was there); until then each is the time so far, censored.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque

from sims.breakers import backend as _backend
from sims.breakers.machine import OPEN, SPAN, Breaker
from sims.core.clock import Clock
from sims.core.dists import exponential
from sims.core.diverge import Decision
from sims.core.metrics import ratio
from sims.core.panel import Checkpointed, Panel
from sims.queues import retry
from sims.queues.stats import Tally

SLOT = 0.5  # seconds per column of the view's outcome histogram
SLOW_MARK = 1.0  # the view calls an answer slow past this (or past the policy's own slow-call threshold, if lower)
_OK, _FAILED, _SLOW, _REFUSED = 1, 2, 3, 4  # columns of a slot: [k, ok, failed, slow, refused]


class Request(Checkpointed):
    """One client request: its first attempt's time and the attempt now under way (0 = first)."""

    __slots__ = ("id", "start", "attempt")

    def __init__(self, id: int, start: float) -> None:
        self.id = id
        self.start = start
        self.attempt = 0


class BreakerPanel(Panel):
    topic = "breakers"

    def __init__(self, name: str, params: dict, ctx, policy) -> None:
        super().__init__(name, params, ctx)
        self.policy = policy
        self.breaker = Breaker(policy)
        self.backend = _backend.Backend()
        self.clock = Clock()  # (t, seq, (request, failed, seconds)) answers; (t, seq, request) retries
        self.rng = ctx.rng("breaker")  # adaptive throttling's draws
        self.retry_rng = ctx.rng("retries")  # backoff jitter, and the backend's draws for retries
        self.timeout = params["timeout"]
        self.retry_limit = params["retries"]
        self.backoff = params["backoff"]
        self.budget = params["retry_budget"]
        self.tokens = retry.BUDGET_CAP if self.budget else 0.0
        self.slow_mark = min(policy.slow_call, SLOW_MARK) if policy.slow_call else SLOW_MARK  # one mark for every panel
        self.t = 0.0
        self.waiting: dict[int, float] = {}  # request id -> start, for requests without an answer
        self.latencies = Tally()  # seconds from a request's first attempt to its final answer
        self.good_times: list[float] = []  # when each request succeeded, ascending
        self.slots: deque[list] = deque()  # the view's histogram: [k, ok, failed, slow, refused]
        self.calls = self.attempts = self.retries = self.sent = self.backend_failures = 0
        self.refused = self.succeeded = self.failed = self.refused_requests = 0

    # -- the mechanism --------------------------------------------------------------------------
    def _slot(self, t: float, column: int) -> None:
        k = int(t // SLOT)
        slots = self.slots
        if not slots or slots[-1][0] != k:
            slots.append([k, 0, 0, 0, 0])
            while slots[0][0] <= k - SPAN / SLOT:
                slots.popleft()
        slots[-1][column] += 1

    def _attempt(self, req: Request, t: float, u: float, z: float) -> None:
        self.attempts += 1
        if not self.breaker.permit(t, self.rng):
            self.refused += 1
            self._slot(t, _REFUSED)
            self.refused_requests += 1
            self._finish(req, t)
            return
        self.sent += 1
        failed, seconds = self.backend.call(t, u, z)
        if self.timeout and seconds > self.timeout:
            failed, seconds = True, self.timeout  # the client stops waiting: a failure
        self.clock.schedule(t + seconds, (req, failed, seconds))

    def _answer(self, t: float, req: Request, failed: bool, seconds: float) -> None:
        self.breaker.outcome(t, failed, seconds)
        self._slot(t, _FAILED if failed else _SLOW if seconds > self.slow_mark else _OK)
        if not failed:
            self.succeeded += 1
            self.good_times.append(t)
            self._finish(req, t)
            return
        self.backend_failures += 1
        left = retry.spend(req.attempt, self.retry_limit, self.budget, self.tokens)
        if left is None:
            self.failed += 1
            self._finish(req, t)
            return
        self.tokens = left
        self.retries += 1
        req.attempt += 1
        self.clock.schedule(t + retry.delay(self.backoff, req.attempt - 1, self.retry_rng), req)

    def _finish(self, req: Request, t: float) -> None:
        self.latencies.add(t - req.start)
        self.waiting.pop(req.id, None)

    def _run(self, until: float) -> None:
        clock = self.clock
        heap = clock.heap
        while heap and heap[0][0] <= until:
            t, item = clock.pop()
            if isinstance(item, Request):  # a retry after its backoff
                rng = self.retry_rng
                self._attempt(item, t, rng.random(), exponential(rng, 1.0))
            else:
                self._answer(t, *item)
        self.breaker.tick(until)
        clock.now = max(clock.now, until)

    # -- the panel interface --------------------------------------------------------------------
    def advance(self, until: float) -> None:
        self._run(until)
        self.t = until

    def on_event(self, ev: dict) -> None:
        kind = ev["kind"]
        t = ev["t"]
        if kind == "call":
            self.calls += 1
            self.tokens = retry.earn(self.tokens, self.budget)
            req = Request(ev["id"], t)
            self.waiting[req.id] = t
            self._attempt(req, t, ev["u"], ev["z"])
        elif kind == "health":
            was = self.backend.fault
            self.backend.set(ev, SPAN)
            if self.backend.fault != was:
                self.breaker.fault(t, bool(self.backend.fault))

    def next_time(self) -> float | None:
        return self.clock.peek()

    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        refused = self.refused
        self.feed(events, k, k + 1, ev["t"])
        if ev["kind"] != "call":
            return None
        b = self.breaker
        facts = {
            "state": b.state,
            "since": b.since,
            "reason": b.reason,
            "trial": self.policy.trials - b.trials_left,
            "window": self.policy.describe(ev["t"]),
        }
        return Decision("reject" if self.refused > refused else "admit", f"call #{ev['id']}", facts=facts)

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        return self.policy.explain(decision, other)

    # -- reading --------------------------------------------------------------------------------
    def _since(self, start: float | None, end: float | None, now: float) -> tuple[float, int]:
        """(end - start, 0), or (now - start, 1) while ``end`` has not come; (0, 0) without a start."""
        if start is None:
            return 0.0, 0
        return (end - start, 0) if end is not None else (now - start, 1)

    def metrics(self) -> dict[str, float]:
        now = self.t
        b = self.breaker
        ages = sorted(now - s for s in self.waiting.values())
        good = len(self.good_times) - bisect_right(self.good_times, now - 1.0)
        m = {
            "calls": self.calls,
            "attempts": self.attempts,
            "retries": self.retries,
            "backend_calls": self.sent,
            "backend_failures": self.backend_failures,
            "refused": self.refused,
            "refused_rate": ratio(self.refused, self.attempts),
            "succeeded": self.succeeded,
            "failed": self.failed,
            "goodput": ratio(self.succeeded, self.calls),
            "goodput_1s": ratio(good, min(1.0, now)),
            "backend_rps": ratio(self.backend.load(now), min(_backend.LOAD_WINDOW, now)),
            "in_flight": len(self.waiting),
            "opens": b.opens,
            "flaps": b.flaps,
            "time_open": b.time_open(now),
            "open_level": b.level(now),
        }
        m["time_to_open"], m["time_to_open_censored"] = self._since(b.fault_at, b.first_open, now)
        m["time_to_close"], m["time_to_close_censored"] = self._since(b.recovered_at, b.first_close, now)
        for q, label in ((0.5, "p50"), (0.99, "p99")):
            m[f"{label}_latency"], m[f"{label}_latency_censored"] = self.latencies.percentile(q, ages)
        return m

    def view(self) -> dict:
        now = self.t
        b = self.breaker
        k0 = int(now // SLOT) - int(SPAN / SLOT) + 1
        return {
            "kind": "breaker",
            "t": now,
            "span": SPAN,
            "state": b.state,
            "level": b.level(now),
            "until": b.since + self.policy.wait if b.state == OPEN else None,
            "trials": self.policy.trials,
            "trials_left": b.trials_left,
            "window": self.policy.state(now),
            "bands": b.bands(now),
            "health": [list(c) for c in self.backend.changes],
            "slot": SLOT,
            "slow_mark": self.slow_mark,
            "slots": [list(s) for s in self.slots if s[0] >= k0],
        }

    def check_invariants(self) -> None:
        self.breaker.check_invariants()
        self.backend.check_invariants()
        assert self.attempts == self.calls + self.retries - self._pending_retries(), "an attempt was lost"
        assert self.attempts == self.sent + self.refused
        assert self.refused == self.refused_requests
        done = self.succeeded + self.failed + self.refused_requests
        assert done + len(self.waiting) == self.calls, (done, len(self.waiting), self.calls)
        assert len(self.latencies) == done
        answered = self.sent - sum(1 for item in self.clock if not isinstance(item, Request))
        assert self.succeeded + self.backend_failures == answered, (self.succeeded, self.backend_failures, answered)

    def _pending_retries(self) -> int:
        return sum(1 for item in self.clock if isinstance(item, Request))
