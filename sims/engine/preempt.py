"""Preemption: recompute or swap a victim when memory is short, and the preemptive policies'
pauses, resumptions and demotions (mlfq).

Each function reads and writes only what it is given: the ``Batch``, the KV manager (``kv``), the
scheduling ``policy`` (read only) and the sequences they hold. What it decided comes back
(``Preempted``, a count, a bool); statistics and logs are the step loop's to keep. Under FCFS the
victim is the most recently admitted request (the largest victim key).
"""

from __future__ import annotations

import heapq

from sims.engine.batch import Batch
from sims.engine.seq import DECODE, PAUSED, SWAPPED, WAITING, Seq
from sims.engine.steps import Preempted


def preempt(batch: Batch, kv, policy, config, cost, victim: Seq, step: int) -> tuple[Preempted, float]:
    """Preempt running ``victim``: swap it out (the transfer takes the seconds returned) or drop its
    KV so it prefills again."""
    victim.preemptions += 1
    newest = max(e[2].admit_order for e in batch.running)
    was_decode = victim.state == DECODE
    old_left = 0 if was_decode else victim.target - victim.computed
    batch.drop_running(victim, step)
    ctx = victim.prompt_len + victim.generated
    if was_decode and config.preemption == "swap" and batch.swap_used + ctx <= config.swap_tokens:
        kv.release(victim, ctx - 1, float(ctx))
        victim.state = SWAPPED
        batch.swap_used += ctx
        heapq.heappush(batch.swapped, (victim.key, victim.order, victim))
        done = Preempted(victim.rid, victim.admit_order, newest, "swap", 0, ctx)
        return done, cost.transfer_time(ctx, cost.pcie_bytes_s)
    dropped = to_recompute(batch, kv, policy, victim, ctx - 1 if was_decode else victim.computed, old_left)
    batch.queue(victim)
    return Preempted(victim.rid, victim.admit_order, newest, "recompute", dropped, 0), 0.0


def to_recompute(batch: Batch, kv, policy, seq: Seq, kv_tokens: int, old_left: int) -> int:
    """Drop ``seq``'s KV: it will prefill prompt + generated tokens again. Returns the computed
    tokens thrown away."""
    kv.release(seq, kv_tokens, float(kv_tokens))
    seq.target = seq.prompt_len + seq.generated
    seq.computed = 0
    seq.prefilled = False
    batch.work += seq.target - old_left
    seq.state = WAITING
    seq.key = policy.key(seq)
    return max(0, kv_tokens)


def demote(batch: Batch, policy, seq: Seq, step: int) -> None:
    """A decoding ``seq`` reached its level's end at ``step``: the level the policy gives next."""
    seq.generated = seq.d0_gen + step - seq.d0_step
    seq.level, seq.level_end = policy.demote(seq)
    seq.key = policy.key(seq)
    batch.rerank(seq, policy.victim_key(seq))
    if seq.level_end < seq.output_len:
        batch.demote_cal.setdefault(seq.d0_step + seq.level_end - seq.d0_gen, []).append((seq.epoch, seq))


def rebalance(batch: Batch, max_num_seqs: int, step: int) -> int:
    """Pause the worst running request while a better one waits and the batch is full; returns
    how many were paused (they keep their KV and wait)."""
    paused = 0
    waiting, running = batch.waiting, batch.running
    while waiting and len(running) >= max_num_seqs and waiting[0][0] < running[-1][0][0]:
        seq = running[-1][2]
        was_decode = seq.state == DECODE
        batch.drop_running(seq, step)
        batch.s_other += seq.prompt_len + seq.generated if was_decode else seq.computed
        seq.state = PAUSED
        batch.paused.append(seq)
        batch.queue(seq)
        paused += 1
    return paused


def resume(batch: Batch, kv, policy, seq: Seq, step: int) -> bool:
    """Paused ``seq`` rejoins the batch at ``step`` (False: no room for its next token)."""
    decoding = seq.computed >= seq.target
    if decoding:
        ctx = seq.prompt_len + seq.generated
        if not kv.grow(seq, ctx + 1):
            return False
        batch.s_other -= ctx
    batch.paused.remove(seq)
    batch.add_running(seq, policy.victim_key)
    if decoding:
        batch.enter_decode(seq, step)
    else:
        batch.start_prefill(seq)
    return True


def make_room(batch: Batch, kv, policy, head: Seq, running: int, out: list) -> bool:
    """Admitting ``head`` failed for memory. Paused requests with worse keys lose their KV; with
    nothing running, every other paused request does (else nothing could ever run). Each loss is
    appended to ``out``; returns whether any."""
    if not batch.paused:
        return False
    p = drop_paused(batch, kv, policy, head)
    if p is not None:
        out.append(p)
        return True
    freed = False
    if running == 0:
        while (p := drop_paused(batch, kv, policy, head, force=True)) is not None:
            out.append(p)
            freed = True
    return freed


def drop_paused(batch: Batch, kv, policy, head: Seq, force: bool = False) -> Preempted | None:
    """Memory is short for ``head``: a paused request with a worse key (any, if ``force``) loses
    its KV and will prefill again (None: none does)."""
    others = [q for q in batch.paused if q is not head]
    if not others:
        return None
    worst = max(others, key=lambda q: (q.key, q.order))
    if not force and (worst.key, worst.order) <= (head.key, head.order):
        return None
    batch.paused.remove(worst)
    decoding = worst.computed >= worst.target
    state = worst.prompt_len + worst.generated if decoding else worst.computed
    batch.s_other -= state
    worst.preemptions += 1
    left = 0 if decoding else worst.target - worst.computed
    dropped = to_recompute(batch, kv, policy, worst, state - 1 if decoding else state, left)
    return Preempted(worst.rid, worst.admit_order, -1, "paused", dropped, 0)
