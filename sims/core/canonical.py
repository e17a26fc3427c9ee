"""A canonical stream read back (``run --trace-in F``, the JSON lines ``run --trace-out`` writes).

Every event needs a finite ``t`` in [0, MAX_DURATION] (non-decreasing) and a string ``kind``; with
``expect`` (``stream.schema`` of the preset's own events) each kind must be one the preset knows
and carry its fields with their JSON types, and a kind in ``closed`` (one whose own events always
carry the same fields) may carry no other field. NaN, Infinity and integers over 40 digits are
refused with their field. Any mismatch raises TraceError naming file:line and the field.

Speed and memory: the lines of each 1 MiB block are parsed as one JSON array (one C call; the
keys of a block's events are then shared strings) and checked with one signature per event shape,
and every ``kind`` string is shared. A block the fast path cannot vouch for (an integer over 40
digits, a number past a float's range, a line that is no JSON object alone, a shape not seen
before that fails its check) is read again line by line, which finds the first bad line and says
what is wrong.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from sims.core.budget import MAX_STREAM_BYTES, SLOT, event_bytes
from sims.core.columns import Columns, take_plain
from sims.core.limits import MAX_DURATION, MAX_EVENT_CHARS, MAX_STREAM_EVENTS, show
from sims.core.stream import _shape
from sims.core.trace import TraceError, bulk, read_blocks

_SHAPE = {
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


class _Huge:
    """An integer literal too long to convert: kept as its length, refused with its field."""

    __slots__ = ("digits",)

    def __init__(self, text: str) -> None:
        self.digits = len(text)


def _int(text: str) -> int | _Huge:
    return int(text) if len(text) <= 40 else _Huge(text)


def _refuse(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _plain_int(text: str) -> int:
    """An integer of at most 40 digits (the fast path leaves longer ones to ``Reader.line``)."""
    if len(text) > 40:
        raise ValueError(text)
    return int(text)


def _finite(text: str) -> float:
    """A finite float (1e999 reads as inf: the fast path leaves it to ``Reader.line``)."""
    value = float(text)
    if value - value != 0.0:
        raise ValueError(text)
    return value


def _check_value(value: object, field: str, where: str) -> None:
    """NaN, Infinity and over-long integers are refused with the field that holds them."""
    if isinstance(value, _Huge):
        raise TraceError(f"{where}: field {show(field)}: an integer of {value.digits} digits is too long")
    if isinstance(value, float) and not math.isfinite(value):
        raise TraceError(f"{where}: field {show(field)}: expected a finite number, got {value!r}")
    if isinstance(value, list):
        for item in value:
            _check_value(item, field, where)
    elif isinstance(value, dict):
        for item in value.values():
            _check_value(item, field, where)


class Reader:
    """Events out of lines, checked as the module docstring says."""

    def __init__(
        self,
        where: str,
        expect: dict[str, dict[str, str]] | None = None,
        closed: frozenset[str] | set[str] = frozenset(),
        max_events: int = MAX_STREAM_EVENTS,
        columns: bool = False,
    ) -> None:
        self.where = where
        self.expect = expect
        self.closed = closed
        self.max_events = max_events
        self.events: list[dict] | Columns = Columns() if columns else []
        self.bytes = 0  # the events' memory (sims.core.budget's model), bounded by MAX_STREAM_BYTES
        self.last = 0.0
        self._kinds: dict[str, str] = {}  # one string object per kind
        self._good: dict[tuple, int] = {}  # (kind, fields, their types) already checked -> bytes, or 0: per event

    # -- one line at a time: the reference, and the one that names what is wrong -------------------
    def line(self, n: int, text: str) -> None:
        if not text.strip():
            return
        where = f"{self.where}:{n}"
        try:
            ev = json.loads(text, parse_int=_int)  # NaN and Infinity come through, refused with their field
        except RecursionError:
            raise TraceError(f"{where}: JSON nested too deeply") from None
        except ValueError as exc:  # JSONDecodeError
            raise TraceError(f"{where}: not a JSON object ({show(getattr(exc, 'msg', str(exc)), 80)})") from None
        if not isinstance(ev, dict):
            raise TraceError(f"{where}: expected a JSON object, got {show(ev)}")
        for field, value in ev.items():
            _check_value(value, field, where)
        t = ev.get("t")
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise TraceError(f"{where}: field 't': expected a number of seconds, got {show(t)}")
        if not (0 <= t <= MAX_DURATION):
            raise TraceError(f"{where}: field 't': expected seconds in [0, {MAX_DURATION:g}], got {show(t)}")
        if t < self.last:
            raise TraceError(f"{where}: time {t!r} goes backwards (previous {self.last!r}) in field 't'")
        kind = ev.get("kind")
        if not isinstance(kind, str):
            raise TraceError(f"{where}: field 'kind': expected a string, got {show(kind)}")
        self._check_fields(ev, kind, where)
        self._keep(ev, float(t), kind, where)

    def _check_fields(self, ev: dict, kind: str, where: str) -> None:
        expect = self.expect
        if expect is None:
            return
        if kind not in expect:
            raise TraceError(f"{where}: field 'kind': expected one of {', '.join(sorted(expect))}, got {show(kind)}")
        fields = expect[kind]
        for field, shape in fields.items():
            if field not in ev:
                raise TraceError(f"{where}: field {show(field)}: missing (a {kind} event carries a {shape})")
            if _shape(ev[field]) != shape:
                raise TraceError(f"{where}: field {show(field)}: expected a {shape}, got {show(ev[field])}")
        if kind in self.closed:
            for field in ev:
                if field not in fields:
                    raise TraceError(
                        f"{where}: field {show(field)}: unknown; a {kind} event carries {', '.join(sorted(fields))}"
                    )

    def _keep(self, ev: dict, t: float, kind: str, where: str) -> None:
        ev["t"] = t
        ev["kind"] = self._kinds.setdefault(kind, kind)
        self.last = t
        self.events.append(ev)
        self.bytes = self.events.nbytes if type(self.events) is Columns else self.bytes + event_bytes(ev) + SLOT
        if len(self.events) > self.max_events:
            raise TraceError(f"{where}: more than {self.max_events:,} events")
        if self.bytes > MAX_STREAM_BYTES:
            raise TraceError(
                f"{where}: the events so far hold about {self.bytes >> 20:,} MiB, more than {MAX_STREAM_BYTES >> 20:,}; "
                f"cut the trace (head -n {len(self.events) - 1})"
            )

    # -- a block at a time: the fast path ----------------------------------------------------------
    def block(self, first: int, lines: list[str]) -> None:
        """The lines numbered from ``first``: parsed as one array when that is safe, else one by one."""
        if lines and type(self.events) is Columns and take_plain(self, lines, MAX_STREAM_BYTES):
            return  # no blank line, every line a plain compact event
        body = [text for text in lines if text and not text.isspace()]
        if body and self._fast(body):
            return
        for n, text in enumerate(lines, first):
            self.line(n, text)

    def _fast(self, body: list[str]) -> bool:
        """Parse and keep ``body``'s events if every check passes; False (nothing kept) otherwise."""
        try:
            events = json.loads(
                "[" + ",".join(body) + "]", parse_int=_plain_int, parse_float=_finite, parse_constant=_refuse
            )
        except (ValueError, RecursionError):
            return False
        if len(events) != len(body) or len(self.events) + len(events) > self.max_events:
            return False  # a line that is no one value, or the line that passes the bound
        last, good, kinds, dict_, float_, int_, str_ = self.last, self._good, self._kinds, dict, float, int, str
        size = 0
        for ev in events:
            if type(ev) is not dict_:
                return False
            t = ev.get("t")
            tt = type(t)
            if tt is int_:
                t = ev["t"] = float(t)
            elif tt is not float_:
                return False
            kind = ev.get("kind")
            if not (last <= t <= MAX_DURATION and type(kind) is str_):
                return False
            sig = (kind, tuple(ev), *map(type, ev.values()))
            b = good.get(sig)
            if b is None:
                if not self._shape_ok(ev, kind):
                    return False
                flat = not any(type(v) is list or type(v) is dict for v in ev.values())
                b = good[sig] = _flat_bytes(ev) if flat else 0
            size += b or event_bytes(ev)
            ev["kind"] = kinds.setdefault(kind, kind)
            last = t
        if type(self.events) is Columns:  # kept, then taken back if past the bound
            mark = self.events.mark()
            self.events.extend(events)
            if self.events.nbytes > MAX_STREAM_BYTES:
                self.events.undo(mark)
                return False
            self.bytes = self.events.nbytes
            self.last = last
            return True
        if self.bytes + size + SLOT * len(events) > MAX_STREAM_BYTES:
            return False  # the line that passes the bound is named line by line
        self.events += events
        self.bytes += size + SLOT * len(events)
        self.last = last
        return True

    def _shape_ok(self, ev: dict, kind: str) -> bool:
        """``_check_fields`` as a test."""
        expect = self.expect
        if expect is None:
            return True
        fields = expect.get(kind)
        if fields is None or not all(f in ev and _SHAPE.get(type(ev[f])) == shape for f, shape in fields.items()):
            return False
        return kind not in self.closed or all(f in fields for f in ev)


