"""The LLM engine: one inference replica simulated the way vLLM runs it.

Public API (other topics build on it; keep it stable):

``block_hashes(segments, block_size) -> list[int]`` (sims.engine.blocks)
    A chained stable 64-bit hash per FULL block of a prompt given as ``[[content_id, tokens], ...]``;
    hash_i depends on hash_{i-1} and the (content_id, start, end) pieces of block i. Prompts that
    share their first k full blocks of content share their first k hashes.

``cost.cost_model(gpu, model, tp=0) -> CostModel`` (sims.engine.cost, over sims.hw)
    One replica's step time (``step_time``, the step-time model ``contention step`` prints in
    parts), KV token slots and transfer times. ``gpu``: a GPU of sims/hw/gpus.toml (A100-40GB
    A100-80GB H100-80GB H200 A40 L40S B200 MI300X); ``model``: a shipped name (sims/hw/models/), a
    path to a Hugging Face config.json, or a table of its fields; ``tp`` 0 = the model's default.

``Engine(config: EngineConfig, rng: random.Random | None = None)`` (sims.engine.engine)
    One replica, independent of any panel. ``EngineConfig`` is a frozen dataclass (gpu, model,
    allocator, block_size=16, max_num_seqs, max_num_batched_tokens, chunked_prefill, scheduler,
    preemption, prefix_caching, eviction, max_model_len, kv_tokens, gpu_memory_utilization, role...).
    - ``submit(req: dict, t: float)``: an llm request event (sims/workloads/llm.py) arriving at t;
    - ``advance(until: float)``: runs every step that starts at or before ``until`` (atomic steps);
    - ``next_time() -> float | None`` (start of the next step, None when idle); ``now``;
    - load signals: ``num_waiting``, ``num_running``, ``outstanding_tokens``, ``kv_usage`` (0..1),
      ``cached_prefix_tokens(req) -> int``;
    - ``kv_listener``: ``fn(t, "stored" | "removed", hashes: list[int])`` as full blocks enter or
      leave the prefix cache; ``step_listener``: ``fn(StepRecord)`` once per executed step
      (t_start, duration, block_size, num_blocks, seqs: StepSeq(rid, new_tokens, context,
      block_table));
    - ``records``: completed requests (``metrics.Record``: rid, arrival, first_token, finish,
      prompt_len, output_len, cached_tokens, preemptions, tenant, samples); ``stats``:
      ``metrics.EngineStats`` (sums over steps; ``merge`` across replicas); ``rejected``: ids of
      requests refused at submit (the prompt does not fit max_model_len); ``in_flight()``: the
      ``(arrival, first_token, generated)`` of every request still here (first_token < 0: waiting).
    ``Deployment`` (sims.engine.disagg) drives several engines (colocated, or disaggregated
    prefill/decode pools with a KV transfer) through the same submit/advance/records/stats.

``summarize(records, elapsed, stats, pending=(), now=None) -> dict`` (sims.engine.metrics)
    The DESIGN engine metrics over one or many replicas, counting every arrival: ``pending`` (e.g.
    ``metrics.in_flight(engines)``) are the requests in flight at ``now``, which count with their
    age (censored, flagged ``<metric>_censored``): completed ttft_p50 ttft_p90 ttft_p99 tpot_p50
    tpot_p99 e2e_p50 e2e_p90 throughput_tok_s avg_batch_size kv_utilization preemptions
    prefix_hit_rate unfinished oldest_wait (plus extras: means, maxima, ``_completed`` figures,
    the KV memory breakdown).

``config.knobs(names, **defaults) -> dict[str, Param]``
    ``EngineConfig``'s fields as panel params (one table for the engine and cluster topics).

Modules: ``engine`` (the step loop: runs what the scheduler decided, advances the clock, keeps
statistics and records), ``batch`` (``Batch``: queues, step calendars and running sums in one
record, with ``check_invariants``), ``scheduler`` (``Scheduler.schedule``: growth, demotions,
pauses, prefill chunks and admission, returning a ``SchedulerOutput``), ``preempt`` (recompute,
swap, pause, resume), ``sched`` (the scheduling policies, which only decide), ``decode`` (decode-only
steps in one tight loop), ``lifecycle`` (a completed request's record, a handoff), ``steps`` (the
records crossing these boundaries), ``kv`` / ``paged`` / ``allocator`` (the allocators: the only
code touching blocks; ``paged`` hashes a prefix only once it can be shared), ``blocks`` (block
pool, hashes), ``freequeue`` (the LRU and cost-aware free queues), ``config`` (the knobs and
``AXES``), ``cost``, ``metrics``.

Panels (topic ``engine``): every choice of every axis in ``config.AXES`` (allocator, scheduler,
batching, preemption, prefix-cache eviction, deployment) is a registered policy that fixes that
axis, and the panel params set the rest (docs/engine.md lists them); ``engine`` sets params only.
"""

from __future__ import annotations

from sims.engine.blocks import block_hashes
from sims.engine.config import EngineConfig
from sims.engine.engine import Engine
from sims.engine.metrics import EngineStats, Record, summarize

__all__ = ["Engine", "EngineConfig", "EngineStats", "Record", "block_hashes", "summarize"]

from sims.engine import panel as _panel  # noqa: E402,F401  (registers topic "engine")
