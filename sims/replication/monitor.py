"""The configuration service: it sits with the majority of the nodes, sees at once who is up and
on its side, and tells the nodes it can reach who leads (leader–follower) or what the chain is
(chain replication). It acts on a tick (``Panel`` calls ``tick`` every ``TICK`` seconds).

A node on the other side of a partition hears nothing and keeps its old belief: an old leader
there goes on serving, which is how leader–follower diverges.
"""

from __future__ import annotations

from sims.core.panel import Checkpointed
from sims.replication.nodes import majority_group

TICK = 0.05  # seconds between the monitor's looks


def _home(net) -> list[int]:
    """Nodes up, not paused (a paused node answers no heartbeat) and on the majority's side
    (none when no side has a majority)."""
    g = majority_group(net)
    if g is None:
        return []
    nodes = net.nodes
    return [i for i in range(net.n) if nodes[i].up and not nodes[i].paused and net.group[i] == g]


class LeaderMonitor(Checkpointed):
    """Promotes the most up-to-date reachable follower once the leader has been gone for
    ``failover_after`` seconds (never when it is negative), and brings every node it can reach
    to the current epoch. ``lease`` (lease reads, > 0): promote only with a majority of the
    nodes up on its side (the new leader then holds every write a majority acknowledged) and
    once none of them has acknowledged a lease-bearing message (``granted_at``) within the last
    ``lease`` seconds: any majority that gave the old leader its lease includes one of them, so
    that lease has run out (a leader back for less than a tick, unseen, may have renewed it)."""

    def __init__(self, failover_after: float, lease: float = 0.0) -> None:
        self.failover_after = failover_after
        self.lease = lease
        self.leader = 0
        self.epoch = 0
        self.gone_since: float | None = None
        self.failovers = 0

    def tick(self, net, now: float) -> None:
        home = _home(net)
        if not home:
            return
        nodes = net.nodes
        if self.leader in home and nodes[self.leader].epoch >= 0:  # up, and its disk intact
            self.gone_since = None
        elif self.failover_after >= 0:
            if self.gone_since is None:
                self.gone_since = now
            if now - self.gone_since >= self.failover_after and (self.lease <= 0 or self._lapsed(home, nodes, now)):
                best = max(home, key=lambda i: (nodes[i].log[-1][0] if nodes[i].log else -1, len(nodes[i].log), -i))
                self.leader, self.epoch, self.gone_since = best, self.epoch + 1, None
                self.failovers += 1
        for i in home:
            node = nodes[i]
            if node.epoch < self.epoch or node.leader < 0:
                if i == self.leader:
                    node.promote(self.epoch, now)
                else:
                    node.follow(self.leader, self.epoch, now)

    def _lapsed(self, home: list[int], nodes, now: float) -> bool:
        return 2 * len(home) > len(nodes) and all(now - nodes[i].granted_at >= self.lease for i in home)

    def describe(self) -> dict:
        return {"leader": self.leader, "epoch": self.epoch, "failovers": self.failovers}


class ChainMonitor(Checkpointed):
    """Removes a node from the chain once it has been gone ``failover_after`` seconds, and adds a
    node that is back at the tail after copying the tail's state to it."""

    def __init__(self, n: int, failover_after: float) -> None:
        self.failover_after = failover_after
        self.chain = list(range(n))
        self.gone_since: dict[int, float] = {}
        self.failovers = 0

    def tick(self, net, now: float) -> None:
        home = _home(net)
        if not home:
            return
        nodes = net.nodes
        for i in list(self.chain):
            if i in home:
                self.gone_since.pop(i, None)
                continue
            since = self.gone_since.setdefault(i, now)
            if self.failover_after >= 0 and now - since >= self.failover_after and len(self.chain) > 1:
                self.chain.remove(i)
                del self.gone_since[i]
                self.failovers += 1
        tail = self.chain[-1]
        for i in home:
            if i not in self.chain and tail in home:
                nodes[i].copy_from(nodes[tail])
                self.chain.append(i)
                tail = i
        chain = tuple(self.chain)
        for i in home:
            if nodes[i].chain != chain:
                nodes[i].reconfigure(chain, now)

    def describe(self) -> dict:
        return {"chain": list(self.chain), "failovers": self.failovers}


class NoMonitor(Checkpointed):
    """Quorum replication needs no configuration service."""

    def tick(self, net, now: float) -> None:
        pass

    def describe(self) -> dict:
        return {}
