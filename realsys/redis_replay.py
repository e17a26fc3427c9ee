"""The cache stream against real Redis: a GET per reference (as GETRANGE 0 0); a miss finds no key and is followed by a SET (as a
SETRANGE).

Redis is sized to hold exactly ``size`` objects: keys of one fixed width and values of one fixed
size (64 KiB, so the few KB by which client buffers move are a fraction of a key), ``maxmemory`` set between the memory of ``size`` and ``size + 1`` resident keys, then checked
by filling it with three times as many keys and reading DBSIZE (adjusted and checked again when
it is off). The measured panels sit beside the simulator's ``redis_*`` models of the same
settings, run on the same stream at the same speed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from realsys import servers
from realsys.redisclient import Redis
from sims.cache.base import scan_keys

VALUE_SIZE = 65472  # bytes a value (one 64 KiB allocation): large beside the ~20 KB that client buffers wander by


def read(r: Redis, name: bytes) -> bool:
    """A GET of the key: GETRANGE 0 0 looks the key up as GET does (it updates the LRU clock or
    the LFU counter) but answers one byte, so no 64 KiB reply sits in an output buffer, counted
    against maxmemory, when the next command evicts."""
    return r.call("GETRANGE", name, "0", "0") != b""


def store(r: Redis, name: bytes) -> None:
    """SET the key to a VALUE_SIZE-byte value, sent as a one-byte SETRANGE at its last offset, so
    the command (and Redis's query buffer) stays small while the value takes its full memory."""
    r.call("SETRANGE", name, str(VALUE_SIZE - 1), "v")


@dataclass(frozen=True)
class Setting:
    label: str  # the measured panel's name
    policy: str  # maxmemory-policy
    samples: int  # maxmemory-samples
    model: str  # the simulator's policy
    params: dict


SETTINGS = (
    Setting("redis allkeys-lru (measured)", "allkeys-lru", 5, "redis_lru", {"samples": 5}),
    Setting("redis allkeys-lru, 10 samples (measured)", "allkeys-lru", 10, "redis_lru", {"samples": 10}),
    Setting("redis allkeys-lfu (measured)", "allkeys-lfu", 5, "redis_lfu", {"samples": 5}),
    Setting("redis allkeys-random (measured)", "allkeys-random", 5, "redis_random", {}),
)


def key_name(key) -> bytes:
    """One width for every key, so each costs Redis the same memory."""
    text = f"{key:016d}" if isinstance(key, int) and key >= 0 else str(key)
    return ("k" + text).encode()


def references(events: list[dict]) -> list[tuple[float, object]]:
    out = []
    for ev in events:
        if ev["kind"] == "ref":
            out.append((ev["t"], ev["key"]))
        elif ev["kind"] == "scan":
            out += [(ev["t"], k) for k in scan_keys(ev)]
    return out


def size_for(r: Redis, size: int, names: list[bytes]) -> dict:
    """Set maxmemory so that Redis holds ``size`` keys while the replay runs; returns what was
    measured.

    The memory per key is the difference between ``size`` and ``2 * size`` resident keys (one
    key's difference would be lost in the noise of the client buffers). ``maxmemory`` starts half
    a key above ``size`` keys; then the stream's own references are played through, unpaced,
    under allkeys-random, and DBSIZE sampled along the second half of the pass corrects it, until
    Redis holds exactly ``size`` keys in the conditions of the replay itself."""
    r.call("CONFIG", "SET", "maxmemory", "0")
    r.call("FLUSHALL")
    filler = [key_name(9 * 10**15 + i) for i in range(2 * size)]  # the stream's key width
    for k in filler[:size]:
        store(r, k)
    m_size = int(r.info("memory")["used_memory"])
    for k in filler[size:]:
        store(r, k)
    per_key = max(1, (int(r.info("memory")["used_memory"]) - m_size) // size)
    limit = m_size + per_key // 2
    r.call("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    sample = names[: max(4 * size, 20_000)]
    held: list[int] = []
    for _ in range(6):
        r.call("FLUSHALL")
        r.call("CONFIG", "SET", "maxmemory", str(limit))
        held = []
        for i, name in enumerate(sample):
            if not read(r, name):
                store(r, name)
            if i >= len(sample) // 2 and i % 97 == 0:
                held.append(r.call("DBSIZE"))
        typical = sorted(held)[len(held) // 2] if held else size
        if typical == size:
            break
        limit += (size - typical) * per_key
    r.call("CONFIG", "SET", "maxmemory", "0")
    r.call("FLUSHALL")
    return {
        "maxmemory": limit,
        "bytes_per_key": per_key,
        "resident_check": sorted(held)[len(held) // 2] if held else None,
    }


def replay(r: Redis, refs: list[tuple[float, object]], speed: float) -> dict:
    """Play ``refs`` at their times / speed. Returns hits, misses, the pacing error and ``sent``,
    each reference's actual send time in virtual seconds (for the model on the times Redis saw)."""
    names = [key_name(k) for _, k in refs]
    hits = 0
    late = []
    sent = []
    resident = []  # DBSIZE every 1000 references, past the first ``warm`` ones
    start = time.perf_counter()
    offset = time.time() % 60  # where in its minute Redis's clock (unix time) stands at t = 0
    for (t, _), name in zip(refs, names, strict=True):
        due = start + t / speed
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
            now = time.perf_counter()
        late.append(now - due)
        sent.append((now - start) * speed)
        if not read(r, name):
            store(r, name)
        else:
            hits += 1
        if len(late) % 1000 == 0:
            resident.append(r.call("DBSIZE"))
    late.sort()
    warm = resident[len(resident) // 4 :] or resident
    n = len(late)
    return {
        "requests": n,
        "hits": hits,
        "misses": n - hits,
        "hit_ratio": hits / n if n else 0.0,
        "late_p50_ms": 1000 * late[n // 2] if n else 0.0,
        "late_p99_ms": 1000 * late[min(n - 1, int(n * 0.99))] if n else 0.0,
        "resident_min": min(warm) if warm else 0,
        "resident_max": max(warm) if warm else 0,
        "sent": sent,
        "clock_offset": offset,
    }


def model_on(
    setting: Setting, refs: list, times: list[float], size: int, speed: float, offset: float, seed: int
) -> float:
    """The setting's model over the references at ``times`` (the send times): its hit ratio."""
    import random

    from sims.core.registry import get_policy

    cache = get_policy("cache", setting.model)(size, speed=speed, clock_offset=offset, **setting.params)
    cache.use_rng(random.Random(seed))
    hits = 0
    for t, (_, key) in zip(times, refs, strict=True):
        cache.clock_to(t)
        hits += cache.access(key)
    return hits / len(refs) if refs else 0.0


def measure(address: tuple[str, int], events: list[dict], size: int, speed: float, settings=SETTINGS) -> dict:
    """Every setting's measured panel, and Redis's version and sizing."""
    r = Redis(*address)
    try:
        version = r.info("server").get("redis_version", "?")
        refs = references(events)
        sizing = size_for(r, size, [key_name(k) for _, k in refs])
        panels = {}
        for s in settings:
            r.call("FLUSHALL")
            r.call("CONFIG", "SET", "maxmemory-policy", s.policy)
            r.call("CONFIG", "SET", "maxmemory-samples", str(s.samples))
            r.call("CONFIG", "SET", "maxmemory", str(sizing["maxmemory"]))
            m = replay(r, refs, speed)
            m["sim_on_sent_times"] = model_on(
                s, refs, m.pop("sent"), size, speed, m["clock_offset"], seed=int(m["clock_offset"] * 1e6)
            )
            panels[s.label] = m
        r.call("CONFIG", "SET", "maxmemory", "0")
        r.call("FLUSHALL")
        return {"version": version, "sizing": sizing, "panels": panels}
    finally:
        r.close()


def start(tmp, port: int):
    exe = servers.which("redis-server", "redis-server")
    conf = tmp / "redis.conf"
    conf.write_text(
        f'port {port}\nbind 127.0.0.1\nprotected-mode yes\nsave ""\nappendonly no\ndir {tmp}\n'
        f"daemonize no\nlogfile {tmp / 'redis.log'}\nmaxmemory 0\nhz 10\n"
    )
    return servers.running([exe, str(conf)], port, tmp, tmp / "redis.stderr")
