"""The server's bounds: body size (413), duration and event count (422 naming the limit), run
timeout (422; the worker is killed and replaced), concurrency (429 with Retry-After)."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from .harness import cmdline

pytestmark = pytest.mark.slow  # real server processes and timeouts: `make test` runs it, `make check` does not

PRESET = "ratelimit-burst"


def test_body_over_the_limit_is_413(tight_server):
    body = '{"preset": "ratelimit-burst", "pad": "' + "x" * 2000 + '"}'
    r = httpx.post(f"{tight_server.url}/api/run", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert r.json() == {"error": "request body over 1024 bytes", "field": "body", "limit": "max_body_bytes"}


def test_chunked_body_over_the_limit_is_413(tight_server):
    def chunks():
        yield b'{"preset": "ratelimit-burst", "pad": "'
        for _ in range(10):
            yield b"x" * 200
        yield b'"}'

    r = httpx.post(  # no Content-Length: counted while read
        f"{tight_server.url}/api/run", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413 and r.json()["field"] == "body"


def test_duration_over_the_limit_is_422(client):
    r = client.post("/api/run", json={"preset": PRESET, "duration": 100001})
    assert r.status_code == 422
    assert r.json()["field"] == "duration" and r.json()["limit"] == "max_duration"
    assert "max_duration" in r.json()["error"]


def test_event_count_over_the_limit_is_422(client):
    r = client.post("/api/run", json={"preset": PRESET, "duration": 15000})  # about 330,000 events
    assert r.status_code == 422
    assert r.json()["field"] == "duration" and r.json()["limit"] == "max_events"
    assert "300000" in r.json()["error"]


def test_run_timeout_is_422_and_the_pool_recovers(tight_server):
    url = f"{tight_server.url}/api/run"
    before = tight_server.worker_pids()
    r = httpx.post(
        url, json={"preset": PRESET, "duration": 200_000}, timeout=60
    )  # 4.4 M events (under the 5 M bound): many seconds
    assert r.status_code == 422
    assert r.json()["field"] == "duration" and r.json()["limit"] == "run_timeout"
    assert "2 s" in r.json()["error"]
    deadline = time.monotonic() + 30
    while tight_server.worker_pids() in ([], before) and time.monotonic() < deadline:
        time.sleep(0.05)
    after = tight_server.worker_pids()
    assert len(after) == len(before) == 1 and after != before  # the runaway worker was killed and replaced
    assert b"spawn_main" not in cmdline(before[0])  # gone (or its pid reused by something else)
    ok = httpx.post(url, json={"preset": PRESET, "duration": 1}, timeout=30)
    assert ok.status_code == 200 and ok.json()["panels"]


def test_concurrency_limit_is_429_with_retry_after(main_server):
    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=main_server.url, timeout=60) as c:
            body = {"preset": PRESET, "duration": 3000}
            return await asyncio.gather(*(c.post("/api/run", json=body) for _ in range(12)))

    responses = asyncio.run(go())
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) == {200, 429}, statuses
    assert statuses.count(200) >= 4  # two running and two queued are always admitted
    for r in responses:
        if r.status_code == 429:
            assert int(r.headers["retry-after"]) >= 1
            assert r.json()["field"] == "request" and r.json()["limit"] == "concurrency"
