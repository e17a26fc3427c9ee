"""``Engine``: one LLM inference replica, stepped on the virtual clock the way vLLM runs it.

Each step (atomic; it starts when the previous one ends, or at the next arrival when idle):
  1. calendar events due at this step: decode sequences that cross their reservation (paged: a
     block boundary) grow, preempting victims if memory is short; MLFQ demotions;
  2. every DECODE sequence decodes one token; running prefills continue (chunked), then
     waiting requests are admitted in scheduler order while the token budget, ``max_num_seqs``
     and KV memory allow (nothing is admitted in a step that preempted);
  3. the step lasts ``CostModel.step_time`` of that batch (+ swap transfers); then prefills that
     completed produce their first token and sequences due to finish release their memory.

Decode bookkeeping is event driven: a decode sequence's length is derived from the step counter,
and a calendar (step index -> sequences) says when it next needs memory or finishes, so a step
costs O(sequences crossing a boundary or finishing), not O(running sequences).
"""

from __future__ import annotations

import heapq
import random
from bisect import bisect_left, insort
from collections import deque
from dataclasses import dataclass

from sims.engine.blocks import LRUFree, block_hashes
from sims.engine.config import EngineConfig
from sims.engine.cost import cost_model
from sims.engine.kv import make_allocator
from sims.engine.metrics import EngineStats, Record
from sims.engine.sched import make_scheduler
from sims.engine.seq import DECODE, DONE, PAUSED, PREFILL, REJECTED, SWAPPED, WAITING, Seq

_RECENT_STEPS = 60


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


