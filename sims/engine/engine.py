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
from collections import deque

from sims.engine.admit import Admission
from sims.engine.config import EngineConfig
from sims.engine.cost import cost_model
from sims.engine.decode import can_run, run_decodes
from sims.engine.kv import make_allocator
from sims.engine.lifecycle import Lifecycle
from sims.engine.metrics import EngineStats, Record
from sims.engine.preempt import Preemption
from sims.engine.reading import Reading
from sims.engine.sched import make_scheduler
from sims.engine.seq import Seq
from sims.engine.steps import Handoff, StepRecord, StepSeq

_RECENT_STEPS = 60


class Engine(Admission, Lifecycle, Preemption, Reading):
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
        self.num_blocks = self.alloc.num_units  # blocks (paged) or token slots (contiguous)
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
        return self.alloc.cached_prefix(req["segments"], n)

    def has_work(self) -> bool:
        return bool(self._waiting or self._swapped or self._prefilling or self._decode)

    def next_time(self) -> float | None:
        return self.now if self.has_work() else None

    # -- driving --------------------------------------------------------------------------------
    def submit(self, req: dict, t: float) -> None:
        """Queue an llm request event (sims/workloads/llm.py) that arrives at ``t``."""
        if t > self.now and not (self._waiting or self._swapped or self._prefilling or self._decode):
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
        tenant = req.get("tenant", 0)
        seq = Seq(  # positional, in field order: rid, arrival, prompt_len, output_len, segments,
            rid,  # out_cid, order, tenant, priority, session, turn
            pre["arrival"] if pre else t,
            prompt,
            out,
            req.get("segments") or [[f"u{rid}", prompt]],
            out_cid,
            self._orders,
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
            if can_run(self):
                run_decodes(self, until)
                if not (self.now <= until and self.has_work()):
                    break
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
        alloc = self.alloc
        self.recent.append([self.now - dur, dur, pt, n_d, alloc.held / alloc.capacity])  # alloc.usage()

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
        alloc = self.alloc
        cal = self._grow_cal
        if alloc.decode_grow(grows, cal, s):  # every crossing fits: grown in one call
            return 0.0
        extra = 0.0
        grow_one = alloc.grow_one
        for epoch, seq in grows:
            if epoch != seq.epoch:
                continue
            if not grow_one(seq):  # memory is short: preempt until it fits (or it is the victim)
                ctx = seq.prompt_len + seq.d0_gen + s - seq.d0_step
                while not alloc.grow(seq, ctx + 1):
                    victim = self._running[-1][2]
                    extra += self._preempt(victim)
                    if victim is seq:
                        break
                if epoch != seq.epoch:
                    continue
            r = seq.reserved
            if r < seq.final_len:
                step = seq.d0_step + r - seq.prompt_len - seq.d0_gen
                if step in cal:
                    cal[step].append((epoch, seq))
                else:
                    cal[step] = [(epoch, seq)]
        return extra


__all__ = ["Engine", "EngineConfig", "Handoff", "StepRecord", "StepSeq"]
