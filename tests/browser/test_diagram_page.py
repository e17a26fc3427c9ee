"""The space-time diagram on a consensus page (web/static/js/diagram.js): drawn at the current
time as an image, its arrows the messages the run sent (counted against CPython's run)."""

from __future__ import annotations

import pytest
from conftest import sim_eval, wait_live

from sims.core.scenario import Scenario

pytestmark = pytest.mark.browser


def test_the_diagram_counts_every_message_of_the_run_so_far(page, server):
    page.goto(f"{server}play/consensus-figure8/")
    wait_live(page)
    sim_eval(page, "sim.pause(); await sim.seek(5.0);")
    page.wait_for_selector("[data-diagram]:not([hidden]) [data-diagram-draw]", timeout=60_000)
    page.select_option("[data-diagram-panel]", "raft_broken_commit")
    page.click("[data-diagram-draw]")
    page.wait_for_function(
        "() => { const i = document.querySelector('[data-diagram-img]'); return i && i.complete && i.naturalWidth > 0; }",
        timeout=60_000,
    )
    drawn = page.evaluate(
        """async () => {
        const img = document.querySelector('[data-diagram-img]');
        const text = document.querySelector('.diagram-frame').svgText;
        return {messages: +img.dataset.messages, arrows: (text.match(/data-msg=/g) || []).length,
                violations: (text.match(/class="violation"/g) || []).length,
                save: document.querySelector('[data-diagram-save]').download};
    }"""
    )
    sc = Scenario("consensus-figure8")
    sc.advance(5.0)
    want = sc.metrics()["raft_broken_commit"]
    assert drawn["messages"] == drawn["arrows"] == want["messages"]
    assert drawn["violations"] == want["safety_violations"] > 0  # Figure 8's lost commit, drawn
    assert drawn["save"] == "consensus-figure8-raft_broken_commit-5.00s.svg"
    assert not page.errors


def test_pages_of_other_topics_show_no_diagram(page, server):
    page.goto(f"{server}play/cache-scan/")
    wait_live(page)
    assert page.locator("[data-diagram]").count() == 0
