"""LLM request traces in the public formats: the Azure LLM inference trace CSV and Mooncake's JSONL.

Each row becomes one ``request`` event of the shape the engine and cluster workloads emit
(``sims/workloads/llm.py``): ``prompt_len``, ``output_len``, ``max_tokens`` (= the row's output, what
the client let it generate), ``tenant`` 0, ``prompt_chars`` (4 a token) and the prompt as
``segments``. Times are seconds since the first row, non-decreasing.

- Azure (``TIMESTAMP,ContextTokens,GeneratedTokens``): ``TIMESTAMP`` is a date-time string,
  ``2023-11-16 18:15:46.6805900`` (2023: 7 fractional digits) or ``2024-05-10 00:00:00.009930+00:00``
  (2024: 6 digits and a UTC offset), read exactly in integer nanoseconds. The trace says nothing of
  prompt content, so every prompt is its own segment and nothing is shared.
- Mooncake (``{"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}``, read by
  ``sims.core.mooncake``): hash id k
  of a row names the content of its tokens ``[512k, 512(k+1))``, so a row's prompt is one segment
  ``["m<id>", 512]`` per id (the last one holds what is left of ``input_length``). Two rows that
  start with the same ids start with the same segments, so they share their block hashes (prefix
  caching) and their radix-tree path (prefix-aware routing), for any block size that divides 512.
  Tokens beyond the ids (a row with fewer ids than blocks) are the row's own segment.
"""

from __future__ import annotations

import re

from sims.core.budget import MAX_STREAM_BYTES, SLOT
from sims.core.limits import MAX_DURATION, MAX_STREAM_EVENTS, MAX_TOKENS, show
from sims.core.trace import TraceError

MOONCAKE_BLOCK = 512  # tokens per hash id (Mooncake's FAST'25 traces)
CHARS_PER_TOKEN = 4  # prompt_chars, as the llm workload estimates them
_NS = 1_000_000_000


def request(i: int, t: float, prompt: int, output: int, segments: list) -> dict:
    """The stream event of one traced request (the llm workload's fields)."""
    return {
        "t": t,
        "kind": "request",
        "id": i,
        "prompt_len": prompt,
        "output_len": output,
        "max_tokens": output,
        "tenant": 0,
        "segments": segments,
        "prompt_chars": prompt * CHARS_PER_TOKEN,
    }


def _seconds(t: float, field: str, where: str) -> float:
    if t > MAX_DURATION:
        raise TraceError(f"{where}: field {field!r}: {t:g} s after the first row is more than {MAX_DURATION:g} s")
    return t


def _tokens(value: object, field: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TraceError(f"{where}: field {field!r}: expected a whole number of tokens, got {show(value)}")
    if value < 0:
        raise TraceError(f"{where}: field {field!r}: expected tokens >= 0, got {show(value)}")
    if value > MAX_TOKENS:
        raise TraceError(f"{where}: field {field!r}: {show(value)} tokens is more than {MAX_TOKENS}")
    return value


# -- Azure ---------------------------------------------------------------------------------------

_STAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?",
    re.ASCII,
)
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")


