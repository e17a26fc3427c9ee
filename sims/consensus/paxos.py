"""Paxos (Lamport, "Paxos Made Simple"): every node is proposer, acceptor and learner.

Ballots are integers ``round * n + id``, unique per proposer. Multi-Paxos runs phase 1 once for
every slot and keeps a distinguished proposer (the leader) while its heartbeats arrive; a node
that hears none for an election timeout runs phase 1 with a higher ballot. After phase 1 the new
leader re-proposes, in every slot it learned of, the value accepted with the highest ballot, and
fills holes with a no-op (value 0). Single-decree Paxos (``single=True``) decides slot 1 only and
keeps no leader: proposers that time out duel with higher ballots until one value is chosen.

The node exposes what the panel reads of Raft's: ``role``, ``term`` (its ballot), ``voted_for``
(the ballot it promised), ``log`` (accepted ``(ballot, value)`` per slot; ``(0, None)`` a hole),
``commit`` (the chosen prefix it knows), ``elections`` / ``retries`` / ``won``, ``propose()``.
Acceptances are reported in ``accepts`` ``[(slot, ballot, value, acceptor)]`` for the checker.
"""

from __future__ import annotations

from sims.net import Node

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"


class PaxosNode(Node):
    def __init__(self, i: int, n: int, election: tuple[float, float], heartbeat: float, single: bool = False) -> None:
        super().__init__(i, n)
        self.election = election
        self.heartbeat = heartbeat
        self.single = single
        self.promised = 0  # durable: the highest ballot promised
        self.accepted: dict[int, tuple[int, int]] = {}  # durable: slot -> (ballot, value)
        self.accepts: list[tuple[int, int, int, int]] = []  # for the checker, drained by it
        self.elections = self.retries = self.won = 0
        self._volatile()

    def _volatile(self) -> None:
        self.role = FOLLOWER
        self.term = self.promised
        self.leader: int | None = None
        self.promises: dict[int, tuple] = {}  # candidate: acceptor -> its accepted items
        self.acks: dict[int, list[int]] = {}  # leader: slot -> acceptors that accepted it
        self.values: dict[int, int] = {}  # leader: slot -> value proposed there
        self.chosen: dict[int, int] = {}  # slots this node knows chosen -> value
        self.next_slot = 1
        self.queue: list[int] = []  # client values waiting for phase 1
        self.commit = 0

    @property
    def voted_for(self) -> int | None:
        return self.promised % self.n if self.promised else None

    @property
    def log(self) -> list[tuple[int, int | None]]:
        top = max(self.accepted) if self.accepted else 0
        return [self.accepted.get(s, (0, None)) for s in range(1, top + 1)]

    # timers -----------------------------------------------------------------------------------
    def on_start(self, now: float) -> None:
        self._reset_election(extra=self.heartbeat * self.rng.random())

    def on_restart(self, durable: bool, now: float) -> None:
        if not durable:
            self.promised, self.accepted = 0, {}
        self._volatile()
        self.on_start(now)

    def _reset_election(self, extra: float = 0.0) -> None:
        lo, hi = self.election
        self.set_timer(lo + (hi - lo) * self.rng.random() + extra, "election")

    def on_timer(self, name: str, now: float) -> None:
        if name == "heartbeat":
            if self.role == LEADER:
                self.broadcast(("HB", self.term, self.commit))
                for slot in sorted(self.values)[:16]:
                    if slot not in self.chosen:
                        self.broadcast(("P2a", self.term, slot, self.values[slot]))
                self.set_timer(self.heartbeat, "heartbeat")
            return
        if self.role == LEADER and not self.single:
            return
        if self.single and 1 in self.chosen:
            return
        if self.role == CANDIDATE:
            self.retries += 1
        self.role = CANDIDATE
        self.elections += 1
        self.term = (max(self.promised, self.term) // self.n + 1) * self.n + self.id
        self.promises = {}
        self._reset_election()
        self._on_p1a(self.id, self.term)
        self.broadcast(("P1a", self.term))

    # messages -----------------------------------------------------------------------------------
    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind, ballot = msg[0], msg[1]
        if kind == "P1a":
            self._on_p1a(src, ballot)
        elif kind == "P1b":
            self._on_p1b(src, ballot, msg[2])
        elif kind == "P2a":
            self._on_p2a(src, ballot, msg[2], msg[3])
        elif kind == "P2b":
            self._on_p2b(src, ballot, msg[2])
        elif kind == "HB":
            if ballot >= self.promised:
                self.promised = ballot
                if self.role != FOLLOWER and ballot > self.term:
                    self._step_down()
                self.leader = src
                if src != self.id:
                    self._reset_election()
                    self._learn_commit(msg[2])
            else:
                self.send(src, ("NACK", self.promised))
        elif kind == "NACK":
            if ballot > self.term and self.role != FOLLOWER:
                self.promised = max(self.promised, ballot)
                self._step_down()
        elif kind == "CHOSEN":
            self.chosen[msg[2]] = msg[3]
            self._advance_commit()

    def _step_down(self) -> None:
        if self.role == LEADER:
            self.cancel_timer("heartbeat")
        self.role = FOLLOWER
        self.term = self.promised

    def _on_p1a(self, src: int, ballot: int) -> None:
        if ballot > self.promised or (src == self.id and ballot == self.term and ballot >= self.promised):
            self.promised = ballot
            if src != self.id and self.role != FOLLOWER:
                self._step_down()
            items = tuple((s, b, v) for s, (b, v) in sorted(self.accepted.items()))
            if src == self.id:
                self._on_p1b(self.id, ballot, items)
            else:
                self.send(src, ("P1b", ballot, items))
        elif src != self.id:
            self.send(src, ("NACK", self.promised))

    def _on_p1b(self, src: int, ballot: int, items: tuple) -> None:
        if self.role != CANDIDATE or ballot != self.term or src in self.promises:
            return
        self.promises[src] = items
        if 2 * len(self.promises) <= self.n:
            return
        self.role = LEADER
        self.leader = self.id
        self.won += 1
        if not self.single:  # a single-decree proposer retries until its value is chosen
            self.cancel_timer("election")
        best: dict[int, tuple[int, int]] = {}
        for acc in sorted(self.promises):
            for s, b, v in self.promises[acc]:
                if s not in best or b > best[s][0]:
                    best[s] = (b, v)
        top = max(best) if best else 0
        self.values = {}
        self.acks = {}
        for s in range(1, top + 1):  # re-propose what may have been chosen; no-ops in the holes
            self.values[s] = best[s][1] if s in best else 0
        self.next_slot = top + 1
        if self.single and top == 0 and self.queue:
            self.values[1] = self.queue[0]
            self.next_slot = 2
        for s in sorted(self.values):
            self._send_p2a(s)
        if not self.single:
            for value in self.queue:
                self.propose(value)
            self.queue = []
            self.broadcast(("HB", self.term, self.commit))
            self.set_timer(self.heartbeat, "heartbeat")

    def propose(self, value: int) -> int:
        """A client value: on a leader, into the next slot; otherwise queued for phase 1."""
        if self.role != LEADER or (self.single and self.next_slot > 1):
            if not self.single or not self.queue:
                self.queue.append(value)
            return 0
        slot = self.next_slot
        self.next_slot += 1
        self.values[slot] = value
        self._send_p2a(slot)
        return slot

    def _send_p2a(self, slot: int) -> None:
        self._on_p2a(self.id, self.term, slot, self.values[slot])
        self.broadcast(("P2a", self.term, slot, self.values[slot]))

    def _on_p2a(self, src: int, ballot: int, slot: int, value: int) -> None:
        if ballot < self.promised:
            if src != self.id:
                self.send(src, ("NACK", self.promised))
            return
        self.promised = ballot
        if src != self.id:
            if self.role != FOLLOWER and ballot > self.term:
                self._step_down()
            self.leader = src
            if not self.single:
                self._reset_election()
        if self.accepted.get(slot) != (ballot, value):
            self.accepted[slot] = (ballot, value)
            self.accepts.append((slot, ballot, value, self.id))
        if src == self.id:
            self._on_p2b(self.id, ballot, slot)
        else:
            self.send(src, ("P2b", ballot, slot))

    def _on_p2b(self, src: int, ballot: int, slot: int) -> None:
        if self.role != LEADER or ballot != self.term or slot in self.chosen:
            return
        acks = self.acks.setdefault(slot, [])
        if src not in acks:
            acks.append(src)
        if 2 * len(acks) > self.n:
            self.chosen[slot] = self.values[slot]
            self._advance_commit()
            if self.single:
                self.broadcast(("CHOSEN", ballot, slot, self.values[slot]))

    def _advance_commit(self) -> None:
        while self.commit + 1 in self.chosen:
            self.commit += 1

    def _learn_commit(self, leader_commit: int) -> None:
        """A follower takes the leader's chosen prefix where its own acceptances are of the
        leader's ballot (then they are the chosen values)."""
        while self.commit < leader_commit:
            got = self.accepted.get(self.commit + 1)
            if got is None or got[0] != self.promised:
                break
            self.chosen[self.commit + 1] = got[1]
            self.commit += 1

    def check_invariants(self) -> None:
        for slot in range(1, self.commit + 1):
            assert slot in self.chosen, (self.id, "a gap in the chosen prefix", slot)
        for slot, (ballot, _) in self.accepted.items():
            assert ballot <= self.promised, (self.id, slot, "accepted a ballot above its promise")
