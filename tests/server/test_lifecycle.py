"""Start-up and shutdown: graceful exit on SIGTERM/SIGINT with a run in flight, --gpu without a
GPU, the warning for a public bind address, bad limits in the environment, build-if-stale."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from web.server import build as server_build

from .harness import ROOT, free_port, start_server

pytestmark = pytest.mark.slow  # real server processes and timeouts: `make test` runs it, `make check` does not

PRESET = "ratelimit-burst"


def wait_until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_finishes_in_flight_runs_then_exits_cleanly(tmp_path, sig):
    gpu = sig == signal.SIGTERM  # one of the two also covers --gpu on a machine without CUDA
    server = start_server(
        tmp_path, {"CONTENTION_WORKERS": "1", "CONTENTION_SHUTDOWN_GRACE": "60"}, ("--gpu",) if gpu else ()
    )
    try:
        if gpu:
            status = httpx.get(f"{server.url}/api/gpu", timeout=120).json()
            assert status["available"] is False and status["device"] is None and status["reason"]
            r = httpx.post(f"{server.url}/api/gpu/replay", json={"preset": PRESET, "duration": 1}, timeout=60)
            assert r.status_code == 503 and r.json()["field"] == "gpu"
            assert r.json()["error"].endswith(status["reason"])
        workers = server.worker_pids("run") + server.worker_pids("gpu")
        assert len(workers) == (2 if gpu else 1)
        result: dict = {}

        def slow_run() -> None:
            r = httpx.post(f"{server.url}/api/run", json={"preset": PRESET, "duration": 3000}, timeout=120)
            result["status"], result["json"] = r.status_code, r.json()

        t = threading.Thread(target=slow_run)
        t.start()
        wait_until(lambda: httpx.get(f"{server.url}/api/health").json()["busy"] == 1)
        server.proc.send_signal(sig)
        t.join(timeout=120)
        assert result.get("status") == 200, result  # the run in flight was answered
        assert result["json"]["panels"]["fixed_window"]["requests"] > 60000
        assert server.proc.wait(timeout=60) == 0
        log = server.log_text()
        assert f"signal {int(sig)}: finishing in-flight requests" in log and "workers stopped" in log
        assert "Traceback" not in log
        wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in workers), timeout=10)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def test_public_bind_warns_and_bad_limits_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTENTION_")} | {"CONTENTION_RUN_TIMEOUT": "soon"}
    cmd = [
        sys.executable,
        "-m",
        "sims",
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        str(free_port()),
        "--dist",
        str(tmp_path / "dist"),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "warning: binding 0.0.0.0, not 127.0.0.1" in proc.stderr
    assert "CONTENTION_RUN_TIMEOUT: expected a number, got 'soon'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "dist").exists()  # refused before building or binding anything


# -- build if missing or stale -------------------------------------------------------------------
def make_sources(root: Path) -> Path:
    (root / "sims" / "__pycache__").mkdir(parents=True)
    (root / "sims" / "a.py").write_text("x = 1\n")
    (root / "web" / "static").mkdir(parents=True)
    (root / "web" / "static" / "site.css").write_text("body{}\n")
    (root / "web" / "pyodide").mkdir()
    (root / "web" / "pyodide" / "bridge.py").write_text("\n")
    (root / "sitebuild").mkdir()
    (root / "sitebuild" / "pages.py").write_text("\n")
    (root / "README.md").write_text("not a source\n")
    return root


def set_mtime(path: Path, t: float) -> None:
    os.utime(path, (t, t))


def test_stale_reason(tmp_path):
    root = make_sources(tmp_path / "root")
    dist = tmp_path / "dist"
    assert "does not exist" in server_build.stale_reason(dist, root)
    dist.mkdir()
    assert "no finished build" in server_build.stale_reason(dist, root)
    now = time.time()
    for p in root.rglob("*"):
        set_mtime(p, now - 100)
    (dist / server_build.STAMP).write_text("x")
    set_mtime(dist / server_build.STAMP, now - 50)
    assert server_build.stale_reason(dist, root) is None
    (root / "sims" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"")  # never a reason
    assert server_build.stale_reason(dist, root) is None
    set_mtime(root / "README.md", now)  # not a source of the site
    assert server_build.stale_reason(dist, root) is None
    for rel in ("web/static/site.css", "web/pyodide/bridge.py", "sims/a.py", "sitebuild/pages.py"):
        set_mtime(root / rel, now)
        assert rel in server_build.stale_reason(dist, root)
        set_mtime(root / rel, now - 100)


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_run_build_reports_progress_and_stamps_last(tmp_path):
    calls = []

    def build(out: Path, progress=None) -> Path:  # the site builder's signature: progress(label, fraction)
        out.mkdir(parents=True)
        for i, label in enumerate(["templates", "presets", "pyodide"], 1):
            progress(label, i / 3)
            calls.append(label)
        assert not (out / server_build.STAMP).exists()
        return out

    term = FakeTerminal()
    server_build.run_build(tmp_path / "dist", build, term)
    assert calls == ["templates", "presets", "pyodide"]
    text = term.getvalue()
    assert "[##########" in text and "100.0%" in text and "pyodide" in text
    assert f"built {tmp_path / 'dist'} in" in text
    assert (tmp_path / "dist" / server_build.STAMP).is_file()


def test_failed_build_leaves_no_stamp(tmp_path):
    def build(out: Path) -> Path:  # a builder without a progress argument
        out.mkdir(parents=True)
        raise ValueError("broken template")

    with pytest.raises(ValueError):
        server_build.run_build(tmp_path / "dist", build, io.StringIO())
    assert not (tmp_path / "dist" / server_build.STAMP).exists()


def test_ensure_built_uses_site_build_once(tmp_path, monkeypatch):
    import sitebuild

    built = []

    def fake_build(out: Path, progress=None) -> Path:
        out.mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text("x")
        built.append(out)
        return out

    monkeypatch.setattr(sitebuild, "build", fake_build)
    dist = tmp_path / "dist"
    out = io.StringIO()
    assert "does not exist" in server_build.ensure_built(dist, out)
    set_mtime(dist / server_build.STAMP, time.time() + 3600)  # sources here may change while tests run
    assert server_build.ensure_built(dist, out) is None
    assert built == [dist]
    assert "building the site" in out.getvalue() and "built" in out.getvalue()


# -- the address is bound before anything starts ------------------------------------------------
def serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTENTION_")}
    cmd = [sys.executable, "-m", "sims", "serve", "--dist", str(tmp_path / "dist"), *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_port_in_use_is_one_line_before_any_build_or_worker(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        t0 = time.monotonic()
        proc = serve(tmp_path, "--port", str(port))
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cannot listen on 127.0.0.1:") and "in use" in lines[0]
    assert "Traceback" not in proc.stderr and "worker" not in proc.stderr
    assert not (tmp_path / "dist").exists()  # refused before building
    assert time.monotonic() - t0 < 20  # no worker was started (each one imports and warms up)


@pytest.mark.parametrize("host", ["256.1.1.1", "no-such-host.invalid"])
def test_bad_host_is_one_line(tmp_path, host):
    proc = serve(tmp_path, "--host", host, "--port", str(free_port()))
    assert proc.returncode == 2, proc.stderr
    lines = [
        x for x in proc.stderr.strip().splitlines() if not x.startswith("warning")
    ]  # CLI: malformed; server: cannot bind
    assert len(lines) == 1 and host in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "dist").exists()


def test_no_import_cycle_between_the_server_and_the_site_build():
    """The site build never imports the server; the server reads the build's SOURCES and STAMP
    and calls ``sitebuild.build`` lazily, so importing it loads none of the build's edges
    (jinja2)."""
    code = (
        "import sys\n"
        "import sitebuild\n"
        "assert not [m for m in sys.modules if m.startswith('web.server')], 'the site build imports the server'\n"
        "import web.server.app, web.server.build\n"
        "assert 'jinja2' not in sys.modules, 'importing the server loads the site build\\'s jinja2'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
