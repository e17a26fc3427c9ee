"""The consistent-hashing panel: keys from the shared stream placed on a changing member set.

``owner`` maps every key seen so far to its member, in first-seen order; on a membership change
every known key is looked up again and the moved fraction is recorded. Load is counted per member
since the last change; ``bounded_load`` also tracks requests in flight (each holds its member for
``hold`` seconds, so they finish in arrival order: a FIFO, not a heap).
"""

from __future__ import annotations

from collections import deque
from math import ceil

from sims.core.diverge import Decision, name_key
from sims.core.metrics import ratio
from sims.core.panel import Panel
from sims.hashing.placement import Memo, Placement, h64

_RING_VIEW = 360  # ring points sent to the browser at most
_CHANGES_VIEW = 50


class HashPanel(Panel):
    topic = "hashing"

    def __init__(self, name: str, params: dict, ctx, placement: Placement) -> None:
        super().__init__(name, params, ctx)
        n = params["nodes"]
        if n < 1 or params["hold"] < 0:
            raise ValueError(f"hashing needs nodes >= 1 and hold >= 0, got {n!r}, {params['hold']!r}")
        self.placement = placement
        self.bounded = placement.tracks_load  # declared, so an edited copy of BoundedLoad is one too
        self.members = [f"n{i}" for i in range(n)]
        self.created = n  # names handed out so far: the next added member is f"n{created}"
        placement.build(self.members)
        self.owner: dict = {}  # key -> member (first choice for bounded_load), first-seen order
        self.khash: Memo = Memo()  # key -> 64-bit hash
        self.counts = dict.fromkeys(self.members, 0)  # requests per member since the last change
        self.requests = 0
        self.changes: list[dict] = []
        self.inconsistent = 0  # keys that moved between two members that did not change
        # bounded_load only
        self.hold = params["hold"]
        self.load = dict.fromkeys(self.members, 0)  # requests in flight per member
        self.in_flight = 0
        self._fifo: deque[tuple[float, str]] = deque()  # (finish time, member), oldest first
        self._starts: dict = {}  # key -> ring index of its first point
        self.spilled = 0  # requests that skipped their first choice

    def _hash(self, key) -> int:
        kh = self.khash.get(key)
        if kh is None:
            kh = self.khash[key] = h64(str(key))
        return kh

    # -- stream -------------------------------------------------------------------------------
    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        if self.bounded:
            self._feed_bounded(events, lo, hi, until)
            return
        owner = self.owner
        counts = self.counts
        lookup = self.placement.lookup
        n = 0
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if kind == "ref" or kind == "request":
                key = ev["key"]
                m = owner.get(key)
                if m is None:
                    m = owner[key] = lookup(self._hash(key))
                counts[m] += 1
                n += 1
            elif kind == "add_node" or kind == "remove_node":
                self._change(ev)
                counts = self.counts
        self.requests += n

    def _feed_bounded(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        ring = self.placement
        c = ring.c
        load, fifo, starts = self.load, self._fifo, self._starts
        hold = self.hold
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            t = ev["t"]
            while fifo and fifo[0][0] <= t:
                load[fifo.popleft()[1]] -= 1
                self.in_flight -= 1
            if kind == "ref" or kind == "request":
                key = ev["key"]
                i = starts.get(key)
                if i is None:
                    i = starts[key] = ring.start(self._hash(key))
                    if key not in self.owner:
                        self.owner[key] = ring.owners[i]
                owners = ring.owners
                m = owners[i]
                cap = ceil(c * (self.in_flight + 1) / len(self.members))
                if load[m] >= cap:
                    self.spilled += 1
                    size = len(owners)
                    while load[m] >= cap:
                        i = i + 1 if i + 1 < size else 0
                        m = owners[i]
                load[m] += 1
                self.in_flight += 1
                fifo.append((t + hold, m))
                self.counts[m] += 1
                self.requests += 1
            elif kind == "add_node" or kind == "remove_node":
                self._change(ev)
        while fifo and fifo[0][0] <= until:
            load[fifo.popleft()[1]] -= 1
            self.in_flight -= 1

    def on_event(self, ev: dict) -> None:
        self.feed([ev], 0, 1, ev["t"])

    def advance(self, until: float) -> None:
        if self.bounded:
            self._feed_bounded([], 0, 0, until)

    # -- membership ---------------------------------------------------------------------------
    def _change(self, ev: dict) -> None:
        kind = ev["kind"]
        node = ev.get("node")
        if kind == "add_node":
            if node is None:
                node = f"n{self.created}"
            if node in self.members:
                return
            self.created += 1
            self.members.append(node)
        else:
            if node is None:
                node = self.members[-1]
            if node not in self.members or len(self.members) == 1:
                return
            was_last = node == self.members[-1]
            self.members.remove(node)
        p = self.placement
        expect = p.consistent_change(kind == "add_node", kind == "add_node" or was_last)
        p.build(self.members)
        lookup = p.lookup
        khash = self.khash
        moved = wrong = 0
        owner = self.owner
        added = kind == "add_node"
        for key, old in owner.items():  # first-seen order: deterministic
            new = lookup(khash[key])
            if new != old:
                moved += 1
                if not ((added and new == node) or (not added and old == node)):
                    wrong += 1
                owner[key] = new
        if expect:
            self.inconsistent += wrong
        self.counts = dict.fromkeys(self.members, 0)
        for m in self.members:
            self.load.setdefault(m, 0)
        self._starts.clear()
        self.changes.append(
            {
                "t": ev["t"],
                "kind": kind,
                "node": node,
                "members": len(self.members),
                "keys": len(owner),
                "moved": moved,
                "fraction": ratio(moved, len(owner)),
                "inconsistent": wrong,
                "consistent": expect,
            }
        )

    # -- recording mode (sims/core/diverge.py) -----------------------------------------------
    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        kind = ev["kind"]
        before, changes = dict(self.counts), len(self.changes)
        self.feed(events, k, k + 1, ev["t"])
        if len(self.changes) > changes:
            c = self.changes[-1]
            return Decision("remap", str(c["node"]), f"{c['moved']} keys moved", facts=dict(c))
        if kind != "ref" and kind != "request":
            return None
        member = next((m for m, n in self.counts.items() if n != before.get(m, 0)), "")
        key = ev["key"]
        facts = {"hash": self._hash(key), "first": self.owner.get(key)}
        return Decision("place", name_key(key), member, facts=facts)

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        return self.placement.explain(decision, other)

    # -- reading ------------------------------------------------------------------------------
    def max_load_ratio(self) -> float:
        counts = self.counts
        total = sum(counts.values())
        return ratio(max(counts.values()) * len(counts), total)

    def metrics(self) -> dict[str, float]:
        fractions = [c["fraction"] for c in self.changes]
        total = 0.0
        for f in fractions:  # a plain loop: builtin sum() of floats is compensated from 3.12 on
            total += f
        return {
            "requests": self.requests,
            "keys": len(self.owner),
            "nodes": len(self.members),
            "changes": len(self.changes),
            "remapped_fraction": fractions[-1] if fractions else 0.0,
            "mean_remapped_fraction": ratio(total, len(fractions)),
            "inconsistent_moves": self.inconsistent,
            "max_load_ratio": self.max_load_ratio(),
            "spilled": self.spilled,
        }

    def view(self) -> dict:
        p = self.placement
        ring = []
        hashes = getattr(p, "hashes", None)
        if hashes:
            step = max(1, len(hashes) // _RING_VIEW)
            index = {m: i for i, m in enumerate(self.members)}
            ring = [[hashes[i] / 18446744073709551616.0, index[p.owners[i]]] for i in range(0, len(hashes), step)]
        return {
            "kind": "hashing",
            "members": [{"name": m, "load": self.counts[m], "in_flight": self.load.get(m, 0)} for m in self.members],
            "ring": ring,
            "changes": self.changes[-_CHANGES_VIEW:],
            "remapped": [c["fraction"] for c in self.changes],
        }

    def check_invariants(self) -> None:
        members = self.members
        assert len(set(members)) == len(members), "a member listed twice"
        assert list(self.counts) == members
        assert self.in_flight == len(self._fifo) == sum(self.load.values())
        assert all(v >= 0 for v in self.load.values())
        assert self.inconsistent == 0, "a key moved between two members that did not change"
        live = set(members)
        assert all(m in live for m in self.owner.values()), "a key owned by a departed member"
