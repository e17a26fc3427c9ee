"""``contention serve``: the site (dist/, built first when missing or stale) and the JSON API, on
uvicorn, bound to 127.0.0.1 unless told otherwise.

Layout: ``/api/...`` is the JSON API (``web.server.api.routes``); everything else is a static file from
dist/ (``web.server.static``). Every response passes through ``web.server.http_policy.HttpPolicy``
(security headers, one log line). SIGINT/SIGTERM stop accepting, let in-flight requests finish
for ``shutdown_grace`` seconds, stop the workers and exit 0.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount

from web.server.api.errors import ApiError
from web.server.api.gpu import Gpu
from web.server.api.pool import WorkerPool
from web.server.api.routes import routes as api_routes
from web.server.build import ensure_built
from web.server.config import Limits
from web.server.http_policy import HttpPolicy
from web.server.static import SiteFiles

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
log = logging.getLogger("contention.server")


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if request.url.path.startswith("/api/"):
        field = "method" if exc.status_code == 405 else "path"
        return JSONResponse({"error": exc.detail, "field": field}, status_code=exc.status_code, headers=exc.headers)
    return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "internal error (a bug: see the server log)", "field": ""}, status_code=500)


def create_app(dist: Path, limits: Limits | None = None, gpu: bool = False) -> HttpPolicy:
    """The ASGI app; ``.app`` on the result is the Starlette app (its ``state`` holds the pool)."""
    limits = limits or Limits()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.pool.start()
        log.info("%d worker processes, queue %d, run timeout %g s", limits.workers, limits.queue, limits.run_timeout)
        try:
            yield
        finally:
            app.state.pool.close()
            app.state.gpu.close()
            log.info("workers stopped")

    app = Starlette(
        routes=[Mount("/api", routes=api_routes), Mount("/", app=SiteFiles(dist))],
        exception_handlers={ApiError: _api_error, HTTPException: _http_error, Exception: _internal_error},
        lifespan=lifespan,
    )
    app.state.limits = limits
    app.state.pool = WorkerPool(
        "web.server.api.jobs", limits.workers, limits.queue, limits.run_timeout, warm="warm", nice=limits.worker_nice
    )
    app.state.gpu = Gpu(gpu, limits)
    app.state.traces = 0  # trace downloads in progress
    return HttpPolicy(app)


class _Server(uvicorn.Server):
    """uvicorn's graceful shutdown, then a normal exit (uvicorn would re-raise the signal)."""

    def handle_exit(self, sig: int, frame: object) -> None:
        if not self.should_exit:
            log.info("signal %d: finishing in-flight requests, then stopping", sig)
        super().handle_exit(sig, frame)  # type: ignore[arg-type]
        getattr(self, "_captured_signals", []).clear()


def _setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO)
    log.propagate = False


def main(host: str = "127.0.0.1", port: int = 8000, gpu: bool = False, dist: Path = Path("dist")) -> int:
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
    ensure_built(Path(dist))
    config = uvicorn.Config(
        create_app(Path(dist), limits, gpu),
        host=host,
        port=port,
        access_log=False,
        timeout_graceful_shutdown=limits.shutdown_grace,
        lifespan="on",
        log_level="info",
        server_header=False,
    )
    server = _Server(config)
    server.run()
    return 0 if server.started else 1


if __name__ == "__main__":  # python -m web.server.app [port]
    sys.exit(main(port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000))
