"""Measure the embed in headless chromium (docs/benchmarks.md, "## Embeds").

    .venv/bin/python tests/browser/bench_embed.py [--dist dist] [--seconds 6]

Builds nothing: run ``contention build`` first. Serves ``dist/`` with CORS on one 127.0.0.1 port
and the example post (examples/blog-post.html, its script pointed at the site) on another. Prints
one JSON object: the gzip weight of what an embed loads before Pyodide; cold first poster frame and
first widget live; main-thread requestAnimationFrame intervals with all five widgets on screen and
running (a 4,400 px tall viewport) and in a normal viewport while scrolling the post; the idle
baseline; our render time per frame and the worker's ``advance`` time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from bench_site import p95  # noqa: E402
from conftest import CHROMIUM, LAUNCH_ARGS  # noqa: E402
from test_embed import _serve  # noqa: E402

INTERVALS = """(ms) => new Promise((resolve) => {
  const out = []; let last = performance.now(); const end = last + ms;
  const tick = (now) => { out.push(now - last); last = now;
    if (now < end) requestAnimationFrame(tick); else resolve(out); };
  requestAnimationFrame(tick); })"""
ALL_LIVE = """() => [...document.querySelectorAll('contention-sim')].every((e) => e.mode === 'live'
  && ['running', 'paused', 'ready'].includes(e.dataset.state))"""


def five_on_screen(browser, url: str, seconds: float) -> dict:
    ctx = browser.new_context(viewport={"width": 1280, "height": 4400})
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function("() => document.querySelectorAll('contention-sim')[4]?.meta", timeout=60_000)
    page.locator("contention-sim").nth(4).locator(".cs-panels").click()  # the loading="click" one
    page.wait_for_function(ALL_LIVE, timeout=180_000)
    page.evaluate(
        """() => { for (const e of document.querySelectorAll('contention-sim')) {
            e.seek(0); e.play(); e.renderTimes.length = 0; }
          document.querySelector('contention-sim').worker.get().timings.advance = []; }"""
    )
    time.sleep(0.5)
    intervals = page.evaluate(INTERVALS, seconds * 1000)
    stats = page.evaluate(
        """() => { const els = [...document.querySelectorAll('contention-sim')];
          return {render: els.map((e) => e.renderTimes), states: els.map((e) => e.dataset.state),
                  t: els.map((e) => e.t), advance: els[0].worker.get().timings.advance || [],
                  workers: window.__workers ? window.__workers.length : null}; }"""
    )
    page.evaluate("() => { for (const e of document.querySelectorAll('contention-sim')) e.pause(); }")
    time.sleep(0.3)
    paused = page.evaluate(INTERVALS, 3000)
    ctx.close()
    renders = [x for r in stats["render"] for x in r]
    return {
        "frame_interval_p95_ms": p95(intervals[1:]),
        "frame_interval_median_ms": statistics.median(intervals[1:]),
        "same_viewport_all_paused_p95_ms": p95(paused[1:]),
        "frames": len(intervals),
        "render_p95_ms_per_widget": p95(renders),
        "advance_p95_ms": p95(stats["advance"]),
        "advance_median_ms": statistics.median(stats["advance"]) if stats["advance"] else None,
        "advances": len(stats["advance"]),
        "states": stats["states"],
        "virtual_t": [round(t, 2) for t in stats["t"]],
    }


def cold_load(browser, url: str) -> dict:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function("() => document.querySelector('contention-sim').liveAt", timeout=120_000)
    first, live = page.evaluate(
        "() => { const e = document.querySelector('contention-sim'); return [e.firstFrameAt, e.liveAt]; }"
    )
    page.wait_for_function("() => document.querySelector('contention-sim').dataset.state === 'running'")
    intervals = page.evaluate(INTERVALS, 4000)
    ctx.close()
    return {
        "first_poster_frame_s": first / 1000,
        "first_widget_live_s": live / 1000,
        "reader_view_frame_p95_ms": p95(intervals[1:]),
    }


def idle(browser, url: str) -> float:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.goto(url)
    out = p95(page.evaluate(INTERVALS, 3000)[1:])
    ctx.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", default="dist")
    ap.add_argument("--seconds", type=float, default=6.0)
    args = ap.parse_args()
    dist = Path(args.dist).resolve()
    from playwright.sync_api import sync_playwright

    from sitebuild import embed as embed_build

    sizes = embed_build.gzip_sizes(dist)
    with tempfile.TemporaryDirectory() as blog, _serve(dist, cors=True) as site_url:
        post = (dist / "examples" / "blog-post.html").read_text(encoding="utf-8")
        (Path(blog) / "post.html").write_text(post.replace('src="../embed.js"', f'src="{site_url}embed.js"'))
        (Path(blog) / "idle.html").write_text("<!doctype html><p>idle</p>")
        with _serve(Path(blog), cors=False) as blog_url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            result = {
                "embed_gzip_bytes": {k: sizes[k] for k in ("js_gzip", "css_gzip", "total_gzip", "budget_gzip")},
                "idle_frame_interval_p95_ms": idle(browser, f"{blog_url}idle.html"),
                "cold": cold_load(browser, f"{blog_url}post.html"),
                "five_widgets_on_screen": five_on_screen(browser, f"{blog_url}post.html", args.seconds),
            }
            browser.close()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
