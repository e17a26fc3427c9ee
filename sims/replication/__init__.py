"""Replication: one register store kept on several nodes, by eight strategies, under the same
client operations and the same faults (``sims.net``).

Leader–follower ships a leader's log to followers and acknowledges a write after 0 (``async``),
1 (``semi_sync``) or all (``sync``) follower acks; ``lease_read`` and ``lease_read_unguarded``
wait for a majority and read from the leader's copy only under a lease (``sims.replication.lease``); ``quorum`` and ``sloppy_quorum`` write to W
and read from R of N replicas; ``chain`` passes writes from head to tail. ``Books`` judges every
answer: stale reads by a linearizability oracle for registers, lost acknowledged writes by who
still holds them.
"""

from __future__ import annotations

from sims.core.limits import MAX_DURATION
from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_policy, register_topic
from sims.replication import workload
from sims.replication.chain import ChainNode
from sims.replication.lease import LeaseNode
from sims.replication.monitor import ChainMonitor, LeaderMonitor, NoMonitor
from sims.replication.nodes import Config, LeaderFollower
from sims.replication.panel import ReplicationPanel
from sims.replication.quorum import QuorumNode

__all__ = ["PANEL_PARAMS", "ReplicationPanel", "make_panel", "workload"]

PANEL_PARAMS = {
    "nodes": Param(
        int, 3, "servers, numbered 0 .. nodes-1 (leader–follower starts with node 0 leading)", min=1, max=16
    ),
    "delay_lo": Param(float, 0.005, "shortest one-way message delay, seconds", min=0, max=60.0),
    "delay_hi": Param(float, 0.010, "longest one-way message delay, seconds (uniform in between)", min=0, max=60.0),
    "loss": Param(float, 0.0, "share of messages lost", min=0, max=1),
    "timeout": Param(
        float, 1.0, "a client gives up on an operation after this many seconds", above=0, max=MAX_DURATION
    ),
    "failover_after": Param(
        float,
        1.0,
        "the monitor replaces a leader (or chain node) gone this long; negative = never",
        min=-1,
        max=MAX_DURATION,
    ),
}

LF_PARAMS = {
    "read_from": Param(
        str, "leader", "reads served by the leader, or locally by the contact", choices=("leader", "local")
    ),
    "ship_every": Param(
        float,
        0.0,
        "the leader ships its log to followers in batches this often, seconds; 0 = each write at once",
        min=0,
        max=60.0,
    ),
}
QUORUM_PARAMS = {
    "N": Param(int, 3, "replicas of each key", min=1, max=16),
    "R": Param(int, 2, "replies a read waits for", min=1, max=16),
    "W": Param(int, 2, "acks a write waits for", min=1, max=16),
    "read_repair": Param(bool, True, "send the newest value to replicas that answered a read with an older one"),
}


class Strategy:
    """A strategy names its node class and its configuration service; ``acks`` for leader–follower."""

    PARAMS: dict[str, Param] = {}
    node = LeaderFollower
    acks = 0
    sloppy = False

    def monitor(self, n: int, failover_after: float, params: dict):
        return LeaderMonitor(failover_after)


@register_policy("replication", "async")
class Async(Strategy):
    """The leader acknowledges once the write is in its own log."""

    PARAMS = LF_PARAMS


@register_policy("replication", "semi_sync")
class SemiSync(Strategy):
    """The leader acknowledges once one follower holds the write (MySQL's semi-sync)."""

    PARAMS = LF_PARAMS
    acks = 1


@register_policy("replication", "sync")
class Sync(Strategy):
    """The leader acknowledges once every follower holds the write."""

    PARAMS = LF_PARAMS
    acks = -1


LEASE_PARAMS = {
    "ship_every": LF_PARAMS["ship_every"],
    "lease": Param(
        float,
        0.5,
        "the leader reads locally this long after a majority acknowledged its heartbeat; the monitor waits it out",
        above=0,
        max=60.0,
    ),
    "renew_every": Param(float, 0.1, "the leader's heartbeat period, seconds", above=0, max=60.0, work=-1),
}


@register_policy("replication", "lease_read")
class LeaseRead(Strategy):
    """Reads from the leader's copy while it holds a lease from a majority's acks, checked
    against its clock when it answers; writes wait for a majority (sims.replication.lease)."""

    PARAMS = LEASE_PARAMS
    node = LeaseNode
    acks = -2  # a majority: LeaseNode.need
    guarded = True
    violations = "stale_reads"  # what a search's "violations" counts: the oracle's stale reads
    leases = True  # its safety rests on time: a schedule search may pause nodes

    def monitor(self, n: int, failover_after: float, params: dict):
        return LeaderMonitor(failover_after, lease=params["lease"])


