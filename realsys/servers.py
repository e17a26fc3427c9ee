"""Start and stop a real server on a free loopback port, in a temporary folder it owns."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


class RealError(RuntimeError):
    """The real system is missing or misbehaved: one line for the CLI (exit 2)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def which(name: str, package: str) -> str:
    for path in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if path and Path(path).exists():
            return path
    raise RealError(f"{name} is not installed (Debian package {package}; make test installs it)")


def wait_port(port: int, proc: subprocess.Popen, log: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-300:] if log.exists() else ""
            raise RealError(f"the server exited at start ({proc.returncode}): {' '.join(tail.split())}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.02)
    raise RealError(f"the server did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


@contextlib.contextmanager
def running(argv: list[str], port: int, workdir: Path, log: Path) -> Iterator[subprocess.Popen]:
    """Run ``argv`` until the block ends, however it ends; the process group dies with it."""
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.DEVNULL, stderr=log.open("ab"), start_new_session=True)
    try:
        wait_port(port, proc, log)
        yield proc
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


@contextlib.contextmanager
def workdir(prefix: str) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RealError(f"--address {text!r}: expected HOST:PORT")
    return host, int(port)
