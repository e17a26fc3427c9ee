"""Trace files: the one line reader every trace goes through, and ``contention trace TOPIC``.

``read_blocks`` streams a file in 1 MiB blocks of lines (``read_lines``, one line at a time), so
memory stays bounded whatever the file holds: a line over ``MAX_LINE_CHARS`` is refused as soon as
it is seen (a 1 GB file of NUL bytes fails on its first line, after reading 1 MiB), bytes that
are not UTF-8 are refused with their line number, a FIFO is refused unopened, and an error echoes
at most about 40 characters of the bad token (``limits.show``).

Each topic declares its ``contention trace`` flags and a runner in a ``TraceSpec``; the CLI builds
the subcommand from it and checks every flag's value against its declared range before the runner
sees it. Runners raise ``TraceError`` ("file:line: ...") for malformed lines and ``InputError``
for bad flags (``built`` turns a constructor's ValueError into one); the CLI prints either as one
line with exit status 2.
"""

from __future__ import annotations

import gc
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sims.core.limits import MAX_LINE_CHARS, InputError, show


class TraceError(InputError):
    """A malformed trace line: the message starts with file:line."""


@dataclass(frozen=True)
class TraceArg:
    flag: str  # "--frames"
    type: type  # int, float, str, or bool for an on/off switch ("--undirected")
    help: str
    required: bool = True
    positive: bool = True  # ints >= 1, floats finite and > 0 (sizes and rates); False for names


@dataclass(frozen=True)
class TraceSpec:
    help: str
    args: tuple[TraceArg, ...]
    run: Callable[[str, dict[str, Any], Path], dict]  # (policy, args by dest name, path) -> JSON
    policy_flag: str = "--policy"  # what the topic calls its policy: "--algorithm", "--collector"


def read_lines(path: str | Path, max_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, str]]:
    """(line number, text without its line ending) for every line of ``path`` (``read_blocks``,
    one line at a time)."""
    for first, block in read_blocks(path, max_chars):
        yield from enumerate(block, first)


def read_blocks(path: str | Path, max_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, list[str]]]:
    """(number of the first line, the lines) for each 1 MiB block of ``path``, lines without
    their endings, so memory stays bounded: a line still unfinished after ``4 * max_chars`` bytes
    is refused before more is read. A FIFO or a socket is refused unopened (opening one with no
    writer would wait forever); unreadable files, over-long lines and bytes that are not UTF-8
    raise TraceError naming the file and the line."""
    path = Path(path)
    why = special_file(path)
    if why:
        raise TraceError(f"{path}: {why}; expected a regular file")
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed in the finally below, also when the caller stops early)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    limit = 4 * max_chars + 2  # UTF-8 is at most 4 bytes a character
    try:
        n, rest = 0, b""
        while True:
            try:
                block = f.read(1 << 20)
            except OSError as exc:  # a directory, a device that cannot be read
                raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from None
            if not block:
                break
            data = rest + block
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if len(rest) >= limit:
                line = n + data.count(b"\n") + 1
                raise TraceError(f"{path}:{line}: line longer than {max_chars} characters; is this a trace file?")
            if cut:
                text = _decode(path, n, data[:cut])
                lines = text.split("\n")
                lines.pop()
                yield n + 1, _checked(path, n, lines, max_chars, "\r" in text)
                n += len(lines)
        if rest:
            yield n + 1, _checked(path, n, [_decode(path, n, rest)], max_chars, True)
    finally:
        f.close()


@contextmanager
def bulk() -> Iterator[None]:
    """While a trace is read into memory: no cyclic garbage collection. Each pass would walk every
    event read so far (a request holds lists, so the collector tracks it), making a long read
    quadratic; reading creates no cycles, and the collector is back on afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def special_file(path: str | Path) -> str:
    """What ``path`` is when opening it to read could wait forever ("a FIFO", "a socket"); else ""."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return ""  # opening it says why
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else ""


def _decode(path: Path, n: int, data: bytes) -> str:
    """``data`` (whole lines after line ``n``) as text; the first bad line is named."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = n + data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        raise TraceError(f"{path}:{line}: not UTF-8 text (byte {col} of the line)") from None


def _checked(path: Path, n: int, lines: list[str], max_chars: int, cr: bool) -> list[str]:
    """``lines`` (the lines after line ``n``) without a trailing "\\r", each at most ``max_chars``."""
    if max(map(len, lines)) > max_chars:
        k = next(i for i, text in enumerate(lines) if len(text) > max_chars)
        raise TraceError(f"{path}:{n + k + 1}: line longer than {max_chars} characters; is this a trace file?")
    if cr:
        lines = [text[:-1] if text.endswith("\r") else text for text in lines]
    return lines


def built(make: Callable[[], Any]) -> Any:
    """``make()``: the policy or panel a trace command builds from the user's flags. A ValueError
    its constructor raises for its arguments (misuse is a ValueError) is then the user's, so it
    becomes an InputError; one raised later, while the trace replays, stays a bug."""
    try:
        return make()
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(str(exc)) from None


def lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, stripped text) of each line that is neither blank nor a '#' comment."""
    for n, line in read_lines(path):
        s = line.strip()
        if s and not s.startswith("#"):
            yield n, s


def bad_token(path: str | Path, n: int, what: str, token: str) -> TraceError:
    """``file:line: expected WHAT, got TOKEN`` with the token cut to about 40 characters."""
    return TraceError(f"{path}:{n}: expected {what}, got {show(token)}")


__all__ = [
    "InputError",
    "TraceArg",
    "TraceError",
    "TraceSpec",
    "bad_token",
    "built",
    "lines",
    "read_blocks",
    "read_lines",
    "show",
    "special_file",
]
