"""Raft's Figure 16 (Ongaro & Ousterhout, ATC'14 §9.3): time to detect and replace a crashed
leader, for ranges of randomized election timeout, 1,000 seeded trials per range.

The paper's setting, as its text gives it: five servers, a broadcast time (a round of RPCs to
every server and their answers) of about 15 ms; servers with logs of different lengths, so some
candidates cannot win; a synchronized broadcast of heartbeats just before the leader's process
is killed, the kill falling uniformly within the heartbeat interval, which is half the minimum
election timeout (so the smallest downtime is about half of it); downtime is from the kill to a
new leader. Where the 15 ms goes it does not say; we model it as LogCabin on a LAN would spend
it (``--model paper``, the default): a one-way delay of ``--request-ms`` (0.35 ms, +-0.15) and,
on a server whose term, vote or log an RPC changed, a write to disk before it answers, of
``--broadcast-ms`` minus the two one-way trips; election timers in whole milliseconds (LogCabin's).
``--model wire`` is the setting this script used before: one-way delays uniform 5-10 ms and no
disk (the 15 ms all on the wire, so a vote request takes 5-10 ms to arrive), heartbeats every
min(50 ms, a third of the minimum timeout), the kill right at the broadcast, continuous timers.

A trial: at t = 1 s the leader (elected from a cold start) appends one entry and sends one
AppendEntries to every follower at once, the entry to two of them only, and is killed; in the
paper model the clock of the downtime starts a uniform draw of the heartbeat interval later (the
leader would have sent nothing in between). Trials of block b use seeds b*N .. b*N + N - 1.

    python scripts/raft_figure16.py [--trials 1000] [--block 0] [--model paper|wire]
        [--request-ms 0.35] [--broadcast-ms 15] [--json out.json]

prints, per range, percentiles of the downtime in ms (the CDF as a table), the mean of the
trials that elected a leader, and how many did not within 10 s.
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
JITTER_MS = 0.15  # paper model: +- this around the one-way delay


def network(model: str, lo: float, request_ms: float = 0.35, broadcast_ms: float = 15.0) -> dict:
    """The panel parameters of one model for a minimum timeout ``lo`` (seconds)."""
    if model == "wire":
        return {"heartbeat": min(0.05, lo / 3), "delay_lo": 0.005, "delay_hi": 0.010}
    if model != "paper":
        raise ValueError(f"unknown model {model!r}; valid: paper, wire")
    d, j = request_ms / 1000, min(JITTER_MS, request_ms) / 1000
    disk = broadcast_ms / 1000 - 2 * d
    if disk < 0:
        raise ValueError(f"--request-ms {request_ms} is more than half of --broadcast-ms {broadcast_ms}")
    return {"heartbeat": lo / 2, "delay_lo": d - j, "delay_hi": d + j, "disk": disk, "timer_step": 0.001}


def trial(lo_ms: float, hi_ms: float, seed: int, model: str = "paper", **net_args) -> float:
    lo, hi = lo_ms / 1000, hi_ms / 1000
    params = network(model, lo, **net_args)
    panel = run_events(
        "raft", [{"t": 0.5, "kind": "op", "id": 1}], CRASH, seed=seed, election_lo=lo, election_hi=hi, **params
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
    # the kill falls uniformly within the heartbeat interval (drawn by the dying leader's generator)
    killed = t0 + (params["heartbeat"] * node.rng.random() if model == "paper" else 0.0)
    net.apply({"fault": "crash", "node": leader}, t0)
    won = [nd.won for nd in net.nodes]
    while net.now - killed < CUTOFF:
        nxt = net.next_time()
        if nxt is None:
            break
        net.advance(nxt)
        if any(nd.won > won[nd.id] for nd in net.nodes):
            return net.now - killed
    return float("inf")


QS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0)


def summary(times: list[float]) -> dict:
    times = sorted(times)
    done = [t for t in times if t != float("inf")]
    stuck = len(times) - len(done)
    capped = done + [CUTOFF] * stuck
    ms = [round(1000 * percentile(capped, q, is_sorted=True)) for q in QS]
    total = 0.0
    for t in done:
        total += t
    return {
        "percentiles_ms": dict(zip([f"p{int(q * 100)}" for q in QS], ms, strict=True)),
        "mean_ms": round(1000 * total / len(done)) if done else None,
        "over_10s": stuck,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--block", type=int, default=0, help="seed block: seeds block*trials .. +trials-1")
    ap.add_argument("--model", choices=("paper", "wire"), default="paper")
    ap.add_argument("--request-ms", type=float, default=0.35, help="paper model: one-way delay, ms")
    ap.add_argument("--broadcast-ms", type=float, default=15.0, help="paper model: RPC round trip with disk, ms")
    ap.add_argument("--ranges", default="", help="only these, e.g. 150-155,12-24")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    net_args = {} if args.model == "wire" else {"request_ms": args.request_ms, "broadcast_ms": args.broadcast_ms}
    try:
        network(args.model, 0.15, **net_args)
    except ValueError as e:
        print(f"raft_figure16: {e}", file=sys.stderr)
        return 2
    ranges = RANGES
    if args.ranges:
        ranges = [tuple(int(x) for x in r.split("-")) for r in args.ranges.split(",")]
    seeds = range(args.block * args.trials, (args.block + 1) * args.trials)
    rows = {}
    print("range (ms)   " + "  ".join(f"p{int(q * 100):<3}" for q in QS) + "   mean   >10s")
    for lo, hi in ranges:
        row = summary([trial(lo, hi, seed, args.model, **net_args) for seed in seeds])
        rows[f"{lo}-{hi}"] = row
        ms = row["percentiles_ms"].values()
        print(f"{lo:>3}-{hi:<3}      " + "  ".join(f"{m:<4}" for m in ms) + f"   {row['mean_ms']}   {row['over_10s']}")
        sys.stdout.flush()
    if args.json:
        out = {"trials": args.trials, "seeds": f"{seeds.start}..{seeds.stop - 1}", "model": args.model}
        Path(args.json).write_text(json.dumps(out | net_args | {"ranges": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
