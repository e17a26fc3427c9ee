"""Token-per-minute limits for LLM APIs: RPM and TPM enforced together over a sliding window.

The cost of a request is unknown at admission (the output length is known only afterwards), so
each policy answers "what do we count, and when?":

- ``tpm_reserve``: reserve prompt + max_tokens at admission, reconcile to actual at completion.
- ``tpm_estimate``: charge max(max_tokens, prompt characters / 4) at admission, never reconcile.
- ``tpm_post_debit``: admit while the counter is below the limit, debit actual tokens after the
  response (a request admitted at 99% of the limit can overshoot it by its whole size).
- ``tpm_shared``: ``workers`` gateways share one budget; each sees the global counter as of its
  last sync (every ``sync`` seconds) plus its own admissions since, so they over-admit together.

Clients (``client``): ``none`` gives up on a 429, ``immediate`` retries after ``retry_delay``,
``backoff`` waits uniform(0, min(cap, base * 2^n)) (full jitter, panel-local rng), ``retry_after``
waits the server's retry-after (whole seconds). Every attempt ends exactly one way: admitted,
rejected (final) or retried, so ``attempts == accepted + rejected + retries``.

This module is the mechanism and the client model (``TpmPanel``); the four policies are in
``tpm_policies.py``.
"""

from __future__ import annotations

from collections import deque
from math import ceil

from sims.core.clock import Clock
from sims.core.diverge import Decision
from sims.core.limits import MAX_DURATION
from sims.core.metrics import ratio
from sims.core.panel import Panel
from sims.core.registry import Param
from sims.ratelimit.exact import ticks
from sims.ratelimit.tpm_window import RequestLog

CLIENTS = ("none", "immediate", "backoff", "retry_after")

_DONE, _RETRY, _SYNC = 0, 1, 2  # heap item kinds
_RECENT = 40  # decisions kept for the view

COMMON = {
    "tpm": Param(int, 100_000, "tokens per window (prompt + output)", min=1, max=10**12),
    "rpm": Param(int, 0, "requests per window; 0 = no request limit", min=0, max=10**9),
    "window": Param(float, 60.0, "sliding window of the limits, seconds", above=0.0, max=MAX_DURATION),
    "client": Param(
        str,
        "none",
        "on a 429: none | immediate | backoff | retry_after",
        choices=("none", "immediate", "backoff", "retry_after"),
    ),
    "max_retries": Param(int, 8, "retries before a client gives up", min=0, max=100),
    "retry_delay": Param(float, 0.05, "immediate client: seconds before it retries", min=0.0, max=MAX_DURATION),
    "backoff_base": Param(float, 1.0, "backoff client: first backoff ceiling, seconds", min=0.0, max=MAX_DURATION),
    "backoff_cap": Param(float, 60.0, "backoff client: largest backoff ceiling, seconds", min=0.0, max=MAX_DURATION),
    "count_rejected": Param(bool, False, "a 429 still uses a request slot (OpenAI counts them)"),
    "ttft": Param(float, 0.5, "seconds to the first output token", min=0.0, max=MAX_DURATION),
    "decode_tps": Param(float, 50.0, "output tokens per second per request", above=0.0, max=1e6),
}

# a "burst" event (a "send N requests" action) without lengths uses these
_BURST_DEFAULTS = {"prompt_len": 200, "output_len": 300, "max_tokens": 4096}


