"""Each routing preset shows what its title claims, asserted with numbers (docs/cluster.md sets
them beside llm-d's). The runs are shared per module: routing-llmd is the long one (~35 s)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sims.core import api, presets
from sims.core.presets import PanelSpec
from sims.core.scenario import Scenario

pytestmark = pytest.mark.timeout(300)

_RUNS: dict[str, dict] = {}


def run(name: str) -> dict:
    if name not in _RUNS:
        _RUNS[name] = api.run(name)["panels"]
    return _RUNS[name]


@pytest.mark.slow  # the full llm-d benchmark run
def test_routing_llmd_reproduces_the_published_ordering():
    m = run("routing-llmd")
    p90 = {k: v["ttft_p90"] for k, v in m.items()}
    tput = {k: v["throughput_tok_s"] for k, v in m.items()}
    # llm-d: P90 TTFT 0.54 / 31 / 92.6 / 94.9 s (precise / approximate / random / load-only)
    assert 0.05 < p90["precise_prefix"] < 3 * 0.54, p90
    assert p90["approx_prefix"] > 20 * p90["precise_prefix"], p90  # precise << approx
    assert p90["random"] > 1.5 * p90["approx_prefix"], p90  # approx << random
    assert p90["random"] > 20 and p90["load_only"] > 20, p90  # tens of seconds
    assert 0.75 < p90["load_only"] / p90["random"] < 1.33, p90  # random ~ load_only
    # llm-d: output tok/s 8730 / 6944 / 4429 / 4266: precise about 2x random
    assert 1.6 < tput["precise_prefix"] / tput["random"] < 2.5, tput
    assert tput["random"] < tput["approx_prefix"] < tput["precise_prefix"], tput
    # the mechanism: precise keeps the cache hits that cache-blind routing loses
    assert m["precise_prefix"]["prefix_hit_rate"] > 0.85
    assert m["random"]["prefix_hit_rate"] < 0.3 and m["load_only"]["prefix_hit_rate"] < 0.3


def test_routing_llmd_short_shows_the_same_ordering_in_two_minutes():
    m = run("routing-llmd-short")
    p90 = {k: v["ttft_p90"] for k, v in m.items()}
    assert p90["precise_prefix"] < 1.0, p90
    assert p90["precise_prefix"] * 5 < p90["approx_prefix"] < p90["random"], p90
    assert p90["random"] > 10 and p90["load_only"] > 10, p90
    assert m["precise_prefix"]["throughput_tok_s"] > 1.4 * m["random"]["throughput_tok_s"]


def test_routing_light_gap_shrinks_to_under_2x():
    m = run("routing-light")
    best = m["precise_prefix"]["ttft_p90"]
    for name, v in m.items():
        assert v["ttft_p90"] < 2 * best, (name, v["ttft_p90"], best)
        assert v["completed"] == m["precise_prefix"]["completed"]  # everyone keeps up
    assert m["precise_prefix"]["prefix_hit_rate"] > m["random"]["prefix_hit_rate"]  # hits still differ


def test_routing_hotspot_pure_affinity_melts_one_replica_and_filter_then_balance_does_not():
    m = run("routing-hotspot")
    sticky, precise = m["prefix_hash"], m["precise_prefix"]
    assert sticky["peak_waiting"] > 100 and sticky["ttft_p90"] > 5, sticky
    assert sticky["load_imbalance"] > 2.0  # one replica took most of the traffic
    assert precise["peak_waiting"] < 10 and precise["ttft_p99"] < 1.0, precise
    assert precise["prefix_hit_rate"] > 0.9  # it still serves the viral prefix from cache
    assert precise["completed"] > 1.25 * sticky["completed"]
    assert precise["spill_routes"] >= 1  # the viral prefix spread because stickiness gave way


def test_routing_scale_out_round_robin_hit_rate_is_flat_prefix_aware_grows():
    m = run("routing-scale-out")
    rr = [m[f"rr-{n}"]["prefix_hit_rate"] for n in (2, 4, 8)]
    pp = [m[f"precise-{n}"]["prefix_hit_rate"] for n in (2, 4, 8)]
    assert max(rr) - min(rr) < 0.05, rr  # one replica's worth of cache, whatever N
    assert pp[0] < pp[1] < pp[2], pp  # N replicas' worth
    assert pp[1] > 3 * rr[1] and pp[2] > 5 * rr[2], (pp, rr)


def test_approx_prefix_falls_behind_only_when_its_state_is_split_across_routers():
    # the modelling assumption behind routing-llmd's approx_prefix panel (docs/cluster.md)
    p = presets.load("routing-llmd-short")
    spec = next(s for s in p.panels if s.policy == "approx_prefix")
    panels = tuple(PanelSpec(f"routers-{k}", "approx_prefix", dict(spec.params, router_replicas=k)) for k in (1, 2))
    m = Scenario(replace(p, panels=panels)).run().metrics()
    precise = run("routing-llmd-short")["precise_prefix"]
    one, two = m["routers-1"], m["routers-2"]
    assert abs(one["prefix_hit_rate"] - precise["prefix_hit_rate"]) < 0.05, (one, precise)
    assert one["ttft_p90"] < 2 * precise["ttft_p90"]
    assert two["prefix_hit_rate"] < one["prefix_hit_rate"] - 0.15  # each group lives on two pods
    assert two["ttft_p90"] > 10 * one["ttft_p90"]
