"""consensus: Raft's safety under random fault schedules (Hypothesis), the broken commit rule's
violation found by the schedule search, the presets' stories, and seeking back = advancing."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import tomllib
from pathlib import Path
from random import Random

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims.consensus.trials import run_events
from sims.core import presets
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
PRESETS = sorted(p for p in presets.preset_names() if p.startswith("consensus-"))
N = 5


# -- random fault schedules ----------------------------------------------------------------------
@st.composite
def schedules(draw):
    """Faults of every kind at random times in 4 s, durable restarts (Raft assumes a disk), and
    client commands: ((events, duration), panel params)."""
    events = []
    t = 0.2
    crashed = set()
    for _ in range(draw(st.integers(3, 16))):
        t += draw(st.sampled_from([0.005, 0.02, 0.1, 0.2, 0.4]))
        kind = draw(st.sampled_from(["op", "op", "crash", "restart", "partition", "heal", "link", "leader"]))
        ev = {"t": t, "kind": "fault"}
        if kind == "op":
            ev = {"t": t, "kind": "op", "id": len(events) + 1}
        elif kind == "crash":
            node = draw(st.integers(0, N - 1))
            crashed.add(node)
            ev |= {"fault": "crash", "node": node}
        elif kind == "restart":
            if not crashed:
                continue
            node = draw(st.sampled_from(sorted(crashed)))
            crashed.discard(node)
            ev |= {"fault": "restart", "node": node, "durable": True}
        elif kind == "partition":
            side = draw(st.lists(st.integers(0, N - 1), min_size=1, max_size=N - 1, unique=True))
            ev |= {"fault": "partition", "groups": [side]}
        elif kind == "heal":
            ev |= {"fault": "heal"}
        elif kind == "link":
            ev |= {"fault": "link", "loss": draw(st.sampled_from([0.0, 0.1, 0.4])), "duplicate": 0.1, "reorder": 0.2}
        else:
            ev |= {"fault": "crash", "node": "leader", "mark": f"c{len(events)}"}
        events.append(ev)
    policy = draw(st.sampled_from(["raft", "raft", "multi_paxos", "paxos"]))
    params = {
        "prevote": draw(st.booleans()),
        "check_quorum": draw(st.booleans()),
        "election_lo": 0.15,
        "election_hi": draw(st.sampled_from([0.15, 0.2, 0.3])),
        "disk": draw(st.sampled_from([0.0, 0.0, 0.012])),  # Raft: replies wait for the disk
        "timer_step": draw(st.sampled_from([0.0, 0.001])),
    }
    return events, t + 1.0, draw(st.integers(0, 2**32)), policy, params


def _assert_safe(case):
    events, duration, seed, policy, params = case
    panel = run_events(policy, events, duration, seed=seed, **params)
    assert not panel.checker.violations, (panel.checker.violations, events, params)
    panel.check_invariants()


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedules())
def test_raft_and_paxos_are_safe_on_random_fault_schedules(case):
    _assert_safe(case)


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedules())
def test_raft_and_paxos_are_safe_on_1000_random_fault_schedules(case):
    _assert_safe(case)


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_schedule_search_finds_figure_8s_lost_commit_and_raft_survives_it(seed):
    """`contention search consensus` over leader-relative schedules (sims/adversary): the broken
    commit rule loses a committed entry (state machine safety, after leader completeness), shrunk
    to a few steps; correct Raft, Multi-Paxos and Paxos are safe on the very same schedule."""
    from sims.adversary import Problem, Search
    from sims.adversary.shrink import shrink

    problem = Problem("consensus", "safety_violations(raft_broken_commit)", N, 40, seed=seed)
    search = Search(problem, seed, 20_000).run(until_found=True)
    assert search.found, search.state()
    out = shrink(problem, search.best, 20_000)
    assert out.minimal and len(out.genome) <= 12, out
    why = problem.why(out.genome)
    assert any("state machine safety" in w for w in why), why
    events, duration = problem.layout.events(out.genome), problem.layout.run_length(out.genome)
    for policy in ("raft", "multi_paxos", "paxos"):
        safe = run_events(policy, events, duration, seed=seed)
        assert not safe.checker.violations, (policy, safe.checker.violations)


def test_a_stale_leader_in_a_minority_is_not_a_leader_completeness_violation():
    """Leader completeness is about the term an entry was committed in (the paper's Figure 3), not
    the entry's own term: a term-2 leader cut off in a minority, lacking a term-1 entry that the
    majority's term-4 leader commits, breaks nothing (the checker used to count it)."""
    events = [
        {"t": 1.0, "kind": "fault", "fault": "mark", "name": "m0", "node": "leader"},
        {"t": 1.0, "kind": "fault", "fault": "partition", "groups": [["m0", "m0+1"]]},
        {"t": 1.01, "kind": "op", "id": 1},
        {"t": 1.31, "kind": "fault", "fault": "mark", "name": "m1", "node": "leader"},
        {"t": 1.31, "kind": "fault", "fault": "partition", "groups": [["m1", "m1+1"]]},
    ]
    panel = run_events("raft_broken_commit", events, 2.3, seed=5)
    assert panel.checker.chosen and panel.checker.committed_in[1] > panel.checker.chosen[1][0]
    assert not panel.checker.violations, panel.checker.violations


def test_paxos_chooses_one_value_and_multi_paxos_commits_every_command():
    events = [{"t": 1.0 + 0.1 * k, "kind": "op", "id": k + 1} for k in range(20)]
    assert run_events("paxos", events, 4.0).metrics()["committed"] == 1
    assert run_events("multi_paxos", events, 4.0).metrics()["committed"] == 20


def test_the_paxos_checker_sees_two_values_chosen_in_one_slot():
    panel = run_events("multi_paxos", [{"t": 1.0, "kind": "op", "id": 1}], 2.0)
    assert panel.metrics()["committed"] == 1
    for acceptor in range(3):  # forge a majority for another value in a higher ballot
        panel.net.nodes[0].accepts.append((1, 999, 42, acceptor))
    panel.checker.check(panel.net.nodes, 2.0)
    assert "one_value_chosen:1" in panel.checker.violations


def test_the_checker_sees_a_forged_committed_entry_overwritten():
    events, duration = [{"t": 1.0, "kind": "op", "id": 1}], 2.0
    panel = run_events("raft", events, duration)
    assert panel.metrics()["committed"] == 1 and not panel.checker.violations
    node = panel.net.nodes[0]
    node.log[0] = (node.log[0][0], 99)
    node.dirty = 1
    panel.checker.seen_commit[0] = 0
    panel.checker.check(panel.net.nodes, 2.0)
    assert any(k.startswith(("log_matching", "state_machine_safety")) for k in panel.checker.violations)


# -- the presets' stories --------------------------------------------------------------------------
def _run(name, seed=None):
    return Scenario(name, seed=seed).run().metrics()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_figure8_broken_commit_loses_a_committed_entry_raft_does_not(seed):
    m = _run("consensus-figure8", seed)
    assert m["raft_broken_commit"]["safety_violations"] > 0
    assert m["raft"]["safety_violations"] == 0


def test_leader_partition_discards_the_old_leaders_entries_and_the_majority_goes_on():
    m = _run("consensus-leader-partition")["raft"]
    assert m["discarded"] >= 1 and m["leader_changes"] >= 1 and m["safety_violations"] == 0
    assert m["committed"] > 0.9 * m["ops"]


def test_every_correct_panel_is_safe_on_every_preset():
    for name in PRESETS:
        for panel, m in _run(name).items():
            if "broken" not in panel and "unsafe" not in panel:  # the deliberately unsafe ones
                assert m["safety_violations"] == 0, (name, panel)


# -- seeking back gives the view that advancing gives -----------------------------------------------
@pytest.mark.parametrize("name", PRESETS)
def test_seek_back_equals_advancing_from_zero(name):
    sc = Scenario(name, checkpoint_every=0.7)
    sc.advance(sc.duration)
    for t in (sc.duration * 0.83, sc.duration * 0.31, sc.duration * 0.55, 0.05):
        sc.seek(t)
        fresh = Scenario(name)
        fresh.advance(t)
        assert json.dumps(sc.views(), sort_keys=True) == json.dumps(fresh.views(), sort_keys=True), (name, t)
        assert sc.metrics() == fresh.metrics()


# -- the renderer draws every preset's views ---------------------------------------------------------
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_renderer_draws_every_presets_views(tmp_path):
    views = {}
    for name in PRESETS:
        sc = Scenario(name)
        for k, t in enumerate((0.5, sc.duration / 2, sc.duration)):
            sc.advance(t)
            views[f"{name}@{k}"] = sc.views()
    f = tmp_path / "views.json"
    f.write_text(json.dumps(views))
    out = subprocess.run(
        ["node", str(ROOT / "tests" / "node" / "render_views.mjs"), "consensus", "consensus", str(f)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["calls"] > 100


def test_the_break_it_actions_crash_restart_cut_and_heal():
    """Each preset action is a stream event the panels resolve in their own run."""
    p = presets.load("consensus-paxos")
    acts = {a["label"]: a["event"] for a in p.actions}
    sc = Scenario("consensus-paxos")
    sc.advance(2.0)
    before = {n: m["leader_changes"] for n, m in sc.metrics().items()}
    sc.insert({**acts["Crash the leader"], "t": 2.0})
    sc.advance(3.0)
    for name, panel in sc.panels.items():
        assert sum(not nd.up for nd in panel.net.nodes) >= 1, name
    sc.insert({**acts["Restart it"], "t": 3.0})
    sc.insert({**acts["Cut the leader off with one follower"], "t": 3.0})
    sc.advance(4.0)
    assert all(panel.net.partitioned for panel in sc.panels.values())
    sc.insert({**acts["Heal the partition"], "t": 4.0})
    sc.advance(5.0)
    after = sc.metrics()
    assert not any(panel.net.partitioned for panel in sc.panels.values())
    assert after["raft"]["leader_changes"] > before["raft"]
    assert all(m["safety_violations"] == 0 for m in after.values())


def test_figure16_shape_no_randomness_stalls_more_randomness_elects_fast():
    """scripts/raft_figure16.py's trials, a few per range: the paper's shape (docs/consensus.md)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fig16", ROOT / "scripts" / "raft_figure16.py")
    fig16 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fig16)
    fixed = [fig16.trial(150, 150, s, request_ms=2) for s in range(5)]
    wide = sorted(fig16.trial(150, 300, s) for s in range(40))
    short = [fig16.trial(12, 24, s) for s in range(40)]
    assert all(t == float("inf") for t in fixed)  # split votes past the 10 s cut-off
    assert 0.15 < wide[20] < 0.4 and wide[-1] < 1.5
    mean_short = math.fsum(short) / len(short)
    assert mean_short < wide[20]


def test_disk_holds_the_reply_that_wrote_and_timer_steps_are_whole():
    """``disk``: a granted vote (a write) is answered that much later; ``timer_step``: election
    timeouts are whole steps above the low end (scripts/raft_figure16.py's paper model uses both)."""
    from sims.consensus.raft import RaftNode
    from sims.net import Delay, Network

    def reply_arrives(disk: float) -> float:
        nodes = [RaftNode(i, 3, (0.15, 0.155), 0.05, disk=disk) for i in range(3)]
        net = Network(nodes, Random(1), Delay("fixed", mean=0.001))
        net.start(0.0)
        nodes[0].send(1, ("RV", 1, 0, 0, False))
        net.advance(0.001)
        return [arrives for _, _, _, arrives, msg in net.in_flight(net.now) if msg[0] == "RVR"][0]

    assert reply_arrives(0.0) == pytest.approx(0.002)
    assert reply_arrives(0.010) == pytest.approx(0.012)
    node = RaftNode(0, 1, (0.15, 0.155), 0.05, timer_step=0.001)
    net = Network([node], Random(2))
    steps = set()
    for _ in range(60):
        net.clock.heap.clear()
        node._reset_election()
        k = (net.clock.heap[0][0] - 0.15) / 0.001
        assert abs(k - round(k)) < 1e-6
        steps.add(round(k))
    assert steps == {0, 1, 2, 3, 4, 5}


@pytest.mark.parametrize(
    "event, field",
    [
        ({"t": 2.0, "fault": "mark", "node": "leader"}, "name"),
        ({"t": 2.0, "fault": "mark", "name": "", "node": "leader"}, "name"),
        ({"t": 2.0, "fault": "crash", "node": "leader", "mark": 3}, "mark"),
    ],
)
def test_a_schedule_names_what_a_mark_calls_its_node(event, field):
    # a mark without a name was accepted and the run died on a KeyError (Hypothesis found it)
    path = ROOT / "sims" / "presets" / "consensus-figure8.toml"
    raw = tomllib.loads(path.read_text())
    raw["workload"]["schedule"] = [event]
    with pytest.raises(ValueError, match=rf"workload\.schedule\[0\]\.{field}"):
        Scenario(presets.parse_preset(raw, str(path)), None, 5.0).run()
