"""Sweep speed-up: one process against a local pool of 2 and a local Ray cluster of 2 CPUs, on the
same grid in the same run (median of --runs). The rows of all three are checked equal.

    python scripts/bench_sweep.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sims.core import presets  # noqa: E402
from sweep import executors, run  # noqa: E402

GRID = {"panels.budget-2048.max_num_batched_tokens": [512, 1024, 2048, 4096]}


def timed(preset, execute) -> tuple[float, list]:
    t0 = time.perf_counter()
    rows = run.run(preset, GRID, 2, None, execute)
    return time.perf_counter() - t0, rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    preset = presets.load("chunked-prefill")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    out = {}
    for label, execute in (  # each warmed up once: Ray starts its workers lazily
        ("1 process", executors.pick(None, 1)),
        ("local pool, 2 workers", executors.pick(None, 2)),
        ("Ray, 2 CPUs (cluster already up)", executors.pick(True, 2)),
    ):
        times, rows = [], None
        timed(preset, execute)
        for _ in range(args.runs):
            dt, got = timed(preset, execute)
            assert rows is None or got == rows
            rows = got
            times.append(dt)
        out[label] = (statistics.median(times), rows)
    ray.shutdown()
    base = out["1 process"][0]
    assert len({str(r) for _, r in out.values()}) == 1, "executors disagree"
    print(f"chunked-prefill, {len(GRID[next(iter(GRID))])} cells x 2 seeds = 8 runs, median of {args.runs}")
    for label, (dt, _) in out.items():
        print(f"  {label:34s} {dt:6.2f} s   speed-up {base / dt:4.2f}x")


if __name__ == "__main__":
    main()
