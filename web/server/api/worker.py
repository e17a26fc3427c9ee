"""The worker's side of the pool's pipe: the loop each worker process runs (``pool.py`` is the
parent's side).

Messages, parent to worker: ``(function name, kwargs)`` for a job; during a stream ``"more"`` or
anything else to stop. Worker to parent: ``("ready", pid)`` once it has imported its module;
then per job ``("ok", result)``, ``("rejected", message, limit, field)`` (an InputError: bad
input), ``("failed", message)``, or for a generator ``("item", x)`` one at a time, each after
a ``"more"``, and ``("end",)`` or ``("stopped",)``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import signal
from collections.abc import Iterator
from multiprocessing.connection import Connection

from contention_harness.processes import exit_with_parent
from sims.core.limits import InputError


def worker_main(conn: Connection, module: str, warm: str | None, nice: int, label: str) -> None:
    """The worker loop: receive (function name, kwargs), send back a tagged result."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the parent decides
    try:  # the name `ps` and `top` show (Linux), e.g. run-worker
        with open("/proc/self/comm", "w") as comm:
            comm.write(label[:15])
    except OSError:
        pass
    exit_with_parent()
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    mod = importlib.import_module(module)
    if warm:
        getattr(mod, warm)()
    try:
        conn.send(("ready", os.getpid()))
    except OSError:
        return  # stopped while starting
    while True:
        try:
            name, kwargs = conn.recv()
        except (EOFError, OSError):
            return  # the parent closed the pipe or died
        try:
            result = getattr(mod, name)(**kwargs)
            if inspect.isgenerator(result):
                reply = _stream(conn, result)
            else:
                reply = ("ok", result)
        except _ParentGone:
            return
        except InputError as exc:
            reply = ("rejected", str(exc), getattr(exc, "limit", None), getattr(exc, "field", None))
        except Exception as exc:  # a bug in a simulation: reported, the worker lives on
            reply = ("failed", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


class _ParentGone(Exception):
    """In a worker: the pipe to the parent broke in the middle of a stream."""


def _stream(conn: Connection, items: Iterator) -> tuple:
    """Send ``items`` one at a time, each only after the parent asked for more; ``("end",)`` or
    ``("stopped",)`` when the parent asked to stop."""
    for item in items:
        try:
            conn.send(("item", item))
            more = conn.recv() == "more"
        except (EOFError, OSError):
            raise _ParentGone from None
        if not more:
            items.close()
            return ("stopped",)
    return ("end",)
