"""Admission: what joins the batch each step, and the running set it joins.

Swapped-out requests come back first, then waiting ones in scheduler order while the token budget,
``max_num_seqs`` and KV memory allow. The running set is kept sorted by the scheduler's victim
key; a DECODE sequence goes on the step calendar (growth, finish, demotion) when it enters.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort

from sims.engine.seq import DECODE, PAUSED, PREFILL, Seq


class Admission:
    """Engine steps that admit requests and move them in and out of the running set (a mixin of ``Engine``)."""

    def _admit(self, budget: int, chunks: list, s: int) -> float:
        """Swapped requests first, then waiting ones in scheduler order, while room lasts."""
        cfg = self.config
        alloc = self.alloc
        extra = 0.0
        running = len(self._decode) + len(self._prefilling)
        while self._swapped and running < cfg.max_num_seqs and budget > 0:
            seq = self._swapped[0][2]
            ctx = seq.prompt_len + seq.generated
            if alloc.allocate_slots(seq, ctx, None, self._wm if running else 0) is None:
                if self._make_room(seq, running):
                    continue
                return extra
            heapq.heappop(self._swapped)
            seq.computed = seq.target
            self._swap_used -= ctx
            extra += self.cost.transfer_time(ctx, self.cost.pcie_bytes_s)
            self._add_running(seq)
            self._enter_decode(seq, s)
            running += 1
            budget -= 1
        if self._swapped:
            return extra
        waiting = self._waiting
        hashing = self.caching
        while waiting and running < cfg.max_num_seqs and budget > 0:
            seq = waiting[0][2]
            if seq.state == PAUSED:
                if not self._resume(seq, s):
                    if self._make_room(seq, running):
                        continue
                    break
                heapq.heappop(waiting)
                running += 1
                if seq.state == DECODE:
                    budget -= 1
                else:
                    n = min(seq.target - seq.computed, budget)
                    chunks.append((seq, n))
                    budget -= n
                continue
            if seq.prefilled:  # role=decode: its prompt KV arrives; it decodes at once
                if alloc.allocate_slots(seq, seq.prompt_len + 1, None, self._wm if running else 0) is None:
                    if self._make_room(seq, running):
                        continue
                    break
                heapq.heappop(waiting)
                seq.computed = seq.target
                self._add_running(seq)
                if seq.samples > 1:
                    self._fork(seq)
                self._enter_decode(seq, s)
                running += 1
                budget -= 1
                continue
            target = seq.target
            if not cfg.chunked_prefill and target > budget:
                break
            hashes = alloc.prompt_hashes(seq, target) if hashing else None
            got = alloc.allocate_slots(seq, target, hashes, self._wm if running else 0)
            if got is None:
                if self._make_room(seq, running):
                    continue
                break
            heapq.heappop(waiting)
            hit = got.hit_tokens
            if seq.cached_tokens < 0:
                seq.cached_tokens = min(hit, seq.prompt_len)
            self._work -= hit
            self._s_other += hit
            seq.state = PREFILL
            self._prefilling.append(seq)
            self._add_running(seq)
            n = min(target - hit, budget)
            chunks.append((seq, n))
            budget -= n
            running += 1
        return extra

    def _add_running(self, seq: Seq) -> None:
        self._admits += 1
        seq.admit_order = self._admits
        seq.vkey = self.sched.victim_key(seq)
        insort(self._running, (seq.vkey, seq.order, seq))

    def _drop_running(self, seq: Seq) -> None:
        """Take ``seq`` out of the running set; a DECODE one gets its true ``generated``."""
        rk = self._running
        del rk[bisect_left(rk, (seq.vkey, seq.order))]
        if seq.state == DECODE:
            seq.generated = seq.d0_gen + self.step_idx - seq.d0_step
            del self._decode[seq.order]
            self._s_dec -= seq.prompt_len + seq.generated
        else:
            self._prefilling.remove(seq)
            self._s_other -= seq.computed
        seq.epoch += 1

    def _enter_decode(self, seq: Seq, step: int) -> None:
        """``seq`` decodes from step ``step`` on; put its growth and finish on the calendar."""
        seq.state = DECODE
        seq.d0_step = step
        seq.d0_gen = seq.generated
        ctx = seq.prompt_len + seq.generated
        self._decode[seq.order] = seq
        self._s_dec += ctx
        epoch = seq.epoch
        fin = step + seq.output_len - seq.generated - 1
        if fin <= self._popped:
            self._finishing.append((epoch, seq))
        else:
            self._finish_cal.setdefault(fin, []).append((epoch, seq))
        if seq.reserved < seq.final_len:
            self._grow_cal.setdefault(step + seq.reserved - ctx, []).append((epoch, seq))
        if seq.level_end < seq.output_len:
            self._demote_cal.setdefault(step + seq.level_end - seq.generated, []).append((epoch, seq))
