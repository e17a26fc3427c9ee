"""The ``contention`` command line (also ``python -m sims``).

One module per group of commands, each with ``add(sub)`` that registers its parsers beside the
code that runs them: ``run`` (list, run, trace, bench: sims/ alone, in CPython and in Pyodide),
``step`` (the step-time model, one step in parts) and ``edges`` (build, serve, sweep, plan,
replay, gpu: their work lives beside sims/ and is imported lazily). A new command is a module here
and one line in ``COMMANDS``. Each registers its name and help line at once and its flags through
``Parser(fill=...)``, added when that command parses, so a plain ``run`` neither builds the other
commands' flags nor imports the modules they name.

One error path for the user's mistakes: every refusal (a bad flag, a broken preset, a malformed
trace line, a budget a run would pass) is a ``sims.core.limits.InputError`` that ``main`` prints as
one line, ``error: ...``, capped in length, with exit status 2; so is a file named by the user that
cannot be read or written (``OSError``). Anything else is a bug of ours: its traceback is shown and
the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import sys

from sims.cli import diff, edges, run, search, step
from sims.cli.args import Parser, Terminated, UsageError, edge
from sims.cli.output import MAX_MESSAGE, one_line, table
from sims.core.limits import InputError, show

__all__ = ["MAX_MESSAGE", "Terminated", "UsageError", "build_parser", "main", "table"]

COMMANDS = (run, diff, search, step, edges)  # each module's add(sub) registers its commands, in this order in --help


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="contention", description="Live, seeded simulations of systems under contention.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for module in COMMANDS:
        module.add(sub)
    return p


def _fail(message: str) -> int:
    """The one error path: one line on stderr, exit status 2."""
    message = one_line(message)
    print(message if message.startswith("contention") else f"error: {message}", file=sys.stderr)
    return 2


def _stdout_gone() -> None:
    """Stdout cannot take more (a closed pipe, a full disk): point it at /dev/null so the
    interpreter's final flush does not print a traceback of its own."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["gpu"]:  # everything after `gpu` belongs to gpu_backend's own parser
            return edge("gpu_backend.cli", "gpu").main(argv[1:]) or 0
        args = build_parser().parse_args(argv)
        status = args.fn(args)
        sys.stdout.flush()
        return status
    except InputError as exc:  # UsageError, PresetError, TraceError, PolicyError, ... (not ValueError)
        return _fail(str(exc))
    except BrokenPipeError:
        _stdout_gone()
        return 0
    except OSError as exc:  # a file named by the user that cannot be read or written, stdout full
        _stdout_gone()
        name = f"{show(exc.filename, 120)}: " if exc.filename else "standard output: " if exc.errno == 28 else ""
        return _fail(f"{name}{exc.strerror or exc}")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("terminated", file=sys.stderr)
        return 143
