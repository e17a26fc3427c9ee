"""The front end's server actions (web/static/js/api-client.js) in Chromium: offered when the page
comes from `contention serve` (the run's table equals `run --json`), absent on a static host, and
the GPU button shows measured beside simulated when /api/gpu says a GPU is there."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest

from sims.core import api

from .harness import ROOT

pytestmark = pytest.mark.browser
CHROMIUM = Path("/usr/bin/chromium")
PRESET = "ratelimit-burst"
PAGE = f"""<!doctype html><meta charset="utf-8"><title>play</title>
<contention-sim preset="{PRESET}" seed="11"></contention-sim>
<div class="server-actions" data-preset="{PRESET}"></div>
<script type="module" src="../../static/js/api-client.js"></script>
"""
REPLAY = {
    "preset": PRESET,
    "seed": 11,
    "device": "NVIDIA H200",
    "sim": {"metrics": {"completed": 40}, "step_s_total": 1.5, "tok_s": 900.0},
    "gpu": {"steps": 120, "measured_s": 1.25, "sim_s": 1.5, "measured_tok_s": 1000.0, "sim_tok_s": 900.0},
}


@pytest.fixture(scope="module")
def site(main_server) -> Path:
    dist = main_server.dist
    (dist / "play" / PRESET).mkdir(parents=True, exist_ok=True)
    (dist / "play" / PRESET / "index.html").write_text(PAGE)
    (dist / "static" / "js").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "web" / "static" / "js" / "api-client.js", dist / "static" / "js" / "api-client.js")
    return dist


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"chromium not found at {CHROMIUM} (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context()
    pg = ctx.new_page()
    pg.problems = []
    pg.on("pageerror", lambda e: pg.problems.append(str(e)))
    pg.on("console", lambda m: pg.problems.append(m.text) if "Content Security Policy" in m.text else None)
    yield pg
    ctx.close()


def cells(page) -> dict[str, list[str]]:
    rows = page.eval_on_selector_all(
        ".server-actions tbody tr", "rs => rs.map(r => [...r.children].map(c => c.textContent))"
    )
    return {r[0]: r[1:] for r in rows}


def test_run_on_the_server_shows_the_run_json_numbers(site, main_server, page):
    page.goto(f"{main_server.url}/play/{PRESET}/")
    page.click(".server-actions button:text('Run at full length on the server')", timeout=15000)
    page.wait_for_selector(".server-actions table", timeout=60000)
    expected = api.run(PRESET, seed=11)
    got = cells(page)
    for panel_i, name in enumerate(expected["panels"]):
        assert got["requests"][panel_i] == str(expected["panels"][name]["requests"])
        assert got["max_in_any_window"][panel_i] == str(expected["panels"][name]["max_in_any_window"])
    assert "seed 11" in page.inner_text(".server-actions")
    assert page.locator(".server-actions button").count() == 1  # no GPU here: no GPU button
    assert page.problems == []


def test_nothing_visible_on_a_static_host(site, page):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/play/{PRESET}/")
        page.wait_for_load_state("networkidle")
        assert page.inner_html(".server-actions") == ""
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_gpu_button_shows_measured_beside_simulated(site, main_server, page):
    # the server here has no GPU: answer the GPU endpoints as a GPU server would
    page.route("**/api/gpu", lambda r: r.fulfill(json={"available": True, "device": "NVIDIA H200", "reason": "ok"}))
    page.route(f"**/api/presets/{PRESET}", lambda r: r.fulfill(json={"name": PRESET, "topic": "engine"}))
    seen = []

    def replay(route):
        seen.append(json.loads(route.request.post_data))
        route.fulfill(json=REPLAY)

    page.route("**/api/gpu/replay", replay)
    page.goto(f"{main_server.url}/play/{PRESET}/")
    page.click(".server-actions button:text('Measure on GPU')", timeout=15000)
    page.wait_for_selector(".server-actions table", timeout=30000)
    assert seen == [{"preset": PRESET, "seed": 11}]
    got = cells(page)
    assert got["step time, total (s)"] == ["1.5", "1.25"] and got["tokens/s"] == ["900", "1000"]  # simulated, measured
    assert got["steps"] == ["", "120"] and got["completed"] == ["40", ""]
    assert "Measured on NVIDIA H200" in page.inner_text(".server-actions")


@pytest.mark.slow
def test_the_real_site_runs_under_the_servers_csp(tmp_path_factory, browser):
    """The built site, served by `contention serve`: Pyodide starts in its module worker under the
    CSP (wasm, blob: worker, inline scripts by hash) and the page logs no CSP violation. It builds
    its own site: served from the session's shared build, the page never left its loading state
    in a parallel run (not understood yet; the same dist served by hand starts in 10 s)."""
    import sitebuild

    from .harness import start_server, stop_server

    if not (ROOT / "node_modules" / "pyodide" / "pyodide.mjs").exists():
        pytest.fail("Pyodide is not installed: run `npm ci` (make test does)")
    base = tmp_path_factory.mktemp("real")
    dist = sitebuild.build(base / "site")
    server = start_server(base, {"CONTENTION_WORKERS": "1"}, dist=dist)
    ctx = browser.new_context()
    pg = ctx.new_page()
    problems = []
    pg.on("pageerror", lambda e: problems.append(str(e)))
    pg.on("console", lambda m: problems.append(m.text) if m.type == "error" or "Content Security" in m.text else None)
    try:
        pg.goto(f"{server.url}/play/{PRESET}/#seed=11")
        pg.wait_for_function(
            "() => ['ready', 'running', 'paused', 'error'].includes(document.querySelector('contention-sim')?.dataset.state)",
            timeout=300_000,  # Pyodide's start: 120 s was not enough beside another xdist worker
        )
        assert pg.evaluate("document.querySelector('contention-sim').dataset.state") != "error", problems
        pg.click(".server-actions button:text('Run at full length on the server')", timeout=15000)
        pg.wait_for_selector(".server-actions table", timeout=60000)
        assert "seed 11" in pg.inner_text(".server-actions")
        assert problems == []
    finally:
        ctx.close()
        stop_server(server)
