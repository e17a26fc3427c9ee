"""Raft (Ongaro & Ousterhout, USENIX ATC'14, the extended paper's Figure 2), one server per node.

Persistent state (kept by a durable restart): ``term``, ``voted_for``, ``log``; the log is a list
of ``(term, value)`` and index 1 is ``log[0]``. Volatile: ``role``, ``commit``, ``leader``, and on
a leader ``next_index`` / ``match_index``. Options: ``prevote`` (the thesis's §9.6: a candidate
first asks whether it could win, without raising its term; a server that heard from a leader within
the minimum election timeout says no) and ``check_quorum`` (a leader that has not heard from a
majority within an election timeout steps down). A new leader appends no no-op entry, so the
Figure 8 rule (commit only entries of the current term by counting replicas) is what stands
between a leader and an unsafe commit; ``broken_commit`` drops it. ``disk``: seconds a server
spends writing its term, vote or new entries to stable storage before it answers the RPC that
changed them (Figure 2: "updated on stable storage before responding"); a candidate's own term
and vote are written while its RequestVotes are on the wire, so they leave at once.
``timer_step`` > 0: election timeouts are whole multiples of it above the low end (a timer of
milliseconds draws one of 6 values in 150–155 ms); 0: any real number in the range.

Messages are tuples: ``("RV", term, last_index, last_term, pre)``, ``("RVR", term, granted, pre)``,
``("AE", term, prev_index, prev_term, entries, leader_commit)``, ``("AER", term, ok, match)``.
"""

from __future__ import annotations

from sims.net import Node

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"


