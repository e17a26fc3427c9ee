"""Who runs the jobs: a local process pool (default) or a Ray cluster (``--ray [ADDRESS]``).

Both hand back ``run_job`` results as they complete; the caller journals them and orders the rows
at the end, so the order of completion never shows in the output. A worker that dies is retried
(the pool is rebuilt; Ray retries the task), up to ``RETRIES`` times per job.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
from collections.abc import Callable, Iterator

from sweep.cells import Job, run_job
from sweep.grid import SweepError

RETRIES = 2


def local(jobs: list[Job], workers: int | None) -> Iterator[dict]:
    """Run ``jobs`` on a process pool; ``workers=1`` runs them in this process."""
    if not jobs:
        return
    n = workers or os.cpu_count() or 1
    if n == 1:
        for job in jobs:
            yield run_job(job)
        return
    tries = {job.key(): 0 for job in jobs}
    pending = list(jobs)
    while pending:
        with cf.ProcessPoolExecutor(max_workers=min(n, len(pending))) as pool:
            futures = {pool.submit(run_job, job): job for job in pending}
            pending = []
            for fut in cf.as_completed(futures):
                job = futures[fut]
                try:
                    yield fut.result()
                except cf.process.BrokenProcessPool:
                    tries[job.key()] += 1
                    if tries[job.key()] > RETRIES:
                        raise SweepError(
                            f"a worker died {RETRIES + 1} times running seed {job.seed} of {job.params}"
                        ) from None
                    pending.append(job)


def ray(jobs: list[Job], address: str | None, workers: int | None) -> Iterator[dict]:
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
        refs = [task.remote(job) for job in jobs]
        while refs:
            done, refs = _ray.wait(refs, num_returns=1)
            for ref in done:
                yield _ray.get(ref)
    finally:
        if started:
            _ray.shutdown()


def pick(ray_address: str | bool | None, workers: int | None) -> Callable[[list[Job]], Iterator[dict]]:
    if ray_address is None or ray_address is False:
        return lambda jobs: local(jobs, workers)
    address = None if ray_address is True else ray_address
    return lambda jobs: ray(jobs, address, workers)
