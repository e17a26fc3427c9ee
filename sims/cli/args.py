"""Argument types and the refusals they raise: each names its flag (argparse adds "argument --x:").

Every refusal is an exception that ``sims.cli.main`` prints as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from pathlib import Path

from sims.core.limits import MAX_DURATION, InputError, parse_seed, show


class UsageError(InputError):
    """A bad flag or argument: printed as one line, exit status 2 (as every ``InputError``)."""


class Terminated(Exception):
    """SIGTERM arrived: unwind (removing a half-written --trace-out), then exit 143."""


class _Once(argparse._StoreAction):
    """A flag that takes one value and may be given once: ``--seed 1 --seed 2`` is refused rather
    than read as 2 (argparse's default keeps the last)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = parser._given
        if self.dest in seen:
            raise UsageError(
                f"{parser.prog}: argument {'/'.join(self.option_strings)}: given twice "
                f"({show(seen[self.dest])}, then {show(values)}); give it once"
            )
        seen[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


class Parser(argparse.ArgumentParser):
    """``fill(parser)``, when given, adds the parser's arguments the first time it parses (or
    prints its help): a command's flags, and the modules they name, cost a plain ``run`` nothing
    (start-up is part of the engine speed target, docs/benchmarks.md). A flag that stores one value may be given
    once (``_Once``); repeatable flags say so with ``action="append"``."""

    def __init__(self, *args, fill: Callable[[Parser], None] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._fill = fill
        self._given: dict[str, object] = {}  # dest -> value of each _Once flag given in this parse

    def add_argument(self, *args, **kwargs):
        if args and args[0].startswith(self.prefix_chars) and kwargs.get("action", "store") == "store":
            kwargs["action"] = _Once
        return super().add_argument(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        fill, self._fill = self._fill, None
        if fill is not None:
            fill(self)
        self._given = {}
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(f"{self.prog}: {message}")


def seed(text: str) -> int:
    try:
        return parse_seed(text, "seed")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("seed: ")) from None


def number(text: str) -> float:
    try:
        value = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {show(text)}")
    return value


def duration(text: str) -> float:
    value = number(text)
    if not 0 < value <= MAX_DURATION:
        raise argparse.ArgumentTypeError(f"expected seconds > 0 and <= {MAX_DURATION:g}, got {show(text)}")
    return value


def positive(typ: type):
    """A converter for trace flags: integers >= 1, or finite numbers > 0."""

    def convert(text: str):
        if typ is int:
            if not (text.isascii() and text.isdigit() and len(text) <= 18) or int(text) < 1:
                raise argparse.ArgumentTypeError(f"expected a positive integer, got {show(text)}")
            return int(text)
        value = number(text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a number > 0, got {show(text)}")
        return value

    convert.__name__ = f"positive {typ.__name__}"
    return convert


def path(text: str) -> str:
    if not text or "\0" in text:
        raise argparse.ArgumentTypeError(f"expected a file name, got {show(text)}")
    return text


def port(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 5) or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port between 1 and 65535, got {show(text)}")
    return int(text)


HOSTNAME = re.compile(
    r"^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


def host(text: str) -> str:
    """An IPv4/IPv6 address or a host name; a dotted quad must be a valid address (256.1.1.1 is not)."""
    import ipaddress

    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        pass
    if re.fullmatch(r"[0-9.]+", text) or not HOSTNAME.match(text):
        raise argparse.ArgumentTypeError(f"expected an IP address or a host name, got {show(text)}")
    return text


def panels(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError("--panels: expected a comma-separated list of panel names")
    if len(set(names)) != len(names):
        raise UsageError(f"--panels: a panel is named twice in {show(text, 80)}")
    return names


def edge(module: str, extra: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise UsageError(
            f"this command needs the '{extra}' extra ({exc.name} is missing): pip install 'contention[{extra}]'"
        ) from None


def folder(text: str, flag: str) -> Path:
    """An output folder: it may not exist yet, but it must not be a file."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag}: {show(text, 120)} is a file; expected a folder")
    return path


def setting(text: str) -> tuple[str, object]:
    """``--set KEY=VALUE``: a preset key (``defaults.X``, ``workload.X``, ``panels.NAME.X``) and
    its value read as an int, a float, true/false, else a string; the preset checks both."""
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {show(text)}")
    v = value.strip()
    if v.lower() in ("true", "false"):
        return key.strip(), v.lower() == "true"
    for kind in (int, float):
        try:
            x = kind(v)
        except ValueError:
            continue
        if isinstance(x, float) and not math.isfinite(x):
            raise argparse.ArgumentTypeError(f"{key.strip()}: expected a finite number, got {show(v)}")
        return key.strip(), x
    return key.strip(), v


def settings(items: list[tuple[str, object]] | None) -> dict:
    """The ``--set`` pairs as overrides; a key given twice is refused."""
    out: dict = {}
    for key, value in items or []:
        if key in out:
            raise UsageError(f"--set {key}: given twice")
        out[key] = value
    return out
