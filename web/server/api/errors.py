"""API errors: every refusal is a JSON object ``{"error": message, "field": name}`` with a 4xx
status (plus ``limit`` when a server bound was hit); a 500 only ever means a bug of ours."""

from __future__ import annotations

from starlette.responses import JSONResponse


class ApiError(Exception):
    """A refusal to answer: ``status`` (4xx), a message, the field it is about, and optionally the
    limit that was hit and extra headers (Retry-After)."""

    def __init__(
        self, status: int, error: str, field: str, *, limit: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.field = field
        self.limit = limit
        self.headers = headers or {}

    def response(self) -> JSONResponse:
        body = {"error": self.error, "field": self.field}
        if self.limit:
            body["limit"] = self.limit
        return JSONResponse(body, status_code=self.status, headers=self.headers)


class StreamAborted(Exception):
    """A streamed answer that cannot be finished (its worker died, or the server is stopping):
    the connection is closed without the final chunk, so the client sees a truncated download
    instead of a complete-looking one. Logged as one line, not as a bug."""


class ClientGone(Exception):
    """The client hung up before its answer was ready; the message says when ("while its job
    ran; the job was cancelled"). Nothing is sent: the request's log line carries the message."""
