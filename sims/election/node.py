"""What every election protocol's node shares: a role, the leader it believes in, and the
leader's heartbeats (a follower that hears none for ``detect`` seconds suspects the leader).

A node *acts as leader* while it is up, not paused and its ``role`` is ``LEADER``; the panel
counts two such nodes at once as split brain. A paused node (``sims.net``'s ``pause``) keeps its
role: once it resumes it acts on it until a timer or a message tells it otherwise. Heartbeats and other messages that keep a leader in place are
upkeep; the panel counts every other message as the election's.
"""

from __future__ import annotations

from sims.net import Node

FOLLOWER, CANDIDATE, LEADER, SERVICE = "follower", "candidate", "leader", "service"


class ElectionNode(Node):
    """A client node of the election: bully, ring, lease and ZooKeeper build on it."""

    JITTER = 0.0  # the watch waits detect × (1 + JITTER × a uniform draw)

    def __init__(self, i: int, n: int, p: dict) -> None:
        super().__init__(i, n)
        self.heartbeat = p["heartbeat"]
        self.detect = p["detect"]
        self.role = FOLLOWER
        self.leader: int | None = None  # the leader this node believes in

    def become_leader(self) -> None:
        self.role, self.leader = LEADER, self.id
        self.cancel_timer("watch")
        self.broadcast(("HEARTBEAT",))
        self.set_timer(self.heartbeat, "heartbeat")

    def follow(self, leader: int) -> None:
        if self.role == LEADER:
            self.cancel_timer("heartbeat")
        self.role, self.leader = FOLLOWER, leader
        self.watch()

    def watch(self) -> None:
        """(Re)arm the timer that fires when the leader has been quiet too long."""
        extra = self.JITTER * self.rng.random() if self.JITTER else 0.0
        self.set_timer(self.detect * (1.0 + extra), "watch")

    def on_crash(self, now: float) -> None:
        self.role, self.leader = FOLLOWER, None

    def on_timer(self, name: str, now: float) -> None:
        if name == "heartbeat" and self.role == LEADER:
            self.broadcast(("HEARTBEAT",))
            self.set_timer(self.heartbeat, "heartbeat")

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        """HEARTBEAT: a higher leader wins over a lower one (after a partition heals, the lower
        steps down on the higher's first heartbeat); the believed leader's resets the watch."""
        if msg[0] != "HEARTBEAT":
            return
        if src == self.leader and self.role != LEADER:
            self.watch()
        elif src > self.id and (self.leader is None or src > self.leader or self.role == LEADER):
            self.follow(src)

    def check_invariants(self) -> None:
        assert self.role in (FOLLOWER, CANDIDATE, LEADER), (self.id, self.role)
        assert (self.role == LEADER) == (self.leader == self.id), (self.id, self.role, self.leader)
