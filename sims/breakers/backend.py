"""The service behind the breaker: the stream's health events set how it is doing, and each call
that reaches it gets its outcome and latency from that health and the call's own draws.

A call fails with probability ``errors``; under a ``capacity`` (calls per second it can serve) it
also fails with probability 1 - capacity / load, where load counts the calls that reached it in
the last second, this one included: errors grow with load, as an overloaded server's 503s do. Its
latency is ``latency`` times the call's exponential draw (mean 1), failed or not. Every panel
sees the same health; the load is the panel's own, so a client that sheds calls lowers it.
"""

from __future__ import annotations

from collections import deque

from sims.core.panel import Checkpointed

LOAD_WINDOW = 1.0  # seconds over which the load on the backend is counted


class Backend(Checkpointed):
    """``recent`` holds the arrival times of the calls of the last ``LOAD_WINDOW`` seconds, oldest
    first; ``changes`` the health changes ``[t, errors, latency, capacity, fault]`` of the last
    ``keep`` seconds, for the view."""

    __slots__ = ("errors", "latency", "capacity", "fault", "recent", "changes")

    def __init__(self) -> None:
        self.errors = 0.0  # probability that a call fails
        self.latency = 0.02  # mean latency, seconds
        self.capacity = 0.0  # calls per second it serves before errors grow with load; 0 = no limit
        self.fault = 0  # 1 while the workload says it is degraded
        self.recent: deque[float] = deque()
        self.changes: list[list] = [[0.0, 0.0, 0.02, 0.0, 0]]

    def set(self, ev: dict, keep: float) -> None:
        """Apply a health event (any field it leaves out stays as it was)."""
        self.errors = float(ev.get("errors", self.errors))
        self.latency = float(ev.get("latency", self.latency))
        self.capacity = float(ev.get("capacity", self.capacity))
        self.fault = int(ev.get("fault", self.fault))
        t = ev["t"]
        changes = self.changes
        if changes[-1][0] == t:
            changes.pop()
        changes.append([t, self.errors, self.latency, self.capacity, self.fault])
        while len(changes) > 1 and changes[1][0] <= t - keep:
            changes.pop(0)

    def load(self, t: float) -> int:
        """Calls that reached the backend in (t - LOAD_WINDOW, t]."""
        recent = self.recent
        edge = t - LOAD_WINDOW
        while recent and recent[0] <= edge:
            recent.popleft()
        return len(recent)

    def call(self, t: float, u: float, z: float) -> tuple[bool, float]:
        """A call arriving at ``t`` with its uniform draw ``u`` and exponential draw ``z``:
        (failed, seconds until its answer)."""
        self.recent.append(t)
        load = self.load(t)
        p = self.errors
        if self.capacity:
            shed = 1.0 - self.capacity / load
            if shed > p:
                p = shed
        return u < p, self.latency * z

    def check_invariants(self) -> None:
        assert 0.0 <= self.errors <= 1.0 and self.latency > 0 and self.capacity >= 0, (self.errors, self.latency)
        assert all(a <= b for a, b in zip(self.recent, list(self.recent)[1:], strict=False))
        assert all(a[0] <= b[0] for a, b in zip(self.changes, self.changes[1:], strict=False))
