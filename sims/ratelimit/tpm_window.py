"""Sliding-window token accounting for token-per-minute limits.

``TokenLog`` holds charges in (t - window, t], oldest first, with ``total`` their exact integer
sum; a charge can be settled (reconciled) later, and settling an expired entry changes nothing.
``RequestLog`` holds request times the same way for the RPM limit. Times are kept as integer
ticks (``exact.ticks``: the decimal of each time, exactly), so a window edge never rounds away.
"""

from __future__ import annotations

from collections import deque

from sims.ratelimit.exact import UNIT, ticks


class TokenLog:
    """Charges ``[t in ticks, tokens, live]`` in time order; ``total`` = sum of live tokens in the window."""

    __slots__ = ("window", "log", "total")

    def __init__(self, window: float) -> None:
        self.window = ticks(window)  # ticks
        self.log: deque[list] = deque()
        self.total = 0

    def expire(self, t: float) -> None:
        """Drop entries at or before t - window (they left the window (t - W, t])."""
        log = self.log
        edge = ticks(t) - self.window
        while log and log[0][0] <= edge:
            e = log.popleft()
            self.total -= e[1]
            e[2] = False

    def add(self, t: float, tokens: int) -> list:
        """Charge ``tokens`` at t (t never before the newest entry); returns the entry."""
        e = [ticks(t), tokens, True]
        self.log.append(e)
        self.total += tokens
        return e

    def settle(self, e: list, tokens: int) -> None:
        """Replace an entry's charge by ``tokens`` (reconcile to actual usage)."""
        if e[2]:
            self.total += tokens - e[1]
        e[1] = tokens

    def wait(self, t: float, room: int) -> float | None:
        """Seconds from t until ``total <= room`` once old entries expire; None if never."""
        if self.total <= room:
            return 0.0
        freed = 0
        for e in self.log:
            freed += e[1]
            if self.total - freed <= room:
                return (e[0] + self.window - ticks(t)) / UNIT
        return None

    def check_invariants(self) -> None:
        assert self.total == sum(e[1] for e in self.log), (self.total, len(self.log))
        assert all(e[2] for e in self.log)


class RequestLog:
    """Request times (ticks) in (t - window, t], oldest first."""

    __slots__ = ("window", "times")

    def __init__(self, window: float) -> None:
        self.window = ticks(window)  # ticks
        self.times: deque[int] = deque()

    def expire(self, t: float) -> None:
        times = self.times
        edge = ticks(t) - self.window
        while times and times[0] <= edge:
            times.popleft()

    def wait(self, t: float, limit: int) -> float:
        """Seconds from t until fewer than ``limit`` requests remain in the window."""
        times = self.times
        over = len(times) - limit
        if over < 0:
            return 0.0
        return (times[over] + self.window - ticks(t)) / UNIT
