"""What the reader sees, in chromium: every preset's claim holds in the browser at its `at` (virtual
time, so the machine's speed does not matter; tests/test_claims.py checks the same in CPython on
several seeds); charts have distinct colours, axis titles and at least three y ticks; two panels
sit side by side on a phone; no widget of the example post clips its content; topic pages hold
live figures; the 404 page leads back; no quiz's right answer is within 1% of a wrong one.
Screenshots at 1366x900 and 390x844 go to test-artifacts/."""

from __future__ import annotations

import pytest
from conftest import screenshot, sim_eval, wait_live

from sims.core import presets

pytestmark = pytest.mark.browser

CLAIMED = [p for p in presets.all_presets() if p.site.get("claim")]


def claim_holds(claim: dict, panels: dict) -> list[str]:
    """The pairs of the claim's panels (best first) that do not differ by its margin, in its direction."""
    sign = 1 if claim.get("higher_is_better", True) else -1
    vals = [panels[n][claim["metric"]] for n in claim["panels"]]
    return [
        f"{a} {va!r} vs {b} {vb!r}"
        for (a, va), (b, vb) in zip(zip(claim["panels"], vals), zip(claim["panels"][1:], vals[1:]))
        if sign * (va - vb) < claim["margin"] - 1e-12
    ]


