"""The bully algorithm (H. Garcia-Molina, "Elections in a Distributed Computing System", IEEE
Trans. Computers C-31(1), 1982): the highest id that is up becomes coordinator.

A node that misses the leader's heartbeats for ``detect`` seconds, or boots, holds an election:
ELECTION to every higher id, then ANSWER from any higher node that is up means "I take over,
wait for my COORDINATOR"; no ANSWER within ``answer_timeout`` means it is the highest up, and it
sends COORDINATOR to every lower id. A node that gets ELECTION from a lower one answers and holds
its own election (a leader answers and re-sends COORDINATOR to the asker instead, so a lower node's
reboot does not unseat it). With every node noticing a failure at once, node i sends n − 1 − i
ELECTIONs and gets as many ANSWERs: about n² messages per election.
"""

from __future__ import annotations

from sims.election.node import CANDIDATE, FOLLOWER, LEADER, ElectionNode


class BullyNode(ElectionNode):
    def __init__(self, i: int, n: int, p: dict) -> None:
        super().__init__(i, n, p)
        self.wait = p["answer_timeout"]
        self.electing = False

    def on_start(self, now: float) -> None:
        self.role, self.leader, self.electing = FOLLOWER, None, False
        self._elect()

    def follow(self, leader: int) -> None:
        self.electing = False
        self.cancel_timer("answer")
        self.cancel_timer("coordinator")
        super().follow(leader)

    def _elect(self) -> None:
        if self.role == LEADER:
            self.cancel_timer("heartbeat")
        self.electing, self.role, self.leader = True, CANDIDATE, None
        self.cancel_timer("watch")
        self.cancel_timer("coordinator")
        if self.id == self.n - 1:
            self._win()
            return
        for j in range(self.id + 1, self.n):
            self.send(j, ("ELECTION",))
        self.set_timer(self.wait, "answer")

    def _win(self) -> None:
        self.electing = False
        self.cancel_timer("answer")
        self.become_leader()
        for j in range(self.id):
            self.send(j, ("COORDINATOR",))

    def on_timer(self, name: str, now: float) -> None:
        if name == "answer":  # nobody higher answered: I am the highest up
            self._win()
        elif name in ("coordinator", "watch"):  # the higher node never announced, or the leader went quiet
            self._elect()
        else:
            super().on_timer(name, now)

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        if kind == "ELECTION":
            self.send(src, ("ANSWER",))
            if self.role == LEADER:
                self.send(src, ("COORDINATOR",))
            elif not self.electing:
                self._elect()
        elif kind == "ANSWER":
            if self.electing:
                self.cancel_timer("answer")
                self.set_timer(2 * self.wait, "coordinator")
        elif kind == "COORDINATOR":
            if src > self.id:
                self.follow(src)
            elif not self.electing and self.role != LEADER:
                self._elect()  # a lower node claims to lead: bully it
        else:
            super().on_message(src, msg, now)
