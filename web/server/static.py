"""dist/ as static files: explicit MIME types, no path traversal, CORS for the embed assets only.

Starlette's StaticFiles already refuses paths that resolve outside the folder; this wrapper also
refuses, before any file-system call, decoded paths with a ``..`` segment, a backslash or a NUL
byte (``os.stat`` raises ValueError on NUL, which would be a 500).
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import re
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

from web.server.http_policy import csp

# Explicit, so the answer never depends on the host's /etc/mime.types.
MIME_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
    ".map": "application/json",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".tar": "application/x-tar",
    ".py": "text/x-python",
    ".toml": "text/plain",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".txt": "text/plain",
    ".jsonl": "application/x-ndjson",
}
for _ext, _type in MIME_TYPES.items():
    mimetypes.add_type(_type, _ext)

# What embed.js loads from another origin: scripts, styles, our Python zip, Pyodide's files.
EMBED_SUFFIXES = (".js", ".mjs", ".css", ".wasm", ".zip", ".json", ".py", ".whl", ".tar", ".map", ".woff2")
CORS_HEADERS = [
    (b"access-control-allow-origin", b"*"),
    (b"cross-origin-resource-policy", b"cross-origin"),
]


_INLINE_SCRIPT = re.compile(rb"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
_DATA_BLOCK = re.compile(rb"""\btype\s*=\s*["']?application/(ld\+)?json""", re.I)


def inline_script_hashes(html: bytes) -> tuple[str, ...]:
    """Base64 SHA-256 of each inline script a browser would run (not src=, not JSON data)."""
    out = []
    for attrs, body in _INLINE_SCRIPT.findall(html):
        if re.search(rb"\bsrc\s*=", attrs) or _DATA_BLOCK.search(attrs):
            continue
        digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
        if digest not in out:
            out.append(digest)
    return tuple(out)


def is_embed_asset(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in EMBED_SUFFIXES


def is_safe_path(path: str) -> bool:
    """False for a decoded URL path that could step outside the served folder, or that names a
    dotfile or dot-folder (the build stamp, an editor's or a VCS's files)."""
    if "\x00" in path or "\\" in path:
        return False
    return not any(part.startswith(".") for part in path.split("/"))


def relative_location(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A redirect's Location without scheme and host: Starlette builds it from the request's
    Host header, which a client chooses."""
    out = []
    for name, value in headers:
        if name.lower() == b"location":
            parts = urlsplit(value.decode("latin-1"))
            path = "/" + parts.path.lstrip("/")  # never "//host": that is absolute too
            value = (path + (f"?{parts.query}" if parts.query else "")).encode("latin-1")
        out.append((name, value))
    return out


class SiteFiles:
    """An ASGI app serving ``directory`` (index.html for folders, 404.html when present)."""

    def __init__(self, directory: Path) -> None:
        self.files = StaticFiles(directory=str(directory), html=True, check_dir=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if not is_safe_path(path):
            raise HTTPException(404)  # the app's handler answers it as JSON
        embed = is_embed_asset(path)
        if scope["method"] == "OPTIONS" and embed:  # a preflight from an embedding page
            headers = {
                "Access-Control-Allow-Origin": "*",
                "Access-Control-Allow-Methods": "GET, HEAD",
                "Access-Control-Max-Age": "86400",
            }
            await Response(status_code=204, headers=headers)(scope, receive, send)
            return
        if not embed:
            await self._page(scope, receive, send)
            return

        async def send_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *CORS_HEADERS]
            await send(message)

        await self._files(scope, receive, send_cors)

    async def _files(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def relative_redirects(message: Message) -> None:
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                message["headers"] = relative_location(list(message.get("headers", [])))
            await send(message)

        await self.files(scope, receive, relative_redirects)

    async def _page(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a non-asset path; an HTML answer is held back whole (pages are small) so that its
        CSP can name its inline scripts. Conditional headers are dropped so a page is never a 304
        whose headers would replace the cached page's policy."""
        scope = dict(scope, headers=[(k, v) for k, v in scope["headers"] if k not in _CONDITIONAL])
        start: Message | None = None
        body: list[bytes] = []

        async def hold_html(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                ctype = dict(message.get("headers", [])).get(b"content-type", b"")
                if not ctype.startswith(b"text/html"):
                    await send(message)
                    return
                start = message
                return
            if start is None:
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            html = b"".join(body)
            policy = csp(scope["path"], inline_script_hashes(html)).encode()
            start["headers"] = [*start.get("headers", []), (b"content-security-policy", policy)]
            await send(start)
            await send({"type": "http.response.body", "body": html})

        await self._files(scope, receive, hold_html)


_CONDITIONAL = {b"if-none-match", b"if-modified-since", b"if-range", b"range"}
