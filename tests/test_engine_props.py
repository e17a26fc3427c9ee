"""Engine properties under Hypothesis: no request lost, tokens conserved, refcounts >= 0,
free + used = total, no block table pointing at a freed block, the batch's running sums equal a
recount (check_invariants after every call, and in half the examples after every step);
and the event-driven engine against an obvious per-sequence reference where memory never binds."""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims.engine import Engine, EngineConfig
from sims.engine.disagg import Deployment

EXAMPLES = int(os.environ.get("ENGINE_PROP_EXAMPLES", "120"))  # raise it to hunt for rare bugs


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 40))
    shared = draw(st.integers(0, 80))
    reqs = []
    t = 0.0
    for i in range(n):
        t += draw(st.sampled_from([0.0, 0.001, 0.01, 0.05, 0.3]))
        user = draw(st.integers(1, 200))
        segs = ([["sys", shared]] if shared and draw(st.booleans()) else []) + [[f"u{i}", user]]
        prompt = sum(s[1] for s in segs)
        out = draw(st.integers(1, 200))
        r = {
            "t": t,
            "kind": "request",
            "id": i,
            "prompt_len": prompt,
            "output_len": out,
            "max_tokens": draw(st.sampled_from([0, 50, 1000])),
            "tenant": i % 3,
            "segments": segs,
        }
        if draw(st.integers(0, 5)) == 0:
            r["n"] = draw(st.integers(2, 4))  # parallel samples: copy-on-write forks
        reqs.append(r)
    return reqs


@st.composite
def configs(draw):
    seqs = draw(st.integers(1, 12))
    return EngineConfig(
        gpu="H100-80GB",
        model="Llama-3-8B",
        allocator=draw(st.sampled_from(["paged", "paged", "contiguous_max", "contiguous_pow2", "contiguous_oracle"])),
        pow2_of=draw(st.sampled_from(["output", "context"])),
        block_size=draw(st.sampled_from([1, 4, 16])),
        max_num_seqs=seqs,
        max_num_batched_tokens=draw(st.integers(max(seqs, 16), 600)),
        chunked_prefill=draw(st.booleans()),
        scheduler=draw(st.sampled_from(["fcfs", "sjf_oracle", "sjf_predicted", "mlfq", "priority"])),
        predictor_error=draw(st.sampled_from([0.0, 1.0])),
        aging=draw(st.sampled_from([0.0, 10.0])),
        mlfq_quantum=draw(st.sampled_from([1, 8])),
        mlfq_prompt_quantum=draw(st.sampled_from([16, 512])),
        batching=draw(st.sampled_from(["continuous", "continuous", "static"])),
        preemption=draw(st.sampled_from(["recompute", "swap"])),
        swap_tokens=draw(st.sampled_from([0, 300, 1 << 30])),
        prefix_caching=draw(st.booleans()),
        eviction=draw(st.sampled_from(["lru", "cost_aware"])),
        max_model_len=512,
        kv_tokens=draw(st.integers(520, 1600)),
        watermark=draw(st.sampled_from([0.0, 0.01])),
    )


def _expected_out(cfg: EngineConfig, req: dict) -> int:
    room = cfg.max_model_len - req["prompt_len"]
    return min(req["output_len"], req["max_tokens"] or room, room)


class SteppedEngine(Engine):
    """Every step through the general one (no decode runs), the invariants checked after each:
    the batch's queues and running sums, the KV manager, no request lost."""

    def advance(self, until: float) -> None:
        while self.now <= until and self.batch.has_work():
            self._step()
            self.check_invariants()


def _drive(eng, reqs):
    for r in reqs:
        eng.advance(r["t"])
        eng.check_invariants()
        eng.submit(r, r["t"])
        eng.check_invariants()
    guard = 0
    while eng.next_time() is not None:
        eng.advance(eng.next_time() + 1.0)
        eng.check_invariants()
        guard += 1
        assert guard < 100000, "engine does not finish"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), workloads(), st.booleans())
