"""Quorum replication (Dynamo-style): any node coordinates; a key lives on the first ``N`` nodes
of the ring from ``key mod n``; a write waits for ``W`` acks, a read for ``R`` replies and
returns the newest version (last writer wins by the coordinator's clock, ties by write id).

Read repair sends the newest value to every replica that answered with an older one. A sloppy
quorum writes to the first ``N`` nodes *it can reach* along the ring: a stand-in for an
unreachable replica keeps the write with a hint naming the owner and hands it back when the
owner is reachable again (DeCandia et al., SOSP'07, §4.6). Who is reachable comes from the
network itself: a perfect failure detector, where Dynamo gossips.
"""

from __future__ import annotations

from typing import Any

from sims.replication.nodes import Config, Replica

NONE = (-1.0, -1)  # the version of a key never written


class QuorumNode(Replica):
    """``coord`` maps an operation this node coordinates to ``[kind, key, start, replies, answered,
    best (version, write id), replies older than best (node, version)]``; ``hints`` holds
    ``(owner, key, version, write id)`` kept for an unreachable owner."""

    def __init__(self, i: int, n: int, cfg: Config, books: Any) -> None:
        super().__init__(i, n, cfg, books)
        self.coord: dict[int, list] = {}
        self.hints: list[tuple] = []

    def role(self) -> str:
        return "replica"

    def describe(self) -> dict:
        return {"hints": len(self.hints), "coordinating": len(self.coord)}

    def on_start(self, now: float) -> None:
        self.set_timer(self.cfg.handoff_every, "handoff")

    def on_crash(self, now: float) -> None:
        self.coord = {}

    def lose_disk(self) -> None:
        self.hints = []

    def reach(self, j: int) -> bool:
        return j == self.id or self.net.can_reach(self.id, j)

    def targets(self, key: int) -> list[tuple[int, int]]:
        """(node, owner it stands in for, or -1) for each replica an operation on ``key`` asks."""
        n, N = self.n, self.cfg.N
        ring = [(key + k) % n for k in range(n)]
        if not self.cfg.sloppy:
            return [(j, -1) for j in ring[:N]]
        ok = [j for j in ring[:N] if self.reach(j)]
        missing = [j for j in ring[:N] if not self.reach(j)]
        spare = [j for j in ring[N:] if self.reach(j)]
        return [(j, -1) for j in ok] + list(zip(spare, missing, strict=False))

    # coordinator ---------------------------------------------------------------------------
    def client(self, ev: dict, now: float) -> None:
        kind, op, key = ev["kind"], ev["id"], ev["key"]
        if kind == "write":
            version = (self.local_time(now), op)
            self.coord[op] = ["write", key, now, 0, False, (version, op), None]
            for j, owner in self.targets(key):
                if j == self.id:
                    self.put(key, version, op, owner, now)
                    self.got_ack(op, now)
                else:
                    self.send(j, ("put", op, key, version, op, owner))
        else:
            self.coord[op] = ["read", key, now, 0, False, None, []]
            for j, _ in self.targets(key):
                if j == self.id:
                    cur = self.store.get(key, (NONE, None))
                    self.got_value(j, op, cur[0], cur[1], now)
                else:
                    self.send(j, ("get", op, key))

    def got_ack(self, op: int, now: float) -> None:
        st = self.coord.get(op)
        if st is None:
            return
        st[3] += 1
        if not st[4] and st[3] >= self.cfg.W:
            st[4] = True
            self.answer(self.id, op, op, now)

    def got_value(self, j: int, op: int, version: tuple, wid: int | None, now: float) -> None:
        st = self.coord.get(op)
        if st is None:
            return
        st[3] += 1
        best = st[5]
        if best is None or version > best[0]:
            st[5] = best = (version, wid)
        if not st[4]:
            st[6].append((j, version))
            if st[3] >= self.cfg.R:
                st[4] = True
                self.answer(self.id, op, best[1], now)
                for k, v in st[6]:
                    if v < best[0]:
                        self.repair(k, st[1], best, now)
                st[6] = []
        elif version < best[0]:
            self.repair(j, st[1], best, now)

    def repair(self, j: int, key: int, best: tuple, now: float) -> None:
        if not self.cfg.read_repair or best[1] is None:
            return
        if j == self.id:
            self.put(key, best[0], best[1], -1, now)
        else:
            self.send(j, ("put", -1, key, best[0], best[1], -1))

    # replica -------------------------------------------------------------------------------
    def put(self, key: int, version: tuple, wid: int, owner: int, now: float) -> None:
        self.keep(key, version, wid, now)
        if owner >= 0:
            self.hints.append((owner, key, version, wid))

    def handle(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        if kind == "put":
            _, op, key, version, wid, owner = msg
            self.put(key, version, wid, owner, now)
            if op >= 0:
                self.send(src, ("ack", op))
        elif kind == "get":
            cur = self.store.get(msg[2], (NONE, None))
            self.send(src, ("val", msg[1], cur[0], cur[1]))
        elif kind == "ack":
            self.got_ack(msg[1], now)
        elif kind == "val":
            self.got_value(src, msg[1], msg[2], msg[3], now)

    def on_timer(self, name: str, now: float) -> None:
        """Hand hints back to owners now reachable; forget operations older than the timeout."""
        keep = []
        for h in self.hints:
            if self.net.can_reach(self.id, h[0]):
                self.send(h[0], ("put", -1, h[1], h[2], h[3], -1))
            else:
                keep.append(h)
        self.hints = keep
        old = [op for op, st in self.coord.items() if now - st[2] > self.cfg.timeout]
        for op in old:
            del self.coord[op]
        self.set_timer(self.cfg.handoff_every, "handoff")
