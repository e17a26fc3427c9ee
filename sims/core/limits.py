"""Bounds every entry point shares (the CLI, the server, the site) and how bad values are shown.

One seed rule: a seed is an integer in [0, MAX_SEED], the largest integer a browser's JSON keeps
exactly; as text it is ASCII decimal digits only. ``show`` renders a rejected value for an error
message in at most about 40 characters, so a 2 GB token or a 5,000-digit integer never becomes a
2 GB message (or a ``ValueError`` of its own from ``int.__str__``).
"""

from __future__ import annotations

from typing import Any

MAX_SEED = 2**53 - 1
MAX_RATE = 1e6  # events per virtual second that a workload may ask for
MAX_DURATION = 86_400.0  # virtual seconds for a CLI run: one virtual day (the server's bound is lower)
MAX_TOKENS = 1 << 20  # tokens in one prompt or one output (1,048,576: past every context window we model)
MAX_STREAM_EVENTS = 5_000_000  # refused while the stream is built (about 1.5 GB of events; 2.5x the largest 10x preset)
MAX_LINE_CHARS = 1 << 16  # a trace line longer than this is refused, not read whole
MAX_EVENT_CHARS = 1 << 20  # a line of a canonical stream (one event: a whole graph is one)
SHOW_CHARS = 40


class InputError(ValueError):
    """Bad input from the user (a flag, a preset, a trace, a request): the CLI prints its message
    as one line and exits 2, the server answers 4xx. Anything else that escapes is our own bug."""


def show(value: Any, cap: int = SHOW_CHARS) -> str:
    """``repr(value)`` cut to about ``cap`` characters; huge integers by their digit count."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        if value.bit_length() < 14_000:  # str() refuses past 4,300 digits
            return f"an integer of {len(str(abs(value)))} digits"
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    if isinstance(value, (str, bytes)) and len(value) > cap:
        value = value[: cap + 1]  # repr only what is shown
    try:
        text = repr(value) if not isinstance(value, (list, dict, tuple)) else _short_repr(value, cap)
    except (ValueError, RecursionError):  # int too long for str(), or too deeply nested
        return f"a {type(value).__name__}"
    return text if len(text) <= cap else text[: cap - 3] + "..."


def _short_repr(value: Any, cap: int) -> str:
    import reprlib

    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxdict, r.maxstring, r.maxother = 2, 4, 4, cap, cap
    return r.repr(value)


def check_seed(value: Any, where: str = "seed") -> int:
    """The seed rule for values that are already parsed (JSON, TOML)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: expected an integer seed, got {show(value)}")
    if not 0 <= value <= MAX_SEED:
        raise InputError(f"{where}: expected a seed between 0 and {MAX_SEED}, got {show(value)}")
    return value


def parse_seed(text: str, where: str = "--seed") -> int:
    """The seed rule for text (a flag, a query parameter): ASCII decimal digits (at most 20, as
    the API reads them), then the range of ``check_seed``."""
    if not (text.isascii() and text.isdigit()) or len(text) > 20:
        raise InputError(f"{where}: expected an integer seed between 0 and {MAX_SEED}, got {show(text)}")
    return check_seed(int(text), where)


__all__ = [
    "InputError",
    "MAX_DURATION",
    "MAX_RATE",
    "MAX_EVENT_CHARS",
    "MAX_LINE_CHARS",
    "MAX_SEED",
    "MAX_STREAM_EVENTS",
    "MAX_TOKENS",
    "check_seed",
    "parse_seed",
    "show",
]
