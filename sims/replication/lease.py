"""Leader leases for reads: leader–follower where the leader answers reads from its own copy
only while it holds a lease, and the monitor waits the lease out before it promotes another.

The leader stamps every append it ships (and a heartbeat every ``renew_every`` seconds) with its
own clock; a follower's ack echoes the stamp. Once a majority (the leader and ``n // 2``
followers) has acknowledged stamps at or after ``s``, no other node can be promoted before
``s + lease``, so the leader may read locally until then on its clock.
Writes are acknowledged by a majority too (``need() = n // 2`` followers). The monitor promotes
only with a majority of the nodes up on its side, so the new leader holds every acknowledged
write, and only once none of them has acknowledged a stamped append within the last ``lease``
seconds (``granted_at``, a follower's promise): the majority that gave the old leader its lease
includes one of them, so that lease has run out. A leader without a lease parks its reads and answers them at the next
renewal; a deposed one forwards them to the new leader. A lease read returns the newest
*acknowledged* write of the key (``visible``: a state machine applies an entry once it commits),
not one still waiting for its acks; a new leader adopts its whole log, as Raft's first entry of a
new term commits everything before it.

Two ways to hold the lease, with one difference (``Config.guarded``):

- guarded (``lease_read``): the lease ends at ``s + lease``, ``s`` the stamp of the heartbeat the
  majority answered, and the leader compares that with its clock at the moment it answers;
- unguarded (``lease_read_unguarded``): an ack that completes a majority sets a flag and arms a
  timer for a full lease; the timer clears the flag, and a read checks only the flag.

Without pauses the two agree to within a round trip (the unguarded lease starts when the ack is
handled, not when the heartbeat left), well inside the monitor's wait. A stop-the-world pause
(``sims.net``'s ``pause``) separates them: acks that arrive while the leader is frozen are handled
at its resume, and the unguarded leader takes them as a fresh lease, counted from the resume,
though the heartbeat they answer left before the pause and the monitor may have promoted another
node meanwhile. If nothing from the new leader reaches it first (it is cut off), it answers reads
from its old copy: stale (Kleppmann, "How to do distributed locking", 2016: the GC pause between
the lease check and its use). The guarded leader reads its clock and sees the lease long gone.
"""

from __future__ import annotations

from typing import Any

from sims.replication.nodes import Config, LeaderFollower

NEVER = float("-inf")


