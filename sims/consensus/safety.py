"""Raft's safety properties (the extended paper's Figure 3), checked after every delivered message
and fired timer. Each check is incremental: a node marks the lowest log index it changed
(``dirty``), and the checker looks only there and at newly committed indices.

- election safety: at most one leader per term;
- log matching: two logs with an entry of the same index and term agree on it and on the term of
  the entry before it (which, inductively, is the whole prefix);
- leader completeness: an entry committed in term t (the term of the leader that committed it,
  which may be later than the entry's own) is in the log of every leader of a term > t;
- state machine safety: no two nodes commit different entries at one index (and no node drops an
  entry it had committed).

A violation is counted once per (property, index or term); ``first`` keeps the earliest of each.
"""

from __future__ import annotations

from sims.core.panel import Checkpointed


class RaftChecker(Checkpointed):
    def __init__(self) -> None:
        self.leaders: dict[int, int] = {}  # term -> the node that led it
        self.chosen: dict[int, tuple[int, int]] = {}  # index -> the (term, value) first committed there
        self.committed_in: dict[int, int] = {}  # index -> the term of the node that first committed it
        self.entries: dict[tuple[int, int], tuple[int, int]] = {}  # (index, term) -> (value, prev term)
        self.seen_commit: list[int] = []  # per node: commit index the checker has looked at
        self.violations: dict[str, float] = {}  # "property:key" -> first time
        self.terms_at: dict[int, list[int]] = {}  # index -> every term an entry there had
        self.discarded = 0  # entries that lost their index to a committed entry of another term
        self.checked_won: list[int] = []  # per node: elections won that the checker has looked at

    def _violate(self, key: str, t: float) -> None:
        if key not in self.violations:
            self.violations[key] = t

    def check(self, nodes: list, t: float) -> list[int]:
        """Check after one event; returns the indices committed for the first time."""
        if not self.seen_commit:
            self.seen_commit = [0] * len(nodes)
            self.checked_won = [0] * len(nodes)
        chosen = self.chosen
        new_chosen: list[int] = []
        for node in nodes:
            log = node.log
            if node.role == "leader":
                holder = self.leaders.setdefault(node.term, node.id)
                if holder != node.id:
                    self._violate(f"election_safety:{node.term}", t)
            if node.dirty <= len(log):
                entries = self.entries
                for i in range(node.dirty, len(log) + 1):
                    term, value = log[i - 1]
                    prev = log[i - 2][0] if i > 1 else 0
                    known = entries.get((i, term))
                    if known is None:
                        known = entries[(i, term)] = (value, prev)
                        self.terms_at.setdefault(i, []).append(term)
                        if i in chosen and chosen[i][0] != term:
                            self.discarded += 1
                    if known != (value, prev):
                        self._violate(f"log_matching:{i}", t)
                lo = node.dirty
            else:
                lo = len(log) + 1
            node.dirty = len(log) + 1
            seen = self.seen_commit[node.id]
            if node.commit < seen:  # restarted: commit index is volatile
                seen = 0
            start = min(lo, seen + 1)
            for i in range(start, node.commit + 1):
                if i > len(log):
                    self._violate(f"state_machine_safety:{i}", t)
                    continue
                entry = log[i - 1]
                first = chosen.get(i)
                if first is None:
                    chosen[i] = entry
                    self.committed_in[i] = node.term
                    new_chosen.append(i)
                    for other in self.terms_at.get(i, ()):
                        if other != entry[0]:
                            self.discarded += 1
                elif first != entry:
                    self._violate(f"state_machine_safety:{i}", t)
            self.seen_commit[node.id] = node.commit
        for node in nodes:
            if node.role != "leader" or not node.up:
                continue
            if node.won != self.checked_won[node.id]:  # a new leader: every committed entry
                self.checked_won[node.id] = node.won
                indices = list(chosen)
            elif new_chosen:
                indices = new_chosen
            else:
                continue
            log = node.log
            for i in indices:  # the paper's property: leaders of terms after the one it was committed in
                entry = chosen[i]
                if self.committed_in[i] < node.term and (i > len(log) or log[i - 1] != entry):
                    self._violate(f"leader_completeness:{node.term}", t)
                    break
        return new_chosen


class PaxosChecker(Checkpointed):
    """Paxos's safety: at most one value chosen per slot. A value is chosen once a majority of
    acceptors have accepted it in one ballot (the checker sees every acceptance, which no single
    node can); a learner that believes another value chosen is a violation too."""

    def __init__(self) -> None:
        self.votes: dict[tuple[int, int], list[int]] = {}  # (slot, ballot) -> acceptors
        self.value_of: dict[tuple[int, int], int] = {}  # (slot, ballot) -> the value proposed there
        self.chosen: dict[int, tuple[int, int]] = {}  # slot -> (ballot, value) first chosen
        self.violations: dict[str, float] = {}
        self.discarded = 0
        self.learned: list[int] = []  # per node: commit index already compared

    def check(self, nodes: list, t: float) -> list[int]:
        if not self.learned:
            self.learned = [0] * len(nodes)
        n = len(nodes)
        new: list[int] = []
        for node in nodes:
            for slot, ballot, value, acceptor in node.accepts:
                key = (slot, ballot)
                if self.value_of.setdefault(key, value) != value:
                    self.violations.setdefault(f"one_value_per_ballot:{slot}", t)
                voters = self.votes.setdefault(key, [])
                if acceptor not in voters:
                    voters.append(acceptor)
                    if 2 * len(voters) > n and len(voters) * 2 - 2 <= n:  # just reached a majority
                        first = self.chosen.get(slot)
                        if first is None:
                            self.chosen[slot] = (ballot, value)
                            new.append(slot)
                        elif first[1] != value:
                            self.violations.setdefault(f"one_value_chosen:{slot}", t)
            node.accepts = []
            lo = self.learned[node.id] if node.commit >= self.learned[node.id] else 0
            for slot in range(lo + 1, node.commit + 1):
                mine = node.chosen.get(slot)
                first = self.chosen.get(slot)
                if first is not None and mine is not None and mine != first[1]:
                    self.violations.setdefault(f"learned_other_value:{slot}", t)
            self.learned[node.id] = node.commit
        return new
