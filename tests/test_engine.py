"""Engine unit tests: block hashes, cost model, allocators, prefix cache, preemption, scheduling,
listeners, panels and the public API other topics use."""

from __future__ import annotations

import json
import random

import pytest

from sims.core.panel import PanelContext
from sims.engine import Engine, EngineConfig, block_hashes, summarize
from sims.engine.blocks import BlockPool
from sims.engine.cost import cost_model, gpu_names, model_names
from sims.engine.panel import resolve

SMALL = dict(gpu="H100-80GB", model="Llama-3-8B", max_model_len=1024)


def req(i, prompt, out, t=0.0, segs=None, **kw):
    segs = segs or [[f"u{i}", prompt]]
    return {
        "t": t,
        "kind": "request",
        "id": i,
        "prompt_len": sum(s[1] for s in segs),
        "output_len": out,
        "max_tokens": 0,
        "tenant": 0,
        "segments": segs,
        **kw,
    }


def run_all(eng, reqs):
    for r in reqs:
        eng.advance(r["t"])
        eng.submit(r, r["t"])
    while eng.next_time() is not None:
        eng.advance(eng.next_time() + 10.0)
    eng.check_invariants()
    return {r.rid: r for r in eng.records}


# -- block hashes ---------------------------------------------------------------------------------
def test_block_hashes_share_exactly_the_common_full_blocks():
    a = block_hashes([["sys", 100], ["u1", 50]], 16)
    b = block_hashes([["sys", 100], ["u2", 50]], 16)
    assert len(a) == len(b) == 150 // 16
    assert a[:6] == b[:6] and a[6] != b[6]  # 6 full blocks of "sys"; block 6 mixes sys and user
    assert block_hashes([["x", 15]], 16) == []  # a partial block has no hash
    assert block_hashes([["sys", 100]], 16, limit=3) == a[:3]
    # the same block content after a different prefix is a different block
    assert block_hashes([["p", 16], ["x", 16]], 16)[1] != block_hashes([["q", 16], ["x", 16]], 16)[1]
    assert all(0 <= h < 2**64 for h in a)
    assert block_hashes([["sys", 32]], 16) == block_hashes([["sys", 32]], 16)  # stable


def test_block_hashes_are_pinned_across_runtimes():
    # integers only: the same value in every process and in Pyodide
    assert block_hashes([["sys0", 16]], 16) == [block_hashes([["sys0", 16]], 16)[0]]
    assert block_hashes([["x", 16]], 16) == [802966580241292925]