class LeaseNode(LeaderFollower):
    """``LeaderFollower`` with a read lease (module docstring)."""

    def __init__(self, i: int, n: int, cfg: Config, books: Any) -> None:
        super().__init__(i, n, cfg, books)
        self.granted = [NEVER] * n  # leader: the newest stamp each follower acknowledged
        self.renewed = NEVER  # leader: the newest stamp a majority acknowledged
        self.lease_until = NEVER  # guarded: its clock's reading when the lease ends
        self.leased = False  # unguarded: the flag the "lease" timer clears
        self.parked: list[tuple[int, int, int]] = []  # reads waiting for a lease: (op, key, contact)
        self.visible: dict[int, int] = {}  # leader: key -> its newest acknowledged write, what reads return
        self.granted_at = NEVER  # follower: when it last acknowledged a stamped append (the monitor reads it)

    def need(self) -> int:
        return self.n // 2  # a majority with the leader

    def holds_lease(self, now: float) -> bool:
        if self.n < 2:
            return True  # nobody else can ever lead
        if self.cfg.guarded:
            return self.local_time(now) < self.lease_until
        return self.leased

    def describe(self) -> dict:
        return super().describe() | {"lease": self.leader == self.id and self.holds_lease(self.net.now)}

    def _unlease(self) -> None:
        self.granted = [NEVER] * self.n
        self.renewed = self.lease_until = NEVER
        self.leased = False
        self.cancel_timer("lease")

    # the monitor's orders and faults ---------------------------------------------------------
    def promote(self, epoch: int, now: float) -> None:
        self._unlease()  # a new leader earns its own lease before it reads locally
        self.visible = {key: cur[1] for key, cur in self.store.items()}
        super().promote(epoch, now)

    def follow(self, leader: int, epoch: int, now: float) -> None:
        parked, self.parked = self.parked, []
        self._unlease()
        super().follow(leader, epoch, now)
        for op, key, contact in parked:  # the new leader answers them
            self.send(leader, ("fwd", "read", op, key, contact))

    def on_crash(self, now: float) -> None:
        super().on_crash(now)
        self.parked = []
        self._unlease()

    def on_start(self, now: float) -> None:
        super().on_start(now)
        if self.leader == self.id:
            self.beat(now)

    def on_timer(self, name: str, now: float) -> None:
        if name == "lease":
            self.leased = False
        elif name == "beat":
            if self.leader == self.id:
                self.beat(now)
        else:
            super().on_timer(name, now)

    # the lease -------------------------------------------------------------------------------
    def beat(self, now: float) -> None:
        """A heartbeat: an empty append, stamped, that every follower acknowledges."""
        stamp = self.local_time(now)
        for j in range(self.n):
            if j != self.id:
                self.send(j, ("app", self.epoch, len(self.log), (), stamp))
        self.set_timer(self.cfg.renew_every, "beat")

    def ship(self) -> None:
        lo, hi = self.shipped, len(self.log)
        if hi > lo:
            batch = tuple(self.log[lo:hi])
            stamp = self.local_time(self.net.now)
            for j in range(self.n):
                if j != self.id:
                    self.send(j, ("app", self.epoch, lo, batch, stamp))
            self.shipped = hi

    def grant(self, src: int, stamp: float, now: float) -> None:
        """Follower ``src`` acknowledged the append stamped ``stamp``: renew if a majority has
        now acknowledged a newer one than before."""
        if stamp <= self.granted[src]:
            return
        self.granted[src] = stamp
        start = sorted((self.granted[j] for j in range(self.n) if j != self.id), reverse=True)[self.n // 2 - 1]
        if start <= self.renewed:
            return
        self.renewed = start
        if self.cfg.guarded:
            self.lease_until = start + self.cfg.lease  # from when the heartbeat left, on its clock
        else:
            self.leased = True  # from now: when it handles the ack
            self.set_timer(self.cfg.lease, "lease")
        parked, self.parked = self.parked, []
        for op, key, contact in parked:
            self.answer(contact, op, self.visible.get(key), now)

    def settle(self, now: float) -> None:
        waiting = sorted(self.waiting)
        super().settle(now)
        for idx in waiting:
            if idx in self.waiting:
                break  # acknowledged in log order: the rest wait too
            entry = self.log[idx]
            self.visible[entry[1]] = entry[2]

    # clients and replication -----------------------------------------------------------------
    def serve(self, kind: str, op: int, key: int, contact: int, now: float) -> None:
        if kind != "read":
            if self.need() == 0:
                self.visible[key] = op  # acknowledged at once
            super().serve(kind, op, key, contact, now)
        elif self.holds_lease(now):
            self.answer(contact, op, self.visible.get(key), now)
        else:
            self.parked.append((op, key, contact))

    def handle(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        if kind == "app" and msg[1] == self.epoch and self.leader != self.id and self.synced:
            for k, entry in enumerate(msg[3]):
                self.take(msg[2] + k, entry, now)
            stamp = msg[4] if len(msg) > 4 else None  # a resend ("need") carries none
            if stamp is not None:
                self.granted_at = now  # a promise: no one else is promoted for a lease from now
            self.send(self.leader, ("ack", self.epoch, len(self.log) - 1, stamp))
            return
        super().handle(src, msg, now)
        if kind == "ack" and len(msg) > 3 and msg[3] is not None and self.leader == self.id and msg[1] == self.epoch:
            self.grant(src, msg[3], now)
