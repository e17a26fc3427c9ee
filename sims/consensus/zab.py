"""Zab (Junqueira, Reed & Serafini, "Zab: High-performance broadcast for primary-backup systems",
DSN'11), one server per node, and the checker of its primary order.

Every transaction carries a zxid ``(epoch, counter)``; a history is a list of ``(zxid, value)``.
Each server keeps ``accepted_epoch`` (the last NEWEPOCH it acknowledged) and ``current_epoch``
(the last NEWLEADER it accepted), both durable with its history. The phases (the paper's §IV):

1. discovery: a server that hears no leader for an election timeout becomes a prospective leader
   and sends NEWEPOCH(e') for an epoch above any it accepted or proposed (its own accepted epoch
   becomes e' only once a quorum has acknowledged it); a server whose accepted epoch is lower
   and whose history is no newer than the candidate's (higher current epoch, then higher last
   zxid) sets accepted_epoch = e' and answers ACKEPOCH(current_epoch, history);
2. synchronization: with a quorum of ACKEPOCHs the candidate adopts the newest history among them
   (its own included) and sends NEWLEADER(e', history); a follower takes the history, sets
   current_epoch = e' and answers ACKNEWLEADER; with a quorum of those the leader commits the
   whole history and becomes established;
3. broadcast: the leader gives each client value the zxid (e', counter + 1) and sends PROPOSE; a
   follower appends in order and ACKs; a transaction acknowledged by a quorum is committed
   (COMMIT), and every server delivers committed transactions in history order. Heartbeats carry
   the commit point; a follower that misses one asks for the rest.

Simplified: the leader election of phase 0 (Fast Leader Election) is folded into discovery (the
first candidate to gather a quorum of ACKEPOCHs wins, and the vote rule keeps the newest history);
channels are not FIFO here, so a PROPOSE carries its position and a follower takes only the next
one (the leader resends from a follower's ACK); histories are sent whole, not as DIFF/TRUNC/SNAP.

``broken_sync`` (the ``zab_broken_sync`` panel) is deliberately broken: servers acknowledge a new
epoch whatever the candidate's history, and the prospective leader imposes its own history
instead of the newest in its quorum, so a leader that missed committed transactions overwrites
them and servers deliver different transactions at one position.

Messages: ``("NEWEPOCH", e, current_epoch, last_zxid)``, ``("ACKEPOCH", e, current_epoch,
history)``, ``("NEWLEADER", e, history)``, ``("ACKNEWLEADER", e, length)``, ``("FOLLOWERINFO", e)`` (a
server that hears an established leader of a later epoch asks it for its history), ``("PROPOSE", e, index,
zxid, value)``, ``("ACK", e, length)``, ``("COMMIT", e, index)``, ``("HB", e, index)``.
"""

from __future__ import annotations

from sims.core.panel import Checkpointed
from sims.net import Node

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"
_BATCH = 16  # entries a leader resends at once
_EARLY = 1024  # proposals a follower keeps ahead of a gap


