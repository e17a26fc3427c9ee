"""``Engine``: one LLM inference replica, stepped on the virtual clock the way vLLM runs it.

The engine is the step loop. Its state is a ``Batch`` (queues, step calendars, running sums,
``batch.py``); a ``Scheduler`` (``scheduler.py``, ``preempt.py``) decides each step's batch from
the batch, the KV manager (``kv.py``, ``paged.py``), the scheduling policy (``sched.py``) and the
cost model; the loop runs what it decided, advances the clock and keeps the statistics, records
and logs. Each step (atomic; it starts when the previous one ends, or at the next arrival when idle):
  1. ``Scheduler.schedule``: decodes that cross their reservation (paged: a block boundary) grow,
     preempting victims if memory is short; mlfq demotions; running prefills continue (chunked),
     then waiting requests are admitted in policy order while the token budget, ``max_num_seqs``
     and KV memory allow (nothing is admitted in a step that preempted);
  2. every DECODE sequence decodes one token; the step lasts ``CostModel.step_time`` of that batch
     (+ swap transfers);
  3. prefills that completed produce their first token and sequences due to finish release their
     memory.

Decode bookkeeping is event driven: a decode sequence's length is derived from the step counter,
and a calendar (step index -> sequences) says when it next needs memory or finishes, so a step
costs O(sequences crossing a boundary or finishing), not O(running sequences); steps that only
decode run in one tight loop (``decode.py``).
"""

from __future__ import annotations

import random
from collections import deque

from sims.engine.batch import Batch
from sims.engine.config import EngineConfig
from sims.engine.cost import cost_model
from sims.engine.decode import can_run, run_decodes
from sims.engine.kv import make_allocator
from sims.engine.lifecycle import handoff_request, record_of
from sims.engine.metrics import EngineStats, Record
from sims.engine.sched import make_policy
from sims.engine.scheduler import Scheduler
from sims.engine.seq import DONE, Seq
from sims.engine.steps import Forked, Handoff, SchedulerOutput, StepRecord, StepSeq, step_record

_RECENT_STEPS = 60


