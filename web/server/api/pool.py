"""A pool of worker processes for simulation runs, so the event loop never blocks.

Workers are long-lived processes (spawn start method, lowered CPU priority so the API stays
responsive), one job at a time each; idle workers wait in a FIFO queue. Admission: at most
``size`` jobs run and ``queue`` more wait; past that ``run`` raises Busy (the API answers 429).
A job past its timeout, or one that is cancelled, kills its worker and a fresh one takes the
slot, so a runaway run never keeps a CPU. Jobs are functions named in a module that the
worker imports; a job's InputError comes back as JobRejected (bad input), anything else as
JobFailed. A job that is a generator streams: each item goes to the parent, which asks for the
next one only when it has passed the last one on, so neither side holds more than one item.

The worker's side of the pipe, and the messages on it, are in ``worker.py``.

Dead workers: the pool watches each worker's process sentinel, so a worker that dies while idle
is replaced at once and never handed a job; one that dies during a job is WorkerDied. Each
worker watches its parent's sentinel in turn and exits when the parent is gone, even mid-job.
``stop_jobs`` ends every job in flight with Stopping (the server's shutdown past its grace).
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from web.server.api.worker import worker_main

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
    """The job raised InputError: bad input. ``limit`` and ``field`` come from LimitExceeded."""

    def __init__(self, message: str, limit: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.field = field


class JobFailed(Exception):
    """The job raised something else, or its worker died."""


class WorkerDied(JobFailed):
    """The worker running the job died (killed, or out of memory); the job may be retried."""


class Stopping(Exception):
    """The pool is shutting down: the job was ended before it finished."""


@dataclass(slots=True, eq=False)
class _Worker:
    process: BaseProcess
    conn: Connection  # the parent's end of a duplex pipe
    ready: bool = False  # it reported ready
    busy: bool = False  # a job is in flight
    dead: bool = False  # its process has ended


class WorkerPool:
    """``size`` worker processes running jobs from ``module``; see the module docstring."""

    def __init__(
        self,
        module: str,
        size: int,
        queue: int,
        timeout: float,
        *,
        warm: str | None = None,
        nice: int = 10,
        label: str = "worker",
    ) -> None:
        self.module = module
        self.size = size
        self.queue = queue
        self.timeout = timeout
        self.warm = warm
        self.nice = nice
        self.label = label
        self._ctx = multiprocessing.get_context("spawn")
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: list[_Worker] = []
        self._starting: set[asyncio.Task] = set()  # workers on their way, not yet ready
        self._stop: asyncio.Future | None = None  # set by stop_jobs: every job in flight ends
        self._stop_reason = ""
        self._admitted = 0  # running + waiting
        self._avg_s = 1.0  # moving average of job wall time, for Retry-After
        self.completed = 0
        self.rejected_busy = 0
        self.timeouts = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(
            target=worker_main, args=(child, self.module, self.warm, self.nice, self.label), daemon=True
        )
        proc.start()
        child.close()
        w = _Worker(proc, parent)
        self._all.append(w)
        asyncio.get_running_loop().add_reader(proc.sentinel, self._died, w)
        return w

    def _died(self, w: _Worker) -> None:
        """The worker's process ended. An idle one is replaced now; a busy one is the job's
        to report (its pipe reaches EOF) and is replaced when the job ends."""
        asyncio.get_running_loop().remove_reader(w.process.sentinel)
        if w.dead:
            return
        w.dead = True
        if w.ready and not w.busy and w in self._all:
            log.error("worker %s died while idle (exit code %s); starting another", w.process.pid, w.process.exitcode)
            self._kill(w)
            self._replace()

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
        except Stopping:
            self._kill(w)
            return
        if msg is not None and msg[0] == "ready" and not w.dead:
            w.ready = True
            self._idle.put_nowait(w)
            return
        log.error("worker %s did not start (exit code %s); trying again in 1 s", w.process.pid, w.process.exitcode)
        self._kill(w)
        self._replace(delay=1.0)

    def _kill(self, w: _Worker) -> None:
        if w in self._all:
            self._all.remove(w)
        if not w.dead:
            w.dead = True
            asyncio.get_running_loop().remove_reader(w.process.sentinel)
        w.conn.close()
        if w.process.is_alive():
            w.process.kill()
        w.process.join(timeout=2)

    def close(self, grace: float = 2.0) -> None:
        """Stop every worker: close its pipe (an idle worker exits on EOF), then terminate."""
        for task in self._starting:
            task.cancel()
        workers, self._all = list(self._all), []
        loop = asyncio.get_running_loop()
        for w in workers:
            if not w.dead:
                w.dead = True
                loop.remove_reader(w.process.sentinel)
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
        """Workers that have started and are alive (idle or busy)."""
        return sum(1 for w in self._all if w.ready and not w.dead and w.process.is_alive())

    def stop_jobs(self, reason: str) -> None:
        """End every job in flight, and every job waiting for a worker, with Stopping(reason)."""
        self._stop_reason = reason
        if self._stop is None:
            self._stop = asyncio.get_running_loop().create_future()
        if not self._stop.done():
            self._stop.set_result(None)

    def retry_after(self) -> int:
        """Seconds until a slot is likely free: the queue ahead divided among the workers."""
        return max(1, min(60, math.ceil(self._avg_s * max(1, self._admitted) / self.size)))

    def _admit(self) -> None:
        if self._stop is not None and self._stop.done():
            raise Stopping(self._stop_reason)
        if self.full:
            self.rejected_busy += 1
            raise Busy(self.retry_after())
        self._admitted += 1

    async def _stoppable(self, aw: Any, timeout: float) -> Any:
        """``aw``'s result; TimeoutError past ``timeout``; Stopping once stop_jobs is called."""
        if self._stop is None:
            self._stop = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(aw)
        try:
            done, _ = await asyncio.wait({task, self._stop}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            task.cancel()
            raise
        if task in done:
            return task.result()
        task.cancel()
        if self._stop.done():
            raise Stopping(self._stop_reason)
        raise TimeoutError

    async def _take(self, timeout: float) -> _Worker:
        """The next idle worker that is alive (dead ones are dropped and replaced)."""
        # with at most size + queue jobs admitted, a worker frees up well within this
        wait = STARTUP_TIMEOUT + timeout * (1 + self.queue / self.size)
        while True:
            try:
                w = await self._stoppable(self._idle.get(), wait)
            except TimeoutError:
                raise JobFailed(f"no worker was free within {wait:g} s (do the workers start? see the log)") from None
            if not w.dead and w.process.is_alive():
                w.busy = True
                return w
            if w in self._all:  # died between its last job and this one
                self._kill(w)
                self._replace()

    def _release(self, w: _Worker, reusable: bool) -> None:
        w.busy = False
        if reusable and not w.dead:
            self._idle.put_nowait(w)
        else:  # timed out, cancelled or dead: never reuse a worker with a job in flight
            self._kill(w)
            self._replace()

    async def run(self, name: str, timeout: float | None = None, **kwargs: Any) -> Any:
        self._admit()
        timeout = self.timeout if timeout is None else timeout
        try:
            w = await self._take(timeout)
            ok = False
            t0 = time.monotonic()
            try:
                reply = await self._call(w, (name, kwargs), timeout)
                ok = True
            finally:
                self._release(w, ok)
            self._avg_s = 0.8 * self._avg_s + 0.2 * (time.monotonic() - t0)
        finally:
            self._admitted -= 1
        self.completed += 1
        return _result(reply)

    async def stream(self, name: str, timeout: float | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        """The items of the generator job ``name``, one at a time: the worker makes the next one
        only when the consumer asks for it. ``timeout`` bounds the wait for each item. A consumer
        that stops early (a client gone) costs the worker: it is replaced."""
        self._admit()
        timeout = self.timeout if timeout is None else timeout
        try:
            w = await self._take(timeout)
            ok = False
            try:
                reply = await self._call(w, (name, kwargs), timeout)
                while reply[0] == "item":
                    yield reply[1]
                    reply = await self._call(w, "more", timeout)
                ok = True
            finally:
                self._release(w, ok)
        finally:
            self._admitted -= 1
        self.completed += 1
        if reply[0] != "end":
            _result(reply)

    async def _receive(self, w: _Worker, timeout: float) -> tuple | None:
        """The worker's next message, or None after ``timeout`` seconds. The loop only waits
        for the pipe to turn readable; the message is read in a thread, because a large one (a
        trace chunk) may still be arriving while a worker at low priority waits for a CPU, and
        a blocking read there would stall every other request. (uvloop's add_reader also makes
        the fd non-blocking, and may wake up with nothing to read: hence the blocking mode and
        the poll before the read.)"""
        loop = asyncio.get_running_loop()
        fd = w.conn.fileno()
        deadline = loop.time() + timeout
        while True:
            readable = loop.create_future()
            loop.add_reader(fd, lambda f=readable: f.done() or f.set_result(None))
            try:
                await self._stoppable(readable, max(0.0, deadline - loop.time()))
            except TimeoutError:
                return None
            finally:
                loop.remove_reader(fd)
            try:
                message = await loop.run_in_executor(None, _read, w.conn)
            except (EOFError, OSError):
                raise WorkerDied(_death(w)) from None
            if message is not _NOTHING:
                return message

    async def _call(self, w: _Worker, message: object, timeout: float) -> tuple:
        try:
            os.set_blocking(w.conn.fileno(), True)
            w.conn.send(message)
        except (BrokenPipeError, EOFError, OSError):
            raise WorkerDied(_death(w)) from None
        reply = await self._receive(w, timeout)
        if reply is None:
            self.timeouts += 1
            raise JobTimeout(f"the job ran past {timeout:g} s")
        return reply


_NOTHING = object()


def _read(conn: Connection) -> Any:
    """One whole message from ``conn`` (blocking), or _NOTHING when there is none yet."""
    os.set_blocking(conn.fileno(), True)
    return conn.recv() if conn.poll() else _NOTHING


def _death(w: _Worker) -> str:
    w.process.join(timeout=1)
    code = w.process.exitcode
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    return f"the worker process {w.process.pid} died during the job ({how})"


def _result(reply: tuple) -> Any:
    if reply[0] == "ok":
        return reply[1]
    if reply[0] == "rejected":
        raise JobRejected(reply[1], reply[2], reply[3])
    raise JobFailed(reply[1])
