"""The shared stream: a preset's workload events plus its scheduled events, in time order.

Canonical form: one JSON object per event, sorted keys, no spaces, ``repr`` floats; the SHA-256
of the lines joined by "\n" is ``stream_sha256``. Events are plain dicts with at least ``t``
(virtual seconds, float) and ``kind``; panels must treat them as read-only.
"""

from __future__ import annotations

import hashlib
import json
import os
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import NamedTuple

from sims.core import registry
from sims.core.limits import MAX_STREAM_EVENTS, InputError
from sims.core.rng import derive
from sims.core.trace import TraceError  # noqa: F401 (stream.TraceError: what read raises)


class Mark(NamedTuple):
    """A moment the workload itself causes (a scan starts, the working set moves, a burst begins),
    yielded by its generator among its events. A mark is no event: ``generate`` sets it aside (into
    ``marks`` when the caller asks), so no panel sees it and the stream hash never counts it; the
    charts draw it as a labelled rule."""

    t: float
    label: str


def generate(kind: str, params: dict, seed: int, duration: float, marks: list | None = None) -> Iterator[dict]:
    """Events of workload ``kind`` up to ``duration`` from the stream generator of ``seed``; the
    generator's marks up to ``duration`` go to ``marks`` (``{"t", "label"}``) when it is a list."""
    wl = registry.get_workload(kind)
    rng = derive(seed, "stream")
    for ev in wl.fn(params, rng, duration):
        if isinstance(ev, Mark):
            if marks is not None and ev.t <= duration:
                marks.append({"t": ev.t, "label": ev.label})
            continue
        if ev["t"] > duration:
            return
        yield ev


def build(preset, seed: int, horizon: float, marks: list | None = None) -> list[dict]:
    """The preset's stream up to ``horizon``: workload events merged with ``preset.events``
    (a scheduled event goes after workload events at the same instant). The workload's marks go
    to ``marks``, in time order, when it is a list."""
    found: list[dict] = []
    events = list(islice(generate(preset.workload_kind, preset.workload, seed, horizon, found), MAX_STREAM_EVENTS + 1))
    if len(events) > MAX_STREAM_EVENTS:
        raise InputError(
            f"{preset.name}: the stream passes {MAX_STREAM_EVENTS} events at t = {events[-1]['t']:g} s "
            f"(of {horizon:g} s); ask for a shorter duration or a lower rate"
        )
    extra = [dict(e) for e in preset.events if e["t"] <= horizon]
    if extra:
        merged = [(e["t"], 0, i, e) for i, e in enumerate(events)]
        merged += [(e["t"], 1, i, e) for i, e in enumerate(extra)]
        merged.sort(key=lambda x: (x[0], x[1], x[2]))
        events = [m[3] for m in merged]
    if marks is not None:
        marks += sorted(found, key=lambda m: m["t"])
    return events


def horizon(preset, duration: float) -> float:
    """How far a run's stream is built: oracles (OPT, sjf_oracle) look ahead over the preset's
    whole stream, so a run shorter than the preset is an exact prefix of the full one."""
    return max(duration, preset.duration)


def for_run(preset, seed: int, duration: float) -> tuple[list[dict], int]:
    """(the stream up to ``horizon``, how many of its events lie at or before ``duration``)."""
    events = build(preset, seed, horizon(preset, duration))
    return events, bisect_right([ev["t"] for ev in events], duration)


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)  # one encoder, reused
try:  # the same encoder's C core, built once (``JSONEncoder.encode`` builds it again every call)
    from json.encoder import c_make_encoder as _c_make_encoder
    from json.encoder import encode_basestring_ascii as _ascii

    _C_LINE = _c_make_encoder(None, _CANONICAL.default, _ascii, None, ":", ",", True, False, False)
except (ImportError, TypeError):
    _C_LINE = None


def canonical_line(ev: dict) -> str:
    if _C_LINE is not None and type(ev) is dict:
        return "".join(_C_LINE(ev, 0))
    return _CANONICAL.encode(ev)


def sha256(events: Iterable[dict]) -> str:
    """SHA-256 of the canonical lines joined by newlines, hashed 8,192 lines at a time (the whole
    text of 5M events would be 200 MB, its list of lines 400 MB more)."""
    h = hashlib.sha256()
    lines = _lines(events)
    sep = ""
    while chunk := list(islice(lines, 8192)):
        h.update((sep + "\n".join(chunk)).encode())
        sep = "\n"
    return h.hexdigest()


def _lines(events: Iterable[dict]) -> Iterator[str]:
    """The canonical lines of ``events`` (a ``Columns`` stream writes its own, without dicts)."""
    own = getattr(events, "canonical_lines", None)
    return own() if own is not None else map(canonical_line, events)


def write(events: Iterable[dict], path: str | Path) -> None:
    """Write the canonical JSON-lines form; a temp file ``F.part`` renamed into place, so a
    failure (or a signal the caller turns into an exception) never leaves half a trace behind.
    OSErrors are raised as ``OSError`` naming ``path`` itself, not the temp file."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(21, "is a directory", str(path))
    if path.exists() and not path.is_file():  # /dev/stdout, a FIFO: written in place, never replaced
        try:
            with open(path, "w", encoding="utf-8") as f:
                for line in _lines(events):
                    f.write(line)
                    f.write("\n")
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        return
    tmp = path.with_name(path.name + ".part")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for line in _lines(events):
                f.write(line)
                f.write("\n")
        tmp.replace(path)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _shape(value: object) -> str:
    """A JSON value's type, for comparing a replayed event with the preset's own events."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def schema(events: Iterable[dict]) -> dict[str, dict[str, str]]:
    """Per event kind, the fields every event of that kind carries, with their JSON type: what a
    replayed stream must match to be fed to the same panels."""
    out: dict[str, dict[str, str]] = {}
    for ev in events:
        fields = {k: _shape(v) for k, v in ev.items()}
        known = out.get(ev["kind"])
        out[ev["kind"]] = fields if known is None else {k: v for k, v in known.items() if fields.get(k) == v}
    return out


def closed(events: Iterable[dict]) -> set[str]:
    """The kinds whose events all carry the same fields: a replayed event of such a kind may carry
    no other (a kind whose fields vary, a fault with or without a node, stays open)."""
    seen: dict[str, frozenset] = {}
    varies: set[str] = set()
    for ev in events:
        fields = frozenset(ev)
        if seen.setdefault(ev["kind"], fields) != fields:
            varies.add(ev["kind"])
    return set(seen) - varies


def read(
    path: str | Path, expect: dict[str, dict[str, str]] | None = None, closed: Iterable[str] = (), columns: bool = False
) -> list[dict]:
    """Read a canonical stream back (``sims.core.canonical``): every event needs a finite ``t`` in
    [0, MAX_DURATION] (non-decreasing) and a string ``kind``; with ``expect`` (``schema`` of the
    preset's own stream and events) each kind must be one the preset knows and carry its fields,
    and a kind in ``closed`` no other field. Any mismatch raises TraceError naming file:line and
    the field. With ``columns`` the events come as ``sims.core.columns.Columns`` (a sequence of
    the same dicts, built on demand: about 17 bytes an event instead of 250)."""
    from sims.core import canonical

    return canonical.read(path, expect, frozenset(closed), columns=columns)
