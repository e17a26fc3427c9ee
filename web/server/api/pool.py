"""A pool of worker processes for simulation runs, so the event loop never blocks.

Workers are long-lived processes (spawn start method, lowered CPU priority so the API stays
responsive), one job at a time each; idle workers wait in a FIFO queue. Admission: at most
``size`` jobs run and ``queue`` more wait; past that ``run`` raises Busy (the API answers 429).
A job past its timeout, or one that is cancelled, kills its worker and a fresh one takes the
slot, so a runaway run never keeps a CPU. Jobs are functions named in a module that the
worker imports; a job's ValueError comes back as JobRejected (bad input), anything else as
JobFailed.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import math
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

log = logging.getLogger("contention.server")
STARTUP_TIMEOUT = 120.0  # seconds for a worker's imports and warm-up (torch in the GPU worker)


class Busy(Exception):
    """Every worker is busy and the queue is full; retry after ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"busy: retry after {retry_after} s")
        self.retry_after = retry_after


class JobTimeout(Exception):
    """The job ran past its timeout; its worker was killed."""


class JobRejected(Exception):
    """The job raised ValueError: bad input. ``limit`` and ``field`` come from LimitExceeded."""

    def __init__(self, message: str, limit: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.field = field


class JobFailed(Exception):
    """The job raised something else, or its worker died."""


def _worker_main(conn: Connection, module: str, warm: str | None, nice: int) -> None:
    """The worker loop: receive (function name, kwargs), send back a tagged result."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the parent decides
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    mod = importlib.import_module(module)
    if warm:
        getattr(mod, warm)()
    conn.send(("ready", os.getpid()))
    while True:
        try:
            name, kwargs = conn.recv()
        except (EOFError, OSError):
            return  # the parent closed the pipe or died
        try:
            reply: tuple = ("ok", getattr(mod, name)(**kwargs))
        except ValueError as exc:
            reply = ("rejected", str(exc), getattr(exc, "limit", None), getattr(exc, "field", None))
        except Exception as exc:  # a bug in a simulation: reported, the worker lives on
            reply = ("failed", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


@dataclass(slots=True)
class _Worker:
    process: BaseProcess
    conn: Connection  # the parent's end of a duplex pipe


class WorkerPool:
    """``size`` worker processes running jobs from ``module``; see the module docstring."""

    def __init__(
        self, module: str, size: int, queue: int, timeout: float, *, warm: str | None = None, nice: int = 10
    ) -> None:
        self.module = module
        self.size = size
        self.queue = queue
        self.timeout = timeout
        self.warm = warm
        self.nice = nice
        self._ctx = multiprocessing.get_context("spawn")
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: list[_Worker] = []
        self._starting: set[asyncio.Task] = set()  # workers on their way, not yet ready
        self._ready: set[int] = set()  # pids of the workers that reported ready
        self._admitted = 0  # running + waiting
        self._avg_s = 1.0  # moving average of job wall time, for Retry-After
        self.completed = 0
        self.rejected_busy = 0
        self.timeouts = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(target=_worker_main, args=(child, self.module, self.warm, self.nice), daemon=True)
        proc.start()
        child.close()
        w = _Worker(proc, parent)
        self._all.append(w)
        return w

    def start(self) -> None:
        """Spawn the workers (call with the event loop running); each joins the idle queue once
        it reports ready, so start-up time never counts against a job's timeout."""
        for _ in range(self.size):
            self._replace()

    def _replace(self, delay: float = 0.0) -> None:
        task = asyncio.get_running_loop().create_task(self._start_worker(delay))
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _start_worker(self, delay: float) -> None:
        await asyncio.sleep(delay)
        w = self._spawn()
        try:
            msg = await self._receive(w, STARTUP_TIMEOUT)
        except JobFailed:
            msg = None
        if msg is not None and msg[0] == "ready":
            self._ready.add(w.process.pid)
            self._idle.put_nowait(w)
            return
        log.error("worker %s did not start (exit code %s); trying again in 1 s", w.process.pid, w.process.exitcode)
        self._kill(w)
        self._replace(delay=1.0)

    def _kill(self, w: _Worker) -> None:
        if w in self._all:
            self._all.remove(w)
        self._ready.discard(w.process.pid)
        w.conn.close()
        if w.process.is_alive():
            w.process.kill()
        w.process.join(timeout=2)

    def close(self, grace: float = 2.0) -> None:
        """Stop every worker: close its pipe (an idle worker exits on EOF), then terminate."""
        for task in self._starting:
            task.cancel()
        workers, self._all = list(self._all), []
        for w in workers:
            w.conn.close()
        deadline = time.monotonic() + grace
        for w in workers:
            w.process.join(timeout=max(0.0, deadline - time.monotonic()))
            if w.process.is_alive():
                w.process.kill()
                w.process.join(timeout=2)

    def pids(self) -> list[int]:
        return [w.process.pid for w in self._all if w.process.pid is not None]

    # -- jobs --------------------------------------------------------------------------------
    @property
    def busy(self) -> int:
        return self._admitted

    @property
    def full(self) -> bool:
        """True when a new job would be refused (the API checks before reading the body)."""
        return self._admitted >= self.size + self.queue

    @property
    def ready(self) -> int:
        """Workers that have started (idle or busy)."""
        return len(self._ready)

    def retry_after(self) -> int:
        """Seconds until a slot is likely free: the queue ahead divided among the workers."""
        return max(1, min(60, math.ceil(self._avg_s * max(1, self._admitted) / self.size)))

    async def run(self, name: str, timeout: float | None = None, **kwargs: Any) -> Any:
        if self.full:
            self.rejected_busy += 1
            raise Busy(self.retry_after())
        self._admitted += 1
        timeout = self.timeout if timeout is None else timeout
        try:
            # with at most size + queue jobs admitted, a worker frees up well within this
            wait = STARTUP_TIMEOUT + timeout * (1 + self.queue / self.size)
            try:
                w = await asyncio.wait_for(self._idle.get(), wait)
            except TimeoutError:
                raise JobFailed(f"no worker was free within {wait:g} s (do the workers start? see the log)") from None
            ok = False
            t0 = time.monotonic()
            try:
                reply = await self._call(w, name, kwargs, timeout)
                ok = True
            finally:
                if ok:
                    self._idle.put_nowait(w)
                else:  # timed out, cancelled or dead: never reuse a worker with a job in flight
                    self._kill(w)
                    self._replace()
            self._avg_s = 0.8 * self._avg_s + 0.2 * (time.monotonic() - t0)
        finally:
            self._admitted -= 1
        self.completed += 1
        if reply[0] == "ok":
            return reply[1]
        if reply[0] == "rejected":
            raise JobRejected(reply[1], reply[2], reply[3])
        raise JobFailed(reply[1])

    async def _receive(self, w: _Worker, timeout: float) -> tuple | None:
        """The worker's next message, or None after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        readable = loop.create_future()
        fd = w.conn.fileno()
        loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
        try:
            try:
                await asyncio.wait_for(readable, timeout)
            except TimeoutError:
                return None
            try:
                return w.conn.recv()
            except (EOFError, OSError):
                raise JobFailed(f"worker {w.process.pid} died (exit code {w.process.exitcode})") from None
        finally:
            loop.remove_reader(fd)

    async def _call(self, w: _Worker, name: str, kwargs: dict, timeout: float) -> tuple:
        w.conn.send((name, kwargs))
        reply = await self._receive(w, timeout)
        if reply is None:
            self.timeouts += 1
            raise JobTimeout(f"the job ran past {timeout:g} s")
        return reply