class RaftNode(Node):
    def __init__(
        self,
        i: int,
        n: int,
        election: tuple[float, float],
        heartbeat: float,
        prevote: bool = False,
        check_quorum: bool = False,
        broken_commit: bool = False,
        disk: float = 0.0,
        timer_step: float = 0.0,
    ) -> None:
        super().__init__(i, n)
        self.election = election
        self.heartbeat = heartbeat
        self.prevote = prevote
        self.check_quorum = check_quorum
        self.broken_commit = broken_commit
        self.disk = disk
        self.timer_step = timer_step
        self.term = 0
        self.voted_for: int | None = None
        self.log: list[tuple[int, int]] = []
        self._volatile()

    def _volatile(self) -> None:
        self.role = FOLLOWER
        self.commit = 0
        self.leader: int | None = None
        self.votes: list[int] = []
        self.pre_votes: list[int] = []
        self.next_index = [1] * self.n
        self.match_index = [0] * self.n
        self.heard = [0.0] * self.n  # leader: when each follower last answered
        self.leader_seen = -1.0  # when a current leader last reached this node
        self.dirty = 1  # lowest log index changed since the checker last looked
        self.elections = 0  # times it became a candidate
        self.retries = 0  # times its election timed out while still a candidate (split / lost)
        self.won = 0  # times it became leader
        self.in_pre = False

    # boot and faults ----------------------------------------------------------------------
    def on_start(self, now: float) -> None:
        """Servers boot up to one heartbeat apart (so equal timeouts are not equal to the
        nanosecond from t = 0)."""
        lo, hi = self.election
        self.set_timer(lo + (hi - lo) * self.rng.random() + self.heartbeat * self.rng.random(), "election")

    def on_restart(self, durable: bool, now: float) -> None:
        if not durable:
            self.term, self.voted_for, self.log = 0, None, []
        counts = (self.elections, self.retries, self.won)
        self._volatile()
        self.elections, self.retries, self.won = counts
        self.dirty = 1
        self._reset_election()

    def _reset_election(self) -> None:
        lo, hi = self.election
        step = self.timer_step
        if step > 0.0:  # a timer of whole steps (LogCabin's: milliseconds), both ends included
            self.set_timer(lo + step * self.rng.randrange(round((hi - lo) / step) + 1), "election")
        else:
            self.set_timer(lo + (hi - lo) * self.rng.random(), "election")

    def _last(self) -> tuple[int, int]:
        return len(self.log), (self.log[-1][0] if self.log else 0)

    def _step_down(self, term: int) -> None:
        if term > self.term:
            self.term, self.voted_for = term, None
        if self.role == LEADER:
            self.cancel_timer("heartbeat")
        self.role = FOLLOWER
        self.in_pre = False

    # timers ----------------------------------------------------------------------------------
    def on_timer(self, name: str, now: float) -> None:
        if name == "heartbeat":
            if self.role == LEADER:
                if self.check_quorum and not self._quorum_heard(now):
                    self._step_down(self.term)
                    self.leader = None
                    self._reset_election()
                    return
                self._replicate_all()
                self.set_timer(self.heartbeat, "heartbeat")
            return
        if self.role == LEADER:
            return
        if self.role == CANDIDATE:
            self.retries += 1
        self._reset_election()
        last_index, last_term = self._last()
        if self.prevote:
            self.in_pre = True
            self.pre_votes = [self.id]
            self.broadcast(("RV", self.term + 1, last_index, last_term, True))
        else:
            self._campaign(last_index, last_term)

    def _campaign(self, last_index: int, last_term: int) -> None:
        self.in_pre = False
        self.role = CANDIDATE
        self.term += 1
        self.voted_for = self.id
        self.votes = [self.id]
        self.leader = None
        self.elections += 1
        self.broadcast(("RV", self.term, last_index, last_term, False))
        self._maybe_win()

    def _majority(self, ids: list[int]) -> bool:
        """Whether ``ids`` (distinct servers) are a majority (``sims.consensus.membership``: of
        the configuration)."""
        return 2 * len(ids) > self.n

    def _quorum_heard(self, now: float) -> bool:
        window = self.election[0]
        n = 1
        for j in range(self.n):
            if j != self.id and now - self.heard[j] <= window:
                n += 1
        return 2 * n > self.n

    # messages --------------------------------------------------------------------------------
    def on_message(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        term = msg[1]
        if kind == "RV" and msg[4]:  # pre-vote: never changes our term
            self._on_prevote(src, msg, now)
            return
        if kind == "RVR" and msg[3]:
            if self.in_pre and msg[2] and src not in self.pre_votes:
                self.pre_votes.append(src)
                if self._majority(self.pre_votes):
                    self._campaign(*self._last())
            elif term > self.term:
                self._step_down(term)
            return
        newer = term > self.term
        if newer:
            self._step_down(term)
            self.leader = None
        if kind == "RV":
            self._on_vote_request(src, msg, newer)
        elif kind == "RVR":
            if self.role == CANDIDATE and term == self.term and msg[2] and src not in self.votes:
                self.votes.append(src)
                self._maybe_win()
        elif kind == "AE":
            self._on_append(src, msg, now, newer)
        elif kind == "AER":
            self._on_append_reply(src, msg, now)

    def _up_to_date(self, last_index: int, last_term: int) -> bool:
        my_index, my_term = self._last()
        return last_term > my_term or (last_term == my_term and last_index >= my_index)

    def _on_prevote(self, src: int, msg: tuple, now: float) -> None:
        _, term, last_index, last_term, _ = msg
        recent = self.leader_seen >= 0.0 and now - self.leader_seen < self.election[0]
        ok = term > self.term and not recent and self._up_to_date(last_index, last_term)
        self.send(src, ("RVR", self.term, ok, True))

    def _on_vote_request(self, src: int, msg: tuple, wrote: bool) -> None:
        _, term, last_index, last_term, _ = msg
        ok = term == self.term and self.voted_for in (None, src) and self._up_to_date(last_index, last_term)
        if ok:
            self.voted_for = src
            self._reset_election()
        self._reply(src, ("RVR", self.term, ok, False), wrote or ok)

    def _reply(self, dst: int, msg: tuple, wrote: bool) -> None:
        """Answer an RPC; one that changed the term, vote or log waits for the disk write."""
        if wrote and self.disk > 0.0:
            self.send(dst, msg, self.disk)
        else:
            self.send(dst, msg)

    def _maybe_win(self) -> None:
        if self.role != CANDIDATE or not self._majority(self.votes):
            return
        self.role = LEADER
        self.leader = self.id
        self.won += 1
        self.cancel_timer("election")
        self.next_index = [len(self.log) + 1] * self.n
        self.match_index = [0] * self.n
        self.match_index[self.id] = len(self.log)
        now = self.net.now
        self.heard = [now] * self.n
        self._replicate_all()
        self.set_timer(self.heartbeat, "heartbeat")

    # replication ------------------------------------------------------------------------------
    def propose(self, value: int) -> int:
        """A client command on the leader: append it and replicate; returns its index."""
        self.log.append((self.term, value))
        self.match_index[self.id] = len(self.log)
        self._replicate_all()
        if self.n == 1:
            self._advance_commit()
        return len(self.log)

    def _replicate_all(self) -> None:
        for j in range(self.n):
            if j != self.id:
                self._replicate(j)

    def _replicate(self, j: int) -> None:
        prev = self.next_index[j] - 1
        prev_term = self.log[prev - 1][0] if prev > 0 else 0
        entries = tuple(self.log[prev : prev + 16])
        self.send(j, ("AE", self.term, prev, prev_term, entries, self.commit))

    def _on_append(self, src: int, msg: tuple, now: float, wrote: bool) -> None:
        _, term, prev, prev_term, entries, leader_commit = msg
        if term < self.term:
            self.send(src, ("AER", self.term, False, 0))
            return
        if self.role != FOLLOWER:
            self._step_down(term)
        self.leader = src
        self.leader_seen = now
        self._reset_election()
        if prev > len(self.log) or (prev > 0 and self.log[prev - 1][0] != prev_term):
            self._reply(src, ("AER", self.term, False, min(prev - 1, len(self.log))), wrote)
            return
        log = self.log
        for k, entry in enumerate(entries):
            i = prev + k  # 0-based position of entry
            if i < len(log):
                if log[i][0] == entry[0]:
                    continue
                del log[i:]  # a conflict: drop it and everything after (§5.3)
            log.append(entry)
            wrote = True
            self.dirty = min(self.dirty, i + 1)
        match = prev + len(entries)
        if leader_commit > self.commit:
            self.commit = min(leader_commit, match)
        self._reply(src, ("AER", self.term, True, match), wrote)

    def _on_append_reply(self, src: int, msg: tuple, now: float) -> None:
        _, term, ok, match = msg
        if self.role != LEADER or term != self.term:
            return
        self.heard[src] = now
        if ok:
            if match > self.match_index[src]:
                self.match_index[src] = match
            self.next_index[src] = max(self.next_index[src], match + 1)
            self._advance_commit()
            if self.next_index[src] <= len(self.log):
                self._replicate(src)
        else:
            self.next_index[src] = max(1, min(self.next_index[src] - 1, match + 1))
            self._replicate(src)

    def _advance_commit(self) -> None:
        """The largest N held by a majority; committed only if log[N] is of this term (§5.4.2),
        unless ``broken_commit``, which counts replicas of any term (the Figure 8 bug)."""
        matches = sorted(self.match_index, reverse=True)
        n = matches[self.n // 2]
        if n > self.commit and (self.broken_commit or self.log[n - 1][0] == self.term):
            self.commit = n

    def check_invariants(self) -> None:
        assert 0 <= self.commit <= len(self.log), (self.id, self.commit, len(self.log))
        assert self.role != LEADER or self.voted_for == self.id, (self.id, "a leader that did not vote for itself")
        for k in range(1, len(self.log)):
            assert self.log[k - 1][0] <= self.log[k][0], (self.id, "terms in a log never decrease")
