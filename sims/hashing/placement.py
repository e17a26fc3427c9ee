"""Where a key lives: modulo, a ring with virtual nodes, rendezvous (HRW), jump hash.

A placement is rebuilt from the ordered member list on every membership change and then maps a
64-bit key hash to a member. Hashes are stable across processes and runtimes: SHA-256 for keys
and ring points, the splitmix64 finalizer for rendezvous scores, integer and float basic
operations only for jump; never Python's per-process salted string hashing.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right

from sims.core.panel import Shared
from sims.core.registry import Param, State, register_policy
from sims.core.rng import MASK64 as MASK
from sims.core.rng import mix64


def h64(text: str) -> int:
    """A 64-bit hash of ``text``: the first 8 bytes of its SHA-256."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def jump_hash(key: int, buckets: int) -> int:
    """Lamping and Veach's jump consistent hash: a bucket in [0, buckets)."""
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * 2862933555777941757 + 1) & MASK
        j = int((b + 1) * (2147483648.0 / float((key >> 33) + 1)))
    return b


class Memo(Shared, dict):
    """A pure cache (its values are functions of its keys): checkpoints share it, never copy it."""


class Placement:
    """A policy: ``build(members)`` after each change, then ``lookup(key_hash)`` -> member."""

    PARAMS: dict[str, Param] = {}
    consistent = True  # a key moves only to or from a member that changed
    tracks_load = False  # True: the panel counts requests in flight per member for it

    def __init__(self, **params: object) -> None:
        self.members: list[str] = []

    def build(self, members: list[str]) -> None:
        self.members = list(members)

    def lookup(self, kh: int) -> str:
        raise NotImplementedError

    def consistent_change(self, added: bool, was_last: bool) -> bool:
        """Whether this change may move keys only to or from the changed member."""
        return self.consistent

    def explain(self, d, other=None) -> str:
        """One sentence on a placement or a membership change; every policy says its own."""
        raise NotImplementedError(f"{type(self).__name__} does not explain its placements")

    def say(self, d, why: str) -> str:
        name = getattr(self, "policy_name", type(self).__name__)
        if d.action == "remap":
            f = d.facts
            return f"{name} moved {f['moved']} of {f['keys']} keys when {d.subject} changed: {why}"
        return f"{name} placed {d.subject} on {d.target}: {why}"


@register_policy("hashing", "modulo")
class Modulo(Placement):
    """hash mod N: adding one member to N moves about N/(N+1) of the keys."""

    consistent = False

    def lookup(self, kh: int) -> str:
        return self.members[kh % len(self.members)]

    def explain(self, d, other=None) -> str:
        if d.action == "remap":
            return self.say(d, f"hash mod {len(self.members)} renumbers almost every key when N changes")
        n = len(self.members)
        return self.say(
            d, f"the key's hash mod {n} is {d.facts['hash'] % n}, and member {d.facts['hash'] % n} is {d.target}"
        )


@register_policy("hashing", "ring")
class Ring(Placement):
    """Karger's ring: each member owns ``vnodes`` points; a key goes to the first point strictly
    after its hash, clockwise (a key whose hash equals a point's goes to the next point:
    ``bisect_right``). Points are sorted by hash, ties by member name."""

    PARAMS = {
        "vnodes": Param(
            int, 100, "points on the ring per member", min=1, max=10_000, state=State(bytes=130, times=("nodes",))
        )
    }

    def __init__(self, vnodes: int = 100, **params: object) -> None:
        super().__init__()
        if vnodes < 1:
            raise ValueError(f"vnodes must be >= 1, got {vnodes!r}")
        self.vnodes = vnodes
        self._cache: Memo = Memo()  # member -> its point hashes
        self.hashes: list[int] = []  # sorted point hashes
        self.owners: list[str] = []  # owners[i] holds point hashes[i]

    def points(self, member: str) -> list[int]:
        pts = self._cache.get(member)
        if pts is None:
            pts = self._cache[member] = [h64(f"{member}#{v}") for v in range(self.vnodes)]
        return pts

    def build(self, members: list[str]) -> None:
        super().build(members)
        ring = sorted((h, m) for m in members for h in self.points(m))
        self.hashes = [p[0] for p in ring]
        self.owners = [p[1] for p in ring]

    def start(self, kh: int) -> int:
        """Index of the first point clockwise from kh, strictly after it (wrapping to 0)."""
        i = bisect_right(self.hashes, kh)
        return 0 if i == len(self.hashes) else i

    def lookup(self, kh: int) -> str:
        return self.owners[self.start(kh)]

    def explain(self, d, other=None) -> str:
        if d.action == "remap":
            return self.say(d, "only the arcs next to the changed member's points change owner")
        return self.say(
            d, f"the first of the ring's points clockwise from the key's hash ({self.vnodes} per member) belongs to it"
        )


@register_policy("hashing", "rendezvous")
class Rendezvous(Placement):
    """Highest random weight: every member scores the key with mix64(key ^ member); the highest
    score wins (ties: the earlier member). O(members) per lookup, no ring to store."""

    def build(self, members: list[str]) -> None:
        super().build(members)
        self._ids = [(h64(m), m) for m in members]

    def lookup(self, kh: int) -> str:
        best, owner = -1, ""
        mix = mix64
        for nh, m in self._ids:
            x = mix(kh ^ nh)
            if x > best:
                best, owner = x, m
        return owner

    def explain(self, d, other=None) -> str:
        if d.action == "remap":
            return self.say(d, "only the keys whose highest-scoring member changed move")
        return self.say(d, f"of the {len(self.members)} members it gives the key the highest score mix64(key ^ member)")


@register_policy("hashing", "jump")
class Jump(Placement):
    """Jump consistent hash over the member list as numbered buckets: consistent when members
    are added at the end or the last one leaves; removing a middle member renumbers the rest."""

    def lookup(self, kh: int) -> str:
        return self.members[jump_hash(kh, len(self.members))]

    def consistent_change(self, added: bool, was_last: bool) -> bool:
        return added or was_last

    def explain(self, d, other=None) -> str:
        if d.action == "remap":
            return self.say(d, "jump hash moves keys only to a member added at the end (or from the last one)")
        return self.say(d, f"jump consistent hash of the key over {len(self.members)} numbered buckets lands on it")


@register_policy("hashing", "bounded_load")
class BoundedLoad(Ring):
    """Consistent hashing with bounded loads (Mirrokni, Thorup, Zadimoghaddam): walk the ring
    from the key's point to the first member whose in-flight load is below
    ceil(c * (in_flight + 1) / members). ``lookup`` gives the first choice (no load)."""

    PARAMS = Ring.PARAMS | {"c": Param(float, 1.25, "load bound: at most c times the mean", min=1.0, max=100.0)}
    consistent = False  # the first choice is consistent; the placement under load is not
    tracks_load = True  # the panel counts requests in flight for it (Placement: False)

    def __init__(self, vnodes: int = 100, c: float = 1.25, **params: object) -> None:
        super().__init__(vnodes)
        if not c > 1.0:
            raise ValueError(f"bounded_load needs c > 1, got {c!r}")
        self.c = c

    def explain(self, d, other=None) -> str:
        if d.action == "remap":
            return self.say(d, "the first choices move as on a ring; placements under load follow the loads")
        first = d.facts.get("first")
        if first and first != d.target:
            return self.say(
                d,
                f"its first choice on the ring, {first}, was at the load cap (c={self.c:g} times the mean in flight), so the walk went on clockwise",
            )
        return self.say(
            d, f"its first choice on the ring, and under the load cap of c={self.c:g} times the mean in flight"
        )
