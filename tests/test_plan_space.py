"""``contention plan --space``: the cheapest deployment that meets every target (sweep/deploy.py),
its Pareto front (sweep/pareto.py), and answers that move the right way."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import presets
from sweep import deploy, executors, pareto, plan, run
from tests.budget import examples

SERIAL = executors.pick(None, 1)


def tiny(rate: float = 2.0) -> presets.Preset:
    """A small cluster: Qwen3-32B replicas on H100s behind a random router, 20 s of traffic."""
    raw = {
        "name": "tiny-plan",
        "topic": "cluster",
        "title": "tiny",
        "watch_for": "the cheapest deployment",
        "description": "a small cluster for plan --space",
        "seed": 1,
        "duration": 20.0,
        "workload": {
            "kind": "shared_prefix",
            "rate": rate,
            "groups": 10,
            "prompts_per_group": 5,
            "prefix_len": 512,
            "question_len": 256,
            "output_len": 100,
        },
        "defaults": {"replicas": 1, "gpu": "H100-80GB", "model": "Qwen3-32B", "kv_tokens": 60000, "block_size": 64},
        "panels": [{"policy": "random"}, {"policy": "round_robin"}],
    }
    return presets.parse_preset(raw, "tiny-plan.toml")


def search(preset, targets, space=("defaults.tp=1,2",), vary="defaults.replicas=1:6", seeds=2):
    return deploy.search(preset, vary, list(space), [plan.parse_target(t) for t in targets], seeds, "random", SERIAL)


def test_a_case_solved_by_hand_picks_the_cheapest_and_breaks_ties_by_space_order():
    """With "gpus>5" as the target the answer is arithmetic: 6 GPUs at the least, as 6 replicas of
    TP 1 or 3 of TP 2, the same price; the tie goes to the column the search took first, the one
    whose cheapest configuration is cheaper (TP 1). TP 2's column is then pruned: below $17.70/h it
    has 1 or 2 replicas, 2 or 4 GPUs, and its dearest candidate misses."""
    r = search(tiny(), ["gpus>5"])
    assert r["feasible"]
    assert r["config"] == {"defaults.tp": 1, "defaults.replicas": 6}
    assert r["gpus"] == 6 and r["usd_per_hour"] == pytest.approx(6 * 2.95)
    assert r["usd_per_month"] == pytest.approx(6 * 2.95 * 730)
    assert [p["config"] for p in r["pruned"]] == [{"defaults.tp": 2}]
    assert len(r["evidence"]) == 2 and all(e["gpus"] == 6 for e in r["evidence"])


def test_the_answer_meets_every_target_and_one_replica_fewer_does_not():
    preset = tiny(rate=6.0)
    targets = [plan.parse_target("ttft_p90<1.0")]
    r = deploy.search(preset, "defaults.replicas=1:6", ["defaults.tp=1,2"], targets, 3, "random", SERIAL, drain=True)
    assert r["feasible"], r
    again = run.run(preset, {k: [v] for k, v in r["config"].items()}, 3, ["random"], SERIAL, drain=True)
    assert plan.judge(None, again, targets, 0.95)["ok"]
    n = r["config"]["defaults.replicas"]
    if n > 1:
        fewer = {**r["config"], "defaults.replicas": n - 1}
        rows = run.run(preset, {k: [v] for k, v in fewer.items()}, 3, ["random"], SERIAL, drain=True)
        assert not plan.judge(None, rows, targets, 0.95)["ok"]


def test_infeasible_says_which_target_binds():
    r = search(tiny(), ["ttft_p90<0.0001", "gpus>0"], space=("defaults.tp=1",), vary="defaults.replicas=1:2")
    assert not r["feasible"] and r["binding"] == "ttft_p90<0.0001"


def _gpus(r) -> float:
    return r["gpus"] if r["feasible"] else float("inf")


@settings(max_examples=examples(4), deadline=None)
@given(
    slo=st.sampled_from([0.3, 0.6, 1.2, 3.0]),
    tighter=st.sampled_from([0.5, 0.8]),
    rate=st.sampled_from([2.0, 4.0]),
    more=st.sampled_from([1.5, 2.0]),
)
def test_a_tighter_slo_is_never_cheaper_and_more_traffic_never_needs_fewer_gpus(slo, tighter, rate, more):
    base = search(tiny(rate), [f"ttft_p90<{slo}"])
    tight = search(tiny(rate), [f"ttft_p90<{slo * tighter}"])
    busier = search(tiny(rate * more), [f"ttft_p90<{slo}"])
    cost = {k: (r["usd_per_hour"] if r["feasible"] else float("inf")) for k, r in (("b", base), ("t", tight))}
    assert cost["t"] >= cost["b"], (slo, tighter, rate)
    assert _gpus(busier) >= _gpus(base), (slo, rate, more)


def test_the_pareto_front_has_two_series_and_no_point_on_it_is_beaten():
    probes = [
        {
            "config": {"defaults.deployment": "", "x": 1},
            "gpus": 2,
            "ok": True,
            "per_seed": [{"throughput_tok_s": 200.0, "tpot_p50": 0.02}],
        },
        {
            "config": {"defaults.deployment": "", "x": 2},
            "gpus": 2,
            "ok": True,
            "per_seed": [{"throughput_tok_s": 100.0, "tpot_p50": 0.01}],
        },
        {
            "config": {"defaults.deployment": "", "x": 3},
            "gpus": 2,
            "ok": False,
            "per_seed": [{"throughput_tok_s": 90.0, "tpot_p50": 0.02}],
        },
        {
            "config": {"defaults.deployment": "disaggregated"},
            "gpus": 4,
            "ok": True,
            "per_seed": [{"throughput_tok_s": 600.0, "tpot_p50": 0.05}],
        },
    ]
    f = pareto.front(probes)
    assert [p["config"]["x"] for p in f["aggregated"]["front"]] == [2, 1]  # 3 is beaten by 1 on both axes
    assert len(f["aggregated"]["points"]) == 3 and len(f["disaggregated"]["front"]) == 1
    html = pareto.page("t", f)
    assert html.count('class="series"') == 2
    assert not any(bad in html for bad in ("<script", "src=", "href=", "url("))  # loads nothing


def test_plan_space_cli_json_and_plot(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = "import sys; from sims.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = ["plan", "routing-light", "--panel", "random", "--vary", "defaults.replicas=1:4"]
    argv += ["--space", "defaults.gpu=H100-80GB,H200", "--target", "ttft_p90<0.5", "--seeds", "2", "--workers", "1"]
    plot = tmp_path / "front.html"
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, "-c", code, *argv, "--json", "--plot", str(plot)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    for key in ("config", "gpus", "usd_per_hour", "usd_per_month", "usd_per_mtok_out", "evidence", "pareto"):
        assert key in r, key
    assert plot.read_text().count("<circle") == sum(len(s["points"]) for s in r["pareto"].values())
    argv[argv.index("defaults.gpu=H100-80GB,H200")] = "defaults.gpu=A40"
    bad = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "usd_per_gpu_hour" in bad.stderr, bad.stderr
    argv[argv.index("defaults.gpu=A40")] = "defaults.gpu="
    bad = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --space defaults.gpu: no values"), bad.stderr
    journal = tmp_path / "plan.jsonl"
    argv[argv.index("defaults.gpu=")] = "defaults.gpu=H100-80GB"
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, *argv, "--json", "--resume", str(journal)],
            capture_output=True,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0] and runs[0].stdout == runs[1].stdout, runs[1].stderr
    no_space = [a for a in argv if a not in ("--space", "defaults.gpu=H100-80GB")]
    bad = subprocess.run(
        [sys.executable, "-c", code, *no_space, "--resume", str(journal)], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 2 and "--resume: plan keeps a journal of a --space search" in bad.stderr, bad.stderr


@pytest.mark.slow
def test_routing_llmd_short_answer_meets_the_slo_and_one_replica_fewer_does_not():
    """The issue's case: precise prefix routing on routing-llmd-short, TTFT P90 under 3 s with
    every request drained, H100 or H200."""
    preset = presets.load("routing-llmd-short")
    targets = [plan.parse_target("ttft_p90<3")]
    space = ["defaults.gpu=H100-80GB,H200"]
    r = deploy.search(preset, "defaults.replicas=1:8", space, targets, 3, "precise_prefix", SERIAL, drain=True)
    assert r["feasible"] and r["config"]["defaults.gpu"] == "H100-80GB", r.get("config")
    n = r["config"]["defaults.replicas"]
    assert n > 1 and r["gpus"] == 2 * n
    for replicas, ok in ((n, True), (n - 1, False)):
        params = {**r["config"], "defaults.replicas": replicas}
        rows = run.run(preset, {k: [v] for k, v in params.items()}, 3, ["precise_prefix"], SERIAL, drain=True)
        assert plan.judge(None, rows, targets, 0.95)["ok"] is ok, replicas


def test_a_search_resumed_from_its_journal_runs_only_what_is_missing(tmp_path):
    """plan --resume F: the second search reads every configuration back (it may not run one), a
    half-written last line is run again, and a journal of another search is refused."""
    targets = [plan.parse_target("ttft_p90<2")]
    path = tmp_path / "plan.jsonl"

    def go(execute, preset=None):
        preset = preset or tiny()
        return deploy.search(
            preset, "defaults.replicas=1:6", ["defaults.tp=1,2"], targets, 2, "random", execute, journal=path
        )

    first = go(SERIAL)
    lines = path.read_text().splitlines()
    assert len(lines) == 1 + len(first["probes"])

    def refuse(jobs):
        raise AssertionError("a journaled configuration ran again")

    again = go(refuse)
    assert again["config"] == first["config"] and again["probes"] == first["probes"]
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])  # killed mid-write
    ran = []

    def count(jobs):
        jobs = list(jobs)
        ran.append(len(jobs))
        return SERIAL(jobs)

    assert go(count)["probes"] == first["probes"] and sum(ran) == 2  # the last configuration's two seeds
    with pytest.raises(run.grid.SweepError, match="written by another search"):
        go(SERIAL, tiny(rate=3.0))


def test_a_capacity_curve_skips_what_missed_at_a_lower_load_and_answers_as_searches_one_by_one():
    """plan --space --load workload.rate=...: the same answers as a search at each rate alone, with
    fewer runs (a configuration that missed at a lower rate is not run at a higher one)."""
    targets = [plan.parse_target("ttft_p90<1")]
    args = (["defaults.tp=1,2"], targets, 2, "random", SERIAL)
    c = deploy.curve(tiny(), "workload.rate=8,16,32", "defaults.replicas=1:6", *args)
    alone = [deploy.search(tiny(r), "defaults.replicas=1:6", *args) for r in (8, 16, 32)]
    assert [r.get("config") for r in c["curve"]] == [a.get("config") for a in alone]
    assert c["skipped"] > 0 and c["runs"] <= sum(p["seeds"] for a in alone for p in a["probes"])
    missed: list[dict] = []  # no configuration that missed at a lower rate runs at a higher one
    for r in c["curve"]:
        ran = [p["config"] for p in r["probes"]]
        assert not [cfg for cfg in ran if any(_no_more(cfg, m) for m in missed)], ran
        missed += [p["config"] for p in r["probes"] if not p["ok"]]
    gpus = [r["gpus"] for r in c["curve"] if r["feasible"]]
    assert gpus == sorted(gpus)
    with pytest.raises(run.grid.SweepError, match="increasing order"):
        deploy.curve(tiny(), "workload.rate=4,2", "defaults.replicas=1:6", *args)


def _no_more(cfg: dict, missed: dict) -> bool:
    """``cfg`` has the same choices as ``missed`` and no more replicas."""
    same = {k: v for k, v in cfg.items() if k != "defaults.replicas"} == {
        k: v for k, v in missed.items() if k != "defaults.replicas"
    }
    return same and cfg["defaults.replicas"] <= missed["defaults.replicas"]
