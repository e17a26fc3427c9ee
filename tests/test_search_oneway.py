"""The schedule search's opt-in steps (``--steps``: the one-way block) and panel parameters
(``--set``), and the shrinker's merge move (a run of steps replaced by one that takes about as
long): docs/search.md, "Raft without pre-vote under a one-way partition" and "Shrinking a
schedule"."""

from __future__ import annotations

import json

import pytest

from sims.adversary import Problem, Search
from sims.adversary.shrink import shrink
from sims.cli import main
from sims.consensus.trials import ELECTION_STEPS, STEPS, step_set

DEPOSED = "leader_changes(raft) - 2"  # the leader deposed three times or more
ONEWAY = ("op", "heal", "oneway")  # canonical order: the topic's steps, then the extra ones


def _problem(seed: int, prevote: bool) -> Problem:
    return Problem("consensus", DEPOSED, 5, 12, seed=seed, steps=ONEWAY, params={"prevote": prevote})


def test_the_default_step_sets_are_unchanged_and_oneway_is_only_there_when_asked():
    """The published evaluation counts of the consensus and election searches rest on these."""
    assert step_set("consensus") == STEPS and step_set("election") == ELECTION_STEPS
    assert "oneway" not in STEPS and "oneway" not in ELECTION_STEPS
    assert Problem("consensus", "safety_violations(raft)", 5, 40).layout.names == STEPS
    assert step_set("consensus", ("heal", "oneway", "op")) == ONEWAY  # canonical order
    assert step_set("consensus", ("all",)) == (*STEPS, "oneway")


def test_a_oneway_step_deafens_the_leaders_next_node_to_every_other():
    p = Problem("consensus", DEPOSED, 5, 12, steps=ONEWAY)
    events = p.layout.events([ONEWAY.index("oneway") * 4 + 2])
    blocks = [(ev["from"], ev["to"]) for ev in events if ev.get("fault") == "oneway"]
    assert blocks == [("m0", "m0+1"), ("m0+2", "m0+1"), ("m0+3", "m0+1"), ("m0+4", "m0+1")]


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_raft_without_prevote_is_deposed_again_and_again_by_a_node_that_cannot_hear_and_prevote_is_not(seed):
    """Over one-way blocks, heals and commands, plain Raft loses its leader three times or more
    (found in the first schedule, shrunk to one or two steps, at least one a one-way block, each
    kept step still deposing it); with pre-vote the same budget finds no leader change at all."""
    problem = _problem(seed, False)
    search = Search(problem, seed, 150).run(until_found=True)
    assert search.found, search.state()
    kept: list[tuple[list[int], float]] = []
    out = shrink(problem, search.best, 150, on_step=lambda g, score: kept.append((list(g), score)))
    assert out.minimal and 1 <= len(out.genome) <= 2, out
    assert any(problem.layout.names[g // 4] == "oneway" for g in out.genome), out.genome
    fresh = _problem(seed, False)
    assert all(fresh.score(g) == score > 0 for g, score in kept)
    assert shrink(fresh, out.genome, 150).steps == []
    assert _problem(seed, True).score(out.genome) == -2  # pre-vote: no leader change on it
    guarded = Search(_problem(seed, True), seed, 150).run()
    assert not guarded.found and guarded.best_score == -2, guarded.state()


def test_the_oneway_search_writes_a_preset_with_prevote_that_replays_it(tmp_path, capsys):
    out = tmp_path / "deaf.toml"
    argv = ["search", "consensus", "--policies", "raft", "--objective", DEPOSED, "--steps", "oneway,heal,op"]
    argv += ["--length", "12", "--budget", "150", "--shrink", "--seed", "2", "--out", str(out), "--json"]
    assert main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["found"] and any(ev.get("fault") == "oneway" for ev in r["schedule"]), r
    assert main(["run", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["panels"] == r["panels"]
    assert "--steps oneway,heal,op" in out.read_text(encoding="utf-8")
    prevote = tmp_path / "prevote.toml"
    assert main([*argv[:-3], "--set", "prevote=true", "--out", str(prevote)]) == 1
    assert capsys.readouterr().out.startswith("no schedule with objective > 0 in 150 evaluations")
    assert not prevote.exists()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["consensus", "--policies", "raft", "--steps", "oneway,nap"], "--steps: unknown consensus step 'nap'"),
        (["consensus", "--policies", "raft", "--steps", ","], "--steps: expected distinct step names"),
        (["paging", "--objective", "faults(fifo)", "--steps", "op"], "--steps: only consensus and election"),
        (["consensus", "--policies", "raft", "--set", "prevot=true"], "--set prevot: unknown consensus panel"),
        (["consensus", "--policies", "raft", "--set", "nodes=3"], "--set nodes: that is --size"),
    ],
)
def test_steps_and_set_misuse_exit_2_with_one_line(capsys, argv, words):
    assert main(["search", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_lease_split_brain_shrinks_to_one_slow_clock_and_one_pause(seed):
    """What the election search finds for the lease (4 to 8 steps before the merge move: the
    extra steps carried the time) shrinks to the two-step form on every seed: the clock slowed
    to 0.8 with a 0.6 s wait, then a 1.8 s pause; every kept step still has two leaders, and
    shrinking it again changes nothing."""
    problem = Problem("election", "split_brain_s(lease)", 5, 40, seed=seed)
    search = Search(problem, seed, 2000).run(until_found=True)
    kept: list[tuple[list[int], float]] = []
    out = shrink(problem, search.best, 2000, on_step=lambda g, score: kept.append((list(g), score)))
    names = problem.layout.names
    assert out.minimal and [(names[g // 4], problem.layout.step_time(g)) for g in out.genome] == [
        ("skew", 0.6),
        ("pause", 1.8),
    ], out
    fresh = Problem("election", "split_brain_s(lease)", 5, 40, seed=seed)
    assert all(fresh.score(g) == score > 0 for g, score in kept)
    assert 0.15 < out.score < 0.25
    again = shrink(fresh, out.genome, 2000)
    assert again.genome == out.genome and again.steps == [] and again.minimal


def test_a_merge_keeps_the_time_a_deleted_step_carried():
    """Two 0.3 s waits after a slow clock become one 0.6 s wait: deleting either step alone
    would bring the pause 0.3 s earlier, before the renewal on the slow clock."""
    from sims.adversary.shrink import _merges

    p = Problem("election", "split_brain_s(lease)", 5, 40)
    skew, pause = ELECTION_STEPS.index("skew") * 4, ELECTION_STEPS.index("pause") * 4
    g = [skew + 2, skew + 2, pause + 3]
    assert p.score(g) > 0 and p.score([skew + 2, pause + 3]) == 0
    first = next(_merges(g, p))  # the whole run first: the skew with the nearest wait to 2.4 s
    assert first == [skew + 3]
    assert [skew + 3, pause + 3] in list(_merges(g, p))
