"""What crosses the engine's boundary per step and per handoff: small frozen records."""

from __future__ import annotations

from dataclasses import dataclass


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
