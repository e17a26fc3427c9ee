"""Redis's eviction (``maxmemory-policy allkeys-lru | allkeys-lfu | allkeys-random``), as
src/evict.c and src/object.c of Redis 7.0 compute it. None of them is the textbook policy.

- **Sampled, with a pool.** Each eviction samples ``samples`` keys (``maxmemory-samples``, 5 by
  default) and offers them to a pool of 16 candidates kept sorted by score; the best-scored
  candidate that still exists is evicted. A pool entry keeps the score it had when it was sampled,
  even if the key was read since: Redis does that too.
- **LRU on a one-second clock.** A key's LRU field is Redis's clock in whole seconds
  (``LRU_CLOCK_RESOLUTION`` 1000 ms), so keys read within the same second look equally old.
- **LFU as a Morris counter.** 8 bits, new keys start at 5; a read increments with probability
  1 / ((counter − 5) · ``lfu_log_factor`` + 1); the counter loses one per ``lfu_decay_time``
  minutes since its last read, counted on Redis's minute clock.
- **Evicted at the next command.** Redis evicts before running a command when memory is over
  ``maxmemory``, so a miss's SET leaves ``size + 1`` keys until the next request evicts one.

- **Samples are neighbours.** ``dictGetSomeKeys`` takes whole chains of adjacent hash buckets from
  a random bucket (and ``allkeys-random`` one of 15 keys so taken): the models keep the keys in the
  same kind of table (power-of-two, chained, new keys at the head, doubled when full).

Differences we keep on purpose: Redis's SipHash is seeded per process, ours is a fixed FNV-1a
mix; Redis rehashes incrementally, ours at once; Redis draws with libc ``rand()``, we draw from the
panel's seeded generator. Time is the stream's virtual time divided
by ``speed`` (the replay's virtual seconds per wall second), shifted by ``clock_offset`` (where
in its minute Redis's clock stood when the stream began), so the clocks tick as they do in the
replay: when a second or a minute turns over matters to a one-second LRU clock and a per-minute
decay. A trace without times advances the clock by ``tick`` seconds per reference.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Any

from sims.cache.base import CachePolicy, scan_keys, seq
from sims.core.diverge import Decision
from sims.core.registry import Param, register_policy
from sims.replace import why

POOL_SIZE = 16  # EVPOOL_SIZE
LFU_INIT_VAL = 5
GETFAIR_NUM_ENTRIES = 15  # dictGetFairRandomKey's sample


class BucketTable:
    """The key space as Redis's dict lays it out: a power-of-two table of chains, a new key at the
    head of its chain, the table doubled once it holds as many keys as buckets. Sampling walks
    adjacent buckets from a random one, as ``dictGetSomeKeys`` does, so a sample is a run of
    neighbours rather than independent draws. Bucket positions come from a stable hash of the key
    (Redis's SipHash is seeded per process: any fixed scatter is as good)."""

    __slots__ = ("chains", "where", "used")

    def __init__(self) -> None:
        self.chains: list[list[Hashable]] = [[] for _ in range(4)]  # DICT_HT_INITIAL_SIZE
        self.where: dict[Hashable, int] = {}
        self.used = 0

    @staticmethod
    def _hash(key: Hashable) -> int:
        h = 0xCBF29CE484222325  # FNV-1a over the key's text, then one 64-bit mix
        for b in str(key).encode():
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 33
        h = (h * 0xFF51AFD7ED558CCD) & 0xFFFFFFFFFFFFFFFF
        return h ^ (h >> 33)

    def add(self, key: Hashable) -> None:
        if self.used >= len(self.chains):  # _dictExpandIfNeeded: grow to the next power of two
            size = len(self.chains)
            while size < self.used + 1:
                size *= 2
            old, self.chains = self.chains, [[] for _ in range(size)]
            for chain in old:
                for k in chain:
                    i = self._hash(k) & (size - 1)
                    self.chains[i].insert(0, k)
                    self.where[k] = i
        i = self._hash(key) & (len(self.chains) - 1)
        self.chains[i].insert(0, key)
        self.where[key] = i
        self.used += 1

    def remove(self, key: Hashable) -> None:
        self.chains[self.where.pop(key)].remove(key)
        self.used -= 1

    def some_keys(self, count: int, rng: random.Random) -> list[Hashable]:
        """dictGetSomeKeys: whole chains of adjacent buckets from a random start, at most
        ``count`` keys in ``10 * count`` steps; a long run of empty buckets jumps elsewhere."""
        count = min(count, self.used)
        mask = len(self.chains) - 1
        out: list[Hashable] = []
        i = rng.randrange(mask + 1)
        empty = 0
        steps = count * 10
        while len(out) < count and steps > 0:
            steps -= 1
            chain = self.chains[i]
            if not chain:
                empty += 1
                if empty >= 5 and empty > count:
                    i = rng.randrange(mask + 1)
                    empty = 0
            else:
                empty = 0
                for k in chain:
                    out.append(k)
                    if len(out) == count:
                        return out
            i = (i + 1) & mask
        return out


_COMMON = {
    "samples": Param(int, 5, "maxmemory-samples: keys sampled per eviction", min=1, max=1000, work=1),
    "speed": Param(
        float,
        1.0,
        "virtual seconds per wall second of Redis's clock (contention replay --speed)",
        above=0.0,
        max=1000.0,
    ),
    "tick": Param(
        float, 0.001, "clock advance per reference when a trace carries no times, seconds", above=0.0, max=1.0
    ),
    "clock_offset": Param(
        float,
        0.0,
        "Redis's wall clock at t = 0, in seconds past a whole minute (the replay measures it)",
        min=0.0,
        max=60.0,
    ),
}


class RedisEviction(CachePolicy):
    """The store, the uniform sampler and the deferred eviction; subclasses score keys."""

    PARAMS = _COMMON
    evicts_late = True  # at the next request, as Redis evicts before running a command

    def __init__(
        self, size: int, samples: int = 5, speed: float = 1.0, tick: float = 0.001, clock_offset: float = 0.0, **_: Any
    ) -> None:
        super().__init__(size)
        if not (clock_offset == clock_offset and 0 <= clock_offset < 60):
            raise ValueError(f"{self.policy_name}: clock_offset must lie in [0, 60) seconds, got {clock_offset!r}")
        self.offset = clock_offset
        if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= 64:
            raise ValueError(f"{self.policy_name}: samples must be an integer in [1, 64], got {samples!r}")
        if not (speed == speed and 0 < speed < float("inf")) or not (tick == tick and 0 <= tick < float("inf")):
            raise ValueError(f"{self.policy_name}: speed must be > 0 and tick >= 0, got {speed!r}, {tick!r}")
        self.samples, self.speed, self.tick = samples, speed, tick
        self.keys: list[Hashable] = []  # resident keys (the view and the checks)
        self.where: dict[Hashable, int] = {}  # key -> index in keys
        self.table = BucketTable()  # where Redis's dict would hold each key: what sampling walks
        self.meta: dict[Hashable, int] = {}  # the key's LRU/LFU field, as Redis keeps it
        self.pool: list[list] = []  # [score, key], ascending score; the best candidate last
        self.rng = random.Random(0)
        self.now = 0.0  # virtual seconds
        self._timed = False

    def clock_to(self, t: float) -> None:
        """Set the clock (virtual seconds) for the next references, as ``serve`` does from events."""
        self._timed = True
        self.now = t

    def use_rng(self, rng: random.Random) -> None:
        """The panel's own generator (Redis uses libc rand())."""
        self.rng = rng

    # -- the store ------------------------------------------------------------------------------
    def __contains__(self, key: Hashable) -> bool:
        return key in self.where

    def __len__(self) -> int:
        return len(self.keys)

    def _insert(self, key: Hashable) -> None:
        self.where[key] = len(self.keys)
        self.keys.append(key)
        self.table.add(key)
        self.meta[key] = self.new_field()

    def _remove(self, key: Hashable) -> None:
        i = self.where.pop(key)
        last = self.keys.pop()
        if i < len(self.keys):
            self.keys[i] = last
            self.where[last] = i
        del self.meta[key]
        self.table.remove(key)
        self._evicted(key)

    def sample(self) -> list[Hashable]:
        return self.table.some_keys(self.samples, self.rng)

    def evict_one(self) -> None:
        """evict.c's performEvictions for one key: populate the pool, take the best that exists."""
        pool = self.pool
        while True:
            for key in self.sample():
                score = self.score(key)
                k = 0
                while k < len(pool) and pool[k][0] < score:
                    k += 1
                if k == 0 and len(pool) == POOL_SIZE:
                    continue  # worse than every candidate, and no room
                if len(pool) == POOL_SIZE:
                    pool.pop(0)  # drop the worst to make room, inserting one place lower
                    k -= 1
                pool.insert(k, [score, key])
            while pool:
                _, key = pool.pop()
                if key in self.where:  # otherwise a ghost: try the next candidate
                    self._remove(key)
                    return

    # -- a reference ------------------------------------------------------------------------------
    def access(self, key: Hashable) -> bool:
        if not self._timed:
            self.now += self.tick
        while len(self.keys) > self.size:  # the previous SET left us over maxmemory
            self.evict_one()
        if key in self.where:
            self.touch(key)
            return True
        self._insert(key)  # GET missed: the client SETs it
        return False

    def serve(self, events: list[dict], lo: int, hi: int) -> tuple[int, int]:
        self._timed = True
        access = self.access
        hits = requests = 0
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if kind == "ref":
                self.now = ev["t"]
                requests += 1
                hits += access(ev["key"])
            elif kind == "scan":
                self.now = ev["t"]
                for key in scan_keys(ev):
                    requests += 1
                    hits += access(key)
        return requests, hits

    # -- what a subclass decides -------------------------------------------------------------------
    def new_field(self) -> int:
        raise NotImplementedError

    def touch(self, key: Hashable) -> None:
        raise NotImplementedError

    def score(self, key: Hashable) -> int:
        """Higher = a better victim (Redis calls it idle)."""
        raise NotImplementedError

    def lists(self) -> list[dict]:
        pool = [k for _, k in reversed(self.pool)]
        return [seq("eviction pool", pool, len(pool), "best candidate first", marks=lambda k: k in self.where)]

    def extra(self) -> dict[str, Any]:
        return {"samples": self.samples}

    def check_invariants(self) -> None:
        assert 0 <= len(self.keys) <= self.size + 1, (len(self.keys), self.size)
        assert len(self.where) == len(self.keys) == len(self.meta) == self.table.used
        assert sorted(map(str, self.table.where)) == sorted(map(str, self.where))
        assert all(self.keys[i] == k for k, i in self.where.items())
        assert len(self.pool) <= POOL_SIZE
        assert all(a[0] <= b[0] for a, b in zip(self.pool, self.pool[1:], strict=False)), "the pool is sorted by score"


@register_policy("cache", "redis_lru")
class RedisLRU(RedisEviction):
    """allkeys-lru: the oldest of a sample, on a one-second clock."""

    def clock(self) -> int:
        return int(self.now / self.speed + self.offset)  # LRU_CLOCK(): whole wall seconds

    def new_field(self) -> int:
        return self.clock()

    def touch(self, key: Hashable) -> None:
        self.meta[key] = self.clock()

    def score(self, key: Hashable) -> int:
        return (self.clock() - self.meta[key]) * 1000  # estimateObjectIdleTime, ms

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        reason = f"of {self.samples} sampled neighbouring keys and the pool it looked idlest on Redis's one-second clock (last used at {{last}})"
        return why.say(self, d, reason)


@register_policy("cache", "redis_lfu")
class RedisLFU(RedisEviction):
    """allkeys-lfu: a logarithmic Morris counter that decays by the minute."""

    PARAMS = _COMMON | {
        "lfu_log_factor": Param(int, 10, "lfu-log-factor: how slowly the counter grows", min=0, max=1000),
        "lfu_decay_time": Param(int, 1, "lfu-decay-time: minutes per point of decay (0: never)", min=0, max=1_000_000),
    }

    def __init__(self, size: int, lfu_log_factor: int = 10, lfu_decay_time: int = 1, **kw: Any) -> None:
        super().__init__(size, **kw)
        for name, v in (("lfu_log_factor", lfu_log_factor), ("lfu_decay_time", lfu_decay_time)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"redis_lfu: {name} must be an integer >= 0, got {v!r}")
        self.log_factor, self.decay_time = lfu_log_factor, lfu_decay_time

    def minutes(self) -> int:
        return int((self.now / self.speed + self.offset) / 60) & 65535  # LFUGetTimeInMinutes

    def decayed(self, key: Hashable) -> int:
        """LFUDecrAndReturn: the counter less one per decay period since its last read."""
        field = self.meta[key]
        ldt, counter = field >> 8, field & 255
        if not self.decay_time:
            return counter
        elapsed = (self.minutes() - ldt) & 65535
        periods = elapsed // self.decay_time
        return 0 if periods > counter else counter - periods

    def new_field(self) -> int:
        return (self.minutes() << 8) | LFU_INIT_VAL

    def touch(self, key: Hashable) -> None:
        counter = self.decayed(key)
        if counter < 255:  # LFULogIncr
            base = max(0, counter - LFU_INIT_VAL)
            if self.rng.random() < 1.0 / (base * self.log_factor + 1):
                counter += 1
        self.meta[key] = (self.minutes() << 8) | counter

    def score(self, key: Hashable) -> int:
        return 255 - self.decayed(key)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        reason = f"of {self.samples} sampled neighbouring keys and the pool its decayed Morris counter was the lowest (used {{uses}} times, last at {{last}})"
        return why.say(self, d, reason)


@register_policy("cache", "redis_random")
class RedisRandom(RedisEviction):
    """allkeys-random: any resident key, uniformly (no sampling, no pool)."""

    PARAMS = {k: v for k, v in _COMMON.items() if k != "samples"}

    def evict_one(self) -> None:
        """dictGetFairRandomKey: a random one of 15 keys from adjacent buckets."""
        some = self.table.some_keys(GETFAIR_NUM_ENTRIES, self.rng)
        self._remove(some[self.rng.randrange(len(some))] if some else self.keys[self.rng.randrange(len(self.keys))])

    def new_field(self) -> int:
        return 0

    def touch(self, key: Hashable) -> None:
        pass

    def score(self, key: Hashable) -> int:
        return 0

    def lists(self) -> list[dict]:
        return []

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        return why.say(
            self,
            d,
            "it was drawn at random from a run of neighbouring hash buckets (used {uses} times, last at {last})",
        )
