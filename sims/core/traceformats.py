"""Traces a user brings, as a preset's stream: ``run PRESET --trace-in F --trace-format X`` and a
file dropped on a preset page (web/pyodide/ops_trace.py) go through the same readers.

A reader takes one line at a time (``feed(n, line)``), so a file is read in bounded memory from
disk (``trace.read_lines``) or from the chunks a browser sends (``Lines``); the first bad line
raises ``TraceError`` naming file:line and the field. ``finish`` turns what was read into the
stream: the preset's workload is replaced, its scheduled events stay.

Formats (``FORMATS``): ``azure`` and ``mooncake`` (LLM requests, sims.core.llmtraces); ``pages``,
``keys`` and ``arrivals``, the files ``contention trace paging|cache|ratelimit`` reads. Page
numbers and keys carry no times: the i-th of N references comes at ``duration * (i+1) / N``, so the
whole trace plays within the preset's duration. Timed formats keep their times; their run lasts
the longer of the preset's duration and the last arrival. Which formats a preset takes is decided
by its stream (``fits``): a trace's events must carry the fields of the preset's own events.
``canonical`` (the JSON-lines stream of ``run --trace-out``) is read by ``sims.core.stream.read``.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from sims.core import stream
from sims.core.budget import MAX_STREAM_BYTES, SLOT
from sims.core.limits import MAX_DURATION, MAX_LINE_CHARS, MAX_STREAM_EVENTS, InputError, show
from sims.core.llmtraces import AzureReader, TimedReader, request
from sims.core.mooncake import MooncakeReader
from sims.core.trace import TraceError, bulk, read_blocks, read_lines

MAX_TRACE_BYTES = 1 << 30  # a bigger file is refused before it is read
REF_BYTES = 184 + 24 + 28 + SLOT  # a {"t", "kind", "key"} event in memory (sims.core.budget's model)
SCHEMA_EVENTS = 2000  # the preset's first events, whose fields a trace's events must carry


class PagesReader:
    """Page numbers (64-bit integers), whitespace-separated, any number a line; '#' comments."""

    name = "pages"
    timed = False

    def __init__(self, where: str) -> None:
        self.where = where
        self.keys = array("q")

    def feed(self, n: int, line: str) -> None:
        text = line.strip()
        if not text or text.startswith("#"):
            return
        for tok in text.split():
            if not (tok.isascii() and len(tok) <= 20 and tok.lstrip("-").isdigit()):
                raise TraceError(f"{self.where}:{n}: expected a page number (a 64-bit integer), got {show(tok)}")
            try:
                self.keys.append(int(tok))
            except OverflowError:
                raise TraceError(
                    f"{self.where}:{n}: expected a page number (a 64-bit integer), got {show(tok)}"
                ) from None

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def bytes(self) -> int:
        return len(self.keys) * REF_BYTES

    def finish(self, duration: float) -> list[dict]:
        return _spread(list(self.keys), duration)


class KeysReader:
    """One key a line (any string, stripped); blank and '#' lines skipped. If every key is an
    integer the keys are those integers, else each distinct key is numbered by first appearance
    (hits and misses only compare keys, so the results are the same)."""

    name = "keys"
    timed = False

    def __init__(self, where: str) -> None:
        self.where = where
        self.ids: dict[str, int] = {}
        self.refs = array("q")
        self.numeric = True

    def feed(self, n: int, line: str) -> None:
        key = line.strip()
        if not key or key.startswith("#"):
            return
        k = self.ids.get(key)
        if k is None:
            k = self.ids[key] = len(self.ids)
            if self.numeric and not (key.isascii() and key.isdigit() and len(key) <= 18):
                self.numeric = False
        self.refs.append(k)

    def __len__(self) -> int:
        return len(self.refs)

    @property
    def bytes(self) -> int:
        return len(self.refs) * REF_BYTES

    def finish(self, duration: float) -> list[dict]:
        if self.numeric:
            value = [int(key) for key in self.ids]  # dicts keep insertion order: id -> its text
            return _spread([value[k] for k in self.refs], duration)
        return _spread(list(self.refs), duration)


class ArrivalsReader(TimedReader):
    """One arrival time a line (seconds, non-decreasing, in [0, MAX_DURATION])."""

    name = "arrivals"

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.last = 0.0

    def feed(self, n: int, line: str) -> None:
        text = line.strip()
        if not text or text.startswith("#"):
            return
        try:
            t = float(text) if len(text) <= 40 else math.nan
        except ValueError:
            t = math.nan
        if not (math.isfinite(t) and 0 <= t <= MAX_DURATION):
            raise TraceError(
                f"{self.where}:{n}: expected an arrival time in seconds in [0, {MAX_DURATION:g}], got {show(text)}"
            )
        if t < self.last:
            raise TraceError(f"{self.where}:{n}: time {t!r} goes backwards (previous {self.last!r})")
        self.last = t
        self.add(n, {"t": t, "kind": "request", "id": len(self.events)}, REF_BYTES - SLOT)


def _spread(keys: list[int], duration: float) -> list[dict]:
    n = len(keys)
    return [{"t": duration * (i + 1) / n, "kind": "ref", "key": k} for i, k in enumerate(keys)]


FORMATS = {c.name: c for c in (AzureReader, MooncakeReader, PagesReader, KeysReader, ArrivalsReader)}
# one event of each format, for ``fits``
_SAMPLES = {
    "azure": request(0, 0.0, 1, 1, [["u0", 1]]),
    "mooncake": request(0, 0.0, 1, 1, [["m0", 1]]),
    "pages": {"t": 1.0, "kind": "ref", "key": 0},
    "keys": {"t": 1.0, "kind": "ref", "key": 0},
    "arrivals": {"t": 0.0, "kind": "request", "id": 0},
}


def reader(fmt: str, where: str):
    """A fresh reader of format ``fmt``; ``where`` names the file in messages."""
    try:
        return FORMATS[fmt](where)
    except KeyError:
        raise InputError(f"unknown trace format {fmt!r}; valid: canonical, {', '.join(FORMATS)}") from None


class Lines:
    """Text chunks in, (line number, line) out: the browser's side of ``trace.read_lines``, with
    its limit on line length (a line still unfinished past ``max_chars`` is refused at once)."""

    def __init__(self, where: str, max_chars: int = MAX_LINE_CHARS) -> None:
        self.where = where
        self.max_chars = max_chars
        self.n = 0
        self.rest = ""

    def feed(self, text: str) -> Iterator[tuple[int, str]]:
        parts = (self.rest + text).split("\n")
        self.rest = parts.pop()
        for line in parts:
            yield self._line(line)
        if len(self.rest) > self.max_chars:
            raise TraceError(
                f"{self.where}:{self.n + 1}: line longer than {self.max_chars} characters; is this a trace file?"
            )

    def close(self) -> Iterator[tuple[int, str]]:
        if self.rest:
            line, self.rest = self.rest, ""
            yield self._line(line)

    def _line(self, line: str) -> tuple[int, str]:
        self.n += 1
        if len(line) > self.max_chars:
            raise TraceError(
                f"{self.where}:{self.n}: line longer than {self.max_chars} characters; is this a trace file?"
            )
        return self.n, line[:-1] if line.endswith("\r") else line


def check_size(rd, size: int, read: int, max_events: int) -> None:
    """Refuse at once a file whose first ``read`` bytes (``len(rd)`` rows so far) say that its
    ``size`` bytes hold more than twice ``max_events`` rows, or twice ``MAX_STREAM_BYTES`` of events,
    rather than after parsing millions."""
    if size > MAX_TRACE_BYTES:
        raise TraceError(f"{rd.where}: {size} bytes is more than {MAX_TRACE_BYTES}; cut the trace (head -n)")
    rows = len(rd)
    if rows and read < size and (rows * size > 2 * max_events * read or rd.bytes * size > 2 * MAX_STREAM_BYTES * read):
        raise TraceError(
            f"{rd.where}: about {rows * size // read} rows (from its first {rows}), holding about "
            f"{rd.bytes * size // read >> 20} MiB; at most {max_events} rows and {MAX_STREAM_BYTES >> 20} MiB: "
            "cut the trace (head -n)"
        )


def feed(rd, numbered: Iterator[tuple[int, str]], max_events: int = MAX_STREAM_EVENTS, size: int = 0) -> None:
    """Feed lines to ``rd``, refusing the line that passes ``max_events`` events or
    ``MAX_STREAM_BYTES`` of them; with the file's ``size``, ``check_size`` once the first MiB is
    in. A reader with ``feed_block`` gets 4,096 lines at a time."""
    if hasattr(rd, "max_events"):
        rd.max_events = max_events  # a timed reader bounds itself, row by row
    block = getattr(rd, "feed_block", None)
    read = 0 if size else 1 << 20
    lines: list[str] = []
    first = 0
    for n, line in numbered:
        if block is not None:
            if not lines:
                first = n
            lines.append(line)
            if len(lines) < 4096:
                continue
            block(first, lines)
        else:
            rd.feed(n, line)
            _bounded(rd, n, max_events)
        if read < 1 << 20:
            read += sum(map(len, lines)) + len(lines) if lines else len(line) + 1
            if read >= 1 << 20:
                check_size(rd, size, read, max_events)
        lines = []
    if lines:
        block(first, lines)


def feed_blocks(rd, blocks: Iterator[tuple[int, list[str]]], max_events: int, size: int) -> None:
    """``feed`` for a reader with ``feed_block``, from ``trace.read_blocks``: the lines of each
    block 4,096 at a time, without taking them apart line by line and joining them again."""
    rd.max_events = max_events
    read = 0 if size else 1 << 20
    for first, lines in blocks:
        for i in range(0, len(lines), 4096):
            part = lines[i : i + 4096]
            rd.feed_block(first + i, part)
            if read < 1 << 20:
                read += sum(map(len, part)) + len(part)
                if read >= 1 << 20:
                    check_size(rd, size, read, max_events)


def _bounded(rd, n: int, max_events: int) -> None:
    if len(rd) > max_events:
        raise TraceError(f"{rd.where}:{n}: more than {max_events} events; cut the trace (head -n)")
    if rd.bytes > MAX_STREAM_BYTES:
        raise TraceError(
            f"{rd.where}:{n}: the rows so far hold about {rd.bytes >> 20} MiB of events, more than "
            f"{MAX_STREAM_BYTES >> 20}; cut the trace (head -n {n - 1})"
        )


# -- the preset side -----------------------------------------------------------------------------


def preset_schema(preset, seed: int | None = None) -> dict[str, dict[str, str]]:
    """The kinds and fields of the preset's first events (its workload, its scheduled events and
    its actions' events): what a trace's events must carry to be fed to its panels."""
    seed = preset.seed if seed is None else seed
    own = list(islice(stream.generate(preset.workload_kind, preset.workload, seed, preset.duration), SCHEMA_EVENTS))
    expect = stream.schema(own)
    for a in preset.actions:
        expect.setdefault(a["event"]["kind"], {"kind": "string"})
    return expect


def _mismatch(fmt: str, expect: dict[str, dict[str, str]]) -> str | None:
    ev = _SAMPLES[fmt]
    fields = expect.get(ev["kind"])
    if fields is None:
        return f"its stream has {', '.join(sorted(expect)) or 'no'} events, a {fmt} trace gives {ev['kind']} events"
    lacking = sorted(f for f, shape in fields.items() if stream._shape(ev.get(f)) != shape)
    if lacking:
        return f"its {ev['kind']} events carry {', '.join(lacking)}, which a {fmt} trace does not give"
    return None


def fits(preset, seed: int | None = None) -> list[str]:
    """The formats whose events this preset's panels can take, in ``FORMATS`` order."""
    expect = preset_schema(preset, seed)
    return [f for f in FORMATS if _mismatch(f, expect) is None]


