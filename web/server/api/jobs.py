"""What the API runs: plain functions over ``sims`` (standard library only), called in the
worker processes for runs and in a thread for trace downloads.

Each job first counts the stream it would build, stopping at ``max_events + 1``, so a request
past the event bound is refused before anything large is held in memory.
"""

from __future__ import annotations

from collections.abc import Iterator

from sims.core import api, presets, stream


class LimitExceeded(ValueError):
    """A request past one of the server's bounds; ``limit`` names it (e.g. ``max_events``)."""

    def __init__(self, limit: str, field: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.field = field


def count_events(preset: presets.Preset, seed: int, until: float, cap: int) -> int:
    """Events in the stream up to ``until``, counted without keeping them; stops past ``cap``."""
    n = sum(1 for e in preset.events if e["t"] <= until)
    for _ in stream.generate(preset.workload_kind, preset.workload, seed, until):
        n += 1
        if n > cap:
            break
    return n


def check_events(preset: presets.Preset, seed: int, duration: float, max_events: int) -> None:
    n = count_events(preset, seed, stream.horizon(preset, duration), max_events)
    if n > max_events:
        raise LimitExceeded(
            "max_events",
            "duration",
            f"this run needs more than {max_events} stream events (limit max_events); ask for a shorter duration",
        )


def run(preset: str, seed: int | None, duration: float | None, panels: list[str] | None, max_events: int) -> dict:
    """The ``run --json`` object, after the event bound is checked."""
    p = presets.load(preset)
    check_events(p, p.seed if seed is None else seed, p.duration if duration is None else duration, max_events)
    return api.run(preset, seed, duration, panels)


def trace_lines(preset: str, seed: int, duration: float, max_events: int, chunk: int = 2000) -> Iterator[str]:
    """The canonical stream up to ``duration`` (what ``run --trace-out`` writes), in chunks of
    ``chunk`` lines; each chunk ends with a newline."""
    p = presets.load(preset)
    check_events(p, seed, duration, max_events)
    events, end = stream.for_run(p, seed, duration)
    for lo in range(0, end, chunk):
        yield "".join(stream.canonical_line(ev) + "\n" for ev in events[lo : min(end, lo + chunk)])


def warm() -> int:
    """Load every preset once, so the first real job pays no start-up cost. A broken preset is
    skipped here (a worker must start anyway) and reported when someone asks for it."""
    loaded = 0
    for name in presets.preset_names():
        try:
            presets.load(name)
            loaded += 1
        except Exception:
            pass
    return loaded
