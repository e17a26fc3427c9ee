"""Edit a policy in chromium: the editor opens a policy's source in CodeMirror,
Run adds the edited panel with the numbers the Python side computes (in the edited policies' own
worker), a syntax error and an endless loop show their line and message while the other panels
keep going, and a copied link rebuilds the edited panel exactly: at once in the tab that made it,
after the reader's yes in another (tests/browser/test_links.py has the rest of that)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import sim_eval, wait_live

from sims.core import editpanel, presets, userpolicy
from sims.core.scenario import Scenario

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
KEEP_ZERO = (ROOT / "docs" / "examples" / "lru_keep_zero.py").read_text(encoding="utf-8")
LOOPS = (ROOT / "tests" / "policies" / "stuck_lru.py").read_text(encoding="utf-8")
NAME = "lru (edited)"


def expected(source: str, t: float, panels: list[str]) -> dict:
    """The Python side: the preset's run to ``t`` with the edit added (JSON, as the page sees it)."""
    p = presets.load("cache-scan")
    sc = Scenario(p, panels=panels)
    sc.advance(t)
    editpanel.add_edited(sc, userpolicy.load(source, "cache"), p, "lru")
    return json.loads(json.dumps(sc.metrics()))


def open_editor(page, server: str, fragment: str = "#t=10") -> None:
    page.goto(f"{server}play/cache-scan/{fragment}")
    wait_live(page)
    page.click("[data-edit-open]")
    page.wait_for_selector("[data-edit-code] .cm-content")
    page.wait_for_function(
        "() => document.querySelector('[data-edit-code] .cm-content').textContent.includes('def access')"
    )


def type_source(page, source: str) -> None:
    sim_eval(
        page,
        "const v = sim.editor.view; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: arg}});",
        source,
    )


def run_edit(page) -> str:
    page.click("[data-edit-run]")
    page.wait_for_function(
        "() => { const t = document.querySelector('[data-edit-note]').textContent;"
        " return t.startsWith('Running') || document.querySelector('[data-edit-note]').classList.contains('cs-error'); }",
        timeout=60_000,
    )
    return page.text_content("[data-edit-note]")


def test_an_edit_changes_the_panel_and_a_syntax_error_shows_its_line(page, server):
    open_editor(page, server)
    highlighted = "() => document.querySelectorAll('[data-edit-code] .cm-content span').length > 20"
    page.wait_for_function(highlighted)  # Python's tokens, each in a span
    assert "serve" not in page.text_content("[data-edit-code] .cm-content")  # the fast path is left out
    type_source(page, "from sims.core.registry import register_policy\n\n\nclass Broken(:\n    pass\n")
    note = run_edit(page)
    assert "line 4" in note or ":4:" in note, note
    assert "SyntaxError" in note
    assert page.locator(".cm-error-line").count() == 1
    type_source(page, KEEP_ZERO)
    assert run_edit(page).startswith("Running"), page.text_content("[data-edit-note]")
    snap = sim_eval(page, "return await sim.snapshot();")
    assert snap["t"] == 10
    assert NAME in snap["panels"]
    want = expected(KEEP_ZERO, 10.0, ["lru", "arc"])
    assert snap["panels"][NAME] == want[NAME]
    assert snap["panels"]["lru"] == want["lru"]
    assert snap["panels"][NAME]["hits"] != snap["panels"]["lru"]["hits"]
    assert page.locator(f'figure[data-panel="{NAME}"]').count() == 1
    assert not page.errors


def test_an_endless_loop_is_stopped_and_the_other_panels_keep_going(page, server):
    open_editor(page, server)
    type_source(page, LOOPS)
    run_edit(page)
    page.wait_for_function(
        f"() => (document.querySelector('figure[data-panel=\"{NAME}\"] .cs-panel-error') || {{}}).textContent?.includes('step budget')",
        timeout=60_000,
    )
    text = page.text_content(f'figure[data-panel="{NAME}"] .cs-panel-error')
    assert text.startswith("lru.py:9: stopped at event 12") and "step budget" in text, text
    page.wait_for_function("() => document.querySelector('[data-edit-note]').textContent.includes('step budget')")
    assert page.locator(".cm-error-line").count() == 1
    before = sim_eval(page, "return await sim.snapshot();")
    sim_eval(page, "sim.play(); await new Promise((r) => setTimeout(r, 1500)); sim.pause();")
    after = sim_eval(page, "return await sim.snapshot();")
    assert after["t"] > before["t"]
    assert after["panels"]["lru"]["requests"] > before["panels"]["lru"]["requests"]
    assert after["panels"][NAME] == before["panels"][NAME]  # stopped where the budget ran out
    assert not page.errors


def test_a_shared_link_reproduces_the_edit(context, page, server):
    open_editor(page, server)
    type_source(page, KEEP_ZERO)
    assert run_edit(page).startswith("Running")
    snap = sim_eval(page, "return await sim.snapshot();")
    page.click("[data-copy-link]")
    url = page.url
    assert "edit.lru=" in url and "t=10" in url, url
    assert "register_policy" not in url  # compressed, not spelled out
    page.goto("about:blank")
    page.goto(url)  # the reader's own edit, in the tab that made it: no question asked
    wait_live(page)
    assert page.locator("[data-consent]").count() == 0
    assert sim_eval(page, "return await sim.snapshot();") == snap
    assert sim_eval(page, "return sim.panelNames;")[-1] == NAME
    assert not page.errors
    other = context.new_page()  # another tab (a reader the link was sent to) is asked first
    other.goto(url)
    other.wait_for_selector("[data-consent]", timeout=60_000)
    assert "def access" in other.text_content('[data-consent-code="lru"]')
    other.click("[data-consent-run]")
    wait_live(other)
    assert sim_eval(other, "return await sim.snapshot();") == snap
