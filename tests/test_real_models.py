"""The simulator's models of Redis eviction and nginx's limit_req, against their sources'
arithmetic (src/evict.c, ngx_http_limit_req_module.c); no server needed."""

from __future__ import annotations

import random

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.cache import redis
from sims.ratelimit import nginx


def test_nginx_first_request_is_free_so_burst_b_passes_b_plus_one():
    lim = nginx.NginxLimitReqNodelay(rate=10, burst=3)
    assert [lim.admit(1.0) for _ in range(5)] == [True, True, True, True, False]


def test_nginx_clock_is_whole_decimal_milliseconds():
    assert nginx.to_ms(0.3, 1.0) == 300 and nginx.to_ms(0.0009, 1.0) == 0 and nginx.to_ms(1.0, 4.0) == 250
    lim = nginx.NginxLimitReqNodelay(rate=10, burst=0)
    assert lim.admit(0.1) and not lim.admit(0.1999) and lim.admit(0.2)  # 100 ms leak one request


def test_nginx_rejection_writes_nothing_back():
    lim = nginx.NginxLimitReqNodelay(rate=1, burst=1)
    assert lim.admit(0.0) and lim.admit(0.0)
    excess, last = lim.excess, lim.last
    assert not lim.admit(0.5)
    assert (lim.excess, lim.last) == (excess, last)


def test_nginx_without_nodelay_spaces_the_burst_at_the_rate():
    lim = nginx.NginxLimitReqDelay(rate=10, burst=5)
    waits = []
    for _ in range(6):
        assert lim.admit(2.0)
        waits.append(lim.wait_ms)
    assert waits == [0, 100, 200, 300, 400, 500]
    assert lim.release_time(2.0) == pytest.approx(2.5)


def test_nginx_per_minute_rates_truncate_as_nginx_does():
    assert nginx.nginx_rate(2.5, 1.0) == ("150r/m", 2500)
    assert nginx.nginx_rate(0.05, 1.0) == ("3r/m", 3 * 1000 // 60)  # 50, not 50.0
    assert nginx.nginx_rate(10, 4) == ("40r/s", 40000)
    with pytest.raises(ValueError, match="whole requests"):
        nginx.nginx_rate(0.123456789, 1.0)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.floats(0, 0.05), min_size=1, max_size=200), st.integers(0, 8), st.integers(1, 50))
def test_nginx_never_holds_more_excess_than_the_burst(gaps, burst, rate):
    lim = nginx.NginxLimitReqNodelay(rate=float(rate), burst=float(burst))
    t = 0.0
    for g in gaps:
        t += g
        lim.admit(round(t, 4))
        lim.check_invariants()


def _cache(cls, size=20, **kw):
    c = cls(size, **kw)
    c.use_rng(random.Random(1))
    return c


@pytest.mark.parametrize("cls", [redis.RedisLRU, redis.RedisLFU, redis.RedisRandom])
def test_redis_models_keep_their_invariants(cls):
    c = _cache(cls)
    rng = random.Random(5)
    for i in range(5000):
        c.now = i * 0.01
        c.access(rng.randrange(60))
        c.check_invariants()
    assert len(c) in (c.size, c.size + 1)


def test_redis_evicts_at_the_next_command_so_a_set_leaves_size_plus_one():
    c = _cache(redis.RedisLRU, size=3)
    for k in range(4):
        assert not c.access(k)
    assert len(c) == 4 and 3 in c  # over maxmemory until the next request
    c.access(99)
    assert len(c) == 4 and 99 in c  # one evicted before it ran, then 99 was set


def test_redis_lru_cannot_tell_apart_keys_read_within_one_second():
    c = _cache(redis.RedisLRU, size=100)
    c.now = 10.2
    c.access("a")
    c.now = 10.9
    c.access("b")
    c.now = 12.0
    assert c.score("a") == c.score("b") == 2000  # idle in ms, on a one-second clock
    slow = _cache(redis.RedisLRU, size=100, speed=4.0)  # at --speed 4 a wall second is 4 virtual ones
    slow.access("a")
    slow.now = 3.9
    assert slow.score("a") == 0


# redis.conf's own table: the counter after N hits, for each lfu-log-factor (255 = saturated)
REDIS_CONF_TABLE = {0: (104, 255, 255), 1: (18, 49, 255), 10: (10, 18, 142), 100: (8, 11, 49)}