class Engine:
    """One replica. See the module docstring for the step; ``sims/engine/__init__.py`` for the API."""

    def __init__(self, config: EngineConfig | None = None, rng: random.Random | None = None) -> None:
        self.config = cfg = config or EngineConfig()
        self.cost = cost_model(cfg.gpu, cfg.model, cfg.tp)
        self.max_model_len = cfg.max_model_len or self.cost.max_model_len
        capacity = cfg.kv_tokens or self.cost.kv_tokens(cfg.gpu_memory_utilization)
        if capacity <= 0:
            raise ValueError(f"{self.cost.model} leaves no KV memory on {cfg.gpu} (tp={self.cost.tp}): set kv_tokens")
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
        self.num_blocks = self.alloc.num_units  # blocks (paged) or token slots (contiguous)
        self.policy = make_policy(
            cfg.scheduler,
            rng or random.Random(0),
            aging=cfg.aging,
            predictor_error=cfg.predictor_error,
            mlfq_levels=cfg.mlfq_levels,
            mlfq_quantum=cfg.mlfq_quantum,
            mlfq_prompt_quantum=cfg.mlfq_prompt_quantum,
        )
        self.batch = Batch()
        self.scheduler = Scheduler(self.batch, self.alloc, self.policy, self.cost, cfg)
        self.now = 0.0
        self.step_idx = 0  # steps executed so far = index of the next step
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
        return len(self.batch.waiting) + len(self.batch.swapped)

    @property
    def num_running(self) -> int:
        return len(self.batch.decode) + len(self.batch.prefilling)

    @property
    def outstanding_tokens(self) -> int:
        return self.batch.work

    @property
    def kv_usage(self) -> float:
        return self.alloc.usage()

    def cached_prefix_tokens(self, req: dict) -> int:
        """Prompt tokens of ``req`` a prefix-cache hit here would cover right now."""
        if not self.caching:
            return 0
        n = int(req["prompt_len"])
        return self.alloc.cached_prefix(req["segments"], n)

    def has_work(self) -> bool:
        return self.batch.has_work()

    def next_time(self) -> float | None:
        return self.now if self.batch.has_work() else None

    def generated_of(self, seq: Seq) -> int:
        return self.batch.generated_of(seq, self.step_idx)

    def in_flight(self) -> list[tuple]:
        """``(arrival, first_token, generated)`` of every request submitted here and not yet
        completed or handed off (first_token < 0 while it waits); parallel samples count once."""
        return self.batch.in_flight(self.step_idx)

    def holders(self) -> list[Seq]:
        """Sequences holding KV memory: running, then paused."""
        return self.batch.holders()

    def waiting_seqs(self) -> list[Seq]:
        return self.batch.waiting_seqs()

    def check_invariants(self) -> None:
        b = self.batch
        self.alloc.check_invariants(b.holders())
        b.check_invariants(self.step_idx)
        in_flight = {e[2].rid for e in b.running + b.waiting + b.swapped}
        assert self.submitted == len(self.records) + len(self.rejected) + len(self.handoffs) + len(in_flight), (
            "a request was lost"
        )
        assert self.alloc.held <= self.alloc.capacity

    # -- driving --------------------------------------------------------------------------------
    def submit(self, req: dict, t: float) -> None:
        """Queue an llm request event (sims/workloads/llm.py) that arrives at ``t``."""
        b = self.batch
        if t > self.now and not (b.waiting or b.swapped or b.prefilling or b.decode):
            self.now = t
        self.submitted += 1
        prompt = int(req["prompt_len"])
        room = self.max_model_len - prompt
        out = min(int(req["output_len"]), int(req.get("max_tokens") or room), room)
        if prompt < 1 or out < 1:
            self.rejected.append(req["id"])
            self.stats.rejected += 1
            return
        b.orders += 1
        rid = req["id"]
        session, turn = int(req.get("session", -1)), int(req.get("turn", 0))
        pre = req.get("prefilled")
        tenant = req.get("tenant", 0)
        seq = Seq(  # positional, in field order: rid, arrival, prompt_len, output_len, segments,
            rid,  # out_cid, order, tenant, priority, session, turn
            pre["arrival"] if pre else t,
            prompt,
            out,
            req.get("segments") or ((f"u{rid}", prompt),),
            f"a{session}.{turn}" if session >= 0 else f"o{rid}",  # its output's content id
            b.orders,
            int(tenant),
            float(req.get("priority", tenant)),
            session,
            turn,
        )
        seq.final_len = prompt + out
        n = int(req.get("n", 1))
        if n < 1:
            raise ValueError(f"request {rid}: n (parallel samples) must be >= 1, got {n!r}")
        seq.samples = n
        if pre:  # role=decode: its prompt KV was computed by a prefill replica
            seq.prefilled = True
            seq.generated = 1
            seq.first_token = pre["first_token"]
            seq.cached_tokens = pre.get("cached_tokens", 0)
            seq.preemptions = pre.get("preemptions", 0)
            seq.target = seq.computed = prompt
            b.work += n * out - 1
        else:
            seq.target = prompt
            b.work += prompt + n * out
        self.scheduler.enqueue(seq)

    def advance(self, until: float) -> None:
        """Run every step that starts at or before ``until`` (a step is atomic)."""
        b = self.batch
        while self.now <= until and (b.waiting or b.swapped or b.prefilling or b.decode):
            if can_run(self):
                run_decodes(self, until)
                if not (self.now <= until and b.has_work()):
                    break
            self._step()

    # -- one step -------------------------------------------------------------------------------
    def _step(self) -> None:
        s = self.step_idx
        b = self.batch
        out = self.scheduler.schedule(s)
        if out.preempted or out.paused or out.forked:
            self._apply(out)
        chunks = out.chunks
        n_d = len(b.decode)
        pt = pairs = kv_read = 0
        for seq, n in chunks:
            c0 = seq.computed
            pt += n
            pairs += n * c0 + n * (n + 1) // 2
            kv_read += c0
        dur = self.cost.step_time(pt, pairs, kv_read, n_d, b.s_dec) + out.seconds
        if dur <= 0.0:
            if out.victims:  # it preempted its only work: an empty step, admit next time
                self.step_idx = s + 1
                b.popped = -1
                return
            raise RuntimeError(f"engine stalled at t={self.now}: work queued but nothing schedulable")
        self._account(dur, n_d, chunks, pt)
        if self.step_listener is not None:
            self.step_listener(
                step_record(b, self.alloc.table, self.now, dur, chunks, s, self.block_size, self.num_blocks)
            )
        self.now += dur
        self.step_idx = s + 1
        b.s_dec += n_d
        b.work -= pt + n_d
        for seq, n in chunks:
            seq.computed += n
            b.s_other += n
            if seq.computed >= seq.target:
                self._prefill_done(seq)
            elif self.caching:
                self.alloc.register(seq, seq.computed)
        for epoch, seq in b.finishing:
            if epoch == seq.epoch:
                self._finish(seq)
        b.popped = -1
        alloc = self.alloc
        self.recent.append([self.now - dur, dur, pt, n_d, alloc.held / alloc.capacity])  # alloc.usage()

    def _apply(self, out: SchedulerOutput) -> None:
        """Count and log what the scheduler decided besides the batch itself."""
        st = self.stats
        for p in out.preempted:
            st.preemptions += 1
            st.dropped_tokens += p.dropped
            if p.mode == "paused":
                continue
            if p.admit_order == p.newest:
                st.victims_newest += 1
            if p.mode == "swap":
                st.swaps += 1
                st.swapped_tokens += p.swapped
            self.preempt_log.append([self.now, p.rid, p.admit_order, p.newest, p.mode])
        st.pauses += out.paused
        for f in out.forked:
            self._forked(f)

    def _account(self, dur: float, n_d: int, chunks: list, pt: int) -> None:
        st = self.stats
        alloc = self.alloc
        b = self.batch
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
        state = b.s_dec + b.s_other
        cap = alloc.capacity
        shared = alloc.reserved_sum - alloc.held
        st.kv_total += dur * cap
        st.kv_state += dur * (state - shared)
        st.kv_reserved += dur * (alloc.useful_sum - state)  # its own future tokens will fill these
        st.kv_internal += dur * (alloc.reserved_sum - alloc.useful_sum)  # never filled: past its end
        st.kv_external += dur * (cap - alloc.held)  # free: fragmented, cached or simply unused
        if b.waiting or b.swapped:  # loaded: requests wait for room
            st.kv_loaded_s += dur
            st.kv_loaded_state += dur * (state - shared) / cap

    # -- a request's life after its prefill ---------------------------------------------------------
    def _prefill_done(self, seq: Seq) -> None:
        """The prefill (or recompute) finished at the end of this step: one token out."""
        b = self.batch
        b.prefilling.remove(seq)
        b.s_other -= seq.computed
        seq.generated += 1
        b.work -= 1
        self.stats.prefills_done += 1
        if seq.first_token < 0:
            seq.first_token = self.now
        if self.caching:
            self.alloc.register(seq, seq.computed)
        if seq.generated >= seq.output_len:  # a one-token answer (or a recompute that ends here)
            if seq.samples > 1:
                self._forked(self.scheduler.fork(seq, self.step_idx))
            b.unrank(seq)
            self._complete(seq)
        elif self.config.role == "prefill":
            b.unrank(seq)
            self._handoff(seq)
        else:
            if seq.samples > 1:
                self._forked(self.scheduler.fork(seq, self.step_idx))
            b.enter_decode(seq, self.step_idx)

    def _forked(self, f: Forked) -> None:
        self.stats.prefills_done += f.samples
        self.stats.cow_copies += f.copies
        for child in f.done:
            self._complete(child)

    def _finish(self, seq: Seq) -> None:
        self.batch.drop_running(seq, self.step_idx)
        self._complete(seq)

    def _complete(self, seq: Seq) -> None:
        seq.generated = seq.output_len
        # output blocks are worth caching only if a later prompt can contain them (chat turns)
        keep = seq.final_len - 1 if seq.session >= 0 else seq.prompt_len
        self.alloc.release(seq, keep, float(keep))
        seq.state = DONE
        rec = record_of(seq, self.now)
        if rec is not None:
            self.records.append(rec)

    def _handoff(self, seq: Seq) -> None:
        tokens = seq.prompt_len
        self.alloc.release(seq, tokens, float(tokens))
        seq.state = DONE
        self.batch.work -= seq.samples * seq.output_len - seq.generated
        h = Handoff(self.now, tokens, handoff_request(seq))
        self.handoffs.append(h)
        if self.handoff_listener is not None:
            self.handoff_listener(h)


__all__ = ["Engine", "EngineConfig", "Handoff", "StepRecord", "StepSeq"]
