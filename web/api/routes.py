"""The JSON API's endpoints (contract in DESIGN.md, schema in ``web.api.openapi``).

Runs go to the worker pool; trace downloads are built in a thread and streamed in chunks; GPU
requests go to the GPU worker. The event loop only checks input and moves bytes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from sims.core import api, presets
from web.api import jobs, validate
from web.api.errors import ApiError
from web.api.openapi import openapi
from web.api.pool import Busy, JobFailed, JobRejected, JobTimeout, WorkerPool

VERSION = "1"


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


async def _pool_call(pool: WorkerPool, what: str, name: str, **kwargs) -> dict:
    """One job on ``pool``, with the pool's exceptions turned into API errors."""
    try:
        return await pool.run(name, **kwargs)
    except Busy as exc:
        raise _busy(exc, what) from None
    except JobTimeout:
        raise ApiError(
            422,
            f"the run took longer than the limit run_timeout = {pool.timeout:g} s; ask for a shorter duration",
            "duration",
            limit="run_timeout",
        ) from None
    except JobRejected as exc:
        raise ApiError(422, str(exc), exc.field or "preset", limit=exc.limit) from None
    except JobFailed as exc:
        raise RuntimeError(f"{what} failed in a worker: {exc}") from None


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
    return JSONResponse([api.describe(p, summary=True) for p in presets.all_presets()])


async def preset_one(request: Request) -> Response:
    p = validate.preset_name(request.path_params["name"], field="name", status=404)
    return JSONResponse(api.describe(p.name))


async def run(request: Request) -> Response:
    st = _state(request)
    if st.pool.full:  # refuse before reading the body: under a burst, 429s must stay cheap
        raise _busy(Busy(st.pool.retry_after()), "runs")
    req = validate.run_request(await validate.read_json(request, st.limits), st.limits)
    result = await _pool_call(
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
    if st.traces >= st.limits.traces:
        raise _busy(Busy(1), "trace downloads")
    st.traces += 1  # released when the stream ends (below), or here when it never starts
    try:
        await anyio.to_thread.run_sync(jobs.check_events, p, seed, duration, st.limits.max_events)
    except BaseException as exc:
        st.traces -= 1
        if isinstance(exc, jobs.LimitExceeded):
            raise ApiError(422, str(exc), exc.field, limit=exc.limit) from None
        raise

    async def body() -> AsyncIterator[str]:
        lines = jobs.trace_lines(p.name, seed, duration, st.limits.max_events)
        try:
            while chunk := await anyio.to_thread.run_sync(next, lines, None):
                yield chunk
        finally:
            st.traces -= 1

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
        st.gpu.pool(), "GPU replays", "replay", preset=req.preset, seed=req.seed, duration=req.duration
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
