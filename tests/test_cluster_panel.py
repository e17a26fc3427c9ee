"""The cluster panel: every router over real engine replicas, chunked runs equal one-go runs,
seeking restores the KV event wiring, a stale index costs hits, bad input is a ValueError."""

from __future__ import annotations

import json
import math

import pytest

from sims.core import registry, stream
from sims.core.presets import PresetError, parse_preset
from sims.core.scenario import Scenario

DESIGN = (
    "completed ttft_p50 ttft_p90 ttft_p99 tpot_p50 tpot_p99 e2e_p50 e2e_p90 throughput_tok_s "
    "avg_batch_size kv_utilization preemptions prefix_hit_rate"
).split()


def preset(panels, duration=30.0, workload=None, defaults=None, name="x"):
    raw = {
        "name": name,
        "topic": "cluster",
        "title": "t",
        "watch_for": "w",
        "seed": 3,
        "duration": duration,
        "workload": {
            "kind": "shared_prefix",
            "rate": 3.0,
            "groups": 12,
            "prefix_len": 1024,
            "question_len": 256,
            "output_len": 100,
        }
        | (workload or {}),
        "defaults": {"replicas": 3, "kv_tokens": 65536, "max_model_len": 8192} | (defaults or {}),
        "panels": panels,
    }
    return parse_preset(raw, f"{name}.toml")


def test_every_router_runs_over_engines_with_invariants_and_design_metrics():
    names = sorted(registry.policies("cluster"))
    sc = Scenario(preset([{"policy": n} for n in names]))
    for t in (5.0, 12.5, 30.0):
        sc.advance(t)
        sc.check_invariants()
    for name, m in sc.metrics().items():
        assert set(DESIGN) <= set(m), name
        assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in m.values()), name
        assert m["completed"] > 30, (name, m["completed"])
        assert 0.0 <= m["prefix_hit_rate"] <= 1.0
    view = sc.views()["precise_prefix"]
    json.dumps(view)
    assert view["kind"] == "cluster" and len(view["replicas"]) == 3
    assert {"waiting", "running", "kv_usage", "cache_occupancy", "routed"} <= set(view["replicas"][0])
    assert sum(r["routed"] for r in view["replicas"]) == len(sc.events)


def test_browser_sized_chunks_give_exactly_the_one_go_metrics():
    p = preset([{"policy": "precise_prefix"}, {"policy": "approx_prefix"}, {"policy": "p2c"}], duration=20.0)
    whole = Scenario(p).run().metrics()
    sc = Scenario(p)
    t = 0.0
    while t < 20.0:
        t = min(20.0, t + 0.37)
        sc.advance(t)
        sc.metrics()  # reading between frames must not change anything
    assert sc.metrics() == whole


def test_seeking_back_restores_each_copy_its_own_kv_event_bus():
    p = preset([{"policy": "precise_prefix", "event_delay": 0.5}], duration=24.0)
    fresh = Scenario(p).run().metrics()
    sc = Scenario(p, checkpoint_every=5.0)
    sc.advance(24.0)
    sc.seek(7.0)
    sc.advance(24.0)
    assert sc.metrics() == fresh
    sc.check_invariants()


def test_a_stale_kv_index_loses_cache_hits():
    panels = [
        {"policy": "precise_prefix", "name": "fresh", "event_delay": 0.0},
        {"policy": "precise_prefix", "name": "stale", "event_delay": 20.0},
    ]
    m = Scenario(preset(panels, duration=40.0, workload={"rate": 4.0})).run().metrics()
    assert m["stale"]["prefix_hit_rate"] < m["fresh"]["prefix_hit_rate"] - 0.1, m


def test_shared_prefix_workload_cycles_through_every_prompt_once_per_round():
    p = preset([{"policy": "random"}], duration=60.0, workload={"groups": 4, "prompts_per_group": 3})
    evs = stream.build(p, 3, 60.0)
    first, second = evs[:12], evs[12:24]
    prompts = [tuple(tuple(s) for s in e["segments"]) for e in first]
    assert len(set(prompts)) == 12  # one round: every prompt exactly once
    assert [e["segments"] for e in second] == [e["segments"] for e in first]  # the same order again
    for e in first:
        assert e["segments"][0] == [f"g{e['tenant']}", 1024] and e["prompt_len"] == 1280


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"defaults": {"replicas": 0}}, "replicas"),
        ({"defaults": {"gpu": "TPU"}}, "gpu"),
        ({"workload": {"order": "sorted"}}, "order"),
        ({"workload": {"hot_frac": 1.5}}, "hot_frac"),
        ({"panel": {"approx_prefix_typo": 1}}, "approx_prefix_typo"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_field(change, match):
    panel = {"policy": "precise_prefix"} | change.get("panel", {})
    with pytest.raises((ValueError, PresetError), match=match):
        Scenario(preset([panel], duration=5.0, workload=change.get("workload"), defaults=change.get("defaults"))).run()


def test_a_refused_queue_head_is_refused_again_only_while_nothing_was_freed_or_cached(monkeypatch):
    # the linearity fast path: an overloaded replica refuses its queue head every step;
    # a repeat refusal with no block freed or cached since skips the prefix match. Every skipped
    # check must be one that the full check refuses too, and the results must not move.
    from sims.engine.kv import Paged

    shape = {"rate": 6.0, "prefix_len": 2048, "question_len": 512, "output_len": 200}
    p = preset([{"policy": "random"}, {"policy": "precise_prefix"}], 40.0, shape, {"kv_tokens": 16384})
    fast = Scenario(p).run()
    orig = Paged.allocate_slots
    skipped = [0]
    memo: dict[int, tuple] = {}  # what the fast path would remember, per allocator

    def full_check(self, seq, target, hashes, watermark):
        r = memo.get(id(self), ())
        would_skip = bool(r) and r[0] is seq and r[1:] == (target, watermark, not hashes, self.pool.gains)
        self._refused = ()  # always the full check
        got = orig(self, seq, target, hashes, watermark)
        ok = got is not None
        if would_skip:
            assert not ok, "the fast path would have refused an admission the full check allows"
            skipped[0] += 1
        memo[id(self)] = self._refused
        return got

    monkeypatch.setattr(Paged, "allocate_slots", full_check)
    slow = Scenario(p).run()
    assert skipped[0] > 100  # the workload does overload a replica
    assert slow.metrics() == fast.metrics()
