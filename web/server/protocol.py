"""uvicorn's HTTP protocol (httptools) with two changes: a request's headers must arrive within
``header_timeout`` seconds of the connection opening or of the request's first byte (a slow
client cannot hold a connection open for ever), and the 400 that uvicorn sends for a request it
cannot parse is the API's JSON error shape, not plain text.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


def _json_response(status: int, reason: str, error: str, field: str) -> bytes:
    body = json.dumps({"error": error, "field": field}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class Protocol(HttpToolsProtocol):
    header_timeout = 10.0  # set by web.server.app from the limits

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

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

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # an idle keep-alive connection is uvicorn's timeout_keep_alive's

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        self.transport.write(_json_response(400, "Bad Request", f"bad HTTP request: {msg}", "request"))
        self.transport.close()
