"""Our cache and paging policies against libCacheSim (the authors' C simulator, PyPI ``libcachesim``
0.3.5, the dev extra) in one sitting, on one seeded trace: 1M requests, Zipf(1.0) over 10,000
keys, cache size 100 (docs/benchmarks.md, issue 34 section 2).

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_libcachesim.py            # 5 rounds
    PYTHONPATH=$PWD .venv/bin/python scripts/bench_libcachesim.py --rounds 3 --only lru,arc --out table.md

Each round times, policy by policy and in turn: ours through the loop ``contention trace cache``
runs (``build_policy(...).run(keys)``, string keys as the CLI reads them; paging's trace replay,
``run`` over the page numbers), ours through the panel path (``serve`` over the stream's ref
events, as ``CachePanel.feed`` and ``PagingPanel.feed`` call it), and libCacheSim's C
``process_trace`` over the same trace in its binary oracleGeneral format, with its default hash
table (hashpower 24, what a user gets) and with one sized to the working set (hashpower 14).
Only the replay is timed: each side builds its cache first, OPT its look-ahead (the next-use
positions libCacheSim's Belady reads from the trace file) once, outside the clock.
Medians over the rounds; ratio = ours / libCacheSim (default table), by wall time and by the
process's CPU time (which a loaded machine disturbs less); "≥ 1/3" needs both. Hits must be identical.
The load average (1 min) is printed before and after: the machine may be shared.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import random
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sims.cache as cache_topic  # noqa: E402
import sims.paging  # noqa: E402, F401  (registers the paging policies)
from sims.core.registry import policies  # noqa: E402
from sims.replace import Lookahead  # noqa: E402

# our policy -> (libCacheSim class name, its parameters) where libCacheSim has the same algorithm
CACHE_PEERS = {
    "lru": ("LRU", {}),
    "fifo": ("FIFO", {}),
    "clock": ("Clock", {"init_freq": 1}),  # a load sets the reference bit, as ours does
    "lfu": ("LFU", {}),
    "arc": ("ARC", {}),
    "sieve": ("Sieve", {}),
    "s3fifo": ("S3FIFO", {}),
    "lirs": ("LIRS", {}),
    "twoq": ("TwoQ", {}),
    "random": ("Random", {}),
    "opt": ("Belady", {}),
    "mru": (None, {}),
}
PAGING_PEERS = {
    "fifo": ("FIFO", {}),
    "lru": ("LRU", {}),
    "clock": ("Clock", {"init_freq": 1}),
    "second_chance": ("Clock", {"init_freq": 1}),  # the same decisions as CLOCK (tests/test_paging.py)
    "lfu": ("LFU", {}),
    "random": ("Random", {}),
    "opt": ("Belady", {}),
}  # aging and NRU (a clock interrupt every `tick` references) have no libCacheSim counterpart


def zipf_keys(n: int, m: int, alpha: float, seed: int) -> list[int]:
    rng = random.Random(seed)
    cw = list(itertools.accumulate(1.0 / (i + 1) ** alpha for i in range(m)))
    return rng.choices(range(m), cum_weights=cw, k=n)


def oracle_general(keys: list[int], path: Path) -> None:
    """libCacheSim's binary trace: (time u32, id u64, size u32, next access i64) per request."""
    nxt = [-1] * len(keys)
    last: dict[int, int] = {}
    for i in range(len(keys) - 1, -1, -1):
        nxt[i] = last.get(keys[i], -1)
        last[keys[i]] = i
    rec = struct.Struct("<IQIq")
    buf = bytearray(rec.size * len(keys))
    for i, k in enumerate(keys):
        rec.pack_into(buf, rec.size * i, i, k + 1, 1, nxt[i])
    path.write_bytes(bytes(buf))


