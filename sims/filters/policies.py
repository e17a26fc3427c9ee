"""Approximate membership filters: each answers "maybe" or "no" for a key, on stable 64-bit hashes.

A filter offers ``insert(key, rng)`` (False when it could not store the key), ``lookup(key)``
(True: maybe in the set), ``delete(key)``, its size in ``bits()``, its ``load()`` (the share of
bits, counters or slots in use), ``formula(n)`` (its expected false-positive rate holding n
keys) and ``cells`` (how full each of ``CELLS`` equal stretches of its array is, for the view).
Every key goes through ``sims.core.rng.mix64`` (the splitmix64 finalizer), never Python's salted hash, so a
filter answers the same in every process and in Pyodide. ``exact`` is the baseline: a set.
"""

from __future__ import annotations

from random import Random

from sims.core import portmath
from sims.core.limits import InputError
from sims.core.params import State
from sims.core.registry import Param, register_policy
from sims.core.rng import mix64

CELLS = 128  # stretches of the array the view draws
SALT = 0x9E3779B97F4A7C15  # the second hash of double hashing, and the cuckoo's fingerprint hash
KEY_BITS = 64  # an exact set stores each key whole


class Filter:
    PARAMS: dict[str, Param] = {}
    word = "bits"  # what the array holds, for the view

    def __init__(self) -> None:
        self.entries = 0  # entries of the array (bits, counters, buckets)
        self.per_cell = 1  # entries per cell of the view: entries / CELLS, rounded up
        self.cells = [0] * CELLS
        self.full_cells = [0] * CELLS  # saturated counters per cell (counting Bloom)
        self.overflows = 0  # increments a saturated counter swallowed (counting Bloom)
        self.kicks = 0  # fingerprints moved to make room (cuckoo)

    def _size(self, entries: int) -> None:
        self.entries = entries
        self.per_cell = max(1, -(-entries // CELLS))

    def insert(self, key: int, rng: Random) -> bool:
        raise NotImplementedError

    def lookup(self, key: int) -> bool:
        raise NotImplementedError

    def delete(self, key: int, rng: Random) -> None:
        raise NotImplementedError

    def bits(self, n: int) -> int:
        raise NotImplementedError

    def load(self) -> float:
        return 0.0

    def formula(self, n: int) -> float:
        return 0.0

    def probe(self, key: int) -> dict:
        """What a lookup of ``key`` looks at (for the reasons)."""
        return {}

    def explain(self, d, other=None) -> str:
        raise NotImplementedError

    def check_invariants(self) -> None:
        pass

    def state(self) -> dict:
        return {}


@register_policy("filters", "exact")
class Exact(Filter):
    """The baseline: a hash set of the keys themselves. Never a false positive or a false negative;
    it costs the key's 64 bits per item (and more in any real table)."""

    word = "keys"

    def __init__(self) -> None:
        super().__init__()
        self.keys: set[int] = set()

    def insert(self, key: int, rng: Random) -> bool:
        self.keys.add(key)
        return True

    def lookup(self, key: int) -> bool:
        return key in self.keys

    def delete(self, key: int, rng: Random) -> None:
        self.keys.discard(key)

    def bits(self, n: int) -> int:
        return KEY_BITS * len(self.keys)

    def explain(self, d, other=None) -> str:
        held = "holds" if d.action == "maybe" else "does not hold"
        return f"exact answered {d.action} for {d.subject}: the set {held} the key itself"


class _Bits(Filter):
    """m entries and k positions per key by double hashing (Kirsch and Mitzenmacher, ESA 2006:
    g_i(x) = h1(x) + i * h2(x) mod m for i = 0..k-1, which keeps the false-positive rate of k
    independent hashes); ``hashing = "adjacent"`` takes h2 = 1, k positions in a row."""

    PARAMS = {
        "m": Param(int, 9586, "entries in the array (bits, or counters)", min=8, max=10_000_000, state=State(bytes=1)),
        "k": Param(int, 7, "hash positions per key", min=1, max=32),
        "hashing": Param(
            str, "double", "double: h1 + i*h2 (Kirsch-Mitzenmacher) | adjacent: h1 + i", choices=("double", "adjacent")
        ),
    }

    def __init__(self, m: int, k: int, hashing: str) -> None:
        super().__init__()
        self.m, self.k, self.adjacent = m, k, hashing == "adjacent"
        self.array = bytearray(m)
        self.used = 0  # nonzero entries
        self._size(m)

    def positions(self, key: int) -> list[int]:
        h1 = mix64(key)
        h2 = 1 if self.adjacent else mix64(h1 ^ SALT)
        m = self.m
        return [(h1 + i * h2) % m for i in range(self.k)]

    def _became(self, pos: int, nonzero: bool) -> None:
        step = 1 if nonzero else -1
        self.used += step
        self.cells[pos // self.per_cell] += step

    def lookup(self, key: int) -> bool:
        a = self.array
        return all(a[p] for p in self.positions(key))

    def load(self) -> float:
        return self.used / self.m

    def formula(self, n: int) -> float:
        """(1 - e^(-kn/m))^k: the chance that k positions of a key never inserted are all set."""
        return portmath.pow(1.0 - portmath.exp(-self.k * n / self.m), self.k)  # the same bits in Pyodide

    def probe(self, key: int) -> dict:
        a = self.array
        pos = self.positions(key)
        return {"positions": pos, "set": [a[p] for p in pos]}

    def state(self) -> dict:
        return {"m": self.m, "k": self.k}

    def explain(self, d, other=None) -> str:
        f = d.facts
        shown = ", ".join(f"{p}:{v}" for p, v in zip(f["positions"], f["set"], strict=True))
        if d.action == "maybe":
            why = f"all {self.k} of its positions hold a nonzero {self.word[:-1]} ({shown})"
        else:
            zeros = sum(1 for v in f["set"] if not v)
            why = f"{zeros} of its {self.k} positions hold 0 ({shown})"
        return f"{self.policy_name} answered {d.action} for {d.subject}: {why}"

    def check_invariants(self) -> None:
        a = self.array
        assert len(a) == self.m
        assert self.used == sum(1 for v in a if v), "the count of nonzero entries drifted"
        assert sum(self.cells) == self.used


@register_policy("filters", "bloom")
class Bloom(_Bits):
    """Bloom's filter (Bloom, CACM 1970): m bits, k positions per key by double hashing (Kirsch and
    Mitzenmacher, ESA 2006); insert sets them, lookup answers maybe when all are set. Its false
    positive rate with n keys is about (1 - e^(-kn/m))^k. Delete clears the key's k bits, which a
    plain Bloom filter cannot do safely: a bit another key set is cleared too (a false negative)."""

    def insert(self, key: int, rng: Random) -> bool:
        a = self.array
        for p in self.positions(key):
            if not a[p]:
                a[p] = 1
                self._became(p, True)
        return True

    def delete(self, key: int, rng: Random) -> None:
        a = self.array
        for p in self.positions(key):
            if a[p]:
                a[p] = 0
                self._became(p, False)

    def bits(self, n: int) -> int:
        return self.m

    def check_invariants(self) -> None:
        super().check_invariants()
        assert max(self.array, default=0) <= 1


@register_policy("filters", "counting_bloom")
class CountingBloom(_Bits):
    """The counting Bloom filter (Fan, Cao, Almeida and Broder, SIGCOMM'98, "Summary Cache"): a
    counter in place of each bit, ``counter_bits`` wide (4 in the paper), incremented on insert and
    decremented on delete, so deleting one key leaves the others' positions set. A counter at its
    maximum saturates: the increment is lost (``overflows`` counts them) and a later decrement
    can bring it to 0 while keys still hash there, a false negative."""

    word = "counters"
    PARAMS = {
        **_Bits.PARAMS,
        "counter_bits": Param(int, 4, "bits per counter: it saturates at 2^bits - 1", min=1, max=8),
    }

    def __init__(self, m: int, k: int, hashing: str, counter_bits: int) -> None:
        super().__init__(m, k, hashing)
        self.width = counter_bits
        self.top = (1 << counter_bits) - 1
        self.saturated = 0

    def insert(self, key: int, rng: Random) -> bool:
        a, top = self.array, self.top
        for p in self.positions(key):
            c = a[p]
            if c == top:
                self.overflows += 1
                continue
            a[p] = c + 1
            if not c:
                self._became(p, True)
            if c + 1 == top:
                self.saturated += 1
                self.full_cells[p // self.per_cell] += 1
        return True

    def delete(self, key: int, rng: Random) -> None:
        a, top = self.array, self.top
        for p in self.positions(key):
            c = a[p]
            if not c:
                continue
            if c == top:
                self.saturated -= 1
                self.full_cells[p // self.per_cell] -= 1
            a[p] = c - 1
            if c == 1:
                self._became(p, False)

    def bits(self, n: int) -> int:
        return self.m * self.width

    def state(self) -> dict:
        return {**super().state(), "counter_bits": self.width, "saturated": self.saturated}

    def check_invariants(self) -> None:
        super().check_invariants()
        assert max(self.array, default=0) <= self.top
        assert self.saturated == sum(1 for v in self.array if v == self.top) == sum(self.full_cells)


@register_policy("filters", "cuckoo")
class Cuckoo(Filter):
    """The cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher, CoNEXT'14): ``buckets`` buckets
    of ``slots`` fingerprints of ``fingerprint`` bits. A key's fingerprint may sit in bucket
    i1 = h(x) or i2 = i1 xor h(fingerprint) (partial-key cuckoo hashing: either bucket
    finds the other from the fingerprint alone). Insert takes a free slot in either; when both
    are full it evicts a random fingerprint of one, moves it to its other bucket, and so on, at
    most ``max_kicks`` times (500); then the last one homeless is kept in a victim slot, as the
    authors' library does, and the table is full: that insert and every later one fail until a
    delete makes room. Delete removes one copy of the fingerprint. False positives: about
    2 * slots * load / 2^fingerprint."""

    word = "slots"
    PARAMS = {
        "buckets": Param(int, 512, "buckets (a power of two)", min=1, max=1 << 22, state=State(bytes=32)),
        "slots": Param(int, 4, "fingerprints per bucket", min=1, max=8),
        "fingerprint": Param(int, 12, "bits per fingerprint", min=2, max=32),
        "max_kicks": Param(int, 500, "evictions an insert may make before the table counts as full", min=0, max=10_000),
    }

    def __init__(self, buckets: int, slots: int, fingerprint: int, max_kicks: int) -> None:
        super().__init__()
        if buckets & (buckets - 1):
            raise InputError(f"buckets: {buckets} is not a power of two (i2 = i1 xor h(fp) needs one)")
        self.nb, self.b, self.f, self.max_kicks = buckets, slots, fingerprint, max_kicks
        self.mask = buckets - 1
        self.table = [0] * (buckets * slots)  # bucket i holds table[i*b : i*b + b]; 0 is empty
        self.stored = 0  # fingerprints in the table (the victim aside)
        self.victim: tuple[int, int] | None = None  # (bucket, fingerprint) with no room
        self._size(buckets)

    def index_fp(self, key: int) -> tuple[int, int]:
        h = mix64(key)
        return h & self.mask, (h >> 32) % ((1 << self.f) - 1) + 1  # a fingerprint is never 0

    def alt(self, i: int, fp: int) -> int:
        return i ^ (mix64(fp ^ SALT) & self.mask)

    def _put(self, i: int, fp: int) -> bool:
        t, b = self.table, self.b
        for s in range(i * b, i * b + b):
            if not t[s]:
                t[s] = fp
                self.stored += 1
                self.cells[i // self.per_cell] += 1
                return True
        return False

    def _place(self, i: int, fp: int, rng: Random) -> bool:
        """Algorithm 1 of the paper from the eviction step: kick a random entry of bucket ``i``."""
        t, b = self.table, self.b
        for _ in range(self.max_kicks):
            s = i * b + int(rng.random() * b)
            fp, t[s] = t[s], fp
            self.kicks += 1
            i = self.alt(i, fp)
            if self._put(i, fp):
                return True
        self.victim = (i, fp)
        return False

    def insert(self, key: int, rng: Random) -> bool:
        if self.victim is not None:
            return False
        i1, fp = self.index_fp(key)
        i2 = self.alt(i1, fp)
        if self._put(i1, fp) or self._put(i2, fp):
            return True
        return self._place(i1 if rng.random() < 0.5 else i2, fp, rng)

    def lookup(self, key: int) -> bool:
        i1, fp = self.index_fp(key)
        i2 = self.alt(i1, fp)
        t, b = self.table, self.b
        if fp in t[i1 * b : i1 * b + b] or fp in t[i2 * b : i2 * b + b]:
            return True
        v = self.victim
        return v is not None and v[1] == fp and v[0] in (i1, i2)

    def delete(self, key: int, rng: Random) -> None:
        i1, fp = self.index_fp(key)
        t, b = self.table, self.b
        for i in (i1, self.alt(i1, fp)):
            for s in range(i * b, i * b + b):
                if t[s] == fp:
                    t[s] = 0
                    self.stored -= 1
                    self.cells[i // self.per_cell] -= 1
                    self._rehome(rng)
                    return
        v = self.victim
        if v is not None and v[1] == fp and v[0] in (i1, self.alt(i1, fp)):
            self.victim = None

    def _rehome(self, rng: Random) -> None:
        """After a delete the victim gets its chance again (the authors' library does the same)."""
        v = self.victim
        if v is None:
            return
        self.victim = None
        i, fp = v
        if not (self._put(i, fp) or self._put(self.alt(i, fp), fp)):
            self._place(i, fp, rng)  # homeless again: the victim once more

    def bits(self, n: int) -> int:
        return self.nb * self.b * self.f

    def load(self) -> float:
        return self.stored / (self.nb * self.b)

    def formula(self, n: int) -> float:
        """1 - (1 - 1/(2^f - 1))^(2 b load): two buckets of b slots, each full one a chance in
        2^f - 1 to hold the same fingerprint (Fan et al., section 4)."""
        return 1.0 - portmath.pow(1.0 - 1.0 / ((1 << self.f) - 1), 2 * self.b * self.load())

    def probe(self, key: int) -> dict:
        i1, fp = self.index_fp(key)
        i2 = self.alt(i1, fp)
        b = self.b
        return {"fp": fp, "buckets": [i1, i2], "held": [self.table[i * b : i * b + b] for i in (i1, i2)]}

    def state(self) -> dict:
        return {"buckets": self.nb, "slots": self.b, "fingerprint": self.f, "victim": self.victim is not None}

    def explain(self, d, other=None) -> str:
        f = d.facts
        i1, i2 = f["buckets"]
        where = f"buckets {i1} and {i2}" if i1 != i2 else f"bucket {i1}"
        if d.action == "maybe":
            why = f"fingerprint {f['fp']} is in {where}"
        else:
            why = f"neither of {where} holds fingerprint {f['fp']}"
        return f"{self.policy_name} answered {d.action} for {d.subject}: {why}"

    def check_invariants(self) -> None:
        t = self.table
        assert len(t) == self.nb * self.b
        assert self.stored == sum(1 for v in t if v), "the count of stored fingerprints drifted"
        assert sum(self.cells) == self.stored
        assert all(0 <= v < (1 << self.f) for v in t)
