"""Every API endpoint against a real server: answers equal the in-process contract functions."""

from __future__ import annotations

import hashlib
import json

import pytest

from sims.core import api, presets
from sims.core.stream import horizon
from web.server.api.jobs import count_events
from web.server.api.routes import routes

MAX_EVENTS = 300_000  # the main server's bound (conftest.MAIN_ENV)

PRESET = "ratelimit-burst"


def short(p: presets.Preset) -> float:
    """A duration that keeps every preset quick here, whatever lands in presets/."""
    return min(p.duration, max(1.0, p.ci_duration or 0.05 * p.duration))


def test_health(client):
    r = client.get("/api/health")
    assert r.status_code == 200
    body = r.json()
    assert body["ok"] is True and body["service"] == "contention"
    assert body["workers"] == 2 and body["gpu"] is False


def test_presets_lists_every_preset(client):
    r = client.get("/api/presets")
    assert r.status_code == 200
    items = {p["name"]: p for p in r.json()}
    assert set(items) == set(presets.preset_names())
    assert items[PRESET]["topic"] == "ratelimit"
    assert items[PRESET]["panels"] == presets.load(PRESET).panel_names()


@pytest.mark.parametrize("name", presets.preset_names())
def test_preset_detail_equals_describe(client, name):
    r = client.get(f"/api/presets/{name}")
    assert r.status_code == 200
    assert r.json() == json.loads(json.dumps(api.describe(name)))


@pytest.mark.parametrize(
    "name", ["nope", "ratelimit-burst.toml", "..%2Fpresets%2Fratelimit-burst", "%00", "ratelimit-burst%2F"]
)
def test_unknown_preset_detail_is_404_naming_the_field(client, name):
    r = client.get(f"/api/presets/{name}")
    assert r.status_code == 404
    assert r.json()["field"] == "name"


def test_a_request_never_loads_a_preset_file_by_path(client, tmp_path):
    """The CLI runs a TOML file at a path; the API runs only the presets folder's presets. A real
    preset's path, a copy outside the folder and a NUL byte are all unknown presets, not runs or
    a 500 (a 500 on "/\x00" was how this was found)."""
    outside = tmp_path / "copy.toml"
    outside.write_text((presets.PRESET_DIR / f"{PRESET}.toml").read_text())
    for name in [str(presets.PRESET_DIR / f"{PRESET}.toml"), str(outside), f"presets/{PRESET}.toml", "/\x00"]:
        r = client.post("/api/run", json={"preset": name, "duration": 1.0})
        assert r.status_code == 422 and r.json()["field"] == "preset", (name, r.status_code, r.text[:200])
        assert "unknown preset" in r.json()["error"]
        r = client.get("/api/presets/" + name.lstrip("/").replace("\x00", "%00"))
        assert r.status_code == 404, (name, r.status_code)


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", presets.preset_names())
def test_run_equals_run_json(client, name):
    p = presets.load(name)
    body = {"preset": name, "seed": 3, "duration": short(p)}
    r = client.post("/api/run", json=body)
    if r.status_code == 422 and r.json().get("limit") == "max_events":  # a preset with a huge stream
        assert count_events(p, 3, horizon(p, short(p)), MAX_EVENTS) > MAX_EVENTS
        return
    assert r.status_code == 200, r.text
    assert r.json() == json.loads(json.dumps(api.run(name, 3, short(p))))


def test_run_defaults_and_panel_selection(client):
    p = presets.load(PRESET)
    r = client.post("/api/run", json={"preset": PRESET})
    assert r.status_code == 200
    assert r.json()["seed"] == p.seed and r.json()["duration"] == p.duration
    keep = p.panel_names()[-1:] + p.panel_names()[:1]
    r = client.post("/api/run", json={"preset": PRESET, "duration": 2, "panels": keep})
    assert r.status_code == 200
    assert list(r.json()["panels"]) == keep


def test_trace_is_the_canonical_stream_of_the_run(client):
    r = client.get(f"/api/trace/{PRESET}", params={"seed": 11, "duration": 12.5})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/x-ndjson")
    assert r.headers.get("transfer-encoding") == "chunked"  # streamed, not sized up front
    lines = r.text.splitlines()
    assert lines and all(json.loads(line)["t"] <= 12.5 for line in lines)
    run = client.post("/api/run", json={"preset": PRESET, "seed": 11, "duration": 12.5}).json()
    assert hashlib.sha256("\n".join(lines).encode()).hexdigest() == run["stream_sha256"]


def test_trace_defaults_to_the_preset_seed_and_duration(client):
    p = presets.load(PRESET)
    text = client.get(f"/api/trace/{PRESET}").text
    assert hashlib.sha256(text.rstrip("\n").encode()).hexdigest() == api.run(PRESET)["stream_sha256"]
    assert json.loads(text.splitlines()[-1])["t"] <= p.duration


@pytest.mark.parametrize(
    ("path", "status", "field"),
    [
        ("/api/trace/nope", 404, "preset"),
        (f"/api/trace/{PRESET}?seed=-1", 422, "seed"),
        (f"/api/trace/{PRESET}?seed=abc", 422, "seed"),
        (f"/api/trace/{PRESET}?seed=99999999999999999999", 422, "seed"),
        (f"/api/trace/{PRESET}?duration=-3", 422, "duration"),
        (f"/api/trace/{PRESET}?duration=nan", 422, "duration"),
        (f"/api/trace/{PRESET}?duration=1e9", 422, "duration"),
        (f"/api/trace/{PRESET}?duration=15000", 422, "duration"),  # 330,000 events > max_events
        (f"/api/trace/{PRESET}?sed=1", 422, "sed"),
    ],
)
def test_trace_bad_input(client, path, status, field):
    r = client.get(path)
    assert r.status_code == status, r.text
    assert r.json()["field"] == field


def test_gpu_without_flag_says_why(client):
    r = client.get("/api/gpu")
    assert r.status_code == 200
    body = r.json()
    assert body["available"] is False and body["device"] is None and "--gpu" in body["reason"]
    r = client.post("/api/gpu/replay", json={"preset": PRESET, "seed": 1, "duration": 5})
    assert r.status_code == 503
    assert r.json()["field"] == "gpu" and "--gpu" in r.json()["error"]


def test_gpu_replay_checks_input_first(client):
    r = client.post("/api/gpu/replay", json={"preset": PRESET, "panels": ["fixed_window"]})
    assert r.status_code == 422 and r.json()["field"] == "panels"
    r = client.post("/api/gpu/replay", json={"preset": "nope"})
    assert r.status_code == 422 and r.json()["field"] == "preset"


def test_openapi_lists_exactly_the_routes(client):
    r = client.get("/api/openapi.json")
    assert r.status_code == 200
    doc = r.json()
    assert doc["openapi"].startswith("3.1")
    served = set()
    for route in routes:
        for method in route.methods - {"HEAD"}:
            served.add((method.lower(), "/api" + route.path.replace(":path}", "}")))
    documented = {(m, path) for path, ops in doc["paths"].items() for m in ops}
    assert documented == served
    schema = doc["paths"]["/api/run"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert schema["properties"]["duration"]["maximum"] == 100000


def test_unknown_api_path_and_wrong_method_are_json(client):
    r = client.get("/api/nope")
    assert r.status_code == 404 and r.json()["field"] == "path"
    r = client.get("/api/run")
    assert r.status_code == 405 and r.json()["field"] == "method"
    assert "POST" in r.headers["allow"]