class ZabNode(Node):
    voted_for = None

    def __init__(
        self, i: int, n: int, election: tuple[float, float], heartbeat: float, broken_sync: bool = False
    ) -> None:
        super().__init__(i, n)
        self.election = election
        self.heartbeat = heartbeat
        self.broken_sync = broken_sync  # deliberately broken: see the module docstring
        self.accepted_epoch = 0  # durable: the last NEWEPOCH acknowledged
        self.current_epoch = 0  # durable: the last NEWLEADER accepted
        self.history: list[tuple[tuple[int, int], int]] = []  # durable: (zxid, value)
        self.elections = self.retries = self.won = 0
        self._volatile()

    def _volatile(self) -> None:
        self.role = FOLLOWER
        self.leader: int | None = None
        self.commit = 0  # history entries delivered
        self.proposal = 0  # candidate: the epoch it proposes (accepted only once a quorum agrees)
        self.acks: dict[int, tuple] = {}  # candidate: server -> (current epoch, history) of its ACKEPOCH
        self.synced: list[int] = []  # candidate: servers that acknowledged NEWLEADER
        self.match = [0] * self.n  # leader: history length each follower acknowledged
        self.resent: dict[int, int] = {}  # leader: where it last resent from, per follower (until the next heartbeat)
        self.queue: list[int] = []  # client values waiting for an established leader
        self.early: dict[int, tuple] = {}  # follower: proposals that overtook a missing one, by position

    # what the panel reads -----------------------------------------------------------------------
    @property
    def term(self) -> int:
        return self.accepted_epoch

    @property
    def log(self) -> list[tuple[int, int]]:
        return [(zxid[0], value) for zxid, value in self.history]

    def _last(self) -> tuple[int, tuple[int, int]]:
        return self.current_epoch, (self.history[-1][0] if self.history else (0, 0))

    # timers -------------------------------------------------------------------------------------
    def on_start(self, now: float) -> None:
        self._reset_election(self.heartbeat * self.rng.random())

    def on_restart(self, durable: bool, now: float) -> None:
        if not durable:
            self.accepted_epoch = self.current_epoch = 0
            self.history = []
        self._volatile()
        self.on_start(now)

    def _reset_election(self, extra: float = 0.0) -> None:
        lo, hi = self.election
        self.set_timer(lo + (hi - lo) * self.rng.random() + extra, "election")

    def on_timer(self, name: str, now: float) -> None:
        if name == "heartbeat":
            if self.role == LEADER:
                self.resent = {}  # each follower's answer to this heartbeat may ask for one resend
                self.broadcast(("HB", self.accepted_epoch, self.commit))
                self.set_timer(self.heartbeat, "heartbeat")
            return
        if self.role == CANDIDATE:
            self.retries += 1
        self._discover()

    def _discover(self) -> None:
        """Phase 1: propose the next epoch to everyone."""
        if self.role == LEADER:
            self.cancel_timer("heartbeat")
        self.role = CANDIDATE
        self.leader = None
        self.elections += 1
        self.proposal = max(self.accepted_epoch, self.proposal) + 1
        self.acks = {self.id: (self.current_epoch, tuple(self.history))}
        self.synced = []
        self._reset_election()
        epoch, last = self._last()
        self.broadcast(("NEWEPOCH", self.proposal, epoch, last))

    # messages -----------------------------------------------------------------------------------
    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind, e = msg[0], msg[1]
        if kind == "NEWEPOCH":
            if e > self.accepted_epoch and (self.broken_sync or (msg[2], msg[3]) >= self._last()):
                self._follow(src, e)
                self.send(src, ("ACKEPOCH", e, self.current_epoch, tuple(self.history)))
        elif kind == "ACKEPOCH":
            if self.role == CANDIDATE and e == self.proposal and src not in self.acks:
                self.acks[src] = (msg[2], msg[3])
                if 2 * len(self.acks) > self.n and e > self.accepted_epoch:
                    self.accepted_epoch = e
                    self._synchronize()
        elif kind == "NEWLEADER":
            if e >= self.accepted_epoch:
                self._follow(src, e)
                self.current_epoch = e
                self.history = list(msg[2])
                self.early = {}
                self.commit = min(self.commit, len(self.history))
                self.send(src, ("ACKNEWLEADER", e, len(self.history)))
        elif kind == "ACKNEWLEADER":
            if self.role == CANDIDATE and e == self.accepted_epoch and src not in self.synced:
                self.synced.append(src)
                if 2 * len(self.synced) > self.n:
                    self._establish()
            elif self.role == LEADER and e == self.accepted_epoch:  # a late follower synced
                self._broadcast_phase(src, ("ACK", e, msg[2]))
        elif kind == "FOLLOWERINFO":
            if self.role == LEADER and e == self.accepted_epoch:
                self.send(src, ("NEWLEADER", e, tuple(self.history)))
        elif e == self.accepted_epoch and e == self.current_epoch:
            self._broadcast_phase(src, msg)
        elif e > self.current_epoch and e >= self.accepted_epoch and self.role != LEADER:
            # an established leader of a later epoch than ours: join it (it sends its history)
            self.leader = src
            self._reset_election()
            self.send(src, ("FOLLOWERINFO", e))

    def _follow(self, src: int, e: int) -> None:
        if self.role == LEADER:
            self.cancel_timer("heartbeat")
        self.role = FOLLOWER
        self.accepted_epoch = e
        self.leader = src
        self._reset_election()

    def _synchronize(self) -> None:
        """Phase 2: adopt the newest history of the quorum and send it as NEWLEADER."""
        if not self.broken_sync:
            best = max(
                self.acks, key=lambda j: (self.acks[j][0], self.acks[j][1][-1][0] if self.acks[j][1] else (0, 0), -j)
            )
            self.history = list(self.acks[best][1])
        self.current_epoch = self.accepted_epoch
        self.synced = [self.id]
        self.broadcast(("NEWLEADER", self.accepted_epoch, tuple(self.history)))

    def _establish(self) -> None:
        self.role = LEADER
        self.leader = self.id
        self.won += 1
        self.cancel_timer("election")
        self.match = [0] * self.n
        self.match[self.id] = len(self.history)
        for j in self.synced:
            self.match[j] = len(self.history)
        self._deliver(len(self.history))
        self.broadcast(("COMMIT", self.accepted_epoch, self.commit))
        self.set_timer(self.heartbeat, "heartbeat")
        queue, self.queue = self.queue, []
        for value in queue:
            self.propose(value)

    def propose(self, value: int) -> int:
        """Phase 3: a client value gets the next zxid of this epoch (queued until established)."""
        if self.role != LEADER:
            self.queue.append(value)
            return 0
        counter = self.history[-1][0][1] + 1 if self.history and self.history[-1][0][0] == self.accepted_epoch else 1
        zxid = (self.accepted_epoch, counter)
        self.history.append((zxid, value))
        self.match[self.id] = len(self.history)
        self.broadcast(("PROPOSE", self.accepted_epoch, len(self.history), zxid, value))
        return len(self.history)

    def _broadcast_phase(self, src: int, msg: tuple) -> None:
        kind, e = msg[0], msg[1]
        if self.role == LEADER:
            if kind == "ACK":
                before = self.match[src]
                self.match[src] = max(before, msg[2])
                # behind and not moving (a gap: a lost or overtaken PROPOSE): resend what follows,
                # once per position and heartbeat. An ACK that shows progress asks for nothing,
                # else every ACK of a burst would resend a batch whose ACKs resend again.
                lo = msg[2]
                if lo < len(self.history) and lo <= before and self.resent.get(src) != lo:
                    self.resent[src] = lo
                    for k in range(lo, min(len(self.history), lo + _BATCH)):
                        zxid, value = self.history[k]
                        self.send(src, ("PROPOSE", e, k + 1, zxid, value))
                self._advance_commit()
            return
        if src != self.leader:  # the one leader of our epoch: a candidate gives up and follows it
            self.role = FOLLOWER
            self.leader = src
        if kind == "PROPOSE":
            # in order: append it, and any that overtook it, then ACK. One that overtook a missing
            # proposal waits; a duplicate is dropped. Neither is ACKed: an ACK per copy made the
            # leader resend per copy, and under load the resends multiplied (the heartbeat's ACK
            # asks for what is missing)
            at = msg[2]
            if at == len(self.history) + 1:
                self.history.append((msg[3], msg[4]))
                while len(self.history) + 1 in self.early:
                    self.history.append(self.early.pop(len(self.history) + 1))
                self.send(src, ("ACK", e, len(self.history)))
            elif at > len(self.history) + 1 and len(self.early) < _EARLY:
                self.early[at] = (msg[3], msg[4])
        elif kind == "COMMIT" or kind == "HB":
            self._reset_election()
            self._deliver(min(msg[2], len(self.history)))
            if kind == "HB":
                self.send(src, ("ACK", e, len(self.history)))

    def _advance_commit(self) -> None:
        ranked = sorted(self.match, reverse=True)
        k = ranked[self.n // 2]  # the length a majority holds
        if k > self.commit:
            self._deliver(k)
            self.broadcast(("COMMIT", self.accepted_epoch, k))

    def _deliver(self, k: int) -> None:
        if k > self.commit:
            self.commit = k

    def check_invariants(self) -> None:
        assert 0 <= self.commit <= len(self.history), (self.id, self.commit, len(self.history))
        assert self.current_epoch <= self.accepted_epoch, (self.id, "current epoch above the accepted one")
        for k in range(1, len(self.history)):
            assert self.history[k - 1][0] < self.history[k][0], (self.id, "zxids increase along a history", k)


class ZabChecker(Checkpointed):
    """Zab's properties over what each server delivers (its history up to ``commit``), checked
    after every event:

    - primary order: each server delivers transactions in increasing zxid order, so a primary's
      in the order it proposed them and nothing of an earlier epoch after a later epoch's
      (``primary_order``; a restart starts a server's delivery over, from its log);
    - total order: the k-th transaction delivered is the same on every server, and a server whose
      history a new leader replaced delivers again what it had delivered (``total_order``).

    ``chosen`` keeps, per position, the first ``(zxid, value)`` delivered there."""

    def __init__(self) -> None:
        self.chosen: dict[int, tuple[tuple[int, int], int]] = {}
        self.violations: dict[str, float] = {}
        self.discarded = 0
        self.seen: list[int] = []  # per server: positions of its current history compared
        self.epochs: list[int] = []  # per server: its current epoch when last compared
        self.top: list[int] = []  # per server: the highest position it delivered since it started
        self.last: list[tuple[int, int]] = []  # per server: the zxid it delivered there

    def check(self, nodes: list, t: float) -> list[int]:
        if not self.seen:
            k = len(nodes)
            self.seen, self.epochs, self.top, self.last = [0] * k, [0] * k, [0] * k, [(0, 0)] * k
        new: list[int] = []
        for node in nodes:
            i = node.id
            seen = self.seen[i]
            if node.commit < seen and node.current_epoch == self.epochs[i]:  # restarted: delivery starts over
                self.top[i], self.last[i] = 0, (0, 0)
            if node.commit < seen or node.current_epoch != self.epochs[i]:
                seen = 0  # or a NEWLEADER replaced its history: compare all it delivered
                self.epochs[i] = node.current_epoch
            history = node.history
            for k in range(seen + 1, node.commit + 1):
                entry = history[k - 1]
                if k > self.top[i]:
                    if not self.last[i] < entry[0]:
                        self.violations.setdefault(f"primary_order:{k}", t)
                    self.top[i], self.last[i] = k, entry[0]
                first = self.chosen.get(k)
                if first is None:
                    self.chosen[k] = entry
                    new.append(k)
                elif first != entry:
                    self.violations.setdefault(f"total_order:{k}", t)
            self.seen[i] = node.commit
        return new
