"""A bounded load test for a running ``contention serve``: N concurrent POST /api/run requests,
fired at once and each answered once (finite; it stops by itself), while a separate process
times GET /api/health every 10 ms. Prints the figures as JSON.

    python tests/server/loadgen.py http://127.0.0.1:8000 --requests 200 --preset ratelimit-burst
    python tests/server/loadgen.py http://127.0.0.1:8000 --downloads 2 --preset cache-scan \
        --duration 1999 --pid SERVER_PID        # concurrent trace downloads; peak RSS by /proc
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

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


def _rss_kb(pid: int) -> int:
    """Resident set size of ``pid`` and its children (the workers), in KB, from /proc."""
    total = 0
    children = Path(f"/proc/{pid}/task/{pid}/children")
    pids = [pid, *(int(c) for c in children.read_text().split())] if children.exists() else [pid]
    for p in pids:
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return total


def _own_rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))


def run_downloads(url: str, n: int, preset: str, duration: float | None, pid: int | None = None) -> dict:
    """``n`` concurrent trace downloads read as fast as they come, while the prober times
    /api/health; with ``pid``, the peak RSS of the server alone and with its workers."""
    params = {"duration": duration} if duration else {}
    probe = subprocess.Popen(
        [sys.executable, "-c", PROBE, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    peaks = {"server_kb": 0, "with_workers_kb": 0}
    stop = threading.Event()

    def sample() -> None:
        while pid and not stop.wait(0.05):
            peaks["server_kb"] = max(peaks["server_kb"], _own_rss_kb(pid))
            peaks["with_workers_kb"] = max(peaks["with_workers_kb"], _rss_kb(pid))

    async def fire() -> list[tuple[int, int]]:
        async with httpx.AsyncClient(base_url=url, timeout=600) as client:

            async def one() -> tuple[int, int]:
                size = 0
                async with client.stream("GET", f"/api/trace/{preset}", params=params) as r:
                    async for chunk in r.aiter_bytes():
                        size += len(chunk)
                return r.status_code, size

            return await asyncio.gather(*(one() for _ in range(n)))

    sampler = threading.Thread(target=sample, daemon=True)
    try:
        assert probe.stdout.readline().strip() == "ready"
        before = {"server_kb": _own_rss_kb(pid), "with_workers_kb": _rss_kb(pid)} if pid else {}
        sampler.start()
        time.sleep(0.2)
        t0 = time.perf_counter()
        results = asyncio.run(fire())
        wall = time.perf_counter() - t0
        stop.set()
        probe.stdin.close()
        health = json.loads(probe.stdout.readline())
    finally:
        stop.set()
        if probe.poll() is None:
            probe.kill()
        probe.wait(timeout=30)
    samples = health["samples"]
    return {
        "downloads": n,
        "preset": preset,
        "duration": duration,
        "statuses": [s for s, _ in results],
        "bytes": [b for _, b in results],
        "wall_s": round(wall, 2),
        "rss_before": before,
        "rss_peak": peaks if pid else {},
        "health_samples": len(samples),
        "health_errors": health["errors"],
        "health_ms": {
            "p50": round(percentile(samples, 50), 2),
            "p99": round(percentile(samples, 99), 2),
            "max": round(max(samples), 2),
        }
        if samples
        else {},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--preset", default="ratelimit-burst")
    ap.add_argument("--duration", type=float)
    ap.add_argument("--downloads", type=int, help="concurrent trace downloads instead of runs")
    ap.add_argument("--pid", type=int, help="the server's pid, to report its peak RSS (downloads)")
    args = ap.parse_args()
    if args.downloads:
        print(json.dumps(run_downloads(args.url, args.downloads, args.preset, args.duration, args.pid), indent=2))
        return
    body = {"preset": args.preset} | ({"duration": args.duration} if args.duration else {})
    report = run_load(args.url, args.requests, body)
    report.pop("results")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
