"""The breaker's state machine, the mechanism every policy shares (Nygard, "Release It!", 2007).

CLOSED lets every call through (adaptive throttling refuses some at random: ``Policy.admit``) and
asks the policy, after each outcome or on the policy's timer (Hystrix's health snapshot), whether
its window says trip. OPEN refuses every call until ``policy.wait`` has passed; the next call then
finds it HALF_OPEN (Resilience4j's default: no timer moves it). HALF_OPEN lets ``policy.trials``
calls through, refuses the rest, and asks the policy after each outcome whether to close or to open
again. Every outcome goes to the policy's window whatever the state (a call let through while
closed may end after the breaker opened); closing clears the window.

A policy without states (``stateful = False``, adaptive throttling) stays CLOSED here; its
rejection probability is its ``level``, and the books count it THROTTLING while that is above 0.
Transitions are kept for the view (the last ``SPAN`` seconds) and counted: ``opens`` (into OPEN or
THROTTLING), ``flaps`` (back to CLOSED: one open/close cycle), ``open_s`` (time not closed).
"""

from __future__ import annotations

from random import Random

from sims.core.panel import Checkpointed

CLOSED, OPEN, HALF_OPEN, THROTTLING = "closed", "open", "half_open", "throttling"
SPAN = 40.0  # seconds of transitions kept for the view
_LEVEL = {CLOSED: 0.0, HALF_OPEN: 0.5, OPEN: 1.0}


