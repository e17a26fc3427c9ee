"""Who runs the jobs: a local process pool (default) or a Ray cluster (``--ray [ADDRESS]``).

Both take the jobs as an iterable and ask for the next one only when a worker is about to be
free (a window of twice the workers in flight), so a sweep never holds its jobs whole; both hand
back ``run_job`` results as they complete; the caller journals them and orders the rows at the
end, so the order of completion never shows in the output. A worker that dies is retried (the
pool is rebuilt; Ray retries the task), up to ``RETRIES`` times per job.

The local pool's workers are spawned (not forked) and each watches its parent, as the server's
do: a sweep killed by SIGKILL leaves no worker behind.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import multiprocessing.connection
import os
from collections.abc import Callable, Generator, Iterable, Iterator

from contention_harness.processes import exit_with_parent
from sweep.cells import Job, run_job
from sweep.grid import SweepError

RETRIES = 2


def _pool(workers: int) -> cf.ProcessPoolExecutor:
    return cf.ProcessPoolExecutor(workers, multiprocessing.get_context("spawn"), initializer=exit_with_parent)


def local(jobs: Iterable[Job], workers: int | None) -> Iterator[dict]:
    """Run ``jobs`` on a process pool; ``workers=1`` runs them in this process."""
    n = workers or os.cpu_count() or 1
    if n == 1:
        for job in jobs:
            yield run_job(job)
        return
    fresh = iter(jobs)
    again: list[Job] = []  # jobs whose worker died: they go first into the next pool
    tries: dict[str, int] = {}
    while (yield from _one_pool(n, fresh, again, tries)):
        pass


def _one_pool(n: int, fresh: Iterator[Job], again: list[Job], tries: dict[str, int]) -> Generator[dict, None, bool]:
    """Results of jobs (``again`` first, then ``fresh``) run on one pool of ``n`` workers, with at
    most ``2 n`` in flight. Returns True when the pool broke (a worker died): every job in flight
    then fails, and goes back into ``again`` unless it has been tried ``RETRIES`` times already."""
    broken = False
    with _pool(n) as pool:
        running: dict[cf.Future, Job] = {}
        while True:
            while not broken and len(running) < 2 * n and (job := again.pop() if again else next(fresh, None)):
                running[pool.submit(run_job, job)] = job
            if not running:
                return broken
            finished, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                job = running.pop(fut)
                try:
                    result = fut.result()
                except cf.process.BrokenProcessPool:
                    broken = True
                    tries[job.key()] = tries.get(job.key(), 0) + 1
                    if tries[job.key()] > RETRIES:
                        raise SweepError(
                            f"a worker died {RETRIES + 1} times running seed {job.seed} of {job.params}"
                        ) from None
                    again.append(job)
                    continue
                yield result


def ray(jobs: Iterable[Job], address: str | None, workers: int | None) -> Iterator[dict]:
    """Run ``jobs`` as Ray tasks: ``address`` None starts a local cluster for this sweep."""
    try:
        import ray as _ray
    except ModuleNotFoundError:
        raise SweepError("--ray needs the 'ray' extra: pip install 'contention[ray]'") from None
    started = not _ray.is_initialized()
    if started:
        kwargs: dict = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = workers or os.cpu_count() or 1
        try:
            _ray.init(**kwargs)
        except Exception as exc:  # a bad address, a cluster that is not there
            raise SweepError(f"--ray {address or '(local)'}: cannot start or reach Ray: {str(exc)[:160]}") from None
    try:
        task = _ray.remote(max_retries=RETRIES)(run_job)
        window = 2 * max(1, int(_ray.cluster_resources().get("CPU", 1)))
        fresh = iter(jobs)
        refs: list = []
        while True:
            while len(refs) < window and (job := next(fresh, None)) is not None:
                refs.append(task.remote(job))
            if not refs:
                return
            done, refs = _ray.wait(refs, num_returns=1)
            for ref in done:
                yield _ray.get(ref)
    finally:
        if started:
            _ray.shutdown()


def pick(ray_address: str | bool | None, workers: int | None) -> Callable[[Iterable[Job]], Iterator[dict]]:
    if ray_address is None or ray_address is False:
        return lambda jobs: local(jobs, workers)
    address = None if ray_address is True else ray_address
    return lambda jobs: ray(jobs, address, workers)
