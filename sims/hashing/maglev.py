"""Maglev hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load Balancer",
NSDI 2016, section 3.4): a prime-sized lookup table filled by per-member permutations.

Member i's preference list over the M slots is ``(offset_i + j * skip_i) mod M`` for j = 0, 1, ...;
M prime and 1 <= skip < M make it a permutation. The members take turns, in list order, each
claiming its next preferred slot that is still empty, until all M are taken (the paper's
Pseudocode 1). A key goes to ``table[hash mod M]``.
"""

from __future__ import annotations

import hashlib

from sims.core.registry import Param, State, register_policy
from sims.hashing.placement import Memo, Placement

MAX_TABLE = 655_373  # a prime; ten times the paper's default of 65,537


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True


def populate(perms: list[tuple[int, int]], size: int) -> list[int]:
    """Pseudocode 1: ``perms[i]`` is member i's (offset, skip); returns each slot's member index.
    ``pos[i]`` is the slot at member i's ``next[i]``, stepped by ``skip`` rather than recomputed."""
    entry = [-1] * size
    pos = [offset for offset, _ in perms]
    skips = [skip for _, skip in perms]
    filled = 0
    while True:
        for i, skip in enumerate(skips):
            c = pos[i]
            while entry[c] >= 0:
                c += skip
                if c >= size:
                    c -= size
            entry[c] = i
            c += skip
            pos[i] = c - size if c >= size else c
            filled += 1
            if filled == size:
                return entry


@register_policy("hashing", "maglev")
class Maglev(Placement):
    """Maglev's lookup table of ``table_size`` slots (a prime M), rebuilt on every membership
    change. offset = h1(member) mod M, skip = h2(member) mod (M - 1) + 1, where h1 and h2 are the
    first and second 8 bytes of the member name's SHA-256. Each member gets M / N slots, give or
    take one; a change moves a departed member's slots and, as the paper says, a few others."""

    PARAMS = {
        "table_size": Param(
            int, 65_537, "slots in the lookup table, a prime M", min=2, max=MAX_TABLE, state=State(bytes=8)
        )  # a lookup is one read whatever M; a rebuild, once per membership change, walks M slots
    }
    consistent = False  # a rebuilt table moves a few slots between members that stayed

    def __init__(self, table_size: int = 65_537, **params: object) -> None:
        super().__init__()
        if not is_prime(table_size):
            raise ValueError(f"maglev needs a prime table_size, got {table_size!r}")
        self.size = table_size
        self._perms: Memo = Memo()  # member -> (offset, skip)
        self.table: list[str] = []  # slot -> member

    def permutation(self, member: str) -> tuple[int, int]:
        perm = self._perms.get(member)
        if perm is None:
            digest = hashlib.sha256(member.encode()).digest()
            h1 = int.from_bytes(digest[:8], "big")
            h2 = int.from_bytes(digest[8:16], "big")
            perm = self._perms[member] = (h1 % self.size, h2 % (self.size - 1) + 1)
        return perm

    def build(self, members: list[str]) -> None:
        super().build(members)
        entry = populate([self.permutation(m) for m in members], self.size)
        self.table = [members[i] for i in entry]

    def lookup(self, kh: int) -> str:
        return self.table[kh % self.size]

    def explain(self, d, other=None) -> str:
        if d.action == "remap":
            between = d.facts.get("inconsistent", 0)
            return self.say(
                d,
                f"the table was refilled: the changed member's slots changed hands, and {between} keys moved between members that stayed",
            )
        slot = d.facts["hash"] % self.size
        return self.say(
            d, f"the key's hash mod {self.size} is slot {slot}, which {d.target} claimed in the round-robin fill"
        )
