"""Time a big trace dropped on a preset page until the page plays it (docs/benchmarks.md, "Big traces").

    .venv/bin/python tests/browser/bench_drop.py --dist DIST --trace F [--preset cache-scan] [--runs 3]

Builds nothing (run ``contention build`` first). Each run opens the preset page in a fresh browser
context, waits until Python is live, chooses the file in the trace box (the worker gets it in
slices, as a drop sends it) and reports the seconds from the choice until the trace box says
"loaded" and the simulation is ready with the trace as its stream; medians of the runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from conftest import CHROMIUM, LAUNCH_ARGS  # noqa: E402
from serve import StaticServer  # noqa: E402


def one(browser, url: str, trace: Path) -> dict:
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function(
        "() => ['ready', 'running', 'paused'].includes(document.querySelector('contention-sim')?.dataset.state)",
        timeout=180_000,
    )
    page.wait_for_selector("[data-trace-drop]:not([hidden])", timeout=60_000)
    t0 = time.perf_counter()
    page.set_input_files("[data-trace-drop] input[type=file]", str(trace))
    page.wait_for_function(
        "() => ['loaded', 'error'].includes(document.querySelector('[data-trace-drop]').dataset.state)"
        " && ['ready', 'running', 'paused', 'error'].includes(document.querySelector('contention-sim').dataset.state)",
        timeout=600_000,
        polling=100,
    )
    live = time.perf_counter() - t0
    state = page.get_attribute("[data-trace-drop]", "data-state")
    text = page.inner_text("[data-trace-drop]")[:200]
    ctx.close()
    return {"live_s": round(live, 2), "state": state, "says": " ".join(text.split())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", type=Path, required=True)
    ap.add_argument("--trace", type=Path, required=True)
    ap.add_argument("--preset", default="cache-scan")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with StaticServer(a.dist) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        runs = [one(browser, f"{url}play/{a.preset}/", a.trace) for _ in range(a.runs)]
        browser.close()
    out = {"trace": str(a.trace), "bytes": a.trace.stat().st_size, "preset": a.preset, "runs": runs}
    out["median_live_s"] = statistics.median(r["live_s"] for r in runs)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
