"""``contention serve``: the site (dist/, built first when missing or stale) and the JSON API, on
uvicorn, bound to 127.0.0.1 unless told otherwise.

Layout: ``/api/...`` is the JSON API (``web.server.api.routes``); everything else is a static
file from dist/ (``web.server.static``). Every response passes through
``web.server.http_policy.HttpPolicy`` (security headers, one log line), every request through
its ``Guard`` (Host, Origin, Content-Type). The socket is bound before anything else starts, so
a bad address or a port in use is one line and exit status 2, before a build or a worker.
SIGINT/SIGTERM stop accepting and let in-flight requests finish for ``shutdown_grace`` seconds;
a run still going near the end of it is answered 503 (JSON, Retry-After); then the workers stop
and the process exits 0.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount

from web.server import extras
from web.server.api import catalog
from web.server.api.errors import ApiError, ClientGone, StreamAborted
from web.server.api.gpu import Gpu
from web.server.api.pool import WorkerPool
from web.server.api.routes import routes as api_routes
from web.server.build import ensure_built
from web.server.config import Limits
from web.server.http_policy import EscapeControl, Guard, HttpPolicy, log_note
from web.server.protocol import ABORT, Protocol
from web.server.static import SiteFiles

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
log = logging.getLogger("contention.server")


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path, a method a route does not take), as JSON too."""
    assert isinstance(exc, HTTPException)
    field = "method" if exc.status_code == 405 else "path"
    return JSONResponse({"error": exc.detail, "field": field}, status_code=exc.status_code, headers=exc.headers)


async def _client_gone(request: Request, exc: Exception) -> None:
    """The client hung up (during its body, or while its job ran): nothing is sent, and the
    request's one log line says so."""
    during = "during the request body" if isinstance(exc, ClientDisconnect) else str(exc)
    log_note(request.scope, f"client disconnected {during}")


async def _internal_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, StreamAborted):  # the answer has started: _AbortedStream cuts the connection
        return Response(status_code=500)
    log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "internal error (a bug: see the server log)", "field": ""}, status_code=500)


class _AbortedStream:
    """Innermost around HttpPolicy's app: a StreamAborted ends the ASGI call and cuts the
    connection (``Protocol``'s abort), so the client sees a truncated transfer and the log has
    the request's one line, with the reason."""

    def __init__(self, app: Starlette) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001 (ASGI)
        try:
            await self.app(scope, receive, send)
        except StreamAborted as exc:
            log_note(scope, f"cut: {exc}")
            abort = scope.get("extensions", {}).get(ABORT)
            if abort is not None:
                abort()


def create_app(
    dist: Path,
    limits: Limits | None = None,
    gpu: bool = False,
    host: str = "127.0.0.1",
    real: bool = False,
    sweep: Path | None = None,
) -> HttpPolicy:
    """The ASGI app for a server bound to ``host``; ``.app.app`` on the result is the Starlette
    app (its ``state`` holds the pools)."""
    limits = limits or Limits()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        catalog.index()  # logs each preset file that does not load, once
        app.state.pool.start()
        app.state.trace_pool.start()
        log.info("%d worker processes, queue %d, run timeout %g s", limits.workers, limits.queue, limits.run_timeout)
        try:
            yield
        finally:
            app.state.pool.close()
            app.state.trace_pool.close()
            app.state.gpu.close()
            log.info("workers stopped")

    app = Starlette(
        routes=[
            Mount("/api", routes=[*api_routes, *extras.real_routes(real)]),
            *([extras.sweep_route(sweep)] if sweep is not None else []),
            Mount("/", app=SiteFiles(dist)),
        ],
        middleware=[Middleware(Guard, bound_host=host)],
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            ClientDisconnect: _client_gone,
            ClientGone: _client_gone,
            Exception: _internal_error,
        },
        lifespan=lifespan,
    )
    app.state.limits = limits
    app.state.pool = WorkerPool(
        "web.server.api.jobs",
        limits.workers,
        limits.queue,
        limits.run_timeout,
        warm="warm",
        nice=limits.worker_nice,
        label="run-worker",
    )
    # trace downloads: one worker each, no queue (429 beyond); the timeout bounds each chunk
    app.state.trace_pool = WorkerPool(
        "web.server.api.jobs",
        limits.traces,
        0,
        limits.run_timeout,
        warm="warm",
        nice=limits.worker_nice,
        label="trace-worker",
    )
    app.state.gpu = Gpu(gpu, limits)
    return HttpPolicy(_AbortedStream(app))


def stop_jobs(app: Starlette, reason: str) -> None:
    """End every run, trace and GPU job in flight with a 503 (the server is stopping)."""
    for pool in (app.state.pool, app.state.trace_pool, app.state.gpu.started_pool()):
        if pool is not None:
            pool.stop_jobs(reason)


class _Server(uvicorn.Server):
    """uvicorn's graceful shutdown, then a normal exit (uvicorn would re-raise the signal). Runs
    still going shortly before the grace period ends are answered 503, so that no request is cut
    off by uvicorn's own cancellation (a plain-text 500)."""

    def __init__(self, config: uvicorn.Config, app: Starlette, grace: float) -> None:
        super().__init__(config)
        self.starlette = app
        self.grace = grace

    def handle_exit(self, sig: int, frame: object) -> None:
        if not self.should_exit:
            log.info("signal %d: finishing in-flight requests, then stopping", sig)
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is not None:
                margin = min(1.0, self.grace / 5)
                loop.call_later(max(0.0, self.grace - margin), stop_jobs, self.starlette, f"signal {int(sig)}")
        super().handle_exit(sig, frame)  # type: ignore[arg-type]
        getattr(self, "_captured_signals", []).clear()


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port), as uvicorn would bind it; OSError with a one-line reason."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, OverflowError) as exc:
        raise OSError(f"cannot use address {host!r}: {getattr(exc, 'strerror', None) or exc}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    handler.addFilter(EscapeControl())
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO)
    log.propagate = False


def _escape_uvicorn_logs() -> None:
    """uvicorn's own lines through the same filter (its Config has just set up their handlers)."""
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(EscapeControl())


def main(
    host: str = "127.0.0.1",
    port: int = 8000,
    gpu: bool = False,
    dist: Path = Path("dist"),
    real: bool = False,
    sweep: Path | None = None,
) -> int:
    """Build dist/ if needed, then serve until SIGINT/SIGTERM. Returns the exit status."""
    _setup_logging()
    if host not in LOCAL_HOSTS:
        print(
            f"warning: binding {host}, not 127.0.0.1: anyone who can reach this machine can use the API "
            "and its CPU time",
            file=sys.stderr,
            flush=True,
        )
    limits = Limits.from_env()
    try:
        sock = bind(host, port)  # before the build and before any worker: a busy port is one line
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    with sock:
        ensure_built(Path(dist))
        Protocol.header_timeout = limits.header_timeout
        Protocol.max_header_bytes = limits.max_header_bytes
        Protocol.max_headers = limits.max_headers
        app = create_app(Path(dist), limits, gpu, host, real, sweep)
        config = uvicorn.Config(
            app,
            access_log=False,
            timeout_graceful_shutdown=limits.shutdown_grace,  # type: ignore[arg-type]
            timeout_keep_alive=5,
            http=Protocol,
            lifespan="on",
            log_level="info",
            server_header=False,
        )
        _escape_uvicorn_logs()
        server = _Server(config, app.app.app, limits.shutdown_grace)
        server.run(sockets=[sock])
    return 0 if server.started else 1
