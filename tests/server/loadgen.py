"""A bounded load test for a running ``contention serve``: N concurrent POST /api/run requests,
fired at once and each answered once (finite; it stops by itself), while a separate process
times GET /api/health every 10 ms. Prints the figures as JSON.

    python tests/server/loadgen.py http://127.0.0.1:8000 --requests 200 --preset ratelimit-burst
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import subprocess
import sys
import time

import httpx

# The prober runs in its own process, so the load generator's event loop never delays a sample.
PROBE = r"""
import http.client, json, select, sys, time
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1])
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
samples, errors, end = [], 0, time.monotonic() + 120
print("ready", flush=True)
while time.monotonic() < end and not select.select([sys.stdin], [], [], 0)[0]:
    t0 = time.perf_counter()
    try:
        conn.request("GET", "/api/health")
        r = conn.getresponse(); r.read()
        samples.append((time.perf_counter() - t0) * 1000) if r.status == 200 else None
        errors += r.status != 200
    except OSError:
        errors += 1
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    time.sleep(0.01)
print(json.dumps({"samples": samples, "errors": errors}), flush=True)
"""


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile (q in [0, 100]) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


async def _fire(url: str, n: int, body: dict) -> list[tuple[int, float, dict]]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def one() -> tuple[int, float, dict]:
            t0 = time.perf_counter()
            r = await client.post("/api/run", json=body)
            return (
                r.status_code,
                (time.perf_counter() - t0) * 1000,
                {"retry_after": r.headers.get("retry-after"), "json": r.json()},
            )

        return await asyncio.gather(*(one() for _ in range(n)))


def run_load(url: str, requests: int = 200, body: dict | None = None) -> dict:
    """Fire ``requests`` concurrent runs; return statuses, latencies and the health figures."""
    body = body or {"preset": "ratelimit-burst"}
    probe = subprocess.Popen(
        [sys.executable, "-c", PROBE, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert probe.stdout.readline().strip() == "ready"
        time.sleep(0.2)  # a few samples before the burst
        t0 = time.perf_counter()
        results = asyncio.run(_fire(url, requests, body))
        wall = time.perf_counter() - t0
        time.sleep(0.1)
        probe.stdin.close()
        health = json.loads(probe.stdout.readline())
    finally:
        if probe.poll() is None:
            probe.kill()
        probe.wait(timeout=30)
    statuses = [s for s, _, _ in results]
    ok_ms = [ms for s, ms, _ in results if s == 200]
    samples = health["samples"]
    return {
        "requests": requests,
        "body": body,
        "wall_s": round(wall, 3),
        "status_counts": {str(s): statuses.count(s) for s in sorted(set(statuses))},
        "run_ms": {"p50": round(percentile(ok_ms, 50), 1), "p99": round(percentile(ok_ms, 99), 1)} if ok_ms else {},
        "retry_after": sorted({r["retry_after"] for s, _, r in results if s == 429}),
        "health_samples": len(samples),
        "health_errors": health["errors"],
        "health_ms": {
            "p50": round(percentile(samples, 50), 2),
            "p99": round(percentile(samples, 99), 2),
            "max": round(max(samples), 2),
        }
        if samples
        else {},
        "results": results,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--preset", default="ratelimit-burst")
    ap.add_argument("--duration", type=float)
    args = ap.parse_args()
    body = {"preset": args.preset} | ({"duration": args.duration} if args.duration else {})
    report = run_load(args.url, args.requests, body)
    report.pop("results")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
