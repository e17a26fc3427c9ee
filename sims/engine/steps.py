"""What crosses the engine's boundaries: the scheduler's decisions for a step, the executed step
and a disaggregated handoff."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class StepSeq:
    """One sequence in an executed step."""

    rid: int
    new_tokens: int  # prefill chunk tokens, or 1 for a decode
    context: int  # KV tokens after the step
    block_table: tuple  # physical block ids (paged) or (start, slots) (contiguous)


@dataclass(frozen=True, slots=True)
class StepRecord:
    """What ``step_listener`` receives once per executed step."""

    t_start: float
    duration: float  # simulated seconds
    block_size: int
    num_blocks: int
    seqs: tuple  # StepSeq, prefill chunks first, then decodes in admission order


@dataclass(frozen=True, slots=True)
class Handoff:
    """role="prefill": a request whose prompt KV is ready to move to a decode replica."""

    t: float  # when its prefill (and first token) finished
    tokens: int  # KV tokens to transfer
    request: dict  # the request to submit to a decode replica (carries "prefilled")


class Preempted(NamedTuple):
    """One preemption the scheduler made. ``mode``: "recompute" or "swap" (a running victim) or
    "paused" (a paused request lost its KV so another could be admitted); ``newest``: the latest
    admit order at that moment (-1 for "paused"); ``dropped``: computed KV tokens thrown away
    (recompute, paused); ``swapped``: KV tokens moved to host memory."""

    rid: int
    admit_order: int
    newest: int
    mode: str
    dropped: int
    swapped: int


class Forked(NamedTuple):
    """A request's parallel samples, forked from it: ``samples`` more first tokens, ``copies``
    blocks copied on write, and ``done``, the samples whose first token was their last (for the
    step loop to complete)."""

    samples: int
    copies: int
    done: list


class SchedulerOutput:
    """What ``Scheduler.schedule`` decided for one step, for the step loop to run and account
    (one per general step: a slotted class, cheaper to build than a dataclass)."""

    __slots__ = ("chunks", "seconds", "preempted", "paused", "forked", "victims")

    def __init__(self) -> None:
        self.chunks: list = []  # (seq, tokens): running prefills first, then admissions
        self.seconds = 0.0  # swap transfers, out and in, added to the step's length
        self.preempted: list = []  # Preempted, in the order they happened
        self.paused = 0  # running requests paused for a better waiting one (mlfq)
        self.forked: list = []  # Forked, of requests admitted with their prompt KV
        self.victims = False  # a running request was preempted: nothing was admitted


def step_record(batch, table, now: float, dur: float, chunks: list, step: int, block_size: int, num_blocks: int):
    """The ``StepRecord`` of step ``step`` (starting at ``now``) before it runs: its prefill
    ``chunks``, then every decode of ``batch``; ``table(seq)`` is the KV manager's block table."""
    out = [StepSeq(q.rid, n, q.computed + n, tuple(table(q))) for q, n in chunks]
    for q in batch.decode.values():
        ctx = q.prompt_len + q.d0_gen + step - q.d0_step
        out.append(StepSeq(q.rid, 1, ctx + 1, tuple(table(q))))
    return StepRecord(now, dur, block_size, num_blocks, tuple(out))
