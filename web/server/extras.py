"""Two optional parts of ``contention serve``, each on only when asked for:

- ``--sweep F.jsonl``: ``/sweep/`` shows a finished sweep's results file as the same
  self-contained page ``contention sweep --plot`` writes (read anew at each request);
- ``--real``: ``GET /api/real`` says whether Redis and nginx can be replayed here and why not,
  and ``POST /api/real/replay {"preset", "against", "speed", "duration"}`` runs
  ``contention replay`` (one at a time, in a thread: it is wall-clock work, not CPU work) and
  answers its JSON. Without ``--real`` both say how to turn it on. The preset pages offer
  "Replay on real Redis / nginx" from what ``GET /api/real`` says.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from web.server.api import validate
from web.server.api.errors import ApiError
from web.server.http_policy import csp
from web.server.static import inline_script_hashes

MAX_REPLAY_WALL_S = 120.0  # a replay's duration / speed: a page may not hold a server longer
_SYSTEMS = {"redis": ("redis-server", "redis-server", "cache"), "nginx": ("nginx", "nginx", "ratelimit")}


def sweep_route(results: Path) -> Route:
    async def page(request: Request) -> Response:
        from sweep import plot, store
        from sweep.grid import SweepError

        try:
            rows = await anyio.to_thread.run_sync(store.read_rows, results)
            text = plot.from_rows(rows, results.name)
        except SweepError as exc:
            return JSONResponse({"error": str(exc), "field": "sweep"}, status_code=422)
        body = text.encode()
        return HTMLResponse(body, headers={"content-security-policy": csp("/sweep/", inline_script_hashes(body))})

    return Route("/sweep/", page, methods=["GET"])


def real_status(enabled: bool) -> dict:
    from realsys import servers

    out: dict = {"enabled": enabled}
    for name, (exe, package, topic) in _SYSTEMS.items():
        if not enabled:
            out[name] = {
                "available": False,
                "topic": topic,
                "reason": "start the server with `contention serve --real`",
            }
            continue
        try:
            servers.which(exe, package)
            out[name] = {"available": True, "topic": topic, "reason": None}
        except servers.RealError as exc:
            out[name] = {"available": False, "topic": topic, "reason": str(exc)}
    return out


def real_routes(enabled: bool) -> list[Route]:
    lock = asyncio.Lock()

    async def status(request: Request) -> Response:
        return JSONResponse(real_status(enabled))

    async def replay(request: Request) -> Response:
        st = request.app.state
        body = await validate.read_json(request, st.limits)
        validate.check_fields(body, ("preset", "against", "speed", "duration"))
        info = real_status(enabled)
        against = body.get("against")
        if against not in _SYSTEMS:
            raise ApiError(422, f"against must be one of {', '.join(_SYSTEMS)}", "against")
        if not info[against]["available"]:
            raise ApiError(503, f"{against} replay is unavailable: {info[against]['reason']}", "against")
        p = validate.preset_name(body.get("preset"))
        if p.topic != _SYSTEMS[against][2]:
            raise ApiError(
                422, f"{p.name} is a {p.topic} preset; {against} replays {_SYSTEMS[against][2]} presets", "preset"
            )
        speed = body.get("speed", 1.0)
        if (
            isinstance(speed, bool)
            or not isinstance(speed, int | float)
            or not (0 < speed <= 100 and math.isfinite(speed))
        ):
            raise ApiError(422, "speed must be a number in (0, 100]", "speed")
        duration = validate.duration(body.get("duration"), st.limits, p.duration)
        duration = p.duration if duration is None else duration
        if duration / speed > MAX_REPLAY_WALL_S:
            raise ApiError(
                422,
                f"duration / speed is {duration / speed:.0f} s of wall time; at most {MAX_REPLAY_WALL_S:g}",
                "duration",
            )
        if lock.locked():
            raise ApiError(
                429, "another replay is running; retry when it ends", "request", headers={"Retry-After": "10"}
            )
        async with lock:
            from realsys import replay as real_replay
            from realsys import servers

            try:
                result = await anyio.to_thread.run_sync(
                    lambda: real_replay.run(p, against, float(speed), None, None, duration)
                )
            except (servers.RealError, ConnectionError, OSError) as exc:
                raise ApiError(503, f"replay against {against} failed: {str(exc)[:200]}", "against") from None
        return JSONResponse(result)

    return [Route("/real", status, methods=["GET"]), Route("/real/replay", replay, methods=["POST"])]
