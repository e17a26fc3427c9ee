"""Ordinary faults are not 500s: dead workers are detected before they get work and
health says so; a worker killed mid-run is a JSON 503 with Retry-After; workers die with their
parent; SIGTERM during a run longer than the grace period is a JSON 503, then exit 0; a client
that hangs up mid-body or mid-download is not an error and logs no traceback. And (issue 27 §4):
a client that hangs up mid-run cancels its job; every such request logs one line that says
what happened; a download cut by its worker's death is not logged as a bug of the app."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from .harness import start_server, stop_server

pytestmark = pytest.mark.slow  # real server processes and timeouts: `make test` runs it, `make check` does not

PRESET = "ratelimit-burst"
SLOW = {"preset": PRESET, "duration": 200_000}  # about 4.4 M events: many seconds of work
ENV = {"CONTENTION_WORKERS": "2", "CONTENTION_MAX_EVENTS": "100000000", "CONTENTION_MAX_DURATION": "10000000"}


def wait_until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


def state(pid: int) -> str:
    """The process's state letter (R running, S sleeping, Z zombie), or "" once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def alive(pid: int) -> bool:
    return state(pid) not in ("", "Z")


def health(server) -> dict:
    return httpx.get(f"{server.url}/api/health", timeout=10).json()


@pytest.fixture
def server(tmp_path):
    s = start_server(tmp_path, ENV)
    yield s
    stop_server(s)


def in_background(fn) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def go() -> None:
        try:
            out["response"] = fn()
        except httpx.HTTPError as exc:  # the server was killed under it
            out["error"] = exc

    t = threading.Thread(target=go)
    t.start()
    return t, out


def test_killed_idle_workers_are_replaced_and_health_is_truthful(server):
    before = server.worker_pids()
    assert len(before) == 2
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not any(alive(p) for p in before), 5)
    assert health(server)["ready"] < 2  # never "ready": 2 with both workers dead
    for _ in range(2):
        r = httpx.post(f"{server.url}/api/run", json={"preset": PRESET, "duration": 1}, timeout=60)
        assert r.status_code == 200, r.text
    wait_until(lambda: health(server)["ready"] == 2)
    after = server.worker_pids()
    assert len(after) == 2 and not set(after) & set(before) and all(alive(p) for p in after)
    assert "died while idle" in server.log_text() and "Traceback" not in server.log_text()


def test_worker_killed_mid_run_is_503_with_retry_after(server):
    t, out = in_background(lambda: httpx.post(f"{server.url}/api/run", json=SLOW, timeout=120))
    wait_until(lambda: health(server)["busy"] == 1)
    time.sleep(0.5)  # the job has reached a worker
    busy = [p for p in server.worker_pids() if Path(f"/proc/{p}/stat").read_text().split()[2] == "R"]
    for pid in busy or server.worker_pids():
        os.kill(pid, signal.SIGKILL)
    t.join(60)
    r = out["response"]
    assert r.status_code == 503, r.text
    assert r.json()["field"] == "request" and "died" in r.json()["error"] and "signal 9" in r.json()["error"]
    assert int(r.headers["retry-after"]) >= 1
    wait_until(lambda: health(server)["ready"] == 2)
    assert httpx.post(f"{server.url}/api/run", json={"preset": PRESET, "duration": 1}, timeout=60).status_code == 200
    assert "Traceback" not in server.log_text()


def test_workers_die_with_the_server(tmp_path):
    s = start_server(tmp_path, ENV)
    try:
        workers = s.worker_pids("all")
        assert len(workers) == 4  # two for runs, two for trace downloads
        t, _ = in_background(lambda: httpx.post(f"{s.url}/api/run", json=SLOW, timeout=60))
        wait_until(lambda: health(s)["busy"] == 1)
        s.proc.kill()  # SIGKILL: no shutdown code runs in the server
        s.proc.wait(10)
        t0 = time.monotonic()
        wait_until(lambda: not any(alive(p) for p in workers), 10)
        assert time.monotonic() - t0 < 5  # the busy worker too, not only when its run ends
        t.join(30)
    finally:
        for pid in s.worker_pids("all"):
            os.kill(pid, signal.SIGKILL)