# -- cost model (sims/hw: tests/test_hw.py tests the model itself) -------------------------------
def test_the_engine_prices_steps_with_contention_steps_function():
    assert set(gpu_names()) >= {"A100-40GB", "A100-80GB", "H100-80GB", "H200", "A40", "L40S", "B200", "MI300X"}
    assert set(model_names()) >= {"OPT-13B", "Llama-3-8B", "Llama-3-70B", "Qwen3-32B"}
    assert cost_model("A100-40GB", "Llama-3-70B").tp == 4 and cost_model("H200", "Qwen3-32B").tp == 2
    c = cost_model("H100-80GB", "Qwen3-32B")
    assert c.step_time.__self__ is c.step and c.step_time.__func__ is type(c.step).step_time  # one code path
    rng = random.Random(3)
    for _ in range(200):
        pt, n_d = rng.choice((0, rng.randrange(1, 4096))), rng.randrange(0, 256)
        kv = rng.randrange(0, 8000) if pt else 0
        args = (pt, pt * kv + pt * (pt + 1) // 2, kv, n_d, n_d * rng.randrange(0, 4000))
        assert c.step.parts(*args).seconds == c.step_time(*args)  # bit for bit
    opt = cost_model("A100-40GB", "OPT-13B")
    assert 15_000 < opt.kv_tokens(0.9) < 16_500  # vLLM: ~15.7K slots
    with pytest.raises(ValueError, match="unknown gpu 'V100'.*A100-40GB"):
        cost_model("V100", "OPT-13B")


def test_decode_steps_grow_with_batch_and_context_and_prefill_with_tokens():
    c = cost_model("H100-80GB", "Llama-3-8B")
    one = c.step_time(0, 0, 0, 1, 1000)
    assert one < c.step_time(0, 0, 0, 32, 32 * 1000) < c.step_time(0, 0, 0, 128, 128 * 1000) < 4 * one
    assert c.step_time(0, 0, 0, 32, 32 * 1000) < c.step_time(0, 0, 0, 32, 32 * 4000)  # more KV to read
    t1 = c.step_time(4096, 4096 * 4097 // 2, 0, 0, 0)
    assert t1 > 5 * one  # a 4k prefill is compute bound
    assert c.step_time(8192, 8192 * 8193 // 2, 0, 0, 0) > 1.9 * t1


def test_tensor_parallel_steps_pay_two_all_reduces_per_layer_and_one_more():
    one = cost_model("H100-80GB", "Qwen3-32B", tp=1)
    two = cost_model("H100-80GB", "Qwen3-32B")
    assert one.allreduce_s(64) == 0.0 and two.tp == 2
    per = two.step.allreduce.seconds(64 * 5120 * 2, 2)
    assert two.allreduce_s(64) == pytest.approx((2 * 64 + 1) * per)  # 64 layers and the embedding
    assert cost_model("H100-80GB", "Llama-3-70B").allreduce_s(64) > two.allreduce_s(64)  # 80 layers, tp 4
    assert two.allreduce_s(4096) > 4 * two.allreduce_s(16)  # the bandwidth term grows with the tokens


def test_step_overhead_is_per_gpu_and_small_beside_a_decode_step():
    for gpu in ("H100-80GB", "H200", "A100-80GB"):
        c = cost_model(gpu, "Llama-3-8B")
        assert c.step.host_s < 0.25 * c.step_time(0, 0, 0, 1, 1024)
    assert cost_model("H100-80GB", "Llama-3-8B").step.host_s < cost_model("A100-80GB", "Llama-3-8B").step.host_s


def test_chunked_prefill_pays_weights_earlier_kv_and_overhead_per_chunk():
    c = cost_model("H100-80GB", "Llama-3-8B")
    n = 6000

    def chunked(size):
        total, done = 0.0, 0
        while done < n:
            k = min(size, n - done)
            total += c.step_time(k, k * done + k * (k + 1) // 2, done, 0, 0)
            done += k
        return total

    whole = chunked(n)
    assert whole < chunked(2048) < chunked(512) < chunked(128)
    assert chunked(2048) - whole >= 2 * c.step.host_s  # three steps, three overheads
    # small chunks are memory bound: each one reads the weights again
    assert chunked(128) >= (n // 128) * c.weight_bytes / c.step.gpu.hbm_bytes_s
    assert chunked(128) > 1.5 * whole


# -- allocators -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "alloc,reserved",
    [("contiguous_max", 1024), ("contiguous_oracle", 150), ("contiguous_pow2", 100 + 64), ("paged", 112)],
)
def test_allocators_reserve_what_their_rule_says(alloc, reserved):
    eng = Engine(EngineConfig(allocator=alloc, kv_tokens=4096, **SMALL))
    eng.submit(req(0, 100, 50), 0.0)
    eng.advance(0.0)  # one step: the prefill
    (seq,) = eng.holders()
    assert seq.reserved == reserved  # paged: blocks for prompt + 1 token = 7 x 16
    eng.check_invariants()


def test_paged_memory_grows_a_block_at_a_time_and_is_returned():
    eng = Engine(EngineConfig(kv_tokens=4096, **SMALL))
    tables = []
    eng.step_listener = lambda rec: tables.append([s.block_table for s in rec.seqs])
    done = run_all(eng, [req(0, 20, 40)])
    assert done[0].output_len == 40
    lens = [len(t[0]) for t in tables]
    assert lens == sorted(lens) and lens[0] == 2 and lens[-1] == 4  # 21 -> 60 tokens: 2 -> 4 blocks
    assert eng.alloc.pool.num_free == eng.alloc.pool.num_blocks


def test_contiguous_first_fit_leaves_external_fragmentation():
    eng = Engine(EngineConfig(allocator="contiguous_oracle", kv_tokens=1100, max_num_seqs=8, **SMALL))
    for r in (req(0, 100, 300), req(1, 100, 100), req(2, 100, 300), req(3, 100, 150, t=0.001)):
        eng.submit(r, r["t"])  # A at 0..400, B at 400..600, C at 600..1000; D needs 250
    while not eng.records:
        eng.advance(eng.now)
    assert [r.rid for r in eng.records] == [1]
    # 300 slots free but the largest hole is 200: D waits behind external fragmentation
    assert eng.alloc.capacity - eng.alloc.held == 300 and eng.alloc.external() == 100
    assert eng.num_waiting == 1
    eng.check_invariants()


# -- prefix cache ---------------------------------------------------------------------------------
def test_prefix_hit_is_at_most_floor_n_minus_1_over_b_blocks():
    eng = Engine(EngineConfig(kv_tokens=4096, **SMALL))
    run_all(eng, [req(0, 0, 5, segs=[["doc", 64]])])
    assert eng.cached_prefix_tokens(req(9, 0, 1, segs=[["doc", 64]])) == 48  # floor(63/16)*16
    done = run_all(eng, [req(1, 0, 5, t=eng.now, segs=[["doc", 64]])])
    assert done[1].cached_tokens == 48
    done = run_all(eng, [req(2, 0, 5, t=eng.now, segs=[["doc", 70], ["q", 30]])])
    assert done[2].cached_tokens == 64  # the 4 full "doc" blocks; block 4 mixes doc and q
    s = summarize(eng.records, eng.now, eng.stats)
    assert s["prefix_hit_rate"] == pytest.approx((48 + 64) / (64 + 64 + 100))


def test_requests_with_a_common_system_prompt_share_blocks():
    eng = Engine(EngineConfig(kv_tokens=8192, **SMALL))
    sys_ = [["sys", 160]]
    eng.submit(req(0, 0, 200, segs=sys_ + [["u0", 10]]), 0.0)
    eng.advance(0.5)
    eng.submit(req(1, 0, 200, t=0.5, segs=sys_ + [["u1", 10]]), 0.5)
    eng.advance(0.6)
    a, b = eng.holders()
    assert a.blocks[:10] == b.blocks[:10] and a.blocks[10] != b.blocks[10]
    assert all(eng.alloc.pool.ref[x] == 2 for x in a.blocks[:10])
    eng.check_invariants()


def test_lru_free_queue_evicts_tail_blocks_first():
    pool = BlockPool(8)
    blocks = pool.allocate(4)
    for i, b in enumerate(blocks):
        pool.cache(b, 1000 + i)
    pool.free(blocks)
    fresh = pool.allocate(5)  # 4 never-used blocks first, then the freed request's tail
    assert fresh[4] == blocks[3] and 1003 not in pool.cached and 1000 in pool.cached
    pool.check_invariants()


def test_cost_aware_eviction_keeps_the_expensive_prefix():
    lru, cost = BlockPool(4, "lru"), BlockPool(4, "cost_aware")
    for pool in (lru, cost):
        long_, short = pool.allocate(2), pool.allocate(2)
        for i, b in enumerate(long_ + short):
            pool.cache(b, 10 + i)
        pool.free(long_, cost=4000.0)  # freed first: LRU evicts it first
        pool.free(short, cost=20.0)
        pool.allocate(2)
        pool.check_invariants()
    assert 10 not in lru.cached and 12 in lru.cached
    assert 10 in cost.cached and 11 in cost.cached and 12 not in cost.cached


def test_kv_listener_reports_stored_and_removed_hashes():
    eng = Engine(EngineConfig(kv_tokens=1024, block_size=16, max_num_seqs=4, **SMALL))
    events = []
    eng.kv_listener = lambda t, kind, hashes: events.append((kind, len(hashes)))
    run_all(eng, [req(i, 0, 10, t=0.1 * i, segs=[[f"doc{i}", 320]]) for i in range(6)])
    kinds = {k for k, _ in events}
    assert kinds == {"stored", "removed"}  # 6 x 20 blocks cannot all stay cached in 64 blocks


# -- preemption -----------------------------------------------------------------------------------
def _pressure(preemption="recompute", **kw):
    cfg = EngineConfig(
        kv_tokens=1024, max_num_seqs=16, watermark=0.0, preemption=preemption, prefix_caching=False, **SMALL, **kw
    )
    return Engine(cfg), [req(i, 100, 400, t=0.001 * i) for i in range(8)]


def test_recompute_preempts_the_newest_and_admits_nothing_that_step():
    eng, reqs = _pressure()
    steps = {"preempt": set(), "admit": set()}
    sch = eng.scheduler
    orig_preempt, orig_admit = sch.preempt, sch.admit
    victims = []

    def preempt(victim, s, out):
        steps["preempt"].add(s)
        seconds = orig_preempt(victim, s, out)
        victims.append((victim.computed, victim.target, victim.prompt_len + victim.generated))
        return seconds

    def admit(budget, s, out):
        before = eng.num_running
        seconds = orig_admit(budget, s, out)
        if eng.num_running > before:
            steps["admit"].add(s)
        return seconds

    sch.preempt, sch.admit = preempt, admit
    done = run_all(eng, reqs)
    assert len(done) == 8 and eng.stats.preemptions == len(victims) > 0
    assert not steps["preempt"] & steps["admit"]
    assert all(c == 0 and t == n for c, t, n in victims)  # progress resets: prompt + output so far


def test_fcfs_victims_are_the_latest_admitted_as_seen_from_the_step_records():
    """An outside model: admissions and preemptions read only from the executed steps' batches
    (who appears, who vanishes without finishing), not from the engine's own keys or counters."""
    eng, _ = _pressure()
    reqs = [req(i, 100, 300, t=0.5 * i) for i in range(16)]
    batches = []
    eng.step_listener = lambda rec: batches.append((rec.t_start, [q.rid for q in rec.seqs]))
    done = run_all(eng, reqs)
    finish_at = {r.finish: r.rid for r in done.values()}
    admitted = {}  # rid -> (step, position) of its latest admission
    running: set = set()
    victims = []
    for k, (t, rids) in enumerate(batches):
        running.discard(finish_at.get(t))
        gone = running - set(rids)  # vanished without finishing: preempted before this step ran
        for _ in gone:  # victims go newest first
            newest = max(running, key=admitted.__getitem__)
            victims.append(newest)
            running.discard(newest)
        assert running <= set(rids), "a request vanished that was not the newest admitted"
        for pos, rid in enumerate(rids):
            if rid not in running:
                admitted[rid] = (k, pos)
                running.add(rid)
    m = summarize(eng.records, eng.now, eng.stats)
    assert len(victims) == m["preemptions"] > 3
    assert m["victim_newest_frac"] == 1.0


def test_swap_moves_kv_to_host_instead_of_recomputing():
    eng, reqs = _pressure("swap")
    run_all(eng, reqs)
    s = eng.stats
    assert s.swaps == s.preemptions > 0 and s.dropped_tokens == 0 and s.swapped_tokens > 0
    rec, reqs2 = _pressure("recompute")
    run_all(rec, reqs2)
    assert rec.stats.dropped_tokens > 0
    assert rec.stats.prefill_tokens > eng.stats.prefill_tokens  # recompute prefills again


# -- batching and scheduling ----------------------------------------------------------------------
def test_static_batching_waits_for_the_whole_cohort():
    reqs = [req(0, 50, 500), req(1, 50, 5, t=0.01)]
    static = run_all(Engine(EngineConfig(batching="static", **SMALL)), reqs)
    cont = run_all(Engine(EngineConfig(batching="continuous", **SMALL)), reqs)
    assert static[1].first_token >= static[0].finish
    assert cont[1].finish < cont[0].finish


def test_token_budget_chunks_long_prompts():
    eng = Engine(EngineConfig(max_num_batched_tokens=256, max_num_seqs=4, **SMALL))
    chunks = []
    eng.step_listener = lambda rec: chunks.extend(s.new_tokens for s in rec.seqs if s.rid == 0)
    run_all(eng, [req(0, 1000, 3)])
    assert chunks[:4] == [256, 256, 256, 232] and chunks[4:] == [1, 1]


def test_sjf_oracle_orders_the_queue_by_output_length():
    reqs = [req(0, 10, 300)] + [req(i, 10, 300 - 50 * i, t=0.001) for i in range(1, 5)]
    eng = Engine(EngineConfig(scheduler="sjf_oracle", max_num_seqs=1, max_num_batched_tokens=64, **SMALL))
    done = run_all(eng, reqs)
    order = sorted(done, key=lambda i: done[i].first_token)
    assert order == [0, 4, 3, 2, 1]


def test_mlfq_pauses_a_long_request_for_new_short_ones():
    reqs = [req(0, 10, 400)] + [req(i, 10, 8, t=0.5) for i in range(1, 4)]
    fcfs = run_all(Engine(EngineConfig(max_num_seqs=1, max_num_batched_tokens=64, **SMALL)), reqs)
    eng = Engine(EngineConfig(scheduler="mlfq", max_num_seqs=1, max_num_batched_tokens=64, **SMALL))
    mlfq = run_all(eng, reqs)
    assert eng.stats.pauses > 0
    assert all(mlfq[i].finish < fcfs[i].finish for i in (1, 2, 3))
    assert mlfq[0].finish > fcfs[0].finish


def test_sjf_predicted_uses_the_engine_rng_and_priority_ages():
    reqs = [req(i, 10, 20 + 10 * i, t=0.001 * i) for i in range(10)]
    a = run_all(
        Engine(
            EngineConfig(
                scheduler="sjf_predicted", predictor_error=1.5, max_num_seqs=1, max_num_batched_tokens=64, **SMALL
            ),
            random.Random(1),
        ),
        reqs,
    )
    b = run_all(
        Engine(
            EngineConfig(
                scheduler="sjf_predicted", predictor_error=1.5, max_num_seqs=1, max_num_batched_tokens=64, **SMALL
            ),
            random.Random(1),
        ),
        reqs,
    )
    assert [a[i].finish for i in range(10)] == [b[i].finish for i in range(10)]
    hi = [req(i, 10, 50, t=0.01 * (i - 1), priority=0) for i in range(1, 40)]
    lo = [req(0, 10, 50, t=0.005, priority=5)]
    kw = dict(scheduler="priority", max_num_seqs=1, max_num_batched_tokens=64, **SMALL)
    stream = sorted(lo + hi, key=lambda r: r["t"])
    starved = run_all(Engine(EngineConfig(**kw)), stream)
    aged = run_all(Engine(EngineConfig(aging=20.0, **kw)), stream)
    assert starved[0].finish > max(starved[i].finish for i in range(1, 40)) - 1e-9
    assert aged[0].finish < starved[0].finish


# -- API, panels, views ---------------------------------------------------------------------------
def test_submit_advance_and_load_signals():
    eng = Engine(EngineConfig(**SMALL))
    assert eng.next_time() is None and eng.num_waiting == 0
    eng.submit(req(0, 100, 10, t=2.0), 2.0)
    assert eng.now == 2.0 and eng.next_time() == 2.0 and eng.num_waiting == 1
    assert eng.outstanding_tokens == 110
    eng.advance(2.0)  # exactly one step starts at 2.0
    assert eng.num_running == 1 and eng.now > 2.0 and eng.kv_usage > 0
    assert eng.outstanding_tokens == 9
    eng.submit(req(1, 5000, 10, t=eng.now), eng.now)  # longer than max_model_len: rejected
    assert eng.rejected == [1]


def test_step_records_carry_block_tables_and_context():
    eng = Engine(EngineConfig(**SMALL))
    recs = []
    eng.step_listener = recs.append
    run_all(eng, [req(0, 40, 3)])
    assert [(s.new_tokens, s.context) for r in recs for s in r.seqs] == [(40, 40), (1, 42), (1, 43)]
    assert all(len(s.block_table) * 16 >= s.context for r in recs for s in r.seqs)
    assert recs[1].t_start == pytest.approx(recs[0].t_start + recs[0].duration)


def _ctx(preset=None):
    return PanelContext(seed=1, duration=10.0, events=[], panel_name="p", preset=preset)


def test_panel_policy_and_params_compose_and_conflicts_are_errors():
    cfg, dep = resolve("mlfq", {"allocator": "paged", "scheduler": "", "deployment": ""})
    assert cfg.scheduler == "mlfq" and cfg.allocator == "paged" and dep == ""
    with pytest.raises(ValueError, match="sets scheduler='mlfq' but the params say 'fcfs'"):
        resolve("mlfq", {"scheduler": "fcfs"})
    with pytest.raises(ValueError, match="allocator: unknown value 'buddy'"):
        resolve("engine", {"allocator": "buddy"})
    with pytest.raises(ValueError, match="must be >= max_num_seqs"):
        EngineConfig(max_num_seqs=512, max_num_batched_tokens=256)


def test_panel_metrics_equal_summarize_and_view_is_bounded_json():
    from sims.core.scenario import Scenario

    sc = Scenario("kv-fragmentation", duration=60.0)
    sc.run()
    for p in sc.panels.values():
        m = p.metrics()
        s = summarize(p.engine.records, 60.0, p.engine.stats, p.engine.in_flight())
        assert {k: m[k] for k in s} == s
        view = p.view()
        text = json.dumps(view)
        assert len(view["memory"]["cells"]) <= 512 and len(view["running"]) <= 24 and len(text) < 200_000
        p.check_invariants()


def test_disaggregated_panel_hands_kv_over():
    from sims.core.scenario import Scenario

    sc = Scenario("disaggregation", duration=20.0)
    sc.run()
    m = sc.metrics()
    assert m["disaggregated"]["kv_transfer_s"] > 0 and m["colocated"]["kv_transfer_s"] == 0
    assert m["disaggregated"]["completed"] > 0
    assert sc.views()["disaggregated"]["kind"] == "deployment"
    sc.check_invariants()


def test_parallel_samples_share_the_prompt_and_copy_the_last_block_on_write():
    eng = Engine(EngineConfig(kv_tokens=4096, **SMALL))
    eng.submit(req(0, 100, 50, n=3), 0.0)
    eng.advance(0.0)  # the prefill; three samples fork at its end
    a, b, c = eng.holders()
    assert a.blocks[:6] == b.blocks[:6] == c.blocks[:6]  # 6 full prompt blocks, shared
    assert len({a.blocks[6], b.blocks[6], c.blocks[6]}) == 3  # block 6 holds each sample's own token
    assert all(eng.alloc.pool.ref[x] == 3 for x in a.blocks[:6])
    assert eng.stats.cow_copies == 2
    eng.check_invariants()
    done = run_all(eng, [])
    assert done[0].output_len == 150 and done[0].samples == 3
    m = summarize(eng.records, eng.now, eng.stats)
    assert m["completed"] == 1 and 0 < m["tpot_p50"] < 0.05


@pytest.mark.parametrize("name", ["disaggregation", "scheduling-sjf"])
def test_seeking_back_through_checkpoints_replays_exactly(name):
    from sims.core.scenario import Scenario

    straight = Scenario(name, duration=12.0).run().metrics()
    sc = Scenario(name, duration=12.0, checkpoint_every=3.0)
    sc.advance(10.0)
    sc.seek(4.5)  # restores the checkpoint at 3.0 and replays
    sc.advance(12.0)
    assert sc.metrics() == straight
    sc.check_invariants()