@register_policy("replication", "lease_read_unguarded")
class LeaseReadUnguarded(LeaseRead):
    """As lease_read, but an ack sets a flag that a timer clears a lease later, and a read checks
    only the flag: a pause makes it count the lease from its resume."""

    guarded = False


@register_policy("replication", "quorum")
class Quorum(Strategy):
    """W of N acks for a write, R of N replies for a read, to the key's own N replicas."""

    PARAMS = QUORUM_PARAMS
    node = QuorumNode

    def monitor(self, n: int, failover_after: float, params: dict):
        return NoMonitor()


@register_policy("replication", "sloppy_quorum")
class SloppyQuorum(Quorum):
    """W of the first N *reachable* nodes along the ring; stand-ins hand their hints back."""

    PARAMS = QUORUM_PARAMS | {
        "handoff_every": Param(
            float, 0.5, "how often a stand-in tries to hand its hints back, seconds", above=0, max=60.0, work=-1
        )
    }
    sloppy = True


@register_policy("replication", "chain")
class Chain(Strategy):
    """Head to tail; the tail acknowledges writes and answers reads."""

    node = ChainNode

    def monitor(self, n: int, failover_after: float, params: dict):
        return ChainMonitor(n, failover_after)


FAULTS = ("partition", "heal", "oneway", "crash", "restart", "pause", "resume", "slow", "drift", "link")


def _check_fault(ev: dict, n: int, where: str) -> None:
    """A fault names a kind sims.net knows and only nodes that exist."""
    if ev.get("fault") not in FAULTS:
        raise ValueError(f"{where}.fault: expected one of {', '.join(FAULTS)}, got {ev.get('fault')!r}")
    groups = ev.get("groups", [])
    if "node" not in ev and not (isinstance(groups, list) and all(isinstance(g, list) for g in groups)):
        raise ValueError(f"{where}.groups: expected a list of node lists, got {groups!r:.80}")
    if ev["fault"] == "oneway":
        nodes = [ev.get("from"), ev.get("to")]
    else:
        nodes = [ev["node"]] if "node" in ev else [i for g in groups for i in g]
    for i in nodes:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
            raise ValueError(f"{where}: node {i!r} is not one of 0..{n - 1}")
    if ev["fault"] in ("crash", "restart", "pause", "resume", "slow", "drift") and "node" not in ev:
        raise ValueError(f"{where}: a {ev['fault']} fault needs a node")


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("replication", policy)
    strategy = cls()
    n = params["nodes"]
    if params["delay_hi"] < params["delay_lo"]:
        raise ValueError(f"delay_hi: expected >= delay_lo ({params['delay_lo']!r}), got {params['delay_hi']!r}")
    N, R, W = params.get("N", n), params.get("R", 1), params.get("W", 1)
    if N > n:
        raise ValueError(f"N: expected at most nodes ({n}), got {N}")
    for field, v in (("R", R), ("W", W)):
        if v > N:
            raise ValueError(f"{field}: expected at most N ({N}), got {v}")
    preset = getattr(ctx, "preset", None)
    contacts = getattr(preset, "workload", {}).get("contacts", 0) if preset is not None else 0
    if contacts > n:
        raise ValueError(f"workload.contacts: expected at most nodes ({n}), got {contacts}")
    for i, ev in enumerate(getattr(preset, "events", ()) or ()):
        if ev.get("kind") == "fault":
            _check_fault(ev, n, f"events[{i}]")
    cfg = Config(
        n=n,
        acks=cls.acks,
        read_from=params.get("read_from", "leader"),
        ship_every=params.get("ship_every", 0.0),
        N=N,
        R=R,
        W=W,
        sloppy=cls.sloppy,
        handoff_every=params.get("handoff_every", 0.5),
        read_repair=params.get("read_repair", True),
        timeout=params["timeout"],
        lease=params.get("lease", 0.0),
        renew_every=params.get("renew_every", 0.0),
        guarded=getattr(cls, "guarded", True),
    )
    monitor = strategy.monitor(n, params["failover_after"], params)
    return ReplicationPanel(name, params, ctx, policy, cls.node, cfg, monitor)


register_topic(Topic("replication", make_panel, panel_params=PANEL_PARAMS))
