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
    """(line number, text without its line ending) for every line of ``path``, read in 1 MiB
    blocks, so memory stays bounded: a line still unfinished after ``4 * max_chars`` bytes is
    refused before more is read. Unreadable files, over-long lines and bytes that are not UTF-8
    raise TraceError naming the file and the line."""
    path = Path(path)
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
                for text in _decode(path, n, data[:cut]).split("\n")[:-1]:
                    n += 1
                    yield n, _checked(path, n, text, max_chars)
        if rest:
            n += 1
            yield n, _checked(path, n, _decode(path, n - 1, rest), max_chars)
    finally:
        f.close()


def _decode(path: Path, n: int, data: bytes) -> str:
    """``data`` (whole lines after line ``n``) as text; the first bad line is named."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = n + data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        raise TraceError(f"{path}:{line}: not UTF-8 text (byte {col} of the line)") from None


def _checked(path: Path, n: int, text: str, max_chars: int) -> str:
    if len(text) > max_chars:
        raise TraceError(f"{path}:{n}: line longer than {max_chars} characters; is this a trace file?")
    return text[:-1] if text.endswith("\r") else text


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
