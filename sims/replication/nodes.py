"""Replicas on ``sims.net``: the mechanism every strategy shares, and leader–follower.

A ``Replica`` owns its register store (``key -> (version, write id)``) and its durable history
(the set of write ids it holds, reported to ``Books`` so lost writes are counted exactly). A
client operation reaches its contact node through ``client(ev, now)``; whoever serves it answers
through ``answer(contact, op, value, now)`` (one more message unless the contact served it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sims.core.panel import Shared
from sims.net import Node


@dataclass(frozen=True)
class Config(Shared):
    """A panel's settings, read by every node (shared by checkpoints: it never changes)."""

    n: int  # nodes
    acks: int  # leader–follower: follower acks before the client's ack (-1 = all)
    read_from: str  # leader–follower: "leader" | "local" (the contact's own copy)
    ship_every: float  # leader–follower: the leader ships its log in batches this often (0 = each write at once)
    N: int  # quorum: replicas of each key
    R: int  # quorum: replies a read waits for
    W: int  # quorum: acks a write waits for
    sloppy: bool  # quorum: stand-ins for unreachable replicas, with hinted handoff
    handoff_every: float  # quorum: how often a stand-in tries to hand its hints back (s)
    read_repair: bool  # quorum: send the newest value to replicas that answered with an older one
    timeout: float  # clients give up after this long (s); coordinators forget then too
    lease: float = 0.0  # lease reads: how long a majority's acknowledgement lets the leader read locally (s)
    renew_every: float = 0.0  # lease reads: the leader's heartbeat period (s)
    guarded: bool = True  # lease reads: check the lease against its clock when answering (sims.replication.lease)


class Replica(Node):
    """A node's register store and durable history; subclasses add the protocol."""

    def __init__(self, i: int, n: int, cfg: Config, books: Any) -> None:
        super().__init__(i, n)
        self.cfg = cfg
        self.books = books
        self.store: dict[int, tuple] = {}  # key -> (version, write id); versions compare
        self.hist: set[int] = set()  # write ids this node holds on disk

    def keep(self, key: int, version: Any, wid: int, now: float, replicated: bool = True) -> None:
        """Hold write ``wid``; it becomes the key's value if its version is the newest here."""
        if wid not in self.hist:
            self.hist.add(wid)
            self.books.hold(wid)
            if replicated:
                self.books.applied(wid, now)
        cur = self.store.get(key)
        if cur is None or version > cur[0]:
            self.store[key] = (version, wid)

    def forget(self, wid: int) -> None:
        self.hist.discard(wid)
        self.books.drop(wid)

    def wipe(self) -> None:
        """The disk is gone: every write it held is dropped (counted order-free)."""
        for wid in self.hist:
            self.books.drop(wid)
        self.hist = set()
        self.store = {}

    def value(self, key: int) -> int | None:
        cur = self.store.get(key)
        return None if cur is None else cur[1]

    def answer(self, contact: int, op: int, value: int | None, now: float) -> None:
        if contact == self.id:
            self.books.reply(op, value, now)
        else:
            self.send(contact, ("done", op, value))

    def on_message(self, src: int, msg: tuple, now: float) -> None:
        if msg[0] == "done":
            self.books.reply(msg[1], msg[2], now)
        else:
            self.handle(src, msg, now)

    def on_request(self, req: dict, now: float) -> None:
        self.client(req, now)

    def on_restart(self, durable: bool, now: float) -> None:
        if not durable:
            self.wipe()
            self.lose_disk()
        self.on_start(now)

    # protocol hooks ------------------------------------------------------------------------
    def client(self, ev: dict, now: float) -> None:
        raise NotImplementedError

    def handle(self, src: int, msg: tuple, now: float) -> None:
        raise NotImplementedError

    def lose_disk(self) -> None:
        """Reset the protocol state kept on disk (the store and history are already gone)."""

    def role(self) -> str:
        return "replica"

    def describe(self) -> dict:
        """Protocol state for the view (JSON-able)."""
        return {}


def majority_group(net) -> int | None:
    """The partition group holding more than half the nodes (where the monitor sits), or None."""
    count: dict[int, int] = {}
    for g in net.group:
        count[g] = count.get(g, 0) + 1
    for g in sorted(count):
        if 2 * count[g] > net.n:
            return g
    return None