class TpmPanel(Panel):
    """The mechanism shared by every TPM policy: attempts, retries and completions on one heap
    ordered by (time, sequence); subclasses decide admission in ``_admit`` and settle in
    ``_complete``."""

    topic = "ratelimit"
    PARAMS = COMMON

    def __init__(self, name: str, params: dict, ctx) -> None:
        super().__init__(name, params, ctx)
        p = params
        if p["tpm"] < 1 or p["rpm"] < 0 or not p["window"] > 0:
            raise ValueError(
                f"{self.policy_name}: needs tpm >= 1, rpm >= 0, window > 0; got {p['tpm']}, {p['rpm']}, {p['window']}"
            )
        if p["client"] not in CLIENTS:
            raise ValueError(f"client {p['client']!r}: expected one of {', '.join(CLIENTS)}")
        if not p["decode_tps"] > 0 or p["ttft"] < 0 or p["retry_delay"] < 0 or p["max_retries"] < 0:
            raise ValueError("decode_tps must be > 0 and ttft, retry_delay, max_retries >= 0")
        self.tpm, self.rpm, self.window = p["tpm"], p["rpm"], p["window"]
        self.client = p["client"]
        self.ttft, self.tps = p["ttft"], p["decode_tps"]
        self._rng = ctx.rng("backoff")
        self.clock = Clock()  # (kind, a, b, c): responses, retries and syncs
        self._why = ""  # why the last _admit said no: "rpm", "tpm" or "never"
        self.now = 0  # the current attempt's time in ticks (exact.ticks), for _admit
        self.reqlog = RequestLog(self.window)  # admitted (and, with count_rejected, 429'd) times
        self._window_ticks = ticks(self.window)  # every window edge is compared in integer ticks
        self.actual: deque[tuple[int, int]] = deque()  # (t in ticks, actual tokens) admitted in the window
        self.actual_total = 0  # their sum
        self.peak_actual = 0
        self.peak_counter = 0  # the most tokens the limiter's own counter held
        self._measured: deque[int] = deque()  # admitted times (ticks) in the measure window
        self._measure_window = ticks(p["measure_window"])
        self.max_in_window = 0
        self.count_rejected = p["count_rejected"]
        self.requests = self.accepted = self.rejected = 0
        self.attempts = self.retries = self.throttled = self.false_rejects = 0
        self.tokens_charged = self.tokens_admitted = self.tokens_used = 0
        self.in_flight = self.waiting = 0
        self.wait_total = 0.0
        self.recent: deque[tuple] = deque(maxlen=_RECENT)  # (t, outcome), newest last

    # -- policy hooks -------------------------------------------------------------------------
    def _admit(self, t: float, ev: dict) -> object | None:
        """A handle for an admitted attempt, or None with ``self._why`` set."""
        raise NotImplementedError

    def _complete(self, t: float, handle: object, actual: int) -> None:
        """The response is done: ``actual`` = prompt + output tokens."""

    def _retry_after(self, t: float, ev: dict) -> float | None:
        """Seconds until this request could fit (None: never)."""
        return None

    def _counter(self) -> int:
        """Tokens the limiter's counter holds now (for the view)."""
        return 0

    def _sync(self, t: float) -> None:
        """A scheduled sync (only the shared-budget policy uses it)."""

    # -- the mechanism ------------------------------------------------------------------------
    def _push(self, t: float, kind: int, a: object, b: object, c: object) -> None:
        self.clock.schedule(t, (kind, a, b, c))

    def _run(self, until: float) -> None:
        heap, pop = self.clock.heap, self.clock.pop
        while heap and heap[0][0] <= until:
            t, (kind, a, b, c) = pop()
            if kind == _DONE:
                self.in_flight -= 1
                self.tokens_used += b
                self._complete(t, a, b)
            elif kind == _RETRY:
                self.waiting -= 1
                self._attempt(t, a, b, c)
            else:
                self._sync(t)

    def _attempt(self, t: float, ev: dict, first: float, n: int) -> None:
        """One attempt at t: the hot path, so the window updates are written out inline."""
        self.attempts += 1
        log = self.actual
        tn = self.now = ticks(t)
        edge = tn - self._window_ticks
        while log and log[0][0] <= edge:
            self.actual_total -= log.popleft()[1]
        out = ev["output_len"]
        actual = ev["prompt_len"] + out
        handle = self._admit(t, ev)
        if handle is not None:
            self.accepted += 1
            self.in_flight += 1
            self.tokens_admitted += actual
            log.append((tn, actual))
            total = self.actual_total = self.actual_total + actual
            if total > self.peak_actual:
                self.peak_actual = total
            mw = self._measured  # admitted times in (t - measure_window, t]
            mw.append(tn)
            edge = tn - self._measure_window
            while mw[0] <= edge:
                mw.popleft()
            if len(mw) > self.max_in_window:
                self.max_in_window = len(mw)
            self.wait_total += t - first
            self.clock.schedule(t + self.ttft + out / self.tps, (_DONE, handle, actual, None))
            self.recent.append((t, "ok"))
            return
        self.throttled += 1
        why = self._why
        if why == "tpm" and self.actual_total + actual <= self.tpm:
            self.false_rejects += 1
        if self.count_rejected and self.rpm:
            self.reqlog.times.append(tn)
        delay = None if self.client == "none" else self._delay(t, ev, n, why)
        if delay is None:
            self.rejected += 1
            self.recent.append((t, "429"))
        else:
            self.retries += 1
            self.waiting += 1
            self.clock.schedule(t + delay, (_RETRY, ev, first, n + 1))
            self.recent.append((t, "retry"))

    def _delay(self, t: float, ev: dict, n: int, why: str) -> float | None:
        client = self.client
        if client == "none" or why == "never" or n >= self.params["max_retries"]:
            return None
        if client == "immediate":
            return self.params["retry_delay"]
        if client == "backoff":
            ceiling = self.params["backoff_base"] * (1 << min(n, 40))
            return self._rng.random() * min(self.params["backoff_cap"], ceiling)
        wait = self._retry_after(t, ev)
        if wait is None:
            return None
        return float(max(1, ceil(wait)))  # Retry-After is whole seconds

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        heap = self.clock.heap
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if kind == "request":
                t = ev["t"]
                if heap and heap[0][0] <= t:
                    self._run(t)
                self.requests += 1
                self._attempt(t, ev, t, 0)
            elif kind == "burst":
                t = ev["t"]
                if heap and heap[0][0] <= t:
                    self._run(t)
                req = {k2: ev.get(k2, v) for k2, v in _BURST_DEFAULTS.items()}
                req["prompt_chars"] = req["prompt_len"] * 4
                for _ in range(ev.get("count", 1)):
                    self.requests += 1
                    self._attempt(t, dict(req), t, 0)
        self._run(until)

    def advance(self, until: float) -> None:
        self._run(until)

    def on_event(self, ev: dict) -> None:
        self.feed([ev], 0, 1, ev["t"])

    def next_time(self) -> float | None:
        return self.clock.peek()

    # -- recording mode (sims/core/diverge.py) -------------------------------------------------
    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        if ev["kind"] != "request":
            self.feed(events, k, k + 1, ev["t"])
            return None
        accepted, retries = self.accepted, self.retries
        self.feed(events, k, k + 1, ev["t"])
        action = "admit" if self.accepted > accepted else "retry" if self.retries > retries else "reject"
        facts = {"why": self._why, "counter": self._counter(), "ev": ev}
        return Decision(action, f"request #{k}", facts=facts)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        """The policy's sentence: ``rule`` says what it counts, for the reject case."""
        raise NotImplementedError(f"{type(self).__name__} does not explain its decisions")

    def _say(self, d: Decision, counts: str) -> str:
        f, name = d.facts, self.policy_name
        ev = f["ev"]
        size = f"prompt {ev['prompt_len']}, max_tokens {ev['max_tokens']}"
        if d.action == "admit":
            return f"{name} admitted {d.subject} ({size}): {counts} left room under the {self.tpm} TPM limit"
        if f["why"] == "rpm":
            cause = f"the window already held {self.rpm} requests (the RPM limit)"
        elif f["why"] == "never":
            cause = f"its charge exceeds the whole {self.tpm} TPM limit, so it can never fit"
        else:
            cause = f"{counts} left no room under the {self.tpm} TPM limit"
        then = f"the {self.client} client will retry" if d.action == "retry" else "the client gives up"
        return f"{name} answered 429 to {d.subject} ({size}): {cause}; {then}"

    # -- reading ------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        tpm = self.tpm
        return {
            "requests": self.requests,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "reject_rate": ratio(self.rejected, self.requests),
            "max_in_any_window": self.max_in_window,
            "attempts": self.attempts,
            "retries": self.retries,
            "throttled": self.throttled,
            "amplification": ratio(self.attempts, self.requests),
            "false_rejects": self.false_rejects,
            "tokens_charged": self.tokens_charged,
            "tokens_admitted": self.tokens_admitted,
            "tokens_used": self.tokens_used,
            "peak_window_tokens": self.peak_actual,
            "usage_ratio": self.peak_actual / tpm,
            "overshoot": max(0, self.peak_actual - tpm),
            "peak_counter": self.peak_counter,
            "over_admission": max(0, self.peak_counter - tpm),
            "in_flight": self.in_flight,
            "waiting": self.waiting,
            "mean_wait": ratio(self.wait_total, self.accepted),
        }

    def view(self) -> dict:
        return {
            "kind": "tpm",
            "limit": self.tpm,
            "rpm": self.rpm,
            "counter": self._counter(),
            "actual": self.actual_total,
            "in_flight": self.in_flight,
            "waiting": self.waiting,
            "recent": [list(r) for r in self.recent],
        }

    def check_invariants(self) -> None:
        assert self.attempts == self.accepted + self.rejected + self.retries, "an attempt was lost"
        assert self.requests == self.accepted + self.rejected + self.waiting, "a request was lost"
        assert self.waiting == sum(1 for item in self.clock if item[0] == _RETRY)
        assert self.in_flight == sum(1 for item in self.clock if item[0] == _DONE)
        assert self.throttled == self.rejected + self.retries
        assert self.actual_total == sum(a for _, a in self.actual)
