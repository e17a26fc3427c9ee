"""Breaker policies: each only decides, over the state machine ``machine.Breaker`` and a window.

A policy says whether its window calls for tripping (``tripped``: after each outcome, or on its
timer when ``period`` > 0), how long the breaker stays open (``wait``), how many trial calls
half-open lets through (``trials``) and what their outcomes say (``verdict``: True open again,
False close, None not yet). ``record`` gets every outcome, ``clear`` empties the window when the
breaker closes, ``describe`` says in a few words what the window holds (the reasons read it).
A stateless policy (adaptive throttling) decides per call instead (``admit``), and its ``level``
is its rejection probability. ``none`` is the client without a breaker.
"""

from __future__ import annotations

from random import Random

from sims.breakers.machine import HALF_OPEN, OPEN
from sims.breakers.windows import CountWindow, TimeWindow
from sims.core.limits import MAX_DURATION
from sims.core.params import State
from sims.core.registry import Param, register_policy


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "0%"


class Policy:
    PARAMS: dict[str, Param] = {}
    stateful = True  # False: no open state; ``admit`` refuses calls at random (adaptive throttling)
    period = 0.0  # > 0: the window is judged every ``period`` seconds, not after each outcome
    wait = 60.0  # seconds open before the next call finds the breaker half-open
    trials = 1  # calls half-open lets through
    slow_call = 0.0  # > 0: a call that takes longer (seconds) counts as slow

    def admit(self, t: float, rng: Random) -> bool:
        """A closed breaker lets every call through."""
        return True

    def record(self, t: float, failed: bool, seconds: float) -> None:
        raise NotImplementedError

    def tripped(self, t: float) -> bool:
        raise NotImplementedError

    def verdict(self, trial: list[tuple[bool, float]]) -> bool | None:
        """After each half-open outcome: any failure opens again, all ``trials`` good close."""
        if any(failed for failed, _ in trial):
            return True
        return False if len(trial) >= self.trials else None

    def wait_over(self, t: float, opened: float) -> bool:
        return t >= opened + self.wait

    def clear(self) -> None:
        pass

    def level(self, t: float) -> float:
        return 0.0

    def describe(self, t: float) -> str:
        """What the window holds at ``t``, in a few words (the reasons quote it)."""
        return ""

    def state(self, t: float) -> dict:
        """The window for the view: calls, failures, slow and what they are measured against."""
        return {}

    def explain(self, d, other=None) -> str:
        """One sentence on letting a call through or refusing it (``d.facts``: the breaker's state
        after the decision, since when, why it got there, the trial calls used, the window)."""
        f = d.facts
        if d.action == "admit":
            if f["state"] == HALF_OPEN:
                why = f"half-open, it let this one through as trial call {f['trial']} of {self.trials}"
            elif self.stateful:
                why = f"closed, as {f['window']}"
            else:
                why = f"it refuses calls at random and not this one: {f['window']}"
            return f"{self.policy_name} let {d.subject} through to the backend: {why}"
        if f["state"] == OPEN:
            why = (
                f"open since t={f['since']:.3f} s, when {f['reason']}; it stays open "
                f"{self.wait:g} s before a trial call"
            )
        elif f["state"] == HALF_OPEN:
            why = f"half-open, and its {self.trials} trial call(s) were already let through"
        else:
            why = f"refused at random: {f['window']}"
        return f"{self.policy_name} refused {d.subject} fast: {why}"

    def check_invariants(self) -> None:
        pass


@register_policy("breakers", "none")
class NoBreaker(Policy):
    """No breaker: every call goes to the backend, however it is doing (the baseline)."""

    def record(self, t: float, failed: bool, seconds: float) -> None:
        pass

    def tripped(self, t: float) -> bool:
        return False

    def describe(self, t: float) -> str:
        return "there is no breaker: every call goes to the backend"


_PERCENT = {"above": 0.0, "max": 100.0}
_RING = State(fill=64)  # a count window holds each of its last N outcomes: a tuple in a list slot
_BUCKETS = State(fill=120)  # a time window holds a bucket ([k, counters...]) per second that saw a call