def _flat_bytes(ev: dict) -> int:
    """``event_bytes`` of an event of scalars, with every integer counted as a full object (an
    upper bound that holds for every event of the same shape)."""
    return event_bytes({k: (1 << 40 if type(v) is int else v) for k, v in ev.items()})


def read(
    path: str | Path,
    expect: dict[str, dict[str, str]] | None = None,
    closed: frozenset[str] | set[str] = frozenset(),
    max_events: int = MAX_STREAM_EVENTS,
    columns: bool = False,
) -> list[dict] | Columns:
    """The events of canonical stream ``path`` (see the module docstring); with ``columns``, as
    ``sims.core.columns.Columns`` (the same events, a fraction of the memory)."""
    path = Path(path)
    rd = Reader(str(path), expect, closed, max_events, columns)
    try:
        size = path.stat().st_size if path.is_file() else 0
    except OSError:
        size = 0
    read = 0
    with bulk():
        for first, lines in read_blocks(path, max_chars=MAX_EVENT_CHARS):
            rd.block(first, lines)
            if read < 1 << 20 and size:  # the first MiB says what the whole file holds
                read += sum(map(len, lines)) + len(lines)
                _whole(rd, size, read)
    if not rd.events:
        raise TraceError(f"{path}: no events; expected one JSON object per line")
    return rd.events


def _whole(rd: Reader, size: int, read: int) -> None:
    """Refuse at once a file whose first ``read`` bytes say that its ``size`` bytes hold a quarter
    more than the bounds, rather than after reading millions of lines."""
    if not rd.events or read >= size:
        return
    events, mem = len(rd.events) * size // read, rd.bytes * size // read
    if 4 * events > 5 * rd.max_events or 4 * mem > 5 * MAX_STREAM_BYTES:
        raise TraceError(
            f"{rd.where}: about {events:,} events holding about {mem >> 20:,} MiB (from its first {len(rd.events):,}); "
            f"at most {rd.max_events:,} events and {MAX_STREAM_BYTES >> 20:,} MiB: cut the trace (head -n)"
        )


__all__ = ["Reader", "read"]