def test_every_claim_holds_in_the_browser_at_its_time(page, server):
    """One page, one Pyodide: each claimed preset as an element, sought to its claim's `at`."""
    page.goto(f"{server}play/hashing-add-node/")
    wait_live(page)
    failures = []
    for p in CLAIMED:
        c = p.site["claim"]
        try:
            snap = sim_eval(
                page,
                """document.querySelectorAll('contention-sim').forEach((e) => e.remove());
                const el = document.createElement('contention-sim');
                el.setAttribute('preset', arg.name);
                el.setAttribute('autoplay', 'false');
                document.querySelector('article').append(el);
                await el.whenLive();
                await el.seek(arg.at);
                return await el.snapshot();""",
                {"name": p.name, "at": float(c.get("at", 30.0))},
            )
            assert abs(snap["t"] - float(c.get("at", 30.0))) < 1e-9, snap["t"]
            bad = claim_holds(c, snap["panels"])
            assert not bad, f"{c['metric']} at {snap['t']}: {bad}"
        except Exception as exc:
            failures.append(f"{p.name}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)


def test_charts_have_distinct_colours_axis_titles_and_three_ticks(page, server):
    """Every preset page with all its panels on (up to nine lines a chart), from the build's frames."""
    failures = []
    for p in presets.all_presets():
        page.goto(f"{server}play/{p.name}/#panels={','.join(p.panel_names())}&t=0")
        try:
            page.wait_for_function(
                "() => { const e = document.querySelector('contention-sim');"
                " return e && e.firstFrameAt && e.charts && e.charts.describe().every((c) => c.yTicks.length); }",
                timeout=60_000,
            )
            charts = sim_eval(page, "return sim.charts.describe();")
            assert charts, "no chart"
            strokes = [s["stroke"] for c in charts[:1] for s in c["series"]]
            assert len(strokes) == len(p.panels) and len(set(strokes)) == len(strokes), strokes
            panel_colours = sim_eval(
                page,
                "return [...sim.querySelectorAll('.cs-panel')].map((f) => f.style.getPropertyValue('--cs-panel-color'));",
            )
            assert len(set(panel_colours)) == len(panel_colours), panel_colours
            for c in charts:
                assert c["title"] and c["xTitle"], c
                assert len(c["yTicks"]) >= 3, c
                assert all(t and "," not in t for t in c["yTicks"]), c["yTicks"]  # compact: no "0,000"
        except Exception as exc:
            failures.append(f"{p.name}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)


def test_two_panels_side_by_side_on_a_phone(browser, server):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = ctx.new_page()
    for name in ("hashing-add-node", "cache-scan"):
        page.goto(f"{server}play/{name}/")
        page.wait_for_function("() => document.querySelector('contention-sim').firstFrameAt")
        boxes = page.evaluate(
            "() => [...document.querySelectorAll('.cs-panel')].slice(0, 2).map((f) => f.getBoundingClientRect().toJSON())"
        )
        a, b = boxes
        assert abs(a["top"] - b["top"]) < 1 and a["right"] <= b["left"], boxes
        assert b["right"] <= 390 and a["width"] > 120, boxes
        targets = page.evaluate(
            "() => [...document.querySelectorAll('.cs-controls button, .cs-extras button')]"
            ".map((b) => b.getBoundingClientRect().height)"
        )
        assert min(targets) >= 44, targets
        screenshot(page, f"phone-{name}")
    ctx.close()


def test_no_widget_on_the_example_post_clips_its_content(browser, server):
    ctx = browser.new_context(viewport={"width": 1366, "height": 900})
    page = ctx.new_page()
    page.goto(f"{server}examples/blog-post.html")
    page.wait_for_function(
        "() => [...document.querySelectorAll('contention-sim')].every((e) => e.meta)", timeout=60_000
    )
    page.wait_for_timeout(1000)
    sizes = page.evaluate(
        """() => [...document.querySelectorAll('contention-sim')].map((e) => ({
            preset: e.getAttribute('preset'), client: e.clientHeight, scroll: e.scrollHeight,
            inner: e.shadowRoot.querySelector('.cs').getBoundingClientRect().bottom - e.getBoundingClientRect().top}))"""
    )
    for s in sizes:
        assert s["scroll"] <= s["client"] + 1, s
        assert s["inner"] <= s["client"] + 1, s
    screenshot(page, "post-1366")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(500)
    screenshot(page, "post-390")
    ctx.close()


def test_topic_pages_hold_two_to_four_live_figures(page, server):
    from sims.core import registry

    for topic in registry.topic_names():
        if not any(p.topic == topic for p in presets.all_presets()):
            continue
        page.goto(f"{server}topics/{topic}/")
        figs = page.locator(".prose-fig contention-sim")
        have = sum(p.topic == topic for p in presets.all_presets())
        assert figs.count() == min(3, have), (topic, figs.count(), have)  # 2-4 where it has two presets
        # between the paragraphs, before the list of presets
        first_fig = page.evaluate("() => document.querySelector('.prose-fig').getBoundingClientRect().top")
        try_it = page.evaluate("() => document.querySelector('.preset-list').getBoundingClientRect().top")
        assert first_fig < try_it, topic
    page.goto(f"{server}topics/cache/")
    page.locator(".prose-fig contention-sim").first.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => { const e = document.querySelector('.prose-fig contention-sim'); return e.frame && e.charts; }",
        timeout=30_000,
    )
    assert page.evaluate("() => document.querySelector('.prose-fig contention-sim').panelNames.length") == 2
    screenshot(page, "topic-cache-figures")


def test_the_404_page_has_the_site_navigation(page, server, site):
    assert (site / "404.html").exists()
    page.goto(f"{server}404.html")
    assert "Nothing here" in page.locator("h1").inner_text()
    links = page.locator("header nav a")
    assert links.count() >= 8
    links.first.click()
    page.wait_for_load_state()
    assert "/topics/" in page.url


def test_no_quiz_answer_is_within_one_percent_of_a_wrong_one():
    import site_build

    for topic, text in site_build.load_content()["topics"].items():
        for q in text.get("quiz", []):
            a = site_build.quiz_answers(q, presets.load(q["preset"]))
            assert a, (topic, q["preset"], q["metric"])
            best = a["values"][a["answer"][0]]
            for name, v in a["values"].items():
                if name not in a["answer"]:
                    assert abs(v - best) > 0.01 * abs(best), (topic, q["preset"], q["metric"], name, v, best)
