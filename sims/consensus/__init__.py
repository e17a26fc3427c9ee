"""Consensus: Raft, Multi-Paxos and single-decree Paxos on a simulated network (``sims.net``) under crashes, partitions and lossy
links, with its safety properties checked after every event; PBFT (``pbft.py``) against Byzantine
replicas, and Zab (``zab.py``) with its epochs and primary order.

A protocol (``policies.py``) builds the servers (``raft.py``, ``membership.py`` for Raft with membership changes, ``paxos.py``) and the checker of its safety
properties (``safety.py``); ``ConsensusPanel`` owns the network, routes client commands to the
leader, applies the stream's faults and keeps the books (elections, split votes, windows without a
leader). The workload (``workload.py``) is one stream of commands and faults for every panel.
"""

from __future__ import annotations

from sims.consensus import commit_panel, policies, transactions, workload  # noqa: F401 (atomic commit registers itself)
from sims.consensus.panel import ConsensusPanel
from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_topic

__all__ = ["PANEL_PARAMS", "ConsensusPanel", "make_panel", "policies", "workload"]

PANEL_PARAMS = {
    "nodes": Param(int, 5, "servers (the workload's `nodes` should match)", min=1, max=9),
    "election_lo": Param(
        float, 0.150, "election timeout: the low end of its random range, seconds", above=0.0, max=60.0, work=-1
    ),
    "election_hi": Param(
        float, 0.300, "election timeout: the high end (= election_lo: no randomness)", above=0.0, max=60.0
    ),
    "heartbeat": Param(float, 0.050, "a leader's heartbeat interval, seconds", above=0.0, max=60.0, work=-1),
    "delay_lo": Param(
        float, 0.005, "one-way message delay: the low end of its uniform range, seconds", min=0.0, max=60.0
    ),
    "delay_hi": Param(float, 0.010, "one-way message delay: the high end", min=0.0, max=60.0),
    "disk": Param(
        float, 0.0, "Raft: seconds a write of term, vote or entries takes before the reply leaves", min=0.0, max=60.0
    ),
    "timer_step": Param(
        float, 0.0, "Raft: election timeouts in whole steps of this many seconds (0: continuous)", min=0.0, max=60.0
    ),
    "loss": Param(float, 0.0, "probability a message is lost", min=0.0, max=1.0),
    "duplicate": Param(float, 0.0, "probability a message is delivered twice", min=0.0, max=1.0),
    "reorder": Param(float, 0.0, "probability a message is held back by a second delay", min=0.0, max=1.0),
    "prevote": Param(bool, False, "Raft: ask for a pre-vote before raising the term (thesis §9.6)"),
    "check_quorum": Param(bool, False, "Raft: a leader that has not heard from a majority steps down"),
    "view_timeout": Param(
        float, 0.5, "PBFT: seconds a replica waits on a request before it starts a view change", above=0.0, max=60.0
    ),
    "traitors": Param(
        int, 0, "PBFT: Byzantine replicas, nodes 0 .. traitors-1 (they equivocate and lie)", min=0, max=9
    ),
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    protocol = get_policy("consensus", policy)()
    if hasattr(protocol, "make_panel"):  # a protocol with a panel of its own (atomic commit)
        return protocol.make_panel(name, params, ctx)
    return ConsensusPanel(name, params, ctx, protocol)


register_topic(Topic("consensus", make_panel, panel_params=PANEL_PARAMS))
