"""Big traces: read and replay time, and peak memory, of this checkout against another one.

    python scripts/bench_traces.py --before /path/to/other/checkout --runs 3

Writes its inputs once into --data (default /tmp/contention-traces): canonical ``ref`` events of
cache-scan's workload (seed 7), and Azure and Mooncake rows (seeded). Each case runs in a child
process, the two checkouts alternating, and reports the child's own CPU seconds (user + system),
wall seconds and peak RSS; the table gives medians. CPU seconds are what to compare on a shared
machine: wall time waits for the other processes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from itertools import islice
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
code = sys.argv[1]
if code == "run":
    from sims.cli import main
    rc = main(sys.argv[2:])
else:
    from sims.core import presets, traceformats
    rc = 0
    try:
        events, _ = traceformats.load(sys.argv[2], sys.argv[3], presets.load(sys.argv[4]))
        print(len(events), file=sys.stderr)
    except Exception as exc:
        rc = f"{type(exc).__name__}: {exc}"
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"rc": rc, "cpu": use.ru_utime + use.ru_stime, "wall": time.perf_counter() - t0,
                  "mb": use.ru_maxrss / 1024}), file=sys.stderr)
"""


def make_inputs(data: Path) -> dict[str, Path]:
    """The traces, written once: 5M and 2.6M canonical refs, 500k Azure and Mooncake rows."""
    data.mkdir(parents=True, exist_ok=True)
    out = {"ref5m": data / "ref5m.jsonl", "ref2600k": data / "ref2600k.jsonl"}
    if not out["ref5m"].exists():
        sys.path.insert(0, str(ROOT))
        from sims.core import presets, stream

        p = presets.load("cache-scan")
        with open(out["ref5m"], "w") as f5, open(out["ref2600k"], "w") as f26:
            for i, ev in enumerate(islice(stream.generate(p.workload_kind, p.workload, 7, 1e9), 5_000_000)):
                line = stream.canonical_line(ev) + "\n"
                f5.write(line)
                if i < 2_600_000:
                    f26.write(line)
    out["azure"], out["mooncake"] = data / "azure500k.csv", data / "mooncake500k.jsonl"
    if not out["mooncake"].exists():
        r = random.Random(1)
        with open(out["azure"], "w") as f:
            f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
            ns = 0
            for _ in range(500_000):
                ns += r.randrange(1, 150_000_000)
                s, frac = divmod(ns, 10**9)
                h, rem = divmod(s, 3600)
                m, sec = divmod(rem, 60)
                day, h = 16 + h // 24, h % 24
                f.write(f"2023-11-{day:02d} {h:02d}:{m:02d}:{sec:02d}.{frac // 100:07d},")
                f.write(f"{r.randrange(1, 8000)},{r.randrange(1, 800)}\n")
        with open(out["mooncake"], "w") as f:
            ts = 0
            for _ in range(500_000):
                ts += r.randrange(0, 150)
                n = r.randrange(1, 16000)
                base = r.randrange(0, 5000)
                ids = list(range(base, base + r.randrange(0, -(-n // 512) + 1)))
                row = {"timestamp": ts, "input_length": n, "output_length": r.randrange(1, 800), "hash_ids": ids}
                f.write(json.dumps(row) + "\n")
    return out


def cases(inputs: dict[str, Path]) -> dict[str, list[str]]:
    run = ["run", "cache-scan", "--panels", "lru", "--duration", "5000", "--json", "--trace-in"]
    return {
        "canonical 2.6M refs, read + replay (lru)": [*run, str(inputs["ref2600k"])],
        "canonical 5M refs": [*run, str(inputs["ref5m"])],
        "azure 500k rows, read": ["load", str(inputs["azure"]), "azure", "routing-light"],
        "mooncake 500k rows, read": ["load", str(inputs["mooncake"]), "mooncake", "routing-light"],
    }


def child(root: Path, args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root))
    code = "run" if args[0] == "run" else "load"
    argv = args[1:] if code == "load" else args
    out = subprocess.run(
        [sys.executable, "-c", CHILD, code, *argv], capture_output=True, text=True, env=env, cwd="/", timeout=3600
    )
    return json.loads(out.stderr.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="another checkout to alternate with (e.g. main before the change)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path("/tmp/contention-traces"))
    ap.add_argument("--only", help="run only the cases whose name contains this")
    a = ap.parse_args()
    roots = {"after": ROOT} | ({"before": a.before} if a.before else {})
    rows = []
    for name, args in cases(make_inputs(a.data)).items():
        if a.only and a.only not in name:
            continue
        got: dict[str, list[dict]] = {k: [] for k in roots}
        for _ in range(a.runs):
            for label, root in roots.items():  # alternating: both see the same machine
                got[label].append(child(root, args))
        for label, runs in got.items():
            rc = runs[-1]["rc"]
            rows.append(
                f"| {name} | {label} | {'ok' if rc == 0 else 'refused' if rc == 2 else rc} | "
                f"{statistics.median(r['cpu'] for r in runs):.1f} | {statistics.median(r['wall'] for r in runs):.1f} | "
                f"{statistics.median(r['mb'] for r in runs):,.0f} |"
            )
            print(rows[-1], flush=True)
    print("\n| case | code | outcome | CPU s | wall s | peak MB |\n|---|---|---|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
