"""Reading an engine without changing it: sequences and their state, step records, and the
invariants a property test calls after every operation.
"""

from __future__ import annotations

from sims.engine.seq import DECODE, PAUSED, PREFILL, REJECTED, SWAPPED, WAITING, Seq
from sims.engine.steps import StepRecord, StepSeq


class Reading:
    """Read-only views of an ``Engine`` (a mixin of it)."""

    def generated_of(self, seq: Seq) -> int:
        if seq.state == DECODE:
            return seq.d0_gen + self.step_idx - seq.d0_step
        return seq.generated

    def _step_record(self, dur: float, chunks: list, s: int) -> StepRecord:
        table = self.alloc.table
        out = [StepSeq(q.rid, n, q.computed + n, tuple(table(q))) for q, n in chunks]
        for q in self._decode.values():
            ctx = q.prompt_len + q.d0_gen + s - q.d0_step
            out.append(StepSeq(q.rid, 1, ctx + 1, tuple(table(q))))
        return StepRecord(self.now, dur, self.block_size, self.num_blocks, tuple(out))

    def in_flight(self) -> list[tuple]:
        """``(arrival, first_token, generated)`` of every request submitted here and not yet
        completed or handed off (first_token < 0 while it waits); parallel samples count once."""
        out = []
        seen = set()
        gen = self.generated_of
        for entries in (self._running, self._waiting, self._swapped):
            for e in entries:
                q = e[2]
                if q.group is not None:
                    if q.rid in seen:
                        continue
                    seen.add(q.rid)
                out.append((q.arrival, q.first_token, gen(q)))
        return out

    def holders(self) -> list[Seq]:
        """Sequences holding KV memory: running, then paused."""
        return [e[2] for e in self._running] + list(self._paused)

    def waiting_seqs(self) -> list[Seq]:
        return [e[2] for e in sorted(self._swapped)] + [e[2] for e in sorted(self._waiting)]

    def check_invariants(self) -> None:
        holders = self.holders()
        self.alloc.check_invariants(holders)
        states = {DECODE: 0, PREFILL: 0, PAUSED: 0}
        s_dec = s_other = work = 0
        for q in holders:
            states[q.state] += 1
            if q.state == DECODE:
                gen = self.generated_of(q)
                assert gen < q.output_len, f"request {q.rid} decodes past its output"
                assert q.reserved >= q.prompt_len + gen, f"request {q.rid} holds less KV than its context"
                s_dec += q.prompt_len + gen
                work += q.output_len - gen
            else:
                assert q.state in (PREFILL, PAUSED), f"request {q.rid} holds KV in state {q.state}"
                decoding = q.computed >= q.target
                s_other += q.prompt_len + q.generated if q.state == PAUSED and decoding else q.computed
                work += (q.target - q.computed) + q.samples * q.output_len - q.generated
        for e in self._waiting + self._swapped:
            q = e[2]
            if q.state in (WAITING, SWAPPED):
                assert q.reserved == 0 and not q.blocks, f"waiting request {q.rid} holds KV"
                work += (0 if q.state == SWAPPED else q.target - q.computed) + q.samples * q.output_len - q.generated
            else:
                assert q.state == PAUSED
        assert states[DECODE] == len(self._decode) and states[PREFILL] == len(self._prefilling)
        assert states[PAUSED] == len(self._paused)
        assert s_dec == self._s_dec, f"decode context sum {self._s_dec} != {s_dec}"
        assert s_other == self._s_other, f"prefill/paused token state {self._s_other} != {s_other}"
        assert work == self._work, f"outstanding tokens {self._work} != {work}"
        in_flight = {e[2].rid for e in self._running + self._waiting + self._swapped}
        assert self.submitted == len(self.records) + len(self.rejected) + len(self.handoffs) + len(in_flight), (
            "a request was lost"
        )
        assert self.alloc.held <= self.alloc.capacity
        assert REJECTED not in states
