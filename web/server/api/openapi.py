"""The OpenAPI 3.1 document served at ``/api/openapi.json``, written out by hand from the
contract in DESIGN.md; a test checks that it lists exactly the routes the server has."""

from __future__ import annotations

from web.server.config import MAX_SEED, Limits


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


ERROR = {"$ref": "#/components/schemas/Error"}
RUN_RESULT = {"$ref": "#/components/schemas/RunResult"}


def _errors(*codes: int) -> dict:
    text = {
        400: "malformed JSON or an empty body",
        404: "unknown preset",
        408: "the request body did not arrive within body_timeout",
        413: "request body over the size limit",
        415: "a POST body that is not application/json",
        422: "a field is wrong, the preset is unavailable, or a bound (max_duration, max_events, run_timeout) is hit",
        429: "too many runs at once; see Retry-After",
        503: "the worker died or the server is stopping (see Retry-After); for a GPU replay, no GPU here",
    }
    out = {str(c): _json(ERROR, text[c]) for c in codes}
    for c in (429, 503):
        if c in codes:
            out[str(c)]["headers"] = {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds"}}
    return out


def _or_null(schema: dict) -> dict:
    """``schema`` or null: in a body, null means "the preset's own value", as the server reads it."""
    return {**schema, "type": [schema["type"], "null"]}


def openapi(limits: Limits) -> dict:
    seed = {"type": "integer", "minimum": 0, "maximum": MAX_SEED}
    duration = {"type": "number", "exclusiveMinimum": 0, "maximum": limits.max_duration}
    panels = {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "string"}}
    run_body = {
        "type": "object",
        "additionalProperties": False,
        "required": ["preset"],
        "properties": {
            "preset": {"type": "string", "minLength": 1},
            "seed": _or_null(seed),
            "duration": _or_null(duration),
            "panels": _or_null(panels),
        },
    }
    replay_body = {**run_body, "properties": {k: v for k, v in run_body["properties"].items() if k != "panels"}}
    name_param = {"in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Contention API",
            "version": "1",
            "description": "Seeded simulations of resources under contention: the same results as "
            "`contention run --json`.",
        },
        "paths": {
            "/api/health": {
                "get": {"summary": "Liveness and pool state", "responses": {"200": _json({"type": "object"}, "ok")}}
            },
            "/api/presets": {
                "get": {
                    "summary": "Every preset",
                    "responses": {
                        "200": _json(
                            {"type": "array", "items": {"$ref": "#/components/schemas/PresetItem"}},
                            "name, available, and topic, title, duration, panels (or error when unavailable)",
                        )
                    },
                }
            },
            "/api/presets/{name}": {
                "get": {
                    "summary": "One preset in full",
                    "parameters": [{"name": "name", **name_param}],
                    "responses": {"200": _json({"type": "object"}, "the preset"), **_errors(404, 422)},
                }
            },
            "/api/run": {
                "post": {
                    "summary": "Run a preset to the end (same object as `run --json`)",
                    "requestBody": {"required": True, "content": {"application/json": {"schema": run_body}}},
                    "responses": {"200": _json(RUN_RESULT, "the run"), **_errors(400, 408, 413, 415, 422, 429, 503)},
                }
            },
            "/api/trace/{preset}": {
                "get": {
                    "summary": "The canonical stream as JSON lines (what `run --trace-out` writes)",
                    "parameters": [
                        {"name": "preset", **name_param},
                        {"name": "seed", "in": "query", "schema": seed},
                        {"name": "duration", "in": "query", "schema": duration},
                    ],
                    "responses": {
                        "200": {
                            "description": "one event per line",
                            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
                        },
                        **_errors(404, 422, 429, 503),
                    },
                }
            },
            "/api/gpu": {
                "get": {
                    "summary": "Is GPU replay available here?",
                    "responses": {"200": _json({"$ref": "#/components/schemas/GpuStatus"}, "status")},
                }
            },
            "/api/gpu/replay": {
                "post": {
                    "summary": "Replay a preset on the GPU: measured beside simulated",
                    "requestBody": {"required": True, "content": {"application/json": {"schema": replay_body}}},
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "required": ["sim", "gpu"],
                                "properties": {"sim": RUN_RESULT, "gpu": {"type": "object"}},
                            },
                            "simulated and measured",
                        ),
                        **_errors(400, 408, 413, 415, 422, 429, 503),
                    },
                }
            },
            "/api/openapi.json": {
                "get": {"summary": "This document", "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")}}
            },
        },
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error", "field"],
                    "properties": {
                        "error": {"type": "string"},
                        "field": {"type": "string"},
                        "limit": {"type": "string"},
                    },
                },
                "RunResult": {
                    "type": "object",
                    "required": ["preset", "topic", "seed", "duration", "stream_sha256", "panels"],
                    "properties": {
                        "preset": {"type": "string"},
                        "topic": {"type": "string"},
                        "seed": {"type": "integer"},
                        "duration": {"type": "number"},
                        "stream_sha256": {"type": "string"},
                        "panels": {
                            "type": "object",
                            "additionalProperties": {"type": "object", "additionalProperties": {"type": "number"}},
                        },
                    },
                },
                "PresetItem": {
                    "type": "object",
                    "required": ["name", "available"],
                    "properties": {
                        "name": {"type": "string"},
                        "available": {"type": "boolean"},
                        "topic": {"type": "string"},
                        "title": {"type": "string"},
                        "duration": {"type": "number"},
                        "panels": {"type": "array", "items": {"type": "string"}},
                        "error": {"type": "string"},
                    },
                },
                "GpuStatus": {
                    "type": "object",
                    "required": ["available", "device", "reason"],
                    "properties": {
                        "available": {"type": "boolean"},
                        "device": {"type": ["string", "null"]},
                        "reason": {"type": "string"},
                    },
                },
            }
        },
    }