def test_engine_invariants_hold_and_every_request_finishes(cfg, reqs, every_step):
    if cfg.chunked_prefill is False and cfg.max_num_batched_tokens < cfg.max_model_len:
        cfg = EngineConfig(**{**cfg.__dict__, "max_num_batched_tokens": cfg.max_model_len})
    eng = (SteppedEngine if every_step else Engine)(cfg, random.Random(3))
    _drive(eng, reqs)
    done = {r.rid: r for r in eng.records}
    assert len(done) == len(eng.records), "a request completed twice"
    for r in reqs:
        if r["id"] in eng.rejected:
            assert r["prompt_len"] >= cfg.max_model_len
            continue
        assert r["id"] in done, f"request {r['id']} lost"
        rec = done[r["id"]]
        assert rec.output_len == _expected_out(cfg, r) * r.get("n", 1) and rec.samples == r.get("n", 1)
        assert r["t"] <= rec.first_token <= rec.finish
        assert rec.cached_tokens <= max(0, (rec.prompt_len - 1) // cfg.block_size * cfg.block_size)
    s = eng.stats
    assert eng.outstanding_tokens == 0
    # every output token came from a decode step or from the end of a prefill
    assert s.decode_tokens + s.prefills_done == sum(rec.output_len for rec in eng.records)
    if s.preemptions == 0 and not cfg.prefix_caching and not any("n" in r for r in reqs):
        assert s.prefill_tokens == sum(rec.prompt_len for rec in eng.records)
    assert eng.alloc.held == 0 and eng.kv_usage == 0.0
    if eng.paged:
        assert all(r == 0 for r in eng.alloc.pool.ref)


@settings(max_examples=max(10, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), workloads(), st.sampled_from(["colocated", "disaggregated"]))
def test_deployments_lose_nothing(cfg, reqs, mode):
    cfg = EngineConfig(**{**cfg.__dict__, "chunked_prefill": True, "batching": "continuous"})
    dep = Deployment(cfg, mode, 1, 2, 0.0, random.Random(1))
    _drive(dep, reqs)
    accepted = [r for r in reqs if r["prompt_len"] < cfg.max_model_len]
    assert sorted(r.rid for r in dep.records) == sorted(r["id"] for r in accepted)
    for rec in dep.records:
        assert rec.arrival <= rec.first_token <= rec.finish


class ReferenceEngine:
    """Continuous batching the slow, obvious way: every step touches every sequence. Valid when
    memory, max_num_seqs and the token budget never bind (FCFS, whole prompts)."""

    def __init__(self, cost) -> None:
        self.cost = cost
        self.now = 0.0
        self.waiting: list[dict] = []
        self.running: list[list] = []  # [request, context, generated]
        self.done: dict = {}

    def submit(self, r: dict, t: float) -> None:
        if not self.waiting and not self.running and t > self.now:
            self.now = t
        self.waiting.append(r)

    def advance(self, until: float) -> None:
        while self.now <= until and (self.waiting or self.running):
            new, self.waiting = self.waiting, []
            n_d = len(self.running)
            ctx_sum = sum(x[1] for x in self.running)
            pt = sum(r["prompt_len"] for r in new)
            pairs = sum(r["prompt_len"] * (r["prompt_len"] + 1) // 2 for r in new)
            self.now += self.cost.step_time(pt, pairs, 0, n_d, ctx_sum)
            still = []
            for x in self.running:
                x[1] += 1
                x[2] += 1
                if x[2] == x[0]["output_len"]:
                    self.done[x[0]["id"]][1] = self.now
                else:
                    still.append(x)
            for r in new:
                self.done[r["id"]] = [self.now, self.now]
                if r["output_len"] > 1:
                    still.append([r, r["prompt_len"] + 1, 1])
            self.running = still

    def next_time(self):
        return self.now if (self.waiting or self.running) else None


@settings(max_examples=max(10, EXAMPLES // 4), deadline=None)
@given(workloads())
def test_event_driven_engine_matches_the_obvious_reference(reqs):
    reqs = [dict(r, max_tokens=0, n=1) for r in reqs]
    cfg = EngineConfig(
        gpu="H100-80GB",
        model="Llama-3-8B",
        max_num_seqs=256,
        max_num_batched_tokens=65536,
        max_model_len=1024,
        kv_tokens=200_000,
        prefix_caching=False,
        watermark=0.0,
    )
    eng = Engine(cfg)
    ref = ReferenceEngine(eng.cost)
    _drive(eng, reqs)
    _drive_plain(ref, reqs)
    got = {r.rid: [r.first_token, r.finish] for r in eng.records}
    assert got == ref.done


def _drive_plain(drv, reqs):
    for r in reqs:
        drv.advance(r["t"])
        drv.submit(r, r["t"])
    while drv.next_time() is not None:
        drv.advance(drv.next_time() + 1.0)
