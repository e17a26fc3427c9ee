"""Raft membership changes: the dissertation's single-server change (Ongaro, PhD thesis §4.1), and
a deliberately unsafe variant.

A configuration is a set of servers; a cluster of ``n`` nodes starts with nodes ``0 .. members-1``
as members and the rest as spares, which run but neither campaign nor count. A change is a log
entry whose value is the string ``"config 0,1,2,3"`` (the whole new configuration). A server uses
the newest configuration entry in its log, committed or not, from the moment it is appended (so a
leader uses the new configuration at once, a follower when the entry reaches it, and a follower
whose entry is cut by a conflicting leader falls back to the one before). Every quorum (votes,
pre-votes, commits, check-quorum) is a majority of that configuration, and messages go to its
members only.

The rule that makes single-server changes safe: any majority of the old configuration and any
majority of one with one server more or less intersect. So a leader adds or removes one server
at a time, and begins a change only after the previous one has committed, and only once an entry
of its own term has committed (the correction Ongaro posted to raft-dev in 2015: without it a
new leader could append a change over an uncommitted one of an earlier term). A leader that
removes itself keeps leading, without counting itself, until the change commits, then steps
down. ``unsafe`` drops the waiting: each request is appended at once, so two requests in a row
move the cluster two servers in one step (3 to 5 servers: {0, 1} is a majority of the old
configuration and {2, 3, 4} one of the new, with no server in common), and two sides can each
elect a leader and commit different entries at one index. The checker (``sims.consensus.safety``)
sees that by its ordinary rules: state machine safety, and election safety when the two leaders
share a term.
"""

from __future__ import annotations

from sims.consensus.raft import LEADER, RaftNode

_TAG = "config "


def config_entry(members) -> str:
    """The log value of a configuration entry."""
    return _TAG + ",".join(str(j) for j in sorted(members))


def parse(value) -> frozenset[int] | None:
    """The members a log value names, or None when it is a client command."""
    if isinstance(value, str) and value.startswith(_TAG):
        return frozenset(int(j) for j in value[len(_TAG) :].split(",") if j)
    return None


class MemberRaftNode(RaftNode):
    """A Raft server whose quorums are majorities of its newest configuration (module docstring)."""

    def __init__(self, i: int, n: int, *args, members: int = 0, unsafe: bool = False, **kw) -> None:
        super().__init__(i, n, *args, **kw)
        self.initial = frozenset(range(members or n))
        self.unsafe = unsafe
        self._set_config(self.initial, 0)

    def _set_config(self, config: frozenset[int], index: int) -> None:
        self.config = config
        self.config_index = index  # log index of the entry (0: the initial configuration)
        self.peers = tuple(j for j in sorted(config) if j != self.id)

    def _config_from_log(self, lo: int = 1) -> None:
        """Take the newest configuration entry at or after index ``lo``; if the one in use was cut
        from the log, the newest anywhere (or the initial configuration)."""
        log = self.log
        start = lo if self.config_index < lo and self.config_index <= len(log) else 1
        for k in range(len(log), start - 1, -1):
            config = parse(log[k - 1][1])
            if config is not None:
                if k != self.config_index or config != self.config:
                    self._set_config(config, k)
                return
        if start == 1 and self.config_index:
            self._set_config(self.initial, 0)

    # boot and faults --------------------------------------------------------------------------
    def on_restart(self, durable: bool, now: float) -> None:
        super().on_restart(durable, now)
        self._config_from_log()

    # quorums -------------------------------------------------------------------------------------
    def _majority(self, ids: list[int]) -> bool:
        config = self.config
        return 2 * sum(1 for j in ids if j in config) > len(config)

    def _quorum_heard(self, now: float) -> bool:
        window = self.election[0]
        heard = [j for j in self.peers if now - self.heard[j] <= window] + [self.id]
        return self._majority(heard)

    def _advance_commit(self) -> None:
        config = self.config
        if not config:
            return
        matches = sorted((self.match_index[j] for j in config), reverse=True)
        n = matches[len(config) // 2]
        if n > self.commit and (self.broken_commit or self.log[n - 1][0] == self.term):
            self.commit = n
        if self.role == LEADER and self.id not in config and self.config_index <= self.commit:
            self._step_down(self.term)  # removed, and the change is committed: hand over (§4.2.2)
            self.leader = None

    def _step_down(self, term: int) -> None:
        """A deposed leader restarts its election timer (``RaftNode`` leaves that to the next
        AppendEntries or granted vote, which may never come in a configuration of two servers,
        where the other one cannot win without this one's vote)."""
        was_leader = self.role == LEADER
        super()._step_down(term)
        if was_leader:
            self._reset_election()

    # messages go to the configuration's members only ------------------------------------------
    def broadcast(self, msg) -> None:
        for j in self.peers:
            self.net.send(self.id, j, msg)

    def _replicate_all(self) -> None:
        for j in self.peers:
            self._replicate(j)

    def on_timer(self, name: str, now: float) -> None:
        if name == "election" and self.id not in self.config:  # a spare or a removed server
            self._reset_election()
            return
        super().on_timer(name, now)

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        dirty = self.dirty
        super().on_message(src, msg, now)
        if self.dirty < dirty or self.dirty <= len(self.log) or len(self.log) < self.config_index:
            self._config_from_log(self.dirty)

    def propose(self, value: int) -> int:
        index = super().propose(value)
        if self.config == {self.id}:  # a cluster of one commits alone
            self._advance_commit()
        return index

    # the change itself ----------------------------------------------------------------------------
    def change(self, kind: str, j: int) -> bool:
        """A request on the leader to ``"add"`` or ``"remove"`` server ``j``. True: the request is
        finished (its configuration committed, or nothing to do; the unsafe variant: appended);
        False: it waits (for the previous change, for an entry of this term, or for its own
        entry to commit), and the client asks again after the next event."""
        config = self.config
        target = config | {j} if kind == "add" else config - {j}
        if target == config:  # already in effect: done once committed
            return self.unsafe or self.config_index <= self.commit
        if not target:
            return True  # the last member is never removed
        if not self.unsafe:
            if self.config_index > self.commit:
                return False  # the previous change has not committed
            if not (self.commit and self.log[self.commit - 1][0] == self.term):
                return False  # no entry of this term committed yet
        self.log.append((self.term, config_entry(target)))
        self._set_config(frozenset(target), len(self.log))
        self.match_index[self.id] = len(self.log)
        self._replicate_all()
        self._advance_commit()
        return self.unsafe