def test_sigterm_during_a_run_longer_than_the_grace_is_503_then_exit(tmp_path):
    s = start_server(tmp_path, {**ENV, "CONTENTION_SHUTDOWN_GRACE": "2"})
    try:
        t, out = in_background(lambda: httpx.post(f"{s.url}/api/run", json=SLOW, timeout=60))
        wait_until(lambda: health(s)["busy"] == 1)
        s.proc.send_signal(signal.SIGTERM)
        t.join(30)
        r = out["response"]
        assert r.status_code == 503, r.text
        assert r.headers["content-type"] == "application/json"
        assert "shutting down" in r.json()["error"] and int(r.headers["retry-after"]) >= 1
        assert s.proc.wait(timeout=30) == 0
        log = s.log_text()
        assert "Traceback" not in log and "Cancel" not in log  # answered before uvicorn's own cancel
    finally:
        stop_server(s)


def test_client_gone_mid_body_is_not_an_error(server):
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 500\r\n\r\n{"preset": "ratel'
        )
        time.sleep(0.3)
    wait_until(lambda: "client disconnected during the request body" in server.log_text(), 10)
    assert health(server)["ok"]
    log = server.log_text()
    assert "Traceback" not in log and "internal error" not in log and '"POST /api/run" 500' not in log
    lines = [line for line in log.splitlines() if "POST /api/run" in line or "disconnected" in line]
    assert len(lines) == 1, lines  # one line, and no 400 that was never sent
    assert '"POST /api/run" - 0B' in lines[0] and "client disconnected during the request body" in lines[0]


def test_client_gone_mid_run_cancels_the_job(server):
    host, port = server.url.removeprefix("http://").split(":")
    body = json.dumps(SLOW).encode()
    head = b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        wait_until(lambda: health(server)["busy"] == 1)
        wait_until(lambda: any(state(p) == "R" for p in server.worker_pids()), 10)  # the job has reached a worker
        running = [p for p in server.worker_pids() if state(p) == "R"]
    t0 = time.monotonic()
    wait_until(lambda: not any(alive(p) for p in running), 5)  # the run alone takes many seconds
    assert time.monotonic() - t0 < 3
    wait_until(lambda: health(server)["busy"] == 0 and health(server)["ready"] == 2, 30)
    log = server.log_text()
    lines = [line for line in log.splitlines() if "POST /api/run" in line]
    assert len(lines) == 1 and '"POST /api/run" - 0B' in lines[0], lines  # never "200"
    assert "client disconnected while its job ran; the job was cancelled" in lines[0]
    assert "Traceback" not in log


def test_client_gone_mid_download_frees_its_worker(server):
    with httpx.stream("GET", f"{server.url}/api/trace/{PRESET}", params={"duration": 3000}, timeout=30) as r:
        assert r.status_code == 200
        next(r.iter_bytes())  # one chunk, then hang up
    wait_until(lambda: health(server)["ok"] and len(server.worker_pids("trace")) == 2, 20)
    for _ in range(3):  # more downloads than trace workers: each one's worker came back
        r = httpx.get(f"{server.url}/api/trace/{PRESET}", params={"duration": 5}, timeout=30)
        assert r.status_code == 200 and r.text.endswith("\n")
    assert "Traceback" not in server.log_text()


def test_trace_worker_killed_mid_download_cuts_the_transfer(server):
    with pytest.raises(httpx.RemoteProtocolError):  # never a complete-looking file
        with httpx.stream("GET", f"{server.url}/api/trace/cache-scan", params={"duration": 3000}, timeout=30) as r:
            assert r.status_code == 200
            for i, _ in enumerate(r.iter_bytes()):
                if i == 0:
                    for pid in server.worker_pids("trace"):
                        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: "trace download of cache-scan ended early" in server.log_text(), 10)
    wait_until(lambda: len(server.worker_pids("trace")) == 2, 20)
    r = httpx.get(f"{server.url}/api/trace/{PRESET}", params={"duration": 5}, timeout=30)
    assert r.status_code == 200
    log = server.log_text()
    assert "Traceback" not in log and "internal error" not in log
    assert "ASGI callable" not in log  # uvicorn's words for an app that left an answer unfinished
    cut = [line for line in log.splitlines() if "/api/trace/cache-scan" in line]
    assert len(cut) == 1 and "(cut: trace download of cache-scan ended early" in cut[0], cut
