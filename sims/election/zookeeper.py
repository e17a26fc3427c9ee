"""ZooKeeper's leader-election recipe (Apache ZooKeeper, "ZooKeeper Recipes and Solutions",
Leader Election; Hunt et al., "ZooKeeper: Wait-free coordination for Internet-scale systems",
USENIX ATC 2010): each candidate creates an ephemeral sequential znode under /election; the one
with the lowest sequence number leads; every other one watches the znode just below its own
(its predecessor), so a deletion wakes exactly one node. ``herd=True`` is the naive recipe the
page warns against: every candidate watches the leader's znode, and its deletion wakes all n − 1
(the herd effect), each of which then reads the children again.

The ZooKeeper ensemble is abstracted as one reliable service, node id n (``ZkService``): the
stream's faults never crash it, though a partition can cut clients off from it. A client's
session lives while its pings arrive; ``session`` seconds without one and the service expires the
session, deletes its ephemeral znodes and fires their watches (checked every tick, a quarter of
the session timeout). A client that has heard nothing for two thirds of the session timeout
(its own clock) considers itself disconnected and stops acting as leader, as the Java client's
Disconnected event tells it to; once its session has expired it starts a new one, with a new
znode at the end of the line.

Messages: ``("CREATE", sid)`` -> ``("CREATED", seq)``; ``("CHECK", sid, seq)`` (getChildren,
then exists with a watch) -> ``("LEAD",)`` or ``("WAIT", watched)``; ``("NOTIFY", seq)`` (a
watch fired); ``("PING", sid)`` -> ``("PONG",)`` or ``("EXPIRED",)``.
"""

from __future__ import annotations

from sims.election.node import FOLLOWER, LEADER, SERVICE, ElectionNode
from sims.net import Node


class ZkService(Node):
    """The ensemble as one node. ``znodes`` holds ``(seq, owner, sid)`` in ascending ``seq``;
    ``watches`` maps a znode's seq to the owners waiting for its deletion (one-shot)."""

    def __init__(self, i: int, n: int, p: dict, herd: bool) -> None:
        super().__init__(i, n)
        self.session = p["session"]
        self.herd = herd
        self.role, self.leader = SERVICE, None
        self.znodes: list[tuple[int, int, int]] = []
        self.seq = 0
        self.heard: dict[tuple[int, int], float] = {}  # (owner, sid) -> when last heard
        self.watches: dict[int, list[int]] = {}

    def on_start(self, now: float) -> None:
        self.set_timer(self.session / 4, "tick")

    def _alive(self, owner: int, sid: int, now: float) -> bool:
        if (owner, sid) not in self.heard:
            return False
        self.heard[(owner, sid)] = now
        return True

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        if kind == "CREATE":
            self.heard[(src, msg[1])] = now
            self.seq += 1
            self.znodes.append((self.seq, src, msg[1]))
            self.send(src, ("CREATED", self.seq))
        elif kind == "PING":
            self.send(src, ("PONG",) if self._alive(src, msg[1], now) else ("EXPIRED",))
        elif kind == "CHECK":
            seqs = [z[0] for z in self.znodes]
            if not self._alive(src, msg[1], now) or msg[2] not in seqs:
                self.send(src, ("EXPIRED",))
                return
            k = seqs.index(msg[2])
            if k == 0:
                self.send(src, ("LEAD",))
                return
            watched = seqs[0] if self.herd else seqs[k - 1]
            self.watches.setdefault(watched, []).append(src)
            self.send(src, ("WAIT", watched))

    def on_timer(self, name: str, now: float) -> None:
        for key in sorted(self.heard):
            if now - self.heard[key] > self.session:
                del self.heard[key]
                for z in [z for z in self.znodes if (z[1], z[2]) == key]:
                    self.znodes.remove(z)
                    for owner in self.watches.pop(z[0], []):
                        self.send(owner, ("NOTIFY", z[0]))
        self.set_timer(self.session / 4, "tick")

    def check_invariants(self) -> None:
        seqs = [z[0] for z in self.znodes]
        assert seqs == sorted(set(seqs)), "znodes in ascending sequence order, each once"
        assert all((z[1], z[2]) in self.heard for z in self.znodes), "an ephemeral znode outlived its session"
        assert all(s in seqs for s in self.watches), "a watch on a deleted znode was not fired"


class ZkClient(ElectionNode):
    """A candidate: one session (``sid``), one znode (``seq``); leads while its znode is the lowest
    and it has heard from the service within two thirds of the session timeout."""

    def __init__(self, i: int, n: int, p: dict) -> None:
        super().__init__(i, n, p)
        self.session = p["session"]
        self.sid = 0
        self.seq: int | None = None
        self.lost = False  # stepped down on a disconnect; check again once the service answers

    def on_start(self, now: float) -> None:
        self.role, self.leader, self.lost = FOLLOWER, None, False
        self._new_session()
        self.set_timer(self.session / 3, "ping")

    def _new_session(self) -> None:
        self.sid += 1
        self.seq = None
        self.send(self.n, ("CREATE", self.sid))
        self.set_timer(2 * self.session / 3, "disconnect")

    def _step_down(self) -> None:
        self.role, self.leader = FOLLOWER, None

    def on_timer(self, name: str, now: float) -> None:
        if name == "ping":
            self.send(self.n, ("PING", self.sid))
            self.set_timer(self.session / 3, "ping")
        elif name == "disconnect" and self.role == LEADER:
            self._step_down()
            self.lost = True

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        self.set_timer(2 * self.session / 3, "disconnect")  # the service answered
        if kind == "CREATED":
            self.seq = msg[1]
            self.send(self.n, ("CHECK", self.sid, self.seq))
        elif kind == "LEAD":
            self.role, self.leader = LEADER, self.id
        elif kind == "WAIT":
            self._step_down()
        elif kind == "NOTIFY" and self.seq is not None:
            self.send(self.n, ("CHECK", self.sid, self.seq))
        elif kind == "EXPIRED":
            self._step_down()
            self.lost = False
            self._new_session()
        elif kind == "PONG" and self.lost and self.seq is not None:
            self.lost = False
            self.send(self.n, ("CHECK", self.sid, self.seq))

    def note(self, now: float) -> str:
        return "" if self.seq is None else f"#{self.seq}"