class Breaker(Checkpointed):
    """One breaker around one backend. ``history`` holds ``[t, state, level]`` entries, oldest
    first, the last one the current state; ``trial`` the outcomes (failed, seconds) of half-open's
    calls so far; ``first_open`` / ``first_close`` the first opening after the latest fault started
    and the first closing after the backend last recovered (None: not yet)."""

    __slots__ = (
        "policy",
        "state",
        "since",
        "trials_left",
        "trial",
        "checked",
        "opens",
        "flaps",
        "open_s",
        "history",
        "fault_at",
        "recovered_at",
        "first_open",
        "first_close",
        "p",
        "reason",
    )

    def __init__(self, policy) -> None:
        self.policy = policy
        self.state = CLOSED  # the view's state: THROTTLING for a stateless policy whose level > 0
        self.since = 0.0  # when the state began
        self.trials_left = 0  # half-open calls still to let through
        self.trial: list[tuple[bool, float]] = []
        self.checked = 0  # timer policies: the last check was at checked * policy.period
        self.opens = 0
        self.flaps = 0
        self.open_s = 0.0  # seconds not closed, up to ``since``
        self.history: list[list] = [[0.0, CLOSED, 0.0]]
        self.fault_at: float | None = None
        self.recovered_at: float | None = None
        self.first_open: float | None = None
        self.first_close: float | None = None
        self.p = 0.0  # a stateless policy's rejection probability at its latest decision
        self.reason = ""  # why the latest transition happened, in the policy's words

    # -- what the panel calls -------------------------------------------------------------------
    def permit(self, t: float, rng: Random) -> bool:
        """Whether a call at ``t`` may go to the backend (False: refused fast)."""
        policy = self.policy
        self.tick(t)
        if not policy.stateful:
            ok = policy.admit(t, rng)
            self.p = level = policy.level(t)
            state = THROTTLING if level > 0 else CLOSED
            if state != self.state:
                self._to(t, state, level)
            elif state == THROTTLING and abs(level - self.history[-1][2]) >= 0.05:
                self._mark(t, state, level)  # the view's band follows the probability in 5% steps
            return ok
        if self.state == OPEN:
            if not policy.wait_over(t, self.since):
                return False
            self._to(t, HALF_OPEN)
            self.trials_left = policy.trials
            self.trial = []
        if self.state == HALF_OPEN:
            if not self.trials_left:
                return False
            self.trials_left -= 1
            return True
        return policy.admit(t, rng)

    def outcome(self, t: float, failed: bool, seconds: float) -> None:
        """A call the breaker let through ended at ``t`` after ``seconds``, failed or not."""
        policy = self.policy
        self.tick(t)
        policy.record(t, failed, seconds)
        if not policy.stateful:
            return
        if self.state == CLOSED:
            if not policy.period and policy.tripped(t):
                self._to(t, OPEN)
        elif self.state == HALF_OPEN:
            self.trial.append((failed, seconds))
            verdict = policy.verdict(self.trial)
            if verdict is not None:
                self._to(t, OPEN if verdict else CLOSED)

    def tick(self, until: float) -> None:
        """A timer policy judges its window at every multiple of its period up to ``until``."""
        period = self.policy.period
        if not period:
            return
        last = int(until // period)
        while self.checked < last:
            self.checked += 1
            if self.state == CLOSED:
                at = self.checked * period
                if self.policy.tripped(at):
                    self._to(at, OPEN)

    def fault(self, t: float, started: bool) -> None:
        """The backend's fault started (or it recovered) at ``t``: time to open (to close) runs
        from here, and is 0 when the breaker already is where it should be."""
        if started:
            self.fault_at = t
            self.first_open = t if self.state != CLOSED else None
        else:
            self.recovered_at = t
            self.first_close = t if self.state == CLOSED else None

    # -- transitions ----------------------------------------------------------------------------
    def _to(self, t: float, state: str, level: float | None = None) -> None:
        was = self.state
        if was == HALF_OPEN:
            failed = sum(1 for f, _ in self.trial if f)
            self.reason = f"{failed} of its {len(self.trial)} trial calls failed"
            if self.policy.slow_call:
                slow = sum(1 for _, s in self.trial if s > self.policy.slow_call)
                self.reason += f" and {slow} were slower than {self.policy.slow_call:g} s"
        elif state != HALF_OPEN:
            self.reason = self.policy.describe(t)
        if was != CLOSED:
            self.open_s += t - self.since
        if state == CLOSED:
            self.flaps += 1
            self.policy.clear()
            if self.first_close is None and self.recovered_at is not None:
                self.first_close = t
        elif state != HALF_OPEN:
            self.opens += 1
            if self.first_open is None and self.fault_at is not None:
                self.first_open = t
        if state == OPEN:
            self.trials_left = 0
        self.state = state
        self.since = t
        self._mark(t, state, _LEVEL.get(state, 0.0) if level is None else level)

    def _mark(self, t: float, state: str, level: float) -> None:
        history = self.history
        history.append([t, state, level])
        if len(history) > 64 and history[32][0] < t - SPAN:  # drop what the view no longer shows
            del history[:32]

    # -- reading --------------------------------------------------------------------------------
    def level(self, t: float) -> float:
        """0 closed, 0.5 half-open, 1 open; a stateless policy's rejection probability."""
        return _LEVEL[self.state] if self.policy.stateful else self.p

    def time_open(self, t: float) -> float:
        return self.open_s + (t - self.since if self.state != CLOSED else 0.0)

    def bands(self, t: float) -> list[list]:
        """``[t0, state, level]`` from ``t - SPAN`` on: the state at the window's start first."""
        lo = t - SPAN
        history = self.history
        i = len(history) - 1
        while i > 0 and history[i][0] > lo:
            i -= 1
        out = [list(h) for h in history[i:]]
        out[0][0] = max(out[0][0], lo)
        return out

    def check_invariants(self) -> None:
        policy = self.policy
        assert self.state in (CLOSED, OPEN, HALF_OPEN, THROTTLING), self.state
        assert policy.stateful or self.state == (THROTTLING if self.p > 0 else CLOSED), (self.state, self.p)
        assert not policy.stateful or self.state != THROTTLING
        assert 0 <= self.trials_left <= policy.trials, (self.trials_left, policy.trials)
        assert self.state == HALF_OPEN or self.trials_left == 0, (self.state, self.trials_left)
        assert len(self.trial) + self.trials_left <= policy.trials or self.state != HALF_OPEN
        assert 0 <= self.flaps <= self.opens, (self.flaps, self.opens)
        assert self.state == CLOSED or self.opens >= 1
        assert self.open_s >= 0 and self.history[-1][1] == self.state
        assert all(a[0] <= b[0] for a, b in zip(self.history, self.history[1:], strict=False))
        policy.check_invariants()
