"""What the CLI prints: the side-by-side table, and the progress bar when there is a terminal.

Wall time lives outside sims/: the bar comes from the harness (``contention_harness``, beside sims/),
which is absent when sims/ runs alone (in Pyodide, for example); then there is no bar.
"""

from __future__ import annotations

import sys

from sims.core.scenario import Scenario


def harness():
    """The wall-clock harness (``contention_harness``, beside sims/): bench timings and the
    progress bar. None when it is absent (sims/ alone, e.g. in Pyodide)."""
    import importlib

    try:
        return importlib.import_module("contention_harness")
    except ModuleNotFoundError as exc:
        if exc.name != "contention_harness":
            raise
        return None


def interactive() -> bool:
    try:
        return sys.stdout.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def run_with_progress(sc: Scenario, label: str) -> Scenario:
    """Run to the end in 100 chunks, with the harness's progress bar when there is a terminal to
    draw it on and the harness to time it (wall time lives outside sims/)."""
    timer = harness() if interactive() else None
    bar = timer.Progress(label) if timer is not None else None
    chunks = 100
    for k in range(1, chunks + 1):
        sc.advance(sc.duration * k / chunks)
        if bar is not None:
            bar.update(k / chunks)
    if bar is not None:
        bar.close()
    return sc


def fmt(v: object) -> str:
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v)}" if abs(v) >= 1000 else f"{v:g}"
        return f"{v:.4g}"
    return str(v)


def table(result: dict) -> str:
    """The side-by-side table: one row per metric, one column per panel."""
    panels = result["panels"]
    names = list(panels)
    metrics: list[str] = []
    for m in panels.values():
        for k in m:
            if k not in metrics:
                metrics.append(k)
    rows = [["metric", *names]] + [[k, *(fmt(panels[n].get(k, "")) for n in names)] for k in metrics]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = [
        f"{result['preset']} ({result['topic']})  seed={result['seed']}  duration={result['duration']:g}s  "
        f"stream={result['stream_sha256'][:12]}",
    ]
    for j, r in enumerate(rows):
        out.append("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


MAX_MESSAGE = 1000  # characters of an error line


def one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."
