"""The measured-against-simulated tables of docs/real-systems.md.

    python scripts/real_tables.py [--runs 3] [--speed 4]

Each cache preset is replayed against a fresh redis-server ``--runs`` times (Redis draws its
samples with its own rand(), so runs differ); each rate-limit preset once against nginx at speed 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from realsys import replay  # noqa: E402
from sims.core import presets  # noqa: E402


def cache_table(name: str, runs: int, speed: float) -> str:
    results = [replay.run(presets.load(name), "redis", speed=speed) for _ in range(runs)]
    first = results[0]
    lines = [
        f"### {name} (speed {speed:g}, {runs} runs; Redis {first['server']['version']}, "
        f"{first['server']['bytes_per_key']} B a key)",
        "",
        "| setting | simulated (preset panel) | simulated on each run's send times (mean) | measured (mean, min–max) "
        "| sim on send times − measured | resident keys |",
        "|---|---|---|---|---|---|",
    ]
    late = 0.0
    for label in [k for k in first["panels"] if k.endswith("(measured)")]:
        sim = first["panels"][label.replace("(measured)", "(sim)")]["hit_ratio"]
        got = [r["panels"][label]["hit_ratio"] for r in results]
        on_sent = statistics.fmean(r["panels"][label]["sim_on_sent_times"] for r in results)
        late = max([late] + [r["panels"][label]["late_p99_ms"] for r in results])
        res = sorted(
            {r["panels"][label]["resident_min"] for r in results}
            | {r["panels"][label]["resident_max"] for r in results}
        )
        mean = statistics.fmean(got)
        lines.append(
            f"| {label.replace(' (measured)', '')} | {sim:.4f} | {on_sent:.4f} | {mean:.4f} "
            f"({min(got):.4f}–{max(got):.4f}) | {(on_sent - mean) * 100:+.2f} pp | {res[0]}–{res[-1]} |"
        )
    textbook = ", ".join(f"{k} {v['hit_ratio']:.4f}" for k, v in first["panels"].items() if "redis" not in k)
    lines += ["", f"Textbook panels on the same stream: {textbook}. Pacing: p99 lateness at most {late:.0f} ms.", ""]
    return "\n".join(lines)


def nginx_table(name: str) -> str:
    r = replay.run(presets.load(name), "nginx", speed=1.0)
    lines = [
        f"### {name} against nginx (rate {r['server']['rate']:g} r/s, burst {r['server']['burst']:g}, speed 1)",
        "",
        "| configuration | requests | agree (stream times) | agree (sent times) | accepted (nginx / sim) | pacing error p50 / max | nginx wait p50 / max |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, m in r["panels"].items():
        if not label.endswith("(measured)"):
            continue
        sim = r["panels"][label.replace("(measured)", "(sim)")]
        lines.append(
            f"| {label.replace(' (measured)', '')} | {m['requests']} | {m['agreement']:.2%} | "
            f"{m['agreement_on_sent_times']:.2%} | {m['accepted']} / {sim['accepted']} | "
            f"{m['late_p50_ms']:.2f} / {m['late_max_ms']:.2f} ms | {m['wait_p50_ms']:.0f} / {m['wait_max_ms']:.0f} ms |"
        )
    for label, rows in r["disagreements"].items():
        for d in rows[:10]:
            lines.append(
                f"- {label}: request {d['index']} at t={d['t']:.4f} s (sent at {d['sent']:.4f} s): "
                f"sim {'admit' if d['sim'] else 'reject'}, nginx {'admit' if d['nginx'] else 'reject'}, "
                f"sim on the sent time {'admit' if d['sim_on_sent'] else 'reject'}"
            )
    return "\n".join(lines + [""])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--speed", type=float, default=4.0)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    for name in ("cache-zipf", "cache-scan", "cache-loop", "cache-shift"):
        if not args.only or args.only == name:
            print(cache_table(name, args.runs, args.speed), flush=True)
    for name in ("ratelimit-burst", "ratelimit-nginx"):
        if not args.only or args.only == name:
            print(nginx_table(name), flush=True)


if __name__ == "__main__":
    main()
