"""The server's limits: one frozen record, read once at start-up from the environment.

Every limit has a default suited to a laptop and an environment variable to change it (tests
use small values); a bad value raises ValueError naming the variable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from sims.core.limits import MAX_SEED, InputError  # noqa: F401  (MAX_SEED: one seed rule for the CLI and the API)


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 16 * 1024  # request bodies; more is 413
    max_duration: float = 3600.0  # virtual seconds per run or trace; more is 422
    max_events: int = 2_000_000  # stream events per run or trace; more is 422
    run_timeout: float = 60.0  # wall seconds per run; the worker is killed past it (422)
    workers: int = 0  # worker processes; 0 = min(4, CPU count)
    queue: int = 0  # runs that may wait for a worker; 0 = 4 per worker; more is 429
    traces: int = 2  # trace downloads at once; more is 429
    worker_nice: int = 5  # CPU priority of run workers below the server's, so the API stays responsive
    gpu_timeout: float = 600.0  # wall seconds per GPU replay
    shutdown_grace: float = 5.0  # seconds in-flight requests get after SIGINT/SIGTERM
    header_timeout: float = 10.0  # seconds for a request's headers to arrive (408 past it)
    body_timeout: float = 10.0  # seconds for a request's body to arrive (408 past it)
    max_header_bytes: int = 32 * 1024  # a request's line and headers together; more is 431
    max_headers: int = 100  # header fields per request; more is 431

    def __post_init__(self) -> None:
        if self.workers <= 0:
            object.__setattr__(self, "workers", max(1, min(4, os.cpu_count() or 1)))
        if self.queue <= 0:
            object.__setattr__(self, "queue", 4 * self.workers)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Limits:
        """Defaults overridden by ``CONTENTION_<FIELD>`` variables (e.g. CONTENTION_RUN_TIMEOUT=5)."""
        env = os.environ if env is None else env
        values = {}
        for f in fields(cls):
            var = f"CONTENTION_{f.name.upper()}"
            if var not in env:
                continue
            typ = int if f.type == "int" else float
            try:
                value = typ(env[var])
            except ValueError:
                raise InputError(
                    f"{var}: expected {'an integer' if typ is int else 'a number'}, got {env[var]!r}"
                ) from None
            if not value >= 0 or value == float("inf"):
                raise InputError(f"{var}: expected a finite number >= 0, got {env[var]!r}")
            values[f.name] = value
        return cls(**values)


ENV_VARS = tuple(f"CONTENTION_{f.name.upper()}" for f in fields(Limits))
