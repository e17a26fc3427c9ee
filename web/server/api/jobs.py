"""What the API runs: plain functions over ``sims`` (standard library only), called in the
worker processes: runs, and trace downloads (a generator, streamed chunk by chunk).

Each job first counts the stream it would build, stopping at ``max_events + 1``, so a request
past the event bound is refused before anything large is held in memory.
"""

from __future__ import annotations

from collections.abc import Iterator

from sims.core import api, presets, stream
from sims.core.limits import InputError
from web.server.api import catalog


class LimitExceeded(InputError):
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
    """Refuse a stream over ``max_events``, and a preset whose workload cannot be generated (its
    parameters are the preset file's: ``rate = 0`` divides by zero), before anything is run."""
    try:
        n = count_events(preset, seed, stream.horizon(preset, duration), max_events)
    except InputError:
        raise
    except Exception as exc:
        raise LimitExceeded(
            "",
            "preset",
            f"preset {preset.name}: its workload {preset.workload_kind!r} cannot be generated with these "
            f"parameters ({type(exc).__name__}: {exc})",
        ) from None
    if n > max_events:
        raise LimitExceeded(
            "max_events",
            "duration",
            f"this run needs more than {max_events} stream events (limit max_events); ask for a shorter duration",
        )


def run(preset: str, seed: int | None, duration: float | None, panels: list[str] | None, max_events: int) -> dict:
    """The ``run --json`` object, after the event bound is checked."""
    p = catalog.load(preset)
    check_events(p, p.seed if seed is None else seed, p.duration if duration is None else duration, max_events)
    return api.run(preset, seed, duration, panels)


def run_events(preset: presets.Preset, seed: int, duration: float) -> Iterator[dict]:
    """The events of ``stream.for_run(preset, seed, duration)`` up to ``duration``, generated one
    at a time instead of held in a list: the workload is generated to the same horizon (so its
    draws are the same) and merged with the preset's scheduled events the way ``stream.build``
    merges them (a scheduled event goes after workload events at the same instant)."""
    extra = [dict(e) for e in preset.events if e["t"] <= duration]
    extra.sort(key=lambda e: e["t"])  # stable: equal instants keep the file's order, as in build
    i = 0
    for ev in stream.generate(preset.workload_kind, preset.workload, seed, stream.horizon(preset, duration)):
        if ev["t"] > duration:
            break
        while i < len(extra) and extra[i]["t"] < ev["t"]:
            yield extra[i]
            i += 1
        yield ev
    yield from extra[i:]


def trace_chunks(preset: str, seed: int, duration: float, max_events: int, chunk: int = 2000) -> Iterator[bytes]:
    """The canonical stream up to ``duration`` (the bytes ``run --trace-out`` writes), as UTF-8
    chunks of ``chunk`` lines, each ending with a newline. The event bound is checked before
    the first chunk (an InputError then, which the pool reports as a rejection); nothing larger
    than one chunk is ever held."""
    p = catalog.load(preset)
    check_events(p, seed, duration, max_events)
    lines: list[str] = []
    for ev in run_events(p, seed, duration):
        lines.append(stream.canonical_line(ev))
        if len(lines) == chunk:
            yield ("\n".join(lines) + "\n").encode()
            lines = []
    if lines:
        yield ("\n".join(lines) + "\n").encode()


def warm() -> int:
    """Load every preset once, so the first real job pays no start-up cost. A broken preset is
    skipped here (a worker must start anyway; the server process logs it at start-up) and
    reported when someone asks for it."""
    loaded = 0
    for name in presets.preset_names():
        try:
            presets.load(name)
            loaded += 1
        except Exception:
            pass
    return loaded
