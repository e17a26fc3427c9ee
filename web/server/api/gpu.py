"""GPU status and replay for the API: a one-worker pool started at the first GPU request, and
only when the server runs with ``--gpu``. No GPU, no flag or no gpu_backend/torch means
``available: false`` with the reason, and 503 for a replay."""

from __future__ import annotations

import asyncio

from web.server.api.pool import JobFailed, JobTimeout, Stopping, WorkerPool
from web.server.config import Limits

NO_FLAG = "the server was started without --gpu (run `contention serve --gpu`)"


class Gpu:
    def __init__(self, enabled: bool, limits: Limits) -> None:
        self.enabled = enabled
        self.limits = limits
        self._pool: WorkerPool | None = None
        self._status: dict | None = None  # cached once the probe has answered
        self._probe = asyncio.Lock()  # one probe at a time; later callers read the cache

    def pool(self) -> WorkerPool:
        if self._pool is None:
            self._pool = WorkerPool(
                "web.server.api.gpu_jobs",
                size=1,
                queue=0,
                timeout=self.limits.gpu_timeout,
                nice=0,
                label="gpu-worker",
            )
            self._pool.start()
        return self._pool

    def started_pool(self) -> WorkerPool | None:
        """The GPU pool if it has started (never starts it)."""
        return self._pool

    async def status(self) -> dict:
        if not self.enabled:
            return {"available": False, "device": None, "reason": NO_FLAG}
        async with self._probe:
            if self._status is None:
                try:
                    self._status = await self.pool().run("status", timeout=120.0)
                except (JobFailed, JobTimeout, Stopping) as exc:  # not cached: the next request probes again
                    return {"available": False, "device": None, "reason": f"the GPU probe failed: {exc}"}
        return self._status

    async def replay(self, preset: str, seed: int | None, duration: float | None) -> dict:
        return await self.pool().run("replay", preset=preset, seed=seed, duration=duration)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
