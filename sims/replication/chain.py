"""Chain replication (van Renesse & Schneider, OSDI'04): writes enter at the head and pass down
the chain; the tail acknowledges them and answers every read, so a read sees exactly the writes
the tail has acknowledged.

Each node keeps the writes it passed on that the tail has not yet cleared (``sent``); when the
master removes a failed successor it resends them to the new one, and a node that becomes the
tail acknowledges them itself (the paper's §3 "Sent_i"). A node that comes back rejoins at the
tail with a copy of the old tail's state (the master's state transfer, done at once here).
"""

from __future__ import annotations

from typing import Any

from sims.replication.nodes import Config, Replica


class ChainNode(Replica):
    """``chain`` is this node's view of the configuration, head first; ``seq`` the highest
    sequence number it has applied (the head numbers writes)."""

    def __init__(self, i: int, n: int, cfg: Config, books: Any) -> None:
        super().__init__(i, n, cfg, books)
        self.chain: tuple[int, ...] = tuple(range(n))
        self.seq = 0
        self.sent: dict[int, tuple[int, int, int]] = {}  # seq -> (key, write id, contact)

    def role(self) -> str:
        c = self.chain
        if self.id not in c:
            return "out"
        if len(c) == 1:
            return "head+tail"
        return "head" if c[0] == self.id else "tail" if c[-1] == self.id else "middle"

    def describe(self) -> dict:
        return {"chain": list(self.chain), "seq": self.seq, "unacked": len(self.sent)}

    def lose_disk(self) -> None:
        self.seq = 0
        self.sent = {}

    def successor(self) -> int | None:
        c = self.chain
        if self.id not in c:
            return None
        k = c.index(self.id)
        return c[k + 1] if k + 1 < len(c) else None

    def on_restart(self, durable: bool, now: float) -> None:
        super().on_restart(durable, now)
        self.chain = ()  # out until the master says where it stands: its old view may be stale

    def client(self, ev: dict, now: float) -> None:
        kind, op, key = ev["kind"], ev["id"], ev["key"]
        self.route(kind, op, key, self.id, now)

    def route(self, kind: str, op: int, key: int, contact: int, now: float) -> None:
        if not self.chain:
            return  # knows no chain: its client times out
        end = self.chain[0] if kind == "write" else self.chain[-1]
        if end != self.id:
            if contact == self.id:
                self.send(end, ("fwd", kind, op, key, contact))
            return  # a forwarded request reached a node that no longer heads (or tails) the chain
        if kind == "read":
            self.answer(contact, op, self.value(key), now)
        else:
            self.seq += 1
            self.pass_on(self.seq, key, op, contact, now)

    def pass_on(self, s: int, key: int, wid: int, contact: int, now: float) -> None:
        self.keep(key, s, wid, now)
        if s > self.seq:
            self.seq = s
        nxt = self.successor()
        if nxt is None:
            self.answer(contact, wid, wid, now)
            for j in self.chain[:-1]:
                self.send(j, ("clr", s))
        else:
            self.sent[s] = (key, wid, contact)
            self.send(nxt, ("chw", s, key, wid, contact))

    def handle(self, src: int, msg: tuple, now: float) -> None:
        kind = msg[0]
        if kind == "fwd":
            self.route(msg[1], msg[2], msg[3], msg[4], now)
        elif kind == "chw":
            c = self.chain
            if self.id in c and c.index(self.id) > 0 and c[c.index(self.id) - 1] == src:  # only from its predecessor
                self.pass_on(msg[1], msg[2], msg[3], msg[4], now)
        elif kind == "clr":
            self.sent.pop(msg[1], None)

    # the master's orders -------------------------------------------------------------------
    def reconfigure(self, chain: tuple[int, ...], now: float) -> None:
        old = self.successor()
        self.chain = chain
        new = self.successor()
        if self.id not in chain or new == old:
            return
        sent, self.sent = self.sent, {}
        for s in sorted(sent):
            key, wid, contact = sent[s]
            if new is None:
                self.answer(contact, wid, wid, now)
            else:
                self.sent[s] = sent[s]
                self.send(new, ("chw", s, key, wid, contact))

    def copy_from(self, other: ChainNode) -> None:
        """State transfer before rejoining at the tail: this node's history becomes ``other``'s."""
        for wid in [w for w in self.hist if w not in other.hist]:
            self.forget(wid)
        for wid in other.hist:
            if wid not in self.hist:
                self.hist.add(wid)
                self.books.hold(wid)
        self.store = dict(other.store)
        self.seq = other.seq
        self.sent = {}
