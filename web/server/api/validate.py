"""Request checking: the body is read up to the size limit, parsed as strict JSON (no NaN or
Infinity) and checked field by field; each failure is an ApiError naming its field.

The checks run in the server process and are cheap (presets are cached after the first load),
so a bad request never reaches a worker.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from sims.core import presets
from web.server.api import catalog
from web.server.api.errors import ApiError
from web.server.config import MAX_SEED, Limits


@dataclass(frozen=True)
class RunRequest:
    """A checked run: the preset exists, the panels belong to it, the bounds hold."""

    preset: str
    seed: int | None  # None: the preset's seed
    duration: float | None  # None: the preset's duration
    panels: list[str] | None  # None: every panel


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def read_json(request: Request, limits: Limits) -> dict:
    """The body as a JSON object; 413 past ``max_body_bytes``, 408 past ``body_timeout``, 400 if
    it is not JSON, 422 if it is JSON but not an object. (A client that hangs up mid-body raises
    ClientDisconnect, which the app answers quietly.)"""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise ApiError(413, f"request body over {limits.max_body_bytes} bytes", "body", limit="max_body_bytes")
    chunks, size = [], 0
    try:
        async with asyncio.timeout(limits.body_timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limits.max_body_bytes:
                    raise ApiError(
                        413, f"request body over {limits.max_body_bytes} bytes", "body", limit="max_body_bytes"
                    )
                chunks.append(chunk)
    except TimeoutError:
        raise ApiError(
            408, f"the request body did not arrive within {limits.body_timeout:g} s", "body", limit="body_timeout"
        ) from None
    raw = b"".join(chunks)
    if not raw.strip():
        raise ApiError(400, "request body is empty; expected a JSON object", "body")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ApiError(400, f"request body is not valid JSON: {str(exc)[:200]}", "body") from None
    if not isinstance(data, dict):
        raise ApiError(422, f"expected a JSON object, got {_json_type(data)}", "body")
    return data


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def check_fields(data: dict, allowed: tuple[str, ...], what: str = "field", whole: str = "body") -> None:
    """Refuse keys outside ``allowed``, naming the key (or ``whole`` when the key is empty)."""
    for key in data:
        if key not in allowed:
            raise ApiError(422, f"unknown {what} {key[:80]!r}; valid: {', '.join(allowed)}", key[:80] or whole)


def preset_name(value: Any, field: str = "preset", status: int = 422) -> presets.Preset:
    if not isinstance(value, str):
        raise ApiError(422, f"{field} must be a preset name (a string), got {_json_type(value)}", field)
    if not value:
        raise ApiError(422, f"{field} is empty; expected a preset name", field)
    try:
        return catalog.load(value)  # cached after the first load
    except catalog.Unavailable as exc:  # a broken preset file: say which and why
        raise ApiError(422, f"preset {value} is unavailable: {exc}", field) from None
    except presets.PresetError:
        names = presets.preset_names()
        raise ApiError(status, f"unknown preset {value[:80]!r}; valid: {', '.join(names)}", field) from None


def seed(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(422, f"seed must be an integer, got {_json_type(value)}", "seed")
    if not 0 <= value <= MAX_SEED:
        raise ApiError(422, f"seed must be between 0 and {MAX_SEED}", "seed")
    return value


def duration(value: Any, limits: Limits, default: float) -> float | None:
    """A positive, finite duration within ``max_duration``; None means the preset's own, which
    must also be within the bound."""
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ApiError(422, f"duration must be a number of seconds, got {_json_type(value)}", "duration")
        try:
            value = float(value)
        except OverflowError:  # an integer past the float range: over any bound
            value = math.inf
        if math.isnan(value) or value <= 0:
            raise ApiError(422, "duration must be a positive number of seconds", "duration")
    effective = default if value is None else value
    if effective > limits.max_duration:
        raise ApiError(
            422,
            f"duration {effective:g} s is over the limit max_duration = {limits.max_duration:g} s",
            "duration",
            limit="max_duration",
        )
    return value


def panels(value: Any, preset: presets.Preset) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ApiError(422, "panels must be a non-empty array of panel names", "panels")
    valid = preset.panel_names()
    for name in value:
        if name not in valid:
            raise ApiError(
                422, f"unknown panel {name[:80]!r} for preset {preset.name}; valid: {', '.join(valid)}", "panels"
            )
    if len(set(value)) != len(value):
        raise ApiError(422, "panels must not repeat a name", "panels")
    return value


def run_request(data: dict, limits: Limits, *, allow_panels: bool = True) -> RunRequest:
    check_fields(data, ("preset", "seed", "duration", "panels") if allow_panels else ("preset", "seed", "duration"))
    if "preset" not in data:
        raise ApiError(422, "field 'preset' is required", "preset")
    p = preset_name(data["preset"])
    return RunRequest(
        preset=p.name,
        seed=seed(data.get("seed")),
        duration=duration(data.get("duration"), limits, p.duration),
        panels=panels(data.get("panels"), p) if allow_panels else None,
    )


def query_seed(text: str | None) -> int | None:
    """The ``seed`` query parameter (decimal digits only), or None when absent."""
    if text is None:
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 20:
        raise ApiError(422, "seed must be a non-negative integer", "seed")
    return seed(int(text))


def query_float(text: str | None, field: str) -> float | None:
    if text is None:
        return None
    try:
        value = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ApiError(422, f"{field} must be a number", field)
    return value
