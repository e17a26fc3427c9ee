"""The JSON API's endpoints (contract in DESIGN.md, schema in ``web.server.api.openapi``).

Runs go to the worker pool; trace downloads are built in a worker of their own pool and streamed
chunk by chunk (the worker makes the next chunk when the last one is sent); GPU requests go to
the GPU worker. The event loop only checks input and moves bytes. A client that hangs up while
its job runs cancels the job (its worker is killed and replaced): no CPU works for nobody.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from web.server.api import catalog, validate
from web.server.api.errors import ApiError, ClientGone, StreamAborted
from web.server.api.openapi import openapi
from web.server.api.pool import Busy, JobFailed, JobRejected, JobTimeout, Stopping, WorkerDied, WorkerPool

VERSION = "1"
log = logging.getLogger("contention.server")
T = TypeVar("T")


def _state(request: Request):
    return request.app.state


def _busy(exc: Busy, what: str) -> ApiError:
    return ApiError(
        429,
        f"the server is busy with other {what}; retry after {exc.retry_after} s",
        "request",
        limit="concurrency",
        headers={"Retry-After": str(exc.retry_after)},
    )


def _unavailable(reason: str, retry_after: int) -> ApiError:
    return ApiError(503, reason, "request", headers={"Retry-After": str(retry_after)})


def _job_error(exc: Exception, pool: WorkerPool, what: str) -> Exception:
    """The API error for one of the pool's exceptions (a RuntimeError, so a 500, for a bug)."""
    if isinstance(exc, Busy):
        return _busy(exc, what)
    if isinstance(exc, JobTimeout):
        return ApiError(
            422,
            f"the run took longer than the limit run_timeout = {pool.timeout:g} s; ask for a shorter duration",
            "duration",
            limit="run_timeout",
        )
    if isinstance(exc, JobRejected):
        return ApiError(422, str(exc), exc.field or "preset", limit=exc.limit)
    if isinstance(exc, WorkerDied):
        return _unavailable(f"{exc}; a fresh worker is starting, retry the request", pool.retry_after())
    if isinstance(exc, Stopping):
        return _unavailable(f"the server is shutting down ({exc}); retry when it is back", 5)
    return RuntimeError(f"{what} failed in a worker: {exc}")


async def _disconnected(request: Request) -> None:
    """Returns when the client has hung up (call once the body has been read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _while_connected(request: Request, job: Awaitable[T]) -> T:
    """``job``'s result; if the client hangs up first, ``job`` is cancelled (a pool job's worker
    is then killed and replaced) and ClientGone is raised."""
    task = asyncio.ensure_future(job)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        gone.cancel()
    if not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise ClientGone("while its job ran; the job was cancelled")
    return task.result()


async def _pool_call(request: Request, pool: WorkerPool, what: str, name: str, **kwargs) -> dict:
    """One job on ``pool``, cancelled if the client hangs up, with the pool's exceptions turned
    into API errors."""
    try:
        return await _while_connected(request, pool.run(name, **kwargs))
    except (Busy, JobTimeout, JobRejected, JobFailed, Stopping) as exc:
        raise _job_error(exc, pool, what) from None


async def health(request: Request) -> Response:
    st = _state(request)
    return JSONResponse(
        {
            "ok": True,
            "service": "contention",
            "version": VERSION,
            "workers": st.pool.size,
            "ready": st.pool.ready,
            "busy": st.pool.busy,
            "gpu": st.gpu.enabled,
        }
    )


async def preset_list(request: Request) -> Response:
    return JSONResponse(catalog.index())


async def preset_one(request: Request) -> Response:
    if not request.path_params["name"]:  # /api/presets/ names no preset
        raise ApiError(404, "no preset named; GET /api/presets lists them", "name")
    p = validate.preset_name(request.path_params["name"], field="name", status=404)
    try:
        return JSONResponse(catalog.describe(p.name))
    except catalog.Unavailable as exc:
        raise ApiError(422, f"preset {p.name} is unavailable: {exc}", "name") from None


async def run(request: Request) -> Response:
    st = _state(request)
    if st.pool.full:  # refuse before reading the body: under a burst, 429s must stay cheap
        raise _busy(Busy(st.pool.retry_after()), "runs")
    req = validate.run_request(await validate.read_json(request, st.limits), st.limits)
    result = await _pool_call(
        request,
        st.pool,
        "runs",
        "run",
        preset=req.preset,
        seed=req.seed,
        duration=req.duration,
        panels=req.panels,
        max_events=st.limits.max_events,
    )
    return JSONResponse(result)


async def trace(request: Request) -> Response:
    st = _state(request)
    p = validate.preset_name(request.path_params["preset"], status=404)
    validate.check_fields(dict(request.query_params), ("seed", "duration"), "query parameter", "query")
    seed = validate.query_seed(request.query_params.get("seed"))
    seed = p.seed if seed is None else seed
    asked = validate.query_float(request.query_params.get("duration"), "duration")
    duration = validate.duration(asked, st.limits, p.duration)
    duration = p.duration if duration is None else duration
    pool = st.trace_pool
    if pool.full:
        raise _busy(Busy(pool.retry_after()), "trace downloads")
    chunks = pool.stream("trace_chunks", preset=p.name, seed=seed, duration=duration, max_events=st.limits.max_events)
    try:  # the first chunk comes after the event bound is checked: a refusal is still a JSON error
        first = await _while_connected(request, anext(chunks))
    except StopAsyncIteration:
        first = b""
    except (Busy, JobTimeout, JobRejected, JobFailed, Stopping) as exc:
        raise _job_error(exc, pool, "trace downloads") from None

    async def body() -> AsyncIterator[bytes]:
        try:
            if first:
                yield first
            async for chunk in chunks:
                yield chunk
        except (JobTimeout, JobRejected, JobFailed, Stopping) as exc:  # headers are sent: cut the connection
            raise StreamAborted(f"trace download of {p.name} ended early: {exc}") from None
        finally:
            await chunks.aclose()

    name = f"{p.name}-seed{seed}-{duration:g}s.jsonl"
    return StreamingResponse(
        body(), media_type="application/x-ndjson", headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


async def gpu_status(request: Request) -> Response:
    return JSONResponse(await _state(request).gpu.status())


async def gpu_replay(request: Request) -> Response:
    st = _state(request)
    req = validate.run_request(await validate.read_json(request, st.limits), st.limits, allow_panels=False)
    status = await st.gpu.status()
    if not status["available"]:
        raise ApiError(503, f"no GPU replay here: {status['reason']}", "gpu")
    result = await _pool_call(
        request, st.gpu.pool(), "GPU replays", "replay", preset=req.preset, seed=req.seed, duration=req.duration
    )
    return JSONResponse(result)


async def openapi_json(request: Request) -> Response:
    return JSONResponse(openapi(_state(request).limits))


routes = [
    Route("/health", health, methods=["GET"]),
    Route("/presets", preset_list, methods=["GET"]),
    Route("/presets/{name:path}", preset_one, methods=["GET"]),
    Route("/run", run, methods=["POST"]),
    Route("/trace/{preset:path}", trace, methods=["GET"]),
    Route("/gpu", gpu_status, methods=["GET"]),
    Route("/gpu/replay", gpu_replay, methods=["POST"]),
    Route("/openapi.json", openapi_json, methods=["GET"]),
]
