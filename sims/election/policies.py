"""The policies: each builds its nodes (plus the coordination service it relies on, as node n)
and names its upkeep messages. The panel (``ElectionPanel``) owns the network, the faults and
the books; a policy only decides how its nodes behave."""

from __future__ import annotations

from sims.consensus.raft import RaftNode
from sims.core.registry import register_policy
from sims.election.bully import BullyNode
from sims.election.lease import LeaseClient, LeaseService
from sims.election.ring import RingNode
from sims.election.zookeeper import ZkClient, ZkService


@register_policy("election", "bully")
class Bully:
    """Garcia-Molina's bully algorithm (IEEE Trans. Computers, 1982): the highest id up wins."""

    UPKEEP = frozenset({"HEARTBEAT"})
    WHY = "bully makes the highest id that answers the leader"
    NONE = "an election is in flight: the caller waits for higher ids to answer, then for a coordinator"
    SPLIT = "a high id cut off from the rest still leads its side, while the others elect the highest they reach"

    def make_nodes(self, n: int, p: dict) -> list:
        return [BullyNode(i, n, p) for i in range(n)]


@register_policy("election", "ring")
class Ring:
    """Chang & Roberts's ring (CACM, 1979): ids go round one way; only the largest comes back."""

    UPKEEP = frozenset({"HEARTBEAT"})
    WHY = "the ring elects the largest id its election message carried all the way round"
    NONE = "the election message is still going round the ring, skipping successors that do not answer"

    def make_nodes(self, n: int, p: dict) -> list:
        return [RingNode(i, n, p) for i in range(n)]


@register_policy("election", "zookeeper")
class ZooKeeper:
    """ZooKeeper's recipe (ZooKeeper Recipes, Leader Election; Hunt et al., ATC'10): ephemeral
    sequential znodes, the lowest leads, each other candidate watches its predecessor."""

    UPKEEP = frozenset({"PING", "PONG"})
    WHY = "the owner of the lowest sequential znode leads"
    NONE = "the old leader's session has not expired yet, or the next in line has not been told"
    herd = False

    def make_nodes(self, n: int, p: dict) -> list:
        return [*(ZkClient(i, n, p) for i in range(n)), ZkService(n, n, p, self.herd)]


@register_policy("election", "zookeeper_herd")
class ZooKeeperHerd(ZooKeeper):
    """The naive recipe the ZooKeeper docs warn against: every candidate watches the leader's
    znode, so its deletion wakes all n − 1 (the herd effect)."""

    herd = True


@register_policy("election", "lease")
class Lease:
    """A leader lease from a lock service (Gray & Cheriton, SOSP'89; Chubby, OSDI'06): lead until
    the lease, measured on one's own clock from the request, less a guard, runs out."""

    UPKEEP = frozenset({"RENEW", "RENEWED", "HELD"})  # a follower's polls (ACQUIRE) count as the election's
    WHY = "it holds the service's lease, timed on its own clock less the guard"
    NONE = "the old lease has not run out at the service yet, or no follower has asked since"
    SPLIT = "a holder whose clock runs slow still counts its lease valid after the service granted it again"

    def make_nodes(self, n: int, p: dict) -> list:
        return [*(LeaseClient(i, n, p) for i in range(n)), LeaseService(n, n, p)]


@register_policy("election", "raft_election")
class RaftElection:
    """Raft's leader election alone (Ongaro & Ousterhout, ATC'14, §5.2): the consensus topic's
    ``RaftNode`` with no client commands, so its AppendEntries are only heartbeats."""

    UPKEEP = frozenset({"AE", "AER"})
    WHY = "it won the votes of a majority in its term"
    NONE = "candidates are still collecting votes (a split vote waits for another random timeout)"
    SPLIT = "an old leader cut off from the majority has not heard of the newer term"

    def make_nodes(self, n: int, p: dict) -> list:
        election = (p["election_lo"], max(p["election_lo"], p["election_hi"]))
        return [RaftNode(i, n, election, p["heartbeat"], p["prevote"], p["check_quorum"]) for i in range(n)]
