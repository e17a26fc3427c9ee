"""Atomic commit: two-phase commit (Gray, "Notes on Data Base Operating Systems", 1978) and
three-phase commit (Skeen, "Nonblocking Commit Protocols", SIGMOD 1981), one server per node:
node 0 is the coordinator (the transaction manager), nodes 1..n-1 are participants.

2PC: the coordinator durably records the transaction's participants and sends PREP; a participant
works for ``work`` seconds, then votes: no (it aborts at once) or yes (it is *prepared*: its vote is
on its disk and it holds the transaction's locks until it learns the outcome). The coordinator
decides commit iff every vote is yes (abort on a no or when the votes time out), writes the decision
and sends it; each participant acknowledges. A prepared participant whose decision does not come
within ``timeout`` is *blocked*: it asks the coordinator and the other participants, again every
``timeout`` (cooperative termination, Bernstein, Hadzilacos & Goodman 1987, §7.4). A participant
that has decided answers; one that has not voted yet aborts and answers abort; a prepared one
cannot help, so when every participant is prepared and the coordinator is down they all wait for
it, holding their locks. A restarted coordinator aborts every transaction it had not decided
(presumed abort) and sends every decision not yet acknowledged.

3PC adds a round between the vote and the decision: on all yes the coordinator writes and sends
PRE (pre-commit); a participant that gets it is *pre-committed* and acknowledges; on every
acknowledgement (or when they time out) the coordinator commits. Timeouts make it nonblocking: a
participant that times out while *uncertain* (prepared, before PRE) aborts, one that times out
while pre-committed commits. That rule assumes messages arrive within known bounds and no
partition: cut the network between PRE's copies and one side commits while the other aborts.
A restarted participant does not apply it (it may have missed anything): it asks, as in 2PC.
A restarted coordinator commits what it had pre-committed and aborts the rest.

Messages are tuples ``(type, txn, ...)``: ``("PREP", txn, parts, no)``, ``("VOTE", txn, yes)``,
``("PRE", txn)``, ``("PACK", txn)``, ``("DEC", txn, commit)``, ``("ACK", txn)``, ``("ASK", txn)``.
A fault-free transaction over k participants costs 4k messages in 2PC and 6k in 3PC. Logs are
stable storage: a restart keeps them whatever its ``durable`` flag says (both protocols assume it).
"""

from __future__ import annotations

from sims.net import Node

COORDINATOR = 0
WORKING, PREPARED, PRECOMMITTED, COMMITTED, ABORTED = "working", "prepared", "precommitted", "committed", "aborted"
DONE = (COMMITTED, ABORTED)


