"""Where Contention reads the wall clock: ``contention bench`` timings and the one terminal
progress bar (long ``contention run``s, sweeps, the server's site build). ``sims/`` never does (its
time is the virtual clock); ``sims.cli`` imports this module lazily, inside those commands.

Bench figures are simulation throughput per preset, the median of several runs. The stream is
generated before the clock starts, so the figures are the panels' own cost.
"""

from __future__ import annotations

import platform
import statistics
import sys
import threading
import time
from typing import TextIO

from sims.core import presets
from sims.core.scenario import Scenario


class Progress:
    """A one-line progress bar (``\\r`` redraws) on ``out`` (stderr), drawn only where ``out`` is a
    terminal (or ``enabled``) and only once ``delay`` seconds have passed, so a short run shows
    nothing. The one bar of the project: ``contention run``, ``sweep`` and the server's site build.

    ``update(frac, note)`` moves it (``frac`` None: not known yet); ``draw()`` redraws with the
    clock moved on, so a thread may call it while a long step works. Safe across threads."""

    width = 30

    def __init__(
        self, label: str, enabled: bool | None = None, *, out: TextIO | None = None, delay: float = 1.0
    ) -> None:
        self.label = label
        self.out = out if out is not None else sys.stderr
        self.enabled = _isatty(self.out) if enabled is None else enabled
        self.delay = delay
        self.start = time.perf_counter()
        self.shown = False
        self.frac: float | None = None
        self.note = ""
        self._lock = threading.Lock()

    def update(self, frac: float | None, note: str = "") -> None:
        """Redraw at ``frac`` (0..1), with an optional short ``note`` (e.g. "12/40 runs, ETA 30 s")."""
        self.frac = None if frac is None else max(0.0, min(1.0, frac))
        self.note = note
        self.draw()

    def draw(self) -> None:
        elapsed = time.perf_counter() - self.start
        if not self.enabled or elapsed < self.delay:
            return
        if self.frac is None:
            bar, pct = "." * self.width, "  ...."
        else:
            done = int(self.frac * self.width)
            bar, pct = "#" * done + "." * (self.width - done), f"{self.frac * 100:5.1f}%"
        with self._lock:
            self.shown = True
            self.out.write(f"\r{self.label} [{bar}] {pct} {elapsed:5.1f}s {self.note[:40]:<40}")
            self.out.flush()

    def close(self, message: str = "") -> None:
        """Wipe the bar (if it was drawn), then print ``message`` on a line of its own (if any)."""
        with self._lock:
            if self.shown:
                self.out.write("\r" + " " * (len(self.label) + self.width + 60) + "\r")
                self.out.flush()
            if message:
                print(message, file=self.out, flush=True)


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


MIN_WALL = 0.2  # a short preset is run again until this much time is measured, then averaged


def _time_run(preset, panels=None) -> tuple[float, int, float]:
    """Wall seconds of one run (stream built beforehand), averaged over enough repeats that a
    millisecond-long preset is not all timer noise."""
    total, n = 0.0, 0
    while total < MIN_WALL or n == 0:
        sc = Scenario(preset, panels=panels)
        t0 = time.perf_counter()
        sc.run()
        total += time.perf_counter() - t0
        n += 1
    return total / n, sc.events_done, sc.duration


def run(names: list[str], runs: int = 3, per_panel: bool = True, progress: bool = False) -> dict:
    out = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "runs": runs,
        "presets": {},
    }
    for name in names:
        if progress:
            print(f"bench {name} ...", file=sys.stderr, flush=True)
        preset = presets.load(name)
        walls = []
        events = 0
        for _ in range(runs):
            wall, events, duration = _time_run(preset)
            walls.append(wall)
        wall = statistics.median(walls)
        entry = {
            "events": events,
            "duration": preset.duration,
            "wall_s": wall,
            "events_per_s": events / wall if wall else 0.0,
            "virtual_s_per_wall_s": preset.duration / wall if wall else 0.0,
            "panels": {},
        }
        if per_panel and len(preset.panels) > 1:
            for spec in preset.panels:
                pw = statistics.median(_time_run(preset, [spec.name])[0] for _ in range(runs))
                entry["panels"][spec.name] = {"wall_s": pw, "requests_per_s": events / pw if pw else 0.0}
        elif per_panel:
            spec = preset.panels[0]
            entry["panels"][spec.name] = {"wall_s": wall, "requests_per_s": entry["events_per_s"]}
        out["presets"][name] = entry
    return out


def table(report: dict) -> str:
    lines = [
        f"Python {report['python']} ({report['implementation']}), median of {report['runs']} runs",
        f"{'preset':<24} {'events':>9} {'events/s':>12} {'virtual x':>10}  slowest panel (req/s)",
    ]
    for name, e in report["presets"].items():
        slow = min(e["panels"].items(), key=lambda kv: kv[1]["requests_per_s"], default=None)
        slow_s = f"{slow[0]} {slow[1]['requests_per_s']:,.0f}" if slow else ""
        lines.append(
            f"{name:<24} {e['events']:>9} {e['events_per_s']:>12,.0f} {e['virtual_s_per_wall_s']:>10,.1f}  {slow_s}"
        )
    return "\n".join(lines)
