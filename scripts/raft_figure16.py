"""Raft's Figure 16 (Ongaro & Ousterhout, ATC'14 §9.3): time to detect and replace a crashed
leader, for ranges of randomized election timeout, 1,000 seeded trials per range.

A trial: five servers, one-way delays uniform 5–10 ms (a broadcast round trip of ~15 ms; a LAN's
jitter is small beside it). At
t = 1 s the leader (elected from a cold start) appends one entry and sends it with a heartbeat to
every follower at once (the paper's "synchronized broadcast of heartbeat RPCs ... before
terminating", so the followers' timers start together), but the entry goes to two followers only,
so the logs differ in length and two servers cannot win; then the leader crashes. Downtime: from
the crash until a new leader is elected (a trial is cut off at 10 s). Heartbeats every 50 ms, or
a third of the low end of the range when that is shorter. Trial k of a range uses seed k.

    python scripts/raft_figure16.py [--trials 1000] [--json out.json]

prints, per range, the percentiles (ms) of the downtime: the CDF as a table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sims.consensus.trials import run_events  # noqa: E402
from sims.core.metrics import percentile  # noqa: E402

RANGES = [
    (150, 150),
    (150, 151),
    (150, 155),
    (150, 175),
    (150, 200),
    (150, 300),
    (12, 24),
    (25, 50),
    (50, 100),
    (100, 200),
]
CRASH = 1.0
CUTOFF = 10.0  # a trial that has no new leader by then counts as > 10 s
START_BY = 30.0  # equal timeouts: wait up to this long for the first leader from a cold start
DELAY = (0.005, 0.010)  # one-way, seconds: a ~15 ms broadcast round trip with little jitter


def trial(lo_ms: float, hi_ms: float, seed: int) -> float:
    lo, hi = lo_ms / 1000, hi_ms / 1000
    panel = run_events(
        "raft",
        [{"t": 0.5, "kind": "op", "id": 1}],
        CRASH,
        seed=seed,
        election_lo=lo,
        election_hi=hi,
        heartbeat=min(0.05, lo / 3),
        delay_lo=DELAY[0],
        delay_hi=DELAY[1],
    )
    net = panel.net
    leader = panel.leader()
    if leader is None:  # no leader from the cold start yet (150–150): wait for one
        while leader is None and net.now < START_BY:
            net.advance(net.now + 0.05)
            leader = panel.leader()
        if leader is None:
            return float("inf")
    t0 = net.now
    node = net.nodes[leader]
    others = [j for j in range(5) if j != leader]
    prev = len(node.log)
    prev_term = node.log[-1][0] if node.log else 0
    node.log.append((node.term, 2))
    for k, j in enumerate(others):  # one synchronized broadcast; the new entry goes to two only
        entries = (node.log[-1],) if k < 2 else ()
        node.send(j, ("AE", node.term, prev, prev_term, entries, node.commit))
    net.apply({"fault": "crash", "node": leader}, t0)
    won = [nd.won for nd in net.nodes]
    while net.now - t0 < CUTOFF:
        nxt = net.next_time()
        if nxt is None:
            break
        net.advance(nxt)
        if any(nd.won > won[nd.id] for nd in net.nodes):
            return net.now - t0
    return float("inf")


QS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    rows = {}
    print("range (ms)   " + "  ".join(f"p{int(q * 100):<3}" for q in QS) + "   mean   >10s")
    for lo, hi in RANGES:
        times = sorted(trial(lo, hi, seed) for seed in range(args.trials))
        done = [t for t in times if t != float("inf")]
        stuck = len(times) - len(done)
        ms = [round(1000 * percentile(times if not stuck else done + [CUTOFF] * stuck, q, is_sorted=True)) for q in QS]
        total = 0.0
        for t in done:
            total += t
        mean = round(1000 * total / len(done)) if done else None
        rows[f"{lo}-{hi}"] = {
            "percentiles_ms": dict(zip([f"p{int(q * 100)}" for q in QS], ms)),
            "mean_ms": mean,
            "over_10s": stuck,
        }
        print(f"{lo:>3}-{hi:<3}      " + "  ".join(f"{m:<4}" for m in ms) + f"   {mean}   {stuck}", flush=True)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"trials": args.trials, "seeds": f"0..{args.trials - 1}", "ranges": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
