"""Leader election: bully, ring, leases, Raft's election and ZooKeeper's recipe on a simulated
network (``sims.net``) under crashes, partitions, slow nodes and clock drift.

A policy (``policies.py``) builds its nodes (``bully.py``, ``ring.py``, ...); ``ElectionPanel``
(``panel.py``) owns the network, applies the stream's faults and keeps the books: elections, the
messages they cost, time without a leader and time with two. The stream is the consensus
topic's workload (``sims.consensus.workload``) with no client operations: faults only.
"""

from __future__ import annotations

from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.election import policies
from sims.election.panel import ElectionPanel

__all__ = ["PANEL_PARAMS", "ElectionPanel", "make_panel", "policies"]

PANEL_PARAMS = {
    "nodes": Param(int, 5, "client nodes that may lead (a service, where used, is one more)", min=1, max=32, work=1),
    "delay_lo": Param(float, 0.005, "one-way message delay: low end of its uniform range, s", min=0.0, max=60.0),
    "delay_hi": Param(float, 0.010, "one-way message delay: high end, s", min=0.0, max=60.0),
    "heartbeat": Param(
        float, 0.1, "a leader's heartbeat interval, s (bully, ring, Raft)", above=0.0, max=60.0, work=-1
    ),
    "detect": Param(
        float, 0.5, "a follower suspects the leader after this long without a heartbeat, s", above=0.0, max=60.0
    ),
    "answer_timeout": Param(
        float, 0.05, "bully: wait for an ANSWER; ring: wait for a hop's ACK, s", above=0.0, max=60.0
    ),
    "session": Param(float, 1.0, "ZooKeeper: session timeout, s", above=0.0, max=600.0, work=-1),
    "lease": Param(float, 2.0, "lease: its length on the lock service's clock, s", above=0.0, max=600.0, work=-1),
    "guard": Param(float, 0.2, "lease: the holder stops this long before its lease runs out, s", min=0.0, max=600.0),
    "election_lo": Param(float, 0.150, "Raft: election timeout, low end, s", above=0.0, max=60.0, work=-1),
    "election_hi": Param(float, 0.300, "Raft: election timeout, high end, s", above=0.0, max=60.0),
    "prevote": Param(bool, False, "Raft: ask for a pre-vote before raising the term"),
    "check_quorum": Param(bool, False, "Raft: a leader that has not heard from a majority steps down"),
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    return ElectionPanel(name, params, ctx, get_policy("election", policy)())


register_topic(Topic("election", make_panel, panel_params=PANEL_PARAMS))