class Resilience4j(Policy):
    """Resilience4j's CircuitBreaker (``CircuitBreakerConfig``): trip when, with at least
    ``min_calls`` calls in the window, failures are >= ``failure_rate`` percent of them or calls
    slower than ``slow_call`` seconds are >= ``slow_rate`` percent; stay open ``wait`` seconds
    (waitDurationInOpenState), then let ``trials`` calls through (permittedNumberOfCallsInHalfOpenState)
    and judge those alone by the same thresholds once all have ended. Defaults are Resilience4j's:
    failure 50%, slow 100% of calls over 60 s (so slowness alone never trips), wait 60 s, 10 trials,
    window and minimum 100 calls."""

    def __init__(self, window, min_calls, failure_rate, slow_rate, slow_call, wait, trials, **_) -> None:
        self.min_calls = min_calls
        self.failure_rate, self.slow_rate, self.slow_call = failure_rate, slow_rate, slow_call
        self.wait, self.trials = wait, trials
        self.win = self.make_window(window)

    def make_window(self, size: int):
        raise NotImplementedError

    def over(self, calls: int, failures: int, slow: int) -> bool:
        """Resilience4j's check: the rates are judged from ``min_calls`` calls on (or all trials)."""
        return failures * 100 >= self.failure_rate * calls or slow * 100 >= self.slow_rate * calls

    def record(self, t: float, failed: bool, seconds: float) -> None:
        self.win.outcome(t, failed, seconds > self.slow_call)

    def tripped(self, t: float) -> bool:
        calls, failures, slow = self.win.totals(t)
        return calls >= max(1, self.min_calls) and self.over(calls, failures, slow)

    def verdict(self, trial: list[tuple[bool, float]]) -> bool | None:
        if len(trial) < self.trials:
            return None
        return self.over(len(trial), sum(f for f, _ in trial), sum(s > self.slow_call for _, s in trial))

    def clear(self) -> None:
        self.win.clear()

    def describe(self, t: float) -> str:
        calls, failures, slow = self.win.totals(t)
        return (
            f"{failures} of {self.window_words(calls)} failed ({_pct(failures, calls)}, trips at "
            f"{self.failure_rate:g}%) and {slow} were slower than {self.slow_call:g} s ({_pct(slow, calls)}, "
            f"trips at {self.slow_rate:g}%), judged from {self.min_calls} calls on"
        )

    def window_words(self, calls: int) -> str:
        raise NotImplementedError

    def state(self, t: float) -> dict:
        calls, failures, slow = self.win.totals(t)
        return {
            "calls": calls,
            "failures": failures,
            "slow": slow,
            "min_calls": self.min_calls,
            "failure_rate": self.failure_rate,
            "slow_rate": self.slow_rate,
            "slow_call": self.slow_call,
        }

    def check_invariants(self) -> None:
        self.win.check_invariants()


def _r4j_params(window: Param, slow_rate: float = 100.0, slow_call: float = 60.0) -> dict[str, Param]:
    return {
        "window": window,
        "min_calls": Param(
            int, 100, "minimumNumberOfCalls: calls in the window before it can trip", min=1, max=100_000
        ),
        "failure_rate": Param(float, 50.0, "failureRateThreshold: percent of calls failed that trips it", **_PERCENT),
        "slow_rate": Param(float, slow_rate, "slowCallRateThreshold: percent of calls slow that trips it", **_PERCENT),
        "slow_call": Param(
            float,
            slow_call,
            "slowCallDurationThreshold: a call slower than this (s) is slow",
            above=0.0,
            max=MAX_DURATION,
        ),
        "wait": Param(
            float, 60.0, "waitDurationInOpenState: seconds open before half-open", above=0.0, max=MAX_DURATION
        ),
        "trials": Param(int, 10, "permittedNumberOfCallsInHalfOpenState: trial calls", min=1, max=10_000),
    }


@register_policy("breakers", "count_based")
class CountBased(Resilience4j):
    """Resilience4j's COUNT_BASED sliding window: the outcomes of the last ``window`` calls
    (minimumNumberOfCalls is capped at the window, as Resilience4j caps it)."""

    PARAMS = _r4j_params(Param(int, 100, "slidingWindowSize: the last N calls", min=1, max=100_000, state=_RING))

    def make_window(self, size: int) -> CountWindow:
        self.min_calls = min(self.min_calls, size)
        return CountWindow(size)

    def window_words(self, calls: int) -> str:
        return f"the last {calls} calls"


