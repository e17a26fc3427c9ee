"""Mooncake's JSONL trace (``{"timestamp": ms, "input_length", "output_length", "hash_ids"}``) as
LLM request events: the format is described in ``sims.core.llmtraces``, whose request events and
bounds this reader shares. Rows are parsed a block at a time where they can be (one JSON array, one
C call) and a hash id's full 512-token block is one list for every row that names it.
"""

from __future__ import annotations

import json

from sims.core.budget import MAX_STREAM_BYTES, SLOT
from sims.core.limits import MAX_DURATION, MAX_TOKENS, show
from sims.core.llmtraces import (
    _REQUEST_BYTES,
    _SEGMENT_BYTES,
    MOONCAKE_BLOCK,
    TimedReader,
    _seconds,
    _tokens,
    request,
)
from sims.core.trace import TraceError


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


class _Huge:
    """An integer literal too long to convert (more than 40 digits): refused with its field and
    its length, never converted (or shown as inf)."""

    __slots__ = ("digits",)

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"


def _json_int(text: str) -> int | _Huge:
    return int(text) if len(text) <= 40 else _Huge(text)


class MooncakeReader(TimedReader):
    """Rows of a Mooncake trace (one JSON object a line); ``timestamp`` in milliseconds. A full
    512-token segment of a hash id is one list shared by every row that names the id (events are
    read-only), so a trace of shared prefixes holds each block once."""

    name = "mooncake"

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.first: int | float = 0
        self.last: int | float = 0
        self._blocks: dict[int, list] = {}  # hash id -> its shared ["m<id>", 512] segment

    def feed(self, n: int, line: str) -> None:
        """One line (the browser sends lines as they come)."""
        text = line.strip()
        if not text:
            return
        try:
            row = json.loads(text, parse_int=_json_int, parse_constant=_refuse_constant)
        except RecursionError:
            raise TraceError(f"{self.where}:{n}: JSON nested too deeply") from None
        except ValueError as exc:
            raise TraceError(
                f"{self.where}:{n}: not a JSON object ({show(getattr(exc, 'msg', str(exc)), 80)})"
            ) from None
        self._row(n, row)

    def feed_block(self, first: int, lines: list[str]) -> None:
        """Lines numbered from ``first``, parsed as one JSON array (one call, not one a line);
        a block that does not parse that way is read line by line, which names the bad line."""
        numbers = [n for n, text in enumerate(lines, first) if text and not text.isspace()]
        try:
            body = lines if len(numbers) == len(lines) else [lines[n - first] for n in numbers]
            rows = json.loads("[" + ",".join(body) + "]", parse_constant=_refuse_constant)
        except (ValueError, RecursionError):  # a bad line, NaN, an integer past 4,300 digits
            rows = None
        if rows is None or len(rows) != len(numbers):
            for n, text in enumerate(lines, first):
                self.feed(n, text)
            return
        self._rows(numbers, rows)

    def _rows(self, numbers: list[int], rows: list) -> None:
        """``_row`` for each row, its common case inlined: a row that fails any check goes to
        ``_row``, which says what is wrong."""
        events, shared, blocks_get = self.events, self._blocks, self._blocks.get
        block, max_tokens, limit, ints = MOONCAKE_BLOCK, MAX_TOKENS, 1 << 63, {int}
        first, last, size_all = self.first, self.last, self.bytes
        room = min(self.max_events - len(events), (MAX_STREAM_BYTES - size_all) // (_REQUEST_BYTES + SLOT))
        for n, row in zip(numbers, rows, strict=True):
            try:
                ts, prompt, output, ids = row["timestamp"], row["input_length"], row["output_length"], row["hash_ids"]
            except (KeyError, TypeError):
                ts = prompt = output = ids = None
            if not (
                events
                and room > 0
                and type(ts) is int
                and last <= ts < limit
                and type(prompt) is int
                and 0 <= prompt <= max_tokens
                and type(output) is int
                and 0 <= output <= max_tokens
                and type(ids) is list
                and len(ids) * block < prompt + block
                and (not ids or (set(map(type, ids)) <= ints and min(ids) >= 0 and max(ids) < limit))
                and (ts - first) / 1000 <= MAX_DURATION
            ):
                self.last, self.bytes = last, size_all
                self._row(n, row)  # the first row, a bound reached, or something wrong: said there
                first, last, size_all = self.first, self.last, self.bytes
                room = min(self.max_events - len(events), (MAX_STREAM_BYTES - size_all) // (_REQUEST_BYTES + SLOT))
                continue
            i = len(events)
            full = min(len(ids), prompt // block)
            segments = list(map(blocks_get, ids[:full]))
            size = _REQUEST_BYTES + SLOT + 64 + 8 * len(ids)
            if None in segments:
                for k, seg in enumerate(segments):
                    if seg is None:
                        h = ids[k]
                        seg = blocks_get(h)
                        if seg is None:
                            seg = shared[h] = [f"m{h}", block]
                            size += _SEGMENT_BYTES
                        segments[k] = seg
            for k in range(full, len(ids)):
                segments.append([f"m{ids[k]}", prompt - k * block])
                size += _SEGMENT_BYTES
            left = prompt - len(ids) * block
            if left > 0:
                segments.append([f"u{i}", left])
                size += _SEGMENT_BYTES
            last = ts
            size_all += size
            room -= size // (_REQUEST_BYTES + SLOT)
            events.append(request(i, (ts - first) / 1000, prompt, output, segments))
        self.last, self.bytes = last, size_all

    def _row(self, n: int, row: object) -> None:
        if type(row) is not dict:
            raise TraceError(f"{self.where}:{n}: expected a JSON object, got {show(row)}")
        try:
            ts, prompt, output = row["timestamp"], row["input_length"], row["output_length"]
        except KeyError as exc:
            raise TraceError(f"{self.where}:{n}: field {exc.args[0]!r}: missing") from None
        tt = type(ts)
        if not ((tt is int and ts < 1 << 63) or (tt is float and ts - ts == 0.0)) or ts < 0:
            raise TraceError(f"{self.where}:{n}: field 'timestamp': expected milliseconds >= 0, got {show(ts)}")
        if not self.events:
            self.first = self.last = ts
        if ts < self.last:
            raise TraceError(
                f"{self.where}:{n}: field 'timestamp': {show(ts)} goes backwards (previous {show(self.last)})"
            )
        self.last = ts
        where = f"{self.where}:{n}"
        if type(prompt) is not int or not 0 <= prompt <= MAX_TOKENS:
            _tokens(prompt, "input_length", where)
        if type(output) is not int or not 0 <= output <= MAX_TOKENS:
            _tokens(output, "output_length", where)
        i = len(self.events)
        segments, size = self._segments(row.get("hash_ids", []), prompt, i, where)
        t = _seconds((ts - self.first) / 1000, "timestamp", where)
        self.add(n, request(i, t, prompt, output, segments), _REQUEST_BYTES + size)

    def _segments(self, ids: object, prompt: int, i: int, where: str) -> tuple[list, int]:
        """The prompt's segments, and the bytes they add (shared blocks count once)."""
        if type(ids) is not list:
            raise TraceError(f"{where}: field 'hash_ids': expected a list of integers, got {show(ids)}")
        blocks = -(-prompt // MOONCAKE_BLOCK)
        if len(ids) > blocks:
            raise TraceError(
                f"{where}: field 'hash_ids': {len(ids)} ids for {prompt} tokens; expected at most "
                f"{blocks} (one per {MOONCAKE_BLOCK}-token block)"
            )
        if ids and (not set(map(type, ids)) <= {int} or min(ids) < 0 or max(ids) >= 1 << 63):
            bad = next(h for h in ids if type(h) is not int or not 0 <= h < 1 << 63)
            raise TraceError(f"{where}: field 'hash_ids': expected integers in [0, 2^63), got {show(bad)}")
        full = min(len(ids), prompt // MOONCAKE_BLOCK)  # ids past these cover the last, partial block
        segments = list(map(self._blocks.get, ids[:full]))
        size = 56 + 8 * len(ids) + 8
        if None in segments:  # ids seen for the first time
            for k, seg in enumerate(segments):
                if seg is None:
                    h = ids[k]
                    seg = self._blocks.get(h)
                    if seg is None:
                        seg = self._blocks[h] = [f"m{h}", MOONCAKE_BLOCK]
                        size += _SEGMENT_BYTES
                    segments[k] = seg
        for k in range(full, len(ids)):
            segments.append([f"m{ids[k]}", prompt - k * MOONCAKE_BLOCK])
            size += _SEGMENT_BYTES
        left = prompt - len(ids) * MOONCAKE_BLOCK
        if left > 0:
            segments.append([f"u{i}", left])
            size += _SEGMENT_BYTES
        return segments, size


__all__ = ["MooncakeReader"]
