"""The only place Contention reads the wall clock: ``contention bench`` timings and the terminal
progress bar of long ``contention run``s. ``sims/`` never does (its time is the virtual clock);
``sims.cli`` imports this module lazily, inside those two commands.

Bench figures are simulation throughput per preset, the median of several runs. The stream is
generated before the clock starts, so the figures are the panels' own cost.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time

from sims.core import presets
from sims.core.scenario import Scenario


class Progress:
    """A progress bar on stderr, shown only on a terminal and only once a run passes 1 s."""

    def __init__(self, label: str, enabled: bool | None = None) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.start = time.perf_counter()
        self.shown = False

    def update(self, frac: float, note: str = "") -> None:
        """Redraw at ``frac`` (0..1), with an optional short ``note`` (e.g. "12/40 runs, ETA 30 s")."""
        if not self.enabled or time.perf_counter() - self.start < 1.0:
            return
        self.shown = True
        width = 30
        done = int(frac * width)
        sys.stderr.write(f"\r{self.label} [{'#' * done}{'.' * (width - done)}] {frac * 100:5.1f}% {note[:40]:<40}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * (len(self.label) + 86) + "\r")
            sys.stderr.flush()


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