@register_policy("breakers", "time_based")
class TimeBased(Resilience4j):
    """Resilience4j's TIME_BASED sliding window: the outcomes of the last ``window`` seconds, in
    one bucket per second (the current second and the ``window`` - 1 before it)."""

    PARAMS = _r4j_params(Param(int, 100, "slidingWindowSize: the last N seconds", min=1, max=86_400, state=_BUCKETS))

    def make_window(self, size: int) -> TimeWindow:
        self.seconds = size
        return TimeWindow(1.0, size)

    def window_words(self, calls: int) -> str:
        return f"the {calls} calls of the last {self.seconds} s"


@register_policy("breakers", "slow_call_rate")
class SlowCallRate(CountBased):
    """Resilience4j's slow-call threshold turned on: a COUNT_BASED window that trips when 50% of
    its calls took longer than 1 s (slowCallRateThreshold 50, slowCallDurationThreshold 1 s), as
    well as on failures; slow but successful calls count. Resilience4j's own defaults (100% of
    calls over 60 s) leave slowness out, which is what ``count_based`` shows."""

    PARAMS = _r4j_params(
        Param(int, 100, "slidingWindowSize: the last N calls", min=1, max=100_000, state=_RING), 50.0, 1.0
    )


@register_policy("breakers", "error_percentage")
class ErrorPercentage(Policy):
    """Hystrix's circuit breaker (``HystrixCircuitBreaker``, 1.5): every health snapshot (0.5 s)
    it counts the last ``window`` seconds of calls in buckets of the snapshot interval and trips
    when at least ``volume`` calls (circuitBreaker.requestVolumeThreshold, 20) were made and the
    error percentage, rounded down, is >= ``error_percent`` (errorThresholdPercentage, 50). Open,
    it lets one trial call through once ``sleep`` seconds (sleepWindowInMilliseconds, 5 s) have
    passed, strictly; the trial's success closes it and resets the counts, a failure opens it
    again. Below the volume, it stays closed however many calls fail."""

    PARAMS = {
        "volume": Param(int, 20, "requestVolumeThreshold: calls in the window before it can trip", min=1, max=100_000),
        "error_percent": Param(float, 50.0, "errorThresholdPercentage", **_PERCENT),
        "sleep": Param(float, 5.0, "sleepWindowInMilliseconds, in seconds", above=0.0, max=MAX_DURATION),
        "window": Param(float, 10.0, "metrics.rollingStats.timeInMilliseconds, in seconds", above=0.0, max=86_400),
        "snapshot": Param(float, 0.5, "metrics.healthSnapshot.intervalInMilliseconds, in seconds", above=0.0, max=60),
    }

    def __init__(self, volume, error_percent, sleep, window, snapshot, **_) -> None:
        self.volume, self.error_percent = volume, error_percent
        self.wait = self.sleep = sleep
        self.period = snapshot
        buckets = max(1, round(window / snapshot))
        self.win = TimeWindow(snapshot, buckets + 1, fields=2)  # the complete buckets + the one starting
        self.seen = (0, 0)  # (calls, errors) at the last health snapshot

    def record(self, t: float, failed: bool, seconds: float) -> None:
        self.win.outcome(t, failed, False)

    def tripped(self, t: float) -> bool:
        calls, errors = self.seen = self.win.totals(t)
        return calls >= self.volume and (errors * 100 // calls if calls else 0) >= self.error_percent

    def verdict(self, trial: list[tuple[bool, float]]) -> bool | None:
        return trial[0][0]

    def wait_over(self, t: float, opened: float) -> bool:
        return t > opened + self.sleep

    def clear(self) -> None:
        self.win.clear()
        self.seen = (0, 0)

    def describe(self, t: float) -> str:
        calls, errors = self.seen
        return (
            f"its last health snapshot counted {errors} errors in {calls} calls ({_pct(errors, calls)}; "
            f"it trips at {self.error_percent:g}% from {self.volume} calls on)"
        )

    def state(self, t: float) -> dict:
        calls, errors = self.seen
        return {"calls": calls, "failures": errors, "min_calls": self.volume, "failure_rate": self.error_percent}

    def check_invariants(self) -> None:
        self.win.check_invariants()
        assert 0 <= self.seen[1] <= self.seen[0]


@register_policy("breakers", "consecutive")
class Consecutive(Policy):
    """The plain state machine (Nygard, "Release It!", 2007; Fowler's CircuitBreaker, 2014) with
    Sony's gobreaker defaults: trip when more than ``max_failures`` calls in a row fail (its
    ReadyToTrip: ConsecutiveFailures > 5), stay open ``wait`` seconds (Timeout, 60 s), then let
    ``trials`` calls through (MaxRequests, 1): any failure opens it again, ``trials`` successes in
    a row close it."""

    PARAMS = {
        "max_failures": Param(int, 5, "trips when more than this many calls in a row fail", min=0, max=100_000),
        "wait": Param(float, 60.0, "seconds open before half-open (gobreaker's Timeout)", above=0.0, max=MAX_DURATION),
        "trials": Param(int, 1, "trial calls half-open lets through (MaxRequests)", min=1, max=10_000),
    }

    def __init__(self, max_failures, wait, trials, **_) -> None:
        self.max_failures, self.wait, self.trials = max_failures, wait, trials
        self.run = 0  # failures in a row, up to the latest outcome

    def record(self, t: float, failed: bool, seconds: float) -> None:
        self.run = self.run + 1 if failed else 0

    def tripped(self, t: float) -> bool:
        return self.run > self.max_failures

    def clear(self) -> None:
        self.run = 0

    def describe(self, t: float) -> str:
        return f"the last {self.run} calls failed in a row (it trips after more than {self.max_failures})"

    def state(self, t: float) -> dict:
        return {"run": self.run, "max_failures": self.max_failures}

    def check_invariants(self) -> None:
        assert self.run >= 0


@register_policy("breakers", "adaptive")
class Adaptive(Policy):
    """Google SRE's client-side adaptive throttling ("Handling Overload", Site Reliability
    Engineering, 2016): over the last ``window`` seconds (two minutes) the client counts the calls
    it attempted (requests) and those the backend accepted (accepts), and refuses a new call with
    probability max(0, (requests - k * accepts) / (requests + 1)), k = 2. A refused call counts as
    a request. No states: it sheds in proportion to how much of what it sends fails."""

    stateful = False
    PARAMS = {
        "k": Param(float, 2.0, "K: the multiplier of accepts (lower sheds sooner)", above=0.0, max=1000.0),
        "window": Param(int, 120, "seconds of history (in 1 s buckets)", min=1, max=86_400, state=_BUCKETS),
    }

    def __init__(self, k, window, **_) -> None:
        self.k = k
        self.win = TimeWindow(1.0, window, fields=2)  # counter 0: requests, 1: accepts

    def level(self, t: float) -> float:
        requests, accepts = self.win.totals(t)
        return max(0.0, (requests - self.k * accepts) / (requests + 1))

    def admit(self, t: float, rng: Random) -> bool:
        p = self.level(t)
        self.win.add(t, 0)
        return not (p > 0 and rng.random() < p)

    def record(self, t: float, failed: bool, seconds: float) -> None:
        if not failed:
            self.win.add(t, 1)

    def tripped(self, t: float) -> bool:
        return False

    def describe(self, t: float) -> str:
        requests, accepts = self.win.totals(t)
        return (
            f"{requests} requests and {accepts} accepts in the last {self.win.n} s give a rejection "
            f"probability of max(0, ({requests} - {self.k:g} x {accepts}) / ({requests} + 1)) = {self.level(t):.2f}"
        )

    def state(self, t: float) -> dict:
        requests, accepts = self.win.totals(t)
        return {"requests": requests, "accepts": accepts, "k": self.k}

    def check_invariants(self) -> None:
        self.win.check_invariants()
        assert 0 <= self.win.sums[1], self.win.sums
