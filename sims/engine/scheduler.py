"""``Scheduler``: what runs in each step (vLLM's ``Scheduler.schedule``).

It is a function of the batch, the KV manager, the scheduling policy and the cost model: it moves
sequences through the ``Batch``, asks the KV manager for room, and writes the sequences'
scheduling fields (state, key, level, admission order, calendar entries). It never writes the
statistics, the records, the logs or the clock: what it decided comes back as a
``SchedulerOutput`` (and ``Forked``), which the step loop (``Engine``) runs and accounts.

One step's schedule, in order: decodes that cross their reservation grow (preempting the worst
running request while memory is short, ``preempt.py``); sequences whose last token ends this step
are set aside; mlfq demotions; a preemptive policy pauses running requests for better waiting
ones; running prefills continue (chunked to the token budget); then, unless a running request was
preempted, swapped-out requests come back and waiting ones are admitted in policy order while the
budget, ``max_num_seqs`` and KV memory allow.
"""

from __future__ import annotations

import heapq

from sims.engine.batch import Batch
from sims.engine.preempt import demote, make_room, preempt, rebalance, resume
from sims.engine.seq import DECODE, PAUSED, PREFILL, Seq
from sims.engine.steps import Forked, SchedulerOutput


class Scheduler:
    """Decides each step's batch; see the module docstring for what it may write."""

    def __init__(self, batch: Batch, kv, policy, cost, config) -> None:
        self.batch = batch
        self.kv = kv
        self.policy = policy
        self.cost = cost
        self.config = config
        self.watermark = int(config.watermark * kv.num_units) if kv.paged else 0  # units kept free
        self.caching = kv.paged and config.prefix_caching

    def enqueue(self, seq: Seq) -> None:
        """A new request waits: the level the policy gives it, then its place in the queue."""
        policy = self.policy
        level = policy.join(seq)
        if level is not None:
            seq.level, seq.level_end = level
        seq.key = key = policy.key(seq)
        heapq.heappush(self.batch.waiting, (key, seq.order, seq))  # Batch.queue, inline

    def schedule(self, step: int) -> SchedulerOutput:
        """Step ``step``'s batch (the module docstring gives the order)."""
        b = self.batch
        cfg = self.config
        out = SchedulerOutput()
        b.finishing = finishing = []
        b.popped = step
        grows = b.grow_cal.pop(step, None)
        if grows:
            out.seconds += self.grow(grows, step, out)
        fins = b.finish_cal.pop(step, None)
        if fins:
            for epoch, seq in fins:
                if epoch == seq.epoch:
                    finishing.append((epoch, seq))
        if b.demote_cal:
            demotes = b.demote_cal.pop(step, None)
            if demotes:
                for epoch, seq in demotes:
                    if epoch == seq.epoch:
                        demote(b, self.policy, seq, step)
        if self.policy.preemptive and b.waiting:
            out.paused = rebalance(b, cfg.max_num_seqs, step)
        budget = cfg.max_num_batched_tokens - len(b.decode)
        chunks = out.chunks
        for seq in b.prefilling:
            if budget <= 0:
                break
            n = seq.target - seq.computed
            if n > budget:
                if not cfg.chunked_prefill:
                    continue
                n = budget
            chunks.append((seq, n))
            budget -= n
        if not out.victims and (b.waiting or b.swapped) and budget > 0:
            if cfg.batching == "continuous" or not (b.decode or b.prefilling):
                out.seconds += self.admit(budget, step, out)
        return out

    def grow(self, grows: list, step: int, out: SchedulerOutput) -> float:
        """Decodes whose next token needs a slot past their reservation; returns swap seconds."""
        kv = self.kv
        cal = self.batch.grow_cal
        if kv.decode_grow(grows, cal, step):  # every crossing fits: grown in one call
            return 0.0
        extra = 0.0
        grow_one = kv.grow_one
        for epoch, seq in grows:
            if epoch != seq.epoch:
                continue
            if not grow_one(seq):  # memory is short: preempt until it fits (or it is the victim)
                ctx = seq.prompt_len + seq.d0_gen + step - seq.d0_step
                while not kv.grow(seq, ctx + 1):
                    victim = self.batch.running[-1][2]
                    extra += self.preempt(victim, step, out)
                    if victim is seq:
                        break
                if epoch != seq.epoch:
                    continue
            r = seq.reserved
            if r < seq.final_len:
                at = seq.d0_step + r - seq.prompt_len - seq.d0_gen
                if at in cal:
                    cal[at].append((epoch, seq))
                else:
                    cal[at] = [(epoch, seq)]
        return extra

    def preempt(self, victim: Seq, step: int, out: SchedulerOutput) -> float:
        """Preempt running ``victim`` (``preempt.preempt``); returns the swap seconds."""
        done, seconds = preempt(self.batch, self.kv, self.policy, self.config, self.cost, victim, step)
        out.preempted.append(done)
        out.victims = True
        return seconds

    def admit(self, budget: int, step: int, out: SchedulerOutput) -> float:
        """Swapped requests first, then waiting ones in policy order, while room lasts; their
        chunks go on ``out.chunks``. Returns the swap-in seconds."""
        cfg = self.config
        kv = self.kv
        b = self.batch
        policy = self.policy
        wm = self.watermark
        chunks = out.chunks
        extra = 0.0
        running = len(b.decode) + len(b.prefilling)
        swapped = b.swapped
        while swapped and running < cfg.max_num_seqs and budget > 0:
            seq = swapped[0][2]
            ctx = seq.prompt_len + seq.generated
            if kv.allocate_slots(seq, ctx, None, wm if running else 0) is None:
                if make_room(b, kv, policy, seq, running, out.preempted):
                    continue
                return extra
            heapq.heappop(swapped)
            seq.computed = seq.target
            b.swap_used -= ctx
            extra += self.cost.transfer_time(ctx, self.cost.pcie_bytes_s)
            b.add_running(seq, policy.victim_key)
            b.enter_decode(seq, step)
            running += 1
            budget -= 1
        if swapped:
            return extra
        waiting = b.waiting
        hashing = self.caching
        while waiting and running < cfg.max_num_seqs and budget > 0:
            seq = waiting[0][2]
            if seq.state == PAUSED:
                if not resume(b, kv, policy, seq, step):
                    if make_room(b, kv, policy, seq, running, out.preempted):
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
                if kv.allocate_slots(seq, seq.prompt_len + 1, None, wm if running else 0) is None:
                    if make_room(b, kv, policy, seq, running, out.preempted):
                        continue
                    break
                heapq.heappop(waiting)
                seq.computed = seq.target
                b.add_running(seq, policy.victim_key)
                if seq.samples > 1:
                    out.forked.append(self.fork(seq, step))
                b.enter_decode(seq, step)
                running += 1
                budget -= 1
                continue
            target = seq.target
            if not cfg.chunked_prefill and target > budget:
                break
            hashes = kv.prompt_hashes(seq, target) if hashing else None
            got = kv.allocate_slots(seq, target, hashes, wm if running else 0)
            if got is None:
                if make_room(b, kv, policy, seq, running, out.preempted):
                    continue
                break
            heapq.heappop(waiting)
            hit = got.hit_tokens
            if seq.cached_tokens < 0:
                seq.cached_tokens = min(hit, seq.prompt_len)
            b.work -= hit
            b.s_other += hit
            seq.state = PREFILL  # Batch.start_prefill, inline
            b.prefilling.append(seq)
            b.add_running(seq, policy.victim_key)
            n = min(target - hit, budget)
            chunks.append((seq, n))
            budget -= n
            running += 1
        return extra

    def fork(self, seq: Seq, step: int) -> Forked:
        """Parallel sampling: n - 1 more samples share the prompt's full blocks (refcounts); the
        block holding each sample's own first token is copied on write. A sample that finds no
        memory for its copy waits to be recomputed (its prompt is then a prefix-cache hit); one
        whose first token is its last is returned done, for the step loop to complete."""
        b = self.batch
        kv = self.kv
        policy = self.policy
        n, seq.samples = seq.samples, 1
        seq.group = [n, n, max(0, seq.cached_tokens), 0]  # samples left, n, cached tokens, preemptions
        copies = 0
        done = []
        for k in range(1, n):
            b.orders += 1
            child = Seq(
                rid=seq.rid,
                arrival=seq.arrival,
                prompt_len=seq.prompt_len,
                output_len=seq.output_len,
                segments=seq.segments,
                out_cid=f"{seq.out_cid}.s{k}",
                order=b.orders,
                tenant=seq.tenant,
                priority=seq.priority,
                session=seq.session,
                turn=seq.turn,
            )
            child.final_len = seq.final_len
            child.generated = 1
            child.first_token = seq.first_token
            child.cached_tokens = 0
            child.group = seq.group
            child.level, child.level_end = seq.level, seq.level_end
            child.key = policy.key(child)
            child.target = child.computed = seq.computed
            b.work -= 1
            if child.generated >= child.output_len:  # a one-token answer: nothing to decode
                done.append(child)
                continue
            copied = kv.fork(seq, child)
            if copied is not None:
                copies += copied
                b.add_running(child, policy.victim_key)
                b.enter_decode(child, step)
            else:
                child.target, child.computed = child.prompt_len + 1, 0
                b.work += child.target
                b.queue(child)
        return Forked(n - 1, copies, done)
