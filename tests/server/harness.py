"""Start and stop real ``contention serve`` processes on 127.0.0.1 (a free port each), each over
a small fake dist/ whose build stamp lies in the future, so the server never rebuilds it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
SECRET = "do-not-serve-this-secret"
INLINE_SCRIPT = "\n  document.title = 'inline';\n"
INDEX_HTML = (
    "<!doctype html><title>t</title><p>home</p>"
    f'<script type="application/json">{{"data": 1}}</script><script>{INLINE_SCRIPT}</script>'
)


@dataclass
class Server:
    url: str
    proc: subprocess.Popen
    log: Path
    dist: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def worker_pids(self, kind: str = "run") -> list[int]:
        """The server's worker processes of one kind (``run``, ``trace``, ``gpu`` or ``all``),
        from /proc: children started by multiprocessing, named ``KIND-worker``."""
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        children = [int(p) for p in path.read_text().split()] if path.exists() else []
        workers = [pid for pid in children if b"spawn_main" in cmdline(pid)]  # not the resource tracker
        return workers if kind == "all" else [pid for pid in workers if comm(pid) == f"{kind}-worker"]


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_dist(base: Path) -> Path:
    """A small dist/ with one file per MIME type, an embed page, and a secret just outside it."""
    dist = base / "dist"
    (dist / "sub").mkdir(parents=True)
    (dist / "embed").mkdir()
    (dist / "pyodide").mkdir()
    (dist / "index.html").write_text(INDEX_HTML)
    (dist / "sub" / "index.html").write_text("<!doctype html><p>sub</p>")
    (dist / "embed" / "index.html").write_text("<!doctype html><p>embed</p>")
    (dist / "embed.js").write_text("export {};\n")
    (dist / "app.mjs").write_text("export const x = 1;\n")
    (dist / "style.css").write_text("body{}\n")
    (dist / "data.json").write_text("{}\n")
    (dist / "sims.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    (dist / "pyodide" / "pyodide.asm.wasm").write_bytes(b"\x00asm\x01\x00\x00\x00")
    (dist / "pyodide" / "pyodide.mjs").write_text("export {};\n")
    (base / "secret.txt").write_text(SECRET)
    (dist / "escape").symlink_to(base / "secret.txt")
    stamp = dist / ".contention-build"
    stamp.write_text("test\n")
    future = time.time() + 7 * 86400  # newer than any source: the server never rebuilds this fake site
    os.utime(stamp, (future, future))
    return dist


def start_server(
    base: Path, env: dict[str, str], args: tuple[str, ...] = (), timeout: float = 60.0, dist: Path | None = None
) -> Server:
    """A server over ``dist`` (a built site, whose stamp is moved into the future) or a fake one."""
    if dist is None:
        dist = make_dist(base)
    else:
        stamp = dist / ".contention-build"
        stamp.write_text("test\n")
        os.utime(stamp, (time.time() + 7 * 86400,) * 2)
    port = free_port()
    log = base / "server.log"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CONTENTION_")} | env
    cmd = [sys.executable, "-m", "sims", "serve", "--port", str(port), "--dist", str(dist), *args]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            health = httpx.get(f"{url}/api/health", timeout=1.0).json()
            if health["ready"] == health["workers"]:  # every worker has started
                return Server(url, proc, log, dist)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"server did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


def stop_server(server: Server) -> None:
    if server.proc.poll() is None:
        server.proc.terminate()
        try:
            server.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait(timeout=5)
