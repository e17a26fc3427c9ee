"""``contention trace TOPIC``: run one policy over a user's own trace file.

Each topic declares its flags and a runner in a ``TraceSpec``; the CLI builds the subcommand
from it. Runners raise ``TraceError`` ("file:line: ...") for malformed lines and ``ValueError``
for bad flags; the CLI turns both into one line and exit status 2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sims.core.stream import TraceError


@dataclass(frozen=True)
class TraceArg:
    flag: str  # "--frames"
    type: type  # int, float or str
    help: str
    required: bool = True


@dataclass(frozen=True)
class TraceSpec:
    help: str
    args: tuple[TraceArg, ...]
    run: Callable[[str, dict[str, Any], Path], dict]  # (policy, args by dest name, path) -> JSON


def lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, stripped text) of each non-blank line; unreadable files raise TraceError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path}: not UTF-8 text") from None
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s and not s.startswith("#"):
            yield n, s


__all__ = ["TraceArg", "TraceError", "TraceSpec", "lines"]
