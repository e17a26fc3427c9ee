"""The ring election (E. Chang and R. Roberts, "An improved algorithm for decentralized
extrema-finding in circular configurations of processes", CACM 22(5), 1979): ids travel one way
round the ring (i to i + 1), and only the largest comes back to its sender.

A node that misses the leader's heartbeats (after ``detect`` plus a random part of it) sends
ELECTION(own id) to its successor and becomes a participant. On ELECTION(u): a larger u is passed
on; a smaller u is replaced by its own id if it is not yet a participant, else swallowed; its own
id back means it is the largest, and it sends ELECTED(id) round the ring, which stops before it
would reach the leader again. With one initiator that is the largest, n ELECTIONs and n − 1
ELECTEDs: 2n − 1 messages; at most 3n − 2 with one initiator anywhere. Each hop is acknowledged
(ACK): a successor that does not acknowledge within ``answer_timeout`` is skipped as down (the
ring repair the paper assumes away), which doubles the count but keeps it linear in n. A message
carries a token fixed where it started, so a copy (a hop re-sent past a slow node that then passed
it on after all) is dropped where it arrives second.
"""

from __future__ import annotations

from sims.election.node import CANDIDATE, FOLLOWER, LEADER, ElectionNode


class RingNode(ElectionNode):
    JITTER = 1.0  # detectors spread out, so one usually starts alone and the rest join its round

    def __init__(self, i: int, n: int, p: dict) -> None:
        super().__init__(i, n, p)
        self.hop = p["answer_timeout"]
        self.participant = False
        self.tokens = 0  # messages this node started (a token travels with its message round the ring)
        self.seen: list[int] = []  # tokens recently handled: a copy (a hop re-sent past a slow node) is dropped
        self.down = [False] * n  # successors that did not acknowledge (cleared when heard from)
        self.pending: dict[int, tuple] = {}  # hop seq -> (dst, msg) awaiting its ACK
        self.seq = 0

    def on_start(self, now: float) -> None:
        self.role, self.leader, self.participant = FOLLOWER, None, False
        self.pending = {}
        self._initiate()

    def _succ(self) -> int:
        for k in range(1, self.n):
            j = (self.id + k) % self.n
            if not self.down[j]:
                return j
        return self.id

    def _token(self) -> int:
        self.tokens += 1
        return self.id + self.n * self.tokens

    def _seen(self, token: int) -> bool:
        """Whether ``token`` was handled before; remembers it (the newest 64)."""
        if token in self.seen:
            return True
        self.seen.append(token)
        del self.seen[:-64]
        return False

    def _pass(self, kind: str, uid: int, token: int) -> None:
        """Send ``(kind, uid)`` to the successor, to be acknowledged."""
        dst = self._succ()
        if dst == self.id:  # alone on the ring
            if kind == "ELECTION":
                self._won()
            return
        self.seq += 1
        self.pending[self.seq] = (dst, kind, uid, token)
        self.send(dst, (kind, uid, self.seq, token))
        self.set_timer(self.hop, f"ack{self.seq}")

    def _initiate(self) -> None:
        if self.role == LEADER:
            self.cancel_timer("heartbeat")
        self.role, self.leader, self.participant = CANDIDATE, None, True
        self.cancel_timer("watch")
        self.set_timer(self.hop * 2 * self.n, "round")  # no ELECTED by then: start again
        self._pass("ELECTION", self.id, self._token())

    def _won(self) -> None:
        self.participant = False
        self.cancel_timer("round")
        self.become_leader()
        if self._succ() != self.id:
            self._pass("ELECTED", self.id, self._token())

    def follow(self, leader: int) -> None:
        self.participant = False
        self.cancel_timer("round")
        super().follow(leader)

    def on_timer(self, name: str, now: float) -> None:
        if name.startswith("ack"):
            hop = self.pending.pop(int(name[3:]), None)
            if hop is not None:  # the successor is down: skip it and pass the message on
                dst, kind, uid, token = hop
                self.down[dst] = True
                if not (kind == "ELECTED" and self._succ() == uid):
                    self._pass(kind, uid, token)
        elif name in ("watch", "round"):
            self._initiate()
        else:
            super().on_timer(name, now)

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        self.down[src] = False
        kind = msg[0]
        if kind == "ACK":
            if self.pending.pop(msg[1], None) is not None:
                self.cancel_timer(f"ack{msg[1]}")
            return
        if kind in ("ELECTION", "ELECTED"):
            self.send(src, ("ACK", msg[2]))
            if self._seen(msg[3]):
                return  # a copy: the hop was re-sent past a slow node that passed it on after all
        if kind == "ELECTION":
            uid = msg[1]
            self.down[uid] = False  # its id going round says it is up (a restarted node)
            if uid > self.id:
                if self.role == LEADER:
                    self.cancel_timer("heartbeat")
                    self.role, self.leader = CANDIDATE, None
                self.participant = True
                self._pass("ELECTION", uid, msg[3])
            elif uid < self.id and self.role == LEADER:
                pass  # a late or rebooted initiator: swallowed; the heartbeats tell it who leads
            elif uid < self.id and not self.participant:
                self._initiate()
            elif uid == self.id and self.role != LEADER:
                self._won()
        elif kind == "ELECTED":
            uid = msg[1]
            if uid != self.id:
                self.follow(uid)
                if self._succ() != uid:
                    self._pass("ELECTED", uid, msg[3])
        else:
            super().on_message(src, msg, now)
