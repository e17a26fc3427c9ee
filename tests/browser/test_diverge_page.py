"""Divergence on a preset page: pick two panels, jump to their first divergence, read
both reasons, step to the next one. The page must agree with sims.core.diverge in CPython."""

from __future__ import annotations

import pytest
from conftest import sim_eval, wait_live

from sims.core.diverge import Diverge

pytestmark = pytest.mark.browser


def test_cache_scan_lru_arc_jump_explain_and_next(page, server):
    page.goto(f"{server}play/cache-scan/")
    wait_live(page)
    host = page.locator("[data-diverge]")
    host.locator("[data-diverge-panel='0']").select_option("lru")
    host.locator("[data-diverge-panel='1']").select_option("arc")
    expect = Diverge("cache-scan", "lru", "arc").take(2)
    assert host.get_attribute("data-diverge-state") == "ready"
    assert not host.locator(".diverge-sides").is_visible()  # no empty "a" and "b" before a jump

    host.locator("[data-diverge-jump]").click()
    page.wait_for_function("() => document.querySelector('[data-diverge]').dataset.divergences === '1'", timeout=60_000)
    first = expect[0]
    assert host.locator("[data-diverge-reason='a']").inner_text() == first.reason_a
    assert host.locator("[data-diverge-reason='b']").inner_text() == first.reason_b
    assert first.reason_a.startswith("LRU evicted") and "ARC evicted" in first.reason_b
    assert abs(sim_eval(page, "return sim.t;") - first.t) < 1e-9  # the simulation moved to it
    assert host.locator(".diverge-sides").is_visible()
    assert sim_eval(page, "return sim.dataset.state;") == "paused"
    assert f"#{first.index}" in host.locator("[data-diverge-count]").inner_text()

    host.locator("[data-diverge-next]").click()
    page.wait_for_function("() => document.querySelector('[data-diverge]').dataset.divergences === '2'", timeout=60_000)
    second = expect[1]
    assert host.locator("[data-diverge-reason='b']").inner_text() == second.reason_b
    assert abs(sim_eval(page, "return sim.t;") - second.t) < 1e-9
    assert "Divergence 2 so far" in host.locator("[data-diverge-count]").inner_text()

    host.locator("[data-diverge-panel='1']").select_option("lru")  # the same panel twice: refused
    host.locator("[data-diverge-jump]").click()
    assert host.locator("[data-diverge-count]").inner_text() == "Pick two different panels."
    assert not page.errors


def test_a_topic_without_decisions_gets_no_divergence_controls(page, server):
    # consensus panels record no decisions: the controls could only answer with an error
    page.goto(f"{server}play/consensus-leader-partition/")
    wait_live(page)
    page.wait_for_function("() => document.querySelector('[data-diverge]').dataset.divergeState", timeout=60_000)
    assert page.locator("[data-diverge]").get_attribute("data-diverge-state") == "none"
    assert page.locator("[data-diverge] [data-diverge-jump]").count() == 0
    assert not page.errors


def test_divergence_compares_the_panels_on_screen_shows_the_answer_and_marks_the_keys(page, server):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{server}play/cache-scan/")
    wait_live(page)
    host = page.locator("[data-diverge]")
    shown = sim_eval(page, "return sim.panelNames;")
    assert shown == ["lru", "arc"]  # not the preset's first two panels (lru, fifo)
    assert host.locator("[data-diverge-panel='0']").input_value() == "lru"
    assert host.locator("[data-diverge-panel='1']").input_value() == "arc"
    host.locator("[data-diverge-jump]").click()
    page.wait_for_function("() => document.querySelector('[data-diverge]').dataset.divergences === '1'", timeout=60_000)
    first = Diverge("cache-scan", "lru", "arc").take(1)[0]
    page.wait_for_timeout(800)  # the smooth scroll
    box = host.locator(".diverge-sides").bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= 900, box  # the answer is on screen
    marked = sim_eval(page, "return [...(sim.marked || [])];")
    assert marked == sorted({str(k) for d in (first.a, first.b) for k in d.detail}), marked
    assert not page.errors
