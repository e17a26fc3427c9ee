"""The protocols: each builds its servers and the checker of its safety properties. The panel
(``ConsensusPanel``) owns the network, the client and the books; a protocol only decides how its
servers behave."""

from __future__ import annotations

from sims.consensus.membership import MemberRaftNode
from sims.consensus.paxos import PaxosNode
from sims.consensus.pbft import PbftChecker, PbftNode
from sims.consensus.raft import RaftNode
from sims.consensus.safety import PaxosChecker, RaftChecker
from sims.consensus.zab import ZabChecker, ZabNode
from sims.core.registry import Param, register_policy


@register_policy("consensus", "raft")
class Raft:
    """Raft as in the extended paper: commits an entry only once an entry of the leader's own
    term is on a majority (§5.4.2). With ``members`` set, membership changes by the thesis's
    single-server change (``sims.consensus.membership``)."""

    PARAMS = {
        "members": Param(
            int,
            0,
            "Raft: servers 0 .. members-1 form the first configuration, the rest are spares for `add` "
            "(0: every server, and the membership never changes)",
            min=0,
            max=9,
        ),
    }
    broken_commit = False
    unsafe_membership = False

    def make_nodes(self, n: int, p: dict) -> list[RaftNode]:
        election = (p["election_lo"], max(p["election_lo"], p["election_hi"]))
        args = (
            election,
            p["heartbeat"],
            p["prevote"],
            p["check_quorum"],
            self.broken_commit,
            p["disk"],
            p["timer_step"],
        )
        members = min(p.get("members", 0), n)  # a caller building params by hand may leave it out
        if members or self.unsafe_membership:
            return [MemberRaftNode(i, n, *args, members=members, unsafe=self.unsafe_membership) for i in range(n)]
        return [RaftNode(i, n, *args) for i in range(n)]

    def make_checker(self) -> RaftChecker:
        return RaftChecker()


@register_policy("consensus", "raft_broken_commit")
class RaftBrokenCommit(Raft):
    """Deliberately broken: commits any entry held by a majority, of whatever term (the rule the
    paper's Figure 8 shows to be unsafe)."""

    broken_commit = True


@register_policy("consensus", "raft_unsafe_membership")
class RaftUnsafeMembership(Raft):
    """Deliberately unsafe: a membership change is appended as soon as it is asked for, without
    waiting for the previous one to commit, so two changes in a row move the configuration by two
    servers at once, and two disjoint majorities can each elect a leader."""

    unsafe_membership = True


@register_policy("consensus", "multi_paxos")
class MultiPaxos:
    """Multi-Paxos with a distinguished proposer: phase 1 once per leader, then one round trip
    per command; a new leader re-proposes whatever may have been chosen."""

    single = False

    def make_nodes(self, n: int, p: dict) -> list[PaxosNode]:
        election = (p["election_lo"], max(p["election_lo"], p["election_hi"]))
        return [PaxosNode(i, n, election, p["heartbeat"], self.single) for i in range(n)]

    def make_checker(self) -> PaxosChecker:
        return PaxosChecker()


@register_policy("consensus", "paxos")
class SingleDecreePaxos(MultiPaxos):
    """Single-decree Paxos: one value (the first command a proposer holds) is chosen, once; no
    leader, so proposers that time out duel with higher ballots until it is."""

    single = True


@register_policy("consensus", "pbft")
class Pbft:
    """PBFT (Castro & Liskov, OSDI'99): 3f + 1 replicas order requests with pre-prepare, prepare
    and commit quorums of 2f + 1 and replace a faulty primary by a view change; ``traitors`` of
    them lie (``sims.consensus.pbft``)."""

    multicast = True  # the client sends each request to every replica, so backups time the primary

    def make_nodes(self, n: int, p: dict) -> list[PbftNode]:
        nodes = [PbftNode(i, n, p["view_timeout"]) for i in range(n)]
        for node in nodes[: p["traitors"]]:  # node 0 is view 0's primary
            node.traitor = "equivocate"
        return nodes

    def make_checker(self) -> PbftChecker:
        return PbftChecker()


@register_policy("consensus", "zab")
class Zab:
    """Zab (Junqueira, Reed & Serafini, DSN'11), ZooKeeper's atomic broadcast: epochs, discovery,
    synchronization and broadcast, transactions ordered by zxid (``sims.consensus.zab``)."""

    broken_sync = False

    def make_nodes(self, n: int, p: dict) -> list[ZabNode]:
        election = (p["election_lo"], max(p["election_lo"], p["election_hi"]))
        return [ZabNode(i, n, election, p["heartbeat"], self.broken_sync) for i in range(n)]

    def make_checker(self) -> ZabChecker:
        return ZabChecker()


@register_policy("consensus", "zab_broken_sync")
class ZabBrokenSync(Zab):
    """Deliberately broken: a new epoch is acknowledged whatever the candidate's history, and its
    leader imposes its own history instead of adopting the newest of its quorum."""

    broken_sync = True
