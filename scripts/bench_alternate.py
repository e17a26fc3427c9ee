"""Median wall time of one ``contention run`` in several checkouts, each run in turn, so every
checkout sees the same minutes of a shared, noisy machine (docs/benchmarks.md).

    python scripts/bench_alternate.py --runs 11 /path/to/old-checkout .
    python scripts/bench_alternate.py --runs 3 . --peer "vidur=VID=/tmp/vid bash vidur_run.sh /tmp/vid/out"

A "peer loop" (10^7 ``x += i`` in a function) runs in the same rotation: it says how fast the
machine itself is at the time; ``--peer NAME=COMMAND`` adds another program to the rotation (a
shell command, such as a peer simulator), and each checkout's median is given as a ratio to it.
Each run's CPU seconds (user + system, of the process and its children) are reported beside its
wall time: on a loaded machine a run waits for a core, and the CPU time moves less than the wall.
Bytecode caches are warmed first and ``PYTHONDONTWRITEBYTECODE`` is dropped, so no run compiles.
"""

from __future__ import annotations

import argparse
import os
import resource
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
    ap.add_argument("--peer", action="append", default=[], metavar="NAME=COMMAND", help="a shell command to time too")
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
    checkouts = [name for name, _, _ in jobs[1:]]
    for _, c, d in jobs[1:]:  # warm the bytecode caches
        subprocess.run(c, cwd=d, env=dict(env, PYTHONPATH=d), stdout=subprocess.DEVNULL, check=True)
    for peer in args.peer:
        name, sep, shell = peer.partition("=")
        if not sep or not shell:
            ap.error(f"--peer {peer!r}: expected NAME=COMMAND")
        jobs.append((name, ["bash", "-c", shell], None))
    times: dict[str, list[float]] = {name: [] for name, _, _ in jobs}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in jobs}
    for _ in range(args.runs):
        for name, c, d in jobs:
            e = env if d is None else dict(env, PYTHONPATH=d)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(c, cwd=d, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    for name, v in times.items():
        c = cpus[name]
        print(
            f"{name}: wall median {statistics.median(v):.3f} s ({' '.join(f'{x:.3f}' for x in v)}), "
            f"CPU median {statistics.median(c):.3f} s ({' '.join(f'{x:.3f}' for x in c)})"
        )
    for peer in args.peer:
        p = peer.partition("=")[0]
        for name in checkouts:
            for what, t in (("wall", times), ("CPU", cpus)):
                ratio = statistics.median(t[p]) / statistics.median(t[name])
                rounds = [a / b for a, b in zip(t[p], t[name], strict=True)]
                print(f"{p} / {name}, {what}: {ratio:.1f}x (medians; per round {' '.join(f'{r:.1f}' for r in rounds)})")
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
