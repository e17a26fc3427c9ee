"""Static serving: MIME types, no path traversal, security headers, CORS only for embed assets,
one log line per request."""

from __future__ import annotations

import base64
import hashlib
import http.client
import time
from urllib.parse import urlsplit

import pytest

from .harness import INLINE_SCRIPT, SECRET


def raw_get(url: str, path: str) -> tuple[int, bytes]:
    """A GET with the path sent exactly as written (httpx would normalise ``..``)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_accept_encoding=True)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("path", "mime"),
    [
        ("/", "text/html"),
        ("/sub/", "text/html"),
        ("/app.mjs", "text/javascript"),
        ("/embed.js", "text/javascript"),
        ("/pyodide/pyodide.mjs", "text/javascript"),
        ("/pyodide/pyodide.asm.wasm", "application/wasm"),
        ("/style.css", "text/css"),
        ("/data.json", "application/json"),
        ("/sims.zip", "application/zip"),
    ],
)
def test_mime_types(client, path, mime):
    r = client.get(path)
    assert r.status_code == 200
    assert r.headers["content-type"].split(";")[0] == mime
    assert r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/sub/..%2f..%2fsecret.txt",
        "/sub/%2e%2e/%2e%2e/secret.txt",
        "/..%5csecret.txt",
        "/%5c..%5csecret.txt",
        "/%00",
        "/index.html%00.js",
        "//etc/passwd",
        "/escape",
        "/%2fetc%2fpasswd",
        "/....//secret.txt",
    ],
)
def test_no_path_traversal(main_server, path):
    status, body = raw_get(main_server.url, path)
    assert status in (400, 404), (status, body[:200])
    assert SECRET.encode() not in body and b"root:" not in body


def test_csp_allows_own_worker_and_wasm(client):
    csp = client.get("/").headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert "'wasm-unsafe-eval'" in directives["script-src"]
    assert "'unsafe-eval'" not in directives["script-src"].split()
    assert {"'self'", "blob:"} <= set(directives["worker-src"].split())
    assert directives["frame-ancestors"] == "'self'"
    assert "http" not in csp  # no CDN anywhere
    embed = client.get("/embed/").headers["content-security-policy"]
    assert "frame-ancestors *" in embed
    assert "x-frame-options" not in client.get("/embed/").headers


def test_inline_scripts_run_by_hash_only(client):
    first = client.get("/")
    script_src = first.headers["content-security-policy"].split("script-src ")[1].split(";")[0]
    digest = base64.b64encode(hashlib.sha256(INLINE_SCRIPT.encode()).digest()).decode()
    assert script_src.split() == ["'self'", "'wasm-unsafe-eval'", "blob:", f"'sha256-{digest}'"]  # not the JSON block
    assert "'unsafe-inline'" not in script_src
    again = client.get("/", headers={"If-None-Match": first.headers.get("etag", '"x"')})
    assert (
        again.status_code == 200
        and again.headers["content-security-policy"] == first.headers["content-security-policy"]
    )


@pytest.mark.parametrize("path", ["/embed.js", "/app.mjs", "/style.css", "/sims.zip", "/pyodide/pyodide.asm.wasm"])
def test_cors_on_embed_assets(client, path):
    r = client.get(path, headers={"Origin": "https://blog.example"})
    assert r.headers["access-control-allow-origin"] == "*"
    assert r.headers["cross-origin-resource-policy"] == "cross-origin"


def test_embed_asset_preflight(client):
    r = client.options("/embed.js", headers={"Origin": "https://blog.example", "Access-Control-Request-Method": "GET"})
    assert r.status_code == 204 and r.headers["access-control-allow-origin"] == "*"


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/"), ("GET", "/sub/"), ("GET", "/api/health"), ("GET", "/api/presets"), ("POST", "/api/run")],
)
def test_no_cors_elsewhere(client, method, path):
    r = client.request(
        method, path, headers={"Origin": "https://blog.example"}, json={"preset": "ratelimit-burst", "duration": 1}
    )
    assert "access-control-allow-origin" not in r.headers


def test_missing_file_is_404(client):
    assert client.get("/nope.js").status_code == 404
    assert client.get("/nope/").status_code == 404


def test_one_log_line_per_request(main_server, client):
    marker = f"/log-marker-{time.monotonic_ns()}.js"
    for _ in range(3):
        client.get(marker)
    client.post("/api/run", json={"preset": "ratelimit-burst", "duration": 1, "seed": 12345})
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = main_server.log_text().splitlines()
        if sum(marker in line for line in lines) >= 3:
            break
        time.sleep(0.05)
    hits = [line for line in lines if marker in line]
    assert len(hits) == 3
    assert all(f'"GET {marker}" 404' in line and line.rstrip().endswith("ms") for line in hits)
    assert any('"POST /api/run" 200' in line for line in lines)
