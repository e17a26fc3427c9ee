"""Every cache and paging policy's ``run(keys)`` (the batch loop ``contention trace cache`` and the
panels' ``serve`` run, with ``access`` inlined) equals one ``access`` per key on seeded traces:
the same hits, the same victims in the same order, the same resident set and view afterwards."""

from __future__ import annotations

import itertools
import random

import pytest

import sims.cache as cache_topic
import sims.paging  # noqa: F401  (registers the paging policies)
from sims.core.registry import policies
from sims.replace import Replacement
from sims.replace.edit import contracted


def traces(seed: int, n: int = 3000):
    """Zipf(1) over 500 keys, uniform over 80, and a hot set broken by scans and loops."""
    rng = random.Random(seed)
    cw = list(itertools.accumulate(1.0 / (i + 1) for i in range(500)))
    yield "zipf", rng.choices(range(500), cum_weights=cw, k=n)
    yield "uniform", [rng.randrange(80) for _ in range(n)]
    out: list[int] = []
    while len(out) < n:
        r = rng.random()
        if r < 0.6:
            out.append(rng.randrange(40))
        elif r < 0.8:
            a = 1000 + rng.randrange(500)
            out.extend(range(a, a + 60))
        else:
            out.extend(range(5000, 5000 + rng.randrange(30, 90)))
    yield "scan_loop", out[:n]


def cache_pair(name: str, size: int, keys: list[int]):
    return [cache_topic.build_policy(name, size, future=keys) for _ in range(2)]


def paging_pair(name: str, size: int, keys: list[int]):
    events = [{"t": float(i), "kind": "ref", "key": k} for i, k in enumerate(keys)]
    cls = policies("paging")[name]
    return [cls(size, events, random.Random(7)) for _ in range(2)]


def state(policy: Replacement, topic: str):
    return policy.view() if topic == "cache" else (policy.resident(), policy.state())


CASES = [("cache", n) for n in cache_topic.eviction_policies()] + [("paging", n) for n in sorted(policies("paging"))]


@pytest.mark.parametrize(("topic", "name"), CASES)
@pytest.mark.parametrize("seed", range(3))
def test_run_equals_one_access_per_key(topic, name, seed):
    for shape, keys in traces(seed):
        for size in (1, 7, 20, 100):
            fast, slow = (cache_pair if topic == "cache" else paging_pair)(name, size, keys)
            gone_fast: list = []
            gone_slow: list = []
            fast.on_evict, slow.on_evict = gone_fast.append, gone_slow.append
            cut = len(keys) // 3  # a run split in two, as a panel's frames split the stream
            hits = fast.run(keys[:cut]) + fast.run(iter(keys[cut:]))
            assert hits == sum(slow.access(k) for k in keys), (shape, size)
            assert gone_fast == gone_slow, (shape, size)
            assert state(fast, topic) == state(slow, topic), (shape, size)
            fast.check_invariants()


@pytest.mark.parametrize("name", ["lru", "arc", "sieve", "s3fifo", "lirs"])
def test_an_edited_policy_runs_every_key_through_its_checked_access(name):
    cls = contracted(policies("cache")[name], steps=type("S", (), {"start": lambda self: None})())
    assert cls.run is Replacement.run
    keys = [k % 30 for k in range(0, 900, 7)]
    assert cls(10).run(keys) == cache_topic.build_policy(name, 10).run(keys)
