"""``Batch``: an engine's queues, step calendars and running sums, in one record.

The step loop (``Engine``) owns it; the scheduler (``scheduler.py``, ``preempt.py``) moves
sequences through it; the decode-run loop (``decode.py``) reads it and writes back its sums. Every
move that changes a running sum goes through a method here, so the sums and the queues agree
(``check_invariants``). A DECODE sequence's ``generated`` is derived from the step index, so a
decode step touches no sequence: ``generated_of(seq, step)``.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort

from sims.core.panel import Checkpointed
from sims.engine.seq import DECODE, PAUSED, PREFILL, REJECTED, SWAPPED, WAITING, Seq


class Batch(Checkpointed):
    """Who waits, who runs, what each future step holds, and the sums a step's cost reads.
    (A slotted class rather than a dataclass: building one costs the command's start-up more.)"""

    __slots__ = (
        "waiting",
        "swapped",
        "prefilling",
        "decode",
        "running",
        "paused",
        "grow_cal",
        "finish_cal",
        "demote_cal",
        "finishing",
        "popped",
        "s_dec",
        "s_other",
        "work",
        "swap_used",
        "orders",
        "admits",
    )

    def __init__(self) -> None:
        self.waiting: list = []  # heap (key, order, seq): WAITING and PAUSED, the next to admit first
        self.swapped: list = []  # heap (key, order, seq): SWAPPED out (they come back first)
        self.prefilling: list = []  # PREFILL, in admission order
        self.decode: dict = {}  # order -> DECODE seq, in the order they began decoding
        self.running: list = []  # sorted (vkey, order, seq), PREFILL + DECODE: the victim is last
        self.paused: list = []  # PAUSED: out of the batch, still holding their KV
        self.grow_cal: dict = {}  # step -> [(epoch, seq)] crossing their reservation
        self.finish_cal: dict = {}  # step -> [(epoch, seq)] producing their last token
        self.demote_cal: dict = {}  # step -> [(epoch, seq)] using up their level (mlfq)
        self.finishing: list = []  # (epoch, seq) whose last token ends the step being run
        self.popped = -1  # the step whose calendar entries were taken (-1 between steps)
        self.s_dec = 0  # sum of context lengths over DECODE sequences
        self.s_other = 0  # token state of PREFILL (computed) and PAUSED sequences
        self.work = 0  # tokens still to process: prefill (target - computed) + output left
        self.swap_used = 0  # host swap space held by SWAPPED sequences (token slots)
        self.orders = 0  # requests and parallel samples numbered so far (Seq.order)
        self.admits = 0  # admissions so far (Seq.admit_order of the latest)

    # -- moves ------------------------------------------------------------------------------------
    def queue(self, seq: Seq) -> None:
        """``seq`` waits (WAITING or PAUSED), ordered by its ``key``."""
        heapq.heappush(self.waiting, (seq.key, seq.order, seq))

    def add_running(self, seq: Seq, victim_key) -> None:
        """``seq`` joins the running set as the newest admission, ranked by ``victim_key(seq)``
        (the policy's, which may read the admission order)."""
        self.admits += 1
        seq.admit_order = self.admits
        seq.vkey = vkey = victim_key(seq)
        insort(self.running, (vkey, seq.order, seq))

    def rerank(self, seq: Seq, vkey: tuple) -> None:
        """A running ``seq`` gets a new victim key (an mlfq demotion)."""
        rk = self.running
        del rk[bisect_left(rk, (seq.vkey, seq.order))]
        seq.vkey = vkey
        insort(rk, (vkey, seq.order, seq))

    def unrank(self, seq: Seq) -> None:
        """Take ``seq`` off the running ranking only (its prefill just ended: it leaves the engine)."""
        rk = self.running
        del rk[bisect_left(rk, (seq.vkey, seq.order))]

    def drop_running(self, seq: Seq, step: int) -> None:
        """Take ``seq`` out of the running set at ``step``; a DECODE one gets its true ``generated``."""
        rk = self.running
        del rk[bisect_left(rk, (seq.vkey, seq.order))]
        if seq.state == DECODE:
            seq.generated = seq.d0_gen + step - seq.d0_step
            del self.decode[seq.order]
            self.s_dec -= seq.prompt_len + seq.generated
        else:
            self.prefilling.remove(seq)
            self.s_other -= seq.computed
        seq.epoch += 1

    def start_prefill(self, seq: Seq) -> None:
        """``seq`` (already ranked) computes its prompt from the next chunk on."""
        seq.state = PREFILL
        self.prefilling.append(seq)

    def enter_decode(self, seq: Seq, step: int) -> None:
        """``seq`` decodes from ``step`` on; its growth, finish and demotion go on the calendars."""
        seq.state = DECODE
        seq.d0_step = step
        seq.d0_gen = seq.generated
        ctx = seq.prompt_len + seq.generated
        self.decode[seq.order] = seq
        self.s_dec += ctx
        epoch = seq.epoch
        fin = step + seq.output_len - seq.generated - 1
        if fin <= self.popped:
            self.finishing.append((epoch, seq))
        else:
            self.finish_cal.setdefault(fin, []).append((epoch, seq))
        if seq.reserved < seq.final_len:
            self.grow_cal.setdefault(step + seq.reserved - ctx, []).append((epoch, seq))
        if seq.level_end < seq.output_len:
            self.demote_cal.setdefault(step + seq.level_end - seq.generated, []).append((epoch, seq))

    # -- reads ------------------------------------------------------------------------------------
    def has_work(self) -> bool:
        return bool(self.waiting or self.swapped or self.prefilling or self.decode)

    @staticmethod
    def generated_of(seq: Seq, step: int) -> int:
        """Output tokens ``seq`` has produced before ``step``."""
        if seq.state == DECODE:
            return seq.d0_gen + step - seq.d0_step
        return seq.generated

    def holders(self) -> list[Seq]:
        """Sequences holding KV memory: running (in victim order), then paused."""
        return [e[2] for e in self.running] + list(self.paused)

    def waiting_seqs(self) -> list[Seq]:
        """Swapped-out sequences, then waiting ones, each in admission order."""
        return [e[2] for e in sorted(self.swapped)] + [e[2] for e in sorted(self.waiting)]

    def in_flight(self, step: int) -> list[tuple]:
        """``(arrival, first_token, generated)`` of every request here (first_token < 0 while it
        waits); the parallel samples of one request count once."""
        out = []
        seen = set()
        gen = self.generated_of
        for entries in (self.running, self.waiting, self.swapped):
            for e in entries:
                q = e[2]
                if q.group is not None:
                    if q.rid in seen:
                        continue
                    seen.add(q.rid)
                out.append((q.arrival, q.first_token, gen(q, step)))
        return out

    def check_invariants(self, step: int) -> None:
        """Every queue holds the states it should, the running set is ranked and is exactly the
        prefilling and decoding sequences, and the running sums equal a recount."""
        holders = self.holders()
        states = {DECODE: 0, PREFILL: 0, PAUSED: 0}
        s_dec = s_other = work = 0
        for q in holders:
            assert q.state != REJECTED
            states[q.state] += 1
            if q.state == DECODE:
                gen = self.generated_of(q, step)
                assert gen < q.output_len, f"request {q.rid} decodes past its output"
                assert q.reserved >= q.prompt_len + gen, f"request {q.rid} holds less KV than its context"
                s_dec += q.prompt_len + gen
                work += q.output_len - gen
            else:
                assert q.state in (PREFILL, PAUSED), f"request {q.rid} holds KV in state {q.state}"
                decoding = q.computed >= q.target
                s_other += q.prompt_len + q.generated if q.state == PAUSED and decoding else q.computed
                work += (q.target - q.computed) + q.samples * q.output_len - q.generated
        for e in self.waiting + self.swapped:
            q = e[2]
            if q.state in (WAITING, SWAPPED):
                assert q.reserved == 0 and not q.blocks, f"waiting request {q.rid} holds KV"
                work += (0 if q.state == SWAPPED else q.target - q.computed) + q.samples * q.output_len - q.generated
            else:
                assert q.state == PAUSED
        assert states[DECODE] == len(self.decode) and states[PREFILL] == len(self.prefilling)
        assert states[PAUSED] == len(self.paused)
        ranked = [e[:2] for e in self.running]
        assert ranked == sorted(ranked), "the running set is out of victim order"
        assert {e[1] for e in self.running} == set(self.decode) | {q.order for q in self.prefilling}, (
            "the running set is not the prefilling and decoding sequences"
        )
        assert all(q.state == SWAPPED for _, _, q in self.swapped), "a swapped entry is not swapped out"
        assert self.swap_used == sum(q.prompt_len + q.generated for _, _, q in self.swapped), "swap space drifted"
        assert s_dec == self.s_dec, f"decode context sum {self.s_dec} != {s_dec}"
        assert s_other == self.s_other, f"prefill/paused token state {self.s_other} != {s_other}"
        assert work == self.work, f"outstanding tokens {self.work} != {work}"