def _days(y: int, m: int, d: int) -> int:
    """Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (integers only)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def stamp_ns(text: str) -> int | None:
    """A date-time string as integer nanoseconds since the epoch (UTC), or None if it is not one."""
    m = _STAMP.fullmatch(text)
    if m is None:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if not (1 <= mo <= 12 and 1 <= d <= _MONTH_DAYS[mo - 1] and (mo != 2 or d <= 28 or leap)):
        return None
    if h > 23 or mi > 59 or s > 59:
        return None
    frac = m.group(7) or ""
    ns = ((_days(y, mo, d) * 24 + h) * 60 + mi) * 60 + s
    ns = ns * _NS + int(frac.ljust(9, "0") or "0")
    zone = m.group(8)
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        hh, mm = int(zone[1:3]), int(zone[-2:])
        if hh > 23 or mm > 59:
            return None
        ns -= sign * (hh * 60 + mm) * 60 * _NS
    return ns


class TimedReader:
    """A reader whose rows carry their own times: the events are built as the rows are read, each
    counted against ``max_events`` and against ``MAX_STREAM_BYTES`` of memory (``bytes``, the
    model of ``sims.core.budget``), so the row that passes either is named."""

    name = ""
    timed = True

    def __init__(self, where: str) -> None:
        self.where = where  # the file, in messages
        self.events: list[dict] = []
        self.bytes = 0
        self.max_events = MAX_STREAM_EVENTS

    def __len__(self) -> int:
        return len(self.events)

    def finish(self, duration: float) -> list[dict]:
        return self.events

    def add(self, n: int, ev: dict, size: int) -> None:
        """Keep ``ev`` (row ``n``), which holds ``size`` bytes of its own."""
        self.events.append(ev)
        self.bytes += size + SLOT
        if len(self.events) > self.max_events:
            raise TraceError(f"{self.where}:{n}: more than {self.max_events} events; cut the trace (head -n {n - 1})")
        if self.bytes > MAX_STREAM_BYTES:
            raise TraceError(
                f"{self.where}:{n}: the rows so far hold about {self.bytes >> 20} MiB of events, more than "
                f"{MAX_STREAM_BYTES >> 20}; cut the trace (head -n {n - 1})"
            )


# the memory of a request event without its segments (sims.core.budget's model: a dict of 9 keys,
# the float time and four integers that are not small)
_REQUEST_BYTES = 272 + 24 + 4 * 28
_SEGMENT_BYTES = 56 + 16 + 28 + 49 + 12  # a [content id, tokens] list: the list, its id string, the count


class AzureReader(TimedReader):
    """Rows of the Azure LLM inference trace; the header names the columns (any order, extra
    columns ignored)."""

    name = "azure"

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.cols: tuple[int, int, int] | None = None
        self.width = 0
        self.first = 0  # the first row's time, ns
        self.last = 0
        self._minute, self._minute_ns = "", 0  # the last row's minute, and its time in ns

    def feed(self, n: int, line: str) -> None:
        text = line.strip()
        if not text:
            return
        cells = text.split(",")
        if '"' in text or " " in text:
            cells = [c.strip().strip('"') for c in cells]
        if self.cols is None:
            missing = [c for c in AZURE_COLUMNS if c not in cells]
            if missing:
                raise TraceError(
                    f"{self.where}:{n}: missing column {missing[0]!r}; expected the header "
                    f"{','.join(AZURE_COLUMNS)}, got {show(text)}"
                )
            self.cols = tuple(cells.index(c) for c in AZURE_COLUMNS)  # type: ignore[assignment]
            self.width = len(cells)
            return
        if len(cells) != self.width:
            raise TraceError(f"{self.where}:{n}: expected {self.width} comma-separated fields, got {len(cells)}")
        ts, ctx, gen = (cells[k] for k in self.cols)
        ns = self._stamp(ts)
        if ns is None:
            raise TraceError(
                f"{self.where}:{n}: field 'TIMESTAMP': expected a date-time like 2023-11-16 18:15:46.6805900, "
                f"got {show(ts)}"
            )
        if not self.events:
            self.first = self.last = ns
        if ns < self.last:
            raise TraceError(
                f"{self.where}:{n}: field 'TIMESTAMP': time goes backwards ({show(ts)} is before the row above)"
            )
        self.last = ns
        if ctx.isdigit() and gen.isdigit() and len(ctx) <= 7 and len(gen) <= 7 and ctx.isascii() and gen.isascii():
            prompt, output = int(ctx), int(gen)  # the common case: what _tokens accepts, read at once
        else:
            prompt, output = int(MAX_TOKENS) + 1, 0
        if prompt > MAX_TOKENS or output > MAX_TOKENS:
            where = f"{self.where}:{n}"
            prompt = _tokens(_int(ctx), "ContextTokens", where)
            output = _tokens(_int(gen), "GeneratedTokens", where)
        i = len(self.events)
        t = (ns - self.first) / _NS
        if t > MAX_DURATION:
            _seconds(t, "TIMESTAMP", f"{self.where}:{n}")
        self.add(n, request(i, t, prompt, output, [[f"u{i}", prompt]]), _REQUEST_BYTES + 64 + _SEGMENT_BYTES)

    def _stamp(self, ts: str) -> int | None:
        """``stamp_ns``, with the minute (``2023-11-16 18:15:``) read once for the many rows in it."""
        minute, rest = ts[:17], ts[17:]
        if minute == self._minute and len(rest) >= 2 and rest[:2].isdigit() and rest[:2] < "60":
            frac = rest[3:]
            if not rest[2:] or (rest[2] == "." and 1 <= len(frac) <= 9 and frac.isdigit() and frac.isascii()):
                return self._minute_ns + int(rest[:2]) * _NS + int(frac.ljust(9, "0") or "0")
        ns = stamp_ns(ts)
        if ns is not None and len(ts) > 17 and ts[16] == ":" and not ts[19:].strip(".0123456789"):
            self._minute, self._minute_ns = minute, stamp_ns(minute + "00")
        return ns


def _int(text: str) -> int | str:
    """A decimal integer cell as an int; anything else stays text (refused by ``_tokens``)."""
    digits = text[1:] if text[:1] == "-" else text
    return int(text) if digits.isascii() and digits.isdigit() and len(digits) <= 20 else text


__all__ = [
    "AZURE_COLUMNS",
    "MAX_TOKENS",
    "MOONCAKE_BLOCK",
    "AzureReader",
    "TimedReader",
    "request",
    "stamp_ns",
]
