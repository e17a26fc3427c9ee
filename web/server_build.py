"""Build dist/ before serving when it is missing or stale, with a progress bar on the terminal.

Stale means: some source file of the build (``sitebuild.SOURCES``: sims/, presets/, the site build
with its templates, web/static/, web/pyodide/, or package-lock.json, which pins Pyodide) is newer
than the stamp file that a finished build leaves in dist/. The stamp is written last,
so an interrupted build is rebuilt next time.
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from sitebuild import SOURCES, STAMP  # standard library only at import


def newest_source(root: Path) -> tuple[float, Path | None]:
    """The newest modification time among the sources (0 when there are none)."""
    best, which = 0.0, None
    for rel in SOURCES:
        base = root / rel
        paths = [base] if base.is_file() else (p for p in base.rglob("*") if p.is_file()) if base.is_dir() else []
        for p in paths:
            if "__pycache__" in p.parts:
                continue
            m = p.stat().st_mtime
            if m > best:
                best, which = m, p
    return best, which


def stale_reason(dist: Path, root: Path) -> str | None:
    """Why dist/ needs a build, or None when it is up to date."""
    stamp = dist / STAMP
    if not stamp.is_file():
        return f"{dist} has no finished build" if dist.exists() else f"{dist} does not exist"
    newest, which = newest_source(root)
    if newest > stamp.stat().st_mtime:
        return f"{which.relative_to(root) if which else 'a source'} changed since the last build"
    return None


class ProgressBar:
    """A one-line bar on a terminal (``\\r`` redraws), plain start/finish lines elsewhere. Accepts
    ``update(frac)``, ``update(done, total)`` or ``update(done, total, label)``."""

    def __init__(self, label: str, out: TextIO | None = None, width: int = 30) -> None:
        self.out = out or sys.stderr
        self.tty = self.out.isatty()
        self.label = label
        self.width = width
        self.frac: float | None = None
        self.what = ""
        self.t0 = time.monotonic()
        self._lock = threading.Lock()
        if not self.tty:
            print(f"{label} ...", file=self.out, flush=True)

    def update(self, *args: object) -> None:
        nums = [a for a in args if isinstance(a, (int, float)) and not isinstance(a, bool)]
        words = [str(a) for a in args if isinstance(a, str)]
        if len(nums) >= 2 and nums[1]:
            self.frac = max(0.0, min(1.0, nums[0] / nums[1]))
        elif len(nums) == 1:
            self.frac = max(0.0, min(1.0, float(nums[0])))
        if words:
            self.what = words[0]
        self.draw()

    __call__ = update

    def draw(self) -> None:
        if not self.tty:
            return
        elapsed = time.monotonic() - self.t0
        if self.frac is None:  # no fractions from the builder: a bouncing block
            pos = int(elapsed * 8) % (2 * self.width - 2)
            pos = pos if pos < self.width else 2 * self.width - 2 - pos
            bar = "." * pos + "#" + "." * (self.width - pos - 1)
            pct = "  ...."
        else:
            done = int(self.frac * self.width)
            bar = "#" * done + "." * (self.width - done)
            pct = f"{self.frac * 100:5.1f}%"
        with self._lock:
            self.out.write(f"\r{self.label} [{bar}] {pct} {elapsed:5.1f}s {self.what[:30]:<30}")
            self.out.flush()

    def close(self, message: str) -> None:
        if self.tty:
            self.out.write("\r" + " " * (len(self.label) + self.width + 54) + "\r")
        print(message, file=self.out, flush=True)


def _builder_takes_progress(build: Callable) -> bool:
    try:
        return "progress" in inspect.signature(build).parameters
    except (TypeError, ValueError):
        return False


def run_build(dist: Path, build: Callable, out: TextIO | None = None) -> None:
    """``build(dist[, progress=bar])`` under a progress bar; the bar animates by itself while a
    builder without a progress argument works. Writes the stamp when the build returns."""
    bar = ProgressBar(f"building {dist}", out)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.2):
            bar.draw()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        if _builder_takes_progress(build):
            build(dist, progress=bar)
        else:
            build(dist)
    finally:
        stop.set()
        ticker.join()
    dist.mkdir(parents=True, exist_ok=True)
    (dist / STAMP).write_text(f"built {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    bar.close(f"built {dist} in {time.monotonic() - bar.t0:.1f} s")


def ensure_built(dist: Path, out: TextIO | None = None) -> str | None:
    """Build ``dist`` with ``sitebuild.build`` when missing or stale; returns the reason it
    built, or None when it was up to date."""
    import sitebuild

    reason = stale_reason(dist, Path(sitebuild.ROOT))
    if reason is not None:
        print(f"{reason}: building the site", file=out or sys.stderr, flush=True)
        run_build(dist, sitebuild.build, out)
    return reason
