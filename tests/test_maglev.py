"""Maglev hashing against a direct, separately written reading of the paper's Pseudocode 1
(Eisenbud et al., NSDI'16, section 3.4), on fixed small inputs, then its balance and disruption."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import api, presets
from sims.core.registry import get_policy
from sims.core.scenario import Scenario
from sims.hashing.maglev import is_prime, populate


def reference_populate(permutation: list[list[int]], M: int) -> list[int]:
    """Pseudocode 1 as printed: permutation[i][j] is backend i's j-th preferred slot."""
    N = len(permutation)
    next_ = [0] * N
    entry = [-1] * M
    n = 0
    while True:
        for i in range(N):
            c = permutation[i][next_[i]]
            while entry[c] >= 0:
                next_[i] = next_[i] + 1
                c = permutation[i][next_[i]]
            entry[c] = i
            next_[i] = next_[i] + 1
            n = n + 1
            if n == M:
                return entry


def reference_permutation(name: str, M: int) -> list[int]:
    """offset = h1(name) mod M, skip = h2(name) mod (M - 1) + 1, permutation[j] = (offset + j * skip) mod M,
    with h1, h2 the first two 64-bit big-endian words of SHA-256(name)."""
    d = hashlib.sha256(name.encode("utf-8")).digest()
    offset = int(d[0:8].hex(), 16) % M
    skip = int(d[8:16].hex(), 16) % (M - 1) + 1
    return [(offset + j * skip) % M for j in range(M)]


def _maglev(size: int, members: list[str]):
    m = get_policy("hashing", "maglev")(table_size=size)
    m.build(members)
    return m


def test_the_papers_table_1_by_hand():
    # B0: offset 3, skip 4; B1: offset 0, skip 2; B2: offset 3, skip 1 (M = 7)
    perms = [(3, 4), (0, 2), (3, 1)]
    lists = [[(o + j * s) % 7 for j in range(7)] for o, s in perms]
    assert lists == [[3, 0, 4, 1, 5, 2, 6], [0, 2, 4, 6, 1, 3, 5], [3, 4, 5, 6, 0, 1, 2]]
    # round 1: B0 3, B1 0, B2 4 (3 taken); round 2: B0 1 (0, 4 taken), B1 2, B2 5; round 3: B0 6
    assert reference_populate(lists, 7) == [1, 0, 1, 0, 2, 2, 0]
    assert populate(perms, 7) == [1, 0, 1, 0, 2, 2, 0]
    # B1 removed: B0 3, B2 4; B0 0, B2 5; B0 1, B2 6; B0 2. Slot 6 moves from B0 to B2: a survivor's slot
    assert reference_populate([lists[0], lists[2]], 7) == [0, 0, 0, 0, 1, 1, 1]
    assert populate([perms[0], perms[2]], 7) == [0, 0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize(
    ("size", "members"),
    [
        (7, ["a", "b", "c"]),
        (13, ["n0", "n1", "n2", "n3"]),
        (101, [f"n{i}" for i in range(7)]),
        (5, ["x"] + list("pqrstuv")),
    ],
)
def test_the_table_equals_the_reference_entry_for_entry(size, members):
    table = _maglev(size, members).table
    entry = reference_populate([reference_permutation(m, size) for m in members], size)
    assert table == [members[i] for i in entry]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 12), size=st.sampled_from([7, 11, 31, 97, 251, 1009]))
def test_every_member_gets_its_share_of_slots_give_or_take_one(n, size):
    members = [f"n{i}" for i in range(n)]
    counts = Counter(_maglev(size, members).table)
    if n <= size:
        assert set(counts) == set(members)
        assert max(counts.values()) - min(counts.values()) <= 1
    assert sum(counts.values()) == size


def test_removing_a_member_moves_its_slots_and_a_few_others():
    members = [f"n{i}" for i in range(10)]
    before = _maglev(65_537, members).table
    after = _maglev(65_537, [m for m in members if m != "n3"]).table
    assert all(new != "n3" for new in after)
    between = sum(1 for old, new in zip(before, after, strict=True) if old != "n3" and old != new)
    assert 0 < between < 0.01 * 65_537, between  # the paper's "small" disruption: here about 0.2%


def test_the_preset_maglev_evens_load_and_moves_a_few_keys_between_survivors():
    sc = Scenario(presets.load("hashing-maglev"), duration=5.5)
    m = sc.run().metrics()
    assert m["maglev"]["max_load_ratio"] < 1.05 and m["ring"]["max_load_ratio"] > 1.06, m
    m = api.run("hashing-maglev")["panels"]
    for name in ("maglev", "maglev_101", "ring", "rendezvous"):
        assert m[name]["changes"] == 1 and m[name]["nodes"] == 9
    sc = Scenario(presets.load("hashing-maglev"))
    sc.run()
    (change,) = sc.panels["maglev"].changes
    assert 0 < change["inconsistent"] < 0.005 * change["keys"], change
    assert sc.panels["maglev_101"].changes[0]["inconsistent"] > 0.05 * change["keys"]
    assert sc.panels["ring"].changes[0]["inconsistent"] == 0


def test_a_table_size_that_is_not_prime_is_refused():
    assert [n for n in range(20) if is_prime(n)] == [2, 3, 5, 7, 11, 13, 17, 19]
    assert is_prime(65_537) and is_prime(655_373)
    with pytest.raises(ValueError, match="prime table_size"):
        get_policy("hashing", "maglev")(table_size=65_536)