class LeaderFollower(Replica):
    """One leader appends every write to its log and ships it to every follower; the client's
    ack waits for ``acks`` follower acks (0 async, 1 semi-synchronous, -1 all: synchronous).

    A follower's log is always a prefix of its leader's: after a change of leader it asks for a
    snapshot (``hello``) and ignores appends until it has one, truncating what diverged."""

    def __init__(self, i: int, n: int, cfg: Config, books: Any) -> None:
        super().__init__(i, n, cfg, books)
        self.log: list[tuple[int, int, int]] = []  # (epoch, key, write id); the version is the index
        self.epoch = 0  # the leader's generation this node follows
        self.leader = 0  # who it believes leads
        self.synced = True  # its log is a prefix of the leader's
        self.match = [-1] * n  # leader: highest index each follower acked
        self.waiting: dict[int, tuple[int, int]] = {}  # leader: index -> (op, contact) awaiting acks
        self.early: dict[int, tuple] = {}  # follower: entries that overtook a missing one
        self.asked = -1  # follower: the log length it last asked the leader to resend from
        self.shipped = 0  # leader: log entries already sent to the followers

    def need(self) -> int:
        return self.n - 1 if self.cfg.acks < 0 else min(self.cfg.acks, self.n - 1)

    def role(self) -> str:
        return "leader" if self.leader == self.id else "follower"

    def describe(self) -> dict:
        return {"epoch": self.epoch, "leader": self.leader, "log": len(self.log), "synced": self.synced}

    def lose_disk(self) -> None:
        self.log = []
        self.epoch = -1  # knows no leader: the monitor tells it
        self.leader = -1
        self.synced = False

    def on_crash(self, now: float) -> None:
        self.waiting = {}
        self.early = {}

    def on_restart(self, durable: bool, now: float) -> None:
        if self.leader == self.id:
            self.leader = -1  # a leader that restarts waits for the monitor before it serves again
        super().on_restart(durable, now)

    def on_start(self, now: float) -> None:
        if self.leader == self.id:
            self.shipped = len(self.log)
            if self.cfg.ship_every > 0:
                self.set_timer(self.cfg.ship_every, "ship")
        elif not self.synced and self.leader >= 0:
            self.send(self.leader, ("hello", self.epoch))
            self.set_timer(0.2, "hello")

    def on_timer(self, name: str, now: float) -> None:
        if name == "hello":
            self.on_start(now)
        elif self.leader == self.id:
            self.ship()
            self.set_timer(self.cfg.ship_every, "ship")

    def ship(self) -> None:
        """Send the followers every entry appended since the last shipment, in one message each."""
        lo, hi = self.shipped, len(self.log)
        if hi > lo:
            batch = tuple(self.log[lo:hi])
            for j in range(self.n):
                if j != self.id:
                    self.send(j, ("app", self.epoch, lo, batch))
            self.shipped = hi

    # the monitor's orders ------------------------------------------------------------------
    def promote(self, epoch: int, now: float) -> None:
        self.epoch, self.leader, self.synced = epoch, self.id, True
        self.match = [-1] * self.n
        self.waiting, self.early = {}, {}
        self.on_start(now)

    def follow(self, leader: int, epoch: int, now: float) -> None:
        self.epoch, self.leader, self.synced = epoch, leader, False
        self.waiting, self.early, self.asked = {}, {}, -1
        self.on_start(now)

    # clients -------------------------------------------------------------------------------
    def client(self, ev: dict, now: float) -> None:
        kind, op, key = ev["kind"], ev["id"], ev["key"]
        if kind == "read" and self.cfg.read_from == "local":
            self.answer(self.id, op, self.value(key), now)
        elif self.leader == self.id:
            self.serve(kind, op, key, self.id, now)
        elif self.leader >= 0:
            self.send(self.leader, ("fwd", kind, op, key, self.id))

    def serve(self, kind: str, op: int, key: int, contact: int, now: float) -> None:
        if kind == "read":
            self.answer(contact, op, self.value(key), now)
            return
        idx = len(self.log)
        entry = (self.epoch, key, op)
        self.append(entry, now)
        if self.need() == 0:
            self.answer(contact, op, op, now)
        else:
            self.waiting[idx] = (op, contact)
        if self.cfg.ship_every <= 0:
            self.ship()

    def append(self, entry: tuple, now: float, replicated: bool = True) -> None:
        self.keep(entry[1], len(self.log), entry[2], now, replicated)
        self.log.append(entry)

    # replication ---------------------------------------------------------------------------
    def handle(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        leading = self.leader == self.id
        if kind == "fwd":
            if leading:
                self.serve(msg[1], msg[2], msg[3], msg[4], now)
            return  # not the leader any more: the client times out
        epoch = msg[1]
        if kind == "app":
            if epoch > self.epoch:
                self.follow(src, epoch, now)
            elif epoch == self.epoch and not leading and self.synced:
                for k, entry in enumerate(msg[3]):
                    self.take(msg[2] + k, entry, now)
                self.send(self.leader, ("ack", self.epoch, len(self.log) - 1))
        elif kind == "snap":
            if epoch == self.epoch and not leading and not self.synced:
                self.install(msg[2], now)
        elif leading and epoch == self.epoch:
            if kind == "hello":
                self.send(src, ("snap", self.epoch, tuple(self.log)))
            elif kind == "need":
                self.send(src, ("app", self.epoch, msg[2], tuple(self.log[msg[2] :])))
            elif kind == "ack":
                if msg[2] > self.match[src]:
                    self.match[src] = msg[2]
                    self.settle(now)

    def take(self, idx: int, entry: tuple, now: float) -> None:
        """One entry from the leader: in order, a duplicate, or early (kept until the gap fills)."""
        if idx > len(self.log):
            self.early[idx] = entry
            if self.asked != len(self.log):
                self.asked = len(self.log)
                self.send(self.leader, ("need", self.epoch, len(self.log)))
            return
        if idx == len(self.log):
            self.append(entry, now)
            while len(self.log) in self.early:
                self.append(self.early.pop(len(self.log)), now)

    def install(self, log: tuple, now: float) -> None:
        """The leader's snapshot: keep the common prefix, drop what diverged, append the rest."""
        p = 0
        while p < len(self.log) and p < len(log) and self.log[p] == log[p]:
            p += 1
        for entry in self.log[p:]:
            self.forget(entry[2])
        del self.log[p:]
        self.store = {}
        for idx, entry in enumerate(self.log):
            self.store[entry[1]] = (idx, entry[2])
        for entry in log[p:]:
            self.append(entry, now, replicated=False)  # a state transfer, not replication lag
        self.synced = True
        self.cancel_timer("hello")
        self.send(self.leader, ("ack", self.epoch, len(self.log) - 1))

    def settle(self, now: float) -> None:
        """Acknowledge, in log order, every waiting write that enough followers now hold."""
        need = self.need()
        for idx in sorted(self.waiting):
            held = 0
            for j in range(self.n):
                if j != self.id and self.match[j] >= idx:
                    held += 1
            if held < need:
                break
            op, contact = self.waiting.pop(idx)
            self.answer(contact, op, op, now)