@pytest.mark.parametrize("factor", sorted(REDIS_CONF_TABLE))
def test_redis_lfu_counter_grows_as_redis_conf_tabulates(factor):
    got = []
    for n in (100, 1000, 100_000):
        runs = []
        for seed in range(5):
            c = redis.RedisLFU(10, lfu_log_factor=factor, lfu_decay_time=0)
            c.use_rng(random.Random(seed))
            c.access("k")
            for _ in range(n):
                c.access("k")
            runs.append(c.meta["k"] & 255)
        got.append(sum(runs) / len(runs))
    for want, mean in zip(REDIS_CONF_TABLE[factor], got, strict=True):
        assert abs(mean - want) <= max(3.0, 0.12 * want), (factor, got)


def test_redis_lfu_counter_decays_one_per_minute():
    c = _cache(redis.RedisLFU, size=10)
    c.access("k")
    for _ in range(1000):
        c.access("k")
    counter = c.meta["k"] & 255
    c.now += 3 * 60
    assert c.decayed("k") == counter - 3
    c.now += 600 * 60
    assert c.decayed("k") == 0


def test_more_samples_track_lru_more_closely():
    """With a clock fine enough to order every reference, 10 samples come closer to exact LRU than
    5, and both beat random: the sampling alone, without the one-second clock."""
    from sims.cache.classic import LRU

    rng = random.Random(2)
    keys = [min(int(rng.paretovariate(1.1)), 5000) for _ in range(60000)]
    hits = {}
    for name, cls, kw in (
        ("5", redis.RedisLRU, {"samples": 5}),
        ("10", redis.RedisLRU, {"samples": 10}),
        ("random", redis.RedisRandom, {}),
    ):
        c = _cache(cls, size=200, speed=1e-6, **kw)
        n = 0
        for i, k in enumerate(keys):
            c.now = i * 1e-3
            n += c.access(k)
        hits[name] = n
    exact = LRU(200)
    lru_hits = sum(exact.access(k) for k in keys)
    assert hits["random"] < hits["5"] < hits["10"] <= lru_hits * 1.01


def test_redis_table_grows_like_redis_dict_and_samples_neighbours():
    t = redis.BucketTable()
    for k in range(100):
        t.add(k)
    assert len(t.chains) == 128  # doubled when full: 4 -> ... -> 128 for 100 keys
    assert sorted(k for chain in t.chains for k in chain) == list(range(100))
    rng = random.Random(3)
    tight = 0
    for _ in range(200):
        got = t.some_keys(5, rng)
        assert len(got) == len(set(got)) == 5
        b = sorted({t.where[k] for k in got})
        gaps = [(b[(i + 1) % len(b)] - b[i]) % 128 or 128 for i in range(len(b))]
        tight += 128 - max(gaps) <= 12  # the arc of buckets the sample came from
    assert tight >= 180  # runs of neighbouring buckets (five independent draws almost never are)
    for k in range(100):
        t.remove(k)
    assert t.used == 0 and not any(t.chains)


def test_one_sample_lru_is_worse_than_random_because_the_sample_is_a_chain_head(monkeypatch):
    """Redis 7.0.15 measured this too (docs/real-systems.md): with maxmemory-samples 1, allkeys-lru
    hits less than allkeys-random. The one key dictGetSomeKeys returns heads its chain, the newest
    key of its bucket; a uniform draw instead puts sampled LRU above random."""
    from sims.core import presets
    from sims.core.scenario import Scenario

    p = presets.load("cache-redis").with_overrides(
        {
            "panels": [
                {"name": "lru1", "policy": "redis_lru", "samples": 1},
                {"name": "random", "policy": "redis_random"},
            ]
        }
    )

    def hit_ratios() -> tuple[float, float]:
        m = Scenario(p).run().metrics()
        return m["lru1"]["hit_ratio"], m["random"]["hit_ratio"]

    lru1, rand = hit_ratios()
    assert lru1 < rand - 0.005, (lru1, rand)
    monkeypatch.setattr(redis.RedisEviction, "sample", lambda self: [self.keys[self.rng.randrange(len(self.keys))]])
    lru1, rand = hit_ratios()
    assert lru1 > rand + 0.002, (lru1, rand)