def check_fit(fmt: str, preset, where: str, seed: int | None = None) -> None:
    why = _mismatch(fmt, preset_schema(preset, seed))
    if why is not None:
        ok = fits(preset, seed)
        hint = f"; it takes {', '.join(ok)}" if ok else "; it takes only canonical streams"
        raise TraceError(f"{where}: preset {preset.name} cannot replay a {fmt} trace: {why}{hint}")


def finish(rd, preset) -> tuple[list[dict], float]:
    """(the stream, the run's duration): the trace's events with the preset's scheduled events
    merged in (after trace events at the same instant)."""
    if not len(rd):
        raise TraceError(f"{rd.where}: no {rd.name} rows")
    duration = preset.duration
    events = rd.finish(duration)
    if rd.timed:
        duration = max(duration, events[-1]["t"])
    extra = [dict(e) for e in preset.events if e["t"] <= duration]
    if extra:
        merged = [(e["t"], 0, i, e) for i, e in enumerate(events)] + [(e["t"], 1, i, e) for i, e in enumerate(extra)]
        merged.sort(key=lambda x: (x[0], x[1], x[2]))
        events = [m[3] for m in merged]
    return events, duration


def load(path: str | Path, fmt: str, preset, seed: int | None = None) -> tuple[list[dict], float]:
    """``run --trace-in PATH --trace-format FMT``: (the stream, its default duration)."""
    rd = reader(fmt, str(path))
    check_fit(fmt, preset, str(path), seed)
    try:
        size = Path(path).stat().st_size
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    check_size(rd, size, 0, MAX_STREAM_EVENTS)
    with bulk():
        if hasattr(rd, "feed_block"):
            feed_blocks(rd, read_blocks(path), MAX_STREAM_EVENTS, size)
        else:
            feed(rd, read_lines(path), MAX_STREAM_EVENTS, size)
        return finish(rd, preset)


__all__ = ["FORMATS", "Lines", "check_fit", "check_size", "feed", "finish", "fits", "load", "preset_schema", "reader"]
