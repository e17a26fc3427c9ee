"""A stream held as columns: what ``run --trace-in F`` reads for a cache or paging preset.

A list of 5M event dicts is about 1.2 GB in CPython (a 3-key dict alone is 184 bytes), so a
canonical trace of that size cannot run in 1 GB however fast it is read. ``Columns`` keeps each
event as its time in an ``array('d')``, a shape number in an ``array('B')`` and one value in an
``array('q')``: 17 bytes. A *compact* shape is a kind with ``t`` and at most one other field
holding a 64-bit integer or a string (strings are numbered by first appearance, one object
each): every ``ref`` event is one. Any other event is kept as its dict, by index, beside the
columns.

``Columns`` is a read-only sequence of dicts: ``events[k]`` builds the event (a fresh dict with
the fields in the order the file gave them, equal to the one the dict reader keeps), so the
panels, the budget and every other reader of a stream take it unchanged. ``canonical_lines``
gives each event's canonical JSON line from the columns (``stream.sha256`` and ``stream.write``
use it), and ``insert`` keeps the sequence in step with ``Scenario.insert``.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterator
from itertools import chain, islice
from json.encoder import encode_basestring_ascii as _ascii
from operator import itemgetter, le

from sims.core.budget import MAX_STREAM_BYTES, SLOT, event_bytes
from sims.core.limits import MAX_DURATION

OTHER = 255  # the shape number of an event kept as its dict
COMPACT_BYTES = 8 + 1 + 8 + 8  # t, shape, value, and the scenario's own copy of t
_I64 = (-(1 << 63), (1 << 63) - 1)
_TIME = r"((?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"  # a JSON number, no sign (t >= 0)
_INT = r"(-?(?:0|[1-9][0-9]{0,17}))"  # a JSON integer of at most 18 digits: always 64-bit
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Shape:
    """One compact shape: the kind, the fields in file order, the value's field and type."""

    __slots__ = ("kind", "fields", "name", "text", "make", "fmt")

    def __init__(self, kind: str, fields: tuple[str, ...], name: str, text: bool, strings: list[str]) -> None:
        self.kind, self.fields, self.name, self.text = kind, fields, name, text
        self.make = _maker(fields, kind, name, strings if text else None)
        parts = []
        for field in sorted(fields):  # the canonical line: sorted keys, no spaces
            head = _ascii(field).replace("%", "%%") + ":"
            if field == "t":
                parts.append(head + "%r")
            elif field == "kind":
                parts.append(head + _ascii(kind).replace("%", "%%"))
            else:
                parts.append(head + ("%s" if text else "%d"))
        self.fmt = "{" + ",".join(parts) + "}"


def _maker(fields: tuple[str, ...], kind: str, name: str, strings: list[str] | None):
    """The function (t, value) -> the event dict, its keys in ``fields`` order."""
    order = tuple("v" if f == name else f for f in fields)
    if strings is None:
        table = {
            ("v", "kind", "t"): lambda t, v: {name: v, "kind": kind, "t": t},
            ("t", "kind", "v"): lambda t, v: {"t": t, "kind": kind, name: v},
            ("kind", "t", "v"): lambda t, v: {"kind": kind, "t": t, name: v},
            ("kind", "v", "t"): lambda t, v: {"kind": kind, name: v, "t": t},
            ("t", "v", "kind"): lambda t, v: {"t": t, name: v, "kind": kind},
            ("v", "t", "kind"): lambda t, v: {name: v, "t": t, "kind": kind},
        }
    else:
        s = strings
        table = {
            ("v", "kind", "t"): lambda t, v: {name: s[v], "kind": kind, "t": t},
            ("t", "kind", "v"): lambda t, v: {"t": t, "kind": kind, name: s[v]},
            ("kind", "t", "v"): lambda t, v: {"kind": kind, "t": t, name: s[v]},
            ("kind", "v", "t"): lambda t, v: {"kind": kind, name: s[v], "t": t},
            ("t", "v", "kind"): lambda t, v: {"t": t, name: s[v], "kind": kind},
            ("v", "t", "kind"): lambda t, v: {name: s[v], "t": t, "kind": kind},
        }
    table[("t", "kind")] = lambda t, v: {"t": t, "kind": kind}
    table[("kind", "t")] = lambda t, v: {"kind": kind, "t": t}
    return table[order]


