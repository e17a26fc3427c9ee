"""The shared stream: a preset's workload events plus its scheduled events, in time order.

Canonical form: one JSON object per event, sorted keys, no spaces, ``repr`` floats; the SHA-256
of the lines joined by "\n" is ``stream_sha256``. Events are plain dicts with at least ``t``
(virtual seconds, float) and ``kind``; panels must treat them as read-only.
"""

from __future__ import annotations

import hashlib
import json
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from pathlib import Path

from sims.core import registry
from sims.core.rng import derive


def generate(kind: str, params: dict, seed: int, duration: float) -> Iterator[dict]:
    """Events of workload ``kind`` up to ``duration`` from the stream generator of ``seed``."""
    wl = registry.get_workload(kind)
    rng = derive(seed, "stream")
    for ev in wl.fn(params, rng, duration):
        if ev["t"] > duration:
            return
        yield ev


def build(preset, seed: int, horizon: float) -> list[dict]:
    """The preset's stream up to ``horizon``: workload events merged with ``preset.events``
    (a scheduled event goes after workload events at the same instant)."""
    events = list(generate(preset.workload_kind, preset.workload, seed, horizon))
    extra = [dict(e) for e in preset.events if e["t"] <= horizon]
    if extra:
        merged = [(e["t"], 0, i, e) for i, e in enumerate(events)]
        merged += [(e["t"], 1, i, e) for i, e in enumerate(extra)]
        merged.sort(key=lambda x: (x[0], x[1], x[2]))
        events = [m[3] for m in merged]
    return events


def horizon(preset, duration: float) -> float:
    """How far a run's stream is built: oracles (OPT, sjf_oracle) look ahead over the preset's
    whole stream, so a run shorter than the preset is an exact prefix of the full one."""
    return max(duration, preset.duration)


def for_run(preset, seed: int, duration: float) -> tuple[list[dict], int]:
    """(the stream up to ``horizon``, how many of its events lie at or before ``duration``)."""
    events = build(preset, seed, horizon(preset, duration))
    return events, bisect_right([ev["t"] for ev in events], duration)


def canonical_line(ev: dict) -> str:
    return json.dumps(ev, sort_keys=True, separators=(",", ":"), allow_nan=False)


def sha256(events: Iterable[dict]) -> str:
    h = hashlib.sha256()
    first = True
    for ev in events:
        if not first:
            h.update(b"\n")
        h.update(canonical_line(ev).encode())
        first = False
    return h.hexdigest()


def write(events: Iterable[dict], path: str | Path) -> None:
    """Write the canonical JSON-lines form; a temp file renamed into place, so a failure
    never leaves half a trace behind."""
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for ev in events:
                f.write(canonical_line(ev))
                f.write("\n")
        tmp.replace(path)
    finally:
        if tmp.exists():
            tmp.unlink()


class TraceError(ValueError):
    """A malformed trace line: the message starts with file:line."""


def read(path: str | Path) -> list[dict]:
    """Read a canonical stream back; every event needs a numeric ``t`` (non-decreasing) and a
    string ``kind``."""
    path = Path(path)
    events = []
    last = float("-inf")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror}") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{path}:{n}: not a JSON object ({exc.msg})") from None
        if not isinstance(ev, dict):
            raise TraceError(f"{path}:{n}: expected a JSON object")
        t = ev.get("t")
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise TraceError(f"{path}:{n}: field 't' must be a number")
        if t < last:
            raise TraceError(f"{path}:{n}: time {t} goes backwards (previous {last})")
        if not isinstance(ev.get("kind"), str):
            raise TraceError(f"{path}:{n}: field 'kind' must be a string")
        ev["t"] = float(t)
        last = ev["t"]
        events.append(ev)
    return events
