"""LLM request traces in the public formats: the Azure LLM inference trace CSV and Mooncake's JSONL.

Each row becomes one ``request`` event of the shape the engine and cluster workloads emit
(``sims/workloads/llm.py``): ``prompt_len``, ``output_len``, ``max_tokens`` (= the row's output, what
the client let it generate), ``tenant`` 0, ``prompt_chars`` (4 a token) and the prompt as
``segments``. Times are seconds since the first row, non-decreasing.

- Azure (``TIMESTAMP,ContextTokens,GeneratedTokens``): ``TIMESTAMP`` is a date-time string,
  ``2023-11-16 18:15:46.6805900`` (2023: 7 fractional digits) or ``2024-05-10 00:00:00.009930+00:00``
  (2024: 6 digits and a UTC offset), read exactly in integer nanoseconds. The trace says nothing of
  prompt content, so every prompt is its own segment and nothing is shared.
- Mooncake (``{"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}``): hash id k
  of a row names the content of its tokens ``[512k, 512(k+1))``, so a row's prompt is one segment
  ``["m<id>", 512]`` per id (the last one holds what is left of ``input_length``). Two rows that
  start with the same ids start with the same segments, so they share their block hashes (prefix
  caching) and their radix-tree path (prefix-aware routing), for any block size that divides 512.
  Tokens beyond the ids (a row with fewer ids than blocks) are the row's own segment.
"""

from __future__ import annotations

import json
import math
import re

from sims.core.limits import MAX_DURATION, show
from sims.core.trace import TraceError

MOONCAKE_BLOCK = 512  # tokens per hash id (Mooncake's FAST'25 traces)
MAX_TOKENS = 1 << 24  # a prompt or an output longer than this is refused (16.7M tokens)
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
    """A reader whose rows carry their own times: the events are built as the rows are read."""

    name = ""
    timed = True

    def __init__(self, where: str) -> None:
        self.where = where  # the file, in messages
        self.events: list[dict] = []

    def __len__(self) -> int:
        return len(self.events)

    def finish(self, duration: float) -> list[dict]:
        return self.events


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

    def feed(self, n: int, line: str) -> None:
        text = line.strip()
        if not text:
            return
        where = f"{self.where}:{n}"
        cells = [c.strip().strip('"') for c in text.split(",")]
        if self.cols is None:
            missing = [c for c in AZURE_COLUMNS if c not in cells]
            if missing:
                raise TraceError(
                    f"{where}: missing column {missing[0]!r}; expected the header "
                    f"{','.join(AZURE_COLUMNS)}, got {show(text)}"
                )
            self.cols = tuple(cells.index(c) for c in AZURE_COLUMNS)  # type: ignore[assignment]
            self.width = len(cells)
            return
        if len(cells) != self.width:
            raise TraceError(f"{where}: expected {self.width} comma-separated fields, got {len(cells)}")
        ts, ctx, gen = (cells[k] for k in self.cols)
        ns = stamp_ns(ts)
        if ns is None:
            raise TraceError(
                f"{where}: field 'TIMESTAMP': expected a date-time like 2023-11-16 18:15:46.6805900, got {show(ts)}"
            )
        if not self.events:
            self.first = self.last = ns
        if ns < self.last:
            raise TraceError(f"{where}: field 'TIMESTAMP': time goes backwards ({show(ts)} is before the row above)")
        self.last = ns
        prompt = _tokens(_int(ctx), "ContextTokens", where)
        output = _tokens(_int(gen), "GeneratedTokens", where)
        i = len(self.events)
        self.events.append(
            request(i, _seconds((ns - self.first) / _NS, "TIMESTAMP", where), prompt, output, [[f"u{i}", prompt]])
        )


def _int(text: str) -> int | str:
    """A decimal integer cell as an int; anything else stays text (refused by ``_tokens``)."""
    digits = text[1:] if text[:1] == "-" else text
    return int(text) if digits.isascii() and digits.isdigit() and len(digits) <= 20 else text


# -- Mooncake ------------------------------------------------------------------------------------


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _json_int(text: str) -> int | float:
    return int(text) if len(text) <= 40 else math.inf  # an integer of 5,000 digits: refused as too large


class MooncakeReader(TimedReader):
    """Rows of a Mooncake trace (one JSON object a line); ``timestamp`` in milliseconds."""

    name = "mooncake"

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.first: int | float = 0
        self.last: int | float = 0

    def feed(self, n: int, line: str) -> None:
        text = line.strip()
        if not text:
            return
        where = f"{self.where}:{n}"
        try:
            row = json.loads(text, parse_int=_json_int, parse_constant=_refuse_constant)
        except RecursionError:
            raise TraceError(f"{where}: JSON nested too deeply") from None
        except ValueError as exc:
            raise TraceError(f"{where}: not a JSON object ({show(getattr(exc, 'msg', str(exc)), 80)})") from None
        if not isinstance(row, dict):
            raise TraceError(f"{where}: expected a JSON object, got {show(row)}")
        for field in ("timestamp", "input_length", "output_length"):
            if field not in row:
                raise TraceError(f"{where}: field {field!r}: missing")
        ts = row["timestamp"]
        if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not (math.isfinite(ts) and ts >= 0):
            raise TraceError(f"{where}: field 'timestamp': expected milliseconds >= 0, got {show(ts)}")
        if not self.events:
            self.first = self.last = ts
        if ts < self.last:
            raise TraceError(f"{where}: field 'timestamp': {show(ts)} goes backwards (previous {show(self.last)})")
        self.last = ts
        prompt = _tokens(row["input_length"], "input_length", where)
        output = _tokens(row["output_length"], "output_length", where)
        i = len(self.events)
        segments = self._segments(row.get("hash_ids", []), prompt, i, where)
        self.events.append(request(i, _seconds((ts - self.first) / 1000, "timestamp", where), prompt, output, segments))

    @staticmethod
    def _segments(ids: object, prompt: int, i: int, where: str) -> list:
        if not isinstance(ids, list):
            raise TraceError(f"{where}: field 'hash_ids': expected a list of integers, got {show(ids)}")
        blocks = -(-prompt // MOONCAKE_BLOCK)
        if len(ids) > blocks:
            raise TraceError(
                f"{where}: field 'hash_ids': {len(ids)} ids for {prompt} tokens; expected at most "
                f"{blocks} (one per {MOONCAKE_BLOCK}-token block)"
            )
        segments = []
        left = prompt
        for h in ids:
            if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < 1 << 63:
                raise TraceError(f"{where}: field 'hash_ids': expected integers >= 0, got {show(h)}")
            take = MOONCAKE_BLOCK if left > MOONCAKE_BLOCK else left
            segments.append([f"m{h}", take])
            left -= take
        if left > 0:
            segments.append([f"u{i}", left])
        return segments


__all__ = [
    "AZURE_COLUMNS",
    "MAX_TOKENS",
    "MOONCAKE_BLOCK",
    "AzureReader",
    "MooncakeReader",
    "TimedReader",
    "request",
    "stamp_ns",
]
