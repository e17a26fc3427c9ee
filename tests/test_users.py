"""Closed-loop users (sims/workloads/users.py, sims/engine/users.py): each waits for its answer.

The references are independent of the code: the interactive response time law (Denning and
Buzen's operational law, users = throughput x (response time + think time)), the loop's own
rule read off the completed requests (a user's next turn never starts before its last answer
plus the shortest wait), and the growth of a conversation's prompt turn by turn.
"""

from __future__ import annotations

import pytest

from sims.core import budget, presets
from sims.core.limits import InputError
from sims.core.preset_schema import parse_preset
from sims.core.scenario import Scenario

BASE = {
    "name": "users-test",
    "title": "users",
    "watch_for": "",
    "topic": "engine",
    "seed": 3,
    "duration": 300.0,
    "workload": {"kind": "users", "users": 40, "ramp": 5.0, "think": 4.0, "think_min": 0.5, "turns": 5.0},
    "defaults": {"gpu": "H100-80GB", "model": "Qwen3-32B", "tp": 2},
    "panels": [{"policy": "fcfs"}],
}


def preset(**workload) -> presets.Preset:
    raw = dict(BASE, workload=BASE["workload"] | workload)
    return parse_preset(raw, "users-test.toml")


def records(sc: Scenario, name: str = "fcfs") -> list:
    panel = sc.panels[name]
    return [r for e in panel._engines() for r in e.records]


def test_users_obey_the_interactive_response_time_law():
    """N = X (R + Z): 40 users, think 4 s, over the window after the ramp; the measured turns per
    second times (mean response + mean think) is within 5% of 40."""
    p = preset()
    sc = Scenario(p, p.seed)
    sc.advance(p.duration)
    lo, hi = 60.0, p.duration
    done = [r for r in records(sc) if lo <= r.finish <= hi]
    x = len(done) / (hi - lo)
    r = sum(r.finish - r.arrival for r in done) / len(done)
    n = x * (r + 4.0)
    assert abs(n - 40) / 40 < 0.05, f"X (R + Z) = {x:.3f} x ({r:.3f} + 4) = {n:.2f}, not 40"


def test_a_user_waits_for_its_answer_and_at_least_think_min():
    p = preset(think=1.0, think_min=0.6, tool_frac=0.3, tool_latency=0.8)
    sc = Scenario(p, p.seed)
    sc.advance(120.0)
    by_user: dict[int, list] = {}
    for r in records(sc):
        by_user.setdefault(r.rid % 40, []).append(r)
    assert len(by_user) == 40
    for user, turns in by_user.items():
        turns.sort(key=lambda r: r.rid)
        assert [r.rid // 40 for r in turns] == list(range(len(turns))), f"user {user} skipped a turn"
        for before, after in zip(turns, turns[1:], strict=False):
            assert after.arrival >= before.finish + 0.6 - 1e-9, f"user {user}: turn {after.rid} came too soon"


def test_a_conversation_grows_by_each_answer_and_the_next_message():
    p = preset(turns=1000.0, output_mean=50.0, turn_mean=20.0, sigma=0.0, system_prompts=0)
    sc = Scenario(p, p.seed)
    sc.advance(60.0)
    mine = sorted((r for r in records(sc) if r.rid % 40 == 0), key=lambda r: r.rid)
    assert len(mine) >= 5
    assert mine[0].prompt_len == 161  # the first message, fixed with sigma 0
    for before, after in zip(mine, mine[1:], strict=False):
        assert after.prompt_len == before.prompt_len + before.output_len + 20
    assert mine[-1].cached_tokens > 0  # the conversation so far came from the prefix cache


def test_every_panel_gets_the_same_turns_only_at_other_times():
    p = presets.load("routing-chat-users")
    sc = Scenario(p, p.seed)
    sc.advance(40.0)
    turns = {}
    for name, panel in sc.panels.items():
        turns[name] = {r.rid: (r.prompt_len, r.output_len) for e in panel.engines for r in e.records}
    a, b = turns["precise_prefix"], turns["random"]
    both = a.keys() & b.keys()
    assert len(both) > 500
    assert all(a[k] == b[k] for k in both)
    assert {r.arrival for e in sc.panels["precise_prefix"].engines for r in e.records} != {
        r.arrival for e in sc.panels["random"].engines for r in e.records
    }


def test_drain_sends_no_new_turn_and_finishes_every_one():
    p = preset()
    sc = Scenario(p, p.seed)
    sc.advance(30.0)
    panel = sc.panels["fcfs"]
    panel.drain()
    assert not panel.engine.has_work()
    assert panel.users.next_time() is None
    panel.check_invariants()


@pytest.mark.parametrize("seed", [1, 2])
def test_the_invariants_hold_in_a_cluster_through_a_run(seed):
    p = presets.load("routing-chat-users")
    sc = Scenario(p, seed, panels=["precise_prefix"])
    for t in range(5, 31, 5):
        sc.advance(float(t))
        sc.panels["precise_prefix"].check_invariants()


def test_the_budget_counts_the_turns_the_users_will_send():
    p = preset()
    est = budget.estimate(p)
    assert 40 * 300 / 4.0 <= est.stream.events <= 40 * (1 + 300 / 4.0) + 1
    with pytest.raises(InputError, match="workload.users"):  # refused when read, before a run
        preset(users=20_000, think=0.5)


def test_plan_says_when_a_latency_is_censored_and_asks_for_drain(capsys):
    """Without --drain the users' last turns are still waiting at the end: the TTFT is a lower
    bound, the probe cannot meet a "<" target, and plan says why instead of a bare "misses"."""
    from sims.cli import main

    args = ["plan", "routing-chat-users", "--vary", "defaults.replicas=8:8", "--target", "ttft_p90<0.5"]
    assert main(args + ["--panel", "precise_prefix", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "misses" in out and "censored on" in out and "plan with --drain" in out, out
