"""Trace files: the one line reader every trace goes through, and ``contention trace TOPIC``.

``read_lines`` streams a file line by line in binary, so memory stays bounded whatever the file
holds: a line over ``MAX_LINE_CHARS`` is refused as soon as it is seen (a 1 GB file of NUL bytes
fails on its first line, after reading 64 KiB), bytes that are not UTF-8 are refused with their
line number, and an error echoes at most about 40 characters of the bad token (``limits.show``).

Each topic declares its ``contention trace`` flags and a runner in a ``TraceSpec``; the CLI builds
the subcommand from it and checks every flag's value against its declared range before the runner
sees it. Runners raise ``TraceError`` ("file:line: ...") for malformed lines and ``ValueError``
for bad flags; the CLI turns both into one line and exit status 2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sims.core.limits import MAX_LINE_CHARS, show


class TraceError(ValueError):
    """A malformed trace line: the message starts with file:line."""


@dataclass(frozen=True)
class TraceArg:
    flag: str  # "--frames"
    type: type  # int, float or str
    help: str
    required: bool = True
    positive: bool = True  # ints >= 1, floats finite and > 0 (every trace flag so far is a size or a rate)


@dataclass(frozen=True)
class TraceSpec:
    help: str
    args: tuple[TraceArg, ...]
    run: Callable[[str, dict[str, Any], Path], dict]  # (policy, args by dest name, path) -> JSON


def read_lines(path: str | Path, max_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, str]]:
    """(line number, text without its line ending) for every line of ``path``, read one line at a
    time. Unreadable files, over-long lines and bytes that are not UTF-8 raise TraceError."""
    path = Path(path)
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed in the finally below, also when the caller stops early)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        n, limit = 0, 4 * max_chars + 2  # UTF-8 is at most 4 bytes a character
        while True:
            try:
                raw = f.readline(limit)
            except OSError as exc:  # a directory, a device that cannot be read
                raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from None
            if not raw:
                return
            n += 1
            if len(raw) >= limit and not raw.endswith(b"\n"):
                raise TraceError(f"{path}:{n}: line longer than {max_chars} characters; is this a trace file?")
            try:
                text = raw.rstrip(b"\r\n").decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TraceError(f"{path}:{n}: not UTF-8 text (byte {exc.start} of the line)") from None
            if len(text) > max_chars:
                raise TraceError(f"{path}:{n}: line longer than {max_chars} characters; is this a trace file?")
            yield n, text
    finally:
        f.close()


def lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, stripped text) of each line that is neither blank nor a '#' comment."""
    for n, line in read_lines(path):
        s = line.strip()
        if s and not s.startswith("#"):
            yield n, s


def bad_token(path: str | Path, n: int, what: str, token: str) -> TraceError:
    """``file:line: expected WHAT, got TOKEN`` with the token cut to about 40 characters."""
    return TraceError(f"{path}:{n}: expected {what}, got {show(token)}")


__all__ = ["TraceArg", "TraceError", "TraceSpec", "bad_token", "lines", "read_lines", "show"]
