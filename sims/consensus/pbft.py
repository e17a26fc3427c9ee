"""PBFT (Castro & Liskov, "Practical Byzantine Fault Tolerance", OSDI'99), one replica per node,
and the checker of its safety properties.

n = 3f + 1 replicas; the primary of view v is replica v mod n. Normal case (§4.2): the client
multicasts each request to every replica (the paper's retransmission path, taken at once, so that
every backup times the primary); the primary assigns the next sequence number and multicasts
PRE-PREPARE; a backup that accepts it multicasts PREPARE; a replica is *prepared* for (v, seq, m)
once it holds the pre-prepare and 2f matching prepares from distinct backups, and then multicasts
COMMIT; it is *committed-local* once prepared with 2f + 1 matching commits (its own included), and
executes requests in sequence order. Messages per request, no faults: (n - 1) pre-prepares,
(n - 1)² prepares, n(n - 1) commits, 2n(n - 1) in all.

View change (§4.4): a backup that waits on a request for ``view_timeout`` multicasts VIEW-CHANGE
for v + 1 with its prepared certificates; a replica that sees f + 1 of them for higher views joins
the lowest; the new primary, with 2f + 1, multicasts NEW-VIEW carrying O: one pre-prepare per
sequence number above the quorum's lowest executed one, with the value prepared in the highest
view, else the null request (value 0). A view change that does not end within its timer moves on
to the next view with twice the timeout.

Simplified: no checkpoints and no garbage collection (a view change carries every prepared
certificate); no state transfer (a replica outside the view-change quorum that missed sequence
numbers below the new view's low mark stays behind); authentication is the simulator's: a traitor
can lie about a value but cannot forge another replica's message or a client's request, its
VIEW-CHANGE messages are honest, and certificates are trusted rather than re-verified; replies to
the client are not messages (the checker reads commits).

Traitors (``traitor`` set: ``sims.net``'s ``byzantine`` fault, or the panel's ``traitors``)
collude. Every PRE-PREPARE, PREPARE and COMMIT a traitor sends carries the true value to the
first half of the correct replicas (by id, rounded down) and the null request to the rest
(``forge``), and a traitor votes COMMIT as soon as it pre-prepares or prepares, without being
prepared. With f traitors or fewer neither side reaches 2f + 1 correct-plus-traitor votes on a
value the other commits; with more, both sides commit at one sequence number.

Messages: ``("PP", v, seq, value)``, ``("P", v, seq, value)``, ``("C", v, seq, value)``,
``("VC", v, executed, prepared)``, ``("NV", v, O)``. The node shows the panel Raft's fields:
``role`` (leader = primary, candidate = in a view change), ``term`` (the view), ``log``
(``(view, value)`` per sequence number, committed or prepared), ``commit`` (executed prefix).
"""

from __future__ import annotations

from sims.core.panel import Checkpointed
from sims.net import Node

_VOTES = ("PP", "P", "C")  # the messages a traitor forges