class Coordinator(Node):
    """The transaction manager. Durable: ``log`` (txn -> begun | pre | commit | abort) and
    ``parts``; volatile: the votes and acknowledgements it is collecting."""

    role = "coordinator"
    term = 0  # what a recorded trace (sims.net.trace) reads of every node

    def __init__(self, i: int, n: int, timeout: float, three: bool) -> None:
        super().__init__(i, n)
        self.timeout = timeout
        self.three = three
        self.log: dict[int, str] = {}  # durable: txn -> "begun" | "pre" | "commit" | "abort"
        self.parts: dict[int, tuple[int, ...]] = {}  # durable: txn -> its participants
        self.open: dict[int, None] = {}  # txns not yet acknowledged by every participant (in begin order)
        self.votes: dict[int, list[int]] = {}  # volatile: txn -> participants that voted yes (or acked PRE)
        self.acks: dict[int, list[int]] = {}  # volatile: txn -> participants that acknowledged the decision

    def begin(self, txn: int, parts: tuple[int, ...], no: tuple[int, ...]) -> None:
        """A new transaction over ``parts``; those in ``no`` will vote no."""
        self.log[txn] = "begun"
        self.parts[txn] = parts
        self.open[txn] = None
        self.votes[txn] = []
        for p in parts:
            self.send(p, ("PREP", txn, parts, p in no))
        self.set_timer(self.timeout, f"v{txn}")

    def on_restart(self, durable: bool, now: float) -> None:
        self.votes, self.acks = {}, {}
        for txn in list(self.open):
            state = self.log[txn]
            if state == "begun":
                self._decide(txn, False)  # presumed abort: it never decided
            elif state == "pre":
                self._decide(txn, True)  # 3PC: the participants may have committed by timeout
            else:
                self._announce(txn)

    def on_timer(self, name: str, now: float) -> None:
        txn = int(name[1:])
        state = self.log.get(txn)
        if name[0] == "v":  # votes (or 3PC's pre-commit acknowledgements) timed out
            if state == "begun":
                self._decide(txn, False)
            elif state == "pre":
                self._decide(txn, True)
        elif txn in self.open:  # "r": send the decision again to whoever has not acknowledged it
            self._announce(txn)

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind, txn = msg[0], msg[1]
        state = self.log.get(txn)
        if kind == "VOTE":
            if state == "begun":
                if not msg[2]:
                    self._decide(txn, False)
                    return
                votes = self.votes.setdefault(txn, [])
                if src not in votes:
                    votes.append(src)
                if len(votes) == len(self.parts[txn]):
                    if self.three:
                        self.log[txn] = "pre"
                        self.votes[txn] = []
                        for p in self.parts[txn]:
                            self.send(p, ("PRE", txn))
                        self.set_timer(self.timeout, f"v{txn}")
                    else:
                        self._decide(txn, True)
        elif kind == "PACK":
            if state == "pre":
                acks = self.votes.setdefault(txn, [])
                if src not in acks:
                    acks.append(src)
                if len(acks) == len(self.parts[txn]):
                    self._decide(txn, True)
        elif kind == "ACK" and txn in self.open:
            acks = self.acks.setdefault(txn, [])
            if src not in acks:
                acks.append(src)
                if len(acks) == len(self.parts[txn]):
                    del self.open[txn]
                    self.acks.pop(txn, None)
                    self.cancel_timer(f"r{txn}")
        elif kind == "ASK":
            if state in ("commit", "abort"):
                self.send(src, ("DEC", txn, state == "commit"))
            elif state is None:
                self.send(src, ("DEC", txn, False))  # never begun here: nothing to commit

    def _decide(self, txn: int, commit: bool) -> None:
        self.log[txn] = "commit" if commit else "abort"
        self.votes.pop(txn, None)
        self.cancel_timer(f"v{txn}")
        self._announce(txn)

    def _announce(self, txn: int) -> None:
        acks = self.acks.setdefault(txn, [])
        msg = ("DEC", txn, self.log[txn] == "commit")
        for p in self.parts[txn]:
            if p not in acks:
                self.send(p, msg)
        self.set_timer(self.timeout, f"r{txn}")

    def state_of(self, txn: int) -> str | None:
        """The view's word for where this transaction stands here."""
        state = self.log.get(txn)
        return {"begun": "voting", "pre": PRECOMMITTED, "commit": COMMITTED, "abort": ABORTED}.get(state)

    def check_invariants(self) -> None:
        for txn in self.open:
            assert txn in self.log and txn in self.parts, (txn, "an open transaction the log lacks")


