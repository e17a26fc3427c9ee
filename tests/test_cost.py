"""The bill and goodput (sims/engine/bill.py, sims/hw/prices.py, docs/cost.md): dollars are
GPU-hours times a sourced price, idle time is paid for, goodput counts every arrival."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from sims.core import api, presets
from sims.engine.bill import bill
from sims.engine.metrics import Accumulator, EngineStats, Record, Slo
from sims.hw import gpus, prices

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("golden", ROOT / "scripts" / "golden.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)
LLM = sorted(n for n in golden.read() if presets.load(n).topic in ("engine", "cluster"))


def _panels():
    want = golden.read()
    for name in LLM:
        for panel, m in want[name]["panels"].items():
            yield name, panel, m


def test_every_llm_panel_reports_the_bill_and_usd_is_gpu_hours_times_the_price():
    seen = 0
    for name, panel, m in _panels():
        where = f"{name}/{panel}"
        for key in ("gpus", "gpu_hours", "usd", "usd_per_gpu_hour", "goodput_rps", "slo_attainment"):
            assert key in m, (where, key)
        assert m["usd"] == pytest.approx(m["gpu_hours"] * m["usd_per_gpu_hour"], rel=1e-12), where
        assert m["usd_per_hour"] == pytest.approx(m["gpus"] * m["usd_per_gpu_hour"], rel=1e-12), where
        assert 0 <= m["slo_attainment"] <= 1, where
        if "usd_per_mtok_out" in m:
            # idling is paid for: the busy-only price is never the higher one
            assert m["usd_per_mtok_out_busy"] <= m["usd_per_mtok_out"] * (1 + 1e-12), where
            # no SLO is set on these presets: every completed request meets it
            assert m["usd_per_mtok_good"] == pytest.approx(m["usd_per_mtok_out"]), where
        seen += 1
    assert seen >= 40


def test_the_gpus_are_engines_times_tensor_parallel():
    r = api.run("disaggregation", duration=1.0)
    p = presets.load("disaggregation")
    for panel in p.panels:
        m = r["panels"][panel.name]
        engines = panel.params.get("prefill_replicas", 1) + panel.params.get("decode_replicas", 1)
        if not panel.params.get("deployment"):
            engines = 1
        assert m["gpus"] % engines == 0 and m["gpus"] >= engines, (panel.name, m["gpus"], engines)
        assert m["gpu_hours"] == pytest.approx(m["gpus"] * 1.0 / 3600)
    r = api.run("routing-llmd-short", duration=1.0)
    assert {m["gpus"] for m in r["panels"].values()} == {8}  # 4 replicas of Qwen3-32B at TP 2


def _record(rid, arrival, first, finish, out=11):
    return Record(rid, arrival, first, finish, prompt_len=100, output_len=out, cached_tokens=0, preemptions=0)


def test_goodput_by_hand_counts_unfinished_and_rejected_as_misses():
    acc = Accumulator(Slo(ttft=1.0, tpot=0.1))
    acc.add(_record(1, 0.0, 0.5, 1.5))  # ttft 0.5, tpot 0.1: meets
    acc.add(_record(2, 0.0, 1.5, 2.0))  # ttft 1.5: misses
    acc.add(_record(3, 1.0, 1.2, 3.2))  # tpot 0.2: misses
    acc.add(_record(4, 2.0, 2.1, 2.1, out=1))  # one token, no TPOT: meets
    stats = EngineStats(rejected=1)
    pending = [(5.0, -1.0, 0)]  # still waiting at the end
    m = acc.result(10.0, stats, pending, 10.0)
    assert m["goodput_rps"] == pytest.approx(2 / 10.0)
    assert m["slo_attainment"] == pytest.approx(2 / 6)  # 4 completed + 1 in flight + 1 rejected
    b = bill(acc, EngineStats(busy_s=5.0), 3600.0, engines=2, tp=4, gpu="H100-80GB", params={"usd_per_gpu_hour": 2.0})
    assert b["gpus"] == 8 and b["gpu_hours"] == 8.0 and b["usd"] == 16.0
    assert b["usd_per_mtok_out"] == pytest.approx(16.0 / (34 / 1e6))
    assert b["usd_per_mtok_good"] == pytest.approx(16.0 / (12 / 1e6))  # requests 1 and 4 met it
    assert b["usd_per_mtok_out_busy"] == pytest.approx(5.0 * 4 / 3600 * 2.0 / (34 / 1e6))


def test_nothing_delivered_has_no_price_per_token():
    b = bill(Accumulator(), EngineStats(busy_s=1.0), 60.0, engines=1, tp=1, gpu="H100-80GB", params={})
    assert b["usd"] > 0 and not any(k.startswith("usd_per_mtok") for k in b)


def test_the_price_table_is_sourced_and_every_gpu_is_priced_or_says_it_is_not():
    for name in prices.priced_gpus():
        p = prices.price(name)
        assert p.low <= p.usd_per_gpu_hour <= p.high, name
        assert p.source and len(p.month) == 7, name
        r = prices.price(name, "reserved")
        assert r.usd_per_gpu_hour == pytest.approx(p.usd_per_gpu_hour * 0.625), name
    unpriced = set(gpus.gpu_names()) - set(prices.priced_gpus())
    assert unpriced == {"A40", "MI300X"}
    text = prices.PRICES_PATH.read_text()
    for name in unpriced:
        assert name in text  # named as unpriced, with the reason
    b = bill(Accumulator(), EngineStats(), 3600.0, engines=1, tp=1, gpu="A40", params={})
    assert b == {"gpus": 1, "gpu_hours": 1.0}
    b = bill(Accumulator(), EngineStats(), 3600.0, engines=1, tp=1, gpu="A40", params={"usd_per_gpu_hour": 0.5})
    assert b["usd"] == 0.5


def test_a_preset_override_sets_the_price_and_the_tier():
    base = api.run("routing-light", duration=2.0)
    p = presets.load("routing-light").with_overrides({"defaults.price_tier": "reserved"})
    from sims.core.scenario import Scenario

    reserved = Scenario(p, None, 2.0).run().result()
    for name, m in base["panels"].items():
        assert reserved["panels"][name]["usd"] == pytest.approx(m["usd"] * 0.625)
    p = presets.load("routing-light").with_overrides({"defaults.usd_per_gpu_hour": 10.0})
    ten = Scenario(p, None, 2.0).run().result()
    for m in ten["panels"].values():
        assert m["usd"] == pytest.approx(m["gpu_hours"] * 10.0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(7, 12))
def test_random_routing_pays_more_per_million_output_tokens(seed):
    """The bill of a bad policy (routing-llmd-short, the same traffic): random routing pays at
    least 1.4x precise prefix routing per million output tokens on each of seeds 7-11."""
    m = api.run("routing-llmd-short", seed=seed, panels=["precise_prefix", "random"])["panels"]
    precise, rand = m["precise_prefix"]["usd_per_mtok_out"], m["random"]["usd_per_mtok_out"]
    assert math.isfinite(precise) and rand >= 1.4 * precise, (seed, precise, rand)


def test_run_set_prices_a_run_and_refuses_a_bad_value_in_one_line():
    import json
    import os
    import subprocess
    import sys

    def cli(*args):
        code = "import sys; from sims.cli import main; sys.exit(main(sys.argv[1:]))"
        argv = ["run", "routing-light", "--duration", "1", *args]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=120)

    out = cli("--set", "defaults.usd_per_gpu_hour=1.99", "--set", "defaults.ttft_slo=0.5", "--json")
    assert out.returncode == 0, out.stderr
    for m in json.loads(out.stdout)["panels"].values():
        assert m["usd_per_gpu_hour"] == 1.99
    for bad, says in (
        ("defaults.usd_per_gpu_hour=-1", "usd_per_gpu_hour"),
        ("defaults.price_tier=spot", "price_tier"),
        ("nothing", "KEY=VALUE"),
    ):
        out = cli("--set", bad)
        assert out.returncode == 2 and says in out.stderr and out.stderr.count("\n") == 1, (bad, out.stderr)
    out = cli("--set", "defaults.tp=1", "--set", "defaults.tp=2")
    assert out.returncode == 2 and "given twice" in out.stderr


@pytest.mark.parametrize("name", ["routing-llmd-short", "routing-split-state"])
def test_the_routing_pages_bill_random_pays_half_again_as_much_on_five_seeds(name):
    """The bill the page states beside the claim (metrics.js bill): the claim's last panel against
    its first, per million output tokens, at the claim's time, on five seeds (docs/cost.md)."""
    from sims.core import presets
    from sims.core.scenario import Scenario

    p = presets.load(name)
    c = p.site["claim"]
    best, worst = c["panels"][0], c["panels"][-1]
    for seed in range(p.seed, p.seed + 5):
        m = Scenario(p, seed, c["at"], [best, worst]).run().metrics()
        assert m[worst]["usd_per_mtok_out"] > 1.3 * m[best]["usd_per_mtok_out"], (seed, m[worst], m[best])
