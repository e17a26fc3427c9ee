"""Browser fixtures: the site (built once: ``site`` in tests/conftest.py), one 127.0.0.1 server and one chromium for the whole session.

Every context refuses requests to any host but 127.0.0.1 (and data:/blob: URLs) and records them,
so a test can assert that the site never reached outside.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ARTIFACTS = ROOT / "test-artifacts"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from serve import StaticServer  # noqa: E402

CHROMIUM = os.environ.get("CONTENTION_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
LIVE_TIMEOUT_MS = 60_000


@pytest.fixture(scope="session")
def server(site):
    with StaticServer(site) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    # Module scope: sync Playwright keeps an asyncio loop running in this thread while it lives,
    # which would break asyncio.run() and other Playwright users in later test modules.
    if not Path(CHROMIUM).exists():
        pytest.fail(f"chromium not found at {CHROMIUM} (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


class Guard:
    """Routes every request: 127.0.0.1 passes, anything else is aborted and recorded."""

    def __init__(self) -> None:
        self.outside: list[str] = []
        self.requests: list[str] = []

    def __call__(self, route) -> None:
        url = route.request.url
        self.requests.append(url)
        scheme = urlparse(url).scheme
        if scheme in ("data", "blob") or urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()


@pytest.fixture
def context(browser):
    guard = Guard()
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.route("**/*", guard)
    ctx.guard = guard
    yield ctx
    ctx.close()
    assert not guard.outside, f"requests left 127.0.0.1: {guard.outside[:5]}"


@pytest.fixture
def page(context):
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    return pg


def wait_live(page, timeout: int = LIVE_TIMEOUT_MS) -> None:
    """Wait until the element's worker is live (or failed)."""
    page.wait_for_function(
        "() => { const e = document.querySelector('contention-sim');"
        " return e && ['ready', 'running', 'paused', 'error'].includes(e.dataset.state); }",
        timeout=timeout,
    )


def sim_eval(page, js: str, arg=None):
    """Evaluate ``js`` (an async function body taking ``sim`` and ``arg``) on the page's element."""
    return page.evaluate(f"async ([arg]) => {{ const sim = document.querySelector('contention-sim'); {js} }}", [arg])


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
