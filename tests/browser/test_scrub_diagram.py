"""The space-time diagram on a replication and an election page (web/static/js/diagram.js): drawn
as an image once asked, then following the page's clock: seeking draws it again up to the new
time, "now" marked there, its arrows the messages CPython's run sent by then."""

from __future__ import annotations

import time

import pytest
from conftest import sim_eval, wait_live
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from sims.core.scenario import Scenario

pytestmark = pytest.mark.browser

_DRAWN = """async () => {
    const img = document.querySelector('[data-diagram-img]');
    const text = document.querySelector('.diagram-frame').svgText;
    return {t: +img.dataset.t, messages: +img.dataset.messages, arrows: (text.match(/data-msg=/g) || []).length,
            now: (text.match(/data-now="([^"]+)"/) || [])[1], stale: (text.match(/class="op read stale/g) || []).length,
            split: (text.match(/class="split"/g) || []).length};
}"""


def _wait_drawn_at(page, t: float | None) -> dict:
    """Wait for the picture drawn up to ``t`` (None: up to wherever the page's clock stands)."""
    try:
        page.wait_for_function(
            "(t) => { const i = document.querySelector('[data-diagram-img]');"
            " const sim = document.querySelector('contention-sim');"
            " const want = t === null ? Math.min(sim.t, 20) : t;"
            " return i && i.complete && i.naturalWidth > 0 && +i.dataset.t === want; }",
            arg=t,
            polling=250,  # a timer, not animation frames: a big image keeps the frame loop busy
            timeout=90_000,
        )
    except PlaywrightTimeout:
        status = page.evaluate("() => document.querySelector('[data-diagram-status]').textContent")
        pytest.fail(f"no diagram at t = {t} s; the section says: {status!r}; page errors: {page.errors}")
    return page.evaluate(_DRAWN)


def _messages(preset: str, panel: str, t: float) -> dict:
    sc = Scenario(preset)
    sc.advance(t)
    return sc.metrics()[panel]


@pytest.mark.parametrize(
    ("preset", "panel", "first", "then"),
    [("replication-partition", "async", 6.0, 12.0), ("election-lease-drift", "lease_guard_5", 4.0, 8.0)],
)
def test_the_diagram_follows_the_clock_when_it_is_sought(page, server, preset, panel, first, then):
    page.goto(f"{server}play/{preset}/")
    wait_live(page)
    sim_eval(page, "sim.pause(); await sim.seek(arg);", first)
    page.wait_for_selector("[data-diagram]:not([hidden]) [data-diagram-draw]", timeout=60_000)
    page.select_option("[data-diagram-panel]", panel)
    page.click("[data-diagram-draw]")
    a = _wait_drawn_at(page, first)
    assert a["messages"] == a["arrows"] == _messages(preset, panel, first)["messages"] > 0
    assert float(a["now"]) == first
    sim_eval(page, "await sim.seek(arg);", then)  # no click: the picture follows the clock
    b = _wait_drawn_at(page, then)
    want = _messages(preset, panel, then)
    assert b["messages"] == b["arrows"] == want["messages"] > a["messages"]
    assert float(b["now"]) == then
    if preset.startswith("replication"):
        assert b["stale"] == want["stale_reads"] > 0  # the oracle's stale reads, in red
    else:
        assert b["split"] > 0 and want["split_brain_s"] > 0  # the drifted lease's second leader
    sim_eval(page, "await sim.seek(arg);", first)  # and back
    assert _wait_drawn_at(page, first)["arrows"] == a["arrows"]
    assert page.evaluate("() => document.querySelector('[data-diagram-save]').download") == (
        f"{preset}-{panel}-{first:.2f}s.svg"
    )
    if preset.startswith("election"):  # playing: drawn again, at most once a second, and at once on pause
        before = page.evaluate("() => document.querySelector('.diagram-frame').draws")
        start = time.monotonic()
        sim_eval(page, "sim.play();")
        page.wait_for_timeout(3500)
        sim_eval(page, "sim.pause();")
        playing = time.monotonic() - start
        assert _wait_drawn_at(page, None)["now"]  # drawn where the clock stopped
        draws = page.evaluate("() => document.querySelector('.diagram-frame').draws") - before
        assert 2 <= draws <= playing + 2
    assert not page.errors
