"""Median wall time of one ``contention run`` in several checkouts, each run in turn, so every
checkout sees the same minutes of a shared, noisy machine (docs/benchmarks.md, issue 21).

    python scripts/bench_alternate.py --runs 11 /path/to/old-checkout .

A "peer loop" (10^7 ``x += i`` in a function) runs in the same rotation: it says how fast the
machine itself is at the time. Bytecode caches are warmed first and ``PYTHONDONTWRITEBYTECODE``
is dropped, so no run compiles.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

PEER = "def f():\n    x = 0\n    for i in range(10**7):\n        x += i\nf()"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkouts", nargs="+", help="repository checkouts to time")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--preset", default="engine-vidur-10k")
    ap.add_argument("--panels", default="a100")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "sims", "run", args.preset, "--json"]
    if args.panels:
        cmd += ["--panels", args.panels]
    jobs = [("peer loop", [sys.executable, "-c", PEER], None)]
    for d in args.checkouts:
        d = os.path.abspath(d)
        if not os.path.isdir(os.path.join(d, "sims")):
            ap.error(f"{d}: not a checkout (no sims/ folder)")
        jobs.append((d, cmd, d))
    for _, c, d in jobs[1:]:  # warm the bytecode caches
        subprocess.run(c, cwd=d, env=dict(env, PYTHONPATH=d), stdout=subprocess.DEVNULL, check=True)
    times: dict[str, list[float]] = {name: [] for name, _, _ in jobs}
    for _ in range(args.runs):
        for name, c, d in jobs:
            e = env if d is None else dict(env, PYTHONPATH=d)
            t0 = time.perf_counter()
            subprocess.run(c, cwd=d, env=e, stdout=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - t0)
    for name, v in times.items():
        v.sort()
        print(f"{name}: median {statistics.median(v):.3f} s ({v[0]:.3f}-{v[-1]:.3f}, {len(v)} runs)")
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
