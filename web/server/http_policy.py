"""HTTP policy around the whole app: security headers on every response and one log line per
request (client, method, path, status, bytes, milliseconds).

The CSP allows the site's own scripts and its module worker (from 'self' or a blob: URL),
WebAssembly through 'wasm-unsafe-eval' (Pyodide), and nothing from elsewhere: no CDN anywhere.
A page's inline scripts run only by hash (``web.server.static`` adds them per page).
Pages under /embed/ may be framed by any site; every other page only by its own origin.
"""

from __future__ import annotations

import logging
import time

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
            log.info(
                '%s "%s %s" %s %dB %.1fms',
                client[0],
                scope["method"],
                target[:300],
                status or "-",
                size,
                (time.perf_counter() - t0) * 1000,
            )