class PbftNode(Node):
    voted_for = None  # PBFT has no votes for a leader: the view names the primary

    def __init__(self, i: int, n: int, timeout: float) -> None:
        super().__init__(i, n)
        self.f = (n - 1) // 3
        self.timeout = timeout
        self.elections = self.retries = 0  # view changes started; view changes that timed out
        self.won = 1 if i == 0 else 0  # views this replica led (view 0 included)
        self.issued: list[int] = []  # client requests received, drained by the checker
        self.new_commits: list[tuple[int, int, int]] = []  # (seq, view, value), drained by the checker
        self._fresh()

    def _fresh(self) -> None:
        self.view = 0
        self.in_vc = False  # between VIEW-CHANGE and NEW-VIEW for ``view``
        self.vc_tries = 0  # view changes in a row without a new view (the timer doubles)
        self.pp: dict[tuple[int, int], int] = {}  # (view, seq) -> value accepted in a pre-prepare
        self.votes: dict[tuple, list[int]] = {}  # (kind, view, seq, value) -> senders
        self.sent_votes: set[tuple[str, int, int]] = set()  # (kind, view, seq) this replica voted
        self.prepared: dict[int, tuple[int, int]] = {}  # seq -> (view, value) prepared in the highest view
        self.committed: dict[int, tuple[int, int]] = {}  # seq -> (view, value) committed-local
        self.commit = 0  # requests executed up to this sequence number
        self.known: set[int] = set()  # client requests received (a pre-prepare must name one)
        self.executed: set[int] = set()
        self.waiting: list[int] = []  # known requests not yet executed, in arrival order
        self.next_seq = 1  # primary: the next sequence number
        self.assigned: dict[int, int] = {}  # primary: request -> its sequence number in this view
        self.vcs: dict[int, dict[int, tuple]] = {}  # view -> sender -> (executed, prepared)
        self.early: list[tuple[int, int, int, int]] = []  # pre-prepares of a view not yet entered

    # what the panel reads -----------------------------------------------------------------------
    @property
    def term(self) -> int:
        return self.view

    @property
    def role(self) -> str:
        if self.in_vc:
            return "candidate"
        return "leader" if self.view % self.n == self.id else "follower"

    @property
    def log(self) -> list[tuple[int, int | None]]:
        top = max(max(self.committed, default=0), max(self.prepared, default=0))
        return [self.committed.get(s) or self.prepared.get(s) or (0, None) for s in range(1, top + 1)]

    # client requests ----------------------------------------------------------------------------
    def propose(self, value: int) -> int:
        """The client's request reaches this replica; the primary assigns it a sequence number."""
        self.issued.append(value)
        if value in self.known:
            return 0
        self.known.add(value)
        self.waiting.append(value)
        if not self.in_vc:
            if "request" not in self.timers:
                self.set_timer(self.timeout, "request")
            if self.view % self.n == self.id:
                return self._assign(value)
        return 0

    def _assign(self, value: int) -> int:
        if value in self.assigned:
            return self.assigned[value]
        seq = self.next_seq
        self.next_seq += 1
        self.assigned[value] = seq
        self.pp[(self.view, seq)] = value
        self.broadcast(("PP", self.view, seq, value))
        if self.traitor:
            self._vote("C", self.view, seq, value)
        return seq

    # the normal case ----------------------------------------------------------------------------
    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        if kind == "PP":
            self._on_pre_prepare(src, msg[1], msg[2], msg[3])
        elif kind == "P" or kind == "C":
            v, seq = msg[1], msg[2]
            if v < self.view or (kind == "P" and src == v % self.n):
                return  # an old view, or a prepare from the primary (it pre-prepares instead)
            self._count(kind, v, seq, msg[3], src)
            if v == self.view and not self.in_vc:
                self._progress(v, seq)
        elif kind == "VC":
            self._on_view_change(src, msg)
        elif kind == "NV":
            v = msg[1]
            if src == v % self.n and (v > self.view or (v == self.view and self.in_vc)):
                self._install(v, msg[2])

    def _on_pre_prepare(self, src: int, v: int, seq: int, value: int) -> None:
        if src != v % self.n or v < self.view:
            return
        if v > self.view or self.in_vc:  # it overtook its NEW-VIEW: keep it for then
            self.early.append((src, v, seq, value))
            return
        if value and value not in self.known:
            return  # not a request any client sent: its signature would not verify
        if self.pp.setdefault((v, seq), value) != value:
            return  # a second pre-prepare for one sequence number: keep the first
        self._vote("P", v, seq, value)
        if self.traitor:
            self._vote("C", v, seq, value)
        self._progress(v, seq)

    def _count(self, kind: str, v: int, seq: int, value: int, src: int) -> None:
        senders = self.votes.setdefault((kind, v, seq, value), [])
        if src not in senders:
            senders.append(src)

    def _vote(self, kind: str, v: int, seq: int, value: int) -> None:
        """Count this replica's own PREPARE or COMMIT and multicast it (once per view and seq)."""
        if (kind, v, seq) in self.sent_votes:
            return
        self.sent_votes.add((kind, v, seq))
        self._count(kind, v, seq, value, self.id)
        self.broadcast((kind, v, seq, value))

    def _progress(self, v: int, seq: int) -> None:
        """Prepared: the pre-prepare and 2f matching prepares; committed-local: and 2f + 1 commits."""
        value = self.pp.get((v, seq))
        if value is None or len(self.votes.get(("P", v, seq, value), ())) < 2 * self.f:
            return
        if self.prepared.get(seq, (-1, None))[0] < v:
            self.prepared[seq] = (v, value)
        self._vote("C", v, seq, value)  # also after committing: a new view's laggards need it
        if seq not in self.committed and len(self.votes.get(("C", v, seq, value), ())) >= 2 * self.f + 1:
            self.committed[seq] = (v, value)
            self.new_commits.append((seq, v, value))
            self._execute()

    def _execute(self) -> None:
        done = False
        while self.commit + 1 in self.committed:
            self.commit += 1
            value = self.committed[self.commit][1]
            if value and value not in self.executed:
                self.executed.add(value)
                if value in self.waiting:
                    self.waiting.remove(value)
                done = True
        if not self.waiting:
            self.cancel_timer("request")
        elif done and not self.in_vc:  # progress: time the next request afresh
            self.set_timer(self.timeout, "request")

    # view changes -------------------------------------------------------------------------------
    def on_timer(self, name: str, now: float) -> None:
        if name == "request" and not self.in_vc and self.waiting:
            self._start_view_change(self.view + 1)
        elif name == "viewchange" and self.in_vc:
            self.retries += 1
            self._start_view_change(self.view + 1)

    def _start_view_change(self, v: int) -> None:
        self.view = v
        self.in_vc = True
        self.elections += 1
        self.cancel_timer("request")
        prepared = tuple((s, pv, value) for s, (pv, value) in sorted(self.prepared.items()))
        msg = ("VC", v, self.commit, prepared)
        self.broadcast(msg)
        self.set_timer(self.timeout * (1 << min(self.vc_tries, 8)), "viewchange")
        self.vc_tries += 1
        self._on_view_change(self.id, msg)

    def _on_view_change(self, src: int, msg: tuple) -> None:
        v = msg[1]
        if v < self.view or (v == self.view and not self.in_vc):
            return
        self.vcs.setdefault(v, {})[src] = (msg[2], msg[3])
        if v > self.view:  # f + 1 replicas want a later view: one of them is correct, join
            higher = sorted(w for w in self.vcs if w > self.view)
            senders = {s for w in higher for s in self.vcs[w]}
            if len(senders) >= self.f + 1:
                self._start_view_change(higher[0])
            return
        if v % self.n == self.id and len(self.vcs[v]) >= 2 * self.f + 1:
            self._new_view(v)

    def _new_view(self, v: int) -> None:
        quorum = self.vcs[v]
        low = min(executed for executed, _ in quorum.values())
        best: dict[int, tuple[int, int]] = {}
        for sender in sorted(quorum):
            for s, pv, value in quorum[sender][1]:
                if s > low and (s not in best or pv > best[s][0]):
                    best[s] = (pv, value)
        top = max(best, default=low)
        order = tuple((s, best[s][1] if s in best else 0) for s in range(low + 1, top + 1))
        self.won += 1
        self.broadcast(("NV", v, order))
        self._install(v, order, top)

    def _install(self, v: int, order: tuple, top: int = 0) -> None:
        """Enter view ``v``: O's pre-prepares are this view's first; the primary goes on after them."""
        self.view = v
        self.in_vc = False
        self.vc_tries = 0
        self.cancel_timer("viewchange")
        self.vcs = {w: d for w, d in self.vcs.items() if w > v}
        self.votes = {k: s for k, s in self.votes.items() if k[1] >= v}
        self.pp = {k: x for k, x in self.pp.items() if k[0] >= v}
        self.sent_votes = {k for k in self.sent_votes if k[1] >= v}
        primary = v % self.n == self.id
        self.assigned = {}
        for s, value in order:
            self.pp[(v, s)] = value
            if value:
                self.assigned[value] = s
            if not primary:
                self._vote("P", v, s, value)
            if self.traitor:
                self._vote("C", v, s, value)
        for s, _ in order:
            self._progress(v, s)
        early, self.early = self.early, []
        for src, ev, s, value in early:
            if ev == v:
                self._on_pre_prepare(src, ev, s, value)
            elif ev > v:
                self.early.append((src, ev, s, value))
        if primary:
            self.next_seq = max(top, self.commit) + 1
            for value in list(self.waiting):
                self._assign(value)
        if self.waiting:
            self.set_timer(self.timeout, "request")

    # faults -------------------------------------------------------------------------------------
    def on_restart(self, durable: bool, now: float) -> None:
        if not durable:
            self._fresh()
        if self.in_vc:
            self.set_timer(self.timeout * (1 << min(self.vc_tries, 8)), "viewchange")
        elif self.waiting:
            self.set_timer(self.timeout, "request")

    def forge(self, dst: int, msg: tuple) -> tuple:
        """The traitors' plan: the true value to the first half of the correct replicas, the
        null request to the rest (a traitor hears the truth)."""
        nodes = self.net.nodes
        if msg[0] not in _VOTES or nodes[dst].traitor:
            return msg
        correct = [j for j in range(self.n) if not nodes[j].traitor]
        if correct.index(dst) < len(correct) // 2:
            return msg
        return (msg[0], msg[1], msg[2], 0)

    def check_invariants(self) -> None:
        for s in range(1, self.commit + 1):
            assert s in self.committed, (self.id, "a gap in the executed prefix", s)
        for s, (v, _) in self.committed.items():
            assert v <= self.view, (self.id, "committed in a view it never reached", s)
        for value in self.waiting:
            assert value in self.known and value not in self.executed, (self.id, value)