class Participant(Node):
    """A resource manager. Durable: ``state`` (txn -> working | prepared | precommitted |
    committed | aborted) and what it needs to finish (``parts``, ``vote_no``); ``since``: when it
    began to hold each transaction's locks in prepared."""

    role = "participant"
    term = 0

    def __init__(self, i: int, n: int, timeout: float, work: float, three: bool) -> None:
        super().__init__(i, n)
        self.timeout = timeout
        self.work = work
        self.three = three
        self.state: dict[int, str] = {}  # txn -> its state here
        self.parts: dict[int, tuple[int, ...]] = {}  # txn -> its participants (whom to ask)
        self.vote_no: dict[int, bool] = {}  # txn -> this participant votes no
        self.since: dict[int, float] = {}  # txn -> when it became prepared (holding its locks), until decided
        self.blocked: dict[int, None] = {}  # prepared txns whose decision is overdue (it is asking around)
        self.recovering: dict[int, None] = {}  # 3PC: undecided at a restart, so it asks instead of timing out
        self.held_s = 0.0  # seconds of lock holding (prepared to decided), finished stretches
        self.held_max = 0.0  # the longest finished stretch
        self.decided: list[tuple[int, str]] = []  # (txn, outcome) for the checker, drained by it

    # messages --------------------------------------------------------------------------------
    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind, txn = msg[0], msg[1]
        state = self.state.get(txn)
        if kind == "PREP":
            if state is None:
                self.state[txn] = WORKING
                self.parts[txn] = msg[2]
                self.vote_no[txn] = msg[3]
                if self.work > 0.0:
                    self.set_timer(self.work, f"w{txn}")
                else:
                    self._vote(txn, now)
            elif state in (PREPARED, ABORTED):  # a duplicate: the same vote again
                self.send(COORDINATOR, ("VOTE", txn, state == PREPARED))
        elif kind == "PRE":
            if state == PREPARED:
                self.state[txn] = PRECOMMITTED
                self.blocked.pop(txn, None)
                if txn not in self.recovering:
                    self.set_timer(self.timeout, f"t{txn}")
            if self.state.get(txn) in (PRECOMMITTED, COMMITTED):
                self.send(COORDINATOR, ("PACK", txn))
        elif kind == "DEC":
            if state not in DONE:
                self._decide(txn, msg[2], now)
            if src == COORDINATOR:
                self.send(COORDINATOR, ("ACK", txn))
        elif kind == "ASK":  # cooperative termination: another participant asks the outcome
            if state is None or state == WORKING:  # it has not voted yes: it may abort alone
                self.parts.setdefault(txn, ())
                self._decide(txn, False, now)
                if state == WORKING:
                    self.send(COORDINATOR, ("VOTE", txn, False))
                state = ABORTED
            if state in DONE:
                self.send(src, ("DEC", txn, state == COMMITTED))

    # timers ----------------------------------------------------------------------------------
    def on_timer(self, name: str, now: float) -> None:
        txn = int(name[1:])
        state = self.state.get(txn)
        if name[0] == "w":
            if state == WORKING:
                self._vote(txn, now)
            return
        if state not in (PREPARED, PRECOMMITTED):
            return
        if self.three and txn not in self.recovering:  # 3PC's timeout rule
            self._decide(txn, state == PRECOMMITTED, now)
            return
        self.blocked[txn] = None  # 2PC (or a recovering 3PC participant): ask everyone who may know
        self._ask(txn)

    def _ask(self, txn: int) -> None:
        self.send(COORDINATOR, ("ASK", txn))
        for p in self.parts.get(txn, ()):
            if p != self.id:
                self.send(p, ("ASK", txn))
        self.set_timer(self.timeout, f"t{txn}")

    def on_restart(self, durable: bool, now: float) -> None:
        for txn in sorted(self.state):
            state = self.state[txn]
            if state == WORKING:
                self._decide(txn, False, now)  # it never voted: abort alone
                self.send(COORDINATOR, ("VOTE", txn, False))
            elif state in (PREPARED, PRECOMMITTED):
                if self.three:
                    self.recovering[txn] = None
                self.blocked[txn] = None
                self._ask(txn)

    # decisions -------------------------------------------------------------------------------
    def _vote(self, txn: int, now: float) -> None:
        if self.vote_no.get(txn):
            self._decide(txn, False, now)
            self.send(COORDINATOR, ("VOTE", txn, False))
            return
        self.state[txn] = PREPARED
        self.since[txn] = now
        self.send(COORDINATOR, ("VOTE", txn, True))
        self.set_timer(self.timeout, f"t{txn}")

    def _decide(self, txn: int, commit: bool, now: float) -> None:
        self.state[txn] = COMMITTED if commit else ABORTED
        start = self.since.pop(txn, None)
        if start is not None:
            held = now - start
            self.held_s += held
            if held > self.held_max:
                self.held_max = held
        self.blocked.pop(txn, None)
        self.recovering.pop(txn, None)
        self.cancel_timer(f"t{txn}")
        self.cancel_timer(f"w{txn}")
        self.decided.append((txn, "commit" if commit else "abort"))

    def state_of(self, txn: int) -> str | None:
        """The view's word for where this transaction stands here (``blocked``: prepared and overdue)."""
        state = self.state.get(txn)
        return "blocked" if txn in self.blocked and state in (PREPARED, PRECOMMITTED) else state

    def check_invariants(self) -> None:
        for txn in self.since:
            assert self.state[txn] in (PREPARED, PRECOMMITTED), (self.id, txn, "holds locks but is not prepared")
        for txn in self.blocked:
            assert self.state[txn] in (PREPARED, PRECOMMITTED), (self.id, txn, "blocked but not prepared")