class Columns:
    """A stream of events as columns (see the module docstring); built by ``append``/``extend``
    from checked events (``t`` a float, ``kind`` a string), read as a sequence of dicts."""

    __slots__ = ("times", "shape", "value", "shapes", "strings", "other", "nbytes", "_ids", "_sid", "_lines", "_plain")

    def __init__(self) -> None:
        self.times = array("d")
        self.shape = array("B")
        self.value = array("q")
        self.shapes: list[_Shape] = []
        self.strings: list[str] = []  # string values, numbered by first appearance
        self.other: dict[int, dict] = {}  # index -> an event of no compact shape
        self.nbytes = 0  # the memory the events hold (``sims.core.budget``'s model for the dicts)
        self._ids: dict[str, int] = {}
        self._sid: dict[tuple, int] = {}  # (kind, field names, value type) -> shape number
        self._lines: list[str] | None = None  # the strings as JSON, for ``canonical_lines``
        self._plain: dict[tuple, tuple | None] = {}  # (kind, fields) -> ``take_plain``'s pattern

    # -- building ------------------------------------------------------------------------------
    def _shape_of(self, ev: dict, sig: tuple) -> int:
        """The shape number of events like ``ev`` (``sig``: kind, field names, value type)."""
        fields = sig[1]
        names = [f for f in fields if f != "t" and f != "kind"]
        sid = OTHER
        if len(names) <= 1 and len(self.shapes) < OTHER and "t" in fields and "kind" in fields:
            name = names[0] if names else ""
            tv = sig[2]
            if tv is int or tv is str or not names:
                sid = len(self.shapes)
                self.shapes.append(_Shape(sig[0], fields, name, tv is str, self.strings))
        self._sid[sig] = sid
        return sid

    def append(self, ev: dict) -> None:
        self.extend((ev,))

    def extend(self, events) -> None:
        times, shape, value, sids, ids, strings = self.times, self.shape, self.value, self._sid, self._ids, self.strings
        lo, hi = _I64
        size = 0
        str_, int_, type_ = str, int, type
        for ev in events:
            fields = tuple(ev)
            n = len(fields)
            if n == 3:
                name = fields[0] if fields[0] != "t" and fields[0] != "kind" else fields[1]
                if name == "t" or name == "kind":
                    name = fields[2]
                v = ev[name]
                tv = type_(v)
            else:
                v, tv = 0, None
            sig = (ev["kind"], fields, tv)
            sid = sids.get(sig)
            if sid is None:
                sid = self._shape_of(ev, sig) if n <= 3 else OTHER
                sids[sig] = sid
            if sid != OTHER:
                if tv is int_:
                    if not lo <= v <= hi:
                        sid = OTHER
                elif tv is str_:
                    k = ids.get(v)
                    if k is None:
                        k = ids[v] = len(strings)
                        strings.append(v)
                        size += event_bytes({"": v})  # the string's own object
                    v = k
            if sid == OTHER:
                self.other[len(times)] = ev
                size += event_bytes(ev) + SLOT + 72  # the dict, its slot in ``other``
                v = 0
            times.append(ev["t"])
            shape.append(sid)
            value.append(v)
            size += COMPACT_BYTES
        self.nbytes += size
        self._lines = None

    def add_run(self, sid: int, times: list[float], values: array) -> None:
        """Events of compact shape ``sid`` (an integer value), already checked."""
        self.times.fromlist(times)
        self.shape.frombytes(bytes((sid,)) * len(times))
        self.value.extend(values)
        self.nbytes += COMPACT_BYTES * len(times)

    def mark(self) -> tuple[int, int, int]:
        return len(self.times), len(self.strings), self.nbytes

    def undo(self, mark: tuple[int, int, int]) -> None:
        """Take back what was added since ``mark()``."""
        n, nstr, self.nbytes = mark
        del self.times[n:], self.shape[n:], self.value[n:]
        for s in self.strings[nstr:]:
            del self._ids[s]
        del self.strings[nstr:]
        self.other = {i: ev for i, ev in self.other.items() if i < n}

    # -- reading -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.times)

    def __getitem__(self, k):
        if type(k) is slice:
            return self._slice(k)
        s = self.shape[k]
        if s == OTHER:
            return self.other[k if k >= 0 else k + len(self.times)]
        return self.shapes[s].make(self.times[k], self.value[k])

    def __iter__(self) -> Iterator[dict]:
        shapes, other = self.shapes, self.other
        for k, (s, t, v) in enumerate(zip(self.shape, self.times, self.value, strict=True)):
            yield other[k] if s == OTHER else shapes[s].make(t, v)

    def __eq__(self, other) -> bool:
        if isinstance(other, (Columns, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _slice(self, k: slice) -> Columns:
        new = Columns()
        new.shapes, new.strings, new._ids, new._sid = self.shapes, self.strings, self._ids, self._sid
        idx = range(len(self.times))[k]
        if k.step in (None, 1):
            new.times, new.shape, new.value = self.times[k], self.shape[k], self.value[k]
        else:
            new.times = array("d", (self.times[i] for i in idx))
            new.shape = array("B", (self.shape[i] for i in idx))
            new.value = array("q", (self.value[i] for i in idx))
        pos = {i: j for j, i in enumerate(idx)} if self.other else {}
        new.other = {pos[i]: ev for i, ev in self.other.items() if i in pos}
        new.nbytes = self.nbytes * len(new) // max(1, len(self))
        return new

    def canonical_lines(self) -> Iterator[str]:
        """Each event's canonical JSON line (``stream.canonical_line``), from the columns: a run of
        events of one shape is formatted by one C loop (``str.__mod__`` over the columns)."""
        if self._lines is None or len(self._lines) != len(self.strings):
            self._lines = [_ascii(s) for s in self.strings]
        return chain.from_iterable(self._blocks())

    def _blocks(self) -> Iterator[Iterator[str]]:
        for lo in range(0, len(self.times), 8192):
            hi = min(lo + 8192, len(self.times))
            s = self.shape[lo]
            if s != OTHER and self.shape[lo:hi].count(s) == hi - lo:
                yield self._run_lines(self.shapes[s], lo, hi)
            else:
                yield map(self._line, range(lo, hi))

    def _run_lines(self, shape: _Shape, lo: int, hi: int) -> Iterator[str]:
        ts = self.times[lo:hi]
        if not shape.name:
            return map(shape.fmt.__mod__, zip(ts))
        vs = map(self._lines.__getitem__, self.value[lo:hi]) if shape.text else self.value[lo:hi]
        return map(shape.fmt.__mod__, zip(vs, ts, strict=True) if shape.name < "t" else zip(ts, vs, strict=True))

    def _line(self, k: int) -> str:
        from sims.core.stream import canonical_line

        s = self.shape[k]
        if s == OTHER:
            return canonical_line(self.other[k])
        return next(self._run_lines(self.shapes[s], k, k + 1))

    # -- changing (``Scenario.insert``) ----------------------------------------------------------
    def insert(self, k: int, ev: dict) -> None:
        """Put ``ev`` at index ``k`` (kept as its dict)."""
        k = max(0, min(k, len(self.times)))
        self.other = {(i + 1 if i >= k else i): e for i, e in self.other.items()}
        self.times.insert(k, ev["t"])
        self.shape.insert(k, OTHER)
        self.value.insert(k, 0)
        self.other[k] = ev
        self.nbytes += event_bytes(ev) + SLOT + 72 + COMPACT_BYTES


def take_plain(rd, body: list[str], max_bytes: int = MAX_STREAM_BYTES) -> bool:
    """The fast path of ``canonical.Reader`` for a block of lines that are all the same compact
    shape with an integer value, as ``run --trace-out`` writes them (``{"key":3,"kind":"ref","t":0.5}``):
    one regular expression finds the two numbers of every line, no dict is made. Any line that
    does not match exactly (a space, another shape, a sign on ``t``), a time out of order or
    range, or the bounds reached: False, nothing kept, and the block goes the JSON way."""
    cols = rd.events
    try:
        first = json.loads(body[0])
    except (ValueError, RecursionError):
        return False
    if type(first) is not dict or len(first) != 3 or type(first.get("kind")) is not str:
        return False
    fields = tuple(first)
    entry = cols._plain.get((first["kind"], fields), False)
    if entry is False:
        entry = cols._plain[(first["kind"], fields)] = _plain(rd, first["kind"], fields)
    if entry is None:
        return False
    pattern, value_first, sid = entry
    found = pattern.findall("\n".join(body))
    n = len(found)
    if n != len(body) or len(cols) + n > rd.max_events or cols.nbytes + COMPACT_BYTES * n > max_bytes:
        return False
    times = list(map(float, map(itemgetter(1 if value_first else 0), found)))
    if not (rd.last <= times[0] and times[-1] <= MAX_DURATION and all(map(le, times, islice(times, 1, None)))):
        return False
    cols.add_run(sid, times, array("q", map(int, map(itemgetter(0 if value_first else 1), found))))
    rd.last = times[-1]
    rd.bytes = cols.nbytes
    return True


def _plain(rd, kind: str, fields: tuple[str, ...]) -> tuple | None:
    """(the pattern of such a line, whether the value comes before ``t``, the shape number), or
    None when lines like these cannot take the fast path (or the preset does not take them)."""
    names = [f for f in fields if f != "t" and f != "kind"]
    if len(names) != 1 or not all(_WORD.match(w) for w in (*fields, kind)):
        return None
    sample = {f: 0 if f == names[0] else kind if f == "kind" else 0.0 for f in fields}
    if not rd._shape_ok(sample, kind):
        return None
    parts = [f'"{f}":' + (_TIME if f == "t" else f'"{kind}"' if f == "kind" else _INT) for f in fields]
    sid = rd.events._sid.get((kind, fields, int))
    if sid is None:
        sid = rd.events._shape_of(sample, (kind, fields, int))
    if sid == OTHER:
        return None
    pattern = re.compile("^\\{" + ",".join(parts) + "\\}$", re.M)
    return pattern, fields.index(names[0]) < fields.index("t"), sid


__all__ = ["COMPACT_BYTES", "Columns", "OTHER", "take_plain"]