class PbftChecker(Checkpointed):
    """PBFT's safety, over the correct replicas only (a traitor's state proves nothing):

    - agreement: no two correct replicas commit different requests at one sequence number;
    - validity: every request a correct replica commits was issued by a client (or is the null
      request a new view fills a gap with).

    ``chosen`` keeps the first commit of each sequence number; a violation is counted once per
    (property, sequence number)."""

    def __init__(self) -> None:
        self.chosen: dict[int, tuple[int, int]] = {}  # seq -> (view, value) first committed
        self.issued: set[int] = set()  # every request a client sent
        self.violations: dict[str, float] = {}  # "property:seq" -> first time
        self.discarded = 0

    def check(self, nodes: list, t: float) -> list[int]:
        """Check after one event; returns the sequence numbers committed for the first time."""
        for node in nodes:
            if node.issued:
                self.issued.update(node.issued)
                node.issued = []
        new: list[int] = []
        for node in nodes:
            if not node.new_commits:
                continue
            commits, node.new_commits = node.new_commits, []
            if node.traitor:
                continue
            for seq, view, value in commits:
                if value and value not in self.issued:
                    self.violations.setdefault(f"validity:{seq}", t)
                first = self.chosen.get(seq)
                if first is None:
                    self.chosen[seq] = (view, value)
                    new.append(seq)
                elif first[1] != value:
                    self.violations.setdefault(f"agreement:{seq}", t)
        return new
