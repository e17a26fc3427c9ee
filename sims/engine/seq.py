"""``Seq``: one request's state inside an engine."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from sims.engine.blocks import block_hashes

WAITING, PREFILL, DECODE, PAUSED, SWAPPED, DONE, REJECTED = range(7)
NEVER = 1 << 62  # a generated-token count no request reaches
STATE_NAMES = ("waiting", "prefill", "decode", "paused", "swapped", "done", "rejected")


@dataclass(slots=True, eq=False)
class Seq:
    """A request. While DECODE its ``generated`` is stale: the engine derives it from the step
    counter (``d0_gen + steps since d0_step``), so a decode step touches no sequence."""

    rid: int
    arrival: float
    prompt_len: int
    output_len: int  # tokens it will generate (the workload's truth, capped by max_tokens/len)
    segments: list | tuple  # prompt content [[content_id, tokens], ...] (never mutated: shared)
    out_cid: str  # content id of its output tokens (chat: the next turn's prompt reuses it)
    order: int  # submit order: the final tie-break everywhere
    tenant: int = 0
    priority: float = 0.0
    session: int = -1  # chat session of this turn (-1: not a chat); its output is the next prompt's
    turn: int = 0
    state: int = WAITING
    generated: int = 0  # output tokens produced (see the class docstring while DECODE)
    computed: int = 0  # tokens whose KV is computed, during prefill
    target: int = 0  # tokens to compute before the next output token: prompt + generated
    final_len: int = 0  # prompt + output: the longest context it reaches
    reserved: int = 0  # KV token slots held (paged: blocks * block_size)
    blocks: list = field(default_factory=list)  # paged block table (physical ids, in order)
    cached_blocks: int = 0  # leading blocks registered in the prefix cache
    region: int = -1  # contiguous: first slot of its range
    d0_step: int = 0  # DECODE: the step index it (re)joined decoding at ...
    d0_gen: int = 0  # ... with this many tokens generated
    epoch: int = 0  # bumps when it leaves DECODE: stale calendar entries are skipped
    admit_order: int = -1  # admission counter (FCFS victim: the largest)
    key: tuple = ()  # waiting-queue key (scheduler)
    vkey: tuple = ()  # running-set key (largest is the preemption victim)
    first_token: float = -1.0
    cached_tokens: int = -1  # prompt tokens hit in the prefix cache at first admission
    preemptions: int = 0
    level: int = 0  # the policy's level (mlfq), written by the scheduler
    level_end: int = NEVER  # demoted when generated reaches this (mlfq)
    prefilled: bool = False  # role=decode: arrived with its prompt KV computed elsewhere
    samples: int = 1  # parallel samples still to fork from this one (n); 1 once forked
    group: list | None = None  # shared by the samples of one request: [left, finish, preemptions]
    root: str | None = None  # the content id its block hashes fold in first (paged.root_of)
    _hashes: tuple | None = None
    _hashes_all: bool = False  # _hashes covers every full block of prompt + output

    def __deepcopy__(self, memo: dict) -> Seq:
        """Checkpoints copy what changes; segments (the stream's) and hashes (a tuple) are shared."""
        new = copy.copy(self)
        memo[id(self)] = new
        new.blocks = list(self.blocks)
        if self.group is not None:
            new.group = copy.deepcopy(self.group, memo)
        return new

    def full_hashes(self, block_size: int, n: int) -> tuple[int, ...]:
        """Hashes of (at least) the first ``n`` full blocks of prompt + output, computed lazily."""
        h = self._hashes
        if h is None or (len(h) < n and not self._hashes_all):
            segs = [*self.segments, (self.out_cid, self.output_len)]
            h = self._hashes = tuple(block_hashes(segs, block_size, limit=max(n, 1)))
            self._hashes_all = len(h) < max(n, 1)
        return h
