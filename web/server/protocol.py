"""uvicorn's HTTP protocol (httptools) with these changes:

- a request's headers must arrive within ``header_timeout`` seconds of the connection opening or
  of the request's first byte (a slow client cannot hold a connection open for ever);
- a request's head, its line and headers together, is at most ``max_header_bytes`` bytes of at
  most ``max_headers`` fields: past either the answer is a JSON 431 and the connection is closed,
  so a client streaming one endless header holds no more than that (plus one read) in memory;
- the 400 that uvicorn sends for a request it cannot parse is the API's JSON error shape;
- each request's scope carries ``scope["extensions"][ABORT]``, which cuts the connection in the
  middle of an answer (a download whose worker died) without uvicorn calling it a bug.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

ABORT = "contention.abort"
log = logging.getLogger("contention.server")


def _json_response(status: int, reason: str, error: str, field: str, limit: str | None = None) -> bytes:
    body = json.dumps({"error": error, "field": field, **({"limit": limit} if limit else {})}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class Protocol(HttpToolsProtocol):
    # set by web.server.app from the limits
    header_timeout = 10.0
    max_header_bytes = 32 * 1024
    max_headers = 100

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._head_bytes: int | None = None  # bytes received since a request's head began; None between heads
        self._refused = False  # a 431 was sent: the rest of the connection is ignored

    # -- the header timeout ------------------------------------------------------------------
    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            error = f"the request's headers did not arrive within {self.header_timeout:g} s"
            self.transport.write(_json_response(408, "Request Timeout", error, "request"))
            self.transport.close()

    # -- the size of a request's head --------------------------------------------------------
    def _refuse(self, limit: str, error: str) -> None:
        """Answer 431 and close; the parser's later callbacks for this connection do nothing."""
        self._refused = True
        self._disarm()
        client = self.client[0] if self.client else "-"
        log.info("%s refused: %s (431, limit %s)", client, error, limit)
        if not self.transport.is_closing():
            self.transport.write(_json_response(431, "Request Header Fields Too Large", error, "headers", limit))
            self.transport.close()

    def _too_many_bytes(self) -> None:
        self._refuse("max_header_bytes", f"the request's line and headers are over {self.max_header_bytes} bytes")

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        if self._head_bytes is not None and not self._refused:  # the head is still arriving
            self._head_bytes += len(data)
            if self._head_bytes > self.max_header_bytes:
                self._too_many_bytes()

    # -- parser callbacks --------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes = 0
        self._arm()

    def on_header(self, name: bytes, value: bytes) -> None:
        super().on_header(name, value)
        if len(self.headers) > self.max_headers and not self._refused:
            self._refuse("max_headers", f"the request has more than {self.max_headers} header fields")

    def on_headers_complete(self) -> None:
        self._disarm()
        self._head_bytes = None
        if self._refused:
            return
        if len(self.url) + sum(len(n) + len(v) + 4 for n, v in self.headers) > self.max_header_bytes:
            self._too_many_bytes()
            return
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and cycle.scope is self.scope:
            self.scope.setdefault("extensions", {})[ABORT] = lambda: self._abort(cycle)  # type: ignore[typeddict-item]

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if not self._refused:
            super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # an idle keep-alive connection is uvicorn's timeout_keep_alive's

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _abort(self, cycle: RequestResponseCycle) -> None:
        """Cut the connection in the middle of ``cycle``'s answer: nothing more is sent, and the
        client sees a truncated transfer (uvicorn treats the answer as one to a client gone)."""
        cycle.disconnected = True
        self.transport.abort()

    def send_400_response(self, msg: str) -> None:
        if self._refused:  # already answered 431
            return
        self.transport.write(_json_response(400, "Bad Request", f"bad HTTP request: {msg}", "request"))
        self.transport.close()
