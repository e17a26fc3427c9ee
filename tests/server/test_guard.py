"""A local server that a web page cannot abuse: Host must name this server, API
requests from another origin are refused, POST bodies must be application/json, redirects are
relative, dotfiles are not served, slow headers and slow bodies time out, uvicorn's own 400s
are JSON, and the OpenAPI document accepts what the server accepts (null). And (issue 27 §4):
a request's head is capped in bytes and fields, a path cannot forge a log line or write
control characters into the log, and every error, whatever the path or method, is JSON."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from web.server.http_policy import host_allowed, host_of

from .harness import start_server, stop_server

pytestmark = pytest.mark.slow  # real server processes and timeouts: `make test` runs it, `make check` does not

PRESET = "ratelimit-burst"
RUN = {"preset": PRESET, "duration": 1}


def raw(url: str, data: bytes, wait: float = 10.0) -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes it (or ``wait``)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=wait) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except TimeoutError:
            pass
        return out


@pytest.mark.parametrize(
    ("host", "bound", "ok"),
    [
        ("127.0.0.1", "127.0.0.1", True),
        ("localhost", "127.0.0.1", True),
        ("evil.example", "127.0.0.1", False),
        ("127.0.0.1.nip.io", "127.0.0.1", False),
        ("::1", "::1", True),
        ("10.0.0.5", "0.0.0.0", True),  # bound everywhere: any address, never a name
        ("evil.example", "0.0.0.0", False),
        ("127.0.0.1", "localhost", True),
    ],
)
def test_host_allowed(host, bound, ok):
    assert host_allowed(host, bound) is ok


def test_host_of():
    assert host_of("127.0.0.1:8000") == "127.0.0.1"
    assert host_of("[::1]:8000") == "::1"
    assert host_of("LocalHost") == "localhost"


@pytest.mark.parametrize("path", ["/", "/api/health", "/api/presets", "/app.mjs"])
def test_foreign_host_is_refused_everywhere(client, path):
    r = client.get(path, headers={"Host": "evil.example"})
    assert r.status_code == 400
    assert r.json()["field"] == "host" and "evil.example" in r.json()["error"]
    r = client.post("/api/run", json=RUN, headers={"Host": "evil.example:8000"})
    assert r.status_code == 400 and r.json()["field"] == "host"


def test_localhost_and_the_bound_address_are_served(client, main_server):
    port = urlsplit(main_server.url).port
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
        assert client.get("/api/health", headers={"Host": host}).status_code == 200


def test_cross_origin_api_requests_are_refused(client, main_server):
    for origin in ("https://evil.example", "null", "http://localhost:1"):
        r = client.post("/api/run", json=RUN, headers={"Origin": origin})
        assert r.status_code == 403 and r.json()["field"] == "origin", (origin, r.text)
        r = client.get("/api/presets", headers={"Origin": origin})
        assert r.status_code == 403
    same = client.post("/api/run", json=RUN, headers={"Origin": main_server.url})
    assert same.status_code == 200
    # a cross-site <img src="/api/trace/..."> carries no Origin, only Sec-Fetch-Site
    for site in ("cross-site", "same-site"):  # same-site: another port on localhost, say
        r = client.get(f"/api/trace/{PRESET}", headers={"Sec-Fetch-Site": site})
        assert r.status_code == 403 and r.json()["field"] == "origin"
    for site in ("same-origin", "none"):  # the site's own pages; a URL typed into the address bar
        assert client.get("/api/health", headers={"Sec-Fetch-Site": site}).status_code == 200
    # static files stay open to embedding pages (their CORS is for embed assets)
    assert client.get("/embed.js", headers={"Origin": "https://blog.example"}).status_code == 200


@pytest.mark.parametrize("ctype", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_post_must_be_json(client, ctype):
    headers = {"content-type": ctype} if ctype else {}
    for path in ("/api/run", "/api/gpu/replay"):
        r = client.post(path, content=json.dumps(RUN), headers=headers)
        assert r.status_code == 415, r.text
        assert r.json()["field"] == "content-type"
    ok = client.post("/api/run", content=json.dumps(RUN), headers={"content-type": "application/json; charset=utf-8"})
    assert ok.status_code == 200


def test_redirects_are_relative(client):
    r = client.get("/sub", headers={"Host": "localhost"}, follow_redirects=False)
    assert r.status_code in (301, 302, 307, 308)
    assert r.headers["location"] == "/sub/"


@pytest.mark.parametrize("path", ["/.contention-build", "/sub/.hidden", "/.git/config", "/%2econtention-build"])
def test_dotfiles_are_not_served(client, main_server, path):
    (main_server.dist / "sub" / ".hidden").write_text("secret")
    r = client.get(path)
    assert r.status_code == 404 and b"test" not in r.content and b"secret" not in r.content


def test_presets_with_a_trailing_slash_is_404(client):
    r = client.get("/api/presets/")
    assert r.status_code == 404 and r.json()["field"] == "name"


def test_malformed_http_gets_a_json_400(main_server):
    out = raw(main_server.url, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n")
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
    assert json.loads(body)["field"] == "request"


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory):
    env = {"CONTENTION_WORKERS": "1", "CONTENTION_HEADER_TIMEOUT": "1", "CONTENTION_BODY_TIMEOUT": "1"}
    server = start_server(tmp_path_factory.mktemp("slow"), env)
    yield server
    stop_server(server)


def test_slow_headers_time_out(slow_server):
    t0 = time.monotonic()
    out = raw(slow_server.url, b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n", wait=10)  # never finished
    assert time.monotonic() - t0 < 5
    assert out.startswith(b"HTTP/1.1 408") and b'"field": "request"' in out
    t0 = time.monotonic()
    assert raw(slow_server.url, b"", wait=10).startswith(b"HTTP/1.1 408")  # a connection that sends nothing
    assert time.monotonic() - t0 < 5


def test_many_slow_connections_are_all_closed(slow_server):
    parts = urlsplit(slow_server.url)
    socks = [socket.create_connection((parts.hostname, parts.port)) for _ in range(50)]
    try:
        for s in socks:
            s.sendall(b"GET / HTTP/1.1\r\n")
        time.sleep(2.5)
        for s in socks:
            s.settimeout(5)
            assert s.recv(100).startswith(b"HTTP/1.1 408")
    finally:
        for s in socks:
            s.close()
    assert httpx.get(f"{slow_server.url}/api/health").status_code == 200


def test_slow_body_times_out(slow_server):
    out = raw(
        slow_server.url,
        b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"preset": ',
    )
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), out[:200]
    assert json.loads(body)["limit"] == "body_timeout"


def test_a_header_streamed_for_ever_is_refused_early(main_server):
    """One header that never ends, on ten connections at once: each is answered 431 once its head
    passes max_header_bytes (32 KiB), long before the header timeout (10 s) would end it."""
    parts = urlsplit(main_server.url)
    socks = [socket.create_connection((parts.hostname, parts.port)) for _ in range(10)]
    t0 = time.monotonic()
    try:
        for s in socks:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
        with contextlib.suppress(OSError):  # a connection may already be closed after its 431
            for _ in range(6):  # 48 KiB each, a little at a time
                for s in socks:
                    s.sendall(b"a" * 8192)
                time.sleep(0.01)
        answers = []
        for s in socks:
            s.settimeout(5)
            answers.append(s.recv(1000))
    finally:
        for s in socks:
            s.close()
    assert time.monotonic() - t0 < 5
    for out in answers:
        head, _, body = out.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 431") and b"application/json" in head, out[:200]
        assert json.loads(body) == json.loads(body) | {"field": "headers", "limit": "max_header_bytes"}


def test_too_many_header_fields_are_refused(main_server):
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(101))
    out = raw(main_server.url, b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + many + b"\r\n")
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431"), out[:200]
    assert json.loads(body)["limit"] == "max_headers"


def test_a_large_head_within_the_bounds_is_served(main_server):
    cookie = b"Cookie: " + b"c" * 20_000 + b"\r\n"
    fields = b"".join(b"X-%d: 1\r\n" % i for i in range(90))
    out = raw(
        main_server.url,
        b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + cookie + fields + b"\r\n",
    )
    assert out.startswith(b"HTTP/1.1 200"), out[:200]


def test_a_path_cannot_forge_a_log_line_or_write_control_characters(main_server):
    """A static path skips the Origin checks, so any page can make a browser send this."""
    marker = f"FORGED{time.monotonic_ns()}"
    path = f"/x%0a22:03:00%20127.0.0.1%20%22POST%20/api/run%22%20200%20{marker}%1b[31m%00%0d%e2%80%a8%c2%85"
    out = raw(main_server.url, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    assert out.startswith(b"HTTP/1.1 404")
    deadline = time.monotonic() + 5
    while marker not in main_server.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    raw_log = main_server.log.read_bytes()
    lines = [line for line in raw_log.split(b"\n") if marker.encode() in line]
    assert len(lines) == 1, lines  # one line, the request's own
    assert b'"GET /x\\n22:03:00 127.0.0.1 \\"POST /api/run\\" 200 ' in lines[0], lines[0]
    for byte in (b"\x1b", b"\x00", b"\r", "\u2028".encode(), "\x85".encode()):
        assert byte not in raw_log, byte


@pytest.mark.parametrize(
    ("method", "path", "status", "field"),
    [
        ("POST", "//api/run", 404, "path"),  # not the API (no Origin check), not a file either
        ("GET", "/./api/run", 404, "path"),
        ("GET", "/%2e/api/run", 404, "path"),  # the static files refuse a dot segment, as JSON too
        ("GET", "/api/../api/health", 404, "path"),
        ("GET", "/sub//index.html", 404, "path"),
        ("TRACE", "/", 405, "method"),
        ("DELETE", "/index.html", 405, "method"),
        ("GET", "/nope.js", 404, "path"),
        ("GET", "/api", 404, "path"),
    ],
)
def test_every_error_is_json(main_server, method, path, status, field):
    body = b'{"preset": "ratelimit-burst"}'
    request = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    request += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    out = raw(main_server.url, request.encode() + body)
    head, _, payload = out.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status}".encode()), out[:300]
    assert b"content-type: application/json" in head.lower()
    assert json.loads(payload)["field"] == field


def test_openapi_and_server_agree_on_null(client):
    doc = client.get("/api/openapi.json").json()
    props = doc["paths"]["/api/run"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    for name in ("seed", "duration", "panels"):
        assert "null" in props[name]["type"]
    r = client.post("/api/run", json={"preset": PRESET, "seed": None, "duration": None, "panels": None})
    assert r.status_code == 200
