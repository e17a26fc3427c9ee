"""HTTP policy around the whole app: security headers on every response and one log line per
request (client, method, path, status, bytes, milliseconds, and a note when the request ended
without an answer); and ``Guard``, which refuses requests that a web page elsewhere could send
(foreign Host, foreign Origin, non-JSON POST) and paths that are not canonical.

Every logged field is the client's text, so every log line passes ``printable`` (``EscapeControl``
on the handlers): a control character is written as an escape and can neither start a forged
line nor reach the terminal.

The CSP allows the site's own scripts and its module worker (from 'self' or a blob: URL),
WebAssembly through 'wasm-unsafe-eval' (Pyodide), and nothing from elsewhere: no CDN anywhere.
A page's inline scripts run only by hash (``web.server.static`` adds them per page).
Pages under /embed/ may be framed by any site; every other page only by its own origin.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("contention.server")

_CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' blob:{hashes}; worker-src 'self' blob:; "
    "connect-src 'self' blob: data:; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
    "font-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors {frame}"
)
COMMON_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


def csp(path: str, script_hashes: tuple[str, ...] = ()) -> str:
    """The policy for ``path``; a page's own inline scripts are allowed by their SHA-256 only."""
    frame = "*" if path.startswith("/embed") else "'self'"
    return _CSP.format(frame=frame, hashes="".join(f" 'sha256-{h}'" for h in script_hashes))


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    return [(b"content-security-policy", csp(path).encode()), *COMMON_HEADERS]


# -- the request log -----------------------------------------------------------------------------
def printable(text: str) -> str:
    """``text`` with each character that is not printable (C0 and C1 controls, DEL, line and
    paragraph separators, bidi and other format characters) written as its Python escape
    (``\\n``, ``\\x1b``, ``\\u2028``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class EscapeControl(logging.Filter):
    """On a handler: the record's message, and a traceback's lines, through ``printable``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        safe = printable(message)
        if safe != message:
            record.msg, record.args = safe, None
        if record.exc_info and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = "\n".join(printable(line) for line in text.split("\n"))
        return True


def log_note(scope: dict[str, Any], note: str) -> None:
    """Say, on the request's log line, why it ended as it did (the client hung up, the answer
    was cut); the line's status is then what was actually sent, or ``-`` for nothing."""
    scope.setdefault("state", {})["contention.log_note"] = note


def _quoted(text: str) -> str:
    """A field of the request line: its quotes and backslashes escaped too, then ``printable``."""
    return printable(text.replace("\\", "\\\\").replace('"', '\\"'))


class HttpPolicy:
    """Pure ASGI middleware (so streamed responses stay streamed); headers the app already set win."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = 0
        size = 0
        extra = security_headers(scope["path"])
        scope.setdefault("state", {})

        async def wrapped(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = message["status"]
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in extra if h[0] not in names)]
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, wrapped)
        finally:
            client = scope.get("client") or ("-", 0)
            query = scope.get("query_string", b"").decode("latin-1")
            target = scope["path"] + (f"?{query}" if query else "")
            note = scope["state"].get("contention.log_note")
            log.info(
                '%s "%s %s" %s %dB %.1fms%s',
                client[0],
                _quoted(scope["method"]),
                _quoted(target[:300]),
                status or "-",
                size,
                (time.perf_counter() - t0) * 1000,
                f" ({note})" if note else "",
            )


# -- who may talk to the server ------------------------------------------------------------------
WILDCARDS = ("0.0.0.0", "::", "")


def host_of(value: str) -> str:
    """The host part of a Host header value (``[::1]:8000`` → ``::1``), lower-cased."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def host_allowed(host: str, bound: str) -> bool:
    """A Host header names this server: the address it is bound to, or ``localhost``; when bound
    to every interface, any IP address. A name other than these is what DNS rebinding uses."""
    if host == "localhost" or host == bound.lower():
        return True
    if bound in WILDCARDS:
        return _is_ip(host)
    return bound == "localhost" and host in ("127.0.0.1", "::1")


def canonical(path: str) -> bool:
    """A raw path as a browser sends it: no empty segment but the last (``//api/run``) and no
    ``.`` or ``..`` segment (``/./api/run``), so that one resource has one path. (Encoded dots
    and slashes are the static files' to refuse, and a preset name's in the API.)"""
    if not path.startswith("/"):
        return False
    *inner, last = path[1:].split("/")
    return all(seg not in ("", ".", "..") for seg in inner) and last not in (".", "..")


def _refuse(status: int, error: str, field: str) -> JSONResponse:
    return JSONResponse({"error": error, "field": field}, status_code=status)


class Guard:
    """Refuses what a web page in the user's browser could use to drive the server: a Host that
    is not this server (DNS rebinding), an API request from another origin, and a POST that is
    not ``application/json`` (the "simple" requests a page may send cross-origin unasked); and a
    path that is not ``canonical`` (404), before anything routes it."""

    def __init__(self, app: ASGIApp, bound_host: str) -> None:
        self.app = app
        self.bound = bound_host

    def check(self, scope: Scope) -> JSONResponse | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        raw_host = headers.get("host")
        if raw_host is not None and not host_allowed(host_of(raw_host), self.bound):
            return _refuse(400, f"Host {raw_host[:80]!r} is not this server; use {self.bound} or localhost", "host")
        if not canonical(scope.get("raw_path", scope["path"].encode()).decode("latin-1")):
            return _refuse(404, "not found (a path has no empty, '.' or '..' segment)", "path")
        if not scope["path"].startswith("/api/"):
            return None
        origin = headers.get("origin")
        if origin is not None and (
            raw_host is None or origin.lower() != f"{scope.get('scheme', 'http')}://{raw_host}".lower()
        ):
            return _refuse(403, f"cross-origin API requests are refused (Origin {origin[:80]!r})", "origin")
        # browsers send no Origin on a plain cross-site GET (an <img src>), but they do send this:
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return _refuse(403, f"cross-origin API requests are refused (Sec-Fetch-Site {site[:40]!r})", "origin")
        if scope["method"] == "POST":
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                got = repr(ctype) if ctype else "none"
                return _refuse(415, f"Content-Type must be application/json, got {got}", "content-type")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (refusal := self.check(scope)) is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)
