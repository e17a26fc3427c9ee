"""Measure the site in headless chromium (docs/benchmarks.md, "## Browser").

    .venv/bin/python tests/browser/bench_site.py [--runs 3] [--dist dist]
    .venv/bin/python tests/browser/bench_site.py --runs 7 --dist dist --against dist-nosnap

Builds nothing: run ``contention build`` (or ``make build``) first. Prints one JSON object:
first frame and Pyodide-live times after navigation (cold: a fresh browser context each run, so no
HTTP or code cache; then a second visit in that context) and how Python started, main-thread frame intervals and render time plus the worker's ``advance``
time with four panels at 10x, and the bytes a preset page transfers (raw and gzip -6).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from conftest import CHROMIUM, LAUNCH_ARGS  # noqa: E402
from serve import StaticServer  # noqa: E402

FOUR = {
    "ratelimit-burst": "fixed_window,sliding_log,sliding_counter,token_bucket",
    "cache-scan": "lru,arc,lirs,opt",
}


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.95 * len(xs)))] if xs else float("nan")


def _live(page, url: str) -> tuple[float, float, str | None]:
    """Navigate and wait until Python is live: (first frame s, live s, how Python started)."""
    page.goto(url)
    page.wait_for_function("() => document.querySelector('contention-sim').liveAt", timeout=120_000)
    f, lv, start = page.evaluate(
        "() => { const e = document.querySelector('contention-sim');"
        " return [e.firstFrameAt, e.liveAt, e.worker?.info?.start || null]; }"
    )
    return f / 1000, lv / 1000, start


def load_times(browser, url: str, runs: int) -> dict:
    """Cold (a fresh context each run), then a second visit in the same context (HTTP and code cache)."""
    first, live, again, starts = [], [], [], set()
    for _ in range(runs):
        ctx = browser.new_context()
        page = ctx.new_page()
        f, lv, start = _live(page, url)
        first.append(f)
        live.append(lv)
        again.append(_live(page, url)[1])
        starts.add(start)
        ctx.close()
    return {
        "first_frame_s": statistics.median(first),
        "pyodide_live_s": statistics.median(live),
        "second_visit_live_s": statistics.median(again),
        "start": sorted(map(str, starts)),  # "snapshot" | "fresh" (worker.js)
        "first_frame_all": first,
        "pyodide_live_all": live,
        "second_visit_live_all": again,
    }


def run_at_10x(browser, url: str, seconds: float = 6.0) -> dict:
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function(
        "() => document.querySelector('contention-sim').dataset.state === 'running'", timeout=120_000
    )
    page.evaluate(
        "() => { const e = document.querySelector('contention-sim'); e.seek(0); e.setSpeed(10); e.play();"
        " e.renderTimes.length = 0; e.worker.timings.advance = []; }"
    )
    intervals = page.evaluate(
        """(ms) => new Promise((resolve) => {
            const out = []; let last = performance.now(); const end = last + ms;
            const tick = (now) => { out.push(now - last); last = now;
              if (now < end) requestAnimationFrame(tick); else resolve(out); };
            requestAnimationFrame(tick); })""",
        seconds * 1000,
    )
    stats = page.evaluate(
        "() => { const e = document.querySelector('contention-sim');"
        " return {render: e.renderTimes, advance: e.worker.timings.advance || [], t: e.t}; }"
    )
    ctx.close()
    return {
        "frame_interval_p95_ms": p95(intervals[1:]),
        "frames": len(intervals),
        "render_p95_ms": p95(stats["render"]),
        "advance_p95_ms": p95(stats["advance"]),
        "advance_median_ms": statistics.median(stats["advance"]) if stats["advance"] else None,
        "advances": len(stats["advance"]),
        "virtual_t_reached": stats["t"],
    }


def idle_frame_interval(browser, url: str, seconds: float = 3.0) -> float:
    """p95 of requestAnimationFrame intervals on a page with no simulation: the baseline."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()
    page.goto(url)
    intervals = page.evaluate(
        """(ms) => new Promise((resolve) => {
            const out = []; let last = performance.now(); const end = last + ms;
            const tick = (now) => { out.push(now - last); last = now;
              if (now < end) requestAnimationFrame(tick); else resolve(out); };
            requestAnimationFrame(tick); })""",
        seconds * 1000,
    )
    ctx.close()
    return p95(intervals[1:])


def transfer(browser, url: str, dist: Path) -> dict:
    ctx = browser.new_context()
    page = ctx.new_page()
    paths: list[str] = []
    page.on("request", lambda r: paths.append(urlparse(r.url).path) if r.url.startswith("http") else None)
    page.goto(url)
    page.wait_for_function("() => document.querySelector('contention-sim').liveAt", timeout=120_000)
    ctx.close()
    raw = gz = 0
    files = {}
    for path in sorted(set(paths)):
        f = dist / path.lstrip("/")
        if f.is_dir():
            f = f / "index.html"
        if not f.exists():
            continue
        data = f.read_bytes()
        raw += len(data)
        gz += len(gzip.compress(data, 6))
        files[path] = len(data)
    return {
        "requests": len(paths),
        "raw_bytes": raw,
        "gzip_bytes": gz,
        "largest": sorted(files.items(), key=lambda x: -x[1])[:6],
    }


def compare(browser, bases: dict[str, str], dists: dict[str, Path], runs: int) -> dict:
    """Live times of two builds, alternating run by run in one sitting (a loaded machine drifts)."""
    got: dict[str, dict[str, list]] = {k: {"cold": [], "second": [], "start": []} for k in bases}
    for _ in range(runs):
        for name, base in bases.items():
            r = load_times(browser, base + "play/ratelimit-burst/", 1)
            got[name]["cold"] += r["pyodide_live_all"]
            got[name]["second"] += r["second_visit_live_all"]
            got[name]["start"] += r["start"]
    out: dict = {}
    for name, g in got.items():
        out[name] = {
            "cold_live_s": statistics.median(g["cold"]),
            "second_visit_live_s": statistics.median(g["second"]),
            "start": sorted(set(g["start"])),
            "cold_all": g["cold"],
            "second_all": g["second"],
            "transfer": transfer(browser, bases[name] + "play/ratelimit-burst/", dists[name]),
        }
    a, b = list(out)
    out["ratio_cold"] = out[a]["cold_live_s"] / out[b]["cold_live_s"]
    out["ratio_second_visit"] = out[a]["second_visit_live_s"] / out[b]["second_visit_live_s"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dist", default="dist")
    ap.add_argument("--against", help="a second build: only the live times of both, alternating, and their ratio")
    args = ap.parse_args()
    dist = Path(args.dist).resolve()
    from playwright.sync_api import sync_playwright

    report: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        if args.against:
            other = Path(args.against).resolve()
            with StaticServer(dist) as a, StaticServer(other) as b:
                report["compare"] = compare(
                    browser, {"dist": a, "against": b}, {"dist": dist, "against": other}, args.runs
                )
        else:
            with StaticServer(dist) as base:
                report["idle_frame_interval_p95_ms"] = idle_frame_interval(browser, base + "index.html")
                report["cold_load"] = load_times(browser, base + "play/ratelimit-burst/", args.runs)
                for name, panels in FOUR.items():
                    report[f"four_panels_10x_{name}"] = run_at_10x(browser, f"{base}play/{name}/#panels={panels}")
                report["transfer_ratelimit_burst"] = transfer(browser, base + "play/ratelimit-burst/", dist)
        browser.close()
    report["measured_at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
