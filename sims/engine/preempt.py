"""Preemption: recompute or swap a victim when memory is short, and MLFQ's pauses and demotions.

Under FCFS the victim is the most recently admitted request (the largest victim key).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort

from sims.engine.seq import DECODE, PAUSED, PREFILL, SWAPPED, WAITING, Seq


class Preemption:
    """Preempt, recompute, and the preemptive schedulers' pause/resume (a mixin of ``Engine``)."""

    def _preempt(self, victim: Seq) -> float:
        """Preempt ``victim``: swap it out (returns the transfer time) or drop its KV to recompute."""
        self._preempted_now = True
        self.stats.preemptions += 1
        victim.preemptions += 1
        newest = max(e[2].admit_order for e in self._running)
        if victim.admit_order == newest:
            self.stats.victims_newest += 1
        was_decode = victim.state == DECODE
        old_left = 0 if was_decode else victim.target - victim.computed
        self._drop_running(victim)
        ctx = victim.prompt_len + victim.generated
        if was_decode and self.config.preemption == "swap" and self._swap_used + ctx <= self.config.swap_tokens:
            self.alloc.release(victim, ctx - 1, float(ctx))
            victim.state = SWAPPED
            self._swap_used += ctx
            self.stats.swaps += 1
            self.stats.swapped_tokens += ctx
            self.preempt_log.append([self.now, victim.rid, victim.admit_order, newest, "swap"])
            heapq.heappush(self._swapped, (victim.key, victim.order, victim))
            return self.cost.transfer_time(ctx, self.cost.pcie_bytes_s)
        self._to_recompute(victim, ctx - 1 if was_decode else victim.computed, old_left)
        self.preempt_log.append([self.now, victim.rid, victim.admit_order, newest, "recompute"])
        heapq.heappush(self._waiting, (victim.key, victim.order, victim))
        return 0.0

    def _to_recompute(self, seq: Seq, kv_tokens: int, old_left: int) -> None:
        """Drop the KV; the request will prefill prompt + generated tokens again."""
        self.alloc.release(seq, kv_tokens, float(kv_tokens))
        self.stats.dropped_tokens += max(0, kv_tokens)
        seq.target = seq.prompt_len + seq.generated
        seq.computed = 0
        seq.prefilled = False
        self._work += seq.target - old_left
        seq.state = WAITING
        seq.key = self.sched.key(seq)

    def _demote(self, seq: Seq, s: int) -> None:
        rk = self._running
        del rk[bisect_left(rk, (seq.vkey, seq.order))]
        seq.generated = seq.d0_gen + s - seq.d0_step
        self.sched.demote(seq)
        seq.key = self.sched.key(seq)
        seq.vkey = self.sched.victim_key(seq)
        insort(rk, (seq.vkey, seq.order, seq))
        if seq.level_end < seq.output_len:
            self._demote_cal.setdefault(seq.d0_step + seq.level_end - seq.d0_gen, []).append((seq.epoch, seq))

    def _rebalance(self) -> None:
        """Pause the worst running request while a better one waits and the batch is full."""
        cap = self.config.max_num_seqs
        while self._waiting and len(self._running) >= cap and self._waiting[0][0] < self._running[-1][0][0]:
            seq = self._running[-1][2]
            was_decode = seq.state == DECODE
            self._drop_running(seq)
            self._s_other += seq.prompt_len + seq.generated if was_decode else seq.computed
            seq.state = PAUSED
            self.stats.pauses += 1
            self._paused.append(seq)
            heapq.heappush(self._waiting, (seq.key, seq.order, seq))

    def _resume(self, seq: Seq, s: int) -> bool:
        decoding = seq.computed >= seq.target
        if decoding:
            ctx = seq.prompt_len + seq.generated
            if not self.alloc.grow(seq, ctx + 1):
                return False
            self._s_other -= ctx
        self._paused.remove(seq)
        self._add_running(seq)
        if decoding:
            self._enter_decode(seq, s)
        else:
            seq.state = PREFILL
            self._prefilling.append(seq)
        return True

    def _make_room(self, head: Seq, running: int) -> bool:
        """Admitting ``head`` failed for memory. Paused requests with worse keys lose their KV;
        with nothing running, every other paused request does (else nothing could ever run)."""
        if not self._paused:
            return False
        if self._drop_paused(head):
            return True
        freed = False
        if running == 0:
            while self._drop_paused(head, force=True):
                freed = True
        return freed

    def _drop_paused(self, head: Seq, force: bool = False) -> bool:
        """Memory is short for ``head``: a paused request with a worse key (any, if ``force``)
        loses its KV and will prefill again."""
        others = [q for q in self._paused if q is not head]
        if not others:
            return False
        worst = max(others, key=lambda q: (q.key, q.order))
        if not force and (worst.key, worst.order) <= (head.key, head.order):
            return False
        self._paused.remove(worst)
        decoding = worst.computed >= worst.target
        state = worst.prompt_len + worst.generated if decoding else worst.computed
        self._s_other -= state
        self.stats.preemptions += 1
        worst.preemptions += 1
        self._to_recompute(worst, state - 1 if decoding else state, 0 if decoding else worst.target - worst.computed)
        return True
