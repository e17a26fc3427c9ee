"""Pyodide (under Node) against CPython: wall time of each preset's full run, median of runs.

    .venv/bin/python scripts/bench_pyodide.py [PRESET ...] [--runs N]

Prints a Markdown table (CPython ms, Pyodide ms, ratio) for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sitebuild  # noqa: E402
from sims.core import api, presets  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("presets", nargs="*")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    names = args.presets or presets.preset_names()
    jobs = [{"preset": n} for n in names for _ in range(args.runs)]
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "sims.zip"
        sitebuild.pack_python(archive)
        jobs_file = Path(tmp) / "jobs.json"
        jobs_file.write_text(json.dumps(jobs))
        out = subprocess.run(
            ["node", str(ROOT / "tests/node/pyodide_run.mjs"), str(archive), str(jobs_file)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
    report = json.loads(out.stdout)
    py_ms: dict[str, list[float]] = {}
    for job, res in zip(jobs, report["results"], strict=True):
        py_ms.setdefault(job["preset"], []).append(res["wall_ms"])
    print(
        f"Pyodide {report['python'].split()[0]} under Node (load {report['load_ms']:.0f} ms) vs CPython "
        f"{sys.version.split()[0]}, median of {args.runs}"
    )
    print("| preset | CPython ms | Pyodide ms | ratio |\n|---|---:|---:|---:|")
    ratios = []
    for n in names:
        walls = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            api.run(n)
            walls.append((time.perf_counter() - t0) * 1000)
        c, p = statistics.median(walls), statistics.median(py_ms[n])
        ratios.append(p / c)
        print(f"| {n} | {c:.0f} | {p:.0f} | {p / c:.2f} |")
    print(f"\nmedian ratio {statistics.median(ratios):.2f}, max {max(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
