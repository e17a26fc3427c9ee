"""Scheduling policies: the order in which waiting requests are admitted, and who is preempted.

A policy only decides. ``key(seq)`` orders the waiting queue (smallest first) and is fixed when a
request is queued; ``victim_key(seq)`` orders the running set (largest is preempted first). Linear
aging fits a fixed key: waiting lowers a key by ``aging`` per second, which is the same as adding
``aging * arrival`` once, because every waiting key falls at the same rate.
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


class Scheduler:
    name = ""
    preemptive = False  # True: a better waiting request may pause the worst running one

    def __init__(self, aging: float = 0.0, rng: Random | None = None, **_: float) -> None:
        self.aging = aging
        self.rng = rng or Random(0)

    def key(self, seq) -> tuple:
        raise NotImplementedError

    def victim_key(self, seq) -> tuple:
        return (self.key(seq), seq.admit_order)

    def join(self, seq) -> None:
        """A request enters the engine. MLFQ picks its level here; no-op otherwise."""

    def demote(self, seq) -> None:
        """``seq`` used up its quantum (``seq.level_end``, never reached unless a policy sets it)."""


@_scheduler("fcfs")
class FCFS(Scheduler):
    """First come, first served; the victim is the most recently admitted request (vLLM)."""

    def key(self, seq) -> tuple:
        return (seq.arrival, seq.order)

    def victim_key(self, seq) -> tuple:
        return (seq.admit_order,)


@_scheduler("sjf_oracle")
class SJFOracle(Scheduler):
    """Shortest job first on the true remaining output length (an oracle: it reads the future)."""

    def key(self, seq) -> tuple:
        return (seq.output_len - seq.generated + self.aging * seq.arrival, seq.order)


@_scheduler("sjf_predicted")
class SJFPredicted(Scheduler):
    """Shortest predicted job first: the predictor is the true length times exp(N(0, error))."""

    def __init__(self, aging: float = 0.0, rng: Random | None = None, predictor_error: float = 0.0, **_) -> None:
        super().__init__(aging, rng)
        self.error = predictor_error

    def predict(self, seq) -> float:
        if seq.predicted < 0:
            noise = lognormal(self.rng, 0.0, self.error) if self.error > 0 else 1.0
            seq.predicted = seq.output_len * noise
        return seq.predicted

    def key(self, seq) -> tuple:
        return (self.predict(seq) - seq.generated + self.aging * seq.arrival, seq.order)


@_scheduler("priority")
class Priority(Scheduler):
    """Strict priority (smaller first; a request's ``priority`` field, else its tenant), with aging."""

    def key(self, seq) -> tuple:
        return (seq.priority + self.aging * seq.arrival, seq.arrival, seq.order)


@_scheduler("mlfq")
class MLFQ(Scheduler):
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

    def join(self, seq) -> None:
        """Skip-join: the first level whose prompt allowance covers the prompt."""
        seq.level = min(self.levels - 1, ((seq.prompt_len - 1) // self.prompt_quantum).bit_length())
        seq.level_end = seq.generated + self.quantum * (1 << seq.level)

    def demote(self, seq) -> None:
        if seq.level + 1 < self.levels:
            seq.level += 1
            seq.level_end = seq.generated + self.quantum * (1 << seq.level)
        else:
            seq.level_end = NEVER

    def key(self, seq) -> tuple:
        return (seq.level, seq.arrival, seq.order)


def make_scheduler(name: str, rng: Random | None = None, **params: float) -> Scheduler:
    if name not in SCHEDULERS:
        raise ValueError(f"unknown scheduler {name!r}; valid: {', '.join(sorted(SCHEDULERS))}")
    return SCHEDULERS[name](rng=rng, **params)
