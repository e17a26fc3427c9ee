"""Write the small sample traces of docs/samples/, one per format `run --trace-format` and the
preset pages' trace drop read (docs/traces.md). Deterministic: the same files on every run.

    python scripts/trace_samples.py [--out docs/samples] [--check]

--check compares instead of writing (exit 1 if a file differs): the test suite runs it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = 512  # Mooncake: tokens per hash id


# Draws from +, *, / and random() only (no log or exp, whose last bits differ between C
# libraries), so the files are the same on every machine.
def gap(rng: random.Random, rate: float) -> float:
    """An inter-arrival gap of mean 1/rate, spread over [0, 2/rate)."""
    return rng.random() * 2.0 / rate


def skewed(rng: random.Random, lo: int, hi: int) -> int:
    """A length in [lo, hi], most of them short (a cube of a uniform draw)."""
    u = rng.random()
    return lo + int((hi - lo) * u * u * u)


def azure(rng: random.Random, rows: int = 300) -> str:
    """A code-assistant-like hour cut to ~100 s: long prompts, short answers, bursty arrivals.
    Timestamps as the 2023 trace writes them (7 fractional digits, 100 ns ticks)."""
    out = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    ticks = (18 * 3600 + 15 * 60 + 46) * 10_000_000 + 6_805_900  # 2023-11-16 18:15:46.6805900
    for i in range(rows):
        rate = 6.0 if (i // 50) % 2 else 2.0  # bursts of 50 requests
        ticks += int(gap(rng, rate) * 10_000_000)
        sec, frac = divmod(ticks, 10_000_000)
        h, rest = divmod(sec, 3600)
        m, s = divmod(rest, 60)
        ctx = skewed(rng, 64, 7900)
        gen = skewed(rng, 1, 400)
        out.append(f"2023-11-16 {h:02d}:{m:02d}:{s:02d}.{frac:07d},{ctx},{gen}")
    return "\n".join(out) + "\n"


def mooncake(rng: random.Random, rows: int = 300) -> str:
    """Chat sessions over a few shared system prompts: a session's next turn repeats its previous
    prompt's hash ids (the conversation so far) and adds new ones, as Mooncake's conversation
    trace does; new ids are consecutive integers."""
    next_id = 0

    def fresh(k: int) -> list[int]:
        nonlocal next_id
        ids = list(range(next_id, next_id + k))
        next_id += k
        return ids

    systems = [fresh(rng.randint(2, 6)) for _ in range(4)]
    sessions: list[list[int]] = []
    lines = []
    ms = 0
    for _ in range(rows):
        ms += int(gap(rng, 3.0) * 1000) if lines else 0
        if sessions and rng.random() < 0.6:
            k = rng.randrange(len(sessions))
            ids = sessions[k] + fresh(rng.randint(1, 2))
            if len(ids) > 14:  # the conversation outgrows the context: it ends
                sessions.pop(k)
                ids = rng.choice(systems) + fresh(1)
            else:
                sessions[k] = ids
        else:
            ids = rng.choice(systems) + fresh(rng.randint(1, 2))
            sessions.append(ids)
        tokens = (len(ids) - 1) * BLOCK + rng.randint(1, BLOCK)
        row = {"timestamp": ms, "input_length": tokens, "output_length": rng.randint(20, 400), "hash_ids": ids}
        lines.append(json.dumps(row))
    return "\n".join(lines) + "\n"


def pages(rng: random.Random, refs: int = 300) -> str:
    """Page references: a working set that moves, with a loop over 6 pages now and then."""
    out = ["# page references: a drifting working set of 5 pages, and a loop over 6"]
    row: list[str] = []
    base = 0
    for i in range(refs):
        if i % 60 == 0:
            base += 3
        page = base + i % 6 if (i // 30) % 3 == 2 else base + rng.randrange(5)
        row.append(str(page))
        if len(row) == 20:
            out.append(" ".join(row))
            row = []
    if row:
        out.append(" ".join(row))
    return "\n".join(out) + "\n"


def keys(rng: random.Random, refs: int = 400) -> str:
    """Cache keys: a hot set of 30 users (zipf-like) and, every 100 requests, a scan of 60 items."""
    out = ["# cache keys: a hot set, then scans larger than most caches"]
    weights = [1.0 / (k + 1) for k in range(30)]
    n = 0
    scan = 0
    while n < refs:
        if n % 100 == 99:
            for j in range(60):
                out.append(f"item:{scan * 60 + j}")
            scan += 1
            n += 60
            continue
        out.append(f"user:{rng.choices(range(30), weights)[0]}")
        n += 1
    return "\n".join(out) + "\n"


def arrivals(rng: random.Random, count: int = 300) -> str:
    """Arrival times (seconds): a steady 4/s with two bursts of 40 requests within 0.2 s."""
    out = ["# arrival times in seconds, non-decreasing"]
    t = 0.0
    for i in range(count):
        if 100 <= i < 140 or 200 <= i < 240:
            t += rng.uniform(0.0, 0.005)
        else:
            t += gap(rng, 4.0)
        out.append(f"{t:.4f}")
    return "\n".join(out) + "\n"


SAMPLES = {
    "azure-code.csv": azure,
    "mooncake-chat.jsonl": mooncake,
    "pages.txt": pages,
    "keys.txt": keys,
    "arrivals.txt": arrivals,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "samples")
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    args = ap.parse_args(argv)
    bad = 0
    for k, (name, make) in enumerate(SAMPLES.items()):
        text = make(random.Random(20 + k))
        path = args.out / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"{path}: differs from what scripts/trace_samples.py writes", file=sys.stderr)
                bad = 1
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return bad


if __name__ == "__main__":
    sys.exit(main())
