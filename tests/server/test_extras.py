"""``contention serve --sweep F`` and ``--real``, against real uvicorn."""

from __future__ import annotations

import json
import shutil

import httpx
import pytest

from .harness import start_server, stop_server

pytestmark = pytest.mark.slow  # real server processes and timeouts: `make test` runs it, `make check` does not

ENV = {"CONTENTION_WORKERS": "1", "CONTENTION_QUEUE": "1"}
HEADERS = {"content-type": "application/json"}


def _rows() -> list[dict]:
    return [
        {
            "params": {"panels.lru.size": size},
            "seed": seed,
            "panel": "lru",
            "metrics": {"hit_ratio": size / 100 + seed / 1000},
            "error": None,
        }
        for size in (10, 20, 30)
        for seed in (1, 2)
    ]


def test_without_flags_there_is_no_sweep_page_and_real_says_how(client):
    assert client.get("/sweep/").status_code == 404
    info = client.get("/api/real").json()
    assert info["enabled"] is False and "--real" in info["redis"]["reason"]
    r = client.post("/api/real/replay", json={"preset": "cache-zipf", "against": "redis"})
    assert r.status_code == 503 and r.json()["field"] == "against"


def test_sweep_page_shows_the_results_file(tmp_path):
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    server = start_server(tmp_path, ENV, ("--sweep", str(results)))
    try:
        page = httpx.get(f"{server.url}/sweep/", timeout=30)
        assert page.status_code == 200 and "new uPlot(" in page.text and "panels.lru.size" in page.text
        assert "sha256-" in page.headers["content-security-policy"]  # its inline scripts run by hash only
        results.write_text("not json\n")
        bad = httpx.get(f"{server.url}/sweep/", timeout=30)
        assert bad.status_code == 422 and "r.jsonl:1" in bad.json()["error"]
    finally:
        stop_server(server)


def test_real_replays_are_checked_before_anything_starts(tmp_path):
    server = start_server(tmp_path, ENV, ("--real",))
    try:
        with httpx.Client(base_url=server.url, timeout=120) as c:
            info = c.get("/api/real").json()
            assert info["enabled"] is True and info["redis"]["topic"] == "cache"
            for body, field in (
                ({"preset": "cache-zipf", "against": "memcached"}, "against"),
                ({"preset": "ratelimit-burst", "against": "redis"}, "preset"),
                ({"preset": "cache-zipf", "against": "redis", "speed": 0}, "speed"),
                ({"preset": "cache-zipf", "against": "redis", "duration": 60, "speed": 0.25}, "duration"),
                ({"preset": "cache-zipf", "against": "redis", "nope": 1}, "nope"),
            ):
                r = c.post("/api/real/replay", json=body)
                assert r.status_code == 422 and r.json()["field"] == field, (body, r.text)
            if not shutil.which("nginx") and not shutil.os.path.exists("/usr/sbin/nginx"):
                pytest.skip("nginx is not installed (make test installs it)")
            r = c.post("/api/real/replay", json={"preset": "ratelimit-nginx", "against": "nginx", "duration": 4})
            assert r.status_code == 200, r.text
            panels = r.json()["panels"]
            assert panels["nginx limit_req nodelay (measured)"]["agreement_on_sent_times"] >= 0.99
    finally:
        stop_server(server)
