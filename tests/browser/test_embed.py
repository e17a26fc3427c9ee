"""The embed in headless chromium: the example post served from another origin than the
site (two 127.0.0.1 servers on different ports), the iframe fallback and bad attributes.

The site server sends ``Access-Control-Allow-Origin: *`` as a static host must for cross-origin
embeds (docs/embedding.md). An init script counts Worker constructions in every frame; requests
for Pyodide's wasm and the Python archive are counted by the context's router.
"""

from __future__ import annotations

import functools
import re
import time
from pathlib import Path

import pytest
from conftest import LIVE_TIMEOUT_MS
from serve import StaticServer, _Handler

pytestmark = pytest.mark.browser

COUNT_WORKERS = """
(() => {
  const W = window.Worker;
  window.__workers = [];
  window.Worker = class extends W {
    constructor(url, opts) { super(url, opts); window.__workers.push(String(url)); }
  };
})();
"""
LIVE = "['ready', 'running', 'paused']"


class _Cors(_Handler):
    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()


def _serve(root: Path, cors: bool) -> StaticServer:
    srv = StaticServer(root)
    if cors:
        srv.httpd.RequestHandlerClass = functools.partial(_Cors, directory=str(root))
    return srv


@pytest.fixture(scope="module")
def hosts(site, tmp_path_factory):
    """(site_url, post_url): the built site with CORS, and a blog on another port."""
    blog = tmp_path_factory.mktemp("blog")
    with _serve(site, cors=True) as site_url:
        post = (site / "examples" / "blog-post.html").read_text(encoding="utf-8")
        assert 'src="../embed.js"' in post
        # a blog elsewhere has a policy of its own, not the site's (sitebuild/csp.py)
        post = re.sub(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">\n?', "", post)
        (blog / "post.html").write_text(post.replace('src="../embed.js"', f'src="{site_url}embed.js"'))
        (blog / "frame.html").write_text(
            "<!doctype html><meta charset=utf-8><body style='margin:0'><p>Above the frame.</p>"
            f'<iframe data-contention src="{site_url}embed/cache-scan/?seed=7&panels=lru,arc&autoplay=false"'
            ' style="width:900px;height:150px;border:0" title="cache-scan"></iframe>'
            f'<script src="{site_url}static/embed/resize.js"></script>'
        )
        (blog / "bad.html").write_text(
            "<!doctype html><meta charset=utf-8><body>"
            '<contention-sim id="a" preset="no-such-preset"></contention-sim>'
            '<contention-sim id="b" preset="cache-scan" panels="lru,nope"></contention-sim>'
            '<contention-sim id="c" preset="cache-scan" seed="seven"></contention-sim>'
            '<contention-sim id="d"></contention-sim>'
            '<contention-sim id="e" preset="cache-scan" loading="click" theme="light"></contention-sim>'
            '<contention-sim id="f" preset="cache-scan" loading="click"></contention-sim>'
            '<contention-sim id="g" preset="cache-scan" seed="8" loading="click"></contention-sim>'
            f'<script type="module" src="{site_url}embed.js"></script>'
        )
        with _serve(blog, cors=False) as blog_url:
            yield site_url, blog_url


@pytest.fixture(scope="module")
def post(browser, hosts):
    """One page with the example post (Pyodide loads once for the module's tests)."""
    site_url, blog_url = hosts
    ctx = browser.new_context(viewport={"width": 1100, "height": 800})
    seen: list[str] = []
    outside: list[str] = []

    def route(r):
        seen.append(r.request.url)
        if r.request.url.startswith("http://127.0.0.1:") or r.request.url.startswith(("blob:", "data:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    ctx.add_init_script(COUNT_WORKERS)
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(f"{blog_url}post.html")
    page.seen = seen
    yield page
    ctx.close()
    assert not outside, outside[:5]


def _state(page, i: int) -> dict:
    return page.evaluate(
        """(i) => { const e = document.querySelectorAll('contention-sim')[i];
        return {state: e.dataset.state, t: e.t, mode: e.mode, opened: e.opened, visible: e.visible,
                playing: !!(e.clock && e.clock.playing)}; }""",
        i,
    )


def _wait_live(page, i: int) -> None:
    page.wait_for_function(
        f"(i) => {{ const e = document.querySelectorAll('contention-sim')[i];"
        f" return e.mode === 'live' && {LIVE}.includes(e.dataset.state); }}",
        arg=i,
        timeout=LIVE_TIMEOUT_MS,
    )


def _scroll_to(page, i: int) -> None:
    page.evaluate("(i) => document.querySelectorAll('contention-sim')[i].scrollIntoView({block: 'start'})", i)


def test_post_loads_lazily_and_off_screen_widgets_stay_paused(post):
    page = post
    page.wait_for_function(  # every widget has built its UI (after its meta and its topic's renderers)
        "() => customElements.get('contention-sim') && document.querySelectorAll('contention-sim').length === 5"
        " && [...document.querySelectorAll('contention-sim')].every((e) => e.ui)"
    )
    n = page.evaluate("document.querySelectorAll('contention-sim').length")
    assert n == 5
    # every widget renders (a poster or its UI) in its own shadow root, none an error or a blank box
    for i in range(n):
        info = page.evaluate(
            """(i) => { const e = document.querySelectorAll('contention-sim')[i];
            return {shadow: !!e.shadowRoot, canvases: e.shadowRoot.querySelectorAll('canvas').length,
                    h: e.getBoundingClientRect().height, state: e.dataset.state}; }""",
            i,
        )
        assert info["shadow"] and info["canvases"] >= 2 and info["h"] > 200, info
        assert info["state"] != "error", info
    _wait_live(page, 0)
    assert _state(page, 0)["state"] == "running"
    time.sleep(1.0)
    for i in (2, 3, 4):  # never scrolled to: no Python for them, clock stopped at 0
        s = _state(page, i)
        assert not s["visible"] and not s["opened"] and not s["playing"] and s["t"] == 0, (i, s)
    # scroll the first out of view: it pauses and stays paused
    _scroll_to(page, 2)
    page.wait_for_function("() => document.querySelectorAll('contention-sim')[0].dataset.state === 'paused'")
    t0 = _state(page, 0)["t"]
    assert t0 > 0
    _wait_live(page, 2)
    time.sleep(0.8)
    assert _state(page, 0)["t"] == t0 and _state(page, 0)["state"] == "paused"
    assert _state(page, 2)["state"] == "running"
    # back into view: it resumes where it was
    _scroll_to(page, 0)
    page.wait_for_function("(t) => document.querySelectorAll('contention-sim')[0].t > t", arg=t0)
    assert not page.errors, page.errors


def test_all_widgets_run_on_one_worker_and_one_pyodide(post):
    page = post
    for i in (1, 2, 3):  # each in turn, as a reader scrolling down meets them (none is skipped over)
        _scroll_to(page, i)
        _wait_live(page, i)
    _scroll_to(page, 4)  # loading="click": visible is not enough
    time.sleep(0.5)
    assert not _state(page, 4)["opened"]
    page.locator("contention-sim").nth(4).locator(".cs-panels").click()
    _wait_live(page, 4)
    states = [_state(page, i) for i in range(5)]
    assert all(s["mode"] == "live" for s in states), states
    assert page.evaluate("window.__workers.length") == 1, page.evaluate("window.__workers")
    wasm = [u for u in page.seen if u.endswith("pyodide.asm.wasm")]
    zips = [u for u in page.seen if u.endswith("sims.zip")]
    assert len(wasm) == 1 and len(zips) == 1, (wasm, zips)
    assert not any("uPlot.esm.js" in u or u.endswith("/js/charts.js") for u in page.seen)
    assert not page.errors, page.errors


def test_widgets_are_independent_and_match_the_cli(post):
    from sims.core import api

    page = post
    page.set_viewport_size({"width": 1100, "height": 2600})  # the first two widgets on screen at once
    _scroll_to(page, 0)
    got = page.evaluate(
        """async () => {
        const [a, b] = document.querySelectorAll('contention-sim');
        await a.whenLive(); await b.whenLive();
        b.pause(); await b.seek(4);
        a.play(); await a.seek(9);
        const tb = b.t;
        await new Promise((r) => setTimeout(r, 600));
        return {a: await a.snapshot(), b: await b.snapshot(), tb, tb2: b.t, aState: a.dataset.state,
                bState: b.dataset.state, link: a.playgroundURL(), linkB: b.playgroundURL()};
    }"""
    )
    assert got["bState"] == "paused" and got["tb2"] == got["tb"] == 4
    assert got["aState"] == "running" and got["a"]["t"] > 9
    ref = api.run("ratelimit-burst", 7, 4.0)["panels"]
    for name, metrics in got["b"]["panels"].items():
        assert metrics == ref[name], name
    site_url = page.evaluate("new URL('../../', document.querySelector('script[type=module]').src).href")
    assert got["link"].startswith(f"{site_url}play/cache-scan/#seed=7&speed=2&t=")
    assert (
        page.evaluate(
            "getComputedStyle(document.querySelectorAll('contention-sim')[2]).getPropertyValue('--cs-bg').trim()"
        )
        == "#181b22"
    )
    # the post's `p { letter-spacing }` does not reach inside the shadow root
    assert (
        page.evaluate(
            "getComputedStyle(document.querySelector('contention-sim').shadowRoot.querySelector('.cs-embed-head')).letterSpacing"
        )
        == "normal"
    )
    page.set_viewport_size({"width": 1100, "height": 800})
    # "open in playground" reproduces the exact state on the site
    assert got["linkB"].startswith(f"{site_url}play/ratelimit-burst/#seed=7&speed=")
    assert got["linkB"].endswith("&t=4&panels=fixed_window,sliding_log,token_bucket")
    play = page.context.new_page()
    play.goto(got["linkB"])
    play.wait_for_function(
        "() => { const e = document.querySelector('contention-sim'); return e && e.mode === 'live'; }",
        timeout=LIVE_TIMEOUT_MS,
    )
    there = play.evaluate("() => document.querySelector('contention-sim').snapshot()")
    assert there == got["b"] and play.evaluate("document.querySelector('contention-sim').dataset.state") == "paused"
    play.close()


def test_iframe_resizes_to_its_content_and_checks_the_origin(browser, hosts):
    site_url, blog_url = hosts
    ctx = browser.new_context(viewport={"width": 1000, "height": 900})
    page = ctx.new_page()
    page.goto(f"{blog_url}frame.html")
    page.wait_for_function(
        "() => document.querySelector('iframe').getBoundingClientRect().height > 400", timeout=20_000
    )
    frame = page.frames[1]
    for _ in range(50):  # styles arrive after the first layout: wait until the sizes settle
        h = page.evaluate("document.querySelector('iframe').getBoundingClientRect().height")
        inner = frame.evaluate("Math.ceil(document.documentElement.getBoundingClientRect().height)")
        if abs(h - inner) <= 1:
            break
        time.sleep(0.2)
    assert abs(h - inner) <= 1 and h > 400, (h, inner)
    # a message from another origin (the host page itself) is ignored
    page.evaluate("window.postMessage({type: 'contention:resize', height: 77}, '*')")
    time.sleep(0.3)
    assert page.evaluate("document.querySelector('iframe').getBoundingClientRect().height") == h
    assert frame.evaluate("document.querySelector('contention-sim').getAttribute('seed')") == "7"
    ctx.close()


def test_bad_attributes_show_a_readable_message(browser, hosts):
    _, blog_url = hosts
    ctx = browser.new_context(color_scheme="dark")
    ctx.add_init_script(COUNT_WORKERS)
    page = ctx.new_page()
    page.goto(f"{blog_url}bad.html")
    page.wait_for_function(
        "() => [...document.querySelectorAll('contention-sim')].slice(0, 4).every((e) => e.dataset.state === 'error')"
    )
    texts = page.evaluate(
        """() => [...document.querySelectorAll('contention-sim')].slice(0, 4).map((e) =>
            [e.shadowRoot.querySelector('.cs-status').textContent, e.getBoundingClientRect().height])"""
    )
    assert 'unknown preset "no-such-preset"' in texts[0][0]
    assert re.search(r"; try [a-z0-9-]+(, [a-z0-9-]+)+", texts[0][0]), texts[0][0]  # names to try instead
    assert 'unknown panel "nope"' in texts[1][0]
    assert 'seed must be an integer, got "seven"' in texts[2][0]
    assert "no preset" in texts[3][0]
    assert all(h > 20 for _, h in texts), texts
    # the reader's dark scheme is followed, and theme="light" overrides it
    page.wait_for_function(
        "() => ['f', 'g'].every((id) => document.getElementById(id).shadowRoot.querySelector('canvas'))"
    )
    time.sleep(0.5)  # a seed without a poster has nothing to play: its clock must not ask for Python
    assert page.evaluate("document.getElementById('g').dataset.state") == "loading"
    bg = "(id) => getComputedStyle(document.getElementById(id)).getPropertyValue('--cs-bg').trim()"
    assert page.evaluate(bg, "f") == "#181b22" and page.evaluate(bg, "e") == "#fff"
    assert page.evaluate("window.__workers.length") == 0  # loading="click": nothing started
    ctx.close()


def test_embed_weighs_at_most_30_kb_gzipped(site):
    from sitebuild import embed as embed_build

    sizes = embed_build.gzip_sizes(site)
    assert sizes["total_gzip"] <= embed_build.BUDGET_GZIP, sizes
    assert (site / "embed" / "cache-scan" / "index.html").exists()
    assert (site / "docs" / "embedding.md").read_text().count("<contention-sim") >= 2


def test_notebook_widget_front_end_renders_from_the_kernel(browser):
    """web/notebook.py's front end in a page, with a stand-in for anywidget's model whose messages
    go to the widget object in this (kernel) process."""
    pytest.importorskip("anywidget")
    from web.notebook import Sim

    sim = Sim("cache-scan", seed=7, panels="lru,arc")
    state = {k: getattr(sim, k) for k in ("preset", "seed", "panels", "speed", "theme", "height", "t", "meta")}
    state.update(_modules=sim._modules, _css=sim._css, _preset_names=sim._preset_names)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    replies: list[dict] = []
    sim.send = replies.append

    def kernel(content):
        sim._on_msg(sim, content, [])
        return replies.pop()

    page.expose_function("kernel", kernel)
    page.set_content("<!doctype html><body><div id=out></div></body>")
    page.evaluate(
        """async ([esm, state]) => {
        const handlers = [];
        const model = {
          get: (k) => state[k],
          on: (ev, fn) => { if (ev === 'msg:custom') handlers.push(fn); },
          off: () => {},
          send: (msg) => window.kernel(msg).then((r) => handlers.forEach((fn) => fn(r))),
        };
        const url = URL.createObjectURL(new Blob([esm], {type: 'text/javascript'}));
        const mod = await import(url);
        await mod.default.render({model, el: document.getElementById('out')});
    }""",
        [sim._esm, state],
    )
    page.wait_for_function(
        "() => { const e = document.querySelector('contention-sim'); return e && e.mode === 'live'; }",
        timeout=20_000,
    )
    snap = page.evaluate(
        "async () => { const e = document.querySelector('contention-sim'); await e.seek(6); return e.snapshot(); }"
    )
    from sims.core import api

    assert snap["panels"] == api.run("cache-scan", 7, 6.0, ["lru", "arc"])["panels"]
    assert (
        page.evaluate(
            "window.__workers === undefined && document.querySelector('contention-sim').shadowRoot.querySelectorAll('canvas').length"
        )
        >= 2
    )
    assert not errors, errors
    page.close()
