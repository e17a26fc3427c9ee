"""The first seconds of a preset page, from the build's frames (no Python needed): each topic's page
opens where its preset says (``site.start``) and plays at its default speed, so that
tests/test_claims.py's "claim within 20 s of play", computed in CPython as start + 20 x speed, is
what a reader sees; and the keyboard leaves a focused control's Space to the control."""

from __future__ import annotations

import pytest

from sims.core import api, presets, registry

pytestmark = pytest.mark.browser


def one_per_topic() -> list[str]:
    """A preset of each topic: one that opens later in its run where the topic has one."""
    chosen = {}
    for p in presets.all_presets():
        if p.topic not in chosen or (api.default_start(p) and not api.default_start(chosen[p.topic])):
            chosen[p.topic] = p
    return [chosen[t].name for t in registry.topic_names() if t in chosen]


@pytest.fixture
def poster_page(context):
    """A page that never gets Python (Pyodide's WebAssembly is held back): it plays the build's
    frames, as a reader's page does while Python starts, and spends no machine compiling it."""
    held = []
    context.route("**/pyodide.asm.wasm", lambda route: held.append(route))
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    return pg


CLOCK = (
    "() => { const s = document.querySelector('contention-sim'); return {t: s.clock.target, speed: s.speed,"
    " playing: s.clock.playing, shown: s.ui.speedOut.textContent, now: performance.now() / 1000}; }"
)


@pytest.mark.parametrize("name", one_per_topic())
def test_the_page_opens_at_its_start_and_plays_at_its_speed(poster_page, server, name):
    page = poster_page
    p = presets.load(name)
    start, speed = api.default_start(p), api.default_speed(p)
    page.goto(f"{server}play/{name}/")
    page.wait_for_function("() => document.querySelector('contention-sim')?.firstFrameAt", timeout=30_000)
    a = page.evaluate(CLOCK)
    assert a["playing"] and a["speed"] == speed, a
    assert start <= a["t"] <= start + 2 * speed, f"opened at t={a['t']}, expected {start} s"
    page.wait_for_timeout(1500)
    b = page.evaluate(CLOCK)
    rate = (b["t"] - a["t"]) / (b["now"] - a["now"])  # the page's own clock: no round trip in it
    # the clock drops what a frame longer than 0.1 s took (driver.js), so a busy machine runs slow
    assert 0.3 * speed <= rate <= 1.15 * speed or b["t"] >= p.duration, f"{rate:.2f} virtual s per s at speed {speed}"
    assert b["shown"].startswith(f"{speed:.1f}" if speed >= 1 else f"{speed:.2f}"), b["shown"]


def test_space_on_a_control_is_the_controls_and_elsewhere_plays_and_pauses(poster_page, server):
    page = poster_page
    page.goto(f"{server}play/cache-scan/")
    page.wait_for_function("() => document.querySelector('contention-sim')?.firstFrameAt", timeout=30_000)
    playing = "() => document.querySelector('contention-sim').clock.playing"
    page.evaluate("() => document.querySelector('contention-sim').pause()")
    # Space on "Step ›" steps (and stays paused) instead of starting playback
    page.locator(".cs-controls button", has_text="Step").focus()
    page.keyboard.press(" ")
    page.wait_for_timeout(200)
    assert not page.evaluate(playing)
    # Space on a panel's box ticks it, and playback stays as it was
    box = page.locator('.cs-picker input[value="fifo"]')
    box.focus()
    page.keyboard.press(" ")
    page.wait_for_timeout(200)
    assert box.is_checked()
    assert not page.evaluate(playing)
    # Space on "Reset" resets rather than pausing or playing
    # not awaited: with Python held back the seek's request to the worker waits for it; the clock moves at once
    page.evaluate("() => { document.querySelector('contention-sim').seek(20); }")
    page.wait_for_function("() => document.querySelector('contention-sim').t >= 19")
    page.locator(".cs-controls button", has_text="Reset").focus()
    page.keyboard.press(" ")
    page.wait_for_function("() => document.querySelector('contention-sim').t < 1")
    assert not page.evaluate(playing)
    # on the simulation itself (no control focused), Space plays and pauses
    page.locator(".cs").first.focus()
    page.keyboard.press(" ")
    assert page.evaluate(playing)
    page.keyboard.press(" ")
    assert not page.evaluate(playing)


def test_while_python_starts_the_page_says_what_works_and_the_live_sections_wait(context, server):
    """Python's start is held back (sims.zip waits) to look at the page in between: the status line
    says what works and how long the start has taken, with a moving bar; the divergence and trace
    sections are there, waiting, and come alive with Python."""
    from conftest import wait_live

    held = []
    context.route("**/py/sims.zip", lambda route: held.append(route))
    page = context.new_page()
    page.goto(f"{server}play/cache-scan/")
    page.wait_for_function("() => document.querySelector('contention-sim')?.firstFrameAt", timeout=30_000)
    status = page.locator("contention-sim .cs-status")
    # the poster's own line comes first; waiting.js (loaded after it) says what works meanwhile
    page.wait_for_function(
        "() => document.querySelector('contention-sim .cs-status')?.innerText.includes('play, pause, seek')",
        timeout=30_000,
    )
    assert "while Python starts" in status.inner_text() and "play, pause, seek" in status.inner_text()
    assert status.locator("progress").count() == 1
    first = status.inner_text()
    jump = page.locator("[data-diverge-jump]")
    jump.wait_for(timeout=10_000)
    assert jump.is_disabled() and "Waits for Python" in page.inner_text("[data-diverge]")
    assert page.is_visible("[data-trace-drop]") and page.is_disabled("[data-trace-drop] input[type=file]")
    page.wait_for_function(
        "(first) => document.querySelector('contention-sim .cs-status').innerText !== first", arg=first
    )
    page.wait_for_function("() => true")  # let the worker's request reach the route
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(100)
    for route in held:
        route.continue_()
    wait_live(page)
    page.wait_for_function("() => !document.querySelector('[data-diverge-jump]').disabled", timeout=30_000)
    assert not page.is_disabled("[data-trace-drop] input[type=file]")
    assert not status.is_visible()


def test_on_a_phone_the_topics_fold_behind_one_button(poster_page, server):
    """The nav took three rows of a phone's first screen: it is one button there, and a full row of
    links on a desktop."""
    page = poster_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{server}play/cache-scan/")
    assert not page.is_visible(".topics-wide") and page.is_visible(".topics-menu summary")
    assert page.locator("header.site-header").bounding_box()["height"] < 70
    page.click(".topics-menu summary")
    assert page.locator(".topics-menu nav a").first.is_visible()
    page.set_viewport_size({"width": 1366, "height": 900})
    assert page.is_visible(".topics-wide") and not page.is_visible(".topics-menu")