def timed(make) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds of this process (both sides run in it), hits of ``make()``'s
    function: the cache is built first, untimed, on both sides."""
    fn = make()
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    hits = fn()
    return time.perf_counter() - t0, time.process_time() - c0, hits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated policy names (both topics)")
    ap.add_argument("--out", type=Path, help="also write the markdown table here")
    a = ap.parse_args()
    try:
        import libcachesim as lcs
    except ImportError:
        print("libcachesim is not installed (the dev extra: pip install libcachesim==0.3.5)", file=sys.stderr)
        return 2

    keys = zipf_keys(a.requests, a.keys, 1.0, a.seed)
    skeys = [str(k) for k in keys]  # the CLI's keys: one string object per distinct key
    seen: dict[str, str] = {}
    skeys = [seen.setdefault(s, s) for s in skeys]
    events = [{"t": i * 0.001, "kind": "ref", "key": k} for i, k in enumerate(keys)]
    tmp = Path(tempfile.mkdtemp(prefix="bench_lcs_"))
    trace = tmp / "zipf.oracleGeneral"
    oracle_general(keys, trace)
    reader = lcs.TraceReader(str(trace), lcs.TraceType.ORACLE_GENERAL_TRACE)
    only = {s for s in a.only.split(",") if s}
    paging = policies("paging")

    ahead = {"trace": Lookahead(skeys), "panel": Lookahead(keys)}  # OPT's, as libCacheSim's file holds it

    def ours_cache(name: str, path: str):
        def make():
            cache = cache_topic.build_policy(name, a.size, future=ahead[path])
            if path == "trace":
                return lambda: cache.run(skeys)
            return lambda: cache.serve(events, 0, len(events))[1]

        return make

    def ours_paging(name: str, path: str):
        cls = paging[name]

        def make():
            policy = cls(a.size, events[:1], random.Random(0))  # OPT's look-ahead set just below
            if hasattr(policy, "ahead"):
                policy.ahead = ahead["panel"]
            if path == "trace":
                return lambda: policy.run(keys)
            return lambda: policy.serve(events, 0, len(events))[1]

        return make

    def theirs(cls_name: str, params: dict, hashpower: int):
        cls = getattr(lcs, cls_name)

        def make():
            cache = cls(cache_size=a.size, hashpower=hashpower, **params)

            def go() -> int:
                miss, _ = cache.process_trace(reader)
                return round((1.0 - miss) * a.requests)

            return go

        return make

    rows = []  # (topic, name, peer, {side: fn})
    for topic, peers, ours in (("cache", CACHE_PEERS, ours_cache), ("paging", PAGING_PEERS, ours_paging)):
        for name, (peer, params) in peers.items():
            if only and name not in only:
                continue
            sides = {"trace": ours(name, "trace"), "panel": ours(name, "panel")}
            if peer:
                sides["lcs"] = theirs(peer, params, 24)
                sides["lcs14"] = theirs(peer, params, 14)
            rows.append((topic, name, peer, sides))

    load0 = os.getloadavg()
    times: dict[tuple, list[float]] = {}
    cpu: dict[tuple, list[float]] = {}
    hits: dict[tuple, set[int]] = {}
    for r in range(a.rounds):
        for topic, name, _, sides in rows:
            for side, fn in sides.items():
                dt, dc, h = timed(fn)
                times.setdefault((topic, name, side), []).append(dt)
                cpu.setdefault((topic, name, side), []).append(dc)
                hits.setdefault((topic, name, side), set()).add(h)
        print(f"round {r + 1}/{a.rounds} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    load1 = os.getloadavg()

    def rate(key: tuple, by: dict = times) -> float:
        return a.requests / statistics.median(by[key]) / 1e6

    lines = [
        f"{a.requests:,} requests, Zipf(1.0) over {a.keys:,} keys (seed {a.seed}), size {a.size}; "
        f"median of {a.rounds} rounds; load average {load0[0]:.2f} before, {load1[0]:.2f} after "
        f"({os.cpu_count()} CPUs), Python {sys.version.split()[0]}",
        "",
        "| topic | policy | libCacheSim | ours, trace | ours, panel | libCacheSim, hashpower 24 (default) / 14 "
        "| ratio, trace / panel | same, CPU time | ≥ 1/3 | ratio to hashpower 14 | hits, ours / libCacheSim |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for topic, name, peer, _ in rows:
        ours_hits = hits[(topic, name, "trace")] | hits[(topic, name, "panel")]
        tr, pa = rate((topic, name, "trace")), rate((topic, name, "panel"))
        oh = ", ".join(f"{h:,}" for h in sorted(ours_hits))
        if not peer:
            lines.append(f"| {topic} | {name} | — | {tr:.2f}M | {pa:.2f}M | — | — | — | — | — | {oh} |")
            continue
        lc, lc14, lcc = rate((topic, name, "lcs")), rate((topic, name, "lcs14")), rate((topic, name, "lcs"), cpu)
        ctr, cpa = rate((topic, name, "trace"), cpu) / lcc, rate((topic, name, "panel"), cpu) / lcc
        theirs_hits = hits[(topic, name, "lcs")]
        th = ", ".join(f"{h:,}" for h in sorted(theirs_hits))
        same = "identical" if ours_hits == theirs_hits and len(ours_hits) == 1 else "differ"
        meets = "yes" if min(tr, pa) >= lc / 3 and min(ctr, cpa) >= 1 / 3 else "no"
        lines.append(
            f"| {topic} | {name} | {peer} | {tr:.2f}M | {pa:.2f}M | {lc:.2f}M / {lc14:.2f}M | "
            f"{tr / lc:.2f}× / {pa / lc:.2f}× | {ctr:.2f}× / {cpa:.2f}× | {meets} | "
            f"{min(tr, pa) / lc14:.2f}× | {oh} / {th} ({same}) |"
        )
    text = "\n".join(lines)
    print(text)
    if a.out:
        a.out.write_text(text + "\n")
    trace.unlink()
    tmp.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
