"""Nothing overlaps, nothing is cut, and the picture comes first: every preset page at 1366x900 and
390x844, read from the build's frames (the poster), so no test here waits for Python (Pyodide's
WebAssembly is held back).

The canvases report the text they draw through the debug hook of web/static/js/text-boxes.js (an
init script sets ``globalThis.contentionTextBoxes`` before the page's modules run): every text box
of the panels' views and of the charts must lie inside its canvas and overlap no other. A metric
name or a label the page cuts with an ellipsis must carry its whole text as a tooltip. The panels
must be the largest thing on the page and start on its first screen; the page must not scroll
sideways.
"""

from __future__ import annotations

import pytest

from sims.core import presets

pytestmark = pytest.mark.browser

SIZES = {"desktop": (1366, 900), "phone": (390, 844)}
TOL = 1.0  # CSS px of slack: antialiasing, not layout
INIT = "globalThis.contentionTextBoxes = new Map();"

# Every text box of every canvas of the element, in CSS px of its canvas, and the DOM text the
# page cuts: [{owner, w, h, boxes: [{text, x0, y0, x1, y1}]}], [{owner, text}].
COLLECT = """async () => {
  const m = await import(new URL('static/js/text-boxes.js', document.baseURI.replace(/play\\/.*$/, '')).href);
  const store = globalThis.contentionTextBoxes;
  const canvases = [...document.querySelectorAll('contention-sim canvas')].filter((c) => c.width && c.getBoundingClientRect().width);
  const out = canvases.map((c) => {
    const owner = c.closest('.cs-panel') ? `panel ${c.closest('.cs-panel').dataset.panel}`
      : `chart ${c.closest('.cs-chart')?.dataset.metric}`;
    return { owner, ...m.textBoxesOf(store, c) };
  });
  const cut = [];
  const sel = '.cs-panel figcaption *, .cs-metrics dt, .cs-chart figcaption, .u-legend .u-label, .cs-legend li';
  for (const e of document.querySelectorAll(sel)) {
    if (!e.getClientRects().length || e.scrollWidth <= e.clientWidth + 1) continue;
    if (!e.closest('[title]')) cut.push({ owner: e.closest('[data-panel], [data-metric]')?.dataset.panel || '', text: e.textContent });
  }
  return { canvases: out, cut };
}"""


# Where the picture is: the panels' box, the other blocks it must outsize, the page's width.
PLACE = """() => {
  const r = (e) => e ? e.getBoundingClientRect() : null;
  const area = (b) => b ? b.width * b.height : 0;
  const grid = r(document.querySelector('.cs-panels'));
  const others = [...document.querySelectorAll('.cs-chart, .play .intro, .cs-watch, .cs-extras, .cs-picker')]
    .map((e) => ({ what: e.className, area: area(r(e)) }));
  return { top: grid.top, bottom: grid.bottom, area: area(grid), others,
           canvasTop: r(document.querySelector('.cs-panel canvas')).top,
           innerHeight, innerWidth, scrollWidth: document.documentElement.scrollWidth };
}"""


def picture_first(got: dict) -> list[str]:
    """What keeps the picture from being the largest thing on the page and on its first screen."""
    bad = []
    if got["canvasTop"] > got["innerHeight"] - 150:
        bad.append(f"the first panel's picture starts at y={got['canvasTop']:.0f}, below the first screen")
    bigger = [o["what"] for o in got["others"] if o["area"] > got["area"]]
    if bigger:
        bad.append(f"larger than the panels: {bigger}")
    if got["scrollWidth"] > got["innerWidth"]:
        bad.append(f"the page scrolls sideways ({got['scrollWidth']} px wide)")
    return bad


def overlaps(canvas: dict) -> list[str]:
    """What on this canvas leaves it or runs into another text."""
    w, h, boxes, who = canvas["w"], canvas["h"], canvas["boxes"], canvas["owner"]
    bad = []
    for b in boxes:
        if b["x0"] < -TOL or b["y0"] < -TOL or b["x1"] > w + TOL or b["y1"] > h + TOL:
            bad.append(f"{who}: {b['text']!r} leaves its {w:.0f}x{h:.0f} canvas at {box(b)}")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            dx = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
            dy = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
            if dx > TOL and dy > TOL:
                bad.append(f"{who}: {a['text']!r} {box(a)} overlaps {b['text']!r} {box(b)}")
    return bad


def box(b: dict) -> str:
    return f"[{b['x0']:.0f},{b['y0']:.0f} {b['x1']:.0f},{b['y1']:.0f}]"


