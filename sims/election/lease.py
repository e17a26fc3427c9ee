"""Lease-based leadership (C. Gray and D. Cheriton, "Leases: An Efficient Fault-Tolerant
Mechanism for Distributed File Cache Consistency", SOSP 1989; the master lease of Chubby,
Burrows, OSDI 2006): a lock service grants the lease for ``lease`` seconds of its own clock,
and the holder leads while its own clock says the lease has not run out, less a ``guard``.

The lock service is one reliable node, id n (``LeaseService``): faults never crash it, though a
partition can cut a client off from it. The holder renews every third of the lease; a client
that is refused polls again when the service says the lease will have run out. The holder
measures its lease from the moment it *asked* (its own clock), the service from the moment it
granted (its clock), so the holder always stops first as long as clocks run at the same rate.
Drift breaks that: a holder whose clock runs at rate r < 1 believes in its lease for
(lease − guard) / r real seconds, and two nodes lead at once as soon as r < 1 − guard / lease,
that is, as soon as the drift exceeds what the guard allows for.

Messages: ``("ACQUIRE", asked)`` / ``("RENEW", asked)`` -> ``("GRANT", asked)`` or
``("HELD", remaining)`` (``"RENEWED"`` answers a renewal), ``asked`` being the client's local time when it asked.
"""

from __future__ import annotations

from sims.election.node import FOLLOWER, LEADER, SERVICE, ElectionNode
from sims.net import Node


class LeaseService(Node):
    """The lock service: ``holder`` holds the lease until ``expires`` (the service's clock)."""

    def __init__(self, i: int, n: int, p: dict) -> None:
        super().__init__(i, n)
        self.lease = p["lease"]
        self.role, self.leader = SERVICE, None
        self.holder: int | None = None
        self.expires = 0.0

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        local = self.local_time(now)
        if self.holder in (None, src) or local >= self.expires:
            self.holder, self.expires = src, local + self.lease
            self.send(src, ("RENEWED" if msg[0] == "RENEW" else "GRANT", msg[1]))
        else:
            self.send(src, ("HELD", self.expires - local))

    def check_invariants(self) -> None:
        assert self.holder is None or 0 <= self.holder < self.n


class LeaseClient(ElectionNode):
    """Leads from a GRANT until ``asked + lease − guard`` on its own clock, unless renewed."""

    def __init__(self, i: int, n: int, p: dict) -> None:
        super().__init__(i, n, p)
        self.lease = p["lease"]
        self.guard = p["guard"]
        self.until = 0.0  # local time its lease runs out (as it believes)

    def on_start(self, now: float) -> None:
        self.role, self.leader = FOLLOWER, None
        self._ask("ACQUIRE", now)

    def _ask(self, kind: str, now: float) -> None:
        self.send(self.n, (kind, self.local_time(now)))
        if kind == "ACQUIRE":
            self.set_timer(self.lease / 2, "poll")  # no answer (cut off): ask again

    def on_timer(self, name: str, now: float) -> None:
        if name == "renew" and self.role == LEADER:
            self._ask("RENEW", now)
            self.set_timer(self.lease / 3, "renew")
        elif name == "expire" and self.role == LEADER:
            self.role, self.leader = FOLLOWER, None
            self.cancel_timer("renew")
            self._ask("ACQUIRE", now)
        elif name == "poll" and self.role != LEADER:
            self._ask("ACQUIRE", now)

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        if msg[0] in ("GRANT", "RENEWED"):
            until = msg[1] + self.lease - self.guard
            left = until - self.local_time(now)
            if left <= 0.0 or until <= self.until and self.role == LEADER:
                return  # an answer that came too late, or an older one
            self.until = until
            self.set_timer(left, "expire")
            if self.role != LEADER:
                self.role, self.leader = LEADER, self.id
                self.cancel_timer("poll")
                self.set_timer(self.lease / 3, "renew")
        elif msg[0] == "HELD" and self.role != LEADER:
            self.set_timer(msg[1], "poll")

    def note(self, now: float) -> str:
        if self.role != LEADER:
            return ""
        return f"{max(0.0, self.until - self.local_time(now)):.1f}s"
