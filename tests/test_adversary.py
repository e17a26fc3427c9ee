"""Adversary search (sims/adversary, `contention search`): the objective parser, evaluators that
agree with `contention run` of the written preset, determinism, Bélády's anomaly found from a
random start for k = 3, 4, 5, and the examples documented in docs/search.md."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from sims.adversary import Objective, ObjectiveError, Problem, Search
from sims.adversary.writer import preset_text
from sims.cli import main
from sims.core import presets
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
BELADY = "faults(fifo, k+1) - faults(fifo, k)"


# -- the objective -----------------------------------------------------------------------------
def test_objective_arithmetic_precedence_and_sizes():
    o = Objective("2 * (hits(lru) - hits(arc, k+1)) / 4 + -k", 3)
    assert [(t.metric, t.policy, t.size) for t in o.terms] == [("hits", "lru", 3), ("hits", "arc", 4)]
    assert o.value([10, 4]) == 2 * (10 - 4) / 4 - 3
    assert Objective("faults(fifo, 2*k - 1)", 3).terms[0].size == 5
    assert Objective("hits(lru) / hits(arc)", 1).value([1, 0]) == -math.inf  # undefined, never the best


@pytest.mark.parametrize(
    "text, column, words",
    [
        ("faults(fifo", 12, "expected ')'"),
        ("faults(fifo) +", 15, "expected a number"),
        ("2 * (faults(fifo) $ 3)", 19, "unexpected character"),
        ("faults(fifo, k-3)", 14, "integer >= 1"),
        ("faults(fifo, 1.5)", 14, "integer >= 1"),
        ("faults(fifo, hits(lru))", 14, "cannot contain a metric"),
        ("faults fifo", 1, "is not k"),
        ("(faults(fifo)", 14, "close the parenthesis"),
        ("faults(fifo) faults(lru)", 14, "expected an operator"),
        ("faults(3)", 8, "expected a policy name"),
        ("1.2.3", 1, "malformed number"),
    ],
)
def test_objective_errors_name_the_column(text, column, words):
    with pytest.raises(ObjectiveError) as e:
        Objective(text, 3)
    assert f"column {column}:" in str(e.value) and words in str(e.value)


def test_objective_without_a_metric_is_refused():
    for text in ("", "  ", "1 + k"):
        with pytest.raises(ObjectiveError):
            Objective(text, 3)


def test_unknown_metric_names_its_column_and_the_valid_ones():
    with pytest.raises(ValueError, match=r"column 16: unknown paging metric 'hit'; valid: fault_rate, faults"):
        Problem("paging", "faults(fifo) - hit(lru)", 3, 10)


# -- the evaluators agree with `contention run` of the written preset ----------------------------
CASES = [
    ("paging", "faults(fifo, k+1) - faults(fifo, k)", 3, ["lru", "opt", "clock", "lfu", "random"]),
    ("cache", "hits(lru) - hits(arc)", 4, ["sieve", "lirs", "s3fifo", "twoq", "opt", "redis_random"]),
    ("hashing", "max_load_ratio(ring) - 1.25", 10, ["bounded_load", "rendezvous", "jump", "modulo"]),
    (
        "ratelimit",
        "max_in_any_window(fixed_window) - k",
        5,
        ["sliding_log", "sliding_counter", "token_bucket", "leaky_bucket"],
    ),
]


@pytest.mark.parametrize("topic, objective, k, extra", CASES)
def test_evaluator_matches_contention_run_of_the_written_preset(tmp_path, topic, objective, k, extra):
    problem = Problem(topic, objective, k, 30, extra=extra, seed=5)
    search = Search(problem, 5, 60).run()
    candidates = [search.best, search.current]
    for _ in range(3):
        candidates.append(search._fresh())
    for i, genome in enumerate(candidates):
        path = tmp_path / f"cand{i}.toml"
        path.write_text(preset_text(problem, genome, path.stem, problem.score(genome)), encoding="utf-8")
        sc = Scenario(presets.load(str(path))).run()
        assert sc.metrics() == problem.metrics(genome)
        assert len(sc.run_events()) == len(genome)  # every reference (arrival) is played
        sc.check_invariants()


def test_the_arrival_times_workload_refuses_a_time_before_the_previous(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(
        'name = "x"\ntopic = "ratelimit"\ntitle = "t"\nwatch_for = "w"\nseed = 1\nduration = 2.0\n'
        '[workload]\nkind = "arrival_times"\ntimes = [0.5, 0.25]\n[[panels]]\npolicy = "fixed_window"\n',
        encoding="utf-8",
    )
    with pytest.raises(presets.PresetError, match=r"workload.times\[1\]: 0.25 is before the previous time"):
        presets.load(str(path))


# -- determinism -------------------------------------------------------------------------------
def test_same_seed_same_result_in_chunks_of_any_size():
    def best(chunk):
        s = Search(Problem("cache", "hits(lru) - hits(arc)", 3, 30), 9, 700)
        while not s.done:
            s.run(chunk)
        return s.best, s.best_score, s.best_at

    assert best(700) == best(1) == best(123)
    other = Search(Problem("cache", "hits(lru) - hits(arc)", 3, 30), 10, 700).run()
    assert (other.best, other.best_score) != best(700)[:2]


def test_the_search_uses_no_global_random_state():
    random.seed(1)
    a = Search(Problem("paging", BELADY, 3, 20), 4, 300).run().best
    random.seed(2)
    assert Search(Problem("paging", BELADY, 3, 20), 4, 300).run().best == a


# -- Bélády's anomaly, from a random start ---------------------------------------------------------
def _first_anomaly(k: int, seed: int) -> Search:
    s = Search(Problem("paging", BELADY, k, 40), seed, 20_000)
    while not s.done and s.best_score <= 0:
        s.run(100)
    return s


@pytest.mark.parametrize("k", [3, 4, 5])
def test_belady_anomaly_found_for_k_3_4_5(k):
    for seed in (1, 2, 3):
        s = _first_anomaly(k, seed)
        assert s.best_score > 0, (k, seed, s.state())
        m = s.problem.metrics(s.best)
        assert m[f"fifo-{k + 1}"]["faults"] > m[f"fifo-{k}"]["faults"]


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 4, 5])
def test_belady_anomaly_found_for_k_3_4_5_on_ten_seeds(k):
    for seed in range(4, 14):
        assert _first_anomaly(k, seed).best_score > 0, (k, seed)


def test_lru_and_opt_show_no_anomaly_however_hard_one_looks():
    """LRU and OPT are stack algorithms: more frames never fault more, so the best is <= 0."""
    for policy in ("lru", "opt"):
        s = Search(Problem("paging", f"faults({policy}, k+1) - faults({policy}, k)", 3, 30), 1, 3000).run()
        assert s.best_score <= 0


# -- the documented examples (docs/search.md) ---------------------------------------------------------
EXAMPLES = [
    (
        'contention search paging --objective "faults(fifo, k+1) - faults(fifo, k)" --size 3 --length 40 --budget 20000',
        {"fifo-3": ("faults", 23), "fifo-4": ("faults", 28)},
    ),
    (
        'contention search paging --objective "faults(fifo, k+1) - faults(fifo, k)" --size 4 --length 40 --budget 20000',
        {"fifo-4": ("faults", 16), "fifo-5": ("faults", 22)},
    ),
    (
        'contention search paging --objective "faults(fifo, k+1) - faults(fifo, k)" --size 5 --length 40 --budget 20000',
        {"fifo-5": ("faults", 15), "fifo-6": ("faults", 20)},
    ),
    (
        'contention search cache --objective "hits(lru) - hits(arc)" --size 4 --length 60 --budget 3000',
        {"lru-4": ("hits", 38), "arc-4": ("hits", 30)},
    ),
    (
        'contention search cache --objective "hits(lru) - hits(sieve)" --size 4 --length 60 --budget 3000',
        {"lru-4": ("hits", 45), "sieve-4": ("hits", 12)},
    ),
    (
        'contention search hashing --policies bounded_load --objective "max_load_ratio(ring) - 1.25" --size 10 --length 50 --budget 500',
        {"ring-10": ("max_load_ratio", 6.8), "bounded_load-10": ("max_load_ratio", 2.0)},
    ),
    (
        'contention search ratelimit --policies sliding_log --objective "max_in_any_window(fixed_window) - k" --size 10 --length 40 --budget 3000',
        {"fixed_window-10": ("max_in_any_window", 20), "sliding_log-10": ("max_in_any_window", 10)},
    ),
]


def _example(command: str, expect: dict):
    """A 20,000-evaluation search takes a few seconds: those run with the slow tests."""
    slow = "--budget 20000" in command
    return pytest.param(
        command,
        expect,
        id=f"{command.split()[2]}-k{command.split('--size ')[1].split()[0]}",
        marks=[pytest.mark.slow] if slow else [],
    )


@pytest.mark.parametrize("command, expect", [_example(c, e) for c, e in EXAMPLES])
def test_documented_examples_find_what_the_docs_say(tmp_path, capsys, command, expect):
    import shlex

    assert command in (ROOT / "docs" / "search.md").read_text(encoding="utf-8")
    out = tmp_path / "best.toml"
    assert main([*shlex.split(command)[1:], "--json", "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["best_score"] > 0
    for panel, (metric, value) in expect.items():
        assert result["panels"][panel][metric] == value
    assert main(["run", str(out), "--json"]) == 0  # `contention run best.toml --json`
    assert json.loads(capsys.readouterr().out)["panels"] == result["panels"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["nope", "--objective", "hits(lru)"], "unknown topic 'nope'"),
        (["paging", "--objective", "faults(fifox)"], "unknown paging policy 'fifox'"),
        (["paging", "--objective", "fault(fifo)"], "unknown paging metric 'fault'"),
        (["paging", "--objective", "faults(fifo"], "column 12"),
        (["paging", "--objective", "faults(fifo)", "--budget", "0"], "--budget"),
        (["paging", "--objective", "faults(fifo)", "--length", "0"], "--length"),
        (["paging", "--policies", "lru,lru"], "--policies"),
        (["paging"], "give --objective"),
        (["paging", "--objective", "faults(fifo)", "--out", "x.txt"], ".toml"),
        (["ratelimit", "--objective", "tokens_admitted(tpm_reserve)"], "limits tokens"),
        (["paging", "--objective", "faults(fifo)", "--keys", "0"], "--keys"),
        (["paging", "--objective", "faults(fifo)", "--out", "/no/such/folder/x.toml"], "folder does not exist"),
        (["paging", "--objective", "faults(fifo)", "--from", "no-such-preset"], "unknown preset"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, words):
    assert main(["search", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_from_a_preset_starts_at_its_own_stream(capsys):
    """--from paging-belady with --length 12 and one evaluation scores the classic string itself."""
    argv = ["search", "paging", "--from", "paging-belady", "--objective", BELADY, "--size", "3", "--length", "12"]
    assert main([*argv, "--budget", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["workload"]["keys"] == [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]
    assert result["panels"]["fifo-3"]["faults"] == 9 and result["panels"]["fifo-4"]["faults"] == 10
    assert main(["search", "ratelimit", "--from", "cache-scan", "--objective", "accepted(fixed_window)"]) == 2
    assert "is a cache preset, not ratelimit" in capsys.readouterr().err
