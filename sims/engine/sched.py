"""Scheduling policies: the order in which waiting requests are admitted, and who is preempted.

A policy only decides; the scheduler (``scheduler.py``) applies what it decides. ``key(seq)`` orders
the waiting queue (smallest first) and is fixed when a request is queued; ``victim_key(seq)``
orders the running set (largest is preempted first); ``join`` and ``demote`` return the level a
request runs at and the output count at which it leaves it (mlfq), which the scheduler writes on
the request. Linear aging fits a fixed key: waiting lowers a key by ``aging`` per second, which is
the same as adding ``aging * arrival`` once, because every waiting key falls at the same rate.
"""

from __future__ import annotations

from random import Random

from sims.core.dists import lognormal
from sims.engine.seq import NEVER

SCHEDULERS: dict[str, type] = {}


def _scheduler(name: str):
    def deco(cls):
        cls.name = name
        SCHEDULERS[name] = cls
        return cls

    return deco


class Policy:
    name = ""
    preemptive = False  # True: a better waiting request may pause the worst running one

    def __init__(self, aging: float = 0.0, rng: Random | None = None, **_: float) -> None:
        self.aging = aging
        self.rng = rng or Random(0)

    def key(self, seq) -> tuple:
        raise NotImplementedError

    def victim_key(self, seq) -> tuple:
        return (self.key(seq), seq.admit_order)

    def join(self, seq) -> tuple[int, int] | None:
        """A request enters the engine: the ``(level, level_end)`` it starts at, or None (no levels)."""
        return None

    def demote(self, seq) -> tuple[int, int]:
        """``seq`` reached its ``level_end`` (never, unless ``join`` set one): its next
        ``(level, level_end)``."""
        return seq.level, NEVER


@_scheduler("fcfs")
class FCFS(Policy):
    """First come, first served; the victim is the most recently admitted request (vLLM)."""

    def key(self, seq) -> tuple:
        return (seq.arrival, seq.order)

    def victim_key(self, seq) -> tuple:
        return (seq.admit_order,)


@_scheduler("sjf_oracle")
class SJFOracle(Policy):
    """Shortest job first on the true remaining output length (an oracle: it reads the future)."""

    def key(self, seq) -> tuple:
        return (seq.output_len - seq.generated + self.aging * seq.arrival, seq.order)


@_scheduler("sjf_predicted")
class SJFPredicted(Policy):
    """Shortest predicted job first: the predictor is the true length times exp(N(0, error))."""

    def __init__(self, aging: float = 0.0, rng: Random | None = None, predictor_error: float = 0.0, **_) -> None:
        super().__init__(aging, rng)
        self.error = predictor_error
        self.predicted: dict[int, float] = {}  # Seq.order -> its predicted output length, drawn once

    def predict(self, seq) -> float:
        p = self.predicted.get(seq.order)
        if p is None:
            noise = lognormal(self.rng, 0.0, self.error) if self.error > 0 else 1.0
            p = self.predicted[seq.order] = seq.output_len * noise
        return p

    def key(self, seq) -> tuple:
        return (self.predict(seq) - seq.generated + self.aging * seq.arrival, seq.order)


@_scheduler("mlfq")
class MLFQ(Policy):
    """FastServe's skip-join multi-level feedback queue. A request joins the level its prompt
    deserves (level l holds prompts up to prompt_quantum * 2**l tokens), is demoted after
    quantum * 2**l output tokens at level l, and a better-level request may pause it."""

    preemptive = True

    def __init__(
        self,
        aging: float = 0.0,
        rng: Random | None = None,
        mlfq_levels: int = 5,
        mlfq_quantum: int = 32,
        mlfq_prompt_quantum: int = 512,
        **_,
    ) -> None:
        super().__init__(aging, rng)
        if mlfq_levels < 1 or mlfq_quantum < 1 or mlfq_prompt_quantum < 1:
            raise ValueError("mlfq_levels, mlfq_quantum and mlfq_prompt_quantum must be >= 1")
        self.levels = mlfq_levels
        self.quantum = mlfq_quantum
        self.prompt_quantum = mlfq_prompt_quantum

    def join(self, seq) -> tuple[int, int]:
        """Skip-join: the first level whose prompt allowance covers the prompt."""
        level = min(self.levels - 1, ((seq.prompt_len - 1) // self.prompt_quantum).bit_length())
        return level, seq.generated + self.quantum * (1 << level)

    def demote(self, seq) -> tuple[int, int]:
        if seq.level + 1 < self.levels:
            level = seq.level + 1
            return level, seq.generated + self.quantum * (1 << level)
        return seq.level, NEVER

    def key(self, seq) -> tuple:
        return (seq.level, seq.arrival, seq.order)


@_scheduler("priority")
class Priority(Policy):
    """Strict priority (smaller first; a request's ``priority`` field, else its tenant), with aging."""

    def key(self, seq) -> tuple:
        return (seq.priority + self.aging * seq.arrival, seq.arrival, seq.order)


def make_policy(name: str, rng: Random | None = None, **params: float) -> Policy:
    if name not in SCHEDULERS:
        raise ValueError(f"unknown scheduler {name!r}; valid: {', '.join(sorted(SCHEDULERS))}")
    return SCHEDULERS[name](rng=rng, **params)