def open_paused(page, server: str, name: str, size: tuple[int, int]) -> list[float]:
    """Open NAME's page at SIZE, paused on its poster; returns the poster's frame times."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{server}play/{name}/")
    page.wait_for_function("() => document.querySelector('contention-sim')?.firstFrameAt", timeout=30_000)
    return page.evaluate(
        "() => { const s = document.querySelector('contention-sim'); s.pause(); return s.poster ? s.poster.frames.map((f) => f.t) : [0]; }"
    )


def show(page, t: float) -> dict:
    """Seek the poster to t, let two animation frames draw it, and collect what was drawn."""
    page.evaluate(
        "async (t) => { const s = document.querySelector('contention-sim'); await s.seek(t);"
        " await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); }",
        t,
    )
    return page.evaluate(COLLECT)


@pytest.fixture
def layout_page(browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 900})
    ctx.add_init_script(INIT)
    # nothing here needs Python: hold Pyodide's WebAssembly back, so no page spends the machine
    # compiling it (the pages stay on their posters, as a reader's does while Python starts)
    held = []
    ctx.route("**/pyodide.asm.wasm", lambda route: held.append(route))
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_picture_comes_first_and_no_text_overlaps_or_leaves_its_panel(layout_page, server, size):
    """Every preset: the panels start on the first screen and outsize every other block, the page
    does not scroll sideways; at the middle and the last frame of its poster, the text of the views
    and the charts stays inside its canvas and clear of every other text."""
    failures = []
    for p in presets.all_presets():
        try:
            times = open_paused(layout_page, server, p.name, SIZES[size])
            bad = picture_first(layout_page.evaluate(PLACE))
            assert not bad, "; ".join(bad)
            for t in sorted({times[len(times) // 2], times[-1]}):
                got = show(layout_page, t)
                bad = [x for c in got["canvases"] for x in overlaps(c)]
                bad += [f"{c['owner']}: {c['text']!r} is cut and has no tooltip" for c in got["cut"]]
                assert got["canvases"], "no canvas drew any text"
                assert not bad, (
                    f"at t={t}: " + "; ".join(bad[:6]) + (f" and {len(bad) - 6} more" if len(bad) > 6 else "")
                )
            assert not layout_page.errors, layout_page.errors
        except Exception as exc:  # every preset's problems at once
            failures.append(f"{p.name} ({size}): {str(exc)[:700]}")
            layout_page.errors.clear()
    assert not failures, f"{len(failures)} pages:\n" + "\n".join(failures)


def drawn(got: dict, owner: str) -> list[str]:
    """The texts drawn on the canvas of `owner` ("panel NAME" or "chart METRIC")."""
    return [b["text"] for c in got["canvases"] if c["owner"] == owner for b in c["boxes"]]


def test_the_pictures_show_what_their_presets_are_about(layout_page, server):
    """Cases where the picture missed the point: queues-hockey-stick had no chart of wait against
    utilization; chunked-prefill's two budgets looked the same; disaggregation did not say which GPU
    prefills."""
    times = open_paused(layout_page, server, "queues-hockey-stick", SIZES["desktop"])
    xy = drawn(show(layout_page, times[-1]), "chart wait_mean@utilization")
    assert {"rho_50", "rho_70", "rho_80", "rho_90", "rho_95"} <= set(xy), xy
    # chunked-prefill: each panel draws its last steps and the longest of them, a decoder's wait,
    # and at some frame of the poster a long prefill makes the two differ
    longest = set()
    times = open_paused(layout_page, server, "chunked-prefill", SIZES["desktop"])
    for t in times[1:]:
        got = show(layout_page, t)
        pair = tuple(
            next((s for s in drawn(got, f"panel {n}") if "longest" in s), None) for n in ("budget-2048", "budget-8192")
        )
        assert all(pair), pair
        longest.add(pair[0] != pair[1])
    assert True in longest, "the two budgets' pictures never differ"
    times = open_paused(layout_page, server, "disaggregation", SIZES["desktop"])
    got = show(layout_page, times[-1])
    assert any(s.startswith("GPU 1: prefill only") for s in drawn(got, "panel disaggregated")), drawn(
        got, "panel disaggregated"
    )
    assert any(s.startswith("GPU 2: decode only") for s in drawn(got, "panel disaggregated"))
    assert any(s.startswith("GPU 1: prefill + decode") for s in drawn(got, "panel colocated"))


def test_a_slow_ratio_is_a_line_not_dashes(layout_page, server):
    """paging-belady makes one reference a second: a recent window shorter than a few references
    mostly holds none, and the recent fault rate fell apart into dashes; the window now spans a
    few of them, so after its first value the line has no gaps."""
    times = open_paused(layout_page, server, "paging-belady", SIZES["desktop"])
    show(layout_page, times[-1])
    lines = layout_page.evaluate(
        "() => { const c = document.querySelector('contention-sim').charts;"
        " return c.panels.map((_, k) => c.data.values('fault_rate@recent', k)); }"
    )
    for ys in lines:
        first = next(i for i, y in enumerate(ys) if y is not None)
        assert None not in ys[first:], ys


GRAPHS = [p.name for p in presets.all_presets() if p.topic == "graphs"]


@pytest.mark.parametrize("size", SIZES)
def test_every_graph_panel_shows_its_pseudocode_and_its_whole_sentence(layout_page, server, size):
    """The graphs topic promises the line of pseudocode each step ran: every graph preset's panels
    draw all of their pseudocode and the step's whole sentence (wrapped where the panel is narrow,
    under the graph on a phone), at the middle and the end of the poster."""
    squash = " ".join
    failures = []
    for name in GRAPHS:
        times = open_paused(layout_page, server, name, SIZES[size])
        for t in (times[len(times) // 2], times[-1]):
            got = show(layout_page, t)
            views = layout_page.evaluate(
                "() => { const s = document.querySelector('contention-sim');"
                " return Object.fromEntries(s.panelNames.map((n) => [n, s.frame.panels[n].view])); }"
            )
            for panel, v in views.items():
                text = squash(squash(drawn(got, f"panel {panel}")).split())
                for line in [*v.get("pseudocode", []), v.get("narration", "")]:
                    if squash(line.split()) not in text:
                        failures.append(f"{name} {size} t={t:g} {panel}: {line!r} is not drawn whole")
    assert not failures, "\n".join(failures[:12])
