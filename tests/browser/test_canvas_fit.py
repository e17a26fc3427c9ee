"""A panel's canvas fits its panel before the first frame sizes it: a figure without a poster
shows an empty canvas until Python runs, and at its intrinsic 300 x 150 px it would overflow a
narrow panel and make a phone's page scroll sideways. Only web/static/css/sim.css is loaded (no
site build, no Python)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CSS = Path(__file__).resolve().parents[2] / "web" / "static" / "css" / "sim.css"
PAGE = """<!doctype html><meta name="viewport" content="width=device-width">
<style>{css}</style>
<div class="cs" style="width: {width}px"><div class="cs-panels" style="--n: 2; --cs-panel-min: 100px">
  <figure class="cs-panel"><figcaption><b>a</b></figcaption><div class="cs-canvas"><canvas></canvas></div></figure>
  <figure class="cs-panel"><figcaption><b>b</b></figcaption><div class="cs-canvas"><canvas></canvas></div></figure>
</div></div>"""


@pytest.mark.parametrize("width", [360, 900])
def test_an_unsized_canvas_stays_inside_its_panel(browser, width):
    page = browser.new_page(viewport={"width": 390 if width < 600 else 1366, "height": 844})
    page.set_content(PAGE.format(css=CSS.read_text(encoding="utf-8"), width=width))
    boxes = page.evaluate(
        """() => [...document.querySelectorAll('.cs-canvas')].map((host) => {
             const c = host.querySelector('canvas').getBoundingClientRect(), b = host.getBoundingClientRect();
             return [c.left - b.left, b.right - c.right, c.width, b.width, c.height, b.height]; })"""
    )
    page.close()
    for left, right, cw, bw, ch, bh in boxes:
        assert bw < 300 or width > 600  # the narrow case really is narrower than a bare canvas
        assert left >= -0.5 and right >= -0.5, f"a {cw:.0f} px canvas overflows its {bw:.0f} px panel"
        assert abs(cw - bw) < 1 and abs(ch - bh) < 1, (cw, bw, ch, bh)
