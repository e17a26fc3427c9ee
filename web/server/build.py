"""Build dist/ before serving when it is missing or stale, with the harness's progress bar on the
terminal.

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

from contention_harness import Progress
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


def _builder_takes_progress(build: Callable) -> bool:
    try:
        return "progress" in inspect.signature(build).parameters
    except (TypeError, ValueError):
        return False


def run_build(dist: Path, build: Callable, out: TextIO | None = None) -> None:
    """``build(dist[, progress=...])`` under the harness's progress bar, whose clock a ticker
    keeps moving while a step works (plain start and finish lines where ``out`` is no terminal).
    Writes the stamp when the build returns."""
    out = out if out is not None else sys.stderr
    label = f"building {dist}"
    bar = Progress(label, out=out, delay=0.0)
    if not bar.enabled:
        print(f"{label} ...", file=out, flush=True)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.2):
            bar.draw()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        if _builder_takes_progress(build):
            build(dist, progress=lambda what, frac: bar.update(frac, what))  # sitebuild's (label, fraction)
        else:
            build(dist)
    finally:
        stop.set()
        ticker.join()
    dist.mkdir(parents=True, exist_ok=True)
    (dist / STAMP).write_text(f"built {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    bar.close(f"built {dist} in {time.perf_counter() - bar.start:.1f} s")


def ensure_built(dist: Path, out: TextIO | None = None) -> str | None:
    """Build ``dist`` with ``sitebuild.build`` when missing or stale; returns the reason it
    built, or None when it was up to date."""
    import sitebuild

    reason = stale_reason(dist, Path(sitebuild.ROOT))
    if reason is not None:
        print(f"{reason}: building the site", file=out or sys.stderr, flush=True)
        run_build(dist, sitebuild.build, out)
    return reason