class Engine:
    """One replica. See the module docstring for the step; ``sims/engine/__init__.py`` for the API."""

    def __init__(self, config: EngineConfig | None = None, rng: random.Random | None = None) -> None:
        self.config = cfg = config or EngineConfig()
        self.cost = cost_model(cfg.gpu, cfg.model, cfg.tp)
        self.max_model_len = cfg.max_model_len or self.cost.max_model_len
        capacity = cfg.kv_tokens or self.cost.kv_tokens(cfg.gpu_memory_utilization)
        if capacity <= 0:
            raise ValueError(f"{cfg.model} leaves no KV memory on {cfg.gpu} (tp={self.cost.tp}): set kv_tokens")
        self.alloc = make_allocator(
            cfg.allocator,
            capacity,
            block_size=cfg.block_size,
            max_model_len=self.max_model_len,
            caching=cfg.prefix_caching,
            eviction=cfg.eviction,
            pow2_of=cfg.pow2_of,
        )
        if self.alloc.capacity < self.max_model_len:
            raise ValueError(
                f"KV capacity {self.alloc.capacity} tokens is below max_model_len "
                f"{self.max_model_len}: lower max_model_len or raise kv_tokens"
            )
        if not cfg.chunked_prefill and cfg.max_num_batched_tokens < self.max_model_len:
            raise ValueError(
                f"chunked_prefill is off, so max_num_batched_tokens ({cfg.max_num_batched_tokens}) "
                f"must be >= max_model_len ({self.max_model_len}) or long prompts never run"
            )
        self.paged = self.alloc.paged
        self.caching = self.paged and cfg.prefix_caching
        self.block_size = cfg.block_size if self.paged else 1
        self.num_blocks = self.alloc.pool.num_blocks if self.paged else self.alloc.capacity
        self._wm = int(cfg.watermark * self.num_blocks) if self.paged else 0
        self.sched = make_scheduler(
            cfg.scheduler,
            rng or random.Random(0),
            aging=cfg.aging,
            predictor_error=cfg.predictor_error,
            mlfq_levels=cfg.mlfq_levels,
            mlfq_quantum=cfg.mlfq_quantum,
            mlfq_prompt_quantum=cfg.mlfq_prompt_quantum,
        )
        self.now = 0.0
        self.step_idx = 0  # steps executed so far = index of the next step
        self._waiting: list[tuple] = []  # heap (key, order, seq): WAITING and PAUSED
        self._swapped: list[tuple] = []  # heap (key, order, seq)
        self._prefilling: list[Seq] = []  # PREFILL, in admission order
        self._decode: dict[int, Seq] = {}  # DECODE, by order, in admission order
        self._running: list[tuple] = []  # sorted (vkey, order, seq): the victim is the last
        self._paused: list[Seq] = []
        self._grow_cal: dict[int, list] = {}  # step -> [(epoch, seq)] crossing a reservation
        self._finish_cal: dict[int, list] = {}  # step -> [(epoch, seq)] producing their last token
        self._demote_cal: dict[int, list] = {}  # step -> [(epoch, seq)] (mlfq)
        self._finishing: list[Seq] = []
        self._popped = -1  # the step whose calendar entries were taken
        self._preempted_now = False
        self._s_dec = 0  # sum of context lengths over DECODE sequences
        self._s_other = 0  # token state of PREFILL (computed) and PAUSED sequences
        self._work = 0  # tokens still to process: prefill (target - computed) + output left
        self._swap_used = 0
        self._orders = 0
        self._admits = 0
        self.submitted = 0
        self.records: list[Record] = []
        self.rejected: list[int] = []
        self.handoffs: list[Handoff] = []
        self.stats = EngineStats()
        self.recent: deque = deque(maxlen=_RECENT_STEPS)  # [t, dur, prefill_tokens, decodes, kv_usage]
        self.preempt_log: deque = deque(maxlen=_RECENT_STEPS)  # [t, rid, its admit order, newest, mode]
        self.step_listener = None
        self.handoff_listener = None
        self._kv_listener = None

    # -- public signals -------------------------------------------------------------------------
    @property
    def kv_listener(self):
        return self._kv_listener

    @kv_listener.setter
    def kv_listener(self, fn) -> None:
        """fn(t, "stored" | "removed", hashes) when full blocks enter or leave the prefix cache."""
        self._kv_listener = fn
        if self.paged:  # a bound method, so a deep copy (checkpoint) reports its own clock
            self.alloc.kv_listener = None if fn is None else self._emit_kv

    def _emit_kv(self, kind: str, hashes: list[int]) -> None:
        self._kv_listener(self.now, kind, hashes)

    @property
    def num_waiting(self) -> int:
        return len(self._waiting) + len(self._swapped)

    @property
    def num_running(self) -> int:
        return len(self._decode) + len(self._prefilling)

    @property
    def outstanding_tokens(self) -> int:
        return self._work

    @property
    def kv_usage(self) -> float:
        return self.alloc.usage()

    def cached_prefix_tokens(self, req: dict) -> int:
        """Prompt tokens of ``req`` a prefix-cache hit here would cover right now."""
        if not self.caching:
            return 0
        n = int(req["prompt_len"])
        hashes = block_hashes(req["segments"], self.block_size, limit=(n - 1) // self.block_size)
        return len(self.alloc.pool.match(hashes)) * self.block_size

    def has_work(self) -> bool:
        return bool(self._waiting or self._swapped or self._prefilling or self._decode)

    def next_time(self) -> float | None:
        return self.now if self.has_work() else None

    # -- driving --------------------------------------------------------------------------------
    def submit(self, req: dict, t: float) -> None:
        """Queue an llm request event (sims/workloads/llm.py) that arrives at ``t``."""
        if not self.has_work() and t > self.now:
            self.now = t
        self.submitted += 1
        prompt = int(req["prompt_len"])
        rid = req["id"]
        room = self.max_model_len - prompt
        out = min(int(req["output_len"]), int(req.get("max_tokens") or room), room)
        if prompt < 1 or out < 1:
            self.rejected.append(rid)
            self.stats.rejected += 1
            return
        self._orders += 1
        session, turn = int(req.get("session", -1)), int(req.get("turn", 0))
        out_cid = f"a{session}.{turn}" if session >= 0 else f"o{rid}"
        pre = req.get("prefilled")
        seq = Seq(
            rid=rid,
            arrival=pre["arrival"] if pre else t,
            prompt_len=prompt,
            output_len=out,
            segments=req.get("segments") or [[f"u{rid}", prompt]],
            out_cid=out_cid,
            order=self._orders,
            tenant=int(req.get("tenant", 0)),
            priority=float(req.get("priority", req.get("tenant", 0))),
            session=session,
            turn=turn,
        )
        seq.final_len = prompt + out
        n = int(req.get("n", 1))
        if n < 1:
            raise ValueError(f"request {rid}: n (parallel samples) must be >= 1, got {n!r}")
        seq.samples = n
        if pre:
            seq.prefilled = True
            seq.generated = 1
            seq.first_token = pre["first_token"]
            seq.cached_tokens = pre.get("cached_tokens", 0)
            seq.preemptions = pre.get("preemptions", 0)
            seq.target = seq.computed = prompt
            self._work += n * out - 1
        else:
            seq.target = prompt
            self._work += prompt + n * out
        self.sched.join(seq)
        seq.key = self.sched.key(seq)
        heapq.heappush(self._waiting, (seq.key, seq.order, seq))

    def advance(self, until: float) -> None:
        """Run every step that starts at or before ``until`` (a step is atomic)."""
        while self.now <= until and (self._waiting or self._swapped or self._prefilling or self._decode):
            self._step()

    # -- one step -------------------------------------------------------------------------------
    def _step(self) -> None:
        cfg = self.config
        s = self.step_idx
        extra = 0.0
        self._preempted_now = False
        self._finishing = finishing = []
        self._popped = s
        grows = self._grow_cal.pop(s, None)
        if grows:
            extra += self._grow(grows, s)
        fins = self._finish_cal.pop(s, None)
        if fins:
            for epoch, seq in fins:
                if epoch == seq.epoch:
                    finishing.append((epoch, seq))
        if self._demote_cal:
            demotes = self._demote_cal.pop(s, None)
            if demotes:
                for epoch, seq in demotes:
                    if epoch == seq.epoch:
                        self._demote(seq, s)
        if self.sched.preemptive and self._waiting:
            self._rebalance()
        budget = cfg.max_num_batched_tokens - len(self._decode)
        chunks: list[tuple] = []
        for seq in self._prefilling:
            if budget <= 0:
                break
            n = seq.target - seq.computed
            if n > budget:
                if not cfg.chunked_prefill:
                    continue
                n = budget
            chunks.append((seq, n))
            budget -= n
        if not self._preempted_now and (self._waiting or self._swapped) and budget > 0:
            if cfg.batching == "continuous" or not (self._decode or self._prefilling):
                extra += self._admit(budget, chunks, s)
        n_d = len(self._decode)
        pt = pairs = kv_read = 0
        for seq, n in chunks:
            c0 = seq.computed
            pt += n
            pairs += n * c0 + n * (n + 1) // 2
            kv_read += c0
        dur = self.cost.step_time(pt, pairs, kv_read, n_d, self._s_dec) + extra
        if dur <= 0.0:
            if self._preempted_now:  # it preempted its only work: an empty step, admit next time
                self.step_idx = s + 1
                self._popped = -1
                return
            raise RuntimeError(f"engine stalled at t={self.now}: work queued but nothing schedulable")
        self._account(dur, n_d, chunks, pt)
        if self.step_listener is not None:
            self.step_listener(self._step_record(dur, chunks, s))
        self.now += dur
        self.step_idx = s + 1
        self._s_dec += n_d
        self._work -= pt + n_d
        for seq, n in chunks:
            seq.computed += n
            self._s_other += n
            if seq.computed >= seq.target:
                self._prefill_done(seq)
            elif self.caching:
                self.alloc.register(seq, seq.computed)
        for epoch, seq in finishing:
            if epoch == seq.epoch:
                self._finish(seq)
        self._popped = -1
        self.recent.append([self.now - dur, dur, pt, n_d, self.alloc.usage()])

    def _account(self, dur: float, n_d: int, chunks: list, pt: int) -> None:
        st = self.stats
        alloc = self.alloc
        st.steps += 1
        st.busy_s += dur
        st.batch_sum += n_d + len(chunks)
        st.tokens_sum += pt + n_d
        st.prefill_tokens += pt
        st.decode_tokens += n_d
        if n_d:
            us = int(dur * 1e6 + 0.5)
            st.itl_us[us] = st.itl_us.get(us, 0) + n_d
        # vLLM Fig. 2's four shares of the whole KV memory; a shared (prefix) block counts once
        state = self._s_dec + self._s_other
        cap = alloc.capacity
        shared = alloc.reserved_sum - alloc.held
        st.kv_total += dur * cap
        st.kv_state += dur * (state - shared)
        st.kv_reserved += dur * (alloc.useful_sum - state)  # its own future tokens will fill these
        st.kv_internal += dur * (alloc.reserved_sum - alloc.useful_sum)  # never filled: past its end
        st.kv_external += dur * (cap - alloc.held)  # free: fragmented, cached or simply unused
        if self._waiting or self._swapped:  # loaded: requests wait for room
            st.kv_loaded_s += dur
            st.kv_loaded_state += dur * (state - shared) / cap

    def _grow(self, grows: list, s: int) -> float:
        """Decode sequences whose next token needs a slot past their reservation."""
        extra = 0.0
        alloc = self.alloc
        grow = alloc.grow
        cal = self._grow_cal
        fast = self.paged and not alloc.kv_listener and type(alloc.pool.free_q) is LRUFree
        if fast:  # paged + LRU: one block per boundary, inlined (the hot path of a busy engine)
            pool = alloc.pool
            od = pool.free_q._q
            ref = pool.ref
            bh = pool.block_hash
            B = alloc.B
        for epoch, seq in grows:
            if epoch != seq.epoch:
                continue
            if fast and od:
                b = od.popitem(last=False)[0]
                if bh[b] is not None:
                    del pool.cached[bh[b]]
                    bh[b] = None
                    pool.evictions += 1
                ref[b] = 1
                seq.blocks.append(b)
                alloc.held += B
                alloc.reserved_sum += B
                r = seq.reserved = seq.reserved + B
                alloc.useful_sum += B if r <= seq.final_len else B + seq.final_len - r
                if r < seq.final_len:
                    step = seq.d0_step + r - seq.prompt_len - seq.d0_gen
                    if step in cal:
                        cal[step].append((epoch, seq))
                    else:
                        cal[step] = [(epoch, seq)]
                continue
            if self.paged and alloc.grow_one(seq):
                if seq.reserved < seq.final_len:
                    step = seq.d0_step + seq.reserved - seq.prompt_len - seq.d0_gen
                    cal.setdefault(step, []).append((epoch, seq))
                continue
            ctx = seq.prompt_len + seq.d0_gen + s - seq.d0_step
            while not grow(seq, ctx + 1):
                victim = self._running[-1][2]
                extra += self._preempt(victim)
                if victim is seq:
                    break
            else:
                if seq.reserved < seq.final_len:
                    step = seq.d0_step + seq.reserved - seq.prompt_len - seq.d0_gen
                    self._grow_cal.setdefault(step, []).append((seq.epoch, seq))
        return extra

    def _admit(self, budget: int, chunks: list, s: int) -> float:
        """Swapped requests first, then waiting ones in scheduler order, while room lasts."""
        cfg = self.config
        alloc = self.alloc
        extra = 0.0
        running = len(self._decode) + len(self._prefilling)
        while self._swapped and running < cfg.max_num_seqs and budget > 0:
            seq = self._swapped[0][2]
            ctx = seq.prompt_len + seq.generated
            if not alloc.admit(seq, ctx, None, self._wm if running else 0):
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
        B = self.block_size
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
                if not alloc.admit(seq, seq.prompt_len + 1, None, self._wm if running else 0):
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
            hashes = seq.full_hashes(B, target // B) if hashing else None
            if not alloc.admit(seq, target, hashes, self._wm if running else 0):
                if self._make_room(seq, running):
                    continue
                break
            heapq.heappop(waiting)
            hit = seq.computed
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

    # -- state transitions ----------------------------------------------------------------------
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

    def _prefill_done(self, seq: Seq) -> None:
        """The prefill (or recompute) finished at the end of this step: one token out."""
        rk = self._running
        self._prefilling.remove(seq)
        self._s_other -= seq.computed
        seq.generated += 1
        self._work -= 1
        self.stats.prefills_done += 1
        if seq.first_token < 0:
            seq.first_token = self.now
        if self.caching:
            self.alloc.register(seq, seq.computed)
        if seq.generated >= seq.output_len:  # a one-token answer (or a recompute that ends here)
            if seq.samples > 1:
                self._fork(seq)
            del rk[bisect_left(rk, (seq.vkey, seq.order))]
            self._complete(seq)
        elif self.config.role == "prefill":
            del rk[bisect_left(rk, (seq.vkey, seq.order))]
            self._handoff(seq)
        else:
            if seq.samples > 1:
                self._fork(seq)
            self._enter_decode(seq, self.step_idx)

    def _fork(self, seq: Seq) -> None:
        """Parallel sampling: n - 1 more samples share the prompt's full blocks (refcounts); the
        block holding each sample's own first token is copied on write. A sample that finds no
        memory for its copy waits to be recomputed (its prompt is then a prefix-cache hit)."""
        n, seq.samples = seq.samples, 1
        seq.group = [n, n, max(0, seq.cached_tokens), 0]  # samples left, n, cached tokens, preemptions
        alloc = self.alloc
        for k in range(1, n):
            self._orders += 1
            child = Seq(
                rid=seq.rid,
                arrival=seq.arrival,
                prompt_len=seq.prompt_len,
                output_len=seq.output_len,
                segments=seq.segments,
                out_cid=f"{seq.out_cid}.s{k}",
                order=self._orders,
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
            child.key = self.sched.key(child)
            child.target = child.computed = seq.computed
            self.stats.prefills_done += 1
            self._work -= 1
            if child.generated >= child.output_len:  # a one-token answer: nothing to decode
                self._complete(child)
                continue
            ok = False
            if alloc.paged:
                full = seq.computed // alloc.B
                fresh = alloc.pool.allocate(len(seq.blocks) - full)
                if fresh is not None:
                    alloc.pool.touch(seq.blocks[:full])
                    child.blocks = seq.blocks[:full] + fresh
                    child.cached_blocks = min(full, seq.cached_blocks)
                    alloc.held = alloc.pool.num_used * alloc.B
                    alloc._set_reserved(child, len(child.blocks) * alloc.B)
                    self.stats.cow_copies += len(fresh)
                    ok = True
            else:  # a contiguous range of its own, with room for its next token
                ok = alloc.admit(child, child.prompt_len + 1, None, 0)
            if ok:
                self._add_running(child)
                self._enter_decode(child, self.step_idx)
            else:
                child.target, child.computed = child.prompt_len + 1, 0
                self._work += child.target
                heapq.heappush(self._waiting, (child.key, child.order, child))

    def _finish(self, seq: Seq) -> None:
        self._drop_running(seq)
        self._complete(seq)

    def _complete(self, seq: Seq) -> None:
        seq.generated = seq.output_len
        # output blocks are worth caching only if a later prompt can contain them (chat turns)
        keep = seq.final_len - 1 if seq.session >= 0 else seq.prompt_len
        self.alloc.release(seq, keep, float(keep))
        seq.state = DONE
        g = seq.group
        if g is not None:  # a request with parallel samples completes with its last sample
            g[0] -= 1
            g[3] += seq.preemptions
            if g[0] == 0:
                self.records.append(
                    Record(
                        seq.rid,
                        seq.arrival,
                        seq.first_token,
                        self.now,
                        seq.prompt_len,
                        seq.output_len * g[1],
                        g[2],
                        g[3],
                        seq.tenant,
                        g[1],
                    )
                )
            return
        self.records.append(
            Record(
                seq.rid,
                seq.arrival,
                seq.first_token,
                self.now,
                seq.prompt_len,
                seq.output_len,
                max(0, seq.cached_tokens),
                seq.preemptions,
                seq.tenant,
            )
        )

    def _handoff(self, seq: Seq) -> None:
        tokens = seq.prompt_len
        self.alloc.release(seq, tokens, float(tokens))
        seq.state = DONE
        self._work -= seq.samples * seq.output_len - seq.generated
        req = {
            "id": seq.rid,
            "prompt_len": seq.prompt_len,
            "output_len": seq.output_len,
            "n": seq.samples,
            "max_tokens": seq.output_len,
            "tenant": seq.tenant,
            "segments": seq.segments,
            "prefilled": {
                "arrival": seq.arrival,
                "first_token": seq.first_token,
                "cached_tokens": max(0, seq.cached_tokens),
                "preemptions": seq.preemptions,
            },
        }
        if seq.session >= 0:
            req["session"], req["turn"] = seq.session, seq.turn
        h = Handoff(self.now, tokens, req)
        self.handoffs.append(h)
        if self.handoff_listener is not None:
            self.handoff_listener(h)

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

    # -- mlfq -----------------------------------------------------------------------------------
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

    # -- reading --------------------------------------------------------------------------------
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


__all__ = ["Engine", "EngineConfig", "Handoff", "StepRecord", "StepSeq"]
